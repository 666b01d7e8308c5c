//! What the timeline draws: each cell's rounds as one bucket per second of the monitor's life,
//! and the busiest processes' CPU share per second, both for the last `SPAN` (memory stays
//! flat however long the monitor runs). Contended spans come from the episodes themselves.

use crate::engine::plan::CellId;
use std::collections::{HashMap, VecDeque};

/// Seconds of history kept: 15 minutes.
pub const SPAN: u64 = 900;
/// Processes whose CPU share is kept per second.
const PROCESSES_PER_SECOND: usize = 8;

/// A cell's timed rounds within one second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bucket {
    /// Seconds since the monitor started.
    pub(crate) second: u64,
    pub(crate) sum_gbs: f64,
    pub(crate) rounds: u32,
}

/// One cell's buckets, oldest first; seconds without rounds have no bucket.
#[derive(Debug, Clone, Default)]
pub struct CellHistory {
    buckets: VecDeque<Bucket>,
}

impl CellHistory {
    pub fn push(&mut self, second: u64, gbs: f64) {
        match self.buckets.back_mut() {
            Some(b) if b.second == second => {
                b.sum_gbs += gbs;
                b.rounds += 1;
            }
            _ => self.buckets.push_back(Bucket {
                second,
                sum_gbs: gbs,
                rounds: 1,
            }),
        }
        while self
            .buckets
            .front()
            .is_some_and(|b| b.second + SPAN <= second)
        {
            self.buckets.pop_front();
        }
    }

    pub(crate) fn buckets(&self) -> impl DoubleEndedIterator<Item = &Bucket> {
        self.buckets.iter()
    }

    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

/// Every cell's history, and the busiest processes' CPU share per second.
#[derive(Debug, Clone, Default)]
pub struct History {
    cells: HashMap<CellId, CellHistory>,
    /// (second, [(pid, CPU % of one core)]), the busiest few of each sample.
    cpu: VecDeque<(u64, Vec<(u32, f64)>)>,
}

impl History {
    pub fn round(&mut self, cell: CellId, second: u64, gbs: f64) {
        self.cells.entry(cell).or_default().push(second, gbs);
    }

    pub fn cell(&self, cell: CellId) -> Option<&CellHistory> {
        self.cells.get(&cell)
    }

    /// The CPU shares of a process sample taken at `second` (busiest first).
    pub fn cpu(&mut self, second: u64, shares: impl IntoIterator<Item = (u32, f64)>) {
        let top: Vec<(u32, f64)> = shares.into_iter().take(PROCESSES_PER_SECOND).collect();
        self.cpu.push_back((second, top));
        while self.cpu.front().is_some_and(|(s, _)| s + SPAN <= second) {
            self.cpu.pop_front();
        }
    }

    /// A process's CPU share per sampled second, oldest first (0 where it was not among the
    /// busiest).
    pub(crate) fn cpu_of(&self, pid: u32) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.cpu.iter().map(move |(s, top)| {
            let pct = top.iter().find(|(p, _)| *p == pid).map_or(0.0, |(_, c)| *c);
            (*s, pct)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_fold_into_seconds_and_only_the_span_is_kept() {
        let mut h = History::default();
        let c = CellId::new(0, 1);
        h.round(c, 0, 10.0);
        h.round(c, 0, 20.0);
        h.round(c, 2, 30.0);
        let b: Vec<Bucket> = h.cell(c).unwrap().buckets().copied().collect();
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].sum_gbs, b[0].rounds), (30.0, 2));
        for s in 3..3 * SPAN {
            h.round(c, s, 1.0);
        }
        let cell = h.cell(c).unwrap();
        assert_eq!(cell.len() as u64, SPAN);
        assert_eq!(cell.buckets().next().unwrap().second, 2 * SPAN);
    }

    #[test]
    fn a_process_share_is_zero_where_it_was_not_busy() {
        let mut h = History::default();
        h.cpu(1, [(7, 50.0), (9, 5.0)]);
        h.cpu(2, [(9, 6.0)]);
        assert_eq!(h.cpu_of(7).collect::<Vec<_>>(), vec![(1, 50.0), (2, 0.0)]);
        for s in 3..2 * SPAN {
            h.cpu(s, [(7, 1.0)]);
        }
        assert_eq!(h.cpu_of(7).count() as u64, SPAN);
    }
}
