//! A worker thread's side of the protocol: parked until it is part of the configuration,
//! then spinning on the generation and doing its share of each job; the share itself (the
//! timed round, the first touch, the resets, the sum, the page moves) is the coordinator's
//! too, as worker 0.

use super::super::buffers::{A_RESET, b_value, c_value};
use super::super::kernel::store_fence;
use super::super::placement::move_part;
use super::job::{Job, JobKind};
use super::shared::Shared;
use crate::base::error::panic_message;
use crate::machine::counters::{Host, ThreadCounters};
use crate::platform::{current_cpu, now_ns, pin_current_thread};
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering::*};

/// Elements an untimed job (touch, reset, sum) handles between looks at the stop flag, and
/// first-touched between progress updates: 8 MiB of each array.
const CHUNK: usize = 1 << 20;

pub(super) fn record_failure(shared: &Shared, index: usize, p: Box<dyn std::any::Any + Send>) {
    let msg = panic_message(p.as_ref());
    let mut f = shared.failure.lock().unwrap_or_else(|e| e.into_inner());
    if f.is_none() {
        *f = Some(format!("worker {index} panicked: {msg}"));
    }
    shared.failed.store(true, Release);
}

/// The calling thread's counters when asked for (the reasons for what is missing are the
/// session's to report: it opened the same set first).
pub(super) fn open_counters(on: bool) -> ThreadCounters {
    if on {
        ThreadCounters::open(Host::default()).0
    } else {
        ThreadCounters::none()
    }
}

pub(super) fn worker_main(shared: &Shared, index: usize, cpu: Option<usize>, counters: bool) {
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
pub(super) fn spin(crowded: bool) {
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
pub(super) unsafe fn do_job(
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
