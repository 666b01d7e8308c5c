//! The grid the engine walks: its cells (`CellId`: a working set × a thread count), the order
//! of a headless sweep over them, and the `Schedule` (once, or cycling live).

use super::sets::WorkingSet;
use std::fmt;

/// A cell of the grid: a working set (index into the grid's sets) and a thread count.
/// `rerun` marks the single-thread cache configuration run again at the end of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellId {
    pub set: usize,
    pub threads: usize,
    pub rerun: bool,
}

impl CellId {
    pub fn new(set: usize, threads: usize) -> CellId {
        CellId {
            set,
            threads,
            rerun: false,
        }
    }
}

/// Thread counts × working sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub sets: Vec<WorkingSet>,
    /// Sorted, distinct, each at least 1.
    pub threads: Vec<usize>,
}

impl Grid {
    /// Every cell, set by set, thread count by thread count.
    pub fn cells(&self) -> Vec<CellId> {
        let mut out = Vec::new();
        for set in 0..self.sets.len() {
            for &t in &self.threads {
                out.push(CellId::new(set, t));
            }
        }
        out
    }

    /// The order of one headless sweep: the single-thread run on the first per-thread (cache)
    /// set first, then every cell, then that first configuration again (marked `rerun`).
    pub(crate) fn sweep_once(&self) -> Vec<CellId> {
        let first = self
            .sets
            .iter()
            .position(|s| s.is_per_thread())
            .filter(|_| self.threads.contains(&1));
        let mut order = Vec::new();
        if let Some(set) = first {
            order.push(CellId::new(set, 1));
        }
        for cell in self.cells() {
            if !order.contains(&cell) {
                order.push(cell);
            }
        }
        if let Some(set) = first {
            order.push(CellId {
                set,
                threads: 1,
                rerun: true,
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

    #[test]
    fn sweep_once_runs_single_thread_cache_first_and_last() {
        let grid = Grid {
            sets: vec![
                WorkingSet {
                    name: "l2".into(),
                    level: Some(Level::L2),
                    size: ArraySize::PerThread(1 << 16),
                    note: None,
                },
                WorkingSet {
                    name: "dram".into(),
                    level: Some(Level::Dram),
                    size: ArraySize::Split(1 << 24),
                    note: None,
                },
            ],
            threads: vec![1, 2],
        };
        let order = grid.sweep_once();
        assert_eq!(order.len(), 5);
        assert_eq!(order[0], CellId::new(0, 1));
        assert_eq!(order[1], CellId::new(0, 2));
        assert_eq!(order[2], CellId::new(1, 1));
        assert!(order[4].rerun && order[4].set == 0 && order[4].threads == 1);
    }
}
