//! A report says exactly what it measured. A cell that could not run (its
//! arrays could not be mapped, a worker died) is shown as failed with its reason in every
//! format, the checksum line counts only the configurations that ran, and the exit code is 1;
//! the engine goes on with the next cell where it can. A figure that could not be read is
//! unknown, never 0.

use crate::support::fail_common::*;
use crate::support::report_fixtures::{md_row, snapshot_a};
use std::fs;
use std::path::Path;
use stream_top::show::report::{from_json, to_csv, to_json, to_markdown};

/// The export of `dir` with extension `ext`.
fn exported(dir: &Path, ext: &str) -> String {
    let name = names_in(dir)
        .into_iter()
        .find(|n| n.ends_with(&format!(".{ext}")))
        .unwrap_or_else(|| panic!("no .{ext} in {}", dir.display()));
    fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn a_cell_whose_arrays_cannot_be_mapped_is_reported_failed_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    // An address-space limit far under the 512 MiB set's three arrays, far over what the
    // program and the 1 MiB set need. The set that cannot run comes first: the sweep goes on.
    let script = format!(
        "ulimit -v 600000 && exec {BIN} --headless --threads 1 --sets 512MiB,1MiB \
         --rounds 3 --round-ms 2 --export {}",
        export.display()
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &script]);
    let o = run(cmd, "under ulimit -v");
    assert_eq!(o.code, Some(1), "a partial run fails: {}", o.stderr);
    assert!(
        o.stderr.contains("512 MiB × 1: FAILED: cannot map"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("1 MiB × 1: "),
        "the next cell ran: {}",
        o.stderr
    );

    let md = &o.stdout;
    let row_1mib = md_row(md, "1 MiB", 1, false).expect(md);
    assert!(row_1mib.contains(" | ok | "), "{row_1mib}");
    let failed = md_row(md, "512 MiB", 1, false).expect(md);
    assert!(failed.contains("FAILED: cannot map"), "{failed}");
    assert!(!md.contains("every configuration produced"), "{md}");
    assert!(
        md.contains(
            "checksums: every configuration that ran (1 configuration) produced the reference \
             sum of array a; 1 configuration could not run: 512 MiB × 1 thread"
        ),
        "{md}"
    );

    // Every format of the export says the same.
    assert_eq!(&exported(&export, "md"), md);
    let csv = exported(&export, "csv");
    let csv_row = csv.lines().find(|l| l.starts_with("512 MiB,")).expect(&csv);
    assert!(csv_row.contains(",cannot map"), "{csv_row}");
    let snap = from_json(&exported(&export, "json"), Path::new("x.json")).unwrap();
    assert_eq!(snap.cells.len(), 1);
    assert_eq!(snap.failed.len(), 1);
    assert_eq!(
        (snap.failed[0].set_label.as_str(), snap.failed[0].threads),
        ("512 MiB", 1)
    );
    assert!(
        snap.failed[0].reason.contains("cannot map"),
        "{:?}",
        snap.failed
    );
    assert!(exported(&export, "svg").contains("FAILED: 512 MiB × 1 thread"));
}

/// A short run of two cells, one and two threads. Pinned (kernel and pages), so no trial runs
/// before the first cell: worker 1's first round is in the two-thread cell.
const TWO_CELLS: &[&str] = &[
    "--headless",
    "--threads",
    "1,2",
    "--sets",
    "16KiB/thread",
    "--rounds",
    "3",
    "--round-ms",
    "2",
    "--kernel",
    "portable",
    "--huge-pages",
    "on",
];

/// A build without the `test-hooks` feature (a release, `cargo install`) does not read the
/// hooks' variables: a user's environment cannot make a worker panic or yield.
#[cfg(not(feature = "test-hooks"))]
#[test]
fn a_build_without_the_test_hooks_ignores_their_variables() {
    let mut cmd = stream_top(TWO_CELLS);
    cmd.env("STREAM_TOP_PANIC_WORKER", "1")
        .env("STREAM_TOP_YIELD_WORKER", "1")
        .env("STREAM_TOP_RETRY_FIRST_MS", "1");
    let o = run(cmd, "a run with the hooks' variables set");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    assert!(
        md_row(&o.stdout, "16 KiB/thread", 2, false).is_some(),
        "{}",
        o.stdout
    );
}

// A test hook (`STREAM_TOP_…`): only in a build with the `test-hooks` feature.
#[cfg(feature = "test-hooks")]
#[test]
fn a_worker_that_dies_fails_its_cell_and_the_cells_after_it_are_not_run() {
    let mut cmd = stream_top(TWO_CELLS);
    cmd.env("STREAM_TOP_PANIC_WORKER", "1");
    let o = run(cmd, "a worker panics");
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let md = &o.stdout;
    let row = |threads, rerun| md_row(md, "16 KiB/thread", threads, rerun).expect(md);
    assert!(row(1, false).contains(" | ok | "), "{md}");
    assert!(row(2, false).contains("FAILED: worker 1 panicked"), "{md}");
    assert!(
        row(1, true).contains("FAILED: not run: the engine stopped (worker 1 panicked"),
        "{md}"
    );
    assert!(md.contains("2 configurations could not run"), "{md}");
}

#[test]
fn huge_page_bytes_that_could_not_be_read_are_unknown_not_zero() {
    let mut snap = snapshot_a();
    for c in &mut snap.cells {
        c.array_bytes = 3 << 20;
        c.huge_bytes = None;
    }
    let md = to_markdown(&snap);
    assert!(
        md.contains("Huge pages: unknown (/proc/self/smaps could not be read)."),
        "{md}"
    );
    assert!(!md.contains("Huge pages: 0 B"), "{md}");
    let csv = to_csv(&snap);
    let first_row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        first_row[first_row.len() - 2],
        "",
        "huge_bytes empty: {csv}"
    );
    let json = to_json(&snap);
    assert!(
        json.contains("\"huge_bytes\": null") && !json.contains("\"huge_bytes\": 0"),
        "null, not 0: {json}"
    );
    let back = from_json(&json, Path::new("x.json")).unwrap();
    assert!(back.cells.iter().all(|c| c.huge_bytes.is_none()));

    // One known, the rest unknown: the sum covers the known one and says what it lacks.
    snap.cells[0].huge_bytes = Some(2 << 20);
    let md = to_markdown(&snap);
    assert!(
        md.contains("Huge pages: 2 MiB of the arrays' 3 MiB"),
        "{md}"
    );
    assert!(md.contains("unknown for 6 configurations"), "{md}");
}

#[test]
fn the_monitor_shows_a_cell_that_could_not_run_and_its_snapshot_lists_it() {
    use crate::support::report_fixtures::{host, run_info};
    use crate::support::tui_common::{app, round};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use stream_top::engine::events::Event;
    use stream_top::engine::plan::CellId;
    use stream_top::show::report::Snapshot;
    use stream_top::show::tui::ui;
    use stream_top::show::tui::view::ViewState;

    let mut app = app();
    let dram = CellId::new(1, 2);
    app.on_event(&round(CellId::new(0, 1), 20.0));
    app.on_event(&Event::CellFailed {
        cell: dram,
        reason: "cannot map 64 MiB for an array: Cannot allocate memory".into(),
    });
    assert!(
        app.narration
            .log
            .iter()
            .any(|e| e.text.contains("could not run: cannot map"))
    );
    assert!(
        app.live
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("cannot map"))
    );

    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ui::draw(f, &app, &mut ViewState::default()))
        .unwrap();
    let screen: String = t
        .backend()
        .buffer()
        .content
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(screen.contains("failed"), "{screen}");

    let snap = Snapshot::build(
        &run_info("box", None),
        &app.grid,
        &app.board,
        &host(0.1),
        "2026-01-02 03:04:05".into(),
    );
    assert_eq!(snap.failed.len(), 1);
    assert_eq!(snap.failed[0].threads, 2);
    assert!(snap.failed[0].reason.contains("cannot map"));
    // Cells that have not run yet in a live sweep are not failures.
    assert_eq!(snap.cells.len(), 1);
}
