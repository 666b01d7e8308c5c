//! What the reports carry for big machines: the NUMA matrix (a table in the Markdown, a
//! section of the JSON), where each cell's pages sat, and an `--oversubscribe` run marked as no
//! measurement in every format.

use crate::support::report_fixtures::*;
use std::collections::BTreeMap;
use std::path::Path;
use stream_top::engine::events::{Event, PagePlacement, Placement};
use stream_top::engine::matrix::MatrixPlan;
use stream_top::engine::plan::{CellId, Grid};
use stream_top::judge::stats::Board;
use stream_top::machine::topology::Topology;
use stream_top::show::report::{Snapshot, from_json, to_csv, to_json, to_markdown, to_svg};

/// The matrix of the 2-node fixture measured: local pairs at 100 GB/s, remote ones at 60, the
/// pages of the first pair sampled, three quarters of them where meant.
fn matrix_snapshot() -> Snapshot {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server-2s");
    let t = Topology::read(&root).unwrap();
    let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
    let m = MatrixPlan::new(&t, &all);
    let grid: Grid = m.grid(&dram());
    let mut board = Board::new(5);
    for (set, p) in m.pairs.iter().enumerate() {
        let rate = if p.cpu_node == p.mem_node {
            100.0
        } else {
            60.0
        };
        let cell = CellId::new(set, m.threads);
        feed(&mut board, cell, &[rate; 5], None);
        checksum(&mut board, cell, true);
    }
    board.record(&Event::Placement {
        cell: CellId::new(0, m.threads),
        pages: Placement::Sampled(PagePlacement {
            sampled: 64,
            meant: 64,
            on_meant: 48,
            by_node: BTreeMap::from([(0, 48), (1, 16)]),
            absent: 0,
        }),
    });
    let mut info = run_info("bench-m", Some(200.0));
    info.numa = Some("pages bound to each pair's memory node".into());
    info.matrix = Some(m);
    Snapshot::build(
        &info,
        &grid,
        &board,
        &host(0.5),
        "2026-01-02 03:04:05".into(),
    )
}

#[test]
fn the_matrix_and_the_pages_read_back_and_print_as_tables() {
    let s = matrix_snapshot();
    let m = s.matrix.as_ref().expect("the matrix");
    assert_eq!(
        (m.cpu_nodes.clone(), m.mem_nodes.clone()),
        (vec![0, 1], vec![0, 1])
    );
    assert_eq!(m.cell(0, 1).unwrap().median_gbs, Some(60.0));
    assert_eq!(m.cell(1, 1).unwrap().median_gbs, Some(100.0));
    assert!(s.derived.is_empty(), "no ratios between pairs of one size");
    let pages = s.cells[0].pages.as_ref().expect("the sample");
    assert_eq!(pages.share_on_meant(), Some(0.75));
    assert_eq!(s.cells[1].pages, None);

    let back = from_json(&to_json(&s), Path::new("m.json")).unwrap();
    assert_eq!(back, s);

    let md = to_markdown(&s);
    assert!(md.contains("## NUMA matrix"), "{md}");
    assert!(
        md.contains("| CPU node \\ memory node | node 0 | node 1 |"),
        "{md}"
    );
    assert!(md.contains("| node 0 | 100.0 | 60.0 |"), "{md}");
    assert!(md.contains("| node 1 | 60.0 | 100.0 |"), "{md}");
    assert!(
        md.contains("Pages bound to each pair's memory node; sampled pages off the node meant"),
        "{md}"
    );
    assert!(md.contains("75 % on the node meant for them (64 sampled: node 0 48, node 1 16)"));
    // Rows name their pair.
    assert!(
        md.contains("| 128 MiB, CPU node 1 → memory node 0, past L3 (64 MiB reached): dram | 16 |"),
        "{md}"
    );
}

/// l2 × 1 and 4 threads of a run whose figures are no measurement (`--oversubscribe`).
fn oversubscribed_snapshot(why: Option<&str>) -> Snapshot {
    let grid = Grid {
        sets: vec![l2()],
        threads: vec![1, 4],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut info = run_info("bench-o", Some(40.0));
    info.not_a_measurement = why.map(String::from);
    let mut board = Board::new(5);
    for (threads, rate) in [(1, 30.0), (4, 110.0)] {
        let cell = CellId::new(0, threads);
        feed(&mut board, cell, &[rate; 5], None);
        checksum(&mut board, cell, true);
    }
    Snapshot::build(
        &info,
        &grid,
        &board,
        &host(0.5),
        "2026-01-02 03:04:05".into(),
    )
}

#[test]
fn an_oversubscribed_run_is_marked_in_every_format() {
    assert!(!to_markdown(&oversubscribed_snapshot(None)).contains("~~"));
    let s = oversubscribed_snapshot(Some("--oversubscribe: up to 4 threads share 2 usable CPUs"));
    let md = to_markdown(&s);
    assert!(
        md.contains("**Not a measurement.** --oversubscribe"),
        "{md}"
    );
    // The figures struck through; the label, threads and checksum not.
    assert!(md.contains("| 85 KiB/thread (l2) | 1 | ~~30.0~~ |"), "{md}");
    assert!(md.contains("| ok |"), "{md}");
    // Every cell's noisy reasons say so, and so every CSV row.
    for c in &s.cells {
        assert_eq!(c.figures.noisy[0], "not a measurement (--oversubscribe)");
    }
    let csv = to_csv(&s);
    assert_eq!(csv.lines().count(), 1 + s.cells.len());
    for line in csv.lines().skip(1) {
        assert!(
            line.contains("not a measurement (--oversubscribe)"),
            "{line}"
        );
    }
    let back = from_json(&to_json(&s), Path::new("o.json")).unwrap();
    assert_eq!(back, s);
    assert!(to_svg(&s).contains("NOT A MEASUREMENT"));
}
