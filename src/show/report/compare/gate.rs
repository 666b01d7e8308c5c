//! The regression gate (`--fail-if-slower P`): three outcomes, never two. A cell passes when
//! its one-sided interval excludes a slowdown beyond P %, fails when the interval lies wholly
//! beyond it, and is undecided when the evidence cannot tell; the gate fails (exit 1) on any
//! failed cell, is undecided (exit 3) on any undecided cell otherwise, and passes (exit 0) only
//! when every cell passes. Single runs, where `--allow-single-run` lets them in, are judged on
//! their ratio alone. Before any of that, a gate without the evidence for a test is refused
//! with the way that gives it (exit 2).

use super::super::model::CellSnapshot;
use super::super::text::cell_name;
use crate::base::error::{Error, Result};
use crate::judge::verdict::{ALPHA, BETWEEN_UNKNOWN, GateOutcome, MIN_REPETITIONS, RunVerdict};

/// The gate of a comparison: `--fail-if-slower PERCENT`, and whether single runs may be gated
/// on the run-to-run spread (`--allow-single-run`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gate {
    pub percent: Option<f64>,
    pub allow_single_run: bool,
}

/// The exit code of an undecided gate: neither passed (0) nor failed (1), and not a usage
/// error (2).
pub const UNDECIDED_EXIT: u8 = 3;

/// The way to get repetitions a gate can test, named in every refusal: separate processes,
/// the two sides in turn.
const THE_WAY: &str = "run each side as 3 or more separate processes, interleaved (A B A B …: \
     a shell loop of `stream-top --headless --export before` then `… --export after`, as in \
     docs/ci-recipe.sh), then `compare --fail-if-slower P before -- after`";

/// The gate's cells by outcome, each named with its figures.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    pub(crate) failed: Vec<String>,
    pub(crate) undecided: Vec<String>,
    /// Cells without a test, judged on their ratio alone (`--allow-single-run`).
    on_ratio: usize,
}

/// Sorts each cell into failed, undecided or passed at `percent`.
pub(super) fn judge(verdicts: &[(&CellSnapshot, RunVerdict)], percent: f64) -> Outcome {
    let mut outcome = Outcome::default();
    for (c, v) in verdicts {
        let name = cell_name(&c.label, c.threads);
        outcome.on_ratio += usize::from(v.test().is_none() && v.ratio().is_some());
        match v.gate(percent) {
            GateOutcome::Pass => {}
            GateOutcome::Fail => outcome.failed.push(format!(
                "{name} ({:.1} % slower)",
                (1.0 - v.ratio().unwrap_or(1.0)) * 100.0
            )),
            GateOutcome::Undecided => outcome.undecided.push(undecided_cell(&name, v, percent)),
        }
    }
    outcome
}

/// An undecided cell with its estimate, its one-sided bounds and how many interleaved
/// processes a side would decide it at the measured spread.
fn undecided_cell(name: &str, v: &RunVerdict, percent: f64) -> String {
    let Some(t) = v.test() else {
        return format!("{name} (a side has no figure)");
    };
    let (low, high) = t.one_sided();
    let more = match t.repetitions_to_decide(percent) {
        Some(n) => format!("about {n} interleaved processes a side would decide it at this spread"),
        None => "no number of processes decides it at this spread: B/A sits on the limit".into(),
    };
    format!(
        "{name} (B/A {:.3}, one-sided {} % bounds {low:.3} and {high:.3}; {more})",
        t.ratio,
        100.0 - ALPHA * 100.0
    )
}

impl Outcome {
    /// The gate's line: FAILED, UNDECIDED or passed, with the cells.
    pub(super) fn line(&self, percent: f64, allow_single_run: bool) -> String {
        let head = format!("Gate --fail-if-slower {percent}");
        let single = if allow_single_run && self.on_ratio > 0 {
            format!(
                " (--allow-single-run: {} {} fewer than {MIN_REPETITIONS} repetitions a side, \
                 judged on B/A alone)",
                self.on_ratio,
                if self.on_ratio == 1 {
                    "cell with"
                } else {
                    "cells with"
                }
            )
        } else {
            String::new()
        };
        let undecided = format!(
            "undecided (exit {UNDECIDED_EXIT}), the evidence cannot tell whether slower by more \
             than {percent} %: {}",
            self.undecided.join("; ")
        );
        match (self.failed.is_empty(), self.undecided.is_empty()) {
            (false, true) => format!(
                "{head}: FAILED; slower by more than {percent} %: {}{single}.",
                self.failed.join("; ")
            ),
            (false, false) => format!(
                "{head}: FAILED; slower by more than {percent} %: {}; {undecided}{single}.",
                self.failed.join("; ")
            ),
            (true, false) => format!("{head}: UNDECIDED; {undecided}{single}."),
            (true, true) => format!(
                "{head}: passed; every cell is shown not slower by more than {percent} % \
                 (one-sided test at {} %){single}.",
                ALPHA * 100.0
            ),
        }
    }
}

/// A gate over cells without the evidence for a test is the person's to fix (exit 2), with the
/// way that gives it, unless `--allow-single-run` lets it judge them on their ratio.
pub(super) fn refuse_without_evidence(
    verdicts: &[(&CellSnapshot, RunVerdict)],
    gate: Gate,
) -> Result<()> {
    if gate.allow_single_run {
        return Ok(());
    }
    if verdicts
        .iter()
        .any(|(_, v)| matches!(v, RunVerdict::OneProcess { .. }))
    {
        return Err(Error::usage(format!(
            "--fail-if-slower: {BETWEEN_UNKNOWN}; the way that works: {THE_WAY}; or add \
             --allow-single-run to judge those cells on B/A alone"
        )));
    }
    let single: Vec<String> = verdicts
        .iter()
        .filter(|(_, v)| !v.can_gate())
        .map(|(c, _)| cell_name(&c.label, c.threads))
        .collect();
    if !single.is_empty() {
        return Err(Error::usage(format!(
            "--fail-if-slower: a gate needs {MIN_REPETITIONS} or more repetitions a side, and \
             {} {} fewer ({}): {THE_WAY}; or add --allow-single-run to judge single runs on \
             B/A alone",
            single.len(),
            if single.len() == 1 {
                "cell has"
            } else {
                "cells have"
            },
            single.join("; ")
        )));
    }
    Ok(())
}

/// Where the measured spread is too wide to decide anything useful (the change the tests can
/// tell is wider than the gate's percentage, or than 10 % without a gate): what it can tell,
/// and what would help. Empty when every tested cell can tell less.
pub(super) fn too_wide_line(
    verdicts: &[(&CellSnapshot, RunVerdict)],
    percent: Option<f64>,
) -> String {
    let useful = percent.unwrap_or(10.0) / 100.0;
    let wide: Vec<String> = verdicts
        .iter()
        .filter_map(|(c, v)| v.test().map(|t| (c, t)))
        .filter(|(_, t)| t.detectable() > useful)
        .map(|(c, t)| {
            format!(
                "{} tells only changes beyond ±{:.1} % with {} a side",
                cell_name(&c.label, c.threads),
                t.detectable() * 100.0,
                t.n
            )
        })
        .collect();
    if wide.is_empty() {
        return String::new();
    }
    format!(
        "\nSpread too wide to decide a change of {:.0} %: {}. What would help: a quiet host \
         (nothing else running), more interleaved processes a side, and the same loop and page \
         layout on both sides (--choices-from one of A's snapshots on every run).\n",
        useful * 100.0,
        wide.join("; ")
    )
}
