//! The grid the engine walks: its cells (`CellId`: an op × a working set × a thread count),
//! the order of a headless sweep over them, and the `Schedule` (once, or cycling live).

use super::sets::WorkingSet;
use crate::engine::kernel::Op;
use std::fmt;

/// A cell of the grid: the op its threads run, a working set (index into the grid's sets) and
/// a thread count. `rerun` marks the single-thread cache configuration run again at the end of
/// a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellId {
    pub op: Op,
    pub set: usize,
    pub threads: usize,
    pub rerun: bool,
}

impl CellId {
    /// A triad cell (the op of every cell before ops were a dimension of the grid).
    pub fn new(set: usize, threads: usize) -> CellId {
        CellId::of(Op::Triad, set, threads)
    }

    /// A cell of `op`.
    pub fn of(op: Op, set: usize, threads: usize) -> CellId {
        CellId {
            op,
            set,
            threads,
            rerun: false,
        }
    }
}

/// Ops × working sets × thread counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub sets: Vec<WorkingSet>,
    /// Sorted, distinct, each at least 1.
    pub threads: Vec<usize>,
    /// The ops, in the order given (`--op`), distinct, at least one.
    pub ops: Vec<Op>,
}

impl Grid {
    /// Every cell, op by op, set by set, thread count by thread count.
    pub fn cells(&self) -> Vec<CellId> {
        self.ops.iter().flat_map(|&op| self.cells_of(op)).collect()
    }

    /// The cells of one op, set by set, thread count by thread count.
    pub fn cells_of(&self, op: Op) -> Vec<CellId> {
        let mut out = Vec::new();
        for set in 0..self.sets.len() {
            for &t in &self.threads {
                out.push(CellId::of(op, set, t));
            }
        }
        out
    }

    /// The order of one headless sweep: the single-thread run of the first op on the first
    /// per-thread (cache) set first, then every cell set by set (each set's ops in turn, so a
    /// set's arrays are mapped and first touched once for all of them), then that first
    /// configuration again (marked `rerun`).
    pub(crate) fn sweep_once(&self) -> Vec<CellId> {
        let op = self.ops.first().copied().unwrap_or_default();
        let first = self
            .sets
            .iter()
            .position(|s| s.is_per_thread())
            .filter(|_| self.threads.contains(&1));
        let mut order = Vec::new();
        if let Some(set) = first {
            order.push(CellId::of(op, set, 1));
        }
        for set in 0..self.sets.len() {
            for &op in &self.ops {
                for &t in &self.threads {
                    let cell = CellId::of(op, set, t);
                    if !order.contains(&cell) {
                        order.push(cell);
                    }
                }
            }
        }
        if let Some(set) = first {
            order.push(CellId {
                rerun: true,
                ..CellId::of(op, set, 1)
            });
        }
        order
    }

    pub(crate) fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }
}

/// How the engine walks the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Headless: each cell of `Grid::sweep_once` once, warm-up then `rounds` timed rounds.
    Once { rounds: u32 },
    /// Live: cycle over the cells, `rounds_per_visit` timed rounds per visit, until told
    /// otherwise.
    Sweep { rounds_per_visit: u32 },
    /// A service: cycles like `Sweep`, but lets each working set's arrays go after its visit
    /// (mapped and first-touched again on the next) and idles once after the whole visit, for
    /// the duty cycle but never so long that one cycle over the grid outlasts `cycle_s`.
    Service { rounds_per_visit: u32, cycle_s: u32 },
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let threads = crate::base::units::threads_phrase(self.threads);
        // The triad, the default, goes unnamed: messages read as they did before ops.
        if self.op != Op::Triad {
            write!(f, "{}, ", self.op)?;
        }
        write!(f, "set {} × {threads}", self.set)?;
        if self.rerun {
            f.write_str(" (run again last)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::{ArraySize, Level};

    /// l2 and dram at 1 and 2 threads, for `ops`.
    fn l2_and_dram(ops: Vec<Op>) -> Grid {
        let set = |name: &str, level, size| WorkingSet {
            name: name.into(),
            level: Some(level),
            size,
            note: None,
        };
        Grid {
            sets: vec![
                set("l2", Level::L2, ArraySize::PerThread(1 << 16)),
                set("dram", Level::Dram, ArraySize::Split(1 << 24)),
            ],
            threads: vec![1, 2],
            ops,
        }
    }

    #[test]
    fn sweep_once_runs_single_thread_cache_first_and_last() {
        let grid = l2_and_dram(vec![Op::Triad]);
        let order = grid.sweep_once();
        assert_eq!(order.len(), 5);
        assert_eq!(order[0], CellId::new(0, 1));
        assert_eq!(order[1], CellId::new(0, 2));
        assert_eq!(order[2], CellId::new(1, 1));
        assert!(order[4].rerun && order[4].set == 0 && order[4].threads == 1);
    }

    #[test]
    fn sweep_once_visits_each_set_for_every_op_before_the_next_set() {
        let grid = l2_and_dram(vec![Op::Copy, Op::Triad]);
        let order = grid.sweep_once();
        let plain: Vec<(Op, usize, usize)> = order
            .iter()
            .filter(|c| !c.rerun)
            .map(|c| (c.op, c.set, c.threads))
            .collect();
        assert_eq!(
            plain,
            [
                (Op::Copy, 0, 1),
                (Op::Copy, 0, 2),
                (Op::Triad, 0, 1),
                (Op::Triad, 0, 2),
                (Op::Copy, 1, 1),
                (Op::Copy, 1, 2),
                (Op::Triad, 1, 1),
                (Op::Triad, 1, 2),
            ]
        );
        assert_eq!(
            *order.last().unwrap(),
            CellId {
                rerun: true,
                ..CellId::of(Op::Copy, 0, 1)
            }
        );
        assert_eq!(grid.cells().len(), 8);
        assert_eq!(grid.cells_of(Op::Triad).len(), 4);
    }
}
