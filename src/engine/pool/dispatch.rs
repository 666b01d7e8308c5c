//! The coordinator's side of a job: handing it to the active workers, doing worker 0's share,
//! waiting at the end barrier, and reading back what the workers stored (the round's stamps,
//! the sum of a).

use super::super::events::ThreadTiming;
use super::super::kernel::Op;
use super::job::{Job, JobKind, Pass};
use super::worker::{do_job, record_failure, spin};
use super::{PartitionedArrays, Pool};
use crate::base::error::{Error, Result};
use crate::machine::counters::Counts;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering::*;

impl Pool {
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
        if n == 0 || n != active || n > memory.layout().parts.len() {
            return Err(Error::engine(format!(
                "a job for {n} workers with {active} active and {} parts",
                memory.layout().parts.len()
            )));
        }
        let arrays = memory.arrays();
        let job = Job {
            kind,
            a: arrays.a.as_ptr(),
            b: arrays.b.as_ptr(),
            c: arrays.c.as_ptr(),
            parts: memory.layout().parts.as_ptr(),
            passes,
            function: pass.function,
            scalar: pass.op.scalar(),
            fence: pass.fence,
        };
        self.start_job(n, job, &mut progress)
    }

    /// Runs `job` on the `n` active workers and waits for all of them (the end barrier).
    pub(super) fn start_job(
        &mut self,
        n: usize,
        job: Job,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
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
        let parts = &memory.layout().parts;
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

#[cfg(test)]
mod tests {
    use super::super::super::buffers::Arrays;
    use super::super::super::plan::Layout;
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_job_needs_exactly_its_workers_active() {
        let memory = PartitionedArrays::new(
            Arrays::map(64, false).unwrap(),
            Layout {
                len: 64,
                parts: vec![0..32, 32..64],
            },
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
}
