//! `compare` judges: cells matched by what they measure across machines with different caches,
//! a verdict per cell from the two cells' rounds, noisy cells named, and `--fail-if-slower`
//! as a regression gate's exit code.

use crate::support::report_fixtures::{feed, run_info, topology};
use std::path::Path;
use std::process::Command;
use stream_top::engine::plan::{ArraySize, CellId, Grid, Level, WorkingSet};
use stream_top::judge::stats::Board;
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
    let l1 = table_row(&out, "| 16 KiB/thread (l1) | 2 |");
    assert!(l1.contains("| no significant difference |"), "{l1}");
    let dram = table_row(&out, "| 128 MiB (dram) | 2 |");
    assert!(dram.contains("| slower |"), "{dram}");
    assert!(
        dram.contains("| 0.900 ("),
        "the Hodges–Lehmann ratio: {dram}"
    );
    assert!(
        out.contains(
            "their labels differ: l1 × 2: 16 KiB/thread (l1) (A) → 10 KiB/thread (l1) (B)"
        ),
        "{out}"
    );
    assert!(
        out.contains("1 slower, 1 no significant difference."),
        "{out}"
    );
    assert!(out.contains("Only in A: none.") && out.contains("Only in B: none."));
}

#[test]
fn a_noisy_cell_is_named_and_too_few_rounds_get_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    // B's DRAM swings wildly (cv far over 5 %); its L1 has only 3 rounds.
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
        table_row(&out, "| 16 KiB/thread (l1) | 2 |").contains("| too few rounds |"),
        "{out}"
    );
    assert!(
        out.contains("Noisy: 128 MiB (dram) × 2 threads in B: cv"),
        "{out}"
    );
}

#[test]
fn fail_if_slower_gates_on_significant_slowdowns_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = machine("a", 48, &steady(200.0, 21), &steady(20.0, 21));
    let b = machine("b", 48, &steady(199.0, 21), &steady(18.0, 21));
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stream-top"))
            .arg("compare")
            .arg(&pa)
            .arg(&pb)
            .args(args)
            .output()
            .unwrap()
    };
    // DRAM is 10 % slower, significantly: a 5 % gate fails, a 20 % gate passes.
    let failed = run(&["--fail-if-slower", "5"]);
    assert_eq!(failed.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(
        stdout.contains("Gate --fail-if-slower 5: FAILED"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("128 MiB (dram) × 2 threads (10.0 % slower)"),
        "{stderr}"
    );
    assert_eq!(run(&["--fail-if-slower", "20"]).status.code(), Some(0));
    assert_eq!(run(&[]).status.code(), Some(0));
    // A snapshot against itself never fails the gate.
    let same = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["compare"])
        .arg(&pa)
        .arg(&pa)
        .args(["--fail-if-slower", "0"])
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
}
