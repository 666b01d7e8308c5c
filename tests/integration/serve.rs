//! The Prometheus side: the exporter's counts and textfile on synthetic events, and the real
//! binary as a service (its endpoint, its exposition, SIGTERM, bind errors before measuring).

use crate::support::report_fixtures::{l2, run_info};
use crate::support::serve::{QUICK, Service};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;
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

/// An exporter that writes its textfile into a new temporary directory (kept while the first
/// is held), and the file's path.
fn textfile_exporter() -> (tempfile::TempDir, std::path::PathBuf, Exporter) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stream-top.prom");
    let x = Exporter::start(None, Some(file.clone()), &run_info("h", None))
        .unwrap()
        .unwrap();
    (dir, file, x)
}

/// A grid of the l2 set at `threads`, triad only.
fn l2_grid(threads: &[usize]) -> Grid {
    Grid {
        sets: vec![l2()],
        threads: threads.to_vec(),
        ops: vec![stream_top::engine::kernel::Op::Triad],
    }
}

#[test]
fn the_exporter_counts_from_events_and_writes_after_each_sweep() {
    let (_dir, file, mut x) = textfile_exporter();
    let grid = l2_grid(&[1, 2]);
    let mut board = Board::new(5);
    let (one, two) = (CellId::new(0, 1), CellId::new(0, 2));
    let rerun = CellId { rerun: true, ..one };
    let feed = |x: &mut Exporter, board: &mut Board, ev: Event| {
        board.record(&ev);
        x.on_event(&ev, board);
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
        has(r#"stream_top_rounds_total{level="l2",op="triad",set="l2",threads="1"} 2"#),
        "{text}"
    );
    assert!(
        has(r#"stream_top_late_rounds_total{level="l2",op="triad",set="l2",threads="1"} 1"#),
        "{text}"
    );
    assert!(
        has(r#"stream_top_checksum_failures_total{level="l2",op="triad",set="l2",threads="2"} 1"#),
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
        text.lines().any(
            |l| l == r#"stream_top_rounds_total{level="l2",op="triad",set="l2",threads="1"} 3"#
        ),
        "{text}"
    );
    promtool_check(&text);
}

/// A fresh exporter says which cells are still warming (fewer rounds than a first figure
/// needs): every cell at first, then each no longer once its rounds came.
#[test]
fn cells_are_warming_until_their_rounds_come() {
    let (_dir, file, mut x) = textfile_exporter();
    let grid = l2_grid(&[1, 2]);
    let mut board = Board::new(5);
    let (one, two) = (CellId::new(0, 1), CellId::new(0, 2));
    let warming = |x: &mut Exporter, board: &Board| {
        x.publish(&grid, board, true).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let of = |t: usize| {
            let name = format!(
                r#"stream_top_cell_warming{{level="l2",op="triad",set="l2",threads="{t}"}}"#
            );
            let line = text.lines().find(|l| l.starts_with(&format!("{name} ")));
            line.map(|l| l[name.len() + 1..].to_string())
        };
        (of(1), of(2))
    };
    let w = |v: &str| Some(v.to_string());
    assert_eq!(
        warming(&mut x, &board),
        (w("1"), w("1")),
        "fresh: both warming"
    );
    let feed = |x: &mut Exporter, board: &mut Board, ev: Event| {
        board.record(&ev);
        x.on_event(&ev, board);
    };
    for k in 1..=3 {
        feed(&mut x, &mut board, round(one, false, false, k * 1_000_000));
    }
    feed(&mut x, &mut board, round(two, true, false, 4_000_000));
    feed(&mut x, &mut board, round(two, false, false, 5_000_000));
    assert_eq!(
        warming(&mut x, &board),
        (w("0"), w("1")),
        "three rounds warm a cell; a warm-up round and one timed round do not"
    );
    feed(&mut x, &mut board, round(two, false, false, 6_000_000));
    feed(&mut x, &mut board, round(two, false, false, 7_000_000));
    assert_eq!(warming(&mut x, &board), (w("0"), w("0")));
}

#[test]
fn the_exporter_runs_the_contention_watch_and_counts_sweeps_and_memory() {
    let (_dir, _, mut x) = textfile_exporter();
    let drop = stream_top::judge::watch::contention::Thresholds {
        drop: 0.15,
        rounds: 3,
    };
    x.watch_contention(drop, 5);
    let grid = l2_grid(&[1]);
    let one = CellId::new(0, 1);
    let mut board = Board::new(5);
    let t0 = std::time::Instant::now();
    let mut feed = |x: &mut Exporter, ev: Event, s: u64| {
        board.record(&ev);
        x.on_event_at(&ev, &board, t0 + Duration::from_secs(s));
        x.tick(&grid, &board).unwrap();
        x.scrape(&grid, &board)
    };
    // 48 MB in 4.8 ms: 10 GB/s, five calm rounds teach the reference.
    feed(&mut x, Event::ArraysHeld(3 << 20), 0);
    for s in 0..5 {
        feed(&mut x, round(one, false, false, 4_800_000), s);
    }
    let calm = feed(&mut x, checksum(one, true), 5);
    let cell = &calm.cells[0];
    assert_eq!(cell.contended, Some(false));
    assert_eq!(cell.reference_gbs, Some(10.0));
    assert!(calm.last_sweep.is_some(), "one cell visited: a sweep");
    assert_eq!(calm.arrays_bytes, Some(3 << 20));
    // Three rounds at half the rate: contended, one episode.
    let mut slow = calm;
    for s in 6..9 {
        slow = feed(&mut x, round(one, false, false, 9_600_000), s);
    }
    assert_eq!(slow.cells[0].contended, Some(true), "{slow:?}");
    assert_eq!(slow.cells[0].contention_episodes, 1);
    let gone = feed(&mut x, Event::ArraysHeld(0), 9);
    assert_eq!(gone.arrays_bytes, Some(0));
    let text = stream_top::show::serve::exposition::render(&gone, 0);
    assert!(
        text.lines()
            .any(|l| l == r#"stream_top_contended{level="l2",op="triad",set="l2",threads="1"} 1"#),
        "{text}"
    );
    promtool_check(&text);
}

/// A sweep ends when every cell has a checksum in it or failed: a failed cell the engine
/// skips does not hold the sweep (nor the textfile) back, and one tried again must end in the
/// sweep again. The retries are counted, and the cells failed now.
#[test]
fn a_sweep_ends_with_a_failed_cell_and_a_retried_one_must_end_again() {
    let (_dir, file, mut x) = textfile_exporter();
    let grid = l2_grid(&[1, 2]);
    let mut board = Board::new(5);
    let (one, two) = (CellId::new(0, 1), CellId::new(0, 2));
    let feed = |x: &mut Exporter, board: &mut Board, ev: Event| {
        board.record(&ev);
        x.on_event(&ev, board);
        x.tick(&grid, board).unwrap();
        x.scrape(&grid, board)
    };
    let failed = Event::CellFailed {
        cell: two,
        reason: "stopped before the container's memory limit".into(),
    };
    let retry = Event::CellRetry {
        cell: two,
        tries: 1,
    };
    // The first sweep: one measured, two failed.
    feed(&mut x, &mut board, checksum(one, true));
    let s = feed(&mut x, &mut board, failed.clone());
    let first = s.last_sweep.expect("a sweep with a failed cell ends");
    assert_eq!((s.cells_failed, s.cell_retries), (1, 0));
    let text = std::fs::read_to_string(&file).expect("written after the sweep");
    assert!(
        text.lines().any(|l| l == "stream_top_cells_failed 1"),
        "{text}"
    );
    promtool_check(&text);
    std::fs::remove_file(&file).unwrap();
    // The next: the engine skips two, still failed; one's checksum ends it.
    std::thread::sleep(Duration::from_millis(20));
    let s = feed(&mut x, &mut board, checksum(one, true));
    let second = s.last_sweep.expect("a sweep");
    assert_ne!(second, first, "a second sweep");
    assert!(file.exists(), "the textfile is written again");
    // Tried again: two must end in this sweep now.
    let s = feed(&mut x, &mut board, retry);
    assert_eq!((s.cells_failed, s.cell_retries), (0, 1));
    let s = feed(&mut x, &mut board, checksum(one, true));
    assert_eq!(
        s.last_sweep,
        Some(second),
        "two has not ended in this sweep"
    );
    std::thread::sleep(Duration::from_millis(20));
    let s = feed(&mut x, &mut board, checksum(two, true));
    assert_ne!(s.last_sweep, Some(second), "two measured: the sweep ends");
    let text = stream_top::show::serve::exposition::render(&s, 0);
    assert!(
        text.lines().any(|l| l == "stream_top_cell_retries_total 1"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l == "stream_top_cells_failed 0"),
        "{text}"
    );
}

/// A grid whose every cell failed: between retries nothing happens, and no sweep is counted
/// for nothing each time the exporter ticks; the failure that answers a retry ends one.
#[test]
fn a_grid_of_failed_cells_counts_a_sweep_only_when_a_retry_ends() {
    let (_dir, file, mut x) = textfile_exporter();
    let grid = l2_grid(&[1]);
    let board = Board::new(5);
    let one = CellId::new(0, 1);
    let failed = Event::CellFailed {
        cell: one,
        reason: "no room".into(),
    };
    x.on_event(&failed, &board);
    x.tick(&grid, &board).unwrap();
    let first = x
        .scrape(&grid, &board)
        .last_sweep
        .expect("its failure ends a sweep");
    std::fs::remove_file(&file).unwrap();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(20));
        x.tick(&grid, &board).unwrap();
    }
    assert_eq!(x.scrape(&grid, &board).last_sweep, Some(first));
    assert!(!file.exists(), "no textfile written for nothing");
    x.on_event(
        &Event::CellRetry {
            cell: one,
            tries: 1,
        },
        &board,
    );
    x.tick(&grid, &board).unwrap();
    assert_eq!(x.scrape(&grid, &board).last_sweep, Some(first));
    std::thread::sleep(Duration::from_millis(20));
    x.on_event(&failed, &board);
    x.tick(&grid, &board).unwrap();
    assert_ne!(x.scrape(&grid, &board).last_sweep, Some(first));
}

#[test]
fn a_service_lets_its_arrays_go_between_visits_and_logs_the_remaps() {
    let svc = Service::start(QUICK);
    let deadline = std::time::Instant::now() + crate::support::serve::PATIENCE;
    let value = |body: &str, series: &str| -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    };
    // Mapped and first-touched again on every visit, and nothing held while it idles.
    let (mut remapped, mut idle_empty) = (false, false);
    while !(remapped && idle_empty) {
        assert!(std::time::Instant::now() < deadline, "no remaps seen");
        let (_, body) = svc.get("/metrics");
        remapped |= value(&body, "stream_top_arrays_mapped_total").is_some_and(|n| n >= 3.0);
        idle_empty |= value(&body, "stream_top_arrays_bytes") == Some(0.0);
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, body) = svc.get("/metrics");
    assert!(
        body.contains("# TYPE stream_top_last_sweep_timestamp_seconds gauge"),
        "{body}"
    );
    assert!(body.contains("stream_top_contended{"), "{body}");
    let (code, _, err) = svc.terminate();
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("arrays mapped and first-touched"), "{err}");
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

/// Hostile clients held open against a service: `idle` ones that send nothing and `trickling`
/// ones that send a byte of a request head that never ends, every 250 ms, until dropped.
struct Hostile {
    idle: Vec<TcpStream>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    trickler: Option<std::thread::JoinHandle<()>>,
}

impl Hostile {
    fn open(svc: &mut Service, idle: usize, trickling: usize) -> Hostile {
        let addr = svc.addr;
        // Refused means the service is gone: say how it ended.
        let mut connect = || {
            TcpStream::connect_timeout(&addr, Duration::from_secs(10))
                .unwrap_or_else(|e| panic!("connect: {e}; the service: {}", svc.state()))
        };
        let idle: Vec<TcpStream> = (0..idle).map(|_| connect()).collect();
        let trickling: Vec<TcpStream> = (0..trickling).map(|_| connect()).collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let head = b"GET /metrics HTTP/1.1\r\nX-Trickle: ";
        let trickler = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut trickling = trickling;
                let mut sent = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let byte = [*head.get(sent).unwrap_or(&b'a')];
                    for s in &mut trickling {
                        // The server may have dropped it: that is its right.
                        let _ = s.write(&byte);
                    }
                    sent += 1;
                    std::thread::sleep(Duration::from_millis(250));
                }
            })
        };
        Hostile {
            idle,
            stop,
            trickler: Some(trickler),
        }
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.trickler.take() {
            let _ = t.join();
        }
        self.idle.clear();
    }
}

/// Sends `request` and reads the whole answer (10 s at most, a functional bound, not a speed).
fn ask(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(request);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

#[test]
fn scrapes_get_through_hundreds_of_idle_and_trickling_connections() {
    let mut svc = Service::start(QUICK);
    let hostile = Hostile::open(&mut svc, 300, 50);
    // A normal scrape among them: answered in full.
    let (status, body) = svc.get("/metrics");
    assert!(
        status.contains(" 200 "),
        "the scrape was shut out: {status:?}"
    );
    assert!(body.contains("# TYPE stream_top_info gauge"), "{body}");
    assert!(body.contains("stream_top_info{"), "{body}");
    // The endpoint's other answers hold as well.
    let r = ask(svc.addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
    assert!(
        r.starts_with("HTTP/1.1 200") && !r.contains("# TYPE"),
        "{r}"
    );
    let r = ask(
        svc.addr,
        b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
    );
    assert!(r.starts_with("HTTP/1.1 405"), "{r}");
    let r = ask(svc.addr, b"GET /etc/passwd HTTP/1.1\r\n\r\n");
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
    // A head past 8 KiB is refused, not read on.
    let mut long = b"GET /metrics HTTP/1.1\r\nX-Long: ".to_vec();
    long.resize(9 * 1024, b'a');
    let r = ask(svc.addr, &long);
    assert!(r.starts_with("HTTP/1.1 431"), "{r}");
    drop(hostile);
    let (code, _, err) = svc.terminate();
    // 128 + SIGTERM, as the unit's SuccessExitStatus expects.
    assert_eq!(code, Some(143), "{err}");
}

#[test]
fn more_connections_than_the_table_holds_still_let_a_scrape_in() {
    let mut svc = Service::start(QUICK);
    // 600 > the 512 the server holds: the oldest heads are dropped to make room, and the
    // scrape, newest of all, is answered.
    let hostile = Hostile::open(&mut svc, 550, 50);
    let (status, body) = svc.get("/metrics");
    assert!(
        status.contains(" 200 "),
        "the scrape was shut out: {status:?}"
    );
    assert!(body.contains("# TYPE stream_top_info gauge"), "{body}");
    drop(hostile);
}

#[test]
fn sigterm_ends_a_service_with_hundreds_of_connections_open() {
    let mut svc = Service::start(QUICK);
    let _hostile = Hostile::open(&mut svc, 300, 50);
    let (code, out, err) = svc.terminate();
    // 128 + SIGTERM, as every mode a signal ends (the unit file counts it as success).
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("SIGTERM: stopping"), "{err}");
    assert!(out.contains("| per array | threads | median GB/s"), "{out}");
}

#[test]
fn a_service_short_of_open_files_still_lets_a_scrape_in() {
    // 64 open files at most: the table holds half of them (32, not its 512), so the 150 push
    // out the oldest heads, and the other half stays the rest of the process's. A table that
    // took every free file made the service's own next file fail: its signal handlers at
    // start, "cannot install signal handlers: Too many open files", exit 1, about 1 run in 3.
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--serve", "127.0.0.1:0"])
        .args(QUICK);
    let mut svc = Service::spawn(command);
    let hostile = Hostile::open(&mut svc, 150, 0);
    let (status, body) = svc.get("/metrics");
    assert!(
        status.contains(" 200 "),
        "the scrape was shut out: {status:?}"
    );
    assert!(body.contains("# TYPE stream_top_info gauge"), "{body}");
    drop(hostile);
    let (code, _, err) = svc.terminate();
    // 128 + SIGTERM, as the unit's SuccessExitStatus expects.
    assert_eq!(code, Some(143), "{err}");
}

#[test]
fn a_service_runs_the_probe_unless_told_and_publishes_its_latency() {
    let svc = Service::start(QUICK);
    let deadline = std::time::Instant::now() + crate::support::serve::PATIENCE;
    let value = |body: &str, series: &str| -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    };
    let body = loop {
        let (_, body) = svc.get("/metrics");
        if value(&body, "stream_top_probe_latency_seconds").is_some() {
            break body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no probe latency:\n{body}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    // Seconds per load: a memory latency is nanoseconds, never seconds or zero.
    let s = value(&body, "stream_top_probe_latency_seconds").unwrap();
    assert!(s > 0.0 && s < 1e-3, "{s}");
    assert!(
        body.contains("# TYPE stream_top_probe_contended gauge"),
        "{body}"
    );
    assert!(value(&body, "stream_top_probe_samples_total").is_some_and(|n| n >= 1.0));
    let (code, _, stderr) = svc.terminate();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("stream-top: probe on CPU "), "{stderr}");
    assert!(stderr.contains("chain validated"), "{stderr}");
    // --no-probe: none of its families.
    let svc = Service::start(&with_args(QUICK, &["--no-probe"]));
    let body = svc.wait_for_bandwidth();
    assert!(!body.contains("stream_top_probe"), "{body}");
    let (_, _, stderr) = svc.terminate();
    assert!(!stderr.contains("probe"), "{stderr}");
}

fn with_args<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<&'a str> {
    a.iter().chain(b).copied().collect()
}
