//! The verdict of one cell across runs and the rules that pick it: a test with enough
//! repetitions a side, single runs against a known spread, no word for repetitions from one
//! process without a spread between processes; its direction, words, tally and the regression
//! gate's outcome.

use super::spread::{BETWEEN_UNKNOWN, Between, Narrow, Spread};
use super::welch::{ALPHA, MIN_REPETITIONS, SideRuns, WelchTest, hierarchical, welch_log};

/// What a comparison of one cell across runs concludes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunVerdict {
    /// Enough repetitions a side: Welch's test on their log medians.
    Tested(WelchTest),
    /// Too few repetitions: B's median over A's against the run-to-run spread, where known.
    AgainstSpread { ratio: f64, spread: Option<Spread> },
    /// Repetitions from one process on a side: Welch's test with the calibrated spread
    /// between processes added to that side's variance.
    Hierarchical(WelchTest),
    /// Repetitions from one process on a side and no spread between processes measured (none
    /// at all, or one too narrow: `narrow`): no word.
    OneProcess { ratio: f64, narrow: Option<Narrow> },
    /// A side has no repetition with a figure.
    Nothing,
}

/// Which way a comparison came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Faster,
    Slower,
    /// Not significant (a test), or inside the spread, or no spread to judge by.
    Undecided,
}

/// "2 faster, 1 slower": how many verdicts say each direction, those with none left out (a
/// cell without a verdict is not counted).
pub(crate) fn tally<'a>(verdicts: impl Iterator<Item = &'a RunVerdict> + Clone) -> Vec<String> {
    let count = |d: Direction| {
        verdicts
            .clone()
            .filter(|v| **v != RunVerdict::Nothing && v.direction() == d)
            .count()
    };
    [
        (Direction::Faster, "faster"),
        (Direction::Slower, "slower"),
        (Direction::Undecided, "undecided"),
    ]
    .into_iter()
    .filter(|(d, _)| count(*d) > 0)
    .map(|(d, word)| format!("{} {word}", count(d)))
    .collect()
}

impl RunVerdict {
    /// B's median over A's (for a test, the ratio of the geometric means).
    pub fn ratio(&self) -> Option<f64> {
        match self {
            RunVerdict::Tested(t) | RunVerdict::Hierarchical(t) => Some(t.ratio),
            RunVerdict::AgainstSpread { ratio, .. } | RunVerdict::OneProcess { ratio, .. } => {
                Some(*ratio)
            }
            RunVerdict::Nothing => None,
        }
    }

    /// Faster or slower only when the evidence meets the standard: a significant test, or a
    /// ratio outside a known spread.
    pub(crate) fn direction(&self) -> Direction {
        let way = |r: f64| {
            if r >= 1.0 {
                Direction::Faster
            } else {
                Direction::Slower
            }
        };
        match self {
            RunVerdict::Tested(t) | RunVerdict::Hierarchical(t) if t.p < ALPHA => way(t.ratio),
            RunVerdict::AgainstSpread {
                ratio,
                spread: Some(s),
            } if s.narrow.is_none() && outside(*ratio, s.half_width) => way(*ratio),
            _ => Direction::Undecided,
        }
    }

    /// Whether this verdict may gate a CI run: a test on repetitions (with the calibrated
    /// spread between processes where they come from one process), never a single run.
    pub(crate) fn can_gate(&self) -> bool {
        matches!(self, RunVerdict::Tested(_) | RunVerdict::Hierarchical(_))
    }

    /// The verdict in words, for the comparison's table.
    pub fn words(&self) -> String {
        match self {
            RunVerdict::Tested(t) => match self.direction() {
                Direction::Faster => "faster".into(),
                Direction::Slower => "slower".into(),
                Direction::Undecided => format!("no significant difference ({} a side)", t.n),
            },
            RunVerdict::Hierarchical(t) => {
                let word = match self.direction() {
                    Direction::Faster => "faster".to_string(),
                    Direction::Slower => "slower".to_string(),
                    Direction::Undecided => {
                        format!("no significant difference ({} a side)", t.n)
                    }
                };
                format!("{word} (one process a side: calibrated spread between processes added)")
            }
            RunVerdict::OneProcess { ratio, narrow } => match narrow {
                Some(n) => format!(
                    "no verdict: repetitions from one process per side, B/A {ratio:.3}; {}",
                    n.words()
                ),
                None => format!("no verdict: B/A {ratio:.3}; {BETWEEN_UNKNOWN}"),
            },
            RunVerdict::AgainstSpread { ratio, spread } => match spread {
                None => {
                    format!("no verdict: one run a side, B/A {ratio:.3}, run-to-run spread unknown")
                }
                Some(s) => match (s.narrow, outside(*ratio, s.half_width)) {
                    (Some(n), out) => format!(
                        "no verdict: B/A {ratio:.3} is {} the stored run-to-run spread (±{:.1} \
                         %); {}",
                        if out { "outside" } else { "inside" },
                        s.half_width * 100.0,
                        n.words()
                    ),
                    (None, true) => format!(
                        "{}: B/A {ratio:.3} is outside the run-to-run spread (±{:.1} %)",
                        if *ratio >= 1.0 { "faster" } else { "slower" },
                        s.half_width * 100.0,
                    ),
                    (None, false) => format!(
                        "no verdict: B/A {ratio:.3} is inside the run-to-run spread (±{:.1} %)",
                        s.half_width * 100.0,
                    ),
                },
            },
            RunVerdict::Nothing => "–".into(),
        }
    }
}

/// What a regression gate (`--fail-if-slower P`) concludes of one cell. The question is one-sided,
/// "is B slower than A by more than P %?", so each bound is a one-sided test at [`ALPHA`]: on
/// identical sides (true B/A 1, above the limit 1 − P/100) it fails less than 1 % of the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GateOutcome {
    /// The one-sided interval excludes a slowdown beyond the limit (or, for a single run judged
    /// on its ratio, B/A is at or above the limit).
    Pass,
    /// Slower beyond the limit: the one-sided interval lies wholly below it (or a single run's
    /// B/A is below it).
    Fail,
    /// The evidence cannot tell: the interval holds the limit, or a side has no figure.
    Undecided,
}

impl RunVerdict {
    /// The gate's outcome for this cell at `percent`: a test judges by its one-sided bounds;
    /// a verdict without a test (single runs, allowed by `--allow-single-run`, or repetitions
    /// from one process without a calibrated spread) is judged on its ratio alone.
    pub(crate) fn gate(&self, percent: f64) -> GateOutcome {
        let limit = 1.0 - percent / 100.0;
        match self {
            RunVerdict::Tested(t) | RunVerdict::Hierarchical(t) => match t.one_sided() {
                (_, high) if high < limit => GateOutcome::Fail,
                (low, _) if low >= limit => GateOutcome::Pass,
                _ => GateOutcome::Undecided,
            },
            RunVerdict::AgainstSpread { ratio, .. } | RunVerdict::OneProcess { ratio, .. } => {
                if *ratio < limit {
                    GateOutcome::Fail
                } else {
                    GateOutcome::Pass
                }
            }
            RunVerdict::Nothing => GateOutcome::Undecided,
        }
    }

    /// The test behind the verdict, where there is one.
    pub(crate) fn test(&self) -> Option<&WelchTest> {
        match self {
            RunVerdict::Tested(t) | RunVerdict::Hierarchical(t) => Some(t),
            _ => None,
        }
    }
}

/// Judges B against A where either side's repetitions may all come from one process: then
/// the spread between processes is added from the calibration ([`hierarchical`]), or no word
/// is given without one. Sides of separate processes (several snapshots, or single runs) go
/// to [`judge_runs`] as before.
pub(crate) fn judge_sides(
    a: SideRuns,
    b: SideRuns,
    spread: Option<Spread>,
    between: &Between,
) -> RunVerdict {
    let one = |s: &SideRuns| s.one_process && usable(s.medians).len() >= 2;
    if !one(&a) && !one(&b) {
        return judge_runs(a.medians, b.medians, spread);
    }
    let (ua, ub) = (usable(a.medians), usable(b.medians));
    if ua.is_empty() || ub.is_empty() {
        return RunVerdict::Nothing;
    }
    let median = crate::base::median::median;
    let ratio = median(&ub) / median(&ua);
    match between {
        Between::Calibrated(p) => hierarchical(
            SideRuns {
                medians: &ua,
                one_process: a.one_process,
            },
            SideRuns {
                medians: &ub,
                one_process: b.one_process,
            },
            p,
        )
        .map_or(RunVerdict::Nothing, RunVerdict::Hierarchical),
        Between::TooNarrow(n) => RunVerdict::OneProcess {
            ratio,
            narrow: Some(*n),
        },
        Between::Unknown => RunVerdict::OneProcess {
            ratio,
            narrow: None,
        },
    }
}

/// The positive, finite values of `v`.
fn usable(v: &[f64]) -> Vec<f64> {
    v.iter()
        .copied()
        .filter(|x| *x > 0.0 && x.is_finite())
        .collect()
}

/// Whether `ratio` lies outside the band `[1/(1+h), 1+h]`.
fn outside(ratio: f64, half_width: f64) -> bool {
    ratio > 1.0 + half_width || ratio < 1.0 / (1.0 + half_width)
}

/// Judges B's repetition medians against A's.
pub(crate) fn judge_runs(a: &[f64], b: &[f64], spread: Option<Spread>) -> RunVerdict {
    let (a, b) = (usable(a), usable(b));
    if a.is_empty() || b.is_empty() {
        return RunVerdict::Nothing;
    }
    if a.len() >= MIN_REPETITIONS
        && b.len() >= MIN_REPETITIONS
        && let Some(t) = welch_log(&a, &b)
    {
        return RunVerdict::Tested(t);
    }
    let median = crate::base::median::median;
    RunVerdict::AgainstSpread {
        ratio: median(&b) / median(&a),
        spread,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::verdict::spread::SpreadSource;

    #[test]
    fn single_runs_allowed_are_judged_on_their_ratio() {
        let single = judge_runs(&[20.0], &[9.8], None);
        assert_eq!(single.gate(5.0), GateOutcome::Fail);
        assert_eq!(
            judge_runs(&[20.0], &[19.5], None).gate(5.0),
            GateOutcome::Pass
        );
        assert_eq!(
            judge_runs(&[], &[19.5], None).gate(5.0),
            GateOutcome::Undecided
        );
    }

    #[test]
    fn single_runs_are_judged_only_against_a_known_spread() {
        let spread = Spread {
            half_width: 0.08,
            source: SpreadSource::Repetitions { count: 4 },
            narrow: None,
        };
        let v = judge_runs(&[15.0], &[14.0], None);
        assert_eq!(v.direction(), Direction::Undecided);
        assert!(v.words().contains("spread unknown"), "{}", v.words());
        let v = judge_runs(&[15.0], &[14.0], Some(spread.clone()));
        assert_eq!(v.direction(), Direction::Undecided);
        assert!(v.words().contains("inside the run-to-run spread (±8.0 %)"));
        let v = judge_runs(&[15.0], &[12.0], Some(spread));
        assert_eq!(v.direction(), Direction::Slower);
        assert!(!v.can_gate());
        assert_eq!(v.gate(10.0), GateOutcome::Fail);
        assert_eq!(v.gate(25.0), GateOutcome::Pass);
    }
}
