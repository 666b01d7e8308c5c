//! Short headless sweeps of the real binary on small sets: the table, the JSON, the CSV, the
//! exports, and that every figure is present and consistent with the others.

use crate::support::report_fixtures::md_row;
use crate::support::running::Running;
use std::process::Command;

const SMALL: &[&str] = &[
    "--headless",
    "--threads",
    "1,2",
    "--sets",
    "16KiB/thread,4MiB",
    "--rounds",
    "5",
    "--round-ms",
    "3",
    "--vendor-gbs",
    "50",
];

fn run(extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(SMALL)
        .args(extra)
        .output()
        .expect("run stream-top");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_json_holds_every_figure_and_they_agree() {
    let (code, stdout, stderr) = run(&["--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let cells = v["cells"].as_array().expect("cells");
    // 2 sets × 2 thread counts, and the single-thread cache cell run again last.
    assert_eq!(cells.len(), 5);
    for c in cells {
        let f = &c["figures"];
        let num = |k: &str| {
            f[k].as_f64()
                .unwrap_or_else(|| panic!("{k} missing in {c}"))
        };
        let (median, best) = (num("median_gbs"), num("best_gbs"));
        assert!(median > 0.0 && best >= median, "{c}");
        assert!(num("cv") >= 0.0);
        assert!(num("fastest_thread_gbs") >= num("slowest_thread_gbs"));
        assert!((num("vendor_fraction") - median / 50.0).abs() < 1e-9);
        assert!(num("bytes_per_cycle") > 0.0);
        assert_eq!(f["rounds"].as_u64(), Some(5));
        assert_eq!(f["checksum_ok"].as_bool(), Some(true));
        let history = c["history"].as_array().expect("per-round history");
        assert_eq!(history.len(), 5);
        for r in history {
            assert!(r["span_ns"].as_u64().unwrap() > 0);
        }
        // The round rates are the history's: the median is one of them or between two.
        let mut rates: Vec<f64> = history.iter().map(|r| r["gbs"].as_f64().unwrap()).collect();
        rates.sort_by(f64::total_cmp);
        assert_eq!(rates[2], median);
        assert_eq!(rates[4], best);
    }
    assert_eq!(v["info"]["vendor"]["gbs"].as_f64(), Some(50.0));
    assert!(v["info"]["clock"]["ghz"].as_f64().unwrap() > 0.0);
    assert!(v["info"]["host_start"]["mem_available"].as_u64().unwrap() > 0);
}

#[test]
fn the_markdown_table_has_the_reference_columns_and_header_lines() {
    let (code, stdout, stderr) = run(&[]);
    assert_eq!(code, 0, "{stderr}");
    for col in [
        "per array",
        "threads",
        "median GB/s",
        "best GB/s",
        "cv",
        "% of 50 GB/s",
        "scaling vs 1 thread",
        "fastest thread GB/s",
        "slowest thread GB/s",
        "rounds with a late thread",
    ] {
        assert!(
            stdout.contains(&format!("| {col} |")),
            "column {col} missing:\n{stdout}"
        );
    }
    for line in [
        "Machine:",
        "Kernel:",
        "Clock estimate",
        "Vendor figure: 50 GB/s",
        "Load at the start",
    ] {
        assert!(stdout.contains(line), "{line} missing:\n{stdout}");
    }
    assert!(stdout.contains("| derived | value | unit |"));
    assert!(stdout.contains("run again last"));
    assert!(
        stdout.contains("checksums: every configuration produced the reference sum of array a")
    );
    // 5 cell rows, grouped by set, then thread count, the rerun last.
    let rows: Vec<&str> = [
        ("16 KiB/thread", 1, false),
        ("16 KiB/thread", 2, false),
        ("4 MiB", 1, false),
        ("4 MiB", 2, false),
        ("16 KiB/thread", 1, true),
    ]
    .into_iter()
    .map(|(set, t, rerun)| md_row(&stdout, set, t, rerun).expect(&stdout))
    .collect();
    let at = |row: &str| stdout.find(row).unwrap();
    assert!(rows.windows(2).all(|w| at(w[0]) < at(w[1])), "{stdout}");
}

#[test]
fn csv_has_a_header_and_one_row_per_cell() {
    let (code, stdout, stderr) = run(&["--format", "csv"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    assert!(lines[0].contains("median_gbs"));
}

#[test]
fn export_and_readme_write_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    std::fs::write(
        &readme,
        "# x\n<!-- stream-top:begin -->\nold\n<!-- stream-top:end -->\ntail\n",
    )
    .unwrap();
    let out = dir.path().join("results");
    let (code, _, stderr) = run(&[
        "--export",
        out.to_str().unwrap(),
        "--readme",
        readme.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for ext in ["md", "csv", "json", "svg"] {
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("stream-top-") && n.ends_with(ext)),
            "{names:?}"
        );
    }
    let text = std::fs::read_to_string(&readme).unwrap();
    // The old text between the markers is gone ("holds" in the new text contains "old").
    assert!(
        !text.contains("\nold\n") && text.contains("| per array |") && text.ends_with("tail\n")
    );
}

#[test]
fn an_unwritable_export_directory_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let (code, stdout, stderr) = run(&["--export", file.join("sub").to_str().unwrap()]);
    // The person's to fix, found before anything ran: no table, one line naming the flag.
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("--export") && stderr.contains("file is not a directory"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

/// The loops this CPU runs for normal stores, by their names in the table.
fn loops_here() -> Vec<&'static str> {
    use stream_top::engine::kernel::{Stores, Variant};
    Variant::all()
        .filter(|v| v.stores == Stores::Normal && (v.available)())
        .map(|v| v.name)
        .collect()
}

#[test]
fn auto_names_each_cells_loop_and_layout_in_the_json_and_the_markdown() {
    let (code, stdout, stderr) = run(&["--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["info"]["selection"]["kernel"], "auto");
    assert_eq!(v["info"]["selection"]["huge_pages"], "auto");
    let loops = loops_here();
    for c in v["cells"].as_array().unwrap() {
        let ch = &c["choice"];
        let variant = ch["variant"].as_str().expect("a loop per cell");
        assert!(loops.contains(&variant), "{variant} runs here");
        assert!(ch["huge_pages"].is_boolean());
        // A set in a cache gets its layout by trial; one in memory by rule: huge pages.
        // (Where 4 MiB lands depends on this machine's last-level cache.)
        match ch["layout_by"].as_str() {
            Some("trial") => {}
            Some("rule") => assert_eq!(ch["huge_pages"], true, "{c}"),
            other => panic!("layout by {other:?}: {c}"),
        }
        if c["size"]["kind"] == "per_thread" {
            assert_eq!(ch["layout_by"], "trial", "{c}");
        }
        assert!(ch["trial"]["seconds"].as_f64().unwrap() > 0.0);
        assert_eq!(ch["trial"]["threads"], serde_json::json!([1, 2]));
        // A runner-up with its ratio, or none where the machine held back too many of the
        // trial's rounds for any candidate to be judged: then the default stayed.
        match ch["runner_up"]["ratio"].as_f64() {
            Some(ratio) => assert!(ratio > 0.0, "{c}"),
            None => assert!(ch["runner_up"].is_null(), "{c}"),
        }
    }
    // One choice per working set, said with how long it took.
    for set in ["16 KiB/thread", "4 MiB"] {
        let line = stderr
            .lines()
            .find(|l| l.trim_start().starts_with(set) && l.contains(" runs "))
            .unwrap_or_else(|| panic!("no choice for {set} in\n{stderr}"));
        assert!(line.contains("trial") && line.contains(" s)"), "{line}");
    }

    let (code, md, stderr) = run(&[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(md.contains("Kernel: --kernel auto --huge-pages auto, normal stores."));
    assert!(md.contains("Loop and page layout, chosen once per working set"));
    let header = md.lines().find(|l| l.starts_with("| per array |")).unwrap();
    assert!(
        header.ends_with("| loop, pages | against the runner-up |"),
        "{header}"
    );
    assert_eq!(md.lines().filter(|l| l.starts_with("| 4 MiB,")).count(), 2);
    for row in md.lines().filter(|l| l.starts_with("| 4 MiB,")) {
        assert!(row.contains("huge pages |"), "{row}");
    }
}

#[test]
fn kernel_and_huge_pages_still_pin() {
    let (code, stdout, stderr) = run(&[
        "--format",
        "json",
        "--kernel",
        "portable",
        "--huge-pages",
        "off",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["info"]["selection"]["kernel"], "portable");
    assert_eq!(v["info"]["selection"]["huge_pages"], "off");
    for c in v["cells"].as_array().unwrap() {
        let ch = &c["choice"];
        assert_eq!(ch["variant"], "portable");
        assert_eq!(ch["huge_pages"], false);
        assert_eq!(ch["kernel_by"], "pinned");
        assert_eq!(ch["layout_by"], "pinned");
        assert!(ch.get("trial").is_none() && ch.get("runner_up").is_none());
        assert_eq!(c["huge_bytes"], 0);
    }
    // One loop by name, with --huge-pages on: the old default's file has no selection.
    let named = *loops_here().last().unwrap();
    let (code, stdout, stderr) = run(&["--format", "json", "--kernel", named]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["info"]["selection"]["kernel"], named);
    for c in v["cells"].as_array().unwrap() {
        assert_eq!(c["choice"]["variant"], named);
        assert_eq!(c["choice"]["kernel_by"], "pinned");
    }
    let isa = named.split([' ', '-']).next().unwrap();
    let (code, stdout, stderr) = run(&["--format", "json", "--kernel", isa, "--huge-pages", "on"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        v["info"].get("selection").is_none(),
        "as files before the choice"
    );
    for c in v["cells"].as_array().unwrap() {
        assert!(c["choice"]["variant"].as_str().unwrap().starts_with(isa));
        assert_eq!(c["choice"]["huge_pages"], true);
    }
}

// ---- Signals and the CPU quota -------------------------------------------------------------

/// A one-shot run ended by SIGTERM prints the cells it finished and marks the others partial,
/// with exit code 143. Before: the default action killed it, the table lost (no stdout, no
/// exit code).
#[test]
fn sigterm_on_a_one_shot_run_prints_the_cells_it_finished_marked_partial() {
    let run = Running::start(&[
        "--headless",
        "--threads",
        "1",
        "--sets",
        "16KiB/thread,32KiB/thread,64KiB/thread",
        "--rounds",
        "200",
        "--round-ms",
        "20",
    ]);
    // The first cell's checksum line: it has finished; the next runs for seconds.
    run.wait_for_line("the first cell's line", |l| {
        l.starts_with("  16 KiB/thread × 1") && l.contains("GB/s")
    });
    run.signal("TERM");
    let (code, md, err) = run.finish();
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("SIGTERM: stopping"), "{err}");
    // 1 of 4: the single-thread cache cell is run again last, and that run did not come.
    assert!(
        err.contains("a partial run: 1 of 4 cells finished before SIGTERM"),
        "{err}"
    );
    let done = md_row(&md, "16 KiB/thread", 1, false).expect(&md);
    assert!(done.contains(" | ok | "), "{done}");
    for set in ["32 KiB/thread", "64 KiB/thread"] {
        let row = md_row(&md, set, 1, false).expect(&md);
        assert!(
            row.contains("FAILED: partial run: stopped by SIGTERM before it finished"),
            "{row}"
        );
    }
}

/// Ctrl-Z (SIGTSTP) stops a service like any job, and SIGCONT lets it go on; SIGTERM then
/// ends it with 143. Before: SIGTSTP ended the service with exit code 0.
#[test]
fn sigtstp_stops_a_service_and_sigcont_resumes_it() {
    let run = Running::start(&[
        "--headless",
        "--serve",
        "127.0.0.1:0",
        "--threads",
        "1",
        "--sets",
        "16KiB/thread",
        "--round-ms",
        "3",
    ]);
    run.wait_for_line("the address", |l| l.starts_with("stream-top: serving"));
    run.signal("TSTP");
    run.wait_state(|s| s == Some('T'), "stopped after SIGTSTP");
    run.signal("CONT");
    run.wait_for_line("the word that it went on", |l| l == "stream-top: continued");
    run.wait_state(
        |s| matches!(s, Some(c) if c != 'T'),
        "running after SIGCONT",
    );
    run.signal("TERM");
    let (code, out, err) = run.finish();
    assert_eq!(code, Some(143), "{err}");
    assert!(out.contains("| per array | threads | median GB/s"), "{out}");
}

/// vm-2core (2 CPUs) inside the fixture cgroups of a pod whose quota is 0.5 CPUs.
fn quota_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for machine in ["vm-2core", "cgroup-nested"] {
        let ok = Command::new("cp")
            .arg("-r")
            .arg(fixtures.join(machine).join("."))
            .arg(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "cp {machine}");
    }
    dir
}

/// A quota that caps the default thread counts says so, an explicit count above it gets a
/// warning beside the table, and every round carries the throttling (0 here: the fixture's
/// counters stand still). Before: no word of either, and `throttled: null` in every round.
#[test]
fn a_cpu_quota_is_said_beside_the_table_and_rounds_carry_its_throttling() {
    let root = quota_root();
    let root = root.path().to_str().unwrap();
    let base = [
        "--headless",
        "--sets",
        "16KiB/thread",
        "--rounds",
        "3",
        "--round-ms",
        "2",
        "--root",
        root,
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(base)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["info"]["threads_note"],
        "threads capped at 1 by the CPU quota 0.5 CPUs"
    );
    assert_eq!(
        v["grid"]["threads"],
        serde_json::json!([1]),
        "{}",
        v["grid"]
    );
    let cells = v["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for c in cells {
        for r in c["history"].as_array().unwrap() {
            assert!(r["throttled"].is_number(), "{r}");
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(base)
        .args(["--threads", "1,2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let md = String::from_utf8_lossy(&out.stdout);
    let warning = "Note: warning: the CPU quota 0.5 CPUs runs at most 1 thread at once, so the \
                   cells of 2 threads are throttled: their figures measure the quota, not the \
                   memory.";
    assert!(md.contains(warning), "{md}");
    assert!(
        err.contains(&warning["Note: ".len()..warning.len() - 1]),
        "{err}"
    );
}
