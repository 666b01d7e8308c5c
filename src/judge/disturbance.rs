//! Why a round was slow, and whether it was disturbed.
//!
//! *Late* is the first rule, decided in the engine's record: the span exceeds the slowest
//! thread's own time by more than 20 %, so some thread was not running while the others were.
//! It misses a thread preempted in the middle of its span (its own time includes the
//! preemption). A round is *disturbed* when, against the cell's own window:
//!
//! - a worker was switched out involuntarily inside its span (counted) and, where the task
//!   clock is counted, spent more than [`OFF_CPU_SHARE`](crate::engine::events::OFF_CPU_SHARE) of its span off its CPU (a wake-up of
//!   another thread for a few microseconds is not a disturbance; a scheduler tick of a few
//!   milliseconds in a 20 ms round is);
//! - its span is more than [`SPAN_FACTOR`] × the cell's median span (the rounds of a quiet
//!   cell vary by a few percent, so half as long again is far outside the noise, and it
//!   catches a 270 ms round against a 21 ms median with room); or
//! - its slowest thread ran at less than [`RATE_FRACTION`] of that thread's own median rate
//!   (it lost at least half the round; threads sharing a memory controller stay well above).
//!
//! The median rules need [`MIN_ROUNDS`] rounds in the window. Neither late nor disturbed rounds
//! are left out of the median: they are counted and named, and a cell with many is marked
//! noisy. Late and disturbed rounds name their cause where the counters (or the window's
//! medians) show one: "t1 switched out 2× (180 ms off CPU)", "t0 ran at 2.1 GHz against 3.4",
//! "span 270 ms against a median of 21 ms".

use crate::base::median::median;
use crate::engine::events::RoundRecord;

/// A span this many times the cell's median span disturbs the round.
const SPAN_FACTOR: f64 = 1.5;
/// A slowest thread under this fraction of its own median rate disturbs the round.
const RATE_FRACTION: f64 = 0.5;
/// A thread's clock under this fraction of its own median clock is named as a cause.
const CLOCK_DROP: f64 = 0.9;
/// Rounds the window must hold before its medians are a reference.
const MIN_ROUNDS: usize = 5;

/// One thread in one round: its rate, GB/s, and its counted clock, GHz.
pub(crate) type ThreadPace = (f64, Option<f64>);

/// A cell's medians before a round: what the round is judged against.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reference {
    span_ns: f64,
    /// Per thread index: its median rate, GB/s, and its median counted clock, GHz.
    thread_gbs: Vec<f64>,
    thread_ghz: Vec<Option<f64>>,
}

impl Reference {
    /// The medians of the rounds given (oldest first), each a span and per-thread (rate,
    /// clock) pairs; None for fewer than [`MIN_ROUNDS`].
    pub fn of<'a>(
        rounds: impl ExactSizeIterator<Item = (u64, &'a [ThreadPace])> + Clone,
    ) -> Option<Reference> {
        if rounds.len() < MIN_ROUNDS {
            return None;
        }
        let spans: Vec<f64> = rounds.clone().map(|r| r.0 as f64).collect();
        let threads = rounds.clone().map(|r| r.1.len()).max().unwrap_or(0);
        let per_thread = |i: usize, f: &dyn Fn(&ThreadPace) -> Option<f64>| {
            let v: Vec<f64> = rounds
                .clone()
                .filter_map(|r| r.1.get(i).and_then(f))
                .collect();
            (!v.is_empty()).then(|| median(&v))
        };
        Some(Reference {
            span_ns: median(&spans),
            thread_gbs: (0..threads)
                .map(|i| per_thread(i, &|t| Some(t.0)).unwrap_or(f64::NAN))
                .collect(),
            thread_ghz: (0..threads).map(|i| per_thread(i, &|t| t.1)).collect(),
        })
    }
}

/// What a round's stamps and counters say against the reference.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finding {
    pub(crate) disturbed: bool,
    /// Why it was late or disturbed, where something shows it ("t1 switched out 2×"); None
    /// for a round that was neither.
    pub(crate) cause: Option<String>,
}

fn ms(ns: f64) -> String {
    let v = ns / 1e6;
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else if v >= 0.1 {
        format!("{v:.1} ms")
    } else {
        format!("{:.0} µs", ns / 1e3)
    }
}

/// Judges one round: disturbed or not, and the cause of a late or disturbed round.
pub fn judge(r: &RoundRecord, reference: Option<&Reference>) -> Finding {
    let mut causes: Vec<String> = Vec::new();
    let mut disturbed = false;
    for (i, t) in r.threads.iter().enumerate() {
        let own = t.ns();
        let c = &t.counters;
        if let Some(n) = t.switched_out() {
            disturbed = true;
            causes.push(match t.off_cpu_ns() {
                Some(off) => format!("t{i} switched out {n}× ({} off CPU)", ms(off as f64)),
                None => format!("t{i} switched out {n}×"),
            });
        }
        let moved = c
            .migrations
            .filter(|&m| m > 0)
            .or(t.migrated().then_some(1));
        if let Some(m) = moved {
            causes.push(format!("t{i} moved to another CPU {m}×"));
        }
        if let (Some(ghz), Some(Some(median_ghz))) = (
            c.ghz(own),
            reference.map(|r| r.thread_ghz.get(i).copied().flatten()),
        ) && ghz < CLOCK_DROP * median_ghz
        {
            causes.push(format!("t{i} ran at {ghz:.1} GHz against {median_ghz:.1}"));
        }
    }
    if let Some(reference) = reference {
        if reference.span_ns > 0.0 && r.span_ns as f64 > SPAN_FACTOR * reference.span_ns {
            disturbed = true;
            causes.push(format!(
                "span {} against a median of {}",
                ms(r.span_ns as f64),
                ms(reference.span_ns)
            ));
        }
        let slowest = r
            .threads
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.gbs().total_cmp(&b.1.gbs()));
        if let Some((i, t)) = slowest
            && let Some(&m) = reference.thread_gbs.get(i)
            && m.is_finite()
            && t.gbs() < RATE_FRACTION * m
        {
            disturbed = true;
            causes.push(format!(
                "t{i} at {:.1} GB/s against its median {m:.1}",
                t.gbs()
            ));
        }
    }
    let cause = ((r.late || disturbed) && !causes.is_empty()).then(|| causes.join("; "));
    Finding { disturbed, cause }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::ThreadTiming;
    use crate::engine::plan::CellId;
    use crate::machine::counters::Counts;

    /// A thread that started at `start` µs and ran `len` µs over 24 MB, with counts.
    fn thread(start: u64, len: u64, counters: Counts) -> ThreadTiming {
        ThreadTiming {
            start_ns: start * 1000,
            end_ns: (start + len) * 1000,
            cpu_start: 0,
            cpu_end: 0,
            bytes: 24_000_000,
            counters,
        }
    }

    fn round(threads: Vec<ThreadTiming>) -> RoundRecord {
        RoundRecord::from_threads(CellId::new(0, threads.len()), false, 1, threads)
    }

    /// Twenty quiet rounds of two threads, 20 ms each, at 3.0 GHz.
    fn quiet_reference() -> Reference {
        let counted = Counts {
            switches: Some(0),
            cycles: Some(60_000_000),
            task_clock_ns: Some(20_000_000),
            ..Counts::default()
        };
        let rounds: Vec<RoundRecord> = (0..20)
            .map(|_| round(vec![thread(0, 20_000, counted), thread(0, 20_000, counted)]))
            .collect();
        let per: Vec<(u64, Vec<ThreadPace>)> = rounds
            .iter()
            .map(|r| {
                let t = r
                    .threads
                    .iter()
                    .map(|t| (t.gbs(), t.counters.ghz(t.ns())))
                    .collect();
                (r.span_ns, t)
            })
            .collect();
        Reference::of(per.iter().map(|(s, t)| (*s, t.as_slice()))).unwrap()
    }

    #[test]
    fn a_quiet_round_is_neither_late_nor_disturbed() {
        let reference = quiet_reference();
        assert_eq!(reference.span_ns, 20e6);
        assert_eq!(reference.thread_gbs, vec![1.2, 1.2]);
        assert_eq!(reference.thread_ghz, vec![Some(3.0), Some(3.0)]);
        let r = round(vec![
            thread(0, 20_000, Counts::default()),
            thread(0, 20_100, Counts::default()),
        ]);
        assert_eq!(judge(&r, Some(&reference)), Finding::default());
    }

    #[test]
    fn a_worker_preempted_mid_round_is_disturbed_though_not_late() {
        // t1 was switched out twice for 180 ms of its 200 ms: its own time includes the
        // preemption, so the late rule sees nothing, but the counters do.
        let preempted = Counts {
            switches: Some(2),
            task_clock_ns: Some(20_000_000),
            ..Counts::default()
        };
        let r = round(vec![
            thread(0, 20_000, Counts::default()),
            thread(0, 200_000, preempted),
        ]);
        assert!(!r.late);
        let f = judge(&r, None);
        assert!(f.disturbed);
        assert_eq!(
            f.cause.as_deref(),
            Some("t1 switched out 2× (180 ms off CPU)")
        );
        // With the window's medians the long span is named too.
        let f = judge(&r, Some(&quiet_reference()));
        assert_eq!(
            f.cause.as_deref(),
            Some(
                "t1 switched out 2× (180 ms off CPU); span 200 ms against a median of 20 ms; \
                 t1 at 0.1 GB/s against its median 1.2"
            )
        );
    }

    #[test]
    fn a_brief_switch_is_counted_but_does_not_disturb() {
        // Switched out for 50 µs of 20 ms (0.25 %): a wake-up, not a disturbance.
        let brief = Counts {
            switches: Some(1),
            task_clock_ns: Some(19_950_000),
            ..Counts::default()
        };
        let r = round(vec![thread(0, 20_000, brief)]);
        assert_eq!(judge(&r, None), Finding::default());
        // Without a task clock every involuntary switch is a disturbance.
        let unknown = Counts {
            switches: Some(1),
            ..Counts::default()
        };
        let f = judge(&round(vec![thread(0, 20_000, unknown)]), None);
        assert!(f.disturbed);
        assert_eq!(f.cause.as_deref(), Some("t0 switched out 1×"));
    }

    #[test]
    fn a_late_start_is_late_and_named_only_by_what_the_counters_show() {
        let r = round(vec![
            thread(0, 20_000, Counts::default()),
            thread(6_000, 20_000, Counts::default()),
        ]);
        assert!(r.late);
        let f = judge(&r, Some(&quiet_reference()));
        assert!(!f.disturbed, "26 ms against 20 is within 1.5×");
        assert_eq!(f.cause, None, "nothing counted shows why");
        // t1 was switched out before its start stamp, then again inside its span.
        let switched = Counts {
            switches: Some(1),
            task_clock_ns: Some(15_000_000),
            ..Counts::default()
        };
        let r = round(vec![
            thread(0, 20_000, Counts::default()),
            thread(6_000, 20_000, switched),
        ]);
        let f = judge(&r, Some(&quiet_reference()));
        assert!(r.late && f.disturbed);
        assert_eq!(
            f.cause.as_deref(),
            Some("t1 switched out 1× (5.0 ms off CPU)")
        );
    }

    #[test]
    fn a_slow_thread_and_a_slow_clock_are_named() {
        // t0 at 5 GB/s-like pace: a quarter of its median rate, at 2.1 GHz against 3.0.
        let slow = Counts {
            cycles: Some(168_000_000),
            task_clock_ns: Some(80_000_000),
            switches: Some(0),
            ..Counts::default()
        };
        let r = round(vec![
            thread(0, 80_000, slow),
            thread(0, 20_000, Counts::default()),
        ]);
        let f = judge(&r, Some(&quiet_reference()));
        assert!(f.disturbed);
        assert_eq!(
            f.cause.as_deref(),
            Some(
                "t0 ran at 2.1 GHz against 3.0; span 80 ms against a median of 20 ms; \
                 t0 at 0.3 GB/s against its median 1.2"
            )
        );
        // The median rules wait for a window of MIN_ROUNDS.
        assert!(!judge(&r, None).disturbed);
    }
}
