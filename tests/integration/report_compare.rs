//! Compare: two snapshots with different grids and settings, from the committed fixtures.
//!
//! The fixtures in tests/fixtures/snapshots are `snapshot_a()` and `snapshot_b()` written once;
//! after a deliberate schema change, rewrite them with
//! `STREAM_TOP_BLESS=1 cargo test --test integration report_` and bump SCHEMA_VERSION.

use crate::support::report_fixtures::*;
use std::fs;
use std::path::Path;
use stream_top::show::report::{Baseline, compare, load_snapshot, to_json};

#[test]
fn committed_fixtures_are_the_builders_snapshots() {
    for (name, snap) in [("a.json", snapshot_a()), ("b.json", snapshot_b())] {
        let path = fixture_path(name);
        if std::env::var_os("STREAM_TOP_BLESS").is_some() {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, to_json(&snap)).unwrap();
        }
        let read = load_snapshot(&path).unwrap_or_else(|e| {
            panic!("{e} (rewrite with STREAM_TOP_BLESS=1 after a schema change)")
        });
        assert_eq!(read, snap, "{name} differs from its builder");
    }
}

fn compared() -> String {
    compare(&fixture_path("a.json"), &fixture_path("b.json"), None)
        .unwrap()
        .text
}

#[test]
fn lists_the_differences_above_the_table() {
    let out = compared();
    let table_at = out.find("| per array |").unwrap();
    let above = &out[..table_at];
    for line in [
        "A: ",
        "a.json (bench-a, taken 2026-01-02 03:04:05 UTC)",
        "b.json (bench-b, taken 2026-01-03 10:00:00 UTC)",
        "- kernel: avx2 (A) → avx512 (B)",
        "- pinning: spread (across NUMA nodes, then cores, SMT siblings last) (A) → compact",
        "- vendor figure: 40 GB/s (--vendor-gbs) (A) → none (B)",
        "- thread counts: 1, 2, 4 (A) → 1, 2, 8 (B)",
        "- checksums: every configuration produced the reference sum of array a (A) → FAILED for 128 MiB (dram) × 2 threads",
    ] {
        assert!(above.contains(line), "no {line:?} in\n{above}");
    }
    // Same model, caches, stores, settings: not listed.
    for same in [
        "CPU model",
        "caches",
        "stores",
        "rounds",
        "round_ms",
        "duty",
        "clock",
    ] {
        assert!(
            !above.contains(&format!("- {same}:")),
            "{same} listed in\n{above}"
        );
    }
    // The load at the start is the same in both fixtures.
    assert!(!above.contains("load at start"));
}

#[test]
fn the_table_has_cells_in_both_with_ratios() {
    let out = compared();
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("| per array |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    // In both: l2 × 1, 2 and dram × 1, 2 (B has no rerun row, A's has no partner).
    assert_eq!(rows.len(), 4, "{rows:#?}");
    let l2_1 = rows
        .iter()
        .find(|r| r.starts_with("| 85 KiB/thread (l2) | 1 |"))
        .unwrap();
    // One run a side; A's median 30.0, B's 33.0: B/A 1.10, and no verdict without a spread.
    assert!(
        l2_1.starts_with("| 85 KiB/thread (l2) | 1 | 1 | 1 | 30.0 | 33.0 | 1.10 |"),
        "{l2_1}"
    );
    assert!(l2_1.contains("no verdict: one run a side"), "{l2_1}");
}

#[test]
fn cells_in_only_one_snapshot_are_listed() {
    let out = compared();
    assert!(
        out.contains("Only in A: 85 KiB/thread (l2) × 4 threads; 128 MiB (dram) × 4 threads; 85 KiB/thread (l2), run again last × 1 thread."),
        "{out}"
    );
    assert!(
        out.contains("Only in B: 85 KiB/thread (l2) × 8 threads; 128 MiB (dram) × 8 threads."),
        "{out}"
    );
}

#[test]
fn a_snapshot_against_itself_has_no_differences() {
    let a = fixture_path("a.json");
    let out = compare(&a, &a, None).unwrap().text;
    assert!(
        out.contains("Same machine, kernel, stores, pinning, clock"),
        "{out}"
    );
    assert!(out.contains("Only in A: none.") && out.contains("Only in B: none."));
    assert!(out.contains("| 30.0 | 30.0 | 1.00 |"));
}

#[test]
fn a_bad_file_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.json");
    fs::write(&bad, "{\"schema_version\": 0}").unwrap();
    let e = compare(&fixture_path("a.json"), &bad, None).unwrap_err();
    assert_eq!(e.exit_code(), 2, "the person's to fix: {e}");
    let e = e.to_string();
    assert!(e.starts_with(&bad.display().to_string()), "{e}");
    assert!(e.contains("schema version 0"), "{e}");
    let e = compare(Path::new("/no/such.json"), &fixture_path("a.json"), None).unwrap_err();
    assert_eq!(e.exit_code(), 2, "the person's to fix: {e}");
    let e = e.to_string();
    assert!(e.starts_with("/no/such.json: cannot read"), "{e}");
}

#[test]
fn a_baseline_gives_each_cell_its_median_in_a() {
    let base = Baseline::load(&fixture_path("a.json")).unwrap();
    let m = base.median_for("128 MiB (dram)", 2).unwrap();
    assert!((m / 19.0 - 1.0).abs() < 1e-6, "{m}");
    assert_eq!(base.median_for("128 MiB (dram)", 8), None);
    assert_eq!(base.median_for("64 MiB", 1), None);
    let first = base.median_for("85 KiB/thread (l2)", 1).unwrap();
    let again = base.median_for_cell("85 KiB/thread (l2)", 1, true).unwrap();
    assert!(first > again, "the rerun row is its own cell");
    let change = base.change("128 MiB (dram)", 2, 20.9).unwrap();
    assert!((change - 1.1).abs() < 1e-6, "{change}");
    assert!(Baseline::load(Path::new("/no/such.json")).is_err());
}

#[test]
#[ignore = "prints the comparison of the fixtures"]
fn print_compare() {
    println!("{}", compared());
}

/// A snapshot's cells given a loop and layout: `(set, variant, huge pages)`.
fn with_choices(
    mut s: stream_top::show::report::Snapshot,
    picks: &[(usize, &str, bool)],
) -> stream_top::show::report::Snapshot {
    use stream_top::show::report::model::{CellChoice, ChoiceBy, RunnerUp, Selection, Trial};
    s.info.selection = Some(Selection {
        kernel: "auto".into(),
        huge_pages: "auto".into(),
    });
    for c in &mut s.cells {
        if let Some(&(_, variant, huge_pages)) = picks.iter().find(|p| p.0 == c.set) {
            c.choice = Some(CellChoice {
                variant: variant.into(),
                huge_pages,
                kernel_by: ChoiceBy::Trial,
                layout_by: ChoiceBy::Trial,
                runner_up: Some(RunnerUp {
                    variant: "avx2 ymm fma".into(),
                    huge_pages: true,
                    ratio: 1.25,
                }),
                trial: Some(Trial {
                    threads: vec![1, 4],
                    candidates: 12,
                    rounds: 7,
                    seconds: 0.31,
                    margin: 0.01,
                }),
            });
        }
    }
    s
}

#[test]
fn lists_a_loop_or_layout_difference_per_cell() {
    let dir = tempfile::tempdir().unwrap();
    let a = with_choices(
        snapshot_a(),
        &[(0, "avx2 ymm mul+add", true), (1, "avx2 xmm mul+add", true)],
    );
    let b = with_choices(
        snapshot_a(),
        &[
            (0, "avx2 ymm mul+add", false),
            (1, "avx2 xmm mul+add", true),
        ],
    );
    let (pa, pb, pold) = (
        dir.path().join("a.json"),
        dir.path().join("b.json"),
        fixture_path("a.json"),
    );
    fs::write(&pa, to_json(&a)).unwrap();
    fs::write(&pb, to_json(&b)).unwrap();
    // The choice reads back from JSON as it was written.
    assert_eq!(load_snapshot(&pa).unwrap(), a);
    let out = compare(&pa, &pb, None).unwrap().text;
    assert!(out.contains("Loop or page layout differs:"), "{out}");
    for threads in ["1 thread", "2 threads", "4 threads"] {
        let line = format!(
            "- 85 KiB/thread (l2) × {threads}: avx2 ymm mul+add, huge pages (A) → avx2 ymm mul+add, no huge pages (B)"
        );
        assert!(out.contains(&line), "no {line:?} in\n{out}");
    }
    assert!(
        !out.contains("(dram) × 1 thread: avx2"),
        "same loop at dram: not listed\n{out}"
    );
    // Against itself: the same everywhere.
    assert!(
        compare(&pa, &pa, None)
            .unwrap()
            .text
            .contains("Loop and page layout: the same in every cell")
    );
    // Against a file from before the choice: what such a run did, and the setting.
    let out = compare(&pold, &pa, None).unwrap().text;
    assert!(out.contains("- kernel and pages chosen by: --kernel avx2 --huge-pages on (A) → --kernel auto --huge-pages auto (B)"), "{out}");
    assert!(
        out.contains(
            "avx2's default loop, huge pages (not recorded) (A) → avx2 xmm mul+add, huge pages (B)"
        ),
        "{out}"
    );
    // Two files from before the choice say nothing about loops.
    assert!(!compared().contains("Loop"));
}

#[test]
fn a_version_1_file_compares_as_its_schema_2_twin() {
    // a-v1.json is snapshot_a() as schema 1 wrote it; a.json the same run in schema 2.
    let old = fixture_path("a-v1.json");
    assert!(
        fs::read_to_string(&old)
            .unwrap()
            .contains("\"schema_version\": 1")
    );
    let from_v1 = compare(&old, &fixture_path("b.json"), None).unwrap().text;
    let from_v2 = compared();
    let body = |text: &str| text.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&from_v1), body(&from_v2));
    assert!(from_v1.starts_with(&format!(
        "A: {} (bench-a, taken 2026-01-02 03:04:05 UTC)",
        old.display()
    )));
    // And as a baseline, cell by cell.
    let base = Baseline::load(&old).unwrap();
    let twin = Baseline::load(&fixture_path("a.json")).unwrap();
    let median = base.median_for("128 MiB (dram)", 4);
    assert!(median.is_some());
    assert_eq!(median, twin.median_for("128 MiB (dram)", 4));
}

#[test]
fn the_ci_recipe_run_as_written_is_accepted_by_the_gate_on_the_first_try() {
    let out = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_stream-top");
    // The recipe as written, on a small grid and three processes a side so that it takes
    // seconds: the gate may pass, fail or be undecided on this host, but never refuse.
    let run = std::process::Command::new("sh")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ci-recipe.sh"))
        .env("BEFORE", bin)
        .env("AFTER", bin)
        .env(
            "GRID",
            "--threads 1 --sets 16KiB/thread --rounds 3 --round-ms 2",
        )
        .env("REPETITIONS", "3")
        .env("OUT", out.path())
        .env("STREAM_TOP_DATA_DIR", data.path())
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(
        matches!(run.status.code(), Some(0 | 1 | 3)),
        "{:?}: {err}{text}",
        run.status
    );
    assert!(text.contains("Gate --fail-if-slower 5:"), "{text}");
    assert!(
        text.contains("| 16 KiB/thread (l1) | 1 | 3 | 3 |") || text.contains("| 1 | 3 | 3 |"),
        "{text}"
    );
    // Every process but the first took its loop and page layout from the first one's snapshot.
    for side in ["before", "after"] {
        let snapshots: Vec<String> = std::fs::read_dir(out.path().join(side))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        let reused = snapshots
            .iter()
            .filter(|t| t.contains("\"kernel_by\": \"reused\""))
            .count();
        let first = usize::from(side == "before");
        assert_eq!((snapshots.len(), reused), (3, 3 - first), "{side}: {err}");
    }
}
