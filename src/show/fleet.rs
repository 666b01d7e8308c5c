//! `stream-top fleet FILES|DIRS…`: reads many nodes' snapshots (in parallel: a fleet is
//! thousands of files), hands them to the fleet rule (`judge::fleet`) and prints its
//! judgement: a summary line first, both rules, then a table per class (Markdown), or JSON or
//! CSV for scripts; `--export-reference` writes each class's medians for `check --against`;
//! `--svg DIR` draws each class's chart into a file of its own.

use crate::app::cli::{FleetArgs, FleetFormat};
use crate::base::error::{Error, Result};
use crate::base::files::{kind_of, replace_atomically};
use crate::base::output;
use crate::base::quote::quote;
use crate::base::time::parse_rfc3339;
use crate::base::units::count;
use crate::judge::confirm::{APART_S, MIN_OCCASIONS};
use crate::judge::fleet::{Cell, CellJudgement, Class, Common, Judgement, Rules, Run, judge};
use crate::show::report::csv::field;
use crate::show::report::json::load_snapshot;
use crate::show::report::printable::{printable, table_cell};
use crate::show::report::svg::fleet_chart;
use crate::show::report::{Snapshot, check_export_dir, make_output_dir};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Runs `fleet`: 0; 1 with `--fail-on-outlier` when a node is an outlier; 3 with
/// `--fail-on-suspect` when a node is a suspect (and, with both flags, no node an outlier).
pub fn run(args: &FleetArgs) -> Result<u8> {
    check_rules(args)?;
    if let Some(dir) = &args.svg {
        check_export_dir(dir).map_err(|e| e.context(&format!("--svg {}", dir.display())))?;
    }
    let files = snapshot_files(&args.paths)?;
    let runs = load_all(&files)?;
    let rules = Rules {
        mads: args.mads,
        min_gap: args.min_gap,
    };
    let judgement = judge(runs, rules);
    if let Some(path) = &args.export_reference {
        write_reference(path, &judgement)?;
    }
    if let Some(dir) = &args.svg {
        write_charts(dir, &judgement)?;
    }
    let text = match args.format {
        FleetFormat::Md => markdown(&judgement),
        FleetFormat::Json => json(&judgement),
        FleetFormat::Csv => csv(&judgement),
    };
    output::stdout(&text)?;
    let outliers = judgement.classes.iter().any(|c| !c.outliers.is_empty());
    let suspects = judgement.classes.iter().any(|c| !c.suspects.is_empty());
    Ok(if args.fail_on_outlier && outliers {
        1
    } else if args.fail_on_suspect && suspects {
        3
    } else {
        0
    })
}

/// The most MADs `--mads` takes: a class's nodes sit within a few MADs of its median, so a
/// rule of more than a hundred could never find a node below it.
const MAX_MADS: f64 = 100.0;

/// Refuses a rule that could not judge: `--mads` above 0 and at most `MAX_MADS`, `--min-gap`
/// above 0 % (a node a hair below would be slow) and below 100 % (no node is that slow).
fn check_rules(args: &FleetArgs) -> Result<()> {
    if !(args.mads > 0.0 && args.mads <= MAX_MADS) {
        return Err(Error::usage(format!(
            "fleet: --mads {}: must be a number above 0 and at most {MAX_MADS}",
            args.mads
        )));
    }
    if !(args.min_gap > 0.0 && args.min_gap < 100.0) {
        return Err(Error::usage(format!(
            "fleet: --min-gap {}: must be a percentage above 0 and below 100",
            args.min_gap
        )));
    }
    Ok(())
}

/// The files the arguments name: a file as given, a directory as every `*.json` in it. A
/// `*.json` entry that is no regular file (a FIFO, a device, a symlink loop) or cannot be
/// looked at is skipped, and said in one line per directory: a node left out unsaid would
/// look like a node that was judged.
fn snapshot_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if !p.is_dir() {
            files.push(p.clone());
            continue;
        }
        let entries = fs::read_dir(p).map_err(|e| {
            Error::usage(format!("{}: cannot read the directory: {e}", p.display()))
        })?;
        let mut json = Vec::new();
        let mut skipped = Vec::new();
        for entry in entries {
            match entry {
                Ok(e) => sort_entry(e.path(), &mut json, &mut skipped),
                Err(e) => skipped.push(format!("an entry ({e})")),
            }
        }
        if !skipped.is_empty() {
            output::say(&skipped_line(p, &skipped));
        }
        if json.is_empty() {
            return Err(Error::usage(format!(
                "{}: no .json snapshot in it",
                p.display()
            )));
        }
        json.sort();
        files.extend(json);
    }
    Ok(files)
}

/// A directory's entry: a regular `*.json` file into `json`, another `*.json` entry into
/// `skipped` with what it is, anything else left alone (a directory holds other files too).
fn sort_entry(path: PathBuf, json: &mut Vec<PathBuf>, skipped: &mut Vec<String>) {
    if path.extension().is_none_or(|x| x != "json") {
        return;
    }
    let name = quote(&path.file_name().unwrap_or_default().to_string_lossy());
    match fs::metadata(&path) {
        Ok(m) if m.is_file() => json.push(path),
        Ok(m) => skipped.push(format!("{name} ({})", kind_of(m.file_type()))),
        Err(e) => skipped.push(format!("{name} ({e})")),
    }
}

/// The most skipped entries a line names; the rest are counted.
const SKIPPED_NAMED: usize = 5;

/// "fleet: DIR: skipped 3 entries, no snapshot read: a.json (a FIFO), …".
fn skipped_line(dir: &Path, skipped: &[String]) -> String {
    let mut line = format!(
        "fleet: {}: skipped {}, no snapshot read: {}",
        quote(&dir.display().to_string()),
        match skipped.len() {
            1 => "1 entry".to_string(),
            n => format!("{n} entries"),
        },
        skipped[..skipped.len().min(SKIPPED_NAMED)].join(", ")
    );
    if skipped.len() > SKIPPED_NAMED {
        let _ = write!(line, " and {} more", skipped.len() - SKIPPED_NAMED);
    }
    line
}

/// Every file read and turned into a run, on all CPUs; the first file that is not a snapshot
/// is the person's to fix (exit 2), named.
fn load_all(files: &[PathBuf]) -> Result<Vec<Run>> {
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = files.len().div_ceil(workers).max(1);
    let parts: Vec<Result<Vec<Run>>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|f| load_run(f)).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::usage("fleet: a reader failed")))
            })
            .collect()
    });
    let mut runs = Vec::with_capacity(files.len());
    for p in parts {
        runs.extend(p?);
    }
    Ok(runs)
}

/// A snapshot as a run, its every string made printable first: names from a file reach the
/// tables, the summary, the CSV, the charts and the commands a suspect is told to run.
fn load_run(path: &Path) -> Result<Run> {
    let snapshot = load_snapshot(path)?;
    let snapshot = snapshot.printable();
    refuse_repeated_cells(&snapshot, path)?;
    Ok(run_of(&snapshot, path))
}

/// One snapshot is one run, each cell in it once: a file holding a cell twice (by op, set and
/// threads) was not written by stream-top, and counting its copies as runs would let one file
/// outvote a fleet.
fn refuse_repeated_cells(s: &Snapshot, path: &Path) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for (i, c) in s.cells.iter().enumerate().filter(|(_, c)| !c.rerun) {
        if let Some(first) = seen.insert((&c.op, &c.set_name, c.threads), i) {
            return Err(Error::usage(format!(
                "{}: not a valid stream-top snapshot: cells[{i}] repeats cells[{first}] \
                 ({} {} × {}); a snapshot holds each cell once",
                printable(&path.display().to_string()),
                c.op,
                c.set_name,
                c.threads
            )));
        }
    }
    Ok(())
}

/// A snapshot as the fleet rule sees it: its node, fingerprint and each cell's repetitions.
pub fn run_of(s: &Snapshot, path: &Path) -> Run {
    let fingerprint = s.info.fingerprint.clone();
    Run {
        source: printable(&path.display().to_string()).into_owned(),
        node: fingerprint
            .as_ref()
            .map_or_else(|| s.info.hostname.clone(), |f| f.node.clone()),
        fingerprint,
        cells: s
            .cells
            .iter()
            .filter(|c| !c.rerun)
            .map(|c| {
                let cell = Cell {
                    op: c.op.clone(),
                    set: c.set_name.clone(),
                    threads: c.threads,
                };
                (cell, c.repetitions.clone(), c.figures.disturbed_rounds)
            })
            .collect(),
        latency: s
            .latency
            .iter()
            .filter(|c| c.cpu_node.is_none())
            .map(|c| (c.set_name.clone(), c.median_ns))
            .collect(),
        span: span_of(s),
        command: s.info.command_line.clone(),
    }
}

/// When a snapshot's run was taken: its start to its snapshot (or to its start plus its
/// seconds where the snapshot's own time does not parse). None without a start.
fn span_of(s: &Snapshot) -> Option<(i64, i64)> {
    let start = parse_rfc3339(&s.info.started)?;
    let end = parse_rfc3339(&s.taken)
        .or_else(|| Some(start + i64::try_from(s.run_seconds?).ok()?))
        .unwrap_or(start);
    Some((start, end.max(start)))
}

/// "−31 %" for a ratio of 0.69.
fn percent(ratio: f64) -> String {
    let p = (ratio - 1.0) * 100.0;
    if p < 0.0 {
        format!("−{:.0} %", -p)
    } else {
        format!("+{p:.0} %")
    }
}

/// Each outlier as the summary names it: its worst cell and why.
fn outlier_phrases(j: &Judgement) -> Vec<String> {
    let mut out = Vec::new();
    for class in &j.classes {
        for (node, why) in &class.outliers {
            let worst = class
                .cells
                .iter()
                .flat_map(|c| c.nodes.iter().map(move |s| (c, s)))
                .filter(|(_, s)| &s.node == node && s.outlier)
                .min_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio));
            if let Some((c, s)) = worst {
                out.push(format!(
                    "{node} {} {} ({})",
                    c.cell,
                    percent(s.ratio),
                    why.join("; ")
                ));
            }
        }
    }
    out
}

/// "412 nodes in 3 classes; 2 outliers: …".
pub fn summary(j: &Judgement) -> String {
    let nodes: usize = j.classes.iter().map(|c| c.nodes.len()).sum::<usize>() + j.alone.len();
    let classes = j.classes.len() + j.alone.len();
    let outliers = outlier_phrases(j);
    let mut line = format!(
        "{} in {}; {}",
        count(nodes, "node"),
        count(classes, "class"),
        count(outliers.len(), "outlier")
    );
    if !outliers.is_empty() {
        let _ = write!(line, ": {}", outliers.join(", "));
    }
    let suspects: Vec<&str> = j
        .classes
        .iter()
        .flat_map(|c| c.suspects.iter().map(|s| s.node.as_str()))
        .collect();
    if !suspects.is_empty() {
        let _ = write!(
            line,
            "; {} (run again at another time): {}",
            count(suspects.len(), "suspect"),
            suspects.join(", ")
        );
    }
    if let Some(d) = detectable_range(j) {
        let _ = write!(line, "; detectable: a node {d} below its class");
    }
    line
}

/// "≥ 5 %", or "≥ 5–18 % (by cell)" where the cells' least detectable slowdowns differ.
fn detectable_range(j: &Judgement) -> Option<String> {
    let all = j
        .classes
        .iter()
        .flat_map(|c| c.cells.iter().map(|x| x.detectable));
    let (lo, hi) = all.fold(None, |acc: Option<(f64, f64)>, d| {
        Some(acc.map_or((d, d), |(lo, hi)| (lo.min(d), hi.max(d))))
    })?;
    let (lo, hi) = (format!("{lo:.0}"), format!("{hi:.0}"));
    Some(if lo == hi {
        format!("≥ {lo} %")
    } else {
        format!("≥ {lo}–{hi} % (by cell)")
    })
}

fn rules_line(r: &Rules) -> String {
    format!(
        "An outlier is below its class median by more than {} median absolute deviations and by \
         more than {} % (or {} × the class's run-to-run spread, where wider), on every one of \
         {} or more occasions (runs at least {} minutes apart); a node slow on fewer occasions \
         is a suspect, to run again at another time.",
        r.mads,
        r.min_gap,
        crate::judge::confirm::SPREAD_K,
        MIN_OCCASIONS,
        APART_S / 60
    )
}

fn markdown(j: &Judgement) -> String {
    let mut out = format!("{}\n\n{}\n", summary(j), rules_line(&j.rules));
    for c in &j.clashes {
        let _ = writeln!(out, "Name clash: {c}.");
    }
    for (node, class) in &j.alone {
        let _ = writeln!(
            out,
            "{node}: alone in class {class}, no peers (not judged)."
        );
    }
    for class in &j.classes {
        class_table(&mut out, class);
    }
    out
}

fn class_table(out: &mut String, class: &Class) {
    let _ = write!(
        out,
        "\n## Class {} · {} · {} nodes\n",
        class.class,
        class.cpu_model,
        class.nodes.len()
    );
    for (node, why) in &class.outliers {
        let _ = writeln!(out, "\nOutlier {node}: {}.", why.join("; "));
    }
    if !class.suspects.is_empty() {
        let _ = writeln!(
            out,
            "\n### Suspects: slow, but not on every one of {MIN_OCCASIONS} or more occasions; not accused\n"
        );
    }
    for s in &class.suspects {
        let _ = writeln!(
            out,
            "- {}: {}. Run again at another time ({} minutes or more after this run), then \
             judge all its snapshots together: `{}`",
            s.node,
            s.why.join("; "),
            APART_S / 60,
            s.again
        );
    }
    for c in &class.cells {
        let _ = write!(
            out,
            "\n{}: median {:.2} GB/s, MAD {:.2} GB/s, {}\n\n\
             | node | GB/s | runs | × median | MADs | outlier |\n|---|---:|---:|---:|---:|---|\n",
            c.cell,
            c.median,
            c.mad,
            cell_rule(c)
        );
        let mut rows: Vec<_> = c.nodes.iter().collect();
        rows.sort_by(|a, b| a.ratio.total_cmp(&b.ratio).then(a.node.cmp(&b.node)));
        for s in rows {
            let _ = writeln!(
                out,
                "| {} | {:.2} | {} | {:.3} | {:.1} | {} |",
                table_cell(&s.node),
                s.gbs,
                s.repetitions,
                s.ratio,
                s.distance,
                verdict_word(s.outlier, s.suspect, s.slow_occasions, s.occasions)
            );
        }
    }
}

/// "run-to-run spread 0.4 % (6 nodes), least gap 5 %, detectable: a node ≥ 5 % below".
fn cell_rule(c: &CellJudgement) -> String {
    let from = if c.spread_nodes > 0 {
        count(c.spread_nodes, "node").to_string()
    } else {
        "between nodes: no node ran twice".to_string()
    };
    format!(
        "run-to-run spread {:.1} % ({from}), least gap {:.1} %, detectable: a node ≥ {:.1} % \
         below",
        c.spread * 100.0,
        c.gap,
        c.detectable
    )
}

/// The table's last column: "**yes**" for an outlier, "suspect (1 of 1 occasions)".
fn verdict_word(outlier: bool, suspect: bool, slow: usize, occasions: usize) -> String {
    if outlier {
        "**yes**".to_string()
    } else if suspect {
        format!("suspect (slow on {slow} of {occasions} occasions)")
    } else {
        String::new()
    }
}

fn json(j: &Judgement) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        summary: String,
        #[serde(flatten)]
        judgement: &'a Judgement,
    }
    let out = Out {
        summary: summary(j),
        judgement: j,
    };
    serde_json::to_string_pretty(&out).expect("plain data serialises") + "\n"
}

fn csv(j: &Judgement) -> String {
    let mut out = String::from(
        "class,op,set,threads,node,gbs,runs,median_gbs,mad_gbs,ratio,mads,outlier,why,suspect,\
         occasions,detectable_pct\n",
    );
    for class in &j.classes {
        for c in &class.cells {
            for s in &c.nodes {
                let why = class
                    .outliers
                    .iter()
                    .find(|(n, _)| *n == s.node && s.outlier)
                    .map(|(_, w)| w.join("; "))
                    .or_else(|| {
                        let mine = class.suspects.iter().find(|x| x.node == s.node);
                        mine.filter(|_| s.suspect).map(|x| x.why.join("; "))
                    })
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{:.3},{},{:.3},{:.3},{:.4},{:.2},{},{},{},{},{:.1}",
                    class.class,
                    field(&c.cell.op),
                    field(&c.cell.set),
                    c.cell.threads,
                    field(&s.node),
                    s.gbs,
                    s.repetitions,
                    c.median,
                    c.mad,
                    s.ratio,
                    s.distance,
                    s.outlier,
                    field(&why),
                    s.suspect,
                    s.occasions,
                    c.detectable
                );
            }
        }
    }
    out
}

/// One class's medians, the reference `check --against` reads. The latency and the common
/// fingerprint came later: a reference written before has neither, and still reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub(crate) class: String,
    cpu_model: String,
    nodes: usize,
    /// (op, set, threads, median GB/s).
    pub(crate) cells: Vec<(String, String, usize, f64)>,
    /// (set, median idle latency in ns per load), from the latency runs among the snapshots.
    #[serde(default)]
    pub(crate) latency: Vec<(String, f64)>,
    /// What the class's nodes commonly are, for `check` to name how this node differs.
    #[serde(default)]
    pub(crate) common: Option<Common>,
}

fn write_reference(path: &Path, j: &Judgement) -> Result<()> {
    let refs: Vec<Reference> = j
        .classes
        .iter()
        .map(|c| Reference {
            class: c.class.clone(),
            cpu_model: c.cpu_model.clone(),
            nodes: c.nodes.len(),
            cells: c
                .cells
                .iter()
                .map(|x| {
                    (
                        x.cell.op.clone(),
                        x.cell.set.clone(),
                        x.cell.threads,
                        x.median,
                    )
                })
                .collect(),
            latency: c.latency.clone(),
            common: Some(c.common.clone()),
        })
        .collect();
    let text = serde_json::to_string_pretty(&refs).expect("plain data serialises") + "\n";
    fs::write(path, text)
        .map_err(|e| Error::usage(format!("{}: cannot write: {e}", path.display())))
}

/// `class-CLASS.svg`; runs without a fingerprint (class `–`) are `class-none.svg`.
fn chart_name(class: &Class) -> String {
    let safe = class.class.chars().all(|c| c.is_ascii_alphanumeric());
    format!("class-{}.svg", if safe { &class.class } else { "none" })
}

/// Each judged class's chart into `dir` (made when missing), each file replaced atomically;
/// each path written is said on stderr, as `--export` says its files.
fn write_charts(dir: &Path, j: &Judgement) -> Result<()> {
    make_output_dir(dir)?;
    for class in &j.classes {
        let path = dir.join(chart_name(class));
        replace_atomically(&path, fleet_chart(class, j.rules).as_bytes())?;
        output::stderr(&format!("stream-top: wrote {}", path.display()));
    }
    Ok(())
}
