//! A snapshot of several ops: a Markdown table per op, the op in every export, STREAM's own
//! table (`--format stream`) that parses as STREAM's does, and `compare` matching by op.

use crate::support::report_fixtures::*;
use std::fs;
use stream_top::show::report::stream_table::{HEADER, to_stream_table};
use stream_top::show::report::{Snapshot, compare, to_csv, to_json, to_markdown};

/// Snapshot A with a copy cell beside each triad cell: the same rounds at two thirds of the
/// bytes (copy counts 16 per element, the triad 24), so each pass takes the same time.
fn with_copy(mut s: Snapshot) -> Snapshot {
    let mut copies = s.cells.clone();
    for c in &mut copies {
        c.op = "copy".into();
        for r in &mut c.history {
            r.bytes = r.bytes / 3 * 2;
        }
    }
    s.cells.extend(copies);
    s.grid.ops = vec!["copy".into(), "triad".into()];
    s
}

#[test]
fn markdown_has_a_table_per_op_and_one_op_none() {
    let one = snapshot_a();
    assert!(
        !to_markdown(&one).contains("### "),
        "one op: the table as before"
    );
    let md = to_markdown(&with_copy(snapshot_a()));
    let copy = md
        .find("### copy: a = b, 16 bytes counted per element")
        .expect(&md);
    let triad = md
        .find("### triad: a = b + s·c, 24 bytes counted per element")
        .expect(&md);
    assert!(copy < triad, "in the grid's order");
    // Each table holds its own op's rows: as many as one op's.
    let rows = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("| l2") || l.starts_with("| dram"))
            .count()
    };
    let per_op = rows(&to_markdown(&one));
    assert_eq!(rows(&md[copy..triad]), per_op);
    assert!(rows(&md[triad..]) >= per_op);
}

#[test]
fn every_export_carries_the_op() {
    let s = with_copy(snapshot_a());
    let csv = to_csv(&s);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|&h| h == "op").unwrap();
    assert_eq!(header.len() - 1, at, "op last, after every older column");
    let ops: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    assert_eq!(
        ops.iter().filter(|&&o| o == "copy").count(),
        s.cells.len() / 2
    );
    assert_eq!(
        ops.iter().filter(|&&o| o == "triad").count(),
        s.cells.len() / 2
    );
    let json: serde_json::Value = serde_json::from_str(&to_json(&s)).unwrap();
    for c in json["cells"].as_array().unwrap() {
        assert!(c["op"] == "copy" || c["op"] == "triad", "{c}");
    }
    assert_eq!(json["grid"]["ops"], serde_json::json!(["copy", "triad"]));
}

#[test]
fn the_stream_table_parses_as_streams_does() {
    let s = with_copy(snapshot_a());
    let text = to_stream_table(&s);
    let mut blocks = 0;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if *line != HEADER {
            continue;
        }
        blocks += 1;
        // Then one line per STREAM op the run has, in STREAM's order.
        let mut names = Vec::new();
        for l in &lines[i + 1..] {
            let fields: Vec<&str> = l.split_whitespace().collect();
            if fields.len() != 5 || !fields[0].ends_with(':') {
                break;
            }
            names.push(fields[0]);
            let n: Vec<f64> = fields[1..].iter().map(|f| f.parse().expect(l)).collect();
            let (rate, avg, min, max) = (n[0], n[1], n[2], n[3]);
            assert!(rate > 0.0 && min > 0.0 && min <= avg && avg <= max, "{l}");
        }
        assert_eq!(names, ["Copy:", "Triad:"], "{text}");
    }
    // A block per configuration (set × threads), the rerun left out.
    assert_eq!(
        blocks,
        s.cells
            .iter()
            .filter(|c| c.op == "triad" && !c.rerun)
            .count()
    );
    // The copy moved two thirds of the triad's bytes in the same time: two thirds the rate.
    let rate = |name: &str| -> f64 {
        let l = lines.iter().find(|l| l.starts_with(name)).unwrap();
        l.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let r = rate("Copy:") / rate("Triad:");
    assert!((r - 2.0 / 3.0).abs() < 0.01, "{r}");
}

#[test]
fn compare_matches_cells_by_op() {
    let dir = tempfile::tempdir().unwrap();
    let a = with_copy(snapshot_a());
    // B: the copy cells twice as fast, the triad's as they were.
    let mut b = a.clone();
    for c in b.cells.iter_mut().filter(|c| c.op == "copy") {
        c.figures.median_gbs *= 2.0;
        c.repetitions = vec![c.figures.median_gbs];
    }
    let (pa, pb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    fs::write(&pa, to_json(&a)).unwrap();
    fs::write(&pb, to_json(&b)).unwrap();
    let text = compare(&pa, &pb, None).unwrap().text;
    let row = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {text}"))
            .to_string()
    };
    let copy = row("| copy: ");
    assert!(copy.contains("| 2.00 |"), "{copy}");
    let triad = text
        .lines()
        .find(|l| l.starts_with("| 85 KiB") && l.contains("| 1.00 |"));
    assert!(triad.is_some(), "{text}");
}
