//! The JSON snapshot: it reads back equal to what was written, and bad files are refused with
//! one line naming the file.

use crate::support::report_fixtures::*;
use std::path::Path;
use stream_top::show::report::{SCHEMA_VERSION, from_json, load_snapshot, to_json};

#[test]
fn round_trips_built_and_reference_snapshots() {
    for snap in [snapshot_a(), snapshot_b(), m4_pro_reference_snapshot()] {
        let text = to_json(&snap);
        let back = from_json(&text, Path::new("x.json")).unwrap();
        assert_eq!(back, snap);
        // The per-round history is there, not just the table.
        assert!(text.contains("\"history\""));
        let rounds: usize = snap.cells.iter().map(|c| c.history.len()).sum();
        assert_eq!(text.matches("\"span_ns\"").count(), rounds);
        assert!(text.contains(&format!("\"schema_version\": {SCHEMA_VERSION}")));
    }
}

#[test]
fn a_built_snapshot_holds_what_the_board_had() {
    let a = snapshot_a();
    assert_eq!(a.cells.len(), 7);
    let last = a.cells.last().unwrap();
    assert!(last.rerun);
    assert_eq!(last.label, "85 KiB/thread (l2), run again last");
    let first = &a.cells[0];
    assert_eq!((first.set, first.threads, first.rerun), (0, 1, false));
    assert_eq!(
        first.history.len(),
        5,
        "warm-up excluded, five timed rounds"
    );
    assert!((first.figures.median_gbs - 30.0).abs() < 1e-6);
    assert!(first.checksum.as_ref().unwrap().ok);
    assert_eq!(first.array_bytes, (3 * 128) << 20);
    assert_eq!(a.run_seconds, Some(245));
    let d4 = a.cell("128 MiB (dram)", 4, false).unwrap();
    assert_eq!(d4.figures.late_rounds, 2);
    assert_eq!(d4.cpus, vec![0, 1, 2, 3]);
    assert!(!a.derived.is_empty());
}

fn error_for(text: &str) -> String {
    let e = from_json(text, Path::new("results/run.json")).unwrap_err();
    assert_eq!(e.exit_code(), 2, "the person's to fix: {e}");
    e.to_string()
}

#[test]
fn another_schema_version_is_refused_by_name() {
    let text = to_json(&snapshot_a()).replacen(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 999",
        1,
    );
    let e = error_for(&text);
    assert!(e.starts_with("results/run.json: "), "{e}");
    assert!(e.contains("schema version 999"), "{e}");
    assert!(
        e.contains(&format!(
            "reads versions 1 to {SCHEMA_VERSION}; read it with a newer"
        )),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn a_truncated_file_is_refused_by_name() {
    let text = to_json(&snapshot_a());
    let e = error_for(&text[..text.len() / 2]);
    assert!(e.starts_with("results/run.json: truncated JSON"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn a_file_that_is_not_a_snapshot_is_refused_by_name() {
    for (text, says) in [
        ("hello, world", "not a stream-top snapshot (not JSON"),
        (
            "[1, 2, 3]",
            "not a stream-top snapshot (the JSON is not an object)",
        ),
        ("{\"name\": \"package.json\"}", "no schema_version field"),
        ("{\"schema_version\": \"one\"}", "not a number"),
        (
            &format!("{{\"schema_version\": {SCHEMA_VERSION}, \"cells\": []}}"),
            "not a valid stream-top snapshot",
        ),
        ("", "truncated JSON"),
    ] {
        let e = error_for(text);
        assert!(e.starts_with("results/run.json: "), "{text}: {e}");
        assert!(e.contains(says), "{text}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn load_snapshot_names_missing_and_binary_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let e = load_snapshot(&missing).unwrap_err();
    assert_eq!(e.exit_code(), 2, "a file the person named: {e}");
    let e = e.to_string();
    assert!(e.contains("nope.json: cannot read"), "{e}");
    let binary = dir.path().join("bin.json");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x7b]).unwrap();
    let e = load_snapshot(&binary).unwrap_err().to_string();
    assert!(e.contains("bin.json: not a stream-top snapshot"), "{e}");
}

#[test]
fn a_nan_checksum_and_an_odd_round_still_read_back() {
    use stream_top::engine::events::{Event, RoundRecord};
    use stream_top::engine::plan::{CellId, Grid};
    use stream_top::judge::stats::Board;
    // A kernel that wrote NaN into `a`, and a round record with no threads (slowest = inf).
    let grid = Grid {
        sets: vec![l2()],
        threads: vec![1],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let cell = CellId::new(0, 1);
    let mut board = Board::new(5);
    feed(&mut board, cell, &[10.0], None);
    board.record(&Event::Round(Box::new(RoundRecord::from_threads(
        cell,
        false,
        1,
        Vec::new(),
    ))));
    board.record(&Event::Checksum(stream_top::engine::events::Checksum {
        cell,
        expected: 5,
        actual: f64::NAN,
        ok: false,
    }));
    let snap = stream_top::show::report::Snapshot::build(
        &run_info("h", None),
        &grid,
        &board,
        &host(0.0),
        "2026-01-02 03:04:05".into(),
    );
    let text = to_json(&snap);
    assert!(text.contains("\"actual\": \"NaN\""), "{text}");
    let back = from_json(&text, Path::new("x.json")).unwrap();
    assert!(back.cells[0].checksum.as_ref().unwrap().actual.is_nan());
    assert!(
        back.cells[0]
            .history
            .iter()
            .all(|r| r.slowest_thread_gbs.is_finite())
    );
    assert_eq!(back.cells[0].figures, snap.cells[0].figures);
    let md = stream_top::show::report::to_markdown(&back);
    assert!(
        md.contains("sum of array a NaN against the reference 5"),
        "{md}"
    );
}
