//! `compare` judges: cells matched by what they measure across machines with different caches,
//! a verdict per cell from the two cells' rounds, noisy cells named, and `--fail-if-slower`
//! as a regression gate's exit code.

use crate::support::binary::{BIN, SMALL};
#[cfg(target_os = "linux")] // /proc, for the Linux-only tests of calibrate's child
use crate::support::procs::{children_of, proc_state};
use crate::support::report_fixtures::{feed, run_info, topology};
use std::path::Path;
use std::process::Command;
use stream_top::engine::plan::{ArraySize, CellId, Grid, Level, WorkingSet};
use stream_top::judge::stats::Board;
use stream_top::show::report::calibration::Calibration;
use stream_top::show::report::compare::{Gate, compare_sides};
use stream_top::show::report::{Snapshot, compare, to_json};

/// A machine whose L1 is `l1_kib` per core: its l1 set's label carries that size. Two cells:
/// l1 × 2 and dram × 2, each with the rounds given.
fn machine(host: &str, l1_kib: u64, l1: &[f64], dram: &[f64]) -> Snapshot {
    let mut info = run_info(host, Some(100.0));
    info.topology = topology();
    let grid = Grid {
        sets: vec![
            WorkingSet {
                name: "l1".into(),
                level: Some(Level::L1),
                size: ArraySize::PerThread((l1_kib / 3) << 10),
                note: None,
            },
            WorkingSet {
                name: "dram".into(),
                level: Some(Level::Dram),
                size: ArraySize::Split(128 << 20),
                note: None,
            },
        ],
        threads: vec![2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(50);
    feed(&mut board, CellId::new(0, 2), l1, None);
    feed(&mut board, CellId::new(1, 2), dram, None);
    Snapshot::build(
        &info,
        &grid,
        &board,
        &info.host_start.clone(),
        "2026-05-01 10:00:00".into(),
    )
}

/// Steady rates around `at`, ± 1 %, in a fixed scrambled order.
fn steady(at: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| at * (1.0 + 0.01 * (((i * 7) % 11) as f64 / 5.0 - 1.0)))
        .collect()
}

fn write(dir: &Path, name: &str, s: &Snapshot) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, to_json(s)).unwrap();
    p
}

fn table_row<'a>(text: &'a str, starts: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(starts))
        .unwrap_or_else(|| panic!("no row {starts:?} in\n{text}"))
}

/// Writes `runs` snapshots of `machine(host, l1_kib, …)` whose medians scatter by ±`spread`
/// around the given levels (run effects), and returns their paths.
fn runs(
    dir: &Path,
    side: &str,
    host: &str,
    levels: (f64, f64),
    spread: &[f64],
) -> Vec<std::path::PathBuf> {
    spread
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let s = machine(
                host,
                48,
                &steady(levels.0 * (1.0 + e), 21),
                &steady(levels.1 * (1.0 + e), 21),
            );
            write(dir, &format!("{side}{i}.json"), &s)
        })
        .collect()
}

/// Run effects of a few per cent, as these VMs show between processes.
const RUN_EFFECTS: [f64; 4] = [0.02, -0.03, 0.0, 0.025];

fn compare_runs(a: &[std::path::PathBuf], b: &[std::path::PathBuf], gate: Gate) -> String {
    compare_sides(a, b, true, gate).unwrap().text
}

#[test]
fn machines_with_different_caches_compare_level_with_level() {
    let dir = tempfile::tempdir().unwrap();
    // A: 48 KiB L1, B: 32 KiB; B's DRAM is 10 % slower, its L1 the same.
    let a = machine("alder", 48, &steady(200.0, 21), &steady(20.0, 21));
    let b = machine("zen", 32, &steady(200.0, 21), &steady(18.0, 21));
    assert_ne!(
        a.cells[0].label, b.cells[0].label,
        "the labels carry the sizes"
    );
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let out = compare(&pa, &pb, None).unwrap().text;
    assert!(!out.contains("No cell is in both snapshots"), "{out}");
    // One run a side: the rounds of one run are no evidence across runs, so no verdict
    // without a known spread, however steady each run's rounds are.
    let dram = table_row(&out, "| 128 MiB (dram) | 2 |");
    assert!(
        dram.contains("| no verdict: one run a side, B/A 0.900, run-to-run spread unknown |"),
        "{dram}"
    );
    assert!(
        out.contains(
            "their labels differ: l1 × 2: 16 KiB/thread (l1) (A) → 10 KiB/thread (l1) (B)"
        ),
        "{out}"
    );
    assert!(out.contains("2 undecided."), "{out}");
    assert!(out.contains("Only in A: none.") && out.contains("Only in B: none."));
}

#[test]
fn repetitions_a_side_are_tested_and_find_a_real_difference() {
    let dir = tempfile::tempdir().unwrap();
    // Four runs a side; B's DRAM 10 % slower, its L1 the same, each run off by a few per cent.
    let a = runs(dir.path(), "a", "h", (200.0, 20.0), &RUN_EFFECTS);
    let b = runs(dir.path(), "b", "h", (200.0, 18.0), &RUN_EFFECTS);
    let out = compare_runs(&a, &b, Gate::default());
    let l1 = table_row(&out, "| 16 KiB/thread (l1) | 2 | 4 | 4 |");
    assert!(
        l1.contains("| no significant difference (4 a side) |"),
        "{l1}"
    );
    let dram = table_row(&out, "| 128 MiB (dram) | 2 | 4 | 4 |");
    assert!(dram.contains("| slower |"), "{dram}");
    assert!(
        dram.contains("| 0.900 |"),
        "the ratio of geometric means: {dram}"
    );
    assert!(
        out.contains(
            "Verdicts (Welch's t-test on the repetitions' medians, two-sided at 1 % per cell"
        ),
        "{out}"
    );
    assert!(out.contains("| B/A 99 % interval | p |"), "{out}");
    assert!(
        out.contains(
            "| geometric mean GB/s A | geometric mean GB/s B | B/A of the geometric means |"
        ),
        "the header names the one estimate the verdict is about: {out}"
    );
    assert!(out.contains("1 slower, 1 undecided."), "{out}");
}

#[test]
fn a_noisy_cell_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // B's DRAM swings wildly (cv far over 5 %).
    let wild: Vec<f64> = (0..21)
        .map(|i| if i % 2 == 0 { 40.0 } else { 8.0 })
        .collect();
    let a = machine("a", 48, &steady(200.0, 21), &steady(20.0, 21));
    let b = machine("b", 48, &steady(220.0, 3), &wild);
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let out = compare(&pa, &pb, None).unwrap().text;
    assert!(
        out.contains("Noisy: 128 MiB (dram) × 2 threads in B: cv"),
        "{out}"
    );
}

#[test]
fn fail_if_slower_gates_on_repetitions_and_refuses_single_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = runs(dir.path(), "a", "h", (200.0, 20.0), &RUN_EFFECTS);
    let b = runs(dir.path(), "b", "h", (199.0, 18.0), &RUN_EFFECTS);
    let data = tempfile::tempdir().unwrap();
    let run = |a: &[std::path::PathBuf], b: &[std::path::PathBuf], args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_stream-top"));
        cmd.arg("compare").args(args).args(a);
        if b.len() > 1 || a.len() > 1 {
            cmd.arg("--");
        }
        cmd.args(b)
            .env("STREAM_TOP_DATA_DIR", data.path())
            .output()
            .unwrap()
    };
    // DRAM is 10 % slower over four repetitions a side: a 2 % gate fails, a 20 % gate passes
    // (the one-sided interval of B/A, 0.85–0.95, lies below 0.98 and above 0.80).
    let failed = run(&a, &b, &["--fail-if-slower", "2"]);
    assert_eq!(failed.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(
        stdout.contains("Gate --fail-if-slower 2: FAILED"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("128 MiB (dram) × 2 threads (10.0 % slower)"),
        "{stderr}"
    );
    assert_eq!(
        run(&a, &b, &["--fail-if-slower", "20"]).status.code(),
        Some(0)
    );
    assert_eq!(run(&a, &b, &[]).status.code(), Some(0));
    // One run a side cannot gate: exit 2 with the reason, before any table.
    let single = run(&a[..1], &b[..1], &["--fail-if-slower", "5"]);
    assert_eq!(single.status.code(), Some(2));
    assert!(single.stdout.is_empty());
    let why = String::from_utf8_lossy(&single.stderr);
    assert!(
        why.contains("a gate needs 3 or more repetitions a side"),
        "{why}"
    );
    assert!(why.contains("--allow-single-run"), "{why}");
    // With --allow-single-run single runs are judged on their B/A alone: DRAM's 0.90 fails.
    let allowed = run(
        &a[..1],
        &b[..1],
        &["--fail-if-slower", "5", "--allow-single-run"],
    );
    assert_eq!(allowed.status.code(), Some(1));
    let text = String::from_utf8_lossy(&allowed.stdout);
    assert!(
        text.contains("--allow-single-run: 2 cells with fewer than 3 repetitions a side"),
        "{text}"
    );
}

/// `compare` with the gate's `args`, A's snapshots then `--` then B's, in an empty data
/// directory (no calibration).
fn gate_run(
    a: &[std::path::PathBuf],
    b: &[std::path::PathBuf],
    args: &[&str],
) -> std::process::Output {
    let data = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .arg("compare")
        .args(args)
        .args(a)
        .arg("--")
        .args(b)
        .env("STREAM_TOP_DATA_DIR", data.path())
        .output()
        .unwrap()
}

#[test]
fn a_half_speed_single_run_fails_the_gate_with_allow_single_run() {
    let dir = tempfile::tempdir().unwrap();
    // B beside a CPU hog: both cells at 0.49 × A's, one run a side.
    let a = runs(dir.path(), "a", "h", (200.0, 20.0), &[0.0]);
    let b = runs(dir.path(), "b", "h", (98.0, 9.8), &[0.0]);
    let out = gate_run(&a, &b, &["--fail-if-slower", "5", "--allow-single-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Gate --fail-if-slower 5: FAILED"), "{text}");
    assert!(
        text.contains("128 MiB (dram) × 2 threads (51.0 % slower)"),
        "{text}"
    );
    assert!(!text.contains("passed"), "{text}");
}

#[test]
fn three_interleaved_a_side_at_three_quarters_with_a_wide_interval_is_undecided() {
    let dir = tempfile::tempdir().unwrap();
    // Three processes a side whose runs scatter by ±35 %: B/A 0.75, and a one-sided interval
    // far wider than the 5 % limit on either side of it.
    let wide = [0.35, -0.35, 0.1];
    let a = runs(dir.path(), "a", "h", (200.0, 20.0), &wide);
    let b = runs(dir.path(), "b", "h", (150.0, 15.0), &wide);
    let out = gate_run(&a, &b, &["--fail-if-slower", "5"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}{err}");
    assert!(
        !text.contains("passed") && !text.contains("no cell is slower"),
        "{text}"
    );
    assert!(
        text.contains("Gate --fail-if-slower 5: UNDECIDED; undecided (exit 3)"),
        "{text}"
    );
    // The cells are named, with how many interleaved processes a side would decide them.
    assert!(
        text.contains("128 MiB (dram) × 2 threads (B/A 0.750"),
        "{text}"
    );
    assert!(
        text.contains("interleaved processes a side would decide it"),
        "{text}"
    );
    assert!(
        err.contains("the gate is undecided: 16 KiB/thread (l1) × 2 threads"),
        "{err}"
    );
    // The spread is too wide to decide a 5 % change: said, with what would help.
    assert!(
        text.contains("Spread too wide to decide a change of 5 %"),
        "{text}"
    );
    assert!(text.contains("a quiet host"), "{text}");
}

#[test]
fn identical_sides_pass_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let tight = [0.002, -0.003, 0.0, 0.001];
    let a = runs(dir.path(), "a", "h", (200.0, 20.0), &tight);
    let out = gate_run(&a, &a, &["--fail-if-slower", "5"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "Gate --fail-if-slower 5: passed; every cell is shown not slower by more than 5 %"
        ),
        "{text}"
    );
}

#[test]
fn the_first_refusal_names_the_way_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let a = runs(dir.path(), "a", "h", (200.0, 20.0), &[0.0]);
    let out = gate_run(&a, &a, &["--fail-if-slower", "5"]);
    let why = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{why}");
    assert_eq!(why.lines().count(), 1, "{why}");
    assert!(
        why.contains("3 or more separate processes, interleaved (A B A B")
            && why.contains("docs/ci-recipe.sh"),
        "{why}"
    );
}

#[test]
fn a_single_run_is_judged_against_the_calibrated_spread() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // A calibration of host "h": its repetitions scatter by about ±1 %.
    let cal = runs(
        dir.path(),
        "cal",
        "h",
        (200.0, 20.0),
        &[0.01, -0.01, 0.0, 0.005],
    );
    let snaps: Vec<Snapshot> = cal
        .iter()
        .map(|p| stream_top::show::report::load_snapshot(p).unwrap())
        .collect();
    let c = Calibration::from_processes(&snaps, "stream-top calibrate", 300.0).unwrap();
    c.save(data.path()).unwrap();
    // A (the calibration's first run, its effect +1 %) against B, DRAM 10 % lower.
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["compare", "--fail-if-slower", "5", "--allow-single-run"])
        .arg(&cal[0])
        .arg(write(
            dir.path(),
            "b.json",
            &machine("h", 48, &steady(200.0, 21), &steady(18.0, 21)),
        ))
        .env("STREAM_TOP_DATA_DIR", data.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 1 | 1 |");
    assert!(
        dram.contains("slower: B/A 0.891 is outside the run-to-run spread"),
        "{dram}"
    );
    let l1 = table_row(&text, "| 16 KiB/thread (l1) | 2 | 1 | 1 |");
    assert!(
        l1.contains("no verdict: B/A 0.990 is inside the run-to-run spread"),
        "{l1}"
    );
    assert!(
        text.contains("measured by `stream-top calibrate`"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
}

#[test]
fn a_repeated_run_keeps_each_repetitions_median() {
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args([
            "--headless",
            "--repeat",
            "2",
            "--threads",
            "1",
            "--sets",
            "16KiB/thread",
            "--rounds",
            "3",
            "--round-ms",
            "2",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap: stream_top::show::report::Snapshot = serde_json::from_slice(&out.stdout).unwrap();
    for c in &snap.cells {
        assert_eq!(c.repetitions.len(), 2, "{}: {:?}", c.label, c.repetitions);
        assert!(c.repetitions.iter().all(|m| *m > 0.0));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("repetition 2 of 2: fresh arrays"), "{err}");
}

/// One snapshot a side whose five repetitions (one process, `--repeat 5`) sit within 0.1 %
/// of its median; B's DRAM 10 % lower.
fn one_process_sides(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let side = |name: &str, dram: f64| {
        let mut s = machine("h", 48, &steady(200.0, 21), &steady(dram, 21));
        for c in &mut s.cells {
            let m = c.figures.median_gbs;
            c.repetitions = [0.001, -0.001, 0.0, 0.0005, -0.0005]
                .iter()
                .map(|e| m * (1.0 + e))
                .collect();
        }
        write(dir, name, &s)
    };
    (side("a.json", 20.0), side("b.json", 18.0))
}

fn compare_with_data(data: &Path, args: &[&str], a: &Path, b: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .arg("compare")
        .args(args)
        .arg(a)
        .arg(b)
        .env("STREAM_TOP_DATA_DIR", data)
        .output()
        .unwrap()
}

/// A calibration of host "h" across five separate processes (within 1 % of each other) spread
/// over five minutes, saved.
fn save_process_calibration(dir: &Path, data: &Path) {
    save_process_calibration_over(dir, data, 300.0);
}

fn save_process_calibration_over(dir: &Path, data: &Path, span_s: f64) {
    let effects = [0.01, -0.01, 0.0, 0.005, -0.005];
    let snaps: Vec<Snapshot> = runs(dir, "cal", "h", (200.0, 20.0), &effects)
        .iter()
        .map(|p| stream_top::show::report::load_snapshot(p).unwrap())
        .collect();
    let c = Calibration::from_processes(&snaps, "stream-top calibrate", span_s).unwrap();
    c.save(data).unwrap();
}

#[test]
fn a_calibration_of_processes_back_to_back_gives_no_word() {
    // Runs seconds apart agree far better than a before and an after minutes apart: a spread
    // from them would call drift a change.
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    save_process_calibration_over(dir.path(), data.path(), 4.0);
    let (a, b) = one_process_sides(dir.path());
    let text =
        String::from_utf8_lossy(&compare_with_data(data.path(), &[], &a, &b).stdout).into_owned();
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 5 | 5 |");
    assert!(
        dram.contains(
            "no verdict: repetitions from one process per side, B/A 0.900; stored spread \
             measured by processes back to back (within 4 s)"
        ),
        "{dram}"
    );
    assert!(!text.contains("| slower"), "{text}");
    let gated = compare_with_data(data.path(), &["--fail-if-slower", "5"], &a, &b);
    assert_eq!(gated.status.code(), Some(2), "no gate on it either");
    // Single runs 10 % apart, outside its ±2 %: still no word, and the reason.
    let single = |name: &str, dram: f64| {
        write(
            dir.path(),
            name,
            &machine("h", 48, &steady(200.0, 21), &steady(dram, 21)),
        )
    };
    let (a1, b1) = (single("a1.json", 20.0), single("b1.json", 18.0));
    let text =
        String::from_utf8_lossy(&compare_with_data(data.path(), &[], &a1, &b1).stdout).into_owned();
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 1 | 1 |");
    assert!(
        dram.contains("no verdict: B/A 0.900 is outside the stored run-to-run spread")
            && dram.contains("back to back (within 4 s)"),
        "{dram}"
    );
    // The same calibration spread over five minutes gives the word.
    save_process_calibration_over(dir.path(), data.path(), 300.0);
    let text =
        String::from_utf8_lossy(&compare_with_data(data.path(), &[], &a1, &b1).stdout).into_owned();
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 1 | 1 |");
    assert!(dram.contains("slower: B/A 0.900 is outside"), "{dram}");
}

#[test]
fn one_process_a_side_gets_no_verdict_without_a_spread_between_processes() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (a, b) = one_process_sides(dir.path());
    let out = compare_with_data(data.path(), &[], &a, &b);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // Five repetitions a side, 10 % apart, yet no "slower": they share one process a side.
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 5 | 5 |");
    assert!(
        dram.contains(
            "| no verdict: B/A 0.900; repetitions from one process per side: the run-to-run \
             spread between processes is unknown; run `stream-top calibrate` or interleave \
             runs: compare A1 A2 … -- B1 B2 … |"
        ),
        "{dram}"
    );
    assert!(!text.contains("| slower"), "{text}");
    assert!(
        text.contains("No verdict, 2 of them: repetitions from one process per side"),
        "{text}"
    );
    // The gate refuses (exit 2, the reason, no table) unless --allow-single-run.
    let gated = compare_with_data(data.path(), &["--fail-if-slower", "5"], &a, &b);
    assert_eq!(gated.status.code(), Some(2));
    assert!(gated.stdout.is_empty());
    let why = String::from_utf8_lossy(&gated.stderr);
    assert!(
        why.contains("--fail-if-slower: repetitions from one process per side")
            && why.contains("separate processes, interleaved (A B A B")
            && why.contains("--allow-single-run"),
        "{why}"
    );
    let allowed = compare_with_data(
        data.path(),
        &["--fail-if-slower", "5", "--allow-single-run"],
        &a,
        &b,
    );
    // Judged on B/A alone: DRAM's 0.90 is beyond the 5 % limit.
    assert_eq!(allowed.status.code(), Some(1));
}

#[test]
fn a_calibration_inside_one_process_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (a, b) = one_process_sides(dir.path());
    // A calibration file from before `spread_between`: its repetitions were in one process.
    let snap = stream_top::show::report::load_snapshot(&a).unwrap();
    let path = Calibration::from_snapshot(&snap)
        .unwrap()
        .save(data.path())
        .unwrap();
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json.as_object_mut()
        .unwrap()
        .remove("spread_between")
        .unwrap();
    std::fs::write(&path, json.to_string()).unwrap();
    let text =
        String::from_utf8_lossy(&compare_with_data(data.path(), &[], &a, &b).stdout).into_owned();
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 5 | 5 |");
    assert!(
        dram.contains(
            "no verdict: repetitions from one process per side, B/A 0.900; stored spread \
             measured within one process: may be too narrow; run calibrate again"
        ),
        "{dram}"
    );
    // Single runs judged against it carry the same warning.
    let single = |name: &str, dram: f64| {
        write(
            dir.path(),
            name,
            &machine("h", 48, &steady(200.0, 21), &steady(dram, 21)),
        )
    };
    let text = String::from_utf8_lossy(
        &compare_with_data(
            data.path(),
            &[],
            &single("a1.json", 20.0),
            &single("b1.json", 18.0),
        )
        .stdout,
    )
    .into_owned();
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 1 | 1 |");
    assert!(
        dram.contains("; stored spread measured within one process: may be too narrow"),
        "{dram}"
    );
}

#[test]
fn one_process_a_side_is_judged_with_the_calibrated_spread_between_processes() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    save_process_calibration(dir.path(), data.path());
    let (a, b) = one_process_sides(dir.path());
    let out = compare_with_data(data.path(), &["--fail-if-slower", "5"], &a, &b);
    let text = String::from_utf8_lossy(&out.stdout);
    // 10 % slower against processes under 1 % apart: slower, and the gate may use it.
    let dram = table_row(&text, "| 128 MiB (dram) | 2 | 5 | 5 |");
    assert!(
        dram.contains("| slower (one process a side: calibrated spread between processes added) |"),
        "{dram}"
    );
    let l1 = table_row(&text, "| 16 KiB/thread (l1) | 2 | 5 | 5 |");
    assert!(
        l1.contains("| no significant difference (5 a side) (one process"),
        "{l1}"
    );
    assert!(
        dram.contains("| 0.900 |"),
        "the interval of the test: {dram}"
    );
    assert!(
        text.contains(
            "2 cells have repetitions from one process a side: the spread between processes, \
             measured by `stream-top calibrate`"
        ),
        "{text}"
    );
    assert!(text.contains("Gate --fail-if-slower 5: FAILED"), "{text}");
    assert_eq!(out.status.code(), Some(1));
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::fs::read_dir(data.path())
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(saved["spread_between"], "processes");
}

/// `calibrate` of two processes of a small headless run (`SMALL`'s grid) over `span`, writing
/// into `data`.
fn small_calibrate(data: &Path, span: &str) -> Command {
    let mut c = Command::new(BIN);
    c.args(["calibrate", "--repeat", "2", "--span", span])
        .args(SMALL.iter().filter(|a| **a != "--headless"))
        .env("STREAM_TOP_DATA_DIR", data);
    c
}

#[test]
fn calibrate_runs_each_repetition_as_a_separate_process() {
    let data = tempfile::tempdir().unwrap();
    let out = small_calibrate(data.path(), "2s").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("calibrate: process 2 of 2"), "{err}");
    assert!(
        err.contains("2 processes spread over 2 s (--span)"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Run-to-run spread between processes ±"),
        "{text}"
    );
    let file = std::fs::read_dir(data.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["spread_between"], "processes");
    assert_eq!(saved["repetitions"], 2);
    assert_eq!(saved["cells"][0]["medians"].as_array().unwrap().len(), 2);
    // The second process started at the span's end, not at once.
    assert!(saved["span_s"].as_f64().unwrap() >= 2.0, "{saved}");
}

/// A child whose stderr is gathered as it comes, so that a test can wait for a line.
struct Watched {
    child: std::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

/// How long a test waits for what should happen at once: generous, for a loaded machine; the
/// test passes as soon as the condition holds.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

impl Watched {
    fn spawn(mut cmd: Command) -> Watched {
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (pipe, into) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut text = into.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Watched { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until stderr holds `line`; panics with what it holds past the deadline.
    fn wait_for_line(&self, line: &str) {
        let start = std::time::Instant::now();
        while !self.stderr().contains(line) {
            assert!(
                start.elapsed() < DEADLINE,
                "waited {DEADLINE:?} for {line:?} in {}",
                self.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Waits for the process to end (past the deadline, kills it and fails).
    fn wait_end(mut self) -> (Option<i32>, String) {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread take the last lines.
                std::thread::sleep(std::time::Duration::from_millis(100));
                return (status.code(), self.stderr());
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!("still running after {DEADLINE:?}: {}", self.stderr());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// A test that fails while its process runs (or is stopped) leaves nothing behind: the
/// process is killed (its child dies with it) and reaped.
impl Drop for Watched {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Polls `done` until it holds; panics with `what` past the deadline.
#[cfg(target_os = "linux")] // /proc, for the Linux-only tests of calibrate's child
fn poll(done: impl Fn() -> bool, what: &str) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < DEADLINE, "waited {DEADLINE:?} for {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `calibrate` whose first child runs for minutes unless stopped.
#[cfg(target_os = "linux")] // for the Linux-only tests of calibrate's child
fn long_calibrate(data: &Path) -> Watched {
    let mut c = Command::new(BIN);
    c.args(["calibrate", "--repeat", "2", "--span", "1s"])
        .args(["--threads", "1", "--sets", "16KiB/thread"])
        .args(["--rounds", "100000", "--round-ms", "2"])
        .env("STREAM_TOP_DATA_DIR", data);
    let w = Watched::spawn(c);
    w.wait_for_line("calibrate: process 1 of 2");
    w
}

#[test]
fn calibrate_stopped_while_it_waits_writes_nothing_it_cannot_stand_behind() {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = small_calibrate(data.path(), "10m");
    cmd.stdin(std::process::Stdio::null());
    let w = Watched::spawn(cmd);
    // Stopped while it waits for the second process: one process finished.
    w.wait_for_line("calibrate: process 1 of 2 done");
    w.signal(libc::SIGINT);
    let (code, err) = w.wait_end();
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.contains("calibrate: stopped by SIGINT after 1 of 2 processes (too few for a spread: nothing written)"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(data.path()).unwrap().count(), 0);
}

#[test]
#[cfg(target_os = "linux")]
fn sigterm_to_calibrate_is_passed_on_to_its_running_child() {
    let data = tempfile::tempdir().unwrap();
    let w = long_calibrate(data.path());
    let parent = w.child.id();
    poll(|| !children_of(parent).is_empty(), "calibrate's child");
    let child = children_of(parent)[0];
    w.signal(libc::SIGTERM);
    // Without passing it on, the parent would wait out its child's minutes.
    let (code, err) = w.wait_end();
    assert_eq!(code, Some(143), "{err}");
    assert!(
        err.contains("calibrate: stopped by SIGTERM after 0 of 2 processes"),
        "{err}"
    );
    poll(
        || proc_state(child).is_none_or(|s| s == 'Z'),
        "the child's end",
    );
}

#[test]
#[cfg(target_os = "linux")]
fn calibrates_child_dies_with_it_when_it_is_killed() {
    let data = tempfile::tempdir().unwrap();
    let w = long_calibrate(data.path());
    let parent = w.child.id();
    poll(|| !children_of(parent).is_empty(), "calibrate's child");
    let child = children_of(parent)[0];
    w.signal(libc::SIGKILL);
    let (code, _) = w.wait_end();
    assert_eq!(code, None, "killed");
    // An orphan would run on for minutes; the kernel ends it with its parent.
    poll(
        || proc_state(child).is_none_or(|s| s == 'Z'),
        "the orphan's end",
    );
}

/// Where the kernel has no parent-death signal (macOS) a calibrate child ends when its stdin,
/// the pipe its parent holds, ends; tested here without the parent: the pipe closed by hand.
#[test]
fn a_child_told_to_watch_its_parent_ends_when_its_stdin_pipe_ends() {
    use std::process::Stdio;
    let start = |watch: bool| {
        let mut c = Command::new(BIN);
        c.args(["--headless", "--threads", "1", "--sets", "16KiB/thread"])
            .args(["--rounds", "100000", "--round-ms", "2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if watch {
            c.env("STREAM_TOP_DIE_WITH_PARENT", "1");
        }
        Watched::spawn(c)
    };
    for watch in [true, false] {
        let mut w = start(watch);
        w.wait_for_line("stream-top: ");
        drop(w.child.stdin.take());
        if watch {
            let (code, err) = w.wait_end();
            assert_eq!(code, None, "killed when the pipe ended: {err}");
        } else {
            // A run not told to watch its stdin goes on when stdin ends.
            std::thread::sleep(std::time::Duration::from_millis(500));
            assert!(w.child.try_wait().unwrap().is_none(), "{}", w.stderr());
            w.signal(libc::SIGTERM);
            let (code, err) = w.wait_end();
            assert_eq!(code, Some(143), "{err}");
        }
    }
}

#[test]
#[cfg(target_os = "linux")]
fn calibrate_stopped_and_continued_runs_on_at_once() {
    let data = tempfile::tempdir().unwrap();
    let w = long_calibrate(data.path());
    let parent = w.child.id();
    poll(|| !children_of(parent).is_empty(), "calibrate's child");
    let child = children_of(parent)[0];
    w.signal(libc::SIGTSTP);
    poll(|| proc_state(parent) == Some('T'), "calibrate stopped");
    poll(
        || proc_state(child) == Some('T'),
        "its child stopped with it",
    );
    w.signal(libc::SIGCONT);
    poll(
        || proc_state(parent).is_some_and(|s| s != 'T'),
        "calibrate continued",
    );
    poll(
        || proc_state(child).is_some_and(|s| s != 'T'),
        "its child continued",
    );
    w.signal(libc::SIGTERM);
    let (code, err) = w.wait_end();
    assert_eq!(code, Some(143), "{err}");
}

#[test]
fn calibrate_span_takes_a_time_and_refuses_others() {
    for (span, why) in [
        ("soon", "--span soon: not a time span"),
        ("25h", "--span 25h: at most 24h"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
            .args(["calibrate", "--span", span])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why) && err.lines().count() == 1, "{err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--span", "5m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--span is calibrate's");
}
