//! `stream-top check`: a quick health check for schedulers (a Slurm prolog, a Kubernetes
//! Job). One short all-core triad on the DRAM set, then the idle latency at that set, each run
//! as a child process of this binary (as calibrate runs its repetitions; one after the other,
//! so that neither disturbs the other), set against a reference: a snapshot's cell, the
//! node's class median that `fleet --export-reference` wrote, or `--min-gbs`. A figure slow
//! at first is measured again, time allowing: SLOW only when both readings are slow, UNSURE
//! when the second is not (or there was no time for it). A triad whose rounds were disturbed
//! is measured again, time allowing; disturbed in both readings (another process held its
//! CPUs) it is UNSURE whatever its figure, and says what disturbed it (`disturbed`). One line;
//! a SLOW line names how this node's fingerprint differs from the reference's (in the fleet judgement's words). Exit 0
//! ok, 1 SLOW, 3 UNSURE, 2 when it cannot check (a missing reference, a reference without
//! this node's class, a failed run).

use crate::app::cli::CheckArgs;
use crate::base::error::{Error, Result};
use crate::base::output;
use crate::base::units::{format_bytes, threads_phrase};
use crate::engine::kernel::Isa;
use crate::engine::latency::chase_bytes;
use crate::engine::plan::{Level, MemoryBudget, SetSpec, WorkingSet, size_sets};
use crate::judge::fleet::Common;
use crate::machine::fingerprint::{self, Fingerprint, Known};
use crate::machine::topology::Topology;
use crate::show::fleet::Reference;
use crate::show::report::json::{from_json, read_snapshot_text};
use crate::show::report::{CellSnapshot, Snapshot};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod disturbed;

/// What the run is set against.
struct Against {
    /// GB/s, and its name in the line.
    gbs: f64,
    name: String,
    /// A floor (`--min-gbs`) that passes at or above it, not a reference to a share of.
    floor: bool,
    /// The reference's idle latency at the set, ns per load, where it has one.
    latency_ns: Option<f64>,
    /// What the reference's node (or class) is, to name how this node differs; None with
    /// `--min-gbs`, and for a reference written before references carried it.
    common: Option<Common>,
}

/// Runs `check`: the exit code (0 ok, 1 SLOW, 3 UNSURE); its own failures are errors (exit 2).
pub fn run(args: &CheckArgs, root: &Path) -> Result<u8> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    // Everything a person can get wrong is refused before anything is measured: the plan names
    // the cell the reference must hold, and the reference is read and that cell (with this
    // node's class) found in it first.
    let topo = Topology::read(root)?;
    let node = fingerprint::read(root, "", &topo.model, topo.packages());
    let plan = Plan::new(args, &topo, threads)?;
    let against = match (&args.against, args.min_gbs) {
        (Some(path), None) => read_reference(path, &node.class())?.against(&plan.set, threads)?,
        (None, Some(min)) => Against {
            gbs: min,
            name: "--min-gbs".into(),
            floor: true,
            latency_ns: None,
            common: None,
        },
        _ => return Err(Error::usage("check: give --against FILE or --min-gbs X")),
    };
    let budget = Duration::from_secs(args.seconds.unwrap_or(CHECK_SECONDS).into());
    let started = Instant::now();
    output::stderr(&plan.line());
    let left = |took: Duration| started.elapsed() + took <= budget;
    let triad = calm_reading(&plan, root, &left)?;
    let cell = triad.cell;
    let before_latency = started.elapsed();
    let latency = measure_latency(&plan, root);
    let took = (triad.took, started.elapsed() - before_latency);
    // A figure slow at first is measured again before check says SLOW, where the time left
    // allows a second reading as long as the first: SLOW only when both readings agree.
    let mut verdict = Verdict::of(args.max_gap, cell.figures.median_gbs, &latency, &against);
    let max_gap = args.max_gap;
    if verdict.bandwidth_slow {
        verdict.bandwidth_again = if left(took.0) {
            let gbs = match measure_cell(&plan, root) {
                Ok(c) => Known::Value(c.figures.median_gbs),
                Err(e) => Known::Missing(e.to_string()),
            };
            Second::of(gbs, |g| bandwidth_is_slow(max_gap, g, &against))
        } else {
            Second::no_time(budget)
        };
    }
    if verdict.latency_slow {
        verdict.latency_again = if left(took.1) {
            Second::of(measure_latency(&plan, root), |ns| {
                latency_is_slow(max_gap, ns, &against)
            })
        } else {
            Second::no_time(budget)
        };
    }
    verdict.disturbed = triad.disturbed;
    verdict.measured_again = triad.measured_again;
    // The line is a scheduler's drain reason: one line, whatever the reference's names hold.
    output::stdout(&format!(
        "{}\n",
        crate::base::quote::printable(&verdict.line(&cell, &latency, &against, &node))
    ))?;
    Ok(verdict.exit_code())
}

/// The most check's three `dram` arrays hold in all: STREAM's rule (three arrays of 4 × all
/// last-level cache) unless that is more. check is a scheduler's prolog and must end within
/// [`CHECK_SECONDS`] on any machine, and what grows with the set is touching it: the triad's
/// first touch of its arrays, and the latency chase's buffer (as large), built, walked and
/// validated one line at a time at DRAM latency. On the 2-vCPU KVM Xeon with a 260 MiB L3,
/// 768 MiB took 2.5 s in the triad's process and 3.5 s in the chase's, where STREAM's rule
/// (3 GiB) took 17 s in all; more CPUs touch their share sooner, and a line of the chase costs
/// a DRAM latency everywhere.
pub(crate) const CHECK_ARRAYS_MAX: u64 = 768 << 20;

/// The wall time check keeps to, for its line on stderr.
const CHECK_SECONDS: u32 = 10;

/// What check measures, decided before anything is measured: the working set (whose name the
/// reference's cell must have), the thread count (every online CPU), the triad's rounds, and,
/// where STREAM's rule for `dram` is more than check's time allows, the memory cap that holds
/// its children's arrays (and the chase's buffer) to [`CHECK_ARRAYS_MAX`].
struct Plan {
    /// `--set` as given (`dram` unless a test asks), for the children.
    set_text: String,
    set: WorkingSet,
    threads: usize,
    rounds: u32,
    /// `--max-memory` for the children, bytes; None where the set is sized by its own rule.
    max_memory: Option<u64>,
    /// The set by its own rule, where the cap changed it.
    rule: Option<WorkingSet>,
    /// The bytes of the last-level cache, for the line that says what check chose.
    llc: Option<u64>,
}

impl Plan {
    /// The plan for `args` on this machine; a set that is not one working set, or that this
    /// machine lacks (a cache level it has not), is refused.
    fn new(args: &CheckArgs, topo: &Topology, threads: usize) -> Result<Plan> {
        let spec = SetSpec::parse(&args.set).map_err(|e| e.context("check: --set"))?;
        // Sized here for its name and check's bound; each child sizes it again against the
        // memory it finds.
        let size = |budget: MemoryBudget| -> Result<WorkingSet> {
            let mut sets = size_sets(std::slice::from_ref(&spec), topo, &budget, threads)?;
            match sets.len() {
                1 => Ok(sets.remove(0)),
                _ => Err(Error::usage(format!(
                    "check: --set {}: one working set, not a range",
                    args.set
                ))),
            }
        };
        let unbounded = MemoryBudget::new(u64::MAX, None);
        let rule = size(unbounded)?;
        let set = if spec == SetSpec::Level(Level::Dram) {
            size(unbounded.capped(Some(CHECK_ARRAYS_MAX)))?
        } else {
            rule.clone()
        };
        let capped = set.size != rule.size;
        Ok(Plan {
            set_text: args.set.clone(),
            set,
            threads,
            rounds: args.rounds,
            max_memory: capped.then_some(CHECK_ARRAYS_MAX),
            rule: capped.then_some(rule),
            llc: topo.last_level().map(|l| topo.cache_total(l)),
        })
    }

    /// The flags that give a child the plan's set: `--sets`, and the cap where there is one.
    fn set_flags(&self) -> Vec<String> {
        let mut flags = vec!["--sets".to_string(), self.set_text.clone()];
        if let Some(cap) = self.max_memory {
            flags.extend(["--max-memory".to_string(), cap.to_string()]);
        }
        flags
    }

    /// Bytes of each of the triad's three arrays.
    fn array_bytes(&self) -> u64 {
        self.set.array_bytes(self.threads)
    }

    /// Bytes of the latency chase's buffer.
    fn chase_bytes(&self) -> u64 {
        chase_bytes(&self.set)
    }

    /// What check chose, for stderr before it measures: "check: the triad on 2 threads, 5
    /// rounds over three arrays of 256 MiB (dram), then the idle latency over 768 MiB", and
    /// where the cap changed the set, why, and what that costs the figures.
    fn line(&self) -> String {
        let mut line = format!(
            "stream-top: check: the triad on {}, {} rounds over three arrays of {} ({}), then the \
             idle latency over {}",
            threads_phrase(self.threads),
            self.rounds,
            format_bytes(self.array_bytes()),
            self.set.name,
            format_bytes(self.chase_bytes())
        );
        let Some(rule) = &self.rule else {
            return line;
        };
        line.push_str(&format!(
            "; held to check's {CHECK_SECONDS} s: STREAM's rule is {} each",
            format_bytes(rule.array_bytes(self.threads))
        ));
        let llc = self.llc.unwrap_or(0);
        let all = 3 * self.array_bytes();
        if self.set.level != Some(Level::Dram) {
            line.push_str(&format!(
                ", and the three fit in the {} last-level cache: both figures are that cache's, \
                 not memory's",
                format_bytes(llc)
            ));
        } else if llc > 0 {
            line.push_str(&format!(
                ", and at {:.1} × the {} last-level cache, not 4 ×, the figures may include \
                 cache hits (the bandwidth a little higher, the latency lower than a full dram \
                 run's)",
                all as f64 / llc as f64,
                format_bytes(llc)
            ));
        }
        line
    }
}

/// Which of the two figures is past the reference at the first reading, and what a second
/// reading of each said.
struct Verdict {
    gbs: f64,
    bandwidth_slow: bool,
    latency_slow: bool,
    bandwidth_again: Second,
    latency_again: Second,
    /// What disturbed the triad, where its rounds were disturbed.
    disturbed: Option<disturbed::Disturbed>,
    /// Whether the triad judged is a second reading, the first having been disturbed.
    measured_again: bool,
}

/// Bandwidth below `--min-gbs`, or below the reference by more than `--max-gap`.
fn bandwidth_is_slow(max_gap: f64, gbs: f64, against: &Against) -> bool {
    if against.floor {
        gbs < against.gbs
    } else {
        gbs / against.gbs < 1.0 - max_gap / 100.0
    }
}

/// Latency above the reference's by more than `--max-gap`; never without a reference latency.
fn latency_is_slow(max_gap: f64, ns: f64, against: &Against) -> bool {
    against
        .latency_ns
        .is_some_and(|r| ns / r > 1.0 + max_gap / 100.0)
}

/// What a second reading said of a figure that the first found slow.
#[derive(Debug, Clone, PartialEq)]
enum Second {
    /// The first reading was not slow: nothing to confirm.
    Unasked,
    /// Slow again, at this figure (GB/s, or ns for the latency).
    Agrees(f64),
    /// Not slow the second time, at this figure.
    Differs(f64),
    /// No second reading, and why.
    Missing(String),
}

impl Second {
    /// The second reading `figure` (or its failure) judged by `slow`.
    fn of(figure: Known<f64>, slow: impl Fn(f64) -> bool) -> Second {
        match figure {
            Known::Value(f) if slow(f) => Second::Agrees(f),
            Known::Value(f) => Second::Differs(f),
            Known::Missing(why) => Second::Missing(format!("the second reading failed: {why}")),
        }
    }

    /// No time left for a second reading as long as the first.
    fn no_time(budget: Duration) -> Second {
        Second::Missing(format!(
            "no time for a second reading within check's {} s",
            budget.as_secs()
        ))
    }

    /// ", slow again at 12.1 GB/s" and the like, for the line (nothing when unasked).
    fn words(&self, what: &str, unit: impl Fn(f64) -> String) -> String {
        match self {
            Second::Unasked => String::new(),
            Second::Agrees(f) => format!(", {what}slow again at {}", unit(*f)),
            Second::Differs(f) => format!(", {what}not slow a second time ({})", unit(*f)),
            Second::Missing(why) => format!(", {what}not measured again ({why})"),
        }
    }
}

impl Verdict {
    /// The verdict of the first reading: which figure is slow (see [`bandwidth_is_slow`] and
    /// [`latency_is_slow`]), with no second reading yet.
    fn of(max_gap: f64, gbs: f64, latency: &Known<f64>, against: &Against) -> Verdict {
        Verdict {
            gbs,
            bandwidth_slow: bandwidth_is_slow(max_gap, gbs, against),
            latency_slow: latency
                .value()
                .is_some_and(|&ns| latency_is_slow(max_gap, ns, against)),
            bandwidth_again: Second::Unasked,
            latency_again: Second::Unasked,
            disturbed: None,
            measured_again: false,
        }
    }

    /// Which figures both readings found slow.
    fn confirmed(&self) -> (bool, bool) {
        (
            self.bandwidth_slow && matches!(self.bandwidth_again, Second::Agrees(_)),
            self.latency_slow && matches!(self.latency_again, Second::Agrees(_)),
        )
    }

    /// 0 ok, 1 SLOW (a figure slow in both readings), 3 UNSURE (slow at first only, not
    /// measured again, or not slow but measured through contention).
    fn exit_code(&self) -> u8 {
        match self.confirmed() {
            (false, false) if self.bandwidth_slow || self.latency_slow => 3,
            // An ok taken through contention says nothing of the node: unsure.
            (false, false) if self.disturbed.is_some() => 3,
            (false, false) => 0,
            _ => 1,
        }
    }

    /// "ok: dram × 2 = 12.3 GB/s, 0.98 × class 1a2b3c4d reference, latency 92 ns (1.01 ×
    /// reference)"; a SLOW line says which figure both readings found slow (the bandwidth
    /// unless it says latency), what the second reading was, and, against a reference, how
    /// this node's fingerprint differs from it; an UNSURE line says what the second reading
    /// found, or why there was none.
    fn line(
        &self,
        cell: &CellSnapshot,
        latency: &Known<f64>,
        a: &Against,
        node: &Fingerprint,
    ) -> String {
        let word = match self.confirmed() {
            _ if self.exit_code() == 3 => "UNSURE",
            (false, false) => "ok",
            (true, false) => "SLOW",
            (false, true) => "SLOW latency",
            (true, true) => "SLOW bandwidth and latency",
        };
        let gbs = self.gbs;
        let set_against = if a.floor {
            let sign = if self.bandwidth_slow { "<" } else { "≥" };
            format!("{sign} {} {}", a.gbs, a.name)
        } else {
            format!("{:.2} × {}", gbs / a.gbs, a.name)
        };
        let latency = match (latency, a.latency_ns) {
            (Known::Value(ns), Some(r)) => {
                format!("latency {} ({:.2} × reference)", nanoseconds(*ns), ns / r)
            }
            (Known::Value(ns), None) => format!("latency {}", nanoseconds(*ns)),
            (Known::Missing(why), _) => format!("latency – ({why})"),
        };
        let mut line = format!(
            "{word}: {} × {} = {gbs:.1} GB/s, {set_against}, {latency}{}{}",
            cell.set_name,
            cell.threads,
            self.bandwidth_again.words("", |g| format!("{g:.1} GB/s")),
            self.latency_again.words("latency ", nanoseconds)
        );
        if word == "UNSURE"
            && !(self.bandwidth_slow || self.latency_slow)
            && let Some(d) = &self.disturbed
        {
            if self.measured_again {
                line.push_str("; disturbed in both readings");
            }
            line.push_str(&d.words());
            return line;
        }
        if word == "ok" && self.measured_again {
            line.push_str("; measured again, the first reading having been disturbed");
        }
        if word == "UNSURE" {
            line.push_str("; slow in one reading only: run check again later");
            return line;
        }
        if word == "ok" || a.floor {
            return line;
        }
        let mut why = match &a.common {
            Some(common) => common.differences(node, "reference"),
            None => vec!["the reference carries no fingerprint to compare with".into()],
        };
        if why.is_empty() {
            why.push("no difference found in the fingerprint".into());
        }
        line.push_str("; ");
        line.push_str(&why.join("; "));
        line
    }
}

/// "92 ns" for a DRAM latency, "1.4 ns" for a cache's.
fn nanoseconds(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.1} ns")
    } else {
        format!("{ns:.0} ns")
    }
}

/// The short run: this binary, headless, every CPU, the plan's set and rounds (5 unless a test
/// asks), on the default loop of the widest instruction set: the loop a trial of loops starts
/// from and keeps unless another is clearly faster. The trial itself would take seconds of the
/// check's ten.
fn measure(plan: &Plan, root: &Path) -> Result<Snapshot> {
    let isa = Isa::best().to_string();
    let mut flags = vec![
        "--rounds".to_string(),
        plan.rounds.to_string(),
        "--round-ms".into(),
        "20".into(),
        "--threads".into(),
        plan.threads.to_string(),
        "--kernel".into(),
        isa,
    ];
    flags.extend(plan.set_flags());
    child(&flags, root)
}

/// The idle latency at the check's set: this binary's `--measure latency`, one chase on one
/// thread. What it cannot give is said in the line (`–` with the reason), not a failed check.
fn measure_latency(plan: &Plan, root: &Path) -> Known<f64> {
    let mut flags = vec!["--measure".to_string(), "latency".into(), "--no-tlb".into()];
    flags.extend(plan.set_flags());
    let snap = match child(&flags, root) {
        Ok(s) => s,
        Err(e) => return Known::Missing(e.to_string()),
    };
    let cell = snap.latency.iter().find(|c| c.cpu_node.is_none());
    match cell {
        Some(c) => Known::Value(c.median_ns),
        None => Known::Missing("the chase gave no figure".into()),
    }
}

/// This binary, headless, as JSON, with `flags`: its snapshot, or why there is none.
fn child(flags: &[String], root: &Path) -> Result<Snapshot> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: "check: find this program's own file".into(),
        source,
    })?;
    let mut cmd = Command::new(&exe);
    cmd.args(["--headless", "--format", "json"])
        .args(flags)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A signal that ends this process (a scheduler's SIGTERM, Ctrl-C) ends the child with it,
    // as calibrate's: nothing measures on under no parent. Its stdin is the pipe that ends it
    // on every OS, held until it has ended.
    crate::platform::die_with_parent(&mut cmd);
    let failed = |verb: &str, source| Error::Io {
        what: format!("check: {verb} {}", exe.display()),
        source,
    };
    let mut running = cmd.spawn().map_err(|e| failed("start", e))?;
    let held = running.stdin.take();
    let out = running
        .wait_with_output()
        .map_err(|e| failed("wait for", e))?;
    drop(held);
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

/// The short run's triad cell of the plan's set and thread count.
/// The triad's reading that check judges, and what disturbed it.
struct Reading {
    cell: CellSnapshot,
    disturbed: Option<disturbed::Disturbed>,
    /// How long the (last) reading took.
    took: Duration,
    /// Whether the first reading was disturbed and this is a second one.
    measured_again: bool,
}

/// The triad measured, and measured once more when its rounds were disturbed and `left` says
/// a second reading as long as the first fits check's time: on a shared VM the kernel's own
/// work preempts a worker now and then (2 of 11 checks on an idle 2-vCPU guest had two rounds
/// each lose a few milliseconds), where contention that says something of the node, another
/// process busy on its CPUs, disturbs the second reading as well. The second reading is the
/// one judged.
fn calm_reading(plan: &Plan, root: &Path, left: &dyn Fn(Duration) -> bool) -> Result<Reading> {
    let once = || -> Result<Reading> {
        let started = Instant::now();
        let watch = disturbed::Watch::start(root);
        let cell = measure_cell(plan, root)?;
        let disturbed = watch.finish(&cell);
        Ok(Reading {
            cell,
            disturbed,
            took: started.elapsed(),
            measured_again: false,
        })
    };
    let first = once()?;
    if first.disturbed.is_none() || !left(first.took) {
        return Ok(first);
    }
    Ok(Reading {
        measured_again: true,
        ..once()?
    })
}

fn measure_cell(plan: &Plan, root: &Path) -> Result<CellSnapshot> {
    let snap = measure(plan, root)?;
    cell_of(&snap, plan)
        .cloned()
        .ok_or_else(|| Error::usage("check: the run measured no cell"))
}

/// The triad cell of the plan's set and thread count.
fn cell_of<'a>(s: &'a Snapshot, plan: &Plan) -> Option<&'a CellSnapshot> {
    s.cells.iter().find(|c| {
        !c.rerun && c.threads == plan.threads && c.op == "triad" && c.set_name == plan.set.name
    })
}

/// A reference file: this node's class in what `fleet --export-reference` wrote, or a
/// snapshot.
enum ReferenceFile {
    Class(Reference, String),
    Snapshot(Box<Snapshot>, String),
}

/// The reference in `path`; for a fleet reference, this node's class in it (`class`), or an
/// error when it has none.
fn read_reference(path: &Path, class: &str) -> Result<ReferenceFile> {
    let name = path.display().to_string();
    let text = read_snapshot_text(path).map_err(|e| e.context("check: --against"))?;
    if let Ok(classes) = serde_json::from_str::<Vec<Reference>>(&text) {
        let mine = classes.into_iter().find(|r| r.class == class);
        return mine
            .map(|r| ReferenceFile::Class(r, name.clone()))
            .ok_or_else(|| {
                Error::usage(format!(
                    "check: {name} has no reference for this node's class {class}"
                ))
            });
    }
    Ok(ReferenceFile::Snapshot(
        Box::new(from_json(&text, path)?),
        name,
    ))
}

impl ReferenceFile {
    /// The reference figures for the plan's set and thread count, or why there are none.
    fn against(self, set: &WorkingSet, threads: usize) -> Result<Against> {
        let set = set.name.as_str();
        match self {
            ReferenceFile::Snapshot(s, name) => {
                let cell = s.cells.iter().find(|c| {
                    !c.rerun && c.set_name == set && c.threads == threads && c.op == "triad"
                });
                let cell = cell.ok_or_else(|| {
                    Error::usage(format!("check: {name} has no triad {set} × {threads} cell"))
                })?;
                Ok(Against {
                    gbs: cell.figures.median_gbs,
                    name: format!("{name} ({set} × {threads})"),
                    floor: false,
                    latency_ns: s
                        .latency
                        .iter()
                        .find(|c| c.cpu_node.is_none() && c.set_name == set)
                        .map(|c| c.median_ns),
                    common: s.info.fingerprint.as_ref().map(|f| Common::of(&[f])),
                })
            }
            ReferenceFile::Class(r, name) => {
                let found = r
                    .cells
                    .iter()
                    .find(|(op, s, t, _)| op == "triad" && s == set && *t == threads);
                let gbs = found.map(|c| c.3).ok_or_else(|| {
                    Error::usage(format!(
                        "check: {name} has no reference for class {} at triad {set} × {threads}",
                        r.class
                    ))
                })?;
                Ok(Against {
                    gbs,
                    name: format!("class {} reference", r.class),
                    floor: false,
                    latency_ns: r.latency.iter().find(|(s, _)| s == set).map(|l| l.1),
                    common: r.common,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2-vCPU fixture machine with its one last-level cache set to `llc` bytes.
    fn with_llc(llc: u64) -> Topology {
        let mut topo = Topology::fixture("vm-2core");
        let last = topo.last_level().unwrap();
        for cache in topo.caches.iter_mut().filter(|c| c.level == last) {
            cache.size = llc;
        }
        assert_eq!(topo.cache_total(last), llc);
        topo
    }

    fn args(set: &str) -> CheckArgs {
        CheckArgs {
            against: None,
            min_gbs: Some(1.0),
            max_gap: 10.0,
            set: set.into(),
            rounds: 5,
            seconds: None,
        }
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_dram_work_check_plans_is_bounded_whatever_the_last_level_cache() {
        for llc in [32 * MIB, 260 * MIB, 1 << 30, 64 << 30] {
            let plan = Plan::new(&args("dram"), &with_llc(llc), 2).unwrap();
            // What the triad touches and what the chase builds, walks and validates.
            assert!(3 * plan.array_bytes() <= CHECK_ARRAYS_MAX, "{llc}");
            assert!(plan.chase_bytes() <= CHECK_ARRAYS_MAX, "{llc}");
            assert_eq!(plan.rounds, 5);
            assert_eq!(
                plan.set.name, "dram",
                "the reference's cell is still dram's"
            );
            let line = plan.line();
            assert!(line.starts_with("stream-top: check: the triad on 2 threads, 5 rounds "));
            if 4 * 3 * llc <= CHECK_ARRAYS_MAX {
                assert_eq!((plan.max_memory, &plan.rule), (None, &None), "{llc}");
            } else {
                assert_eq!(plan.max_memory, Some(CHECK_ARRAYS_MAX), "{llc}");
                assert!(
                    line.contains("held to check's 10 s: STREAM's rule is "),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn a_small_last_level_cache_keeps_streams_rule_and_a_large_one_says_what_the_cap_costs() {
        let plan = Plan::new(&args("dram"), &with_llc(32 * MIB), 2).unwrap();
        assert_eq!(plan.array_bytes(), 128 * MIB);
        assert_eq!(
            plan.line(),
            "stream-top: check: the triad on 2 threads, 5 rounds over three arrays of 128 MiB \
             (dram), then the idle latency over 384 MiB"
        );
        let plan = Plan::new(&args("dram"), &with_llc(260 * MIB), 2).unwrap();
        assert_eq!(
            (plan.array_bytes(), plan.set.level),
            (256 * MIB, Some(Level::Dram))
        );
        assert!(
            plan.line().ends_with(
                "over 768 MiB; held to check's 10 s: STREAM's rule is 1 GiB each, and at 3.0 × \
                 the 260 MiB last-level cache, not 4 ×, the figures may include cache hits (the \
                 bandwidth a little higher, the latency lower than a full dram run's)"
            ),
            "{}",
            plan.line()
        );
        // A last-level cache larger than check may touch: it says the figures are the cache's.
        let plan = Plan::new(&args("dram"), &with_llc(1 << 30), 2).unwrap();
        assert_eq!(plan.set.level, Some(Level::L3));
        assert!(
            plan.line().ends_with(
                "and the three fit in the 1 GiB last-level cache: both figures are that cache's, \
                 not memory's"
            ),
            "{}",
            plan.line()
        );
    }

    fn floor(gbs: f64) -> Against {
        Against {
            gbs,
            name: "--min-gbs".into(),
            floor: true,
            latency_ns: Some(100.0),
            common: None,
        }
    }

    #[test]
    fn slow_needs_both_readings_and_one_slow_reading_is_unsure() {
        let slow = Verdict::of(10.0, 5.0, &Known::Value(200.0), &floor(10.0));
        assert!(slow.bandwidth_slow && slow.latency_slow);
        // Not yet measured again: not SLOW.
        assert_eq!((slow.confirmed(), slow.exit_code()), ((false, false), 3));
        let again = |b: Second, l: Second| Verdict {
            bandwidth_again: b,
            latency_again: l,
            ..Verdict::of(10.0, 5.0, &Known::Value(200.0), &floor(10.0))
        };
        let v = again(Second::Agrees(5.1), Second::Differs(101.0));
        assert_eq!((v.confirmed(), v.exit_code()), ((true, false), 1));
        let v = again(Second::Differs(12.0), Second::Missing("no time".into()));
        assert_eq!((v.confirmed(), v.exit_code()), ((false, false), 3));
        let v = again(Second::Agrees(4.0), Second::Agrees(190.0));
        assert_eq!((v.confirmed(), v.exit_code()), ((true, true), 1));
        let fine = Verdict::of(10.0, 50.0, &Known::Value(100.0), &floor(10.0));
        assert_eq!(fine.exit_code(), 0);
        assert_eq!(
            Second::Differs(12.0).words("", |g| format!("{g:.1} GB/s")),
            ", not slow a second time (12.0 GB/s)"
        );
    }

    #[test]
    fn a_set_other_than_dram_is_planned_as_given_and_a_range_is_refused() {
        let plan = Plan::new(&args("16KiB/thread"), &with_llc(1 << 30), 2).unwrap();
        assert_eq!(plan.set.name, "16 KiB/thread");
        assert_eq!((plan.max_memory, plan.set_flags().len()), (None, 2));
        let err = Plan::new(&args("16KiB..64KiB"), &with_llc(32 * MIB), 2)
            .err()
            .unwrap();
        assert!(err.to_string().contains("one working set"), "{err}");
    }
}
