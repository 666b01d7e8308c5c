//! `stream-top fleet FILES|DIRS…`: reads many nodes' snapshots (in parallel: a fleet is
//! thousands of files), hands them to the fleet rule (`judge::fleet`) and prints its
//! judgement: a summary line first, both rules, then a table per class (Markdown), or JSON or
//! CSV for scripts; `--export-reference` writes each class's medians for `check --against`;
//! `--svg DIR` draws each class's chart into a file of its own.

use crate::app::cli::{FleetArgs, FleetFormat};
use crate::base::error::{Error, Result};
use crate::base::files::replace_atomically;
use crate::base::output;
use crate::base::units::count;
use crate::judge::fleet::{Cell, Class, Common, Judgement, Rules, Run, judge};
use crate::show::report::csv::field;
use crate::show::report::json::load_snapshot;
use crate::show::report::svg::fleet_chart;
use crate::show::report::{Snapshot, check_export_dir, make_output_dir};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Runs `fleet`: 0, or 1 with `--fail-on-outlier` when a node is an outlier.
pub fn run(args: &FleetArgs) -> Result<u8> {
    if !(args.mads.is_finite() && args.mads > 0.0) {
        return Err(Error::usage(format!(
            "fleet: --mads {}: must be a number above 0",
            args.mads
        )));
    }
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
    Ok(u8::from(args.fail_on_outlier && outliers))
}

/// The files the arguments name: a file as given, a directory as every `*.json` in it.
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
        let mut json: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|f| f.extension().is_some_and(|x| x == "json") && f.is_file())
            .collect();
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

fn load_run(path: &Path) -> Result<Run> {
    Ok(run_of(&load_snapshot(path)?, path))
}

/// A snapshot as the fleet rule sees it: its node, fingerprint and each cell's repetitions.
pub fn run_of(s: &Snapshot, path: &Path) -> Run {
    let fingerprint = s.info.fingerprint.clone();
    Run {
        source: path.display().to_string(),
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
    }
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
    line
}

fn rules_line(r: &Rules) -> String {
    format!(
        "An outlier is below its class median by more than {} median absolute deviations and by \
         more than {} %.",
        r.mads, r.min_gap
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
    for c in &class.cells {
        let _ = write!(
            out,
            "\n{}: median {:.2} GB/s, MAD {:.2} GB/s\n\n\
             | node | GB/s | runs | × median | MADs | outlier |\n|---|---:|---:|---:|---:|---|\n",
            c.cell, c.median, c.mad
        );
        let mut rows: Vec<_> = c.nodes.iter().collect();
        rows.sort_by(|a, b| a.ratio.total_cmp(&b.ratio).then(a.node.cmp(&b.node)));
        for s in rows {
            let _ = writeln!(
                out,
                "| {} | {:.2} | {} | {:.3} | {:.1} | {} |",
                s.node,
                s.gbs,
                s.repetitions,
                s.ratio,
                s.distance,
                if s.outlier { "**yes**" } else { "" }
            );
        }
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
        "class,op,set,threads,node,gbs,runs,median_gbs,mad_gbs,ratio,mads,outlier,why\n",
    );
    for class in &j.classes {
        for c in &class.cells {
            for s in &c.nodes {
                let why = class
                    .outliers
                    .iter()
                    .find(|(n, _)| *n == s.node && s.outlier)
                    .map(|(_, w)| w.join("; "))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{:.3},{},{:.3},{:.3},{:.4},{:.2},{},{}",
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
                    field(&why)
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
