//! `--measure latency` from the command line: the refusals (live, flags that
//! mean nothing to a chase), and headless runs on small sets in each format, exported, repeated,
//! served to a textfile, and the 1×1 latency matrix this one-node machine has.

use crate::support::binary::run_binary;
use crate::support::csv::parse_csv;
use crate::support::fail_common::{assert_refused_early, strs, with};
use stream_top::show::report::LATENCY_CSV_COLUMNS;

/// The quickest latency run: l1 and an explicit 64 KiB.
const QUICK: &[&str] = &["--headless", "--measure", "latency", "--sets", "l1,64KiB"];

/// A quick run with `more` flags: its exit code, stdout and stderr.
fn quick(more: &[&str]) -> (i32, String, String) {
    run_binary(&strs(&with(QUICK, more)))
}

#[test]
fn latency_is_refused_where_it_cannot_run_and_with_flags_it_ignores() {
    assert_refused_early(
        &["--measure", "latency"],
        "--measure latency",
        "latency is headless for now",
    );
    assert_refused_early(
        &["calibrate", "--measure", "latency"],
        "--measure",
        "unexpected argument",
    );
    for (flag, value) in [
        ("--threads", Some("2")),
        ("--rounds", Some("5")),
        ("--kernel", Some("avx2")),
        ("--stores", Some("nt")),
        ("--huge-pages", Some("off")),
        ("--interleave", None),
        ("--vendor-gbs", Some("100")),
    ] {
        let mut args = vec!["--headless", "--measure", "latency", flag];
        args.extend(value);
        assert_refused_early(&args, flag, "not with --measure latency");
    }
    // A service's duty cycle: the chase runs once.
    assert_refused_early(
        &[
            "--headless",
            "--serve",
            "127.0.0.1:0",
            "--measure",
            "latency",
            "--duty",
            "50",
        ],
        "--duty",
        "not with --measure latency",
    );
    assert_refused_early(
        &["--headless", "--measure", "fastest"],
        "--measure",
        "'fastest'",
    );
}

fn json_run(more: &[&str]) -> serde_json::Value {
    let (code, out, err) = quick(&[&["--format", "json"], more].concat());
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn a_headless_latency_run_prints_its_table_in_each_format() {
    let v = json_run(&[]);
    assert_eq!(v["schema_version"], 4);
    assert_eq!(v["cells"].as_array().unwrap().len(), 0, "no bandwidth cell");
    let cells = v["latency"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["set_name"], "l1");
    assert_eq!(cells[0]["level"], "l1");
    assert_eq!(cells[1]["set_name"], "64 KiB");
    assert_eq!(cells[1]["bytes"], 65536);
    for c in cells {
        let ns = c["median_ns"].as_f64().unwrap();
        assert!(ns > 0.0 && ns.is_finite(), "{c}");
        assert!(c["min_ns"].as_f64().unwrap() <= ns, "{c}");
        assert!(c["cycles"].as_f64().unwrap() > 0.0, "{c}");
        assert_eq!(c["runs"], 11);
        assert_eq!(c["repetitions"].as_array().unwrap().len(), 1);
    }

    let (code, md, err) = quick(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("| set | buffer | ns/load |"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| l1 | ")), "{md}");
    assert!(
        md.lines().any(|l| l.starts_with("| 64 KiB | 64 KiB | ")),
        "{md}"
    );
    // Progress on stderr, one line per buffer.
    assert!(err.contains("idle latency, a pointer chase"), "{err}");
    assert!(err.contains("  l1, "), "{err}");

    let (code, csv, err) = quick(&["--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let rows = parse_csv(&csv);
    assert_eq!(rows[0], LATENCY_CSV_COLUMNS);
    assert_eq!(rows.len(), 3, "{csv}");
    assert_eq!(rows[2][0], "64 KiB");
}

#[test]
fn a_repeated_latency_run_keeps_each_repetition() {
    let v = json_run(&["--repeat", "3"]);
    let reps = v["latency"][0]["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 3, "{v}");
    assert!(reps.iter().all(|r| r.as_f64().unwrap() > 0.0));
}

#[test]
fn a_latency_run_exports_its_chart_and_writes_the_latency_family() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("latency.prom");
    let export = dir.path().join("out");
    let (code, _, err) = quick(&[
        "--export",
        export.to_str().unwrap(),
        "--prom-file",
        prom.to_str().unwrap(),
        "--name",
        "lat",
    ]);
    assert_eq!(code, 0, "{err}");
    let files: Vec<String> = std::fs::read_dir(&export)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for ext in ["md", "csv", "json", "svg"] {
        assert!(files.iter().any(|f| f.ends_with(ext)), "{ext}: {files:?}");
    }
    let svg_file = files.iter().find(|f| f.ends_with("svg")).unwrap();
    let svg = std::fs::read_to_string(export.join(svg_file)).unwrap();
    assert!(svg.contains("median ns per load"), "{svg}");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(
        text.contains("# TYPE stream_top_latency_seconds gauge"),
        "{text}"
    );
    let median = text
        .lines()
        .find(|l| {
            l.starts_with("stream_top_latency_seconds{level=\"l1\",set=\"l1\",stat=\"median\"}")
        })
        .unwrap_or_else(|| panic!("{text}"));
    let v: f64 = median.rsplit(' ').next().unwrap().parse().unwrap();
    // Seconds, not ns: a load takes well under a microsecond.
    assert!(v > 0.0 && v < 1e-6, "{median}");
}

#[test]
fn the_latency_matrix_of_one_node_is_one_by_one() {
    let (code, out, err) = run_binary(&[
        "--headless",
        "--measure",
        "latency",
        "--matrix",
        "--max-memory",
        "24MiB",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cells = v["latency"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{v}");
    assert_eq!(cells[0]["cpu_node"], 0);
    assert_eq!(cells[0]["mem_node"], 0);
    assert!(v["matrix"].is_null());
    let (code, md, err) = run_binary(&[
        "--headless",
        "--measure",
        "latency",
        "--matrix",
        "--max-memory",
        "24MiB",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("## NUMA latency matrix"), "{md}");
    assert!(md.contains("the matrix is 1×1"), "{md}");
}

#[test]
fn a_latency_service_serves_its_figures_until_sigterm() {
    let svc = crate::support::serve::Service::start(&["--measure", "latency", "--sets", "l1"]);
    let (status, body) = svc.get("/metrics");
    assert!(status.contains(" 200 "), "{status}");
    assert!(
        body.contains("# HELP stream_top_latency_seconds "),
        "{body}"
    );
    assert!(
        body.contains("stream_top_latency_seconds{level=\"l1\",set=\"l1\",stat=\"median\"}"),
        "{body}"
    );
    let (code, out, err) = svc.terminate();
    // 128 + SIGTERM, as every mode a signal ends; the table after it.
    assert_eq!(code, Some(143), "{err}");
    assert!(out.lines().any(|l| l.starts_with("| l1 | ")), "{out}");
}

/// A latency run long enough to signal: a DRAM buffer (seconds a chase) after l1, a hundred
/// times.
const LONG: [&str; 7] = [
    "--headless",
    "--measure",
    "latency",
    "--sets",
    "l1,dram",
    "--repeat",
    "100",
];

/// A signal ends a latency run within a step of its chase: the buffers chased are printed,
/// marked partial, and the exit code is 128 + the signal. Before, the run went on to the end
/// and printed a full table that said nothing of the signal.
#[test]
fn sigterm_ends_a_latency_run_with_what_it_chased_marked_partial() {
    let run = crate::support::running::Running::start(&LONG);
    run.wait_for_line("the first buffer's line", |l| l.starts_with("  l1, "));
    run.signal("TERM");
    let (code, md, err) = run.finish();
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("SIGTERM: stopping"), "{err}");
    assert!(
        md.contains("**Partial run:** stopped by SIGTERM after "),
        "{md}"
    );
    assert!(md.lines().any(|l| l.starts_with("| l1 | ")), "{md}");
}

/// SIGINT (Ctrl-C) likewise: 130, the mark, the buffers chased.
#[test]
fn sigint_ends_a_latency_run_with_exit_130_marked_partial() {
    let run = crate::support::running::Running::start(&LONG);
    run.wait_for_line("the first buffer's line", |l| l.starts_with("  l1, "));
    run.signal("INT");
    let (code, md, err) = run.finish();
    assert_eq!(code, Some(130), "{err}");
    assert!(
        md.contains("**Partial run:** stopped by SIGINT after "),
        "{md}"
    );
}
