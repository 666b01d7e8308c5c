//! What a latency run chases: one job per working set on the triad's first CPU, or, for the
//! NUMA latency matrix, one per CPU node × memory node pair (a `dram`-sized buffer bound to the
//! memory node, chased from the CPU node's first CPU). Planned here, without measuring, so the
//! pairs of machines we do not have are tested on their fixtures.

use super::chase_bytes;
use crate::base::units::format_bytes;
use crate::engine::plan::{Level, MatrixPair, WorkingSet};

/// One chase to run: a buffer of `bytes`, pinned to `cpu`, its pages bound to `mem_node`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaseJob {
    /// An explicit set's name or a pair's (`384 MiB, CPU node 0 → memory node 1`); a level's
    /// row is labelled by its measured bytes and level instead.
    pub label: String,
    /// The set's name as `--sets` gave it (`l1`, `64KiB`), or `dram` for a matrix pair.
    pub(crate) set_name: String,
    pub(crate) level: Option<Level>,
    pub bytes: u64,
    pub cpu: Option<usize>,
    pub cpu_node: Option<usize>,
    pub mem_node: Option<usize>,
}

/// A job per working set, in order, all on `cpu` (the CPU the triad's first thread uses).
pub fn set_jobs(sets: &[WorkingSet], cpu: Option<usize>) -> Vec<ChaseJob> {
    sets.iter()
        .map(|set| ChaseJob {
            label: set.name.clone(),
            set_name: set.name.clone(),
            level: set.level,
            bytes: chase_bytes(set),
            cpu,
            cpu_node: None,
            mem_node: None,
        })
        .collect()
}

/// A job per matrix pair (`MatrixPlan::pairs`, with the matrix grid's `sets`, one per pair in
/// the same order): the `dram` chase's buffer (three of the pair's arrays: 12 × all last-level
/// cache, as the `dram` row), bound to the pair's memory node and chased from the first CPU of
/// its CPU node (one thread: latency is a single dependent chain).
pub fn matrix_jobs(pairs: &[MatrixPair], sets: &[WorkingSet]) -> Vec<ChaseJob> {
    pairs
        .iter()
        .zip(sets)
        .map(|(p, set)| {
            let bytes = chase_bytes(&WorkingSet {
                level: Some(Level::Dram),
                ..set.clone()
            });
            ChaseJob {
                label: format!(
                    "{}, CPU node {} → memory node {}",
                    format_bytes(bytes),
                    p.cpu_node,
                    p.mem_node
                ),
                set_name: Level::Dram.name().to_string(),
                level: None,
                bytes,
                cpu: p.cpus.first().copied(),
                cpu_node: Some(p.cpu_node),
                mem_node: Some(p.mem_node),
            }
        })
        .collect()
}
