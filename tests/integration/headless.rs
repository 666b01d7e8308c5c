//! Short headless sweeps of the real binary on small sets: the table, the JSON, the CSV, the
//! exports, and that every figure is present and consistent with the others.

use crate::report_fixtures::md_row;
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
fn the_markdown_table_has_the_seed_columns_and_header_lines() {
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
    assert!(stdout.contains("checksums: every configuration produced the reference sum of a"));
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
