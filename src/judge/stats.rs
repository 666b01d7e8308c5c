//! Per-cell statistics over a rolling window of timed rounds: the figures every view shows.

use crate::engine::events::{Checksum, Choice, Event, Placement, RoundRecord};
use crate::engine::kernel::Op;
use crate::engine::plan::CellId;
use crate::judge::disturbance::{self, Finding, Reference, ThreadPace};

use crate::base::median::median;
use crate::judge::inference::median_ci;
use crate::machine::counters::Counts;
use crate::machine::host::HostSample;
use crate::machine::vendor::usable_gbs;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What one timed round leaves in a cell's window.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundSummary {
    pub(crate) span_ns: u64,
    pub(crate) bytes: u64,
    pub(crate) gbs: f64,
    pub(crate) fastest_thread_gbs: f64,
    pub(crate) slowest_thread_gbs: f64,
    pub(crate) late: bool,
    /// Disturbed against the cell's window (`disturbance`).
    pub(crate) disturbed: bool,
    /// Why it was late or disturbed, where something shows it.
    pub(crate) cause: Option<String>,
    /// Per thread: its rate, GB/s, and its counts.
    pub(crate) threads: Vec<(f64, Counts)>,
    /// The thread's own times, ns (for clocks from counted cycles).
    pub(crate) thread_ns: Vec<u64>,
    /// The CPU each thread started and ended its round on, -1 where the OS does not say (for
    /// the figures per node and core type, `groups`).
    pub(crate) cpus: Vec<[i32; 2]>,
    /// The host's steal and our cgroup's throttled share (0..1) over the host sample that
    /// covered this round; None until one did, or where the host says neither.
    pub(crate) steal: Option<f64>,
    pub(crate) throttled: Option<f64>,
}

impl RoundSummary {
    pub fn of(r: &RoundRecord, finding: Finding) -> RoundSummary {
        RoundSummary {
            span_ns: r.span_ns,
            bytes: r.bytes,
            gbs: r.gbs(),
            fastest_thread_gbs: r.fastest_thread_gbs(),
            slowest_thread_gbs: r.slowest_thread_gbs(),
            late: r.late,
            disturbed: finding.disturbed,
            cause: finding.cause,
            threads: r.threads.iter().map(|t| (t.gbs(), t.counters)).collect(),
            thread_ns: r.threads.iter().map(|t| t.ns()).collect(),
            cpus: r.threads.iter().map(|t| [t.cpu_start, t.cpu_end]).collect(),
            steal: None,
            throttled: None,
        }
    }

    /// Each thread's rate and counted clock (GHz over its own time).
    fn rate_and_clock(&self) -> Vec<ThreadPace> {
        self.threads
            .iter()
            .zip(&self.thread_ns)
            .map(|((gbs, c), ns)| (*gbs, c.ghz(*ns)))
            .collect()
    }

    /// Σ over threads of a counter; None when any thread lacks it.
    pub fn total(&self, f: impl Fn(&Counts) -> Option<u64>) -> Option<u64> {
        self.threads.iter().map(|(_, c)| f(c)).sum()
    }
}

/// What a cell has seen.
#[derive(Debug, Clone, Default)]
pub struct CellStats {
    /// The last `window` timed rounds.
    pub window: VecDeque<RoundSummary>,
    /// Timed rounds ever counted (since the last reset).
    pub(crate) total_rounds: u64,
    /// The last round, warm-up or not (per-thread bars).
    pub(crate) last: Option<RoundRecord>,
    /// The last checksum result; a failure stays until a reset.
    pub(crate) checksum: Option<Checksum>,
    pub(crate) checksum_failures: u64,
    /// CPUs the cell's threads ran on.
    pub(crate) cpus: BTreeSet<i32>,
    /// Thread-rounds whose start and end CPUs differed.
    pub(crate) migrations: u64,
    /// The arrays' bytes and how many of them are on huge pages, from `Event::Allocated`
    /// (None: unknown).
    pub(crate) array_bytes: u64,
    pub(crate) huge_bytes: Option<u64>,
    /// Where a sample of its pages sat when last in place, from `Event::Placement`.
    pub(crate) pages: Option<Placement>,
    /// Why the cell could not run, from `Event::CellFailed`.
    pub(crate) failure: Option<String>,
    /// What the last round's stamps and counters said (warm-up rounds against no window).
    pub(crate) last_finding: Finding,
    /// Timed rounds recorded since the last host sample.
    unsampled: usize,
}

/// What the cell's figures are computed against: the vendor figure and the clock, each only
/// where it is usable (finite and positive), and the CPUs the threads may run on.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Context {
    pub vendor_gbs: Option<f64>,
    pub ghz: Option<f64>,
    /// CPUs this process may run on; a cell with more threads is noisy. None: not known.
    pub cpus: Option<usize>,
    /// `--oversubscribe`: every figure is marked as no measurement (among its noisy reasons).
    pub not_a_measurement: bool,
}

impl Context {
    pub fn new(vendor_gbs: Option<f64>, ghz: Option<f64>) -> Context {
        Context {
            vendor_gbs: vendor_gbs.filter(|&v| usable_gbs(v)),
            ghz: ghz.filter(|&g| usable_gbs(g)),
            cpus: None,
            not_a_measurement: false,
        }
    }

    /// The same, with every figure marked as no measurement when `yes`.
    pub fn not_a_measurement(self, yes: bool) -> Context {
        Context {
            not_a_measurement: yes,
            ..self
        }
    }

    /// The same, knowing how many CPUs the threads may run on.
    pub fn with_cpus(self, cpus: usize) -> Context {
        Context {
            cpus: Some(cpus),
            ..self
        }
    }
}

/// What every figure of an `--oversubscribe` run is marked with.
pub const NOT_A_MEASUREMENT: &str = "not a measurement (--oversubscribe)";

/// A cell's cv over this is noisy.
const NOISY_CV: f64 = 0.05;
/// Late or disturbed rounds over this share of the window, and at least `NOISY_ROUNDS` of
/// them, make a cell noisy (one such round is an event, named in the log; more are a pattern).
const NOISY_ROUND_SHARE: f64 = 0.1;
const NOISY_ROUNDS: u32 = 2;
/// Steal or cgroup throttling over this share of the window's time makes a cell noisy.
const NOISY_HOST_SHARE: f64 = 0.05;

/// Where bytes/cycle's cycles come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleSource {
    /// Cycles counted on the workers' own threads.
    Counted,
    /// The clock estimate from the dependent chains × the span.
    ClockEstimate,
}

/// The medians (and per-round means) of a cell's counters over its window, each where it was
/// counted in every round.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CounterFigures {
    /// Median over thread-rounds of cycles ÷ the thread's own time.
    pub(crate) ghz: Option<f64>,
    /// Median over thread-rounds of instructions ÷ cycles.
    pub(crate) ipc: Option<f64>,
    /// Involuntary switches, CPU migrations and page faults, summed over threads, per round
    /// (the mean: the median of counts that are mostly 0 would hide the rounds that had them).
    pub(crate) switches_per_round: Option<f64>,
    pub(crate) migrations_per_round: Option<f64>,
    pub(crate) page_faults_per_round: Option<f64>,
    /// Last-level-cache misses per KiB counted (Σ misses ÷ Σ bytes × 1024).
    pub(crate) llc_misses_per_kib: Option<f64>,
}

impl CounterFigures {
    pub fn any(&self) -> bool {
        self.ghz.is_some()
            || self.ipc.is_some()
            || self.switches_per_round.is_some()
            || self.migrations_per_round.is_some()
            || self.page_faults_per_round.is_some()
            || self.llc_misses_per_kib.is_some()
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
    /// Rounds disturbed (`disturbance`): neither they nor late rounds leave the median.
    pub disturbed_rounds: u32,
    pub rounds: u32,
    /// Median against the single-thread cell of the same working set.
    pub scaling: Option<f64>,
    pub vendor_fraction: Option<f64>,
    /// Bytes per cycle per thread: from counted cycles where every round counted them
    /// (median over rounds of bytes ÷ Σ threads' cycles), else GB/s ÷ GHz ÷ threads.
    pub bytes_per_cycle: Option<f64>,
    pub(crate) bytes_per_cycle_source: Option<CycleSource>,
    pub checksum_ok: Option<bool>,
    /// The 95 % confidence interval of the median (order statistics); None under 6 rounds.
    pub(crate) median_ci: Option<(f64, f64)>,
    pub counters: CounterFigures,
    /// Why the figure cannot be trusted (empty: nothing says so).
    pub noisy: Vec<String>,
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
        // Warm-up rounds (calibration passes differ) are judged by their counters alone.
        let reference = if r.warmup { None } else { self.reference() };
        let finding = disturbance::judge(r, reference.as_ref());
        if !r.warmup {
            let s = RoundSummary::of(r, finding.clone());
            push_bounded(&mut self.window, s, window);
            self.total_rounds += 1;
            self.unsampled = (self.unsampled + 1).min(self.window.len());
        }
        self.last_finding = finding;
        self.last = Some(r.clone());
    }

    /// The window's medians, for judging the next round.
    fn reference(&self) -> Option<Reference> {
        let per: Vec<(u64, Vec<ThreadPace>)> = self
            .window
            .iter()
            .map(|s| (s.span_ns, s.rate_and_clock()))
            .collect();
        Reference::of(per.iter().map(|(s, t)| (*s, t.as_slice())))
    }

    /// Gives the rounds since the last host sample that sample's steal and throttling.
    fn host_covered(&mut self, steal: Option<f64>, throttled: Option<f64>) {
        let n = self.window.len();
        for s in self.window.iter_mut().skip(n - self.unsampled.min(n)) {
            s.steal = steal;
            s.throttled = throttled;
        }
        self.unsampled = 0;
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
    pub(crate) window: usize,
    cells: BTreeMap<CellId, CellStats>,
    /// Each op's loop and page layout on each working set, by op and set index, as the engine
    /// settled them. A reset keeps them: they hold for the whole run.
    choices: BTreeMap<(Op, usize), Choice>,
}

impl Board {
    pub fn new(window: usize) -> Board {
        Board {
            window: window.max(1),
            cells: BTreeMap::new(),
            choices: BTreeMap::new(),
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
            Event::Placement { cell, pages } => {
                self.cells.entry(*cell).or_default().pages = Some(pages.clone());
                Some(*cell)
            }
            Event::CellFailed { cell, reason } => {
                self.mark_failed(*cell, reason.clone());
                Some(*cell)
            }
            // Tried again: not failed unless it fails again (a `CellFailed` then follows).
            Event::CellRetry { cell, .. } => {
                let c = self.cells.get_mut(cell)?;
                c.failure = None;
                Some(*cell)
            }
            Event::Choice(c) => {
                self.choices.insert((c.op, c.set), (**c).clone());
                None
            }
            _ => None,
        }
    }

    /// Takes in a host sample: its steal and throttling cover the rounds since the previous
    /// one (what makes a cell noisy when the host took its CPUs away).
    pub fn record_host(&mut self, h: &HostSample) {
        if !h.has_rates {
            return;
        }
        let steal = h.steal_pct.map(|p| p / 100.0);
        for c in self.cells.values_mut() {
            if c.unsampled > 0 {
                c.host_covered(steal, h.throttled_ratio);
            }
        }
    }

    /// Records that a cell could not run, and why (the first reason stays).
    pub(crate) fn mark_failed(&mut self, id: CellId, reason: String) {
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

    /// Forgets one cell's rounds and checksums; what its arrays are (size, huge pages) stays,
    /// since they stay in place.
    pub(crate) fn reset_cell(&mut self, id: CellId) {
        if let Some(old) = self.cells.remove(&id) {
            let kept = CellStats {
                array_bytes: old.array_bytes,
                huge_bytes: old.huge_bytes,
                pages: old.pages,
                ..CellStats::default()
            };
            self.cells.insert(id, kept);
        }
    }

    pub fn cell(&self, id: CellId) -> Option<&CellStats> {
        self.cells.get(&id)
    }

    /// The loop and page layout `op` runs with on working set `set`, once the engine has
    /// settled them.
    pub fn choice(&self, op: Op, set: usize) -> Option<&Choice> {
        self.choices.get(&(op, set))
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
        let counters = counter_figures(&cell.window);
        let counted_bpc = counted_bytes_per_cycle(&cell.window);
        let (bytes_per_cycle, bytes_per_cycle_source) = match counted_bpc {
            Some(b) => (Some(b), Some(CycleSource::Counted)),
            None => match ctx.ghz {
                Some(g) => (
                    Some(med / g / id.threads as f64),
                    Some(CycleSource::ClockEstimate),
                ),
                None => (None, None),
            },
        };
        let mut f = Figures {
            median_gbs: med,
            best_gbs: rates.iter().copied().fold(0.0, f64::max),
            cv: cv(&rates),
            fastest_thread_gbs: median(&fastest),
            slowest_thread_gbs: median(&slowest),
            late_rounds: cell.window.iter().filter(|r| r.late).count() as u32,
            disturbed_rounds: cell.window.iter().filter(|r| r.disturbed).count() as u32,
            rounds: cell.window.len() as u32,
            scaling,
            vendor_fraction: ctx.vendor_gbs.map(|v| med / v),
            bytes_per_cycle,
            bytes_per_cycle_source,
            checksum_ok: cell.checksum.as_ref().map(|c| c.ok),
            median_ci: median_ci(&rates),
            counters,
            noisy: Vec::new(),
        };
        f.noisy = noisy_reasons(&NoiseInputs {
            cv: f.cv,
            late_rounds: f.late_rounds,
            disturbed_rounds: f.disturbed_rounds,
            rounds: f.rounds,
            threads: id.threads,
            cpus: ctx.cpus,
            steal: NoiseInputs::mean_share(cell.window.iter().map(|r| r.steal)),
            throttled: NoiseInputs::mean_share(cell.window.iter().map(|r| r.throttled)),
        });
        if ctx.not_a_measurement {
            f.noisy.insert(0, NOT_A_MEASUREMENT.to_string());
        }
        Some(f)
    }
}

/// The counters' figures over a window: each only where every round counted it.
fn counter_figures(window: &VecDeque<RoundSummary>) -> CounterFigures {
    let n = window.len() as f64;
    let per_round = |f: &dyn Fn(&Counts) -> Option<u64>| {
        let sum: Option<u64> = window.iter().map(|r| r.total(f)).sum();
        sum.filter(|_| n > 0.0).map(|s| s as f64 / n)
    };
    let thread_medians = |f: &dyn Fn(&Counts, u64) -> Option<f64>| {
        let v: Option<Vec<f64>> = window
            .iter()
            .flat_map(|r| {
                r.threads
                    .iter()
                    .zip(&r.thread_ns)
                    .map(|((_, c), ns)| f(c, *ns))
            })
            .collect();
        v.filter(|v| !v.is_empty()).map(|v| median(&v))
    };
    let misses: Option<u64> = window.iter().map(|r| r.total(|c| c.llc_misses)).sum();
    let bytes: u64 = window.iter().map(|r| r.bytes).sum();
    CounterFigures {
        ghz: thread_medians(&|c, ns| c.ghz(ns)),
        ipc: thread_medians(&|c, _| c.ipc()),
        switches_per_round: per_round(&|c| c.switches),
        migrations_per_round: per_round(&|c| c.migrations),
        page_faults_per_round: per_round(&|c| c.page_faults),
        llc_misses_per_kib: misses
            .filter(|_| bytes > 0)
            .map(|m| m as f64 * 1024.0 / bytes as f64),
    }
}

/// Median over rounds of bytes ÷ Σ threads' counted cycles; None unless every round has them.
fn counted_bytes_per_cycle(window: &VecDeque<RoundSummary>) -> Option<f64> {
    let v: Option<Vec<f64>> = window
        .iter()
        .map(|r| {
            r.total(|c| c.cycles)
                .filter(|&c| c > 0)
                .map(|c| r.bytes as f64 / c as f64)
        })
        .collect();
    v.filter(|v| !v.is_empty()).map(|v| median(&v))
}

/// What decides whether a cell's figure can be trusted.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct NoiseInputs {
    pub(crate) cv: f64,
    pub(crate) late_rounds: u32,
    pub(crate) disturbed_rounds: u32,
    pub(crate) rounds: u32,
    pub(crate) threads: usize,
    /// CPUs the threads may run on; None: not known.
    pub(crate) cpus: Option<usize>,
    /// Mean over the rounds a host sample covered of the steal and throttled shares (0..1).
    pub(crate) steal: Option<f64>,
    pub(crate) throttled: Option<f64>,
}

impl NoiseInputs {
    /// The mean of the shares the rounds have (None when none has one).
    pub(crate) fn mean_share(shares: impl Iterator<Item = Option<f64>>) -> Option<f64> {
        let v: Vec<f64> = shares.flatten().collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Why a cell's figure cannot be trusted: cv, late or disturbed rounds, steal or throttling
/// over their thresholds, or more threads than CPUs. Empty: nothing says so.
pub(crate) fn noisy_reasons(i: &NoiseInputs) -> Vec<String> {
    let mut why = Vec::new();
    if i.cv > NOISY_CV {
        why.push(format!(
            "cv {:.1} % over {:.0} %",
            i.cv * 100.0,
            NOISY_CV * 100.0
        ));
    }
    let rounds = i.rounds.max(1) as f64;
    for (n, what) in [(i.late_rounds, "late"), (i.disturbed_rounds, "disturbed")] {
        if n >= NOISY_ROUNDS && n as f64 / rounds > NOISY_ROUND_SHARE {
            why.push(format!(
                "{n} of {} rounds {what} (over {:.0} %)",
                i.rounds,
                NOISY_ROUND_SHARE * 100.0
            ));
        }
    }
    if let Some(s) = i.steal.filter(|&s| s > NOISY_HOST_SHARE) {
        why.push(format!(
            "the hypervisor stole {:.0} % of the CPU time (over {:.0} %)",
            s * 100.0,
            NOISY_HOST_SHARE * 100.0
        ));
    }
    if let Some(t) = i.throttled.filter(|&t| t > NOISY_HOST_SHARE) {
        why.push(format!(
            "the cgroup's CPU quota throttled {:.0} % of its periods (over {:.0} %)",
            t * 100.0,
            NOISY_HOST_SHARE * 100.0
        ));
    }
    if let Some(c) = i.cpus.filter(|&c| i.threads > c) {
        why.push(format!("{} threads on {c} CPUs", i.threads));
    }
    why
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

    /// A thread's stamps for 10 bytes, from `start_ns` to `end_ns` on `cpu`.
    fn timing(start_ns: u64, end_ns: u64, cpu: i32) -> ThreadTiming {
        ThreadTiming {
            start_ns,
            end_ns,
            cpu_start: cpu,
            cpu_end: cpu,
            bytes: 10,
            ..Default::default()
        }
    }

    #[test]
    fn late_round_is_span_over_slowest_by_more_than_20_percent() {
        // Both threads take 100 ns, but one starts 30 ns late: span 130 > 120.
        let late = RoundRecord::from_threads(
            CellId::new(0, 2),
            false,
            1,
            vec![timing(0, 100, 0), timing(30, 130, 1)],
        );
        assert!(late.late);
        assert_eq!(late.span_ns, 130);
        // A slow thread that is slow on its own is not late: span equals its time.
        let slow = RoundRecord::from_threads(
            CellId::new(0, 2),
            false,
            1,
            vec![timing(0, 100, 0), timing(0, 200, 1)],
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
            cpus: None,
            not_a_measurement: false,
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
