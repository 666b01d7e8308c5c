//! The state the coordinator and the workers share: the job and its generation, the counts
//! of workers active, ready and done, the parking lock, and each worker's slot of results.
//! Apart from the pool itself because the workers see only this, never the `Pool`.

use super::job::Job;
use crate::machine::counters::COUNT_WORDS;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex};

/// A worker's results for the last job, on its own cache lines.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Slot {
    pub(super) start_ns: AtomicU64,
    pub(super) end_ns: AtomicU64,
    pub(super) cpu_start: AtomicI32,
    pub(super) cpu_end: AtomicI32,
    /// f64 bits of the partition's sum of a.
    pub(super) sum_bits: AtomicU64,
    /// Elements first-touched so far.
    pub(super) touched: AtomicU64,
    /// The round's counts (`Counts::to_words`), read just outside the timed span.
    pub(super) counts: [AtomicU64; COUNT_WORDS],
    /// For a Place job: the node to move the partition's pages to (-1: none).
    pub(super) node: AtomicI64,
    /// For a Pin job: the CPU to pin the worker to (-1: leave it).
    pub(super) pin: AtomicI64,
}

pub(super) struct Shared {
    pub(super) job: UnsafeCell<Job>,
    pub(super) generation: AtomicU64,
    pub(super) done: AtomicUsize,
    /// Workers with index < active take part in jobs; the others park.
    pub(super) active: AtomicUsize,
    /// Active workers spinning on the generation, ready for the next job.
    pub(super) ready: AtomicUsize,
    /// More active workers than CPUs for them: spins yield the CPU.
    pub(super) crowded: AtomicBool,
    pub(super) exit: AtomicBool,
    /// Set when a worker panicked; its message.
    pub(super) failure: Mutex<Option<String>>,
    pub(super) failed: AtomicBool,
    pub(super) lock: Mutex<()>,
    pub(super) wake: Condvar,
    pub(super) slots: Box<[Slot]>,
    /// Test hook: the worker with this index panics in its next round (usize::MAX: never).
    pub(super) panic_worker: AtomicUsize,
    /// Test hook: the worker with this index yields its CPU inside every round's span
    /// (usize::MAX: never), so that a competitor on that CPU certainly runs in it.
    pub(super) yield_worker: AtomicUsize,
    /// Set by the engine's owner to stop: untimed jobs end at their next chunk.
    pub(super) stop: Arc<AtomicBool>,
}

// SAFETY: `job` is written only by the coordinator while every worker is parked or spinning on
// the generation, and read by workers only after they observe a new generation (Acquire), which
// the coordinator publishes with Release after writing it. Everything else is atomic or locked.
unsafe impl Sync for Shared {}
// SAFETY: as above; the raw pointers in Job point into arrays kept alive by the coordinator.
unsafe impl Send for Shared {}
