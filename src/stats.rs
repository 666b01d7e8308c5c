//! Per-cell statistics over a rolling window of timed rounds: the figures every view shows.

use crate::engine::events::{Checksum, Event, RoundRecord};
use crate::engine::plan::CellId;
use crate::machine::vendor::usable_gbs;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How many recent round rates a cell keeps for its sparkline.
pub const HISTORY: usize = 120;

/// What one timed round leaves in a cell's window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundSummary {
    pub span_ns: u64,
    pub bytes: u64,
    pub gbs: f64,
    pub fastest_thread_gbs: f64,
    pub slowest_thread_gbs: f64,
    pub late: bool,
}

impl RoundSummary {
    pub fn of(r: &RoundRecord) -> RoundSummary {
        RoundSummary {
            span_ns: r.span_ns,
            bytes: r.bytes,
            gbs: r.gbs(),
            fastest_thread_gbs: r.fastest_thread_gbs(),
            slowest_thread_gbs: r.slowest_thread_gbs(),
            late: r.late,
        }
    }
}

/// What a cell has seen.
#[derive(Debug, Clone, Default)]
pub struct CellStats {
    /// The last `window` timed rounds.
    pub window: VecDeque<RoundSummary>,
    /// The last `HISTORY` timed round rates, for sparklines.
    pub history: VecDeque<f64>,
    /// Timed rounds ever counted (since the last reset).
    pub total_rounds: u64,
    /// The last round, warm-up or not (per-thread bars).
    pub last: Option<RoundRecord>,
    /// The last checksum result; a failure stays until a reset.
    pub checksum: Option<Checksum>,
    pub checksum_failures: u64,
    /// CPUs the cell's threads ran on.
    pub cpus: BTreeSet<i32>,
    /// Thread-rounds whose start and end CPUs differed.
    pub migrations: u64,
    /// The arrays' bytes and how many of them are on huge pages, from `Event::Allocated`
    /// (None: unknown).
    pub array_bytes: u64,
    pub huge_bytes: Option<u64>,
    /// Why the cell could not run, from `Event::CellFailed`.
    pub failure: Option<String>,
}

/// What the cell's figures are computed against: the vendor figure and the clock, each only
/// where it is usable (finite and positive).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Context {
    pub vendor_gbs: Option<f64>,
    pub ghz: Option<f64>,
}

impl Context {
    pub fn new(vendor_gbs: Option<f64>, ghz: Option<f64>) -> Context {
        Context {
            vendor_gbs: vendor_gbs.filter(|&v| usable_gbs(v)),
            ghz: ghz.filter(|&g| usable_gbs(g)),
        }
    }
}

/// A cell's figures, as every view shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub median_gbs: f64,
    pub best_gbs: f64,
    /// Coefficient of variation of the round rates (sample standard deviation / mean).
    pub cv: f64,
    /// Medians over rounds of each round's fastest and slowest thread.
    pub fastest_thread_gbs: f64,
    pub slowest_thread_gbs: f64,
    pub late_rounds: u32,
    pub rounds: u32,
    /// Median against the single-thread cell of the same working set.
    pub scaling: Option<f64>,
    pub vendor_fraction: Option<f64>,
    /// GB/s ÷ GHz ÷ threads.
    pub bytes_per_cycle: Option<f64>,
    pub checksum_ok: Option<bool>,
}

/// Median of a list (mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Sample standard deviation over the mean; 0 for fewer than two values.
pub fn cv(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    if mean > 0.0 { var.sqrt() / mean } else { 0.0 }
}

impl CellStats {
    fn record(&mut self, r: &RoundRecord, window: usize) {
        for t in &r.threads {
            // -1: the OS does not say (macOS); an unknown CPU is not a CPU the thread ran on.
            self.cpus
                .extend([t.cpu_start, t.cpu_end].into_iter().filter(|&c| c >= 0));
            if t.migrated() {
                self.migrations += 1;
            }
        }
        if !r.warmup {
            let s = RoundSummary::of(r);
            push_bounded(&mut self.window, s, window);
            push_bounded(&mut self.history, s.gbs, HISTORY);
            self.total_rounds += 1;
        }
        self.last = Some(r.clone());
    }

    /// The rates of the window's rounds, oldest first.
    pub fn rates(&self) -> Vec<f64> {
        self.window.iter().map(|r| r.gbs).collect()
    }

    pub fn median_gbs(&self) -> Option<f64> {
        (!self.window.is_empty()).then(|| median(&self.rates()))
    }
}

fn push_bounded<T>(q: &mut VecDeque<T>, v: T, cap: usize) {
    while q.len() >= cap.max(1) {
        q.pop_front();
    }
    q.push_back(v);
}

/// Every cell's statistics, fed with engine events.
#[derive(Debug, Clone)]
pub struct Board {
    /// Rounds per cell the figures are computed over (`--rounds`).
    pub window: usize,
    cells: BTreeMap<CellId, CellStats>,
}

impl Board {
    pub fn new(window: usize) -> Board {
        Board {
            window: window.max(1),
            cells: BTreeMap::new(),
        }
    }

    /// Takes in an engine event; returns the cell it touched, if any.
    pub fn record(&mut self, ev: &Event) -> Option<CellId> {
        match ev {
            Event::Round(r) => {
                let w = self.window;
                self.cells.entry(r.cell).or_default().record(r, w);
                Some(r.cell)
            }
            Event::Checksum(c) => {
                let cell = self.cells.entry(c.cell).or_default();
                if !c.ok {
                    cell.checksum_failures += 1;
                }
                // A failure stays visible until a reset; an ok does not hide it.
                if cell.checksum.as_ref().is_none_or(|old| old.ok) {
                    cell.checksum = Some(c.clone());
                }
                Some(c.cell)
            }
            Event::Allocated {
                cell,
                bytes,
                huge_bytes,
            } => {
                let c = self.cells.entry(*cell).or_default();
                c.array_bytes = *bytes;
                c.huge_bytes = *huge_bytes;
                Some(*cell)
            }
            Event::CellFailed { cell, reason } => {
                self.mark_failed(*cell, reason.clone());
                Some(*cell)
            }
            _ => None,
        }
    }

    /// Records that a cell could not run, and why (the first reason stays).
    pub fn mark_failed(&mut self, id: CellId, reason: String) {
        self.cells
            .entry(id)
            .or_default()
            .failure
            .get_or_insert(reason);
    }

    /// Forgets every round and checksum.
    pub(crate) fn reset(&mut self) {
        self.cells.clear();
    }

    pub fn cell(&self, id: CellId) -> Option<&CellStats> {
        self.cells.get(&id)
    }

    pub fn cells(&self) -> impl Iterator<Item = (&CellId, &CellStats)> {
        self.cells.iter()
    }

    /// Whether any checksum failed.
    pub fn any_checksum_failed(&self) -> bool {
        self.cells.values().any(|c| c.checksum_failures > 0)
    }

    /// The cell's figures; None until it has a timed round.
    pub fn figures(&self, id: CellId, ctx: Context) -> Option<Figures> {
        let cell = self.cells.get(&id)?;
        if cell.window.is_empty() {
            return None;
        }
        let rates = cell.rates();
        let med = median(&rates);
        let fastest: Vec<f64> = cell.window.iter().map(|r| r.fastest_thread_gbs).collect();
        let slowest: Vec<f64> = cell.window.iter().map(|r| r.slowest_thread_gbs).collect();
        let scaling = if id.rerun {
            None
        } else {
            self.cells
                .get(&CellId::new(id.set, 1))
                .and_then(|one| one.median_gbs())
                .map(|one| med / one)
        };
        Some(Figures {
            median_gbs: med,
            best_gbs: rates.iter().copied().fold(0.0, f64::max),
            cv: cv(&rates),
            fastest_thread_gbs: median(&fastest),
            slowest_thread_gbs: median(&slowest),
            late_rounds: cell.window.iter().filter(|r| r.late).count() as u32,
            rounds: cell.window.len() as u32,
            scaling,
            vendor_fraction: ctx.vendor_gbs.map(|v| med / v),
            bytes_per_cycle: ctx.ghz.map(|g| med / g / id.threads as f64),
            checksum_ok: cell.checksum.as_ref().map(|c| c.ok),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::{RoundRecord, ThreadTiming};

    fn round(cell: CellId, warmup: bool, per_thread: &[(u64, u64)], bytes: u64) -> Event {
        let threads = per_thread
            .iter()
            .map(|&(s, e)| ThreadTiming {
                start_ns: s,
                end_ns: e,
                cpu_start: 0,
                cpu_end: 0,
                bytes,
                ..Default::default()
            })
            .collect();
        Event::Round(Box::new(RoundRecord::from_threads(
            cell, warmup, 1, threads,
        )))
    }

    #[test]
    fn median_and_cv() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(cv(&[5.0]), 0.0);
        let c = cv(&[9.0, 10.0, 11.0]);
        assert!((c - 0.1).abs() < 1e-12, "{c}");
    }

    #[test]
    fn late_round_is_span_over_slowest_by_more_than_20_percent() {
        // Both threads take 100 ns, but one starts 30 ns late: span 130 > 120.
        let late = RoundRecord::from_threads(
            CellId::new(0, 2),
            false,
            1,
            vec![
                ThreadTiming {
                    start_ns: 0,
                    end_ns: 100,
                    cpu_start: 0,
                    cpu_end: 0,
                    bytes: 10,
                    ..Default::default()
                },
                ThreadTiming {
                    start_ns: 30,
                    end_ns: 130,
                    cpu_start: 1,
                    cpu_end: 1,
                    bytes: 10,
                    ..Default::default()
                },
            ],
        );
        assert!(late.late);
        assert_eq!(late.span_ns, 130);
        // A slow thread that is slow on its own is not late: span equals its time.
        let slow = RoundRecord::from_threads(
            CellId::new(0, 2),
            false,
            1,
            vec![
                ThreadTiming {
                    start_ns: 0,
                    end_ns: 100,
                    cpu_start: 0,
                    cpu_end: 0,
                    bytes: 10,
                    ..Default::default()
                },
                ThreadTiming {
                    start_ns: 0,
                    end_ns: 200,
                    cpu_start: 1,
                    cpu_end: 1,
                    bytes: 10,
                    ..Default::default()
                },
            ],
        );
        assert!(!slow.late);
        assert_eq!(slow.fastest_thread_gbs(), 0.1);
        assert_eq!(slow.slowest_thread_gbs(), 0.05);
        assert_eq!(slow.gbs(), 0.1);
    }

    #[test]
    fn figures_skip_warmup_and_compute_scaling_and_fractions() {
        let mut b = Board::new(3);
        let one = CellId::new(0, 1);
        let two = CellId::new(0, 2);
        b.record(&round(one, true, &[(0, 1)], 1000)); // warm-up, ignored
        for ns in [100, 100, 200] {
            b.record(&round(one, false, &[(0, ns)], 1000));
        }
        for ns in [100, 100, 100, 100] {
            b.record(&round(two, false, &[(0, ns), (0, ns)], 1000));
        }
        let ctx = Context {
            vendor_gbs: Some(40.0),
            ghz: Some(2.0),
        };
        let f1 = b.figures(one, ctx).unwrap();
        assert_eq!(f1.rounds, 3);
        assert_eq!(f1.median_gbs, 10.0);
        assert_eq!(f1.best_gbs, 10.0);
        assert_eq!(f1.scaling, Some(1.0));
        assert_eq!(f1.vendor_fraction, Some(0.25));
        assert_eq!(f1.bytes_per_cycle, Some(5.0));
        let f2 = b.figures(two, ctx).unwrap();
        assert_eq!(f2.rounds, 3, "window is bounded");
        assert_eq!(f2.median_gbs, 20.0);
        assert_eq!(f2.scaling, Some(2.0));
        assert_eq!(f2.bytes_per_cycle, Some(5.0));
        assert_eq!(f2.fastest_thread_gbs, 10.0);
        assert!(b.figures(CellId::new(1, 1), ctx).is_none());
        let none = b.figures(one, Context::default()).unwrap();
        assert_eq!(none.vendor_fraction, None);
    }

    #[test]
    fn a_checksum_failure_stays_until_reset() {
        let mut b = Board::new(5);
        let cell = CellId::new(0, 1);
        let ck = |ok| {
            Event::Checksum(Checksum {
                cell,
                expected: 10,
                actual: if ok { 10.0 } else { 9.0 },
                ok,
            })
        };
        b.record(&ck(false));
        b.record(&ck(true));
        assert!(b.any_checksum_failed());
        assert!(!b.cell(cell).unwrap().checksum.as_ref().unwrap().ok);
        b.reset();
        assert!(!b.any_checksum_failed());
    }

    #[test]
    fn unknown_cpus_are_not_cpus_the_threads_ran_on() {
        let mut board = Board::new(8);
        let cell = CellId::new(0, 1);
        let mut r = RoundRecord::from_threads(
            cell,
            false,
            1,
            vec![ThreadTiming {
                start_ns: 0,
                end_ns: 100,
                cpu_start: -1,
                cpu_end: -1,
                bytes: 2400,
                ..Default::default()
            }],
        );
        board.record(&Event::Round(Box::new(r.clone())));
        let stats = board.cell(cell).unwrap();
        assert!(stats.cpus.is_empty());
        assert_eq!(stats.migrations, 0);
        r.threads[0].cpu_start = 3;
        r.threads[0].cpu_end = 3;
        board.record(&Event::Round(Box::new(r)));
        assert_eq!(board.cell(cell).unwrap().cpus, [3].into());
    }
}
