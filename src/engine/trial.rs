//! A working set's trial: every candidate loop and page layout timed in short interleaved
//! rounds, at one thread and at the grid's largest thread count, on arrays of its own, before
//! the set's first round. No trial round is sent or counted; the cell's own arrays, calibration
//! and warm-up come after, as without a trial. The verdict is `choice::decide`'s.

use super::buffers::Arrays;
use super::choice::{MIN_MARGIN, MIN_PAIRS, candidates, decide, round_order};
use super::events::{By, Choice, Pick, RoundRecord, TrialProgress, TrialSummary};
use super::kernel::{Op, Stores};
use super::plan::{CellId, Layout, Plan, WorkingSet};
use super::pool::{JobKind, PartitionedArrays, Pass, Pool};
use super::room::{Headroom, touch_in_steps};
use super::trial_progress::Reporter;
use crate::base::error::Result;
use crate::platform;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Timed rounds per candidate and thread count: enough for a median and its scatter.
const REPS: usize = 7;
/// The timed rounds of a trial stop after this long (shared among its thread counts) once each
/// candidate has `MIN_PAIRS`: on a quiet machine all `REPS` take a third of it; on a busy one,
/// where rounds of two threads wait for a descheduled one, the fewer, noisier rounds widen the
/// margin instead.
const BUDGET: Duration = Duration::from_millis(400);
/// And after this long (shared likewise) whatever they have, so the first figure comes within
/// about a second even on a machine too busy for `MIN_PAIRS` repetitions: with fewer the
/// default stays (`decide`).
const LIMIT: Duration = Duration::from_millis(1000);
/// A trial round of a set in cache lasts about this long, ns. Each is preceded by an untimed
/// half-length round of the same loop, so a loop is timed at the clock it runs at (AVX-512
/// licences change the clock within a fraction of a millisecond).
const ROUND_NS: f64 = 1.0e6;
/// Before its first timed round a trial runs the default candidate for at least this long, so a
/// core that was idle has reached its clock (the first few rounds of a cold start run at half
/// speed on the development machine).
const WARMUP: Duration = Duration::from_millis(50);
/// At most this many rounds to find the passes per trial round.
const CALIBRATION_ROUNDS: u32 = 8;
/// A partition longer than this (elements of each array, 16 MiB) is timed one window of it per
/// round, the windows taken in turn so that each round streams from memory. A window's round is
/// one pass and has no settling round before it: that would leave the window in the cache.
const WINDOW_ELEMS: usize = (16 << 20) / 8;

/// Settles working set `set_index` for `op` and the plan's grid, whose largest thread count the
/// pool has workers for: by trial when there is more than one candidate. `memory`
/// says whether arrays of that many bytes may be mapped now (both layouts' or only one), and
/// checks their first touch step by step against the cgroup's memory limit;
/// `stopping` whether the engine was asked to stop (the trial then ends at once, with the
/// default, which nothing will run). `progress` hears how far along it is, between its steps.
///
/// With the choice come the trial's arrays of the layout kept, first touched by the widest
/// cell's threads and partitioned as it has them, when a trial ran to its end: the set's cells
/// run on them, so a visit maps its arrays once.
pub(super) fn choose(
    pool: &mut Pool,
    plan: &Plan,
    (op, set_index): (Op, usize),
    set: &WorkingSet,
    memory: Headroom<'_>,
    stopping: impl Fn() -> bool,
    progress: impl FnMut(TrialProgress),
) -> Result<(Choice, Option<PartitionedArrays>)> {
    let start = Instant::now();
    let max_threads = plan.grid.max_threads();
    let (mut picks, kernel_by, mut layout_by) = candidates(
        op,
        plan.kernel,
        plan.loops,
        plan.huge_pages,
        set.residence(),
        platform::HUGE_PAGES_NOTE.is_none(),
    );
    let wide = set.layout(max_threads);
    let bytes = 3 * wide.len as u64 * 8;
    let mut layouts: Vec<bool> = Vec::new();
    for p in &picks {
        if !layouts.contains(&p.huge_pages) {
            layouts.push(p.huge_pages);
        }
    }
    if layouts.len() > 1 && !memory.fits(bytes * layouts.len() as u64) {
        // No room for a second copy: the default layout, as the rule for memory has it.
        layouts.truncate(1);
        picks.retain(|p| p.huge_pages == layouts[0]);
        layout_by = By::Rule;
    }
    let settled = |kept: Pick| Choice {
        op,
        set: set_index,
        kept,
        kernel_by,
        layout_by,
        runner_up: None,
        trial: None,
    };
    if picks.len() == 1 {
        return Ok((settled(picks[0]), None));
    }

    // No room for the trial's arrays (`ulimit -v`, a memory limit, a cgroup's room taken while
    // they are touched): the default loop and layout, by rule. The cell's own arrays may still
    // fit, or fail and say so.
    let by_rule = || {
        let rule = |by: By| if by == By::Trial { By::Rule } else { by };
        Choice {
            kernel_by: rule(kernel_by),
            layout_by: rule(layout_by),
            ..settled(picks[0])
        }
    };
    // Arrays as the widest cell has them, one copy per layout, first touched by its threads.
    let mut memories = Vec::with_capacity(layouts.len());
    for &huge in &layouts {
        match Arrays::map(wide.len, huge) {
            Ok(arrays) => memories.push(PartitionedArrays::new(arrays, wide.clone())?),
            Err(_) => return Ok((by_rule(), None)),
        }
    }
    let n = layouts.len() as u64;
    let mut report = Reporter::new(
        progress,
        set_index,
        picks.len(),
        max_threads,
        bytes * n,
        LIMIT + WARMUP,
    );
    pool.activate(max_threads);
    for m in &mut memories {
        let touch = |elems| report.touched(elems * 24);
        if touch_in_steps(pool, max_threads, m, memory.guard, &stopping, touch)?.is_some() {
            pool.park_all();
            return Ok((by_rule(), None));
        }
        report.copy_touched(bytes);
    }
    if stopping() {
        pool.park_all();
        return Ok((settled(picks[0]), None));
    }

    let fence = plan.kernel.stores == Stores::Nt;
    let mut threads = vec![1, max_threads];
    threads.dedup();
    let mut rates = Vec::with_capacity(threads.len());
    for &t in &threads {
        pool.activate(t);
        let layout = set.layout(t);
        let windowed = layout.parts.iter().any(|p| p.len() > WINDOW_ELEMS);
        memories = repartition(memories, &layout)?;
        let mut window = 0;
        // None once the engine is asked to stop: each round checks, so a stop waits for one
        // short round at most.
        let mut round = |pick: &Pick, passes: u32| -> Result<Option<RoundRecord>> {
            if stopping() {
                return Ok(None);
            }
            let i = layouts
                .iter()
                .position(|&h| h == pick.huge_pages)
                .unwrap_or(0);
            if windowed {
                window += 1;
                let w = Layout {
                    len: layout.len,
                    parts: windows(&layout.parts, window),
                };
                memories = repartition(std::mem::take(&mut memories), &w)?;
            }
            let pass = Pass {
                op,
                function: pick.variant.pass,
                fence,
            };
            let c = picks.iter().position(|p| p == pick).unwrap_or(0);
            report.round(t, c, *pick);
            pool.run(t, JobKind::Round, &memories[i], passes, pass, |_| {})?;
            let timings = pool.timings(t, &memories[i], passes, op);
            Ok(Some(RoundRecord::from_threads(
                CellId::of(op, set_index, t),
                true,
                passes,
                timings,
            )))
        };
        let stopped = |pool: &mut Pool| {
            pool.park_all();
            Ok((settled(picks[0]), None))
        };
        // Passes per round, from the default candidate (as the coordinator calibrates).
        let mut passes = 1u32;
        if !windowed {
            let mut best_per_pass = f64::INFINITY;
            for _ in 0..CALIBRATION_ROUNDS {
                let Some(r) = round(&picks[0], passes)? else {
                    return stopped(pool);
                };
                best_per_pass = best_per_pass.min(r.span_ns as f64 / passes as f64);
                let want = (ROUND_NS / best_per_pass)
                    .ceil()
                    .clamp(1.0, u32::MAX as f64) as u32;
                if want <= passes {
                    break;
                }
                passes = want.min(passes.saturating_mul(64));
            }
        }
        if t == threads[0] {
            let warm = Instant::now();
            while warm.elapsed() < WARMUP {
                if round(&picks[0], passes)?.is_none() {
                    return stopped(pool);
                }
            }
        }
        let budget = BUDGET / threads.len() as u32;
        let limit = LIMIT / threads.len() as u32;
        let timed = Instant::now();
        let mut per_rep = Vec::with_capacity(REPS);
        let more = |done: usize, took: Duration| {
            done < REPS && (done < MIN_PAIRS || took < budget) && (done == 0 || took < limit)
        };
        while more(per_rep.len(), timed.elapsed()) {
            let mut row = vec![f64::NAN; picks.len()];
            for c in round_order(picks.len(), per_rep.len()) {
                if !windowed && round(&picks[c], (passes / 2).max(1))?.is_none() {
                    return stopped(pool);
                }
                let Some(r) = round(&picks[c], passes)? else {
                    return stopped(pool);
                };
                row[c] = trial_rate(&r);
            }
            per_rep.push(row);
        }
        rates.push(per_rep);
    }
    pool.park_all();

    let d = decide(&rates, &vec![true; picks.len()], MIN_MARGIN);
    // The kept layout's copy goes on to the cells; any other is let go now.
    let kept = layouts
        .iter()
        .position(|&h| h == picks[d.kept].huge_pages)
        .unwrap_or(0);
    let arrays = memories.swap_remove(kept).repartition(wide)?;
    drop(memories);
    let choice = Choice {
        runner_up: d.runner_up.map(|(i, ratio)| (picks[i], ratio)),
        trial: Some(TrialSummary {
            threads,
            candidates: picks.len(),
            rounds: rates.iter().map(Vec::len).min().unwrap_or(0) as u32,
            took_ns: start.elapsed().as_nanos() as u64,
            margin: d.margin,
        }),
        ..settled(picks[d.kept])
    };
    Ok((choice, Some(arrays)))
}

/// A timed trial round's rate for the decision, or NaN (missing) when something outside the
/// workers held one back: on a busy machine such rounds measure the neighbours, not the loop,
/// and the periodic slices of a CPU hog can favour one place in the rotation over another. A
/// trial whose rounds are mostly held back has fewer than [`MIN_PAIRS`] pairs left, and the
/// default stays. Where switches are not counted (`--counters off`, macOS) only late rounds
/// are left out.
fn trial_rate(r: &RoundRecord) -> f64 {
    if r.held_back() { f64::NAN } else { r.gbs() }
}

/// Every copy of the arrays partitioned by `layout`.
fn repartition(
    memories: Vec<PartitionedArrays>,
    layout: &Layout,
) -> Result<Vec<PartitionedArrays>> {
    memories
        .into_iter()
        .map(|m| m.repartition(layout.clone()))
        .collect()
}

/// Window `k` (counting on, cyclically) of each part: `WINDOW_ELEMS` long, on a multiple of
/// it from the part's start (so 128-byte aligned); a part no longer than that is whole.
fn windows(parts: &[Range<usize>], k: usize) -> Vec<Range<usize>> {
    parts
        .iter()
        .map(|p| {
            let count = (p.len() / WINDOW_ELEMS).max(1);
            let start = p.start + (k % count) * WINDOW_ELEMS;
            start..(start + WINDOW_ELEMS).min(p.end)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::ThreadTiming;
    use crate::machine::counters::Counts;

    /// A 1 ms round of one thread per entry, each thread starting `start` µs in, with its
    /// switches and the time it ran, µs.
    fn round(threads: &[(u64, Option<u64>, Option<u64>)]) -> RoundRecord {
        let timings = threads
            .iter()
            .map(|&(start, switches, ran)| ThreadTiming {
                start_ns: start * 1000,
                end_ns: (start + 1000) * 1000,
                cpu_start: 0,
                cpu_end: 0,
                bytes: 24_000_000,
                counters: Counts {
                    switches,
                    task_clock_ns: ran.map(|r| r * 1000),
                    ..Counts::default()
                },
            })
            .collect();
        RoundRecord::from_threads(CellId::new(0, threads.len()), false, 1, timings)
    }

    #[test]
    fn a_round_held_back_by_a_neighbour_is_left_out_of_the_trial() {
        // Quiet: no switch, or one that cost 5 µs of 1 ms (under 1 %).
        assert_eq!(trial_rate(&round(&[(0, Some(0), Some(1000))])), 24.0);
        assert_eq!(trial_rate(&round(&[(0, Some(1), Some(995))])), 24.0);
        // Switched out for 300 µs: the neighbour's time, not the loop's.
        assert!(trial_rate(&round(&[(0, Some(0), Some(1000)), (0, Some(2), Some(700))])).is_nan());
        // A switch where the task clock is not counted.
        assert!(trial_rate(&round(&[(0, Some(1), None)])).is_nan());
        // Not counted at all (--counters off): only lateness can tell.
        assert_eq!(trial_rate(&round(&[(0, None, None)])), 24.0);
        // The second thread started 500 µs late: the span is 1.5 × its time.
        assert!(trial_rate(&round(&[(0, None, None), (500, None, None)])).is_nan());
    }

    #[test]
    fn windows_cycle_inside_each_part_and_stay_aligned() {
        let w = WINDOW_ELEMS;
        let parts = vec![0..3 * w + 16, 3 * w + 16..3 * w + 16 + 100, 10 * w..12 * w];
        for k in 0..7 {
            let ws = windows(&parts, k);
            for (p, x) in parts.iter().zip(&ws) {
                assert!(x.start >= p.start && x.end <= p.end, "{x:?} in {p:?}");
                assert_eq!((x.start - p.start) % 16, 0);
            }
            assert_eq!(ws[0], (k % 3) * w..(k % 3 + 1) * w);
            assert_eq!(ws[1], parts[1], "a short part is whole");
            assert_eq!(ws[2].len(), w);
        }
        assert_ne!(windows(&parts, 1)[0], windows(&parts, 2)[0]);
    }
}
