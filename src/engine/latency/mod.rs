//! Idle memory latency: a dependent pointer chase through a random cyclic permutation of a
//! buffer's cache lines, timed on one pinned thread, median of repeated runs.
//!
//! # The chain
//!
//! One pointer per 64-byte line, in the line's first word; the lines form a single cycle in a
//! random order drawn from a seed by Sattolo's shuffle ([`chain::Chain::build`]; SplitMix64,
//! our own, so a seed gives the same chain everywhere). Each load's address is the previous
//! load's value, so loads cannot overlap and the time per hop is the load-to-use latency of
//! the level the buffer fits in.
//!
//! Why a uniformly random order of all lines, and not a fixed stride or page-local order:
//! - stream and stride prefetchers (L1 IP-stride, L2 streamer, AMD's stride and region
//!   prefetchers) need a constant or repeating delta between successive misses; successive
//!   lines here are unrelated, so they never train, and hardware prefetchers can stay on. We
//!   change no MSR: the figure is what software on this machine sees (MLC turns prefetchers
//!   off, which needs root; we do not).
//! - the adjacent-line (spatial, buddy-line) prefetcher fetches the other 64 bytes of a
//!   128-byte pair on a miss. That line is visited at a random later time, and helps only if
//!   it is still cached then: about cache lines / buffer lines of the time. For `dram`
//!   (12 × the last-level cache) that is under 1 % for L2 and about 8 % for the LLC; in the
//!   cache levels every line hits its level anyway. No stride keeps that prefetcher idle
//!   without leaving lines out, and leaving half the lines out would halve the set.
//! - a page-local order (all of a 4 KiB page's lines before the next page) would hide the
//!   TLB; we want the TLB cost measured, not hidden: the buffer is on huge pages (2 MiB
//!   aligned, `MADV_HUGEPAGE`, as the triad's arrays with `--huge-pages`), so that a `dram`
//!   hop is a DRAM access and not a page walk, and the same chain on 4 KiB pages
//!   (`MADV_NOHUGEPAGE`) gives the TLB cost as its own figure: latency on 4 KiB pages −
//!   latency on huge pages, at the same size and seed.
//!
//! # The measurement
//!
//! [`measure`]: pin to the CPU the triad's first thread uses, build the chain (first touch
//! there), one untimed warm-up (whole cycle for the cache levels, to fill them; it also gives
//! the hops per run), then [`RUNS`] timed runs of about [`RUN_NS`] each (thousands of times the
//! clock read), each a clock read, `blocks × 32` hops, a clock read. Nothing in the timed part
//! allocates or calls the OS. The figure is the median ns per load. Cycles per load are counted
//! cycles where the thread's PMU counts them, otherwise ns × the clock estimate's GHz
//! ([`crate::machine::clock::ClockEstimate`]), and the row says which ([`CyclesSource`]).
//! After the runs, [`chain::Chain::validate`] walks the chain: still one cycle through every
//! line, and the walker ended where the hop count says. A failure is an error.

pub mod chain;
pub mod hops;
mod jobs;
pub mod loaded;
pub mod probe;

use crate::base::error::{Error, Result};
use crate::base::median::median;
use crate::base::units::format_bytes;
use crate::engine::plan::{ArraySize, Level, WorkingSet};
use crate::machine::clock::ClockEstimate;
use crate::machine::counters::{Counter, Host, ThreadCounters};
use crate::platform::{PinnedThread, now_ns};
pub use chain::{Chain, LINE, Pages, SplitMix64};
pub use hops::{UNROLL, Walker};
pub use jobs::{ChaseJob, matrix_jobs, set_jobs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Timed runs per measurement; the median is the figure.
pub const RUNS: usize = 11;

/// Length of one timed run, ns: 1 ms, ~10^4 clock reads' worth, and short enough that most
/// runs fit in one scheduler slice on a busy CPU (10 ms runs there straddle slices and all
/// come out long: L1 at 2–3× its 1 ms figure on the 2-vCPU test VM at load 12).
const RUN_NS: u64 = 1_000_000;

/// The default seed of the chain's permutation.
pub const SEED: u64 = 0x5eed_c4a5_e000_0001;

/// Hops of the warm-up: the whole cycle, within these bounds.
const WARMUP_MIN_HOPS: u64 = 1 << 16;
const WARMUP_MAX_HOPS: u64 = 1 << 22;

/// How a measurement runs.
#[derive(Debug, Clone)]
pub struct ChaseOptions {
    pub runs: usize,
    pub run_ns: u64,
    pub seed: u64,
    pub walker: Walker,
    /// Also chase on 4 KiB pages for the TLB cost (where huge pages took).
    pub(crate) tlb: bool,
    /// Open the thread's counters for counted cycles (`--counters off`: ns × the clock).
    pub counters: bool,
    /// Bind the buffer's pages to this NUMA node (the latency matrix); None: first touch.
    pub(crate) mem_node: Option<usize>,
    /// Set (by a signal) to end the chase between its steps: it then fails with [`STOPPED`].
    pub(crate) stop: Option<Arc<AtomicBool>>,
}

/// The error of a chase ended by its `stop` flag.
pub const STOPPED: &str = "latency chase stopped";

impl ChaseOptions {
    /// `Err` once the stop flag is set: checked between the chase's steps, never in a run.
    fn go_on(&self) -> Result<()> {
        match &self.stop {
            Some(stop) if stop.load(Ordering::Relaxed) => Err(Error::engine(STOPPED)),
            _ => Ok(()),
        }
    }
}

impl Default for ChaseOptions {
    fn default() -> ChaseOptions {
        ChaseOptions {
            runs: RUNS,
            run_ns: RUN_NS,
            seed: SEED,
            walker: Walker::native(),
            tlb: true,
            counters: true,
            mem_node: None,
            stop: None,
        }
    }
}

/// Where the cycles per load come from.
#[derive(Debug, Clone, PartialEq)]
pub enum CyclesSource {
    /// Cycles counted by the PMU on the chasing thread.
    Counted,
    /// Nanoseconds × the clock estimate (no PMU counts cycles here: VMs often have none).
    ClockEstimate { ghz: f64 },
}

impl CyclesSource {
    /// "counted" or "from the 2.45 GHz clock estimate".
    pub fn words(&self) -> String {
        match self {
            CyclesSource::Counted => "counted".to_string(),
            CyclesSource::ClockEstimate { ghz } => format!("from the {ghz:.2} GHz clock estimate"),
        }
    }
}

/// One measurement of one buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Chase {
    pub bytes: u64,
    pages: Pages,
    /// Median ns per load over the runs.
    pub ns: f64,
    /// Each run's ns per load, in run order.
    pub(crate) runs_ns: Vec<f64>,
    cycles: f64,
    cycles_source: CyclesSource,
    /// Hops per timed run.
    pub hops_per_run: u64,
    /// Share of the buffer on huge pages after the runs; `None` where the OS does not say.
    huge_share: Option<f64>,
}

/// Chases a fresh chain of `bytes` on `pages`, pinned to `cpu` (restored after), and
/// validates it: see the module's notes.
pub fn measure(
    bytes: u64,
    pages: Pages,
    cpu: Option<usize>,
    clock: &ClockEstimate,
    opts: &ChaseOptions,
) -> Result<Chase> {
    let _pin = match cpu {
        Some(c) => Some(PinnedThread::to(c).map_err(|e| {
            Error::machine(format!("cannot pin the latency chase to CPU {c}: {e}"))
        })?),
        None => None,
    };
    opts.go_on()?;
    let chain = Chain::build_on(bytes, pages, opts.seed, opts.mem_node, &|| opts.go_on())?;
    opts.go_on()?;
    let (counters, counting) = if opts.counters {
        let (c, available) = ThreadCounters::open(Host::default());
        (c, available.has(Counter::Cycles))
    } else {
        (ThreadCounters::none(), false)
    };
    // `walk` fails only off the chain's lines, where the walker of an intact chain never
    // goes: an error, not a panic, if it ever did.
    let walk = |p, blocks| {
        chain
            .walk(opts.walker, p, blocks)
            .ok_or_else(|| Error::engine("latency chase left its buffer"))
    };

    let warm_blocks = (chain.lines() as u64)
        .clamp(WARMUP_MIN_HOPS, WARMUP_MAX_HOPS)
        .div_ceil(UNROLL);
    // In pieces, asking between them whether to go on: at DRAM latency on small pages the
    // warm-up takes a second or more, and a signal must end it sooner.
    let t0 = now_ns();
    let mut p = 0;
    let mut left = warm_blocks;
    while left > 0 {
        opts.go_on()?;
        let piece = left.min(WARMUP_MIN_HOPS / UNROLL);
        p = walk(p, piece)?;
        left -= piece;
    }
    let warm_ns = (now_ns() - t0).max(1) as f64 / Chain::hops(warm_blocks) as f64;
    let blocks = ((opts.run_ns as f64 / warm_ns) as u64 / UNROLL).max(1);
    let mut hops = Chain::hops(warm_blocks);

    let runs = opts.runs.max(1);
    let mut ns = Vec::with_capacity(runs);
    let mut cycles = Vec::with_capacity(runs);
    for _ in 0..runs {
        opts.go_on()?;
        let before = counters.read();
        let start = now_ns();
        p = walk(p, blocks)?;
        let end = now_ns();
        let after = counters.read();
        hops += Chain::hops(blocks);
        ns.push((end - start) as f64 / Chain::hops(blocks) as f64);
        if counting && let Some(c) = counters.delta(&before, &after).cycles {
            cycles.push(c as f64 / Chain::hops(blocks) as f64);
        }
    }
    opts.go_on()?;
    chain.validate(hops, p, &|| opts.go_on())?;

    let median_ns = median(&ns);
    let (cycles, cycles_source) = if counting && cycles.len() == runs {
        (median(&cycles), CyclesSource::Counted)
    } else {
        (
            median_ns * clock.ghz,
            CyclesSource::ClockEstimate { ghz: clock.ghz },
        )
    };
    Ok(Chase {
        bytes: chain.bytes(),
        pages,
        ns: median_ns,
        runs_ns: ns,
        cycles,
        cycles_source,
        hops_per_run: Chain::hops(blocks),
        huge_share: chain.huge_bytes().map(|h| h as f64 / chain.bytes() as f64),
    })
}

/// The chase's buffer for a working set sized by the plan ([`crate::engine::plan::size_sets`]):
/// the triad's whole footprint at one thread, so that `l1`, `l2` and `l3` are half of one
/// CPU's share of that cache (as the triad's three slices are) and `dram` is 12 × all
/// last-level cache (three arrays of 4 ×), or what memory allowed. An explicit size is the
/// chase's buffer as given, per-thread or not: one thread chases.
pub fn chase_bytes(set: &WorkingSet) -> u64 {
    match (set.level, set.size) {
        (Some(_), _) => 3 * set.array_bytes(1),
        (None, ArraySize::PerThread(b) | ArraySize::Split(b)) => b.max(LINE as u64),
    }
}

/// Idle latency at one working set.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyRow {
    /// `16 KiB (l1)`, `384 MiB (dram)`, or an explicit set's name.
    pub label: String,
    pub(crate) level: Option<Level>,
    /// Bytes of the chase's buffer.
    pub(crate) bytes: u64,
    /// Median ns per load on huge pages (or where they did not take, on what the OS gave).
    pub ns: f64,
    pub cycles: f64,
    pub cycles_source: CyclesSource,
    /// Share of the buffer on huge pages; `None` where the OS does not say.
    pub huge_share: Option<f64>,
    /// Median ns per load on 4 KiB pages, where measured.
    pub ns_small_pages: Option<f64>,
    /// The TLB cost: 4 KiB pages − huge pages, ns per load; measured only where at least
    /// half the huge-page buffer sat on huge pages (else there is nothing to compare).
    pub tlb_ns: Option<f64>,
    /// Each timed run's ns per load on huge pages, in run order (`ns` is their median).
    pub(crate) runs_ns: Vec<f64>,
    /// Hops per timed run.
    pub(crate) hops_per_run: u64,
    /// The CPU the chase was pinned to; None when unpinned.
    pub(crate) cpu: Option<usize>,
    /// For the latency matrix: the CPU's node and the node the buffer was bound to.
    pub(crate) cpu_node: Option<usize>,
    pub(crate) mem_node: Option<usize>,
}

/// Share of a buffer on huge pages below which it does not count as on huge pages.
const HUGE_TOOK: f64 = 0.5;

/// Idle latency per working set, in order, each on a fresh chain, on `cpu` (the triad's first
/// CPU: `cpu_order.first()`), with the TLB cost where `opts.tlb` and huge pages took. Stops at
/// the first failure (a chain that does not validate is an error).
pub fn idle_latency(
    sets: &[WorkingSet],
    cpu: Option<usize>,
    clock: &ClockEstimate,
    opts: &ChaseOptions,
) -> Result<Vec<LatencyRow>> {
    set_jobs(sets, cpu)
        .iter()
        .map(|job| chase_job(job, clock, opts))
        .collect()
}

/// One job measured: its buffer on huge pages, and on 4 KiB pages for the TLB cost where
/// `opts.tlb` and at least half the huge-page buffer really sat on huge pages.
pub fn chase_job(job: &ChaseJob, clock: &ClockEstimate, opts: &ChaseOptions) -> Result<LatencyRow> {
    let opts = ChaseOptions {
        mem_node: job.mem_node,
        ..opts.clone()
    };
    let huge = measure(job.bytes, Pages::Huge, job.cpu, clock, &opts)?;
    let took = huge.huge_share.is_some_and(|s| s >= HUGE_TOOK);
    opts.go_on()?;
    let small = if opts.tlb && took {
        Some(measure(job.bytes, Pages::Small, job.cpu, clock, &opts)?)
    } else {
        None
    };
    let label = match job.level {
        Some(level) => format!("{} ({})", format_bytes(huge.bytes), level.name()),
        None => job.label.clone(),
    };
    Ok(LatencyRow {
        label,
        level: job.level,
        bytes: huge.bytes,
        ns: huge.ns,
        cycles: huge.cycles,
        cycles_source: huge.cycles_source.clone(),
        huge_share: huge.huge_share,
        ns_small_pages: small.as_ref().map(|s| s.ns),
        tlb_ns: small.as_ref().map(|s| s.ns - huge.ns),
        runs_ns: huge.runs_ns,
        hops_per_run: huge.hops_per_run,
        cpu: job.cpu,
        cpu_node: job.cpu_node,
        mem_node: job.mem_node,
    })
}

#[cfg(test)]
mod tests;
