//! A working set's trial: every candidate loop and page layout timed in short interleaved
//! rounds, at one thread and at the grid's largest thread count, on arrays of its own, before
//! the set's first round. The loops of one page layout are interleaved round by round on one
//! copy of the arrays; the layouts take turns, one copy mapped at a time (a visit's peak
//! resident memory is one set of arrays). No trial round is sent or counted; the cell's
//! calibration and warm-up come after, as without a trial. The verdict is `choice::decide`'s.

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

/// Settles working set `set_index` for `op` and the plan's grid, whose largest thread count
/// the pool has workers for: by trial when there is more than one candidate. `memory`
/// says whether one copy of the arrays may be mapped now (else only the default layout is
/// tried), and checks their first touch step by step against the cgroup's memory limit;
/// `stopping` whether the engine was asked to stop (the trial then ends at once, with the
/// default, which nothing will run). `progress` hears how far along it is, between its steps.
///
/// With the choice come the trial's arrays of the layout kept, first touched by the widest
/// cell's threads and partitioned as it has them, when a trial ran to its end and its last
/// layout (the default's) won: the set's cells run on them, so a visit maps its arrays once.
/// When another layout won, the held copy is let go and the first cell maps the winner's.
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
    let layouts = layouts_to_try(&mut picks, &mut layout_by, memory.fits(bytes));
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
    let mut threads = vec![1, max_threads];
    threads.dedup();
    let mut ctx = Ctx {
        pool,
        report: Reporter::new(
            progress,
            set_index,
            picks.len(),
            max_threads,
            bytes * layouts.len() as u64,
            LIMIT + WARMUP,
        ),
        rates: vec![Vec::new(); threads.len()],
        fewest: REPS,
        ended: None,
    };
    let timing = Timing {
        plan,
        op,
        set_index,
        set,
        picks: &picks,
        threads: &threads,
        layouts: layouts.len(),
        stopping: &stopping,
    };
    // Arrays as the widest cell has them, first touched by its threads; the default layout's
    // last, so the copy held at the end is the one the cells keep unless another layout won.
    let order: Vec<bool> = layouts.iter().rev().copied().collect();
    let held = one_at_a_time(
        &mut ctx,
        &order,
        |ctx, huge| {
            let copy = touched_copy(ctx, (&wide, max_threads), huge, &memory, &stopping);
            if matches!(copy, Ok(None)) {
                ctx.ended = Some(by_rule());
            }
            copy
        },
        |ctx, huge, copy| timing.layout(ctx, huge, copy),
    )?;
    ctx.pool.park_all();
    let Some((held_huge, held)) = held else {
        return Ok((ctx.ended.unwrap_or_else(|| settled(picks[0])), None));
    };

    let rates = ctx.rates;
    let d = decide(&rates, &vec![true; picks.len()], MIN_MARGIN);
    // The held copy goes on to the cells when its layout won; otherwise it is let go here and
    // the first cell maps the winner's (the only case a layout is mapped twice).
    let arrays = if picks[d.kept].huge_pages == held_huge {
        Some(held.repartition(wide)?)
    } else {
        None
    };
    let choice = Choice {
        runner_up: d.runner_up.map(|(i, ratio)| (picks[i], ratio)),
        trial: Some(TrialSummary {
            threads,
            candidates: picks.len(),
            rounds: ctx.fewest as u32,
            took_ns: start.elapsed().as_nanos() as u64,
            margin: d.margin,
        }),
        ..settled(picks[d.kept])
    };
    Ok((choice, arrays))
}

/// The layouts the picks ask for, each once, in the picks' order; only the first (the default)
/// when the arrays do not fit twice (`fits` false), with the picks of the others dropped and
/// the layout then chosen by rule.
fn layouts_to_try(picks: &mut Vec<Pick>, layout_by: &mut By, fits: bool) -> Vec<bool> {
    let mut layouts: Vec<bool> = Vec::new();
    for p in picks.iter() {
        if !layouts.contains(&p.huge_pages) {
            layouts.push(p.huge_pages);
        }
    }
    if layouts.len() > 1 && !fits {
        // No room for the arrays: the default layout, as the rule for memory has it.
        layouts.truncate(1);
        picks.retain(|p| p.huge_pages == layouts[0]);
        *layout_by = By::Rule;
    }
    layouts
}

/// Maps the trial's arrays in the `wide` layout of `threads` threads, with huge pages or
/// without, and first-touches them by those threads; None when there is no room for them
/// (the map fails or the cgroup's room runs out while they are touched).
fn touched_copy<F: FnMut(TrialProgress)>(
    ctx: &mut Ctx<'_, F>,
    (wide, threads): (&Layout, usize),
    huge: bool,
    memory: &Headroom<'_>,
    stopping: &impl Fn() -> bool,
) -> Result<Option<PartitionedArrays>> {
    let Ok(arrays) = Arrays::map(wide.len, huge) else {
        return Ok(None);
    };
    let mut copy = PartitionedArrays::new(arrays, wide.clone())?;
    ctx.pool.activate(threads);
    let report = &mut ctx.report;
    let touch = |elems| report.touched(elems * 24);
    if touch_in_steps(ctx.pool, threads, &mut copy, memory.guard, stopping, touch)?.is_some() {
        return Ok(None);
    }
    ctx.report.copy_touched(3 * wide.len as u64 * 8);
    Ok(Some(copy))
}

/// What the layouts' turns share: the pool, the progress, the rates so far
/// (`rates[t][rep][candidate]`, NaN where a candidate has none), the fewest repetitions any
/// layout and thread count got, and the choice when the trial ended early.
struct Ctx<'p, F: FnMut(TrialProgress)> {
    pool: &'p mut Pool,
    report: Reporter<F>,
    rates: Vec<Vec<Vec<f64>>>,
    fewest: usize,
    ended: Option<Choice>,
}

/// Runs each layout of `order` in turn on its own copy of the arrays, one copy at a time:
/// `map` gives a layout's copy (mapped and first touched), `turn` times its candidates on it,
/// and that copy is let go before the next layout's is mapped, so a trial holds one set of
/// arrays at a time. Returns the last copy with its layout; None when `map` gave none or
/// `turn` said stop (the reason is the caller's).
fn one_at_a_time<C, M>(
    ctx: &mut C,
    order: &[bool],
    mut map: impl FnMut(&mut C, bool) -> Result<Option<M>>,
    mut turn: impl FnMut(&mut C, bool, &mut M) -> Result<bool>,
) -> Result<Option<(bool, M)>> {
    let mut held: Option<(bool, M)> = None;
    for &huge in order {
        drop(held.take());
        let Some(mut copy) = map(ctx, huge)? else {
            return Ok(None);
        };
        if !turn(ctx, huge, &mut copy)? {
            return Ok(None);
        }
        held = Some((huge, copy));
    }
    Ok(held)
}

/// What a layout's turn times: the candidates of that layout, at each thread count of the
/// trial, in interleaved rounds.
struct Timing<'a, S: Fn() -> bool> {
    plan: &'a Plan,
    op: Op,
    set_index: usize,
    set: &'a WorkingSet,
    picks: &'a [Pick],
    threads: &'a [usize],
    /// How many layouts share the trial's time.
    layouts: usize,
    stopping: &'a S,
}

impl<S: Fn() -> bool> Timing<'_, S> {
    /// Times the candidates on `huge` pages on `copy`, into `ctx.rates`. False when the
    /// engine was asked to stop.
    fn layout<F: FnMut(TrialProgress)>(
        &self,
        ctx: &mut Ctx<'_, F>,
        huge: bool,
        copy: &mut PartitionedArrays,
    ) -> Result<bool> {
        let (picks, stopping) = (self.picks, self.stopping);
        let mine: Vec<usize> = (0..picks.len())
            .filter(|&c| picks[c].huge_pages == huge)
            .collect();
        if stopping() {
            return Ok(false);
        }
        let fence = self.plan.kernel.stores == Stores::Nt;
        let shares = (self.threads.len() * self.layouts) as u32;
        for (ti, &t) in self.threads.iter().enumerate() {
            let pool = &mut *ctx.pool;
            let report = &mut ctx.report;
            pool.activate(t);
            let layout = self.set.layout(t);
            let windowed = layout.parts.iter().any(|p| p.len() > WINDOW_ELEMS);
            copy.set_layout(layout.clone())?;
            let memory = &mut *copy;
            let mut window = 0;
            // None once the engine is asked to stop: each round checks, so a stop waits for one
            // short round at most.
            let mut round = |c: usize, passes: u32| -> Result<Option<RoundRecord>> {
                if stopping() {
                    return Ok(None);
                }
                let pick = &picks[c];
                if windowed {
                    window += 1;
                    let w = Layout {
                        len: layout.len,
                        parts: windows(&layout.parts, window),
                    };
                    memory.set_layout(w)?;
                }
                let pass = Pass {
                    op: self.op,
                    function: pick.variant.pass,
                    fence,
                };
                report.round(t, c, *pick);
                pool.run(t, JobKind::Round, memory, passes, pass, |_| {})?;
                let timings = pool.timings(t, memory, passes, self.op);
                Ok(Some(RoundRecord::from_threads(
                    CellId::of(self.op, self.set_index, t),
                    true,
                    passes,
                    timings,
                )))
            };
            // Passes per round, from the layout's first candidate (as the coordinator
            // calibrates).
            let mut passes = 1u32;
            if !windowed {
                let mut best_per_pass = f64::INFINITY;
                for _ in 0..CALIBRATION_ROUNDS {
                    let Some(r) = round(mine[0], passes)? else {
                        return Ok(false);
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
            if ti == 0 {
                let warm = Instant::now();
                while warm.elapsed() < WARMUP {
                    if round(mine[0], passes)?.is_none() {
                        return Ok(false);
                    }
                }
            }
            let budget = BUDGET / shares;
            let limit = LIMIT / shares;
            let timed = Instant::now();
            let more = |done: usize, took: Duration| {
                done < REPS && (done < MIN_PAIRS || took < budget) && (done == 0 || took < limit)
            };
            let rows = &mut ctx.rates[ti];
            let mut done = 0;
            while more(done, timed.elapsed()) {
                if rows.len() == done {
                    rows.push(vec![f64::NAN; picks.len()]);
                }
                for j in round_order(mine.len(), done) {
                    let c = mine[j];
                    if !windowed && round(c, (passes / 2).max(1))?.is_none() {
                        return Ok(false);
                    }
                    let Some(r) = round(c, passes)? else {
                        return Ok(false);
                    };
                    rows[done][c] = trial_rate(&r);
                }
                done += 1;
            }
            ctx.fewest = ctx.fewest.min(done);
        }
        Ok(true)
    }
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

    /// A fake copy of the arrays that writes its unmapping into the log it shares.
    struct Fake {
        huge: bool,
        log: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
    }
    impl Drop for Fake {
        fn drop(&mut self) {
            self.log.borrow_mut().push(format!("unmap {}", self.huge));
        }
    }

    /// The steps `one_at_a_time` takes over `order`, the most copies mapped at once, and the
    /// layout it ends holding; `map_fails` and `stop_in` make the map or the turn of that
    /// layout give up.
    fn steps(
        order: &[bool],
        map_fails: Option<bool>,
        stop_in: Option<bool>,
    ) -> (Vec<String>, usize, Option<bool>) {
        let log: std::rc::Rc<std::cell::RefCell<Vec<String>>> = Default::default();
        let held = one_at_a_time(
            &mut (),
            order,
            |_, huge| {
                if map_fails == Some(huge) {
                    return Ok(None);
                }
                log.borrow_mut().push(format!("map {huge}"));
                Ok(Some(Fake {
                    huge,
                    log: log.clone(),
                }))
            },
            |_, huge, copy: &mut Fake| {
                assert_eq!(copy.huge, huge, "a layout's candidates run on its own copy");
                log.borrow_mut().push(format!("time {huge}"));
                Ok(stop_in != Some(huge))
            },
        )
        .unwrap();
        let steps = log.borrow().clone();
        let kept = held.map(|(huge, copy)| {
            assert_eq!(copy.huge, huge);
            huge
        });
        let most = steps
            .iter()
            .scan(0i32, |live, s| {
                *live += if s.starts_with("map") {
                    1
                } else if s.starts_with("unmap") {
                    -1
                } else {
                    0
                };
                Some(*live)
            })
            .max()
            .unwrap_or(0) as usize;
        (steps, most, kept)
    }

    #[test]
    fn page_layouts_take_turns_on_one_copy_of_the_arrays_at_a_time() {
        // Huge pages (the default) and not: the other layout first, let go before the
        // default's copy is mapped; the default's is held at the end, for the cells.
        let (log, most, kept) = steps(&[false, true], None, None);
        assert_eq!(
            log,
            [
                "map false",
                "time false",
                "unmap false",
                "map true",
                "time true"
            ]
        );
        assert_eq!(most, 1, "never two copies mapped at once");
        assert_eq!(kept, Some(true));
        // Loops only (one layout): one map, held.
        let (log, most, kept) = steps(&[true], None, None);
        assert_eq!(log, ["map true", "time true"]);
        assert_eq!((most, kept), (1, Some(true)));
        // A map that fails (no room) or a stop: what was mapped is let go, nothing is held.
        let (log, _, kept) = steps(&[false, true], Some(true), None);
        assert_eq!(log, ["map false", "time false", "unmap false"]);
        assert_eq!(kept, None);
        let (log, _, kept) = steps(&[false, true], None, Some(false));
        assert_eq!(log, ["map false", "time false", "unmap false"]);
        assert_eq!(kept, None);
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
