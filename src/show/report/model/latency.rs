//! Idle-latency cells (`--measure latency`): one per working set chased, or per CPU node ×
//! memory node pair of the latency matrix. Times are nanoseconds per load (a dependent load's
//! latency is a few ns to a few hundred: seconds would be all zeros and exponents in a table;
//! the Prometheus family converts to seconds), sizes bytes, shares fractions from 0.

use super::cell::CycleSource;
use super::grid::Level;
use serde::{Deserialize, Serialize};

/// Idle latency at one buffer: the median ns per load of the timed runs on huge pages, with
/// the same chain on 4 KiB pages for the TLB cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyCell {
    /// `15.8 KiB (l1)`, `64KiB`, `384 MiB, CPU node 0 → memory node 1`.
    pub label: String,
    /// The working set's name (`l1`, `64 KiB`); `dram` for a matrix pair.
    pub set_name: String,
    pub level: Option<Level>,
    /// Bytes of the chase's buffer (whole 64-byte lines, one pointer each).
    pub bytes: u64,
    /// The CPU the chase ran pinned to; null when unpinned.
    pub cpu: Option<usize>,
    /// The latency matrix's pair: the CPU's node and the node the pages were bound to; null
    /// outside the matrix.
    pub cpu_node: Option<usize>,
    pub mem_node: Option<usize>,
    /// The figure: median ns per load (of the repetitions' medians with `--repeat`).
    pub median_ns: f64,
    /// The fastest and slowest timed run, ns per load, over every repetition.
    pub min_ns: f64,
    pub max_ns: f64,
    /// Coefficient of variation of the timed runs (a fraction).
    pub cv: f64,
    /// Cycles per load, and where the cycles come from: counted by the PMU on the chasing
    /// thread, or ns × the clock estimate.
    pub cycles: f64,
    pub cycles_from: CycleSource,
    /// Share of the buffer on huge pages after the runs; null where the OS does not say.
    pub huge_share: Option<f64>,
    /// Median ns per load on 4 KiB pages, and the TLB cost (that − `median_ns`); null where
    /// huge pages did not take (nothing to compare).
    pub small_pages_ns: Option<f64>,
    pub tlb_ns: Option<f64>,
    /// Timed runs per repetition, and hops (dependent loads) per run.
    pub runs: usize,
    pub hops_per_run: u64,
    /// Each repetition's median ns per load (`--repeat`), one for a plain run: the evidence
    /// `compare` judges by.
    pub repetitions: Vec<f64>,
}

impl super::Snapshot {
    /// A snapshot of `--measure latency`: latency cells and no bandwidth cell.
    pub fn is_latency_run(&self) -> bool {
        !self.latency.is_empty() && self.cells.is_empty() && self.failed.is_empty()
    }
}
