//! `stream-top check`: a quick health check for schedulers (a Slurm prolog, a Kubernetes
//! Job). One short all-core triad on the DRAM set, run as a child process of this binary (as
//! calibrate runs its repetitions), set against a reference: a snapshot's cell, the node's
//! class median that `fleet --export-reference` wrote, or `--min-gbs`. One line, ok or SLOW;
//! exit 0 ok, 1 SLOW, 2 when it cannot check (a missing reference, a failed run).

use crate::app::cli::CheckArgs;
use crate::base::error::{Error, Result};
use crate::base::output;
use crate::show::fleet::Reference;
use crate::show::report::json::{from_json, load_snapshot};
use crate::show::report::{CellSnapshot, Snapshot};
use std::path::Path;
use std::process::{Command, Stdio};

/// What the run is set against: GB/s and its name in the line.
struct Against {
    gbs: f64,
    name: String,
}

/// Runs `check`: the exit code (0 ok, 1 SLOW); its own failures are errors (exit 2).
pub fn run(args: &CheckArgs, root: &Path) -> Result<u8> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    // The reference is read first: a missing one is found before anything is measured.
    let reference = args.against.as_deref().map(read_reference).transpose()?;
    let snap = measure(args, threads, root)?;
    let cell =
        cell_of(&snap, threads).ok_or_else(|| Error::usage("check: the run measured no cell"))?;
    let gbs = cell.figures.median_gbs;
    let against = match (args.min_gbs, reference) {
        (Some(min), _) => Against {
            gbs: min,
            name: "--min-gbs".into(),
        },
        (None, Some(r)) => r.against(&snap, &cell.set_name, threads)?,
        (None, None) => return Err(Error::usage("check: give --against FILE or --min-gbs X")),
    };
    let ratio = gbs / against.gbs;
    let (slow, set_against) = if args.min_gbs.is_some() {
        let slow = gbs < against.gbs;
        let sign = if slow { "<" } else { "≥" };
        (slow, format!("{sign} {} {}", against.gbs, against.name))
    } else {
        let slow = ratio < 1.0 - args.max_gap / 100.0;
        (slow, format!("{ratio:.2} × {}", against.name))
    };
    output::stdout(&format!(
        "{}: {} × {threads} = {gbs:.1} GB/s, {set_against}\n",
        if slow { "SLOW" } else { "ok" },
        cell.set_name,
    ))?;
    Ok(u8::from(slow))
}

/// The short run: this binary, headless, every CPU, the DRAM set, 5 rounds.
fn measure(args: &CheckArgs, threads: usize, root: &Path) -> Result<Snapshot> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: "check: find this program's own file".into(),
        source,
    })?;
    let threads = threads.to_string();
    let out = Command::new(&exe)
        .args([
            "--headless",
            "--format",
            "json",
            "--rounds",
            "5",
            "--round-ms",
            "20",
        ])
        .args(["--threads", &threads, "--sets", &args.set])
        .arg("--root")
        .arg(root)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Io {
            what: format!("check: start {}", exe.display()),
            source,
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Error::usage(format!(
            "check: the run failed ({}): {}",
            out.status,
            err.lines().last().unwrap_or("")
        )));
    }
    from_json(&String::from_utf8_lossy(&out.stdout), Path::new("check"))
}

/// The triad cell at `threads` (the run has one set).
fn cell_of(s: &Snapshot, threads: usize) -> Option<&CellSnapshot> {
    s.cells
        .iter()
        .find(|c| !c.rerun && c.threads == threads && c.op == "triad")
}

/// A reference file: `fleet --export-reference`'s classes, or a snapshot.
enum ReferenceFile {
    Classes(Vec<Reference>, String),
    Snapshot(Box<Snapshot>, String),
}

fn read_reference(path: &Path) -> Result<ReferenceFile> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("check: {name}: cannot read: {e}")))?;
    if let Ok(classes) = serde_json::from_str::<Vec<Reference>>(&text) {
        return Ok(ReferenceFile::Classes(classes, name));
    }
    Ok(ReferenceFile::Snapshot(
        Box::new(load_snapshot(path)?),
        name,
    ))
}

impl ReferenceFile {
    /// The reference figure for this run's set and thread count, or why there is none.
    fn against(self, run: &Snapshot, set: &str, threads: usize) -> Result<Against> {
        match self {
            ReferenceFile::Snapshot(s, name) => {
                let cell = s.cells.iter().find(|c| {
                    !c.rerun && c.set_name == set && c.threads == threads && c.op == "triad"
                });
                cell.map(|c| Against {
                    gbs: c.figures.median_gbs,
                    name: format!("{name} ({set} × {threads})"),
                })
                .ok_or_else(|| {
                    Error::usage(format!("check: {name} has no triad {set} × {threads} cell"))
                })
            }
            ReferenceFile::Classes(classes, name) => {
                let class = run
                    .info
                    .fingerprint
                    .as_ref()
                    .map_or("–".into(), |f| f.class());
                let found = classes.iter().filter(|r| r.class == class).find_map(|r| {
                    r.cells
                        .iter()
                        .find(|(op, s, t, _)| op == "triad" && s == set && *t == threads)
                        .map(|c| c.3)
                });
                found
                    .map(|gbs| Against {
                        gbs,
                        name: format!("class {class} reference"),
                    })
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "check: {name} has no reference for class {class} at triad {set} × {threads}"
                        ))
                    })
            }
        }
    }
}
