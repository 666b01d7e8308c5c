//! `compare` of latency cells: B against A for every buffer both sides chased, matched by
//! level (or, for an explicit size, its bytes; for the matrix, its pair of nodes), with the
//! verdict across runs of `judge::verdict` (Welch's test on the repetitions' medians with 3 or
//! more a side, else the ratio against the spread of the repetitions, where there are some).
//!
//! Lower is better. The verdict machinery judges rates, higher better, so it is given loads
//! per ns (1 / latency): its test and its spread are the same on the reciprocal (a log-scale
//! test and a band symmetric on the log scale), and "faster" there is a lower latency here.
//! The words and ratios shown are the latency's: B/A above 1 is B slower.

use crate::base::median::median;
use crate::judge::verdict::{Direction, RunVerdict, judge_runs, spread_from_repetitions, tally};
use crate::show::report::model::{LatencyCell, Level, Snapshot};
use std::fmt::Write;

/// What a latency cell measures, across machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Level(Level),
    Bytes(u64),
    /// The matrix's CPU node and memory node.
    Pair(usize, usize),
}

fn key_of(c: &LatencyCell) -> Key {
    match (c.cpu_node, c.mem_node, c.level) {
        (Some(cpu), Some(mem), _) => Key::Pair(cpu, mem),
        (_, _, Some(level)) => Key::Level(level),
        _ => Key::Bytes(c.bytes),
    }
}

/// A cell's repetition medians: its recorded ones, or its median, one repetition.
fn repetitions(c: &LatencyCell) -> Vec<f64> {
    if c.repetitions.is_empty() {
        vec![c.median_ns]
    } else {
        c.repetitions.clone()
    }
}

/// Every repetition median of the cell measuring `key`, over one side's snapshots.
fn medians(side: &[&Snapshot], key: Key) -> Vec<f64> {
    side.iter()
        .filter_map(|s| s.latency.iter().find(|c| key_of(c) == key))
        .flat_map(repetitions)
        .collect()
}

fn reciprocal(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| 1.0 / x).collect()
}

/// The verdict in latency's words, with B/A as the ratio of latencies.
fn words(v: &RunVerdict) -> String {
    let way = |d: Direction| match d {
        Direction::Faster => "faster (lower latency)",
        Direction::Slower => "slower (higher latency)",
        Direction::Undecided => "",
    };
    match v {
        RunVerdict::Tested(t) | RunVerdict::Hierarchical(t) => match v.direction() {
            Direction::Undecided => format!("no significant difference ({} a side)", t.n),
            d => way(d).to_string(),
        },
        RunVerdict::AgainstSpread { ratio, spread } => {
            let r = 1.0 / ratio;
            match (spread, v.direction()) {
                (None, _) => {
                    format!("no verdict: one run a side, B/A {r:.3}, run-to-run spread unknown")
                }
                (Some(s), Direction::Undecided) => format!(
                    "no verdict: B/A {r:.3} is inside the run-to-run spread (±{:.1} %)",
                    s.half_width * 100.0
                ),
                (Some(s), d) => format!(
                    "{}: B/A {r:.3} is outside the run-to-run spread (±{:.1} %)",
                    way(d),
                    s.half_width * 100.0
                ),
            }
        }
        RunVerdict::OneProcess { ratio, .. } => format!(
            "no verdict: one process a side, B/A {:.3}, spread between processes unknown",
            1.0 / ratio
        ),
        RunVerdict::Nothing => "–".into(),
    }
}

/// The latency section of a comparison (nothing when neither side has latency cells), and the
/// cells only A and only B have, by label.
pub(crate) fn latency_section(
    a: &[&Snapshot],
    b: &[&Snapshot],
    out: &mut String,
) -> (Vec<String>, Vec<String>) {
    let (Some(sa), Some(sb)) = (a.first(), b.first()) else {
        return (Vec::new(), Vec::new());
    };
    if sa.latency.is_empty() && sb.latency.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let both: Vec<(&LatencyCell, &LatencyCell)> = sa
        .latency
        .iter()
        .filter_map(|ca| {
            sb.latency
                .iter()
                .find(|cb| key_of(cb) == key_of(ca))
                .map(|cb| (ca, cb))
        })
        .collect();
    out.push_str("\n## Idle latency\n\n");
    if both.is_empty() {
        out.push_str("No latency cell is in both snapshots.\n");
    } else {
        out.push_str(
            "| buffer | runs A | runs B | median ns A | median ns B | B/A | verdict | \
             B/A (95 % CI) | p |\n",
        );
        out.push_str(&format!("|{}\n", "---|".repeat(9)));
        let mut verdicts = Vec::new();
        for &(ca, _) in &both {
            let key = key_of(ca);
            let (ma, mb) = (medians(a, key), medians(b, key));
            let (ra, rb) = (reciprocal(&ma), reciprocal(&mb));
            let spread = spread_from_repetitions(&[ra.clone(), rb.clone()]);
            let v = judge_runs(&ra, &rb, spread);
            let (med_a, med_b) = (median(&ma), median(&mb));
            let (interval, p) = match &v {
                // The test's ratio is of rates: the latency's is its reciprocal.
                RunVerdict::Tested(t) => (
                    format!(
                        "{:.3} ({:.3}–{:.3})",
                        1.0 / t.ratio,
                        1.0 / t.high,
                        1.0 / t.low
                    ),
                    if t.p < 0.001 {
                        "< 0.001".to_string()
                    } else {
                        format!("{:.3}", t.p)
                    },
                ),
                _ => ("–".to_string(), "–".to_string()),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {med_a:.2} | {med_b:.2} | {:.3} | {} | {interval} | {p} |",
                ca.label.replace('|', "\\|"),
                ma.len(),
                mb.len(),
                med_b / med_a,
                words(&v),
            );
            verdicts.push(v);
        }
        let parts = tally(verdicts.iter());
        let _ = writeln!(
            out,
            "\nLatency verdicts (lower is better: a higher latency in B is slower; Welch's t-test \
             on the repetitions' medians with 3 or more a side, else B/A of the medians against \
             the run-to-run spread of the repetitions, none with one run a side): {}.",
            parts.join(", ")
        );
    }
    let only = |mine: &Snapshot, other: &Snapshot| -> Vec<String> {
        mine.latency
            .iter()
            .filter(|c| !other.latency.iter().any(|o| key_of(o) == key_of(c)))
            .map(|c| format!("latency {}", c.label))
            .collect()
    };
    (only(sa, sb), only(sb, sa))
}
