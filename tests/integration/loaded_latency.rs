//! `--measure loaded-latency`: its refusals, its table in every format, its snapshot's round
//! trip, and one short real run (structure only: the machine is shared).

use crate::support::binary::run_binary;
use crate::support::csv::parse_csv;
use crate::support::fail_common::assert_refused_early;
use crate::support::report_fixtures::snapshot_a;
use std::path::Path;
use stream_top::show::report::loaded::LOADED_CSV_COLUMNS;
use stream_top::show::report::model::LoadedLatencyPoint;
use stream_top::show::report::{Snapshot, from_json, to_csv, to_json, to_markdown, to_svg};

/// A loaded-latency snapshot: the idle reference at 100 ns and four points, the knee at the
/// 14.5 GB/s point.
fn loaded_snapshot() -> Snapshot {
    let mut s = snapshot_a();
    s.cells.clear();
    s.failed.clear();
    s.derived.clear();
    let p = |delay: Option<u64>, gbs: f64, ns: f64, knee: bool| LoadedLatencyPoint {
        delay_ns: delay,
        delay_spins: delay.map(|d| d * 2),
        load_threads: if delay.is_some() { 1 } else { 0 },
        load_gbs: gbs,
        latency_ns: ns,
        times_idle: ns / 100.0,
        knee,
        chase_bytes: 384 << 20,
        chase_cpu: Some(0),
    };
    s.loaded_latency = vec![
        p(None, 0.0, 100.0, false),
        p(Some(0), 17.5, 260.0, false),
        p(Some(5_000), 14.5, 215.0, true),
        p(Some(10_000), 9.0, 150.0, false),
        p(Some(640_000), 0.5, 102.0, false),
    ];
    s
}

#[test]
fn bad_loaded_latency_arguments_are_one_line_and_exit_2() {
    let ll = ["--headless", "--measure", "loaded-latency"];
    let with =
        |more: &[&'static str]| -> Vec<&'static str> { ll.iter().chain(more).copied().collect() };
    for (args, flag, says) in [
        (
            with(&["--delays", "0,5us,2us"]),
            "--delays",
            "not above the delay before it",
        ),
        (
            with(&["--delays", "0,fast"]),
            "--delays",
            "'fast' is not a delay",
        ),
        (with(&["--delays", "20ms"]), "--delays", "over 10 ms"),
        (
            with(&["--delays", ""]),
            "--delays",
            "not a whole number of ns",
        ),
        (
            with(&["--sets", "l1,l2"]),
            "--sets",
            "chases one working set",
        ),
        (
            with(&["--sets", "16KiB..1MiB"]),
            "loaded-latency",
            "not a range",
        ),
        (with(&["--matrix"]), "loaded-latency", "not with --matrix"),
        (
            with(&["--repeat", "3"]),
            "loaded-latency",
            "not with --repeat",
        ),
        (
            vec!["--headless", "--delays", "0,1us"],
            "--delays",
            "only with --measure loaded-latency",
        ),
        (
            vec!["--measure", "loaded-latency"],
            "stdout is not a terminal",
            "--headless",
        ),
        (
            vec!["--headless", "--measure", "sideways"],
            "--measure",
            "sideways",
        ),
    ] {
        assert_refused_early(&args, flag, says);
    }
}

#[test]
fn the_table_in_markdown_names_each_delay_and_the_knee() {
    let md = to_markdown(&loaded_snapshot());
    assert!(
        md.contains("| delay | load GB/s | latency ns | × idle |"),
        "{md}"
    );
    assert!(
        md.contains("| idle (no load) | 0.00 | 100.0 | 1.00 |"),
        "{md}"
    );
    assert!(
        md.contains("| 5.0 µs | 14.50 | 215.0 | 2.15 (knee) |"),
        "{md}"
    );
    assert!(md.contains("| 640.0 µs | 0.50 | 102.0 | 1.02 |"), "{md}");
    assert_eq!(md.matches("(knee)").count(), 1);
    assert!(
        md.contains("Knee at 14.5 GB/s of load (delay 5.0 µs)"),
        "{md}"
    );
    // The run's header lines stay; the bandwidth table does not appear.
    assert!(md.starts_with("stream-top "), "{md}");
    assert!(!md.contains("median GB/s"), "{md}");
    assert!(!md.contains("checksums:"), "{md}");
}

#[test]
fn the_table_in_csv_has_a_row_per_point() {
    let rows = parse_csv(&to_csv(&loaded_snapshot()));
    assert_eq!(rows[0], LOADED_CSV_COLUMNS);
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[1][..7], ["", "", "0", "0", "100", "1", "false"]);
    assert_eq!(
        rows[3][..7],
        ["5000", "10000", "1", "14.5", "215", "2.15", "true"]
    );
    assert_eq!(rows[3][7], (384u64 << 20).to_string());
    assert_eq!(rows[3][8], "0");
}

#[test]
fn the_snapshot_round_trips_through_json() {
    let s = loaded_snapshot();
    let text = to_json(&s);
    assert!(text.contains("\"loaded_latency\": ["), "{text}");
    assert!(text.contains("\"delay_ns\": null"), "{text}");
    let back = from_json(&text, Path::new("loaded.json")).unwrap();
    assert_eq!(back, s);
    assert_eq!(to_json(&back), text);
    // A negative latency in a hand-edited file is refused, naming the field.
    let bad = text.replacen("\"latency_ns\": 215.0", "\"latency_ns\": -215.0", 1);
    let e = from_json(&bad, Path::new("bad.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("loaded_latency[2].latency_ns"), "{e}");
}

#[test]
fn the_chart_is_latency_against_bandwidth_with_the_knee() {
    let svg = to_svg(&loaded_snapshot());
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("load bandwidth, GB/s"), "x axis");
    assert!(svg.contains("latency, ns per load"), "y axis");
    assert!(
        svg.contains("knee: 14.5 GB/s, 215 ns (delay 5.0 µs)"),
        "the knee marked"
    );
    assert!(svg.contains("2 × idle 200.0 ns"), "the knee's threshold");
}

#[test]
fn a_short_run_prints_a_row_per_point_and_its_metrics() {
    let dir = std::env::temp_dir().join(format!("stream-top-ll-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prom = dir.join("ll.prom");
    let (code, out, err) = run_binary(&[
        "--headless",
        "--measure",
        "loaded-latency",
        "--sets",
        "64KiB",
        "--max-memory",
        "48MiB",
        "--delays",
        "0,100us",
        "--format",
        "csv",
        "--prom-file",
        prom.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let rows = parse_csv(&out);
    assert_eq!(rows.len(), 4, "{out}");
    assert_eq!(rows[1][0], "", "the idle reference first");
    assert_eq!(rows[2][0], "0");
    assert_eq!(rows[3][0], "100000");
    for r in &rows[1..] {
        assert!(r[4].parse::<f64>().unwrap() > 0.0, "latency {r:?}");
    }
    assert!(err.contains("loaded latency: a 64 KiB chase"), "{err}");
    // The knee's sentence goes on in lower case after the colon, as every other line does.
    assert!(
        err.contains("stream-top: knee at ") || err.contains("stream-top: no knee: "),
        "{err}"
    );
    assert!(!err.contains("stream-top: No knee"), "{err}");
    let metrics = std::fs::read_to_string(&prom).unwrap();
    for family in [
        "# TYPE stream_top_loaded_latency_seconds gauge",
        "# TYPE stream_top_loaded_bandwidth_bytes_per_second gauge",
        "stream_top_loaded_latency_seconds{delay=\"idle\"}",
        "stream_top_loaded_bandwidth_bytes_per_second{delay=\"100000\"}",
    ] {
        assert!(metrics.contains(family), "{family}: {metrics}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A signal ends the loaded-latency curve after the point under way: the points measured are
/// printed, marked partial, and the exit code is 128 + the signal. Before, no handler was
/// installed: SIGTERM killed it with nothing printed, though points had been measured.
#[test]
fn sigterm_ends_the_curve_with_the_points_measured_marked_partial() {
    let delays: Vec<String> = (1..=32).map(|i| (i * 1000).to_string()).collect();
    let delays = delays.join(",");
    let run = crate::support::running::Running::start(&[
        "--headless",
        "--measure",
        "loaded-latency",
        "--delays",
        &delays,
    ]);
    run.wait_for_line("the first point's line", |l| l.starts_with("  1/32 "));
    run.signal("TERM");
    let (code, md, err) = run.finish();
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("SIGTERM: stopping"), "{err}");
    assert!(
        md.contains("**Partial run:** stopped by SIGTERM after "),
        "{md}"
    );
    assert!(md.contains("loaded point"), "{md}");
}
