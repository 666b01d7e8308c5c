//! `--record FILE` and `stream-top replay FILE --headless`: a recording replays to the table
//! the run printed, survives `kill -9`, and a file that is not a recording is never written.

use crate::support::binary::{BIN, SMALL, run_binary};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The table's rows: what a replay must give back as the run printed it.
fn rows(table: &str) -> Vec<&str> {
    table.lines().filter(|l| l.starts_with('|')).collect()
}

/// A small run with no trials: its choices are rules, so the run is short in a debug build.
fn small_args(record: &str) -> Vec<&str> {
    let mut a = SMALL.to_vec();
    a.extend([
        "--kernel",
        "portable",
        "--huge-pages",
        "off",
        "--record",
        record,
    ]);
    a
}

#[test]
fn a_headless_run_replays_to_the_table_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.rec");
    let rec = rec.to_str().unwrap();
    let (code, table, err) = run_binary(&small_args(rec));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("recording to"), "{err}");
    let (code, replayed, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    assert!(!rows(&table).is_empty());
    assert_eq!(rows(&replayed), rows(&table));
}

#[test]
fn a_run_of_several_ops_replays_each_ops_table() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("ops.rec");
    let rec = rec.to_str().unwrap();
    let mut args = small_args(rec);
    args.extend(["--op", "copy,read"]);
    let (code, table, err) = run_binary(&args);
    assert_eq!(code, 0, "{err}");
    let (code, replayed, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    // Each op's heading and its rows, as the run printed them (before ops were recorded, every
    // round replayed as a triad round, and these tables were empty).
    let ops_and_rows = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("### ") || l.starts_with('|'))
            .map(String::from)
            .collect()
    };
    assert!(
        table.contains("### copy") && table.contains("### read"),
        "{table}"
    );
    assert_eq!(ops_and_rows(&replayed), ops_and_rows(&table));
    assert!(
        !replayed.contains("No cell has a timed round yet"),
        "{replayed}"
    );
}

#[test]
fn a_window_with_no_rounds_and_a_bad_time_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.rec");
    let rec = rec.to_str().unwrap();
    assert_eq!(run_binary(&small_args(rec)).0, 0);
    let (code, _, err) = run_binary(&["replay", rec, "--headless", "--from", "10h", "--to", "11h"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("no rounds recorded"), "{err}");
    let (code, _, err) = run_binary(&["replay", rec, "--headless", "--at", "soon"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--at soon: not a time"), "{err}");
}

#[test]
fn a_file_that_is_not_a_recording_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let (code, _, err) = run_binary(&small_args(notes.to_str().unwrap()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a stream-top recording"), "{err}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    let (code, _, err) = run_binary(&["replay", notes.to_str().unwrap(), "--headless"]);
    assert_eq!(code, 2, "{err}");
}

/// The rounds a replay of the recording counts for its one cell, or None while it has none.
fn replayed_rounds(rec: &str) -> Option<usize> {
    let (code, out, _) = run_binary(&["replay", rec, "--headless", "--from", "0", "--to", "24h"]);
    (code == 0).then(|| rows(&out).len())
}

#[test]
fn a_service_killed_with_sigkill_replays_what_it_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("svc.rec");
    let rec = rec.to_str().unwrap();
    let mut args = small_args(rec);
    args.retain(|a| *a != "--rounds" && *a != "3");
    args.extend(["--serve", "127.0.0.1:0", "--duty", "100"]);
    let mut child = Command::new(BIN)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the writer has put rounds on disk (it writes at least once a second); the bound
    // only keeps a broken build from hanging the suite.
    let until = Instant::now() + Duration::from_secs(300);
    while replayed_rounds(rec).is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(500));
    }
    // SIGKILL: no handler runs, nothing is flushed on the way out.
    child.kill().unwrap();
    child.wait().unwrap();
    let (code, out, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    assert!(rows(&out).len() >= 3, "{out}");
}

#[test]
fn two_windows_of_one_recording_compare() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.rec");
    let rec = rec.to_str().unwrap();
    assert_eq!(run_binary(&small_args(rec)).0, 0);
    let window = |name: &str| {
        let path = dir.path().join(name);
        let (code, json, err) = run_binary(&[
            "replay",
            rec,
            "--headless",
            "--from",
            "0",
            "--to",
            "1h",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::write(&path, json).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (window("a.json"), window("b.json"));
    let (code, text, err) = run_binary(&["compare", &a, &b]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("B/A"), "{text}");
}

#[test]
fn the_interactive_replay_needs_a_terminal_and_a_window_needs_headless() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.rec");
    let rec = rec.to_str().unwrap();
    assert_eq!(run_binary(&small_args(rec)).0, 0);
    let (code, _, err) = run_binary(&["replay", rec]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("not a terminal"), "{err}");
    let (code, _, err) = run_binary(&["replay", rec, "--from", "0", "--to", "1m"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("add --headless"), "{err}");
}
