//! The persistent worker pool: one pinned OS thread per worker beyond the coordinator, which is
//! worker 0 itself, so a configuration with T threads has exactly T runnable threads.
//!
//! Protocol. Workers outside the current configuration are parked on a condition variable (no
//! CPU). Active workers spin on a generation counter: the coordinator writes a job, bumps the
//! generation (the start barrier: every active worker leaves it at once), does its own share,
//! then spins until every active worker has counted itself done (the end barrier). Workers read
//! the clock after leaving the first and before arriving at the second. Nothing in the timed
//! part allocates, locks, prints or sends.
//!
//! Crowding. With more active workers than CPUs to run them (`--oversubscribe`, or threads
//! not pinned), a spinning worker holds a CPU another worker needs to finish its part: then the
//! spins yield the CPU (sched_yield) instead of only pausing, so such a round ends at all. Only
//! the barriers spin; the timed span has no call in it either way.
//!
//! Stopping. The untimed jobs (first touch, reset, sum) work in chunks and look at the engine's
//! stop flag between them, so a stop during the first touch of a multi-GiB set takes effect
//! within one chunk; a timed round is never cut short.
//!
//! Safety. Jobs run only on [`PartitionedArrays`] (a Pin job, on nothing): a working set's
//! arrays with the partition of the cell that uses them, checked whenever it is set (every part
//! inside the arrays, no two parts overlapping).
//! A job holds the pool exclusively (`&mut self`) and ends at the end barrier, so while it runs
//! each worker writes only its own part and nothing else touches the arrays; the coordinator
//! never sees a raw pointer.

use super::buffers::{A_RESET, Arrays, b_value, c_value};
use super::events::ThreadTiming;
use super::kernel::{Op, OpFn, store_fence};
use super::placement::move_part;
use super::plan::Layout;
use crate::base::error::{Error, Result, panic_message};
use crate::machine::counters::{COUNT_WORDS, Counts, Host, ThreadCounters};
use crate::platform::{current_cpu, now_ns, pin_current_thread};
use std::cell::UnsafeCell;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Elements an untimed job (touch, reset, sum) handles between looks at the stop flag, and
/// first-touched between progress updates: 8 MiB of each array.
const CHUNK: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JobKind {
    /// Write b, c and a = -1 over the partition: the first touch.
    Touch,
    /// a = -1 over the partition.
    ResetA,
    /// a = -1 and b to its values over the partition (after an op that writes b).
    ResetAB,
    /// `passes` passes of the job's op over the partition, timed.
    Round,
    /// Sum a over the partition into the slot.
    SumA,
    /// Move the partition's pages to the worker's node (`Slot::node`).
    Place,
    /// Pin the worker to `Slot::pin` (no arrays).
    Pin,
}

/// A cell's three arrays and the partition of their elements among its threads, checked once:
/// the only thing the pool runs jobs on.
pub struct PartitionedArrays {
    arrays: Arrays,
    layout: Layout,
}

impl PartitionedArrays {
    /// Puts the arrays and the layout together when every part lies inside the arrays and no
    /// two parts overlap; an engine error otherwise (a bug in the plan, not the user's doing).
    pub fn new(arrays: Arrays, layout: Layout) -> Result<PartitionedArrays> {
        check(&arrays, &layout)?;
        Ok(PartitionedArrays { arrays, layout })
    }

    /// The same arrays partitioned another way (another thread count), checked as `new`
    /// checks.
    pub(crate) fn repartition(mut self, layout: Layout) -> Result<PartitionedArrays> {
        self.set_layout(layout)?;
        Ok(self)
    }

    /// Partitions the arrays another way, checked as `new` checks; on an error the old
    /// partition stays.
    pub(crate) fn set_layout(&mut self, layout: Layout) -> Result<()> {
        check(&self.arrays, &layout)?;
        self.layout = layout;
        Ok(())
    }

    pub fn arrays(&self) -> &Arrays {
        &self.arrays
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
}

/// Every part inside the arrays, no two overlapping.
fn check(arrays: &Arrays, layout: &Layout) -> Result<()> {
    let len = arrays.a.len().min(arrays.b.len()).min(arrays.c.len());
    if layout.len > len {
        return Err(Error::engine(format!(
            "the layout covers {} elements but the arrays hold {len}",
            layout.len
        )));
    }
    let mut parts: Vec<&Range<usize>> = layout.parts.iter().collect();
    parts.sort_by_key(|p| p.start);
    if let Some(p) = parts.iter().find(|p| p.start > p.end || p.end > layout.len) {
        return Err(Error::engine(format!(
            "part {p:?} lies outside the {} elements of the arrays",
            layout.len
        )));
    }
    if let Some(w) = parts.windows(2).find(|w| w[0].end > w[1].start) {
        return Err(Error::engine(format!(
            "parts {:?} and {:?} overlap",
            w[0], w[1]
        )));
    }
    Ok(())
}

/// What every active worker does next. Written by the coordinator only while no worker reads it.
#[derive(Clone, Copy)]
struct Job {
    kind: JobKind,
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    /// The parts of the active workers (exactly as many as there are).
    parts: *const Range<usize>,
    passes: u32,
    function: OpFn,
    /// The op's scalar `s`.
    scalar: f64,
    /// Fence the non-temporal stores once after the passes (inside the timed span).
    fence: bool,
}

/// How a round's passes run: the op, its pass function, and whether its stores need a fence
/// at the end.
#[derive(Clone, Copy)]
pub struct Pass {
    pub op: Op,
    pub function: OpFn,
    pub fence: bool,
}

/// A worker's results for the last job, on its own cache lines.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    start_ns: AtomicU64,
    end_ns: AtomicU64,
    cpu_start: AtomicI32,
    cpu_end: AtomicI32,
    /// f64 bits of the partition's sum of a.
    sum_bits: AtomicU64,
    /// Elements first-touched so far.
    touched: AtomicU64,
    /// The round's counts (`Counts::to_words`), read just outside the timed span.
    counts: [AtomicU64; COUNT_WORDS],
    /// For a Place job: the node to move the partition's pages to (-1: none).
    node: AtomicI64,
    /// For a Pin job: the CPU to pin the worker to (-1: leave it).
    pin: AtomicI64,
}

struct Shared {
    job: UnsafeCell<Job>,
    generation: AtomicU64,
    done: AtomicUsize,
    /// Workers with index < active take part in jobs; the others park.
    active: AtomicUsize,
    /// Active workers spinning on the generation, ready for the next job.
    ready: AtomicUsize,
    /// More active workers than CPUs for them: spins yield the CPU.
    crowded: AtomicBool,
    exit: AtomicBool,
    /// Set when a worker panicked; its message.
    failure: Mutex<Option<String>>,
    failed: AtomicBool,
    lock: Mutex<()>,
    wake: Condvar,
    slots: Box<[Slot]>,
    /// Test hook: the worker with this index panics in its next round (usize::MAX: never).
    panic_worker: AtomicUsize,
    /// Test hook: the worker with this index yields its CPU inside every round's span
    /// (usize::MAX: never), so that a competitor on that CPU certainly runs in it.
    yield_worker: AtomicUsize,
    /// Set by the engine's owner to stop: untimed jobs end at their next chunk.
    stop: Arc<AtomicBool>,
}

/// Test hooks for the error, preemption and retry paths: a worker that panics in its first
/// round, a worker that yields its CPU inside every round's span, a service's first wait
/// before it tries a failed cell again (30 s is long for a test). They act only in a build
/// with the `test-hooks` feature (what the tests build): a user's environment must never make
/// a worker panic, and the release binary neither reads the variables nor holds the panic.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Hooks {
    pub(crate) panic_worker: Option<usize>,
    pub(crate) yield_worker: Option<usize>,
    pub(crate) retry_first: Option<std::time::Duration>,
}

impl Hooks {
    /// `STREAM_TOP_PANIC_WORKER=N`, `STREAM_TOP_YIELD_WORKER=N` and
    /// `STREAM_TOP_RETRY_FIRST_MS=N`.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn from_env() -> Hooks {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let worker = |name: &str| number(name).and_then(|n| usize::try_from(n).ok());
        Hooks {
            panic_worker: worker("STREAM_TOP_PANIC_WORKER"),
            yield_worker: worker("STREAM_TOP_YIELD_WORKER"),
            retry_first: number("STREAM_TOP_RETRY_FIRST_MS").map(std::time::Duration::from_millis),
        }
    }

    /// Without the `test-hooks` feature: none, whatever the environment holds.
    #[cfg(not(feature = "test-hooks"))]
    pub(crate) fn from_env() -> Hooks {
        Hooks::default()
    }
}

// SAFETY: `job` is written only by the coordinator while every worker is parked or spinning on
// the generation, and read by workers only after they observe a new generation (Acquire), which
// the coordinator publishes with Release after writing it. Everything else is atomic or locked.
unsafe impl Sync for Shared {}
// SAFETY: as above; the raw pointers in Job point into arrays kept alive by the coordinator.
unsafe impl Send for Shared {}

fn noop_pass(_: *mut f64, _: *mut f64, _: *mut f64, _: usize, _: f64) {}

impl Job {
    /// A job on no arrays (Pin), or the pool's first.
    const NONE: Job = Job {
        kind: JobKind::Pin,
        a: std::ptr::null_mut(),
        b: std::ptr::null_mut(),
        c: std::ptr::null_mut(),
        parts: std::ptr::null(),
        passes: 0,
        function: noop_pass,
        scalar: 0.0,
        fence: false,
    };
}

impl Pass {
    /// For jobs that run no op (touch, reset, sum).
    pub const NONE: Pass = Pass {
        op: Op::Triad,
        function: noop_pass,
        fence: false,
    };
}

/// The pool: the coordinator's side.
pub struct Pool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    cpus: Vec<Option<usize>>,
    /// Worker 0's counters (the calling thread's).
    counters: ThreadCounters,
    /// How often workers beyond the coordinator were let go (`activate` with more than one):
    /// what tells a test that a wait kept them parked.
    wakes: AtomicUsize,
}

impl Pool {
    /// A pool of `workers` workers; worker i runs on `cpus[i]` when given. The calling thread is
    /// worker 0 and is pinned here too. With `counters`, each worker opens its own counters on
    /// its own thread (what the OS refuses stays uncounted: `None` in the round's counts).
    /// Untimed jobs end early once `stop` is set.
    pub fn new(cpus: Vec<Option<usize>>, counters: bool, stop: Arc<AtomicBool>) -> Result<Pool> {
        let workers = cpus.len().max(1);
        let shared = Arc::new(Shared {
            job: UnsafeCell::new(Job::NONE),
            generation: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            ready: AtomicUsize::new(0),
            crowded: AtomicBool::new(false),
            exit: AtomicBool::new(false),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            slots: (0..workers).map(|_| Slot::default()).collect(),
            panic_worker: AtomicUsize::new(usize::MAX),
            yield_worker: AtomicUsize::new(usize::MAX),
            stop,
        });
        if let Some(Some(cpu)) = cpus.first() {
            // A CPU that refuses the pin shows in the CPUs each round records.
            let _ = pin_current_thread(*cpu);
        }
        let own = open_counters(counters);
        let mut threads = Vec::new();
        for (index, cpu) in cpus.iter().enumerate().skip(1) {
            let shared = Arc::clone(&shared);
            let cpu = *cpu;
            let handle = std::thread::Builder::new()
                .name(format!("stream-top-w{index}"))
                .spawn(move || worker_main(&shared, index, cpu, counters))
                .map_err(|e| Error::machine(format!("cannot start worker thread {index}: {e}")))?;
            threads.push(handle);
        }
        Ok(Pool {
            shared,
            threads,
            cpus,
            counters: own,
            wakes: AtomicUsize::new(0),
        })
    }

    pub fn workers(&self) -> usize {
        self.cpus.len()
    }

    /// Whether `n` active workers are more than the CPUs they may run on: the distinct CPUs
    /// they are pinned to, or, for workers not pinned, the CPUs the process may use.
    fn crowded(&self, n: usize) -> bool {
        let pinned: Option<Vec<usize>> = self.cpus[..n.min(self.cpus.len())]
            .iter()
            .copied()
            .collect();
        let cpus = match pinned {
            Some(mut cpus) => {
                cpus.sort_unstable();
                cpus.dedup();
                cpus.len()
            }
            None => std::thread::available_parallelism().map_or(1, |p| p.get()),
        };
        n > cpus
    }

    /// Makes workers 0..n take part in jobs (the rest park) and waits until the active ones
    /// spin, so the next job starts them together.
    pub fn activate(&self, n: usize) {
        let n = n.min(self.workers());
        if n > 1 {
            self.wakes.fetch_add(1, Relaxed);
        }
        {
            let _g = self.shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.crowded.store(self.crowded(n), SeqCst);
            self.shared.active.store(n, SeqCst);
            self.shared.wake.notify_all();
        }
        while self.shared.ready.load(Acquire) != n.saturating_sub(1) && !self.failed() {
            std::thread::yield_now();
        }
    }

    /// Pins workers 0..cpus.len() to `cpus` where that differs from where they run (worker 0,
    /// the calling thread, too), for a working set with CPUs of its own (a matrix pair); every
    /// worker is parked after.
    pub(crate) fn repin(&mut self, cpus: &[Option<usize>]) -> Result<()> {
        let n = cpus.len().min(self.workers());
        if n == 0 || self.cpus[..n] == cpus[..n] {
            return Ok(());
        }
        for (slot, cpu) in self.shared.slots.iter().zip(&cpus[..n]) {
            slot.pin.store(cpu.map_or(-1, |c| c as i64), Relaxed);
        }
        self.activate(n);
        let r = self.start_job(n, Job::NONE, &mut |_| {});
        self.park_all();
        r?;
        self.cpus[..n].copy_from_slice(&cpus[..n]);
        Ok(())
    }

    /// Moves the pages of each of the first `n` partitions of `memory` to `nodes[i]` (where
    /// given), each worker its own partition's, in parallel (`activate(n)` came first).
    pub fn place(
        &mut self,
        n: usize,
        memory: &PartitionedArrays,
        nodes: &[Option<usize>],
    ) -> Result<()> {
        for (i, slot) in self.shared.slots.iter().enumerate().take(n) {
            let node = nodes.get(i).copied().flatten();
            slot.node.store(node.map_or(-1, |n| n as i64), Relaxed);
        }
        self.run(n, JobKind::Place, memory, 0, Pass::NONE, |_| {})
    }

    /// Parks every worker but the coordinator.
    pub fn park_all(&self) {
        self.activate(0);
    }

    /// Workers beyond the coordinator now spinning for jobs: 0 when all are parked (blocked
    /// on the condition variable, using no CPU).
    #[cfg(test)]
    pub(crate) fn spinning(&self) -> usize {
        self.shared.ready.load(SeqCst)
    }

    /// How many times workers beyond the coordinator were let go so far.
    #[cfg(test)]
    pub(crate) fn wakes(&self) -> usize {
        self.wakes.load(Relaxed)
    }

    pub fn failed(&self) -> bool {
        self.shared.failed.load(Acquire)
    }

    /// The message of a worker that panicked.
    pub fn failure(&self) -> Option<String> {
        self.shared
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Test hook: worker `index` panics in its next round.
    pub(crate) fn inject_panic(&self, index: usize) {
        self.shared.panic_worker.store(index, SeqCst);
    }

    /// Test hook: worker `index` yields its CPU inside the span of each round.
    pub(crate) fn inject_yield(&self, index: usize) {
        self.shared.yield_worker.store(index, SeqCst);
    }

    /// Runs one job on the `n` active workers (the caller is worker 0, and `activate(n)` came
    /// first) over the first `n` parts of `memory`, and waits for all of them.
    pub fn run(
        &mut self,
        n: usize,
        kind: JobKind,
        memory: &PartitionedArrays,
        passes: u32,
        pass: Pass,
        mut progress: impl FnMut(u64),
    ) -> Result<()> {
        let active = self.shared.active.load(SeqCst);
        if n == 0 || n != active || n > memory.layout.parts.len() {
            return Err(Error::engine(format!(
                "a job for {n} workers with {active} active and {} parts",
                memory.layout.parts.len()
            )));
        }
        let arrays = &memory.arrays;
        let job = Job {
            kind,
            a: arrays.a.as_ptr(),
            b: arrays.b.as_ptr(),
            c: arrays.c.as_ptr(),
            parts: memory.layout.parts.as_ptr(),
            passes,
            function: pass.function,
            scalar: pass.op.scalar(),
            fence: pass.fence,
        };
        self.start_job(n, job, &mut progress)
    }

    /// Runs `job` on the `n` active workers and waits for all of them (the end barrier).
    fn start_job(&mut self, n: usize, job: Job, progress: &mut dyn FnMut(u64)) -> Result<()> {
        // SAFETY: every worker is parked or spinning on the generation (the last job's end
        // barrier has passed), so nobody reads the job while it is written.
        unsafe { *self.shared.job.get() = job };
        self.shared.done.store(0, SeqCst);
        self.shared.generation.fetch_add(1, Release);
        // The coordinator's own share, as worker 0.
        let mut own_progress = |touched: u64| {
            let others: u64 = self.shared.slots[1..n]
                .iter()
                .map(|s| s.touched.load(Relaxed))
                .sum();
            progress(touched + others);
        };
        let counters = &self.counters;
        // SAFETY: a job on arrays comes from `run`, which checked that partition 0 lies inside
        // them and overlaps no other (PartitionedArrays); a Pin job touches none. This job holds
        // the pool exclusively until the end barrier below.
        let r = catch_unwind(AssertUnwindSafe(|| unsafe {
            do_job(&self.shared, 0, &job, &mut own_progress, counters)
        }));
        if let Err(p) = r {
            record_failure(&self.shared, 0, p);
        }
        // The end barrier. A worker that panicked counts itself done too: no hang.
        let crowded = self.shared.crowded.load(Relaxed);
        while self.shared.done.load(Acquire) != n - 1 {
            spin(crowded);
        }
        if self.failed() {
            return Err(Error::engine(
                self.failure().unwrap_or_else(|| "a worker failed".into()),
            ));
        }
        Ok(())
    }

    /// The stamps of workers 0..n for the last round of `op` over `memory`.
    pub fn timings(
        &self,
        n: usize,
        memory: &PartitionedArrays,
        passes: u32,
        op: Op,
    ) -> Vec<ThreadTiming> {
        let parts = &memory.layout.parts;
        (0..n)
            .map(|i| {
                let s = &self.shared.slots[i];
                ThreadTiming {
                    start_ns: s.start_ns.load(Acquire),
                    end_ns: s.end_ns.load(Acquire),
                    cpu_start: s.cpu_start.load(Acquire),
                    cpu_end: s.cpu_end.load(Acquire),
                    bytes: parts[i].len() as u64 * op.bytes_per_element() * passes as u64,
                    counters: Counts::from_words(s.counts.each_ref().map(|w| w.load(Acquire))),
                }
            })
            .collect()
    }

    /// Σ of the partitions' sums of `a` from the last SumA job.
    pub fn sum(&self, n: usize) -> f64 {
        self.shared.slots[..n]
            .iter()
            .map(|s| f64::from_bits(s.sum_bits.load(Acquire)))
            .sum()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        {
            let _g = self.shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.exit.store(true, SeqCst);
            self.shared.wake.notify_all();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn record_failure(shared: &Shared, index: usize, p: Box<dyn std::any::Any + Send>) {
    let msg = panic_message(p.as_ref());
    let mut f = shared.failure.lock().unwrap_or_else(|e| e.into_inner());
    if f.is_none() {
        *f = Some(format!("worker {index} panicked: {msg}"));
    }
    shared.failed.store(true, Release);
}

/// The calling thread's counters when asked for (the reasons for what is missing are the
/// session's to report: it opened the same set first).
fn open_counters(on: bool) -> ThreadCounters {
    if on {
        ThreadCounters::open(Host::default()).0
    } else {
        ThreadCounters::none()
    }
}

fn worker_main(shared: &Shared, index: usize, cpu: Option<usize>, counters: bool) {
    if let Some(cpu) = cpu {
        let _ = pin_current_thread(cpu);
    }
    // Opened after pinning, on this thread: they count this worker only.
    let counters = open_counters(counters);
    loop {
        // Parked until this worker is part of the configuration.
        {
            let mut g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            while index >= shared.active.load(SeqCst) && !shared.exit.load(SeqCst) {
                g = shared.wake.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        }
        if shared.exit.load(SeqCst) {
            return;
        }
        // Active: spin on the generation, run each job, until deactivated.
        let mut seen = shared.generation.load(Acquire);
        shared.ready.fetch_add(1, SeqCst);
        loop {
            let g = shared.generation.load(Acquire);
            if g != seen {
                seen = g;
                // SAFETY: the new generation was published after the job was written.
                let job = unsafe { *shared.job.get() };
                // SAFETY: this worker is active, so for a job on arrays `Pool::run` checked that
                // its part exists, lies inside the arrays and overlaps no other, and the arrays
                // outlive the job; a Pin job touches no arrays.
                let r = catch_unwind(AssertUnwindSafe(|| unsafe {
                    do_job(shared, index, &job, &mut |_| {}, &counters)
                }));
                if let Err(p) = r {
                    record_failure(shared, index, p);
                }
                shared.done.fetch_add(1, Release);
                continue;
            }
            if index >= shared.active.load(Relaxed) || shared.exit.load(Relaxed) {
                shared.ready.fetch_sub(1, SeqCst);
                break;
            }
            spin(shared.crowded.load(Relaxed));
        }
    }
}

/// One turn of a spin wait: a pause, or, when the workers are more than their CPUs, the CPU
/// given up to one that has work.
fn spin(crowded: bool) {
    if crowded {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

/// One worker's share of a job.
///
/// # Safety
/// `index` is below the job's worker count, and, unless the job is a Pin (which reads no
/// part), the job's arrays are valid for `parts[index]`, which no other worker touches during
/// the job.
unsafe fn do_job(
    shared: &Shared,
    index: usize,
    job: &Job,
    progress: &mut dyn FnMut(u64),
    counters: &ThreadCounters,
) {
    let slot = &shared.slots[index];
    if job.kind == JobKind::Pin {
        if let Ok(cpu) = usize::try_from(slot.pin.load(Relaxed)) {
            // A CPU that refuses the pin shows in the CPUs each round records.
            let _ = pin_current_thread(cpu);
        }
        return;
    }
    // SAFETY: parts has an entry for every active worker and index is one of them.
    let part = unsafe { (*job.parts.add(index)).clone() };
    // SAFETY: (and for the pointer arithmetic below) the caller guarantees the arrays cover `part`.
    let (a, b, c) = unsafe {
        (
            job.a.add(part.start),
            job.b.add(part.start),
            job.c.add(part.start),
        )
    };
    let n = part.len();
    match job.kind {
        JobKind::Round => {
            #[cfg(feature = "test-hooks")]
            if shared.panic_worker.load(Relaxed) == index {
                shared.panic_worker.store(usize::MAX, Relaxed);
                panic!("injected for testing (STREAM_TOP_PANIC_WORKER)");
            }
            let (function, s) = (job.function, job.scalar);
            // Counters are read outside the timed span, never inside it.
            // The test hook is read before the span: inside it is only a local's branch.
            let yield_in_span =
                cfg!(feature = "test-hooks") && shared.yield_worker.load(Relaxed) == index;
            let before = counters.read();
            let cpu_start = cpu_stamp();
            let start = now_ns();
            for _ in 0..job.passes {
                // SAFETY: a, b, c valid for n elements and disjoint (three mappings).
                unsafe { function(a, b, c, n, s) };
            }
            if yield_in_span {
                // The test hook's preemption: a system call in the span, never in production.
                std::thread::yield_now();
            }
            if job.fence {
                store_fence();
            }
            let end = now_ns();
            let cpu_end = cpu_stamp();
            let after = counters.read();
            let counts = counters.delta(&before, &after).to_words();
            for (w, v) in slot.counts.iter().zip(counts) {
                w.store(v, Release);
            }
            slot.start_ns.store(start, Release);
            slot.end_ns.store(end, Release);
            slot.cpu_start.store(cpu_start, Release);
            slot.cpu_end.store(cpu_end, Release);
        }
        JobKind::Touch => {
            slot.touched.store(0, Relaxed);
            for chunk in chunks(n, &shared.stop) {
                for k in chunk.clone() {
                    let global = part.start + k;
                    // SAFETY: k < n.
                    unsafe {
                        *b.add(k) = b_value(global);
                        *c.add(k) = c_value(global);
                        *a.add(k) = A_RESET;
                    }
                }
                slot.touched.store(chunk.end as u64, Relaxed);
                progress(chunk.end as u64);
            }
        }
        JobKind::ResetA => {
            // SAFETY: a valid for n elements.
            let a = unsafe { std::slice::from_raw_parts_mut(a, n) };
            for chunk in chunks(n, &shared.stop) {
                a[chunk].fill(A_RESET);
            }
        }
        JobKind::ResetAB => {
            // SAFETY: a and b valid for n elements, disjoint (two mappings).
            let (a, b) = unsafe {
                (
                    std::slice::from_raw_parts_mut(a, n),
                    std::slice::from_raw_parts_mut(b, n),
                )
            };
            for chunk in chunks(n, &shared.stop) {
                a[chunk.clone()].fill(A_RESET);
                for k in chunk {
                    b[k] = b_value(part.start + k);
                }
            }
        }
        JobKind::Place => {
            if let Ok(node) = usize::try_from(slot.node.load(Relaxed)) {
                for base in [job.a, job.b, job.c] {
                    move_part(base as usize, &part, node, &shared.stop);
                }
            }
        }
        JobKind::Pin => {}
        JobKind::SumA => {
            // SAFETY: a valid for n elements.
            let a = unsafe { std::slice::from_raw_parts(a, n) };
            let mut s = 0.0;
            for chunk in chunks(n, &shared.stop) {
                s += a[chunk].iter().sum::<f64>();
            }
            slot.sum_bits.store(s.to_bits(), Release);
        }
    }
}

/// `0..n` in chunks of `CHUNK`, ending early once `stop` is set.
fn chunks(n: usize, stop: &AtomicBool) -> impl Iterator<Item = Range<usize>> + '_ {
    (0..n)
        .step_by(CHUNK)
        .take_while(|_| !stop.load(Relaxed))
        .map(move |i| i..(i + CHUNK).min(n))
}

/// The CPU for a round's stamp: -1 where it cannot be read.
fn cpu_stamp() -> i32 {
    current_cpu().map_or(-1, |c| c as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(len: usize, parts: Vec<Range<usize>>) -> Layout {
        Layout { len, parts }
    }

    #[test]
    fn arrays_and_a_partition_are_checked_once_when_put_together() {
        let arrays = || Arrays::map(1000, false).unwrap();
        assert!(PartitionedArrays::new(arrays(), layout(1000, vec![0..500, 500..1000])).is_ok());
        let bad = [
            layout(1001, vec![0..500, 500..1001]),
            layout(1000, vec![0..600, 500..1000]),
            layout(1000, vec![0..500, 500..1200]),
        ];
        for l in bad {
            let e = PartitionedArrays::new(arrays(), l).err().expect("refused");
            assert!(matches!(e, Error::Engine(_)), "{e}");
        }
    }

    #[test]
    fn a_job_needs_exactly_its_workers_active() {
        let memory = PartitionedArrays::new(
            Arrays::map(64, false).unwrap(),
            layout(64, vec![0..32, 32..64]),
        )
        .unwrap();
        let mut pool = Pool::new(vec![None, None], true, Arc::default()).unwrap();
        pool.activate(1);
        assert!(
            pool.run(2, JobKind::ResetA, &memory, 0, Pass::NONE, |_| {})
                .is_err()
        );
        pool.activate(2);
        pool.run(2, JobKind::Touch, &memory, 0, Pass::NONE, |_| {})
            .unwrap();
        pool.run(2, JobKind::SumA, &memory, 0, Pass::NONE, |_| {})
            .unwrap();
        assert_eq!(pool.sum(2), -64.0);
        pool.park_all();
    }

    #[test]
    fn more_workers_than_cpus_finish_their_jobs() {
        // Not pinned: crowded past the CPUs the process may use, and the spins yield.
        let n = 4 * std::thread::available_parallelism().map_or(1, |p| p.get());
        let len = 16 * n;
        let parts = (0..n).map(|i| i * 16..(i + 1) * 16).collect();
        let memory =
            PartitionedArrays::new(Arrays::map(len, false).unwrap(), layout(len, parts)).unwrap();
        let mut pool = Pool::new(vec![None; n], false, Arc::default()).unwrap();
        assert!(pool.crowded(n) && !pool.crowded(1));
        pool.activate(n);
        pool.run(n, JobKind::Touch, &memory, 0, Pass::NONE, |_| {})
            .unwrap();
        pool.run(n, JobKind::SumA, &memory, 0, Pass::NONE, |_| {})
            .unwrap();
        assert_eq!(pool.sum(n), -(len as f64));
        pool.park_all();
    }

    #[test]
    fn workers_are_pinned_again_and_move_their_pages_to_a_node() {
        let Some(cpu) = crate::platform::allowed_cpus().and_then(|c| c.first().copied()) else {
            return;
        };
        let memory = PartitionedArrays::new(
            Arrays::map(4096, false).unwrap(),
            layout(4096, vec![0..2048, 2048..4096]),
        )
        .unwrap();
        let mut pool = Pool::new(vec![None, None], false, Arc::default()).unwrap();
        pool.repin(&[Some(cpu), Some(cpu)]).unwrap();
        pool.activate(2);
        pool.run(2, JobKind::Touch, &memory, 0, Pass::NONE, |_| {})
            .unwrap();
        pool.place(2, &memory, &[Some(0), Some(0)]).unwrap();
        pool.run(2, JobKind::Round, &memory, 1, Pass::NONE, |_| {})
            .unwrap();
        for t in pool.timings(2, &memory, 1, Op::Triad) {
            assert_eq!((t.cpu_start, t.cpu_end), (cpu as i32, cpu as i32));
        }
        pool.park_all();
        let placed = super::super::placement::sample_placement(
            memory.arrays(),
            &memory.layout().parts,
            |_| Some(0),
        );
        if let super::super::events::Placement::Sampled(p) = placed {
            assert!(p.sampled > 0);
            assert_eq!(p.on_meant, p.meant, "{p:?}");
        }
    }
}
