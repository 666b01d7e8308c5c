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
//!
//! The pool's pieces: this file holds the pool's life (start, activate, park, pin again,
//! stop); `job` what a job is; `shared` the state the coordinator and the workers share;
//! `dispatch` how the coordinator runs a job and reads back its results; `worker` what each
//! worker thread does; `arrays` the checked pairing of arrays and partition the jobs run on;
//! `hooks` the test hooks. The shared state and what a job is stand apart so that the
//! workers need nothing of this file: the pool's files import one another without a circle.

mod arrays;
mod dispatch;
mod hooks;
mod job;
mod shared;
mod worker;

pub use arrays::PartitionedArrays;
pub(crate) use hooks::Hooks;
pub use job::{JobKind, Pass};

use crate::base::error::{Error, Result};
use crate::machine::counters::ThreadCounters;
use crate::platform::pin_current_thread;
use job::Job;
use shared::{Shared, Slot};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use worker::{open_counters, worker_main};

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

#[cfg(test)]
mod tests {
    use super::super::buffers::Arrays;
    use super::super::kernel::Op;
    use super::super::plan::Layout;
    use super::*;

    #[test]
    fn more_workers_than_cpus_finish_their_jobs() {
        // Not pinned: crowded past the CPUs the process may use, and the spins yield.
        let n = 4 * std::thread::available_parallelism().map_or(1, |p| p.get());
        let len = 16 * n;
        let parts = (0..n).map(|i| i * 16..(i + 1) * 16).collect();
        let memory =
            PartitionedArrays::new(Arrays::map(len, false).unwrap(), Layout { len, parts })
                .unwrap();
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
            Layout {
                len: 4096,
                parts: vec![0..2048, 2048..4096],
            },
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
