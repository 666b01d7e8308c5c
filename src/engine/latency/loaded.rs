//! Loaded latency: the chase's latency while other CPUs push memory bandwidth, stepped from full
//! load to nearly idle by a delay injected between each load thread's passes (what Intel MLC's
//! `--loaded_latency` does with its delays).
//!
//! One CPU (the triad's first) chases one chain, built once; load threads on the next CPUs of
//! the placement order each run the triad over arrays of their own, a chunk of [`CHUNK`]
//! elements at a time (192 KiB of traffic counted the STREAM way), and spin for the point's
//! delay after each chunk. A chunk, not a whole pass over the arrays, is the load's "pass":
//! a pass over DRAM-sized arrays takes tens of ms, longer than a whole point, so the delay
//! could not shape the load within one; a chunk takes ~10–20 µs and keeps the prefetchers
//! streaming. The delay is a spin of a calibrated length ([`SpinRate`]: spins per ns measured
//! once at the start with the clock), not a sleep: a sleep of microseconds is a system call
//! and a trip through the scheduler, far coarser than the delays asked for.
//!
//! A point: the load threads are woken with the point's delay, the chase walks [`SETTLE_NS`]
//! (untimed, the load settles and the hops per run are set for 1 ms under this load), then
//! runs its timed runs as [`super::measure`] does; the load's bandwidth is the chunks the load
//! threads finished between the first run's start and the last run's end (each thread counts
//! its own in a padded atomic), × 24 bytes per element, ÷ that time. The load threads park
//! between points. The idle point (no load) comes first and is the reference. The chain is
//! validated after the last point; nothing in the timed parts allocates, locks or calls the OS.
//!
//! The default delays: 0 (full load), then 7 from ¼ to 32 × the time one load thread takes
//! for one undelayed chunk, measured at the first point, geometric (ratio 2.0): the load falls
//! from ~80 % of the undelayed one to ~3 % (a thread delivering t/(t+d) of its rate).
//!
//! The knee ([`find_knee`]) is the point where queueing takes over: see its notes.

use super::chain::{Chain, Pages};
use super::hops::{UNROLL, Walker};
use super::{SEED, chase_bytes};
use crate::base::error::{Error, Result};
use crate::base::median::median;
use crate::engine::buffers::{Arrays, b_value, c_value};
use crate::engine::kernel::{Kernel, Op, Residence};
use crate::engine::plan::WorkingSet;
use crate::platform::{PinnedThread, now_ns};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// Elements per load chunk: 64 KiB per array, 192 KiB of triad traffic. A multiple of the
/// kernels' 32-element iteration, and 128-byte aligned at every chunk's start.
pub const CHUNK: usize = 8192;

/// Bytes one chunk counts, the STREAM way (two reads and a write of 8 bytes per element).
pub const CHUNK_BYTES: u64 = 24 * CHUNK as u64;

/// Delays when none are asked for: 0 and then this many more.
pub const DEFAULT_DELAYS: usize = 8;

/// The default ladder's first and last delay, as multiples of one undelayed chunk's time.
const LADDER_FIRST: f64 = 0.25;
const LADDER_LAST: f64 = 32.0;

/// What the chase walks (untimed) under a point's load before its timed runs: the load
/// threads wake and stream, and the hops per run are set for this load.
pub const SETTLE_NS: u64 = 5_000_000;

/// Timed runs per point (each about [`RUN_NS`]): the median is the point's latency. More than
/// idle latency's 11, since a loaded chase varies more from run to run.
pub const POINT_RUNS: usize = 21;

/// One timed run's length, as for idle latency (`super::RUN_NS`'s reasons).
pub const RUN_NS: u64 = 1_000_000;

/// The most delays a list may hold, and the longest delay: past 10 ms a load thread runs a
/// chunk or two per point, which is idle for every purpose.
pub const MAX_DELAYS: usize = 32;
pub const MAX_DELAY_NS: u64 = 10_000_000;

/// Latency above this multiple of the idle latency is queueing: see [`find_knee`].
pub const KNEE_FACTOR: f64 = 2.0;

/// Spins of the delay loop per nanosecond on this CPU, measured with the clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpinRate {
    spins_per_ns: f64,
}

/// Spins per calibration try (~0.3–1 ms) and the tries; the fastest try counts, as
/// preemption only ever lengthens one.
const CALIBRATION_SPINS: u64 = 1 << 20;
const CALIBRATION_TRIES: usize = 7;

impl SpinRate {
    /// Times [`spin`] on the calling thread with the clock.
    pub fn calibrate() -> SpinRate {
        SpinRate::calibrate_with(now_ns, spin)
    }

    /// The rate `spin` runs at by `clock` (ns): the best of [`CALIBRATION_TRIES`] tries of
    /// [`CALIBRATION_SPINS`] spins (at least 1 ns each, so a coarse clock cannot divide by 0).
    pub(crate) fn calibrate_with(
        mut clock: impl FnMut() -> u64,
        mut spin: impl FnMut(u64),
    ) -> Self {
        let mut best = u64::MAX;
        for _ in 0..CALIBRATION_TRIES {
            let t0 = clock();
            spin(CALIBRATION_SPINS);
            let t1 = clock();
            best = best.min(t1.saturating_sub(t0).max(1));
        }
        SpinRate {
            spins_per_ns: CALIBRATION_SPINS as f64 / best as f64,
        }
    }

    /// Spins for a delay of `ns`, rounded to the nearest.
    pub fn spins_for(&self, ns: u64) -> u64 {
        (ns as f64 * self.spins_per_ns).round() as u64
    }
}

/// The delay loop: `spins` turns of a loop the compiler must keep (`black_box`), no `pause`
/// (which under KVM can make the host deschedule a vCPU that spins on it).
#[inline(never)]
pub fn spin(spins: u64) {
    let mut i = 0u64;
    while i < spins {
        std::hint::black_box(i);
        i += 1;
    }
}

/// Which delays the points run at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delays {
    /// 0, then [`DEFAULT_DELAYS`] − 1 more on the ladder (module notes).
    Default,
    /// These, in ns, rising (`--delays`).
    Ns(Vec<u64>),
}

/// How a loaded-latency measurement runs.
#[derive(Debug, Clone)]
pub struct LoadedOptions {
    pub(crate) delays: Delays,
    pub(crate) runs: usize,
    pub(crate) run_ns: u64,
    pub(crate) settle_ns: u64,
    pub(crate) seed: u64,
    pub(crate) walker: Walker,
}

impl Default for LoadedOptions {
    fn default() -> LoadedOptions {
        LoadedOptions {
            delays: Delays::Default,
            runs: POINT_RUNS,
            run_ns: RUN_NS,
            settle_ns: SETTLE_NS,
            seed: SEED,
            walker: Walker::native(),
        }
    }
}

/// Where the chase and the load run, and on what.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// The chase's buffer, bytes, and its CPU (None: not pinned).
    pub(crate) chase_bytes: u64,
    pub(crate) chase_cpu: Option<usize>,
    /// One entry per load thread: its CPU (None: not pinned).
    pub(crate) load_cpus: Vec<Option<usize>>,
    /// Elements of each load thread's own three arrays (rounded down to whole chunks).
    load_elems: usize,
    kernel: Kernel,
    /// Advise huge pages for the load's arrays (the chase's buffer always is).
    huge_pages: bool,
}

impl LoadPlan {
    /// The plan over the placement order: the chase on its first CPU, `load_threads` load
    /// threads on the next ones (round again if there are fewer), each with its share of
    /// `load_set` (a DRAM set split across them) as its own arrays.
    pub fn new(
        chase_set: &WorkingSet,
        load_set: &WorkingSet,
        cpu_order: &[usize],
        pinned: bool,
        load_threads: usize,
        kernel: Kernel,
    ) -> LoadPlan {
        let load_threads = load_threads.max(1);
        let cpu =
            |i: usize| (pinned && !cpu_order.is_empty()).then(|| cpu_order[i % cpu_order.len()]);
        let layout = load_set.layout(load_threads);
        let per = layout
            .parts
            .iter()
            .map(|p| p.len())
            .min()
            .unwrap_or(layout.len);
        LoadPlan {
            chase_bytes: chase_bytes(chase_set),
            chase_cpu: cpu(0),
            load_cpus: (1..=load_threads).map(cpu).collect(),
            load_elems: per,
            kernel,
            huge_pages: true,
        }
    }

    /// Whether a load thread runs on the chase's CPU (fewer CPUs than threads, or none
    /// pinned): the figures are then the scheduler's sharing of that CPU.
    pub fn shares_chase_cpu(&self) -> bool {
        self.chase_cpu
            .is_none_or(|c| self.load_cpus.contains(&Some(c)))
    }

    /// Elements each load thread streams: whole chunks, at least one.
    fn chunked_elems(&self) -> usize {
        (self.load_elems / CHUNK).max(1) * CHUNK
    }

    /// Bytes of all load threads' arrays.
    pub fn load_bytes(&self) -> u64 {
        3 * 8 * self.chunked_elems() as u64 * self.load_cpus.len() as u64
    }
}

/// One point of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedPoint {
    /// The delay between chunks, ns; None for the idle point (no load threads running).
    pub(crate) delay_ns: Option<u64>,
    /// The delay as spins of [`spin`].
    pub(crate) delay_spins: Option<u64>,
    /// Load threads that ran (0 at the idle point).
    pub(crate) load_threads: usize,
    /// Their total bandwidth over the chase's runs, GB/s (decimal, 24 bytes per element).
    pub(crate) load_gbs: f64,
    /// The chase's median ns per load.
    pub(crate) latency_ns: f64,
    /// Each timed run's ns per load.
    pub(crate) runs_ns: Vec<f64>,
}

/// A measured curve: the idle point and one point per delay, in the order run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedCurve {
    pub(crate) chase_bytes: u64,
    pub(crate) chase_cpu: Option<usize>,
    load_cpus: Vec<Option<usize>>,
    load_bytes: u64,
    spin_rate: SpinRate,
    pub(crate) idle: LoadedPoint,
    pub(crate) points: Vec<LoadedPoint>,
    /// Index into `points` of the knee ([`find_knee`]).
    pub(crate) knee: Option<usize>,
    /// Share of the chase's buffer on huge pages; None where the OS does not say.
    huge_share: Option<f64>,
}

/// What the caller hears as the curve fills in: after calibration, the idle point, each
/// point. Its answer: go on (true) or stop (false; the curve so far is returned).
pub enum Progress<'a> {
    /// The delays now known (the default ladder is known after the first loaded point).
    Planned {
        delays_ns: &'a [u64],
    },
    Idle(&'a LoadedPoint),
    Point {
        index: usize,
        of: usize,
        point: &'a LoadedPoint,
    },
}

/// Control of the load threads: what they do now, and the delay.
const PARK: u8 = 0;
const RUN: u8 = 1;
const QUIT: u8 = 2;

/// One load thread's count of finished chunks, on a line of its own.
#[repr(align(128))]
#[derive(Default)]
struct Counter(AtomicU64);

struct Shared {
    state: AtomicU8,
    delay_spins: AtomicU64,
    done: Vec<Counter>,
}

/// The load threads: parked, running or told to quit; joined on drop.
struct LoadThreads {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl LoadThreads {
    /// Starts one thread per CPU of the plan; each pins, maps and first-touches its arrays,
    /// then parks. Returns once all are ready, or the first one's error.
    fn start(plan: &LoadPlan) -> Result<LoadThreads> {
        let n = plan.load_cpus.len();
        let shared = Arc::new(Shared {
            state: AtomicU8::new(PARK),
            delay_spins: AtomicU64::new(0),
            done: (0..n).map(|_| Counter::default()).collect(),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<()>>();
        let mut threads = LoadThreads {
            shared: shared.clone(),
            handles: Vec::with_capacity(n),
        };
        let elems = plan.chunked_elems();
        for (i, &cpu) in plan.load_cpus.iter().enumerate() {
            let shared = shared.clone();
            let ready = ready_tx.clone();
            let (kernel, huge) = (plan.kernel, plan.huge_pages);
            let spawned = std::thread::Builder::new()
                .name(format!("stream-top-load-{i}"))
                .spawn(move || load_thread(i, cpu, elems, kernel, huge, &shared, &ready));
            match spawned {
                Ok(h) => threads.handles.push(h),
                Err(e) => {
                    return Err(Error::machine(format!("cannot start a load thread: {e}")));
                }
            }
        }
        drop(ready_tx);
        for _ in 0..n {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(Error::engine("a load thread ended before it was ready")),
            }
        }
        Ok(threads)
    }

    fn set(&self, state: u8, delay_spins: u64) {
        self.shared
            .delay_spins
            .store(delay_spins, Ordering::Relaxed);
        self.shared.state.store(state, Ordering::Release);
        for h in &self.handles {
            h.thread().unpark();
        }
    }

    /// Chunks finished so far, all threads together.
    fn chunks(&self) -> u64 {
        self.shared
            .done
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }
}

impl Drop for LoadThreads {
    fn drop(&mut self) {
        self.set(QUIT, 0);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// A load thread: pin, map and touch its arrays, say it is ready, then run chunks with the
/// delay after each while told to, park while not, end when told.
fn load_thread(
    index: usize,
    cpu: Option<usize>,
    elems: usize,
    kernel: Kernel,
    huge: bool,
    shared: &Shared,
    ready: &std::sync::mpsc::Sender<Result<()>>,
) {
    let pin = match cpu {
        Some(c) => match PinnedThread::to(c) {
            Ok(p) => Some(p),
            Err(e) => {
                let _ = ready.send(Err(Error::machine(format!(
                    "cannot pin load thread {index} to CPU {c}: {e}"
                ))));
                return;
            }
        },
        None => None,
    };
    let arrays = match Arrays::map(elems, huge) {
        Ok(a) => a,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let (a, b, c) = (arrays.a.as_ptr(), arrays.b.as_ptr(), arrays.c.as_ptr());
    for k in 0..elems {
        // SAFETY: k < elems, the arrays' length; this thread is their only user.
        unsafe {
            *b.add(k) = b_value(k);
            *c.add(k) = c_value(k);
            *a.add(k) = 0.0;
        }
    }
    let triad = kernel.pass_function(Op::Triad, Residence::Memory);
    let _ = ready.send(Ok(()));
    let mine = &shared.done[index].0;
    let mut at = 0usize;
    loop {
        match shared.state.load(Ordering::Acquire) {
            RUN => {
                // SAFETY: at + CHUNK ≤ elems (elems is whole chunks); a, b, c are three
                // disjoint mappings of elems elements, 128-byte aligned at every chunk.
                unsafe { triad(a.add(at), b.add(at), c.add(at), CHUNK, Op::Triad.scalar()) };
                kernel.fence();
                mine.store(mine.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                at = if at + CHUNK >= elems { 0 } else { at + CHUNK };
                spin(shared.delay_spins.load(Ordering::Relaxed));
            }
            PARK => std::thread::park(),
            _ => break,
        }
    }
    drop(arrays);
    drop(pin);
}

/// The default ladder after a first point at delay 0 whose load threads, `threads` of them,
/// delivered `gbs`: `DEFAULT_DELAYS − 1` delays from ¼ to 32 × one undelayed chunk's time,
/// geometric, whole ns, rising (at least 1 ns apart).
pub fn default_ladder(gbs: f64, threads: usize) -> Vec<u64> {
    // GB/s is bytes per ns: one thread's chunk takes CHUNK_BYTES / (gbs / threads) ns.
    let chunk_ns = if gbs > 0.0 && gbs.is_finite() {
        CHUNK_BYTES as f64 * threads.max(1) as f64 / gbs
    } else {
        // No load measured (it cannot happen with a thread running): 20 µs, a chunk at ~10 GB/s.
        20_000.0
    };
    let steps = DEFAULT_DELAYS - 1;
    let ratio = (LADDER_LAST / LADDER_FIRST).powf(1.0 / (steps - 1) as f64);
    let mut out: Vec<u64> = Vec::with_capacity(steps);
    for k in 0..steps {
        let ns = (chunk_ns * LADDER_FIRST * ratio.powi(k as i32)).round() as u64;
        let ns = ns.clamp(1, MAX_DELAY_NS);
        let ns = out.last().map_or(ns, |&last| ns.max(last + 1));
        out.push(ns);
    }
    out
}

/// The chase's state across the points: where it is, the hops so far, the hops per run.
struct Chaser<'a> {
    chain: &'a Chain,
    walker: Walker,
    at: usize,
    hops: u64,
    blocks: u64,
}

impl Chaser<'_> {
    fn walk(&mut self, blocks: u64) -> Result<()> {
        self.at = self
            .chain
            .walk(self.walker, self.at, blocks)
            .ok_or_else(|| Error::engine("latency chase left its buffer"))?;
        self.hops += Chain::hops(blocks);
        Ok(())
    }

    /// Walks about `ns` (untimed) and sets the hops per run so that a run lasts about
    /// `run_ns` at the pace it walked.
    fn settle(&mut self, ns: u64, run_ns: u64) -> Result<()> {
        let blocks = (ns / run_ns.max(1)).max(1) * self.blocks;
        let t0 = now_ns();
        self.walk(blocks)?;
        self.set_run(now_ns() - t0, blocks, run_ns);
        Ok(())
    }

    /// The hops per run for about `run_ns`, from a walk of `blocks` that took `took_ns`.
    fn set_run(&mut self, took_ns: u64, blocks: u64, run_ns: u64) {
        let per_hop = took_ns.max(1) as f64 / Chain::hops(blocks) as f64;
        self.blocks = ((run_ns as f64 / per_hop) as u64 / UNROLL).max(1);
    }

    /// The timed runs into `ns` (capacity reserved by the caller), and the time they span.
    fn runs(&mut self, runs: usize, ns: &mut Vec<f64>) -> Result<(u64, u64)> {
        let hops = Chain::hops(self.blocks) as f64;
        let first = now_ns();
        let mut start = first;
        for _ in 0..runs {
            self.walk(self.blocks)?;
            let end = now_ns();
            ns.push((end - start) as f64 / hops);
            start = end;
        }
        Ok((first, start))
    }
}

/// Measures the curve: see the module's notes. `on` hears each step (and may stop it).
pub fn loaded_latency(
    plan: &LoadPlan,
    opts: &LoadedOptions,
    mut on: impl FnMut(Progress<'_>) -> bool,
) -> Result<LoadedCurve> {
    let _pin = match plan.chase_cpu {
        Some(c) => Some(PinnedThread::to(c).map_err(|e| {
            Error::machine(format!("cannot pin the latency chase to CPU {c}: {e}"))
        })?),
        None => None,
    };
    let chain = Chain::build(plan.chase_bytes, Pages::Huge, opts.seed)?;
    let load = LoadThreads::start(plan)?;
    let rate = SpinRate::calibrate();
    let runs = opts.runs.max(1);
    let threads = plan.load_cpus.len();

    // The idle point: a warm-up over the whole cycle (within the idle chase's bounds) sets
    // the hops per run, then the runs with every load thread parked.
    let mut chaser = Chaser {
        chain: &chain,
        walker: opts.walker,
        at: 0,
        hops: 0,
        blocks: 1,
    };
    let warm = (chain.lines() as u64)
        .clamp(1 << 16, 1 << 22)
        .div_ceil(UNROLL);
    let t0 = now_ns();
    chaser.walk(warm)?;
    chaser.set_run(now_ns() - t0, warm, opts.run_ns);
    let mut ns = Vec::with_capacity(runs);
    chaser.runs(runs, &mut ns)?;
    let idle = LoadedPoint {
        delay_ns: None,
        delay_spins: None,
        load_threads: 0,
        load_gbs: 0.0,
        latency_ns: median(&ns),
        runs_ns: ns,
    };
    let mut delays: Vec<u64> = match &opts.delays {
        Delays::Ns(list) => list.clone(),
        Delays::Default => vec![0],
    };
    let mut go_on = on(Progress::Planned { delays_ns: &delays }) && on(Progress::Idle(&idle));

    let mut points: Vec<LoadedPoint> = Vec::with_capacity(MAX_DELAYS);
    let mut i = 0;
    while go_on && i < delays.len() {
        let delay_ns = delays[i];
        let spins = rate.spins_for(delay_ns);
        load.set(RUN, spins);
        chaser.settle(opts.settle_ns, opts.run_ns)?;
        let mut ns = Vec::with_capacity(runs);
        let before = load.chunks();
        let (first, last) = chaser.runs(runs, &mut ns)?;
        let after = load.chunks();
        load.set(PARK, 0);
        let span = (last - first).max(1) as f64;
        let point = LoadedPoint {
            delay_ns: Some(delay_ns),
            delay_spins: Some(spins),
            load_threads: threads,
            load_gbs: (after - before) as f64 * CHUNK_BYTES as f64 / span,
            latency_ns: median(&ns),
            runs_ns: ns,
        };
        if i == 0 && opts.delays == Delays::Default {
            delays.extend(default_ladder(point.load_gbs, threads));
            go_on = on(Progress::Planned { delays_ns: &delays });
        }
        i += 1;
        go_on = go_on
            && on(Progress::Point {
                index: i - 1,
                of: delays.len(),
                point: &point,
            });
        points.push(point);
    }
    drop(load);
    chain.validate(chaser.hops, chaser.at, &|| Ok(()))?;
    let knee = find_knee(idle.latency_ns, &points);
    Ok(LoadedCurve {
        chase_bytes: chain.bytes(),
        chase_cpu: plan.chase_cpu,
        load_cpus: plan.load_cpus.clone(),
        load_bytes: plan.load_bytes(),
        spin_rate: rate,
        idle,
        points,
        knee,
        huge_share: chain.huge_bytes().map(|h| h as f64 / chain.bytes() as f64),
    })
}

/// The knee of a loaded-latency curve: the index (into `points`) of the point of least load
/// bandwidth whose latency exceeds [`KNEE_FACTOR`] × `idle_ns` and stays above it at every
/// point of more bandwidth; None when the point of most bandwidth is not above it (the memory
/// never queued that much), or there is no usable idle latency.
///
/// Why 2 × idle: below it a load waits mostly for the DRAM itself; above it, it waits longer
/// in the memory controller's queues than the access takes, so queueing dominates: the
/// bandwidth at which a latency-bound application starts to suffer, as MLC users read the
/// curve. Why "stays above": a loaded chase on a shared machine is noisy, and one slow point
/// at light load (a preempted run) is not a knee; the curve's knee is where it crosses for
/// good. No interpolation between points: the knee is a measured point, its neighbours are in
/// the table, and a line drawn between two noisy points would invent a bandwidth nobody
/// measured. Points are taken in order of rising bandwidth (ties: in the order given).
pub fn find_knee(idle_ns: f64, points: &[LoadedPoint]) -> Option<usize> {
    let pairs: Vec<(f64, f64)> = points.iter().map(|p| (p.load_gbs, p.latency_ns)).collect();
    knee_of(idle_ns, &pairs)
}

/// [`find_knee`] over (bandwidth, latency) pairs.
pub fn knee_of(idle_ns: f64, pairs: &[(f64, f64)]) -> Option<usize> {
    if !(idle_ns.is_finite() && idle_ns > 0.0) {
        return None;
    }
    let limit = KNEE_FACTOR * idle_ns;
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|&a, &b| pairs[a].0.total_cmp(&pairs[b].0));
    let mut knee = None;
    for &i in order.iter().rev() {
        if pairs[i].1 > limit {
            knee = Some(i);
        } else {
            break;
        }
    }
    knee
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn calibration_takes_the_fastest_try_and_converts_ns_to_spins() {
        // A fake clock that moves 1 ns per 2 spins; the third try is preempted for 1 ms.
        let now = Cell::new(1_000u64);
        let tries = Cell::new(0);
        let rate = SpinRate::calibrate_with(
            || now.get(),
            |spins| {
                tries.set(tries.get() + 1);
                let stall = if tries.get() == 3 { 1_000_000 } else { 0 };
                now.set(now.get() + spins / 2 + stall);
            },
        );
        assert_eq!(tries.get(), CALIBRATION_TRIES);
        assert_eq!(rate.spins_per_ns, 2.0);
        assert_eq!(rate.spins_for(0), 0);
        assert_eq!(rate.spins_for(1_000), 2_000);
        // A clock that does not move cannot give an infinite rate.
        let still = SpinRate::calibrate_with(|| 5, |_| {});
        assert!(still.spins_per_ns.is_finite());
    }

    #[test]
    fn calibration_on_the_real_clock_gives_a_usable_rate() {
        let rate = SpinRate::calibrate();
        assert!(
            rate.spins_per_ns.is_finite() && rate.spins_per_ns > 0.0,
            "{rate:?}"
        );
        // Longer delays are more spins, never fewer.
        let spins: Vec<u64> = [0, 10, 1_000, 100_000].map(|ns| rate.spins_for(ns)).into();
        assert!(spins.windows(2).all(|w| w[0] <= w[1]), "{spins:?}");
        assert!(spins[3] > 0);
    }

    #[test]
    fn the_default_ladder_rises_geometrically_from_a_quarter_to_32_chunks() {
        // 1 thread at 9.8304 GB/s: a chunk (196608 B) takes 20 µs.
        let l = default_ladder(9.8304, 1);
        assert_eq!(l.len(), DEFAULT_DELAYS - 1);
        assert_eq!(l[0], 5_000);
        assert_eq!(*l.last().unwrap(), 640_000);
        assert!(l.windows(2).all(|w| w[1] as f64 / w[0] as f64 > 2.0 - 1e-3));
        // Two threads at the same total: each chunk takes twice as long.
        assert_eq!(default_ladder(9.8304, 2)[0], 10_000);
        // Tiny chunk times still give a rising list.
        let t = default_ladder(1e9, 1);
        assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
        assert!(default_ladder(0.0, 1).iter().all(|&d| d > 0));
    }

    /// Points from (bandwidth, latency) pairs, in the order of rising delay (falling load).
    fn curve(pairs: &[(f64, f64)]) -> Vec<LoadedPoint> {
        pairs
            .iter()
            .enumerate()
            .map(|(i, &(gbs, ns))| LoadedPoint {
                delay_ns: Some(i as u64 * 1000),
                delay_spins: Some(i as u64),
                load_threads: 1,
                load_gbs: gbs,
                latency_ns: ns,
                runs_ns: vec![ns],
            })
            .collect()
    }

    #[test]
    fn a_flat_curve_has_no_knee() {
        let p = curve(&[(20.0, 110.0), (15.0, 105.0), (8.0, 101.0), (1.0, 100.0)]);
        assert_eq!(find_knee(100.0, &p), None);
    }

    #[test]
    fn the_knee_is_the_first_point_past_twice_idle_in_order_of_bandwidth() {
        // Given in delay order (bandwidth falling): the knee is the 15 GB/s point (index 1),
        // the least bandwidth at which latency is past 200 ns and stays there.
        let p = curve(&[
            (20.0, 400.0),
            (15.0, 230.0),
            (10.0, 180.0),
            (5.0, 120.0),
            (1.0, 101.0),
        ]);
        assert_eq!(find_knee(100.0, &p), Some(1));
        // Exactly 2 × idle is not past it.
        let p = curve(&[(20.0, 300.0), (15.0, 200.0), (10.0, 150.0)]);
        assert_eq!(find_knee(100.0, &p), Some(0));
    }

    #[test]
    fn a_curve_that_never_doubles_has_no_knee() {
        let p = curve(&[(20.0, 199.0), (10.0, 150.0), (0.5, 100.0)]);
        assert_eq!(find_knee(100.0, &p), None);
        // Above 2 × only at light load, not at the most bandwidth: no knee either.
        let p = curve(&[(20.0, 180.0), (1.0, 250.0)]);
        assert_eq!(find_knee(100.0, &p), None);
        // No idle latency to compare with.
        assert_eq!(find_knee(0.0, &curve(&[(20.0, 500.0)])), None);
        assert_eq!(find_knee(f64::NAN, &curve(&[(20.0, 500.0)])), None);
        assert_eq!(find_knee(100.0, &[]), None);
    }

    #[test]
    fn a_noisy_non_monotone_curve_knees_where_it_crosses_for_good() {
        // Out of order in bandwidth (a delayed point outran a less delayed one) and a spike
        // at 3 GB/s (a preempted run): the spike is not the knee; 12 GB/s (index 2) is.
        let p = curve(&[
            (18.0, 320.0),
            (11.0, 190.0),
            (12.0, 240.0),
            (14.0, 260.0),
            (6.0, 150.0),
            (3.0, 260.0),
            (0.8, 104.0),
        ]);
        assert_eq!(find_knee(100.0, &p), Some(2));
        // A dip below 2 × at the top moves the knee up to the points past the dip.
        let p = curve(&[(20.0, 300.0), (18.0, 190.0), (16.0, 250.0)]);
        assert_eq!(find_knee(100.0, &p), Some(0));
    }

    #[test]
    fn a_tiny_loaded_curve_has_its_structure() {
        // An L1-sized chase against two small load arrays, two delays: the structure, never
        // the speed (shared machine).
        let set = |bytes| WorkingSet {
            name: "t".into(),
            level: None,
            size: crate::engine::plan::ArraySize::Split(bytes),
            note: None,
        };
        // The machine's CPUs, not this thread's mask: another test may have left the test
        // thread on one CPU, and the chase and the load would then share it.
        let topo = crate::machine::topology::Topology::read(std::path::Path::new("/")).unwrap();
        let cpus = topo.cpu_order(crate::machine::topology::PinPolicy::Spread);
        let kernel = Kernel::resolve(None, crate::engine::kernel::Stores::Normal).unwrap();
        let plan = LoadPlan::new(
            &set(16 << 10),
            &set(4 * CHUNK as u64 * 8),
            &cpus,
            true,
            1,
            kernel,
        );
        assert_eq!(plan.load_cpus.len(), 1);
        let opts = LoadedOptions {
            delays: Delays::Ns(vec![0, 200_000]),
            runs: 20,
            run_ns: 1_000_000,
            settle_ns: 2_000_000,
            ..LoadedOptions::default()
        };
        let mut heard = Vec::new();
        let c = loaded_latency(&plan, &opts, |p| {
            heard.push(match p {
                Progress::Planned { delays_ns } => format!("planned {}", delays_ns.len()),
                Progress::Idle(_) => "idle".into(),
                Progress::Point { index, of, .. } => format!("{index}/{of}"),
            });
            true
        })
        .unwrap();
        assert_eq!(heard, ["planned 2", "idle", "0/2", "1/2"]);
        assert_eq!(c.points.len(), 2);
        assert_eq!(c.idle.load_threads, 0);
        assert_eq!(c.idle.load_gbs, 0.0);
        assert!(c.idle.latency_ns > 0.0);
        assert_eq!(c.idle.runs_ns.len(), 20);
        for (p, want) in c.points.iter().zip([0, 200_000]) {
            assert_eq!(p.delay_ns, Some(want));
            assert_eq!(p.load_threads, 1);
            assert!(p.load_gbs >= 0.0 && p.latency_ns > 0.0, "{p:?}");
            assert_eq!(p.runs_ns.len(), 20);
        }
        // A chunk of this L2-sized load takes a few µs: 200 µs after each leaves a few %. The
        // load thread can be kept off its CPU for a whole point by the other tests' pinned,
        // spinning workers (they run beside this one, on 2 CPUs here): it then delivers 0 at
        // delay 0. So the falling bandwidth must show in one of 5 curves, not in every one.
        // Under an emulator (the aarch64 tests run under qemu-user) a chunk takes milliseconds:
        // a 200 µs pause after each changes the load by a per cent or so, noise.
        let chunk_ns = CHUNK_BYTES as f64 / c.points[0].load_gbs;
        let pause_shows = c.points[0].load_gbs == 0.0 || chunk_ns < 10.0 * 200_000.0;
        if !pause_shows {
            crate::base::output::stderr(&format!(
                "a chunk took {:.1} ms, the 200 µs pause cannot show: not judged",
                chunk_ns / 1e6
            ));
        }
        if !plan.shares_chase_cpu() && pause_shows {
            let falls = |c: &LoadedCurve| {
                c.points[0].load_gbs > 0.0 && c.points[0].load_gbs > c.points[1].load_gbs
            };
            let mut curves = vec![c.clone()];
            while !falls(curves.last().unwrap()) && curves.len() < 5 {
                curves.push(loaded_latency(&plan, &opts, |_| true).unwrap());
            }
            let last = curves.last().unwrap();
            assert!(
                falls(last),
                "{:?}",
                curves.iter().map(|c| &c.points).collect::<Vec<_>>()
            );
        }
        assert_eq!(c.points[0].delay_spins, Some(0));
        assert!(c.points[1].delay_spins.unwrap() > 0);
        assert!(c.spin_rate.spins_per_ns > 0.0);
        // Stopping after the idle point keeps what was measured, and the chain still checks.
        let c = loaded_latency(&plan, &opts, |p| !matches!(p, Progress::Idle(_))).unwrap();
        assert!(c.points.is_empty() && c.idle.latency_ns > 0.0);
    }
}
