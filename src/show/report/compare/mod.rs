//! Two sides of snapshots set side by side: what differs in the machine and the settings, then
//! B against A for every cell both have, with a verdict across runs (`judge::verdict`), then
//! the cells only one has. A side is one snapshot or several, each snapshot one repetition (or
//! several, with `--repeat`). What differs in the machines is `differences`, which files a side
//! names is `files`; `report::baseline` matches the live table's cells the same way.
//!
//! Cells match by what they measure: the working set's level (or its explicit size) and the
//! thread count, so two machines with different caches compare `l1 × 2` with `l1 × 2`; labels
//! that differ (`48 KiB/thread (l1)` against `32 KiB/thread (l1)`) are listed, not fatal. The
//! verdict rests on repetitions, never on the rounds of one run: Welch's test on the
//! repetitions' medians with 3 or more a side, else the ratio against the machine's run-to-run
//! spread (from the snapshots' own repetitions, or `stream-top calibrate`'s file).

mod differences;
mod files;
mod gate;

pub use gate::{Gate, UNDECIDED_EXIT};

use super::calibration::{self, Calibration};
use super::json::load_snapshot;
use super::latency::compare::latency_section;
use super::lines::{choice_kept, isa_name};
use super::model::{ArraySize, CellSnapshot, Level, Snapshot};
use super::printable::printable;
use super::text::{cell_name, num};
use crate::base::error::Result;
use crate::base::time::display;
use crate::judge::verdict::{
    ALPHA, BETWEEN_UNKNOWN, Between, MIN_REPETITIONS, Narrow, RunVerdict, SideRuns, Spread,
    judge_sides, spread_from_repetitions, tally,
};
use differences::differences;
pub use files::newest_snapshot;
use files::snapshot_files;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What a working set measures, across machines: its level, or where it has none its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    Level(Level),
    Size(ArraySize),
}

impl Measure {
    pub fn of(level: Option<Level>, size: ArraySize) -> Measure {
        level.map_or(Measure::Size(size), Measure::Level)
    }
}

/// How a cell is matched between snapshots: what its set measures, thread count, rerun, and
/// its op (a schema-3 file's cells are triad cells).
pub(crate) type Key = (Measure, usize, bool, String);

pub(crate) fn key_of(c: &CellSnapshot) -> Key {
    (
        Measure::of(c.level, c.size),
        c.threads,
        c.rerun,
        c.op.clone(),
    )
}

/// A cell's row label, with its op in front where it is not the triad (`copy: 85 KiB/thread
/// (l2)`): a triad row reads as it did before ops.
fn op_label(c: &CellSnapshot) -> String {
    if c.op == "triad" {
        c.label.clone()
    } else {
        format!("{}: {}", c.op, c.label)
    }
}

/// A cell's repetition medians in one snapshot: its recorded repetitions (`--repeat`), or
/// the run's own median, the one repetition a plain run is.
fn repetition_medians(c: &CellSnapshot) -> Vec<f64> {
    if c.repetitions.is_empty() {
        vec![c.figures.median_gbs]
    } else {
        c.repetitions.clone()
    }
}

/// One side of a comparison: its snapshots with the names the text gives them.
#[derive(Debug, Clone)]
pub struct Side {
    runs: Vec<(String, Snapshot)>,
}

impl Side {
    fn snapshots(&self) -> Vec<&Snapshot> {
        self.runs.iter().map(|(_, s)| s).collect()
    }

    /// The side's first snapshot: its machine and settings stand for the side's.
    fn first(&self) -> &Snapshot {
        &self.runs[0].1
    }

    /// The cell's repetition medians: one snapshot's repetitions, or with several snapshots
    /// one median per snapshot (each process one repetition: its own repetitions share it).
    fn medians(&self, key: &Key) -> Vec<f64> {
        let cells: Vec<&CellSnapshot> = self.cells(key).collect();
        match cells[..] {
            [one] => repetition_medians(one),
            _ => cells
                .iter()
                .map(|c| crate::base::median::median(&repetition_medians(c)))
                .collect(),
        }
    }

    /// Whether the cell's repetitions all come from one process: one snapshot with two or
    /// more.
    fn one_process(&self, key: &Key) -> bool {
        self.cells(key).count() == 1 && self.medians(key).len() > 1
    }

    fn cells<'a>(&'a self, key: &'a Key) -> impl Iterator<Item = &'a CellSnapshot> + 'a {
        self.runs
            .iter()
            .filter_map(move |(_, s)| s.cells.iter().find(|c| key_of(c) == *key))
    }

    /// The side's repetitions of a cell, with the count in words for the table.
    fn count(&self, key: &Key) -> usize {
        self.medians(key).len()
    }
}

fn ratio(a: f64, b: f64) -> String {
    if a.is_finite() && b.is_finite() && a > 0.0 {
        format!("{:.2}", b / a)
    } else {
        "–".to_string()
    }
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// What the verdicts rest on, and how they came out: "Verdicts (Welch's t-test on the
/// repetitions' medians, two-sided at 1 % per cell …): 1 slower, 2 undecided." or, with
/// single runs, the spreads they were held against (`spreads`: those of the cells not tested).
fn summary_line(verdicts: &[(&CellSnapshot, RunVerdict)], spreads: &[Spread]) -> String {
    let parts = tally(verdicts.iter().map(|(_, v)| v));
    let tested = verdicts.iter().filter(|(_, v)| v.can_gate()).count();
    let alpha = ALPHA * 100.0;
    let basis = if tested == verdicts.len() {
        format!(
            "Verdicts (Welch's t-test on the repetitions' medians, two-sided at {alpha} % per \
             cell; B/A is the ratio of their geometric means, with the test's {} % interval)",
            100.0 - alpha
        )
    } else {
        let widths = spreads.iter().map(|s| s.half_width * 100.0);
        let (low, high) = widths.fold((f64::INFINITY, 0.0_f64), |(l, h), w| (l.min(w), h.max(w)));
        let spread = match spreads.first() {
            Some(s) if (high - low) < 0.05 => {
                format!("the run-to-run spread ±{low:.1} %, {}", s.source.phrase())
            }
            Some(s) => format!(
                "each cell's run-to-run spread (±{low:.1} to ±{high:.1} %), {}",
                s.source.phrase()
            ),
            None => "no known run-to-run spread (run `stream-top calibrate`, or give 3 or \
                     more repetitions a side: `--repeat 3`, or several snapshots a side)"
                .to_string(),
        };
        format!(
            "Verdicts ({tested} of {} cells with {MIN_REPETITIONS} or more repetitions a side \
             tested, Welch's t-test two-sided at {alpha} % per cell; the others, B/A of the \
             medians against {spread}; the rounds inside one run are not independent evidence)",
            verdicts.len()
        )
    };
    format!("{basis}: {}.", parts.join(", "))
}

/// What one-process repetitions were judged by: the calibrated spread between processes
/// (from `source`), or nothing ("no verdict" and why); empty when no side was one process.
fn one_process_lines(verdicts: &[(&CellSnapshot, RunVerdict)], source: Option<&str>) -> String {
    let count = |f: fn(&RunVerdict) -> bool| verdicts.iter().filter(|(_, v)| f(v)).count();
    let mut out = String::new();
    let added = count(|v| matches!(v, RunVerdict::Hierarchical(_)));
    if let (true, Some(source)) = (added > 0, source) {
        let _ = writeln!(
            out,
            "\n{added} {} repetitions from one process a side: the spread between processes, \
             {source}, added to each such side's variance (var(mean) = σ²_process + \
             s²_within / n).",
            if added == 1 { "cell has" } else { "cells have" }
        );
    }
    let unknown = count(|v| matches!(v, RunVerdict::OneProcess { narrow: None, .. }));
    if unknown > 0 {
        let _ = writeln!(out, "\nNo verdict, {unknown} of them: {BETWEEN_UNKNOWN}.");
    }
    let narrow: Vec<Narrow> = verdicts
        .iter()
        .filter_map(|(_, v)| match v {
            RunVerdict::OneProcess {
                narrow: Some(n), ..
            } => Some(*n),
            _ => None,
        })
        .collect();
    if let Some(n) = narrow.first() {
        let _ = writeln!(
            out,
            "\nNo verdict, {} of them: repetitions from one process per side, and the {}.",
            narrow.len(),
            n.words()
        );
    }
    out
}

/// A comparison as text, and the cells that failed the gate (`--fail-if-slower`).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub text: String,
    /// Cells slower by more than the gate's percentage, by evidence that meets the standard
    /// (empty without a gate): the gate failed (exit 1).
    pub slower: Vec<String>,
    /// Cells the gate could not decide either way (empty without a gate): with none slower,
    /// the gate is undecided (exit 3), never passed.
    pub undecided: Vec<String>,
}

/// The comparison of two sides, as text (Markdown), with the gate's line when there is one.
/// `spread` is the machine's run-to-run spread from outside the snapshots (calibration); the
/// snapshots' own repetitions, where they have some, come first. A gate over cells with too few
/// repetitions, without `--allow-single-run`, is the person's to fix (exit 2).
fn render_compare(
    a: &Side,
    b: &Side,
    gate: Gate,
    calibrated: Option<(Calibration, PathBuf)>,
) -> Result<Comparison> {
    let mut out = String::new();
    write_sides(a, b, &mut out);
    let (sa, sb) = (a.first(), b.first());
    let both = cells_in_both(sa, sb);
    let judged = judge_cells(a, b, &both, calibrated.as_ref());
    // Two latency runs have no bandwidth cell to miss: their section says what they share.
    if both.is_empty() && !(sa.is_latency_run() && sb.is_latency_run()) {
        out.push_str("No cell is in both snapshots.\n");
    } else if !both.is_empty() {
        write_table(a, b, &both, &judged, &mut out);
        write_table_notes(&both, &judged, gate.percent, &mut out);
    }
    write_loops(sa, sb, &both, &mut out);
    let outcome = match gate.percent {
        Some(percent) => {
            gate::refuse_without_evidence(&judged.verdicts, gate)?;
            let outcome = gate::judge(&judged.verdicts, percent);
            out.push('\n');
            out.push_str(&outcome.line(percent, gate.allow_single_run));
            out.push('\n');
            outcome
        }
        None => gate::Outcome::default(),
    };
    write_only_in(a, b, &mut out);
    Ok(Comparison {
        text: out,
        slower: outcome.failed,
        undecided: outcome.undecided,
    })
}

/// The pairs of cells both sides' first snapshots have, in A's table order.
fn cells_in_both<'a>(
    sa: &'a Snapshot,
    sb: &'a Snapshot,
) -> Vec<(&'a CellSnapshot, &'a CellSnapshot)> {
    let in_b: HashMap<Key, &CellSnapshot> = sb.cells.iter().map(|c| (key_of(c), c)).collect();
    sa.cells_in_table_order()
        .into_iter()
        .filter_map(|ca| in_b.get(&key_of(ca)).map(|cb| (ca, *cb)))
        .collect()
}

/// The cells (and latency points) only one side has, a line each.
fn write_only_in(a: &Side, b: &Side, out: &mut String) {
    let (sa, sb) = (a.first(), b.first());
    let keys =
        |s: &Snapshot| -> HashMap<Key, ()> { s.cells.iter().map(|c| (key_of(c), ())).collect() };
    let only = |cells: &[CellSnapshot], other: &HashMap<Key, ()>| {
        cells
            .iter()
            .filter(|c| !other.contains_key(&key_of(c)))
            .map(|c| cell_name(&c.label, c.threads))
            .collect::<Vec<_>>()
    };
    let mut only_a = only(&sa.cells, &keys(sb));
    let mut only_b = only(&sb.cells, &keys(sa));
    let (lat_a, lat_b) = latency_section(&a.snapshots(), &b.snapshots(), out);
    only_a.extend(lat_a);
    only_b.extend(lat_b);
    out.push('\n');
    for (which, list) in [("A", only_a), ("B", only_b)] {
        if list.is_empty() {
            let _ = writeln!(out, "Only in {which}: none.");
        } else {
            let _ = writeln!(out, "Only in {which}: {}.", list.join("; "));
        }
    }
}

/// Each side's runs (file, name, host, when), then what differs between the first of each.
fn write_sides(a: &Side, b: &Side, out: &mut String) {
    for (which, side) in [("A", a), ("B", b)] {
        for (name, s) in &side.runs {
            let label = match &s.info.name {
                Some(n) => format!("run `{n}` on "),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "{which}: {name} ({label}{}, taken {})",
                s.info.hostname,
                display(&s.taken)
            );
        }
    }
    out.push('\n');
    let diffs = differences(a.first(), b.first());
    if diffs.is_empty() {
        out.push_str(
            "Same machine, kernel, stores, pinning, clock, vendor figure, settings and load at \
             the start.\n",
        );
    } else {
        out.push_str("Differences:\n\n");
        for d in &diffs {
            let _ = writeln!(out, "- {d}");
        }
    }
    out.push('\n');
}

/// The cells both sides have, judged: each one's verdict, the spreads that gave no gateable
/// verdict, and where a hierarchical verdict's between-process spread came from.
#[derive(Default)]
struct Judged<'a> {
    verdicts: Vec<(&'a CellSnapshot, RunVerdict)>,
    spreads: Vec<Spread>,
    hierarchical_source: Option<String>,
}

/// Judges each cell both sides have, in order: its spread (its own repetitions in the
/// snapshots, each side's scatter about its own mean, else the calibration's for the cell),
/// then the verdict across runs.
fn judge_cells<'a>(
    a: &Side,
    b: &Side,
    both: &[(&'a CellSnapshot, &'a CellSnapshot)],
    calibrated: Option<&(Calibration, PathBuf)>,
) -> Judged<'a> {
    let mut judged = Judged::default();
    for &(ca, _) in both {
        let key = key_of(ca);
        let (ma, mb) = (a.medians(&key), b.medians(&key));
        let spread = spread_from_repetitions(&[ma.clone(), mb.clone()])
            .or_else(|| calibrated.map(|(c, file)| c.spread_of(file, &ca.label, ca.threads)));
        let between = calibrated.map_or(Between::Unknown, |(c, file)| {
            c.between_of(file, &ca.label, ca.threads)
        });
        let v = judge_sides(
            SideRuns {
                medians: &ma,
                one_process: a.one_process(&key),
            },
            SideRuns {
                medians: &mb,
                one_process: b.one_process(&key),
            },
            spread.clone(),
            &between,
        );
        if let (RunVerdict::Hierarchical(_), Between::Calibrated(p)) = (&v, &between) {
            judged
                .hierarchical_source
                .get_or_insert_with(|| p.source.phrase());
        }
        judged.spreads.extend(spread.filter(|_| !v.can_gate()));
        judged.verdicts.push((ca, v));
    }
    judged
}

/// The one estimate of each side's level that a row shows and its B/A is the ratio of: the
/// geometric mean of the repetitions' medians where a test judged the cell (the test's own
/// estimate, so B/A is the test's ratio), else the median. The header names which.
fn estimate(medians: &[f64], tested: bool) -> f64 {
    let usable: Vec<f64> = medians
        .iter()
        .copied()
        .filter(|x| *x > 0.0 && x.is_finite())
        .collect();
    if tested && !usable.is_empty() {
        (usable.iter().map(|x| x.ln()).sum::<f64>() / usable.len() as f64).exp()
    } else {
        crate::base::median::median(medians)
    }
}

/// The name of the estimate the table's rows show, for its header.
fn estimate_name(verdicts: &[(&CellSnapshot, RunVerdict)]) -> &'static str {
    let tested = verdicts.iter().filter(|(_, v)| v.test().is_some()).count();
    if tested == verdicts.len() {
        "geometric mean"
    } else if tested == 0 {
        "median"
    } else {
        "geometric mean (tested) or median"
    }
}

/// The table of the cells both sides have, a row each, with the verdicts judged before.
fn write_table(
    a: &Side,
    b: &Side,
    both: &[(&CellSnapshot, &CellSnapshot)],
    judged: &Judged,
    out: &mut String,
) {
    let name = estimate_name(&judged.verdicts);
    let _ = writeln!(
        out,
        "| per array | threads | runs A | runs B | {name} GB/s A | {name} GB/s B | B/A of the \
         {name}s | best GB/s A | best GB/s B | cv A | cv B | verdict | B/A {} % interval | p |",
        100.0 - ALPHA * 100.0
    );
    out.push_str(&format!("|{}\n", "---|".repeat(14)));
    for (&(ca, cb), (_, v)) in both.iter().zip(&judged.verdicts) {
        let loop_differs = cell_loop(a.first(), ca) != cell_loop(b.first(), cb);
        write_row(a, b, ca, v, loop_differs, out);
    }
    out.push('\n');
}

/// One row of the table: the cell, each side's runs, estimates, bests and cvs, their ratio,
/// the verdict and its interval.
fn write_row(
    a: &Side,
    b: &Side,
    ca: &CellSnapshot,
    v: &RunVerdict,
    loop_differs: bool,
    out: &mut String,
) {
    let key = key_of(ca);
    let best = |side: &Side| {
        side.cells(&key)
            .map(|c| c.figures.best_gbs)
            .fold(f64::NAN, f64::max)
    };
    let cv = |side: &Side| {
        let cvs: Vec<f64> = side.cells(&key).map(|c| c.figures.cv * 100.0).collect();
        crate::base::median::median(&cvs)
    };
    let tested = v.test().is_some();
    let (est_a, est_b) = (
        estimate(&a.medians(&key), tested),
        estimate(&b.medians(&key), tested),
    );
    let loop_note = if loop_differs {
        " (the loop or page layout differs: not the change alone)"
    } else {
        ""
    };
    let (interval, p) = match v.test() {
        Some(t) => (format!("{:.3}–{:.3}", t.low, t.high), p_value(t.p)),
        None => ("–".to_string(), "–".to_string()),
    };
    let shown = match v.test() {
        Some(t) => format!("{:.3}", t.ratio),
        None => ratio(est_a, est_b),
    };
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {shown} | {} | {} | {} % | {} % | {}{loop_note} | {interval} | {p} |",
        op_label(ca).replace('|', "\\|"),
        ca.threads,
        a.count(&key),
        b.count(&key),
        num(Some(est_a), 1),
        num(Some(est_b), 1),
        num(Some(best(a)), 1),
        num(Some(best(b)), 1),
        num(Some(cv(a)), 1),
        num(Some(cv(b)), 1),
        v.words(),
    );
}

/// Under the table: the summary, the one-process lines, the cells matched across labels, and
/// the noisy cells.
fn write_table_notes(
    both: &[(&CellSnapshot, &CellSnapshot)],
    judged: &Judged,
    percent: Option<f64>,
    out: &mut String,
) {
    out.push_str(&summary_line(&judged.verdicts, &judged.spreads));
    out.push('\n');
    out.push_str(&gate::too_wide_line(&judged.verdicts, percent));
    out.push_str(&one_process_lines(
        &judged.verdicts,
        judged.hierarchical_source.as_deref(),
    ));
    let relabelled: Vec<String> = both
        .iter()
        .filter(|(ca, cb)| ca.label != cb.label)
        .map(|(ca, cb)| {
            format!(
                "{} × {}: {} (A) → {} (B)",
                ca.set_name, ca.threads, ca.label, cb.label
            )
        })
        .collect();
    if !relabelled.is_empty() {
        let _ = writeln!(
            out,
            "\nMatched by level (or size) and threads; their labels differ: {}.",
            relabelled.join("; ")
        );
    }
    let noisy: Vec<String> = both
        .iter()
        .flat_map(|(ca, cb)| [("A", *ca), ("B", *cb)])
        .filter_map(|(which, c)| {
            let why = &c.figures.noisy;
            (!why.is_empty()).then(|| {
                format!(
                    "{} in {which}: {}",
                    cell_name(&c.label, c.threads),
                    why.join(", ")
                )
            })
        })
        .collect();
    if !noisy.is_empty() {
        let _ = writeln!(out, "\nNoisy: {}.", noisy.join("; "));
    }
}

/// Whether each cell ran the same loop and page layout on both sides, where either side's
/// file records it (files from before the choice record none).
fn write_loops(
    sa: &Snapshot,
    sb: &Snapshot,
    both: &[(&CellSnapshot, &CellSnapshot)],
    out: &mut String,
) {
    if !both
        .iter()
        .any(|(ca, cb)| ca.choice.is_some() || cb.choice.is_some())
    {
        return;
    }
    let loops: Vec<String> = both
        .iter()
        .filter_map(|(ca, cb)| {
            let (x, y) = (cell_loop(sa, ca), cell_loop(sb, cb));
            (x != y).then(|| format!("- {}: {x} (A) → {y} (B)", cell_name(&ca.label, ca.threads)))
        })
        .collect();
    out.push('\n');
    if loops.is_empty() {
        out.push_str("Loop and page layout: the same in every cell both have.\n");
    } else {
        out.push_str("Loop or page layout differs:\n\n");
        for l in &loops {
            let _ = writeln!(out, "{l}");
        }
    }
}

/// The loop and page layout a cell ran with; for a file from before the choice, what such runs
/// did by default (the kernel's default loop, huge pages advised).
fn cell_loop(s: &Snapshot, c: &CellSnapshot) -> String {
    match &c.choice {
        Some(ch) => choice_kept(ch),
        None => format!(
            "{}'s default loop, huge pages (not recorded)",
            isa_name(s.info.kernel.isa)
        ),
    }
}

/// Loads two JSON snapshots (a directory stands for its newest snapshot) and renders their
/// comparison; with a gate percentage (`--fail-if-slower`), the cells slower by more than it.
/// An unreadable or wrong file gives one line naming it (`Error::Usage`).
pub fn compare(a_path: &Path, b_path: &Path, gate: Option<f64>) -> Result<Comparison> {
    compare_sides(
        &[a_path.to_path_buf()],
        &[b_path.to_path_buf()],
        false,
        Gate {
            percent: gate,
            allow_single_run: false,
        },
    )
}

/// Loads each side's snapshots and renders their comparison. With `every`, a directory stands
/// for every snapshot in it (`compare DIR_A -- DIR_B`); otherwise for its newest. The run-to-run
/// spread of A's machine, where `stream-top calibrate` measured it, judges single runs.
pub fn compare_sides(a: &[PathBuf], b: &[PathBuf], every: bool, gate: Gate) -> Result<Comparison> {
    let load = |paths: &[PathBuf]| -> Result<Side> {
        let mut runs = Vec::new();
        for path in paths {
            for (file, name) in snapshot_files(path, every)? {
                // Every string of it printable: names from a file reach the header, the
                // tables and the gate's refusal.
                let snapshot = load_snapshot(&file)?.printable().into_owned();
                runs.push((printable(&name).into_owned(), snapshot));
            }
        }
        Ok(Side { runs })
    };
    let (a, b) = (load(a)?, load(b)?);
    let calibrated = calibration::load_for(&a.first().info);
    render_compare(&a, &b, gate, calibrated)
}
