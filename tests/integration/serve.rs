//! The Prometheus side: the exporter's counts and textfile on synthetic events, and the real
//! binary as a service (its endpoint, its exposition, SIGTERM, bind errors before measuring).

use crate::support::report_fixtures::{l2, run_info};
use crate::support::serve::{QUICK, Service};
use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use stream_top::engine::events::{Checksum, Event, RoundRecord, ThreadTiming};
use stream_top::engine::plan::{CellId, Grid};
use stream_top::judge::stats::Board;
use stream_top::show::serve::Exporter;

/// `promtool check metrics` on `text`, where promtool is installed (CI installs it).
fn promtool_check(text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "promtool is not installed, but CI must have it (.ci/run installs prometheus)"
        );
        eprintln!("promtool check skipped: promtool is not installed");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn round(cell: CellId, warmup: bool, late: bool, end_ns: u64) -> Event {
    let t = |start_ns: u64, end_ns: u64| ThreadTiming {
        start_ns,
        end_ns,
        cpu_start: 0,
        cpu_end: 0,
        bytes: 24_000_000,
        ..Default::default()
    };
    // A late round: the second thread starts when the first has ended.
    let threads = if late {
        vec![t(0, end_ns / 2), t(end_ns / 2, end_ns)]
    } else {
        vec![t(0, end_ns), t(0, end_ns - 1)]
    };
    Event::Round(Box::new(RoundRecord::from_threads(
        cell, warmup, 1, threads,
    )))
}

fn checksum(cell: CellId, ok: bool) -> Event {
    Event::Checksum(Checksum {
        cell,
        expected: 3,
        actual: if ok { 3.0 } else { 2.0 },
        ok,
    })
}

#[test]
fn the_exporter_counts_from_events_and_writes_after_each_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stream-top.prom");
    let mut x = Exporter::start(None, Some(file.clone()), &run_info("h", None))
        .unwrap()
        .unwrap();
    let grid = Grid {
        sets: vec![l2()],
        threads: vec![1, 2],
    };
    let mut board = Board::new(5);
    let (one, two) = (CellId::new(0, 1), CellId::new(0, 2));
    let rerun = CellId { rerun: true, ..one };
    let feed = |x: &mut Exporter, board: &mut Board, ev: Event| {
        board.record(&ev);
        x.on_event(&ev);
        x.tick(&grid, board).unwrap();
    };
    feed(&mut x, &mut board, round(one, true, false, 1_000_000));
    feed(&mut x, &mut board, round(one, false, false, 2_000_000));
    feed(&mut x, &mut board, round(one, false, true, 3_000_000));
    feed(&mut x, &mut board, checksum(one, true));
    assert!(!file.exists(), "half a sweep: nothing written yet");
    feed(&mut x, &mut board, round(two, false, false, 4_000_000));
    feed(&mut x, &mut board, checksum(two, false));
    let text = std::fs::read_to_string(&file).expect("written after the sweep");
    let has = |s: &str| text.lines().any(|l| l == s);
    // Warm-up rounds do not count; the late one does.
    assert!(
        has(r#"stream_top_rounds_total{level="l2",set="l2",threads="1"} 2"#),
        "{text}"
    );
    assert!(
        has(r#"stream_top_late_rounds_total{level="l2",set="l2",threads="1"} 1"#),
        "{text}"
    );
    assert!(
        has(r#"stream_top_checksum_failures_total{level="l2",set="l2",threads="2"} 1"#),
        "{text}"
    );
    // The headless rerun counts with its cell (same labels), and a new sweep writes again.
    std::fs::remove_file(&file).unwrap();
    feed(&mut x, &mut board, round(rerun, false, false, 5_000_000));
    feed(&mut x, &mut board, checksum(rerun, true));
    assert!(!file.exists(), "the next sweep has not ended");
    x.publish(&grid, &board, true).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.lines()
            .any(|l| l == r#"stream_top_rounds_total{level="l2",set="l2",threads="1"} 3"#),
        "{text}"
    );
    promtool_check(&text);
}

#[test]
fn a_taken_port_is_one_line_and_exit_2_before_measuring() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--serve", &addr])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("stream-top: --serve {addr}: cannot listen there")),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--serve", "203.0.113.7:9464"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--prom-file", "/nonexistent-dir/x.prom"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--prom-file /nonexistent-dir/x.prom: no directory"),
        "{err}"
    );
}

#[test]
fn a_service_answers_scrapes_and_ends_on_sigterm() {
    let svc = Service::start(QUICK);
    let (status, index) = svc.get("/");
    assert!(
        status.contains(" 200 ") && index.contains("/metrics"),
        "{index}"
    );
    let body = svc.wait_for_bandwidth();
    assert!(body.contains("# TYPE stream_top_bandwidth_bytes_per_second gauge"));
    assert!(body.contains("stream_top_info{"), "{body}");
    promtool_check(&body);
    let (code, out, err) = svc.terminate();
    // 128 + SIGTERM, as every mode a signal ends (the unit's SuccessExitStatus lists it).
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("SIGTERM: stopping"), "{err}");
    // The table of what was measured, as a plain headless run prints it.
    assert!(out.contains("| per array | threads | median GB/s"), "{out}");
}
