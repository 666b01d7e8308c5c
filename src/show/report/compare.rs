//! Two snapshots side by side: what differs in the machine and the settings, then B against A
//! for every cell both have, with a verdict from their rounds, then the cells only one has.
//! `Baseline` gives the TUI the same comparison cell by cell.
//!
//! Cells match by what they measure: the working set's level (or its explicit size) and the
//! thread count, so two machines with different caches compare `l1 × 2` with `l1 × 2`; labels
//! that differ (`48 KiB/thread (l1)` against `32 KiB/thread (l1)`) are listed, not fatal. The
//! verdict is the Mann–Whitney U test of the two cells' round rates at 5 %, with the
//! Hodges–Lehmann ratio of B over A and its 95 % interval (`inference`).

use super::json::load_snapshot;
use super::lines::{
    cache_summary, choice_kept, clock_line, host_line, isa_name, pin_line, set_label,
};
use super::lines::{stores_name, topology_summary};
use super::markdown::{checksum_line, duty_percent};
use super::model::{ArraySize, CellSnapshot, Level, Snapshot};
use super::text::{cell_name, gbs_plain, num};
use crate::base::error::{Error, Result};
use crate::base::time::{display, parse_rfc3339};
use crate::judge::inference::{Judgement, Verdict, judge};
use std::collections::HashMap;
use std::fmt::Write;
use std::fs;
use std::path::{Path, PathBuf};

/// Clock estimates closer than this (relative) are the same clock measured twice.
const CLOCK_TOLERANCE: f64 = 0.01;

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

/// How a cell is matched between snapshots: what its set measures, thread count, rerun.
type Key = (Measure, usize, bool);

fn key_of(c: &CellSnapshot) -> Key {
    (Measure::of(c.level, c.size), c.threads, c.rerun)
}

/// B's rounds of a cell against A's.
pub fn judge_cells(a: &CellSnapshot, b: &CellSnapshot) -> Judgement {
    judge(&a.rates(), &b.rates())
}

/// The lines that say how A and B differ; empty when they do not.
pub(crate) fn differences(a: &Snapshot, b: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    let mut diff = |what: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{what}: {x} (A) → {y} (B)"));
        }
    };
    let (ia, ib) = (&a.info, &b.info);
    diff(
        "CPU model",
        ia.topology.model.trim().to_string(),
        ib.topology.model.trim().to_string(),
    );
    diff(
        "topology",
        topology_summary(&ia.topology),
        topology_summary(&ib.topology),
    );
    diff(
        "caches",
        cache_summary(&ia.topology),
        cache_summary(&ib.topology),
    );
    diff(
        "kernel",
        isa_name(ia.kernel.isa).to_string(),
        isa_name(ib.kernel.isa).to_string(),
    );
    let selection = |s: &Snapshot| match &s.info.selection {
        Some(sel) => format!("--kernel {} --huge-pages {}", sel.kernel, sel.huge_pages),
        None => format!("--kernel {} --huge-pages on", isa_name(s.info.kernel.isa)),
    };
    diff("kernel and pages chosen by", selection(a), selection(b));
    diff(
        "stores",
        stores_name(ia.kernel.stores).to_string(),
        stores_name(ib.kernel.stores).to_string(),
    );
    diff(
        "pinning",
        pin_line(ia.pin).to_string(),
        pin_line(ib.pin).to_string(),
    );
    let same_clock = match (ia.clock.usable_ghz(), ib.clock.usable_ghz()) {
        (Some(x), Some(y)) => {
            (y / x - 1.0).abs() < CLOCK_TOLERANCE && ia.clock.agree == ib.clock.agree
        }
        (None, None) => true,
        _ => false,
    };
    if !same_clock {
        diff("clock", clock_line(&ia.clock), clock_line(&ib.clock));
    }
    let vendor = |s: &Snapshot| match s.vendor_gbs() {
        Some(v) => format!("{} ({})", gbs_plain(v), s.info.vendor.source_text.trim()),
        None => "none".to_string(),
    };
    diff("vendor figure", vendor(a), vendor(b));
    diff("rounds", ia.rounds.to_string(), ib.rounds.to_string());
    diff("round_ms", ia.round_ms.to_string(), ib.round_ms.to_string());
    diff("duty", duty_percent(ia.duty), duty_percent(ib.duty));
    let limits =
        |i: &super::model::RunInfo| i.container.and_then(|c| c.line()).unwrap_or("none".into());
    diff("container", limits(ia), limits(ib));
    let sets = |s: &Snapshot| {
        s.grid
            .sets
            .iter()
            .map(set_label)
            .collect::<Vec<_>>()
            .join(", ")
    };
    diff("working sets", sets(a), sets(b));
    let threads = |s: &Snapshot| {
        s.grid
            .threads
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    diff("thread counts", threads(a), threads(b));
    diff(
        "checksums",
        checksum_line(a).replace("checksums: ", ""),
        checksum_line(b).replace("checksums: ", ""),
    );
    diff(
        "load at start",
        host_line(&ia.host_start),
        host_line(&ib.host_start),
    );
    out
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

/// "Verdicts (Mann–Whitney U at 5 %): 1 slower, 2 no significant difference."
fn summary_line(verdicts: &[(&CellSnapshot, Judgement)]) -> String {
    let count = |v: Verdict| verdicts.iter().filter(|(_, j)| j.verdict == v).count();
    let parts: Vec<String> = [
        Verdict::Faster,
        Verdict::Slower,
        Verdict::Same,
        Verdict::TooFew,
    ]
    .into_iter()
    .filter(|&v| count(v) > 0)
    .map(|v| format!("{} {}", count(v), v.word()))
    .collect();
    format!(
        "Verdicts (Mann–Whitney U on the rounds, 5 %; B/A is the Hodges–Lehmann estimate): {}.",
        parts.join(", ")
    )
}

/// The cells significantly slower by more than `percent`.
fn gate_failures(verdicts: &[(&CellSnapshot, Judgement)], percent: f64) -> Vec<String> {
    verdicts
        .iter()
        .filter(|(_, j)| j.slower_by_more_than(percent))
        .map(|(c, j)| {
            format!(
                "{} ({:.1} % slower)",
                cell_name(&c.label, c.threads),
                (1.0 - j.ratio.map_or(1.0, |r| r.ratio)) * 100.0
            )
        })
        .collect()
}

fn gate_line(verdicts: &[(&CellSnapshot, Judgement)], percent: f64) -> String {
    let failed = gate_failures(verdicts, percent);
    if failed.is_empty() {
        format!(
            "Gate --fail-if-slower {percent}: passed; no cell is significantly slower by more than {percent} %."
        )
    } else {
        format!(
            "Gate --fail-if-slower {percent}: FAILED; significantly slower by more than {percent} %: {}.",
            failed.join("; ")
        )
    }
}

/// A comparison as text, and the cells that failed the gate (`--fail-if-slower`).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub text: String,
    /// Cells significantly slower by more than the gate's percentage (empty without a gate).
    pub slower: Vec<String>,
}

/// The comparison of two loaded snapshots, as text (Markdown), with the gate's line when
/// `gate` is a percentage.
pub(crate) fn render_compare(
    a: &Snapshot,
    a_name: &str,
    b: &Snapshot,
    b_name: &str,
    gate: Option<f64>,
) -> Comparison {
    let mut out = String::new();
    for (which, name, s) in [("A", a_name, a), ("B", b_name, b)] {
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
    out.push('\n');
    let diffs = differences(a, b);
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

    let in_b: HashMap<Key, &CellSnapshot> = b.cells.iter().map(|c| (key_of(c), c)).collect();
    let in_a: HashMap<Key, &CellSnapshot> = a.cells.iter().map(|c| (key_of(c), c)).collect();
    let both: Vec<_> = a
        .cells_in_table_order()
        .into_iter()
        .filter_map(|ca| in_b.get(&key_of(ca)).map(|cb| (ca, *cb)))
        .collect();
    let mut verdicts: Vec<(&CellSnapshot, Judgement)> = Vec::new();
    if both.is_empty() {
        out.push_str("No cell is in both snapshots.\n");
    } else {
        out.push_str(
            "| per array | threads | median GB/s A | median GB/s B | B/A | best GB/s A | \
             best GB/s B | B/A | cv A | cv B | B/A | verdict | B/A estimate (95 % CI) | p | \
             P(B > A) |\n",
        );
        out.push_str(&format!("|{}\n", "---|".repeat(15)));
        for &(ca, cb) in &both {
            let (fa, fb) = (&ca.figures, &cb.figures);
            let j = judge_cells(ca, cb);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} % | {} % | {} | {} | {} | {} | {} |",
                ca.label.replace('|', "\\|"),
                ca.threads,
                num(Some(fa.median_gbs), 1),
                num(Some(fb.median_gbs), 1),
                ratio(fa.median_gbs, fb.median_gbs),
                num(Some(fa.best_gbs), 1),
                num(Some(fb.best_gbs), 1),
                ratio(fa.best_gbs, fb.best_gbs),
                num(Some(fa.cv * 100.0), 1),
                num(Some(fb.cv * 100.0), 1),
                ratio(fa.cv, fb.cv),
                j.verdict.word(),
                j.ratio.map_or("–".into(), |r| format!(
                    "{:.3} ({:.3}–{:.3})",
                    r.ratio, r.low, r.high
                )),
                j.test.map_or("–".into(), |t| p_value(t.p)),
                j.test.map_or("–".into(), |t| format!("{:.2}", t.effect)),
            );
            verdicts.push((ca, j));
        }
        out.push('\n');
        out.push_str(&summary_line(&verdicts));
        out.push('\n');
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
    let loops: Vec<String> = both
        .iter()
        .filter_map(|(ca, cb)| {
            let (x, y) = (cell_loop(a, ca), cell_loop(b, cb));
            (x != y).then(|| format!("- {}: {x} (A) → {y} (B)", cell_name(&ca.label, ca.threads)))
        })
        .collect();
    // Files from before the choice record none: nothing to say unless one of them has it.
    if both
        .iter()
        .any(|(ca, cb)| ca.choice.is_some() || cb.choice.is_some())
    {
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
    if let Some(gate) = gate {
        out.push('\n');
        out.push_str(&gate_line(&verdicts, gate));
        out.push('\n');
    }
    let only = |cells: &[CellSnapshot], other: &HashMap<Key, _>| {
        cells
            .iter()
            .filter(|c| !other.contains_key(&key_of(c)))
            .map(|c| cell_name(&c.label, c.threads))
            .collect::<Vec<_>>()
    };
    let only_a = only(&a.cells, &in_b);
    let only_b = only(&b.cells, &in_a);
    out.push('\n');
    for (which, list) in [("A", only_a), ("B", only_b)] {
        if list.is_empty() {
            let _ = writeln!(out, "Only in {which}: none.");
        } else {
            let _ = writeln!(out, "Only in {which}: {}.", list.join("; "));
        }
    }
    Comparison {
        text: out,
        slower: gate.map_or(Vec::new(), |g| gate_failures(&verdicts, g)),
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

/// Loads two JSON snapshots and renders their comparison; with `gate` (`--fail-if-slower`),
/// the cells significantly slower by more than that percentage. A directory stands for its
/// newest snapshot (`newest_snapshot`). An unreadable or wrong file gives one line naming it
/// (`Error::Usage`).
pub fn compare(a_path: &Path, b_path: &Path, gate: Option<f64>) -> Result<Comparison> {
    let (a_file, a_name) = snapshot_file(a_path)?;
    let (b_file, b_name) = snapshot_file(b_path)?;
    let a = load_snapshot(&a_file)?;
    let b = load_snapshot(&b_file)?;
    Ok(render_compare(&a, &a_name, &b, &b_name, gate))
}

/// The file a `compare` argument names, and how the comparison names it: a file as given, a
/// directory as its newest snapshot, "DIR/FILE (the newest snapshot in DIR)".
fn snapshot_file(path: &Path) -> Result<(PathBuf, String)> {
    if !path.is_dir() {
        return Ok((path.to_path_buf(), path.display().to_string()));
    }
    let file = newest_snapshot(path)?;
    let name = format!(
        "{} (the newest snapshot in {})",
        file.display(),
        path.display()
    );
    Ok((file, name))
}

/// The newest snapshot in a directory: of its `*.json` files that read as snapshots, the one
/// taken last by the time written in it (`taken`), not by the file's modification time, which a
/// copy or a checkout resets. In a tie (one second), the later export of the two (`-2`). Files
/// that are not snapshots are passed over; a directory without any is the person's to fix
/// (`Error::Usage`).
pub fn newest_snapshot(dir: &Path) -> Result<PathBuf> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::usage(format!("{}: cannot read the directory: {e}", dir.display())))?;
    let mut json: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    // Shorter names first, so that in a tie `NAME-2.json` (written second) comes after
    // `NAME.json`, and `-10` after `-9`.
    json.sort_by(|a, b| (a.as_os_str().len(), a).cmp(&(b.as_os_str().len(), b)));
    let mut newest: Option<(i64, PathBuf)> = None;
    for path in &json {
        let Some(taken) = load_snapshot(path)
            .ok()
            .and_then(|s| parse_rfc3339(&s.taken))
        else {
            continue;
        };
        if newest.as_ref().is_none_or(|(t, _)| taken >= *t) {
            newest = Some((taken, path.clone()));
        }
    }
    newest.map(|(_, p)| p).ok_or_else(|| {
        Error::usage(format!(
            "{}: no stream-top snapshot in this directory ({} .json {} that this stream-top \
             reads as a snapshot); name a snapshot file, or a directory `--export` wrote into",
            dir.display(),
            json.len(),
            if json.len() == 1 {
                "file, not one"
            } else {
                "files, none"
            }
        ))
    })
}

/// A snapshot to measure the live table against (`--baseline A.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub path: PathBuf,
    pub snapshot: Snapshot,
    /// Index into `snapshot.cells` by what the cell measures.
    cells: HashMap<Key, usize>,
}

impl Baseline {
    /// Reads a JSON snapshot; errors are one line naming the file (`Error::Usage`).
    pub fn load(path: &Path) -> Result<Baseline> {
        Ok(Baseline::from_snapshot(path, load_snapshot(path)?))
    }

    pub(crate) fn from_snapshot(path: &Path, snapshot: Snapshot) -> Baseline {
        let mut cells = HashMap::new();
        for (i, c) in snapshot.cells.iter().enumerate() {
            cells.entry(key_of(c)).or_insert(i);
        }
        Baseline {
            path: path.to_path_buf(),
            snapshot,
            cells,
        }
    }

    /// The baseline's cell that measures the same as ours: the set's level (or its size where
    /// it has none), the thread count, and whether it is the rerun row.
    pub fn cell(&self, measure: Measure, threads: usize, rerun: bool) -> Option<&CellSnapshot> {
        let i = *self.cells.get(&(measure, threads, rerun))?;
        self.snapshot.cells.get(i)
    }

    /// The baseline's median for a working-set label (`WorkingSet::label()`) and thread count
    /// (the first run, not the rerun).
    pub fn median_for(&self, set_label: &str, threads: usize) -> Option<f64> {
        self.median_for_cell(set_label, threads, false)
    }

    /// The same, for the rerun row too.
    pub fn median_for_cell(&self, set_label: &str, threads: usize, rerun: bool) -> Option<f64> {
        self.snapshot
            .cell(set_label, threads, rerun)
            .map(|c| c.figures.median_gbs)
    }

    /// A median now against the baseline's: `now / baseline` (1.05 is 5 % faster).
    pub fn change(&self, set_label: &str, threads: usize, median_now: f64) -> Option<f64> {
        self.median_for(set_label, threads)
            .filter(|m| *m > 0.0 && median_now.is_finite())
            .map(|m| median_now / m)
    }
}
