//! A cell's threads per NUMA node and per core type in snapshots: built from rounds on the
//! EPYC fixture (4 nodes) and the hybrid laptop (P- and E-cores), read back from JSON, tabled in
//! Markdown, and absent where the machine has one node and one core type.

use crate::support::csv::parse_csv;
use crate::support::machine_fixtures::fixture;
use crate::support::report_fixtures::*;
use std::path::Path;
use stream_top::engine::events::{Event, RoundRecord, ThreadTiming};
use stream_top::engine::plan::{CellId, Grid};
use stream_top::judge::stats::Board;
use stream_top::machine::topology::Topology;
use stream_top::show::report::model::{CoreKind, GroupKey};
use stream_top::show::report::{CSV_COLUMNS, Snapshot, from_json, to_csv, to_json, to_markdown};

/// A round of `cell` with one thread per entry of `threads`: (CPU, GB/s of its own).
fn round(cell: CellId, threads: &[(i32, f64)]) -> Event {
    let own = 1_000_000u64;
    let threads = threads
        .iter()
        .map(|&(cpu, gbs)| ThreadTiming {
            start_ns: 0,
            end_ns: own,
            cpu_start: cpu,
            cpu_end: cpu,
            bytes: (gbs * own as f64) as u64,
            ..Default::default()
        })
        .collect();
    Event::Round(Box::new(RoundRecord::from_threads(cell, false, 1, threads)))
}

/// A snapshot of one dram cell whose rounds ran `threads`, on the machine of fixture `name`.
fn snapshot_on(name: &str, threads: &[(i32, f64)]) -> Snapshot {
    let cell = CellId::new(0, threads.len());
    let grid = Grid {
        sets: vec![dram()],
        threads: vec![threads.len()],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(5);
    for _ in 0..3 {
        board.record(&round(cell, threads));
    }
    let mut info = run_info("big", Some(400.0));
    info.topology = Topology::read(&fixture(name)).unwrap();
    Snapshot::build(
        &info,
        &grid,
        &board,
        &host(0.1),
        "2026-01-02 03:04:05".into(),
    )
}

#[test]
fn each_node_sums_its_threads_and_the_json_carries_it() {
    // Spread's first eight CPUs on the EPYC: two per node; node 3's threads are slower.
    let threads = [
        (0, 20.0),
        (32, 20.0),
        (64, 20.0),
        (96, 12.0),
        (8, 20.0),
        (40, 20.0),
        (72, 20.0),
        (104, 12.0),
    ];
    let snap = snapshot_on("epyc-2s", &threads);
    let groups = &snap.cells[0].groups;
    let names: Vec<String> = groups.iter().map(|g| g.group.name()).collect();
    assert_eq!(names, ["node 0", "node 1", "node 2", "node 3"]);
    assert_eq!(groups[0].threads, 2);
    assert!((groups[0].gbs - 40.0).abs() < 1e-9);
    assert!((groups[3].gbs - 24.0).abs() < 1e-9);
    assert!((groups[3].per_thread_gbs - 12.0).abs() < 1e-9);
    let text = to_json(&snap);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["cells"][0]["groups"][3]["group"],
        serde_json::json!({"kind": "node", "node": 3, "core_type": null}),
        "{text}"
    );
    assert_eq!(from_json(&text, Path::new("x.json")).unwrap(), snap);
    let md = to_markdown(&snap);
    assert!(md.contains("## Per NUMA node and core type"), "{md}");
    assert!(
        md.contains("| cell | threads | node 0 | node 1 | node 2 | node 3 |"),
        "{md}"
    );
    assert!(
        md.contains("| 128 MiB (dram) | 8 | 40.0 (2 × 20.00) | 40.0 (2 × 20.00) | 40.0 (2 × 20.00) | 24.0 (2 × 12.00) |"),
        "{md}"
    );
    // The CSV carries them in one field of the cell's row.
    let records = parse_csv(&to_csv(&snap));
    let groups_at = CSV_COLUMNS.iter().position(|c| *c == "groups").unwrap();
    assert_eq!(
        records[1][groups_at],
        "node 0: 2 × 20 = 40; node 1: 2 × 20 = 40; node 2: 2 × 20 = 40; node 3: 2 × 12 = 24"
    );
}

#[test]
fn p_and_e_cores_are_told_apart_on_a_hybrid_laptop() {
    // Two P-cores at 15 GB/s, two E-cores at 6.
    let snap = snapshot_on(
        "laptop-hybrid",
        &[(0, 15.0), (2, 15.0), (12, 6.0), (13, 6.0)],
    );
    let groups = &snap.cells[0].groups;
    assert_eq!(groups.len(), 2, "one node: core types only");
    assert_eq!(groups[0].group, GroupKey::CoreType(CoreKind::Performance));
    assert!((groups[0].gbs - 30.0).abs() < 1e-9);
    assert_eq!(groups[1].group.name(), "E-cores");
    assert!((groups[1].per_thread_gbs - 6.0).abs() < 1e-9);
    let v: serde_json::Value = serde_json::from_str(&to_json(&snap)).unwrap();
    assert_eq!(
        v["cells"][0]["groups"][1]["group"],
        serde_json::json!({"kind": "core_type", "node": null, "core_type": "efficiency"})
    );
}

#[test]
fn one_node_and_one_core_type_write_nothing_more() {
    let snap = snapshot_on("vm-2core", &[(0, 10.0), (1, 10.0)]);
    assert!(snap.cells[0].groups.is_empty());
    // Schema 2 writes every field: an empty list, nothing in it.
    let v: serde_json::Value = serde_json::from_str(&to_json(&snap)).unwrap();
    assert_eq!(v["cells"][0]["groups"], serde_json::json!([]));
    assert!(!to_markdown(&snap).contains("Per NUMA node"));
}

#[test]
fn a_version_1_file_with_groups_reads_as_the_same_run() {
    // The hybrid run above as the last schema-1 build wrote it: `{"core_type": "performance"}`
    // as each group's key, read into schema 2's one shape.
    let path = fixture_path("groups-hybrid-v1.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"schema_version\": 1"));
    assert!(text.contains("\"core_type\": \"efficiency\""));
    let read = from_json(&text, &path).unwrap();
    let mut now = snapshot_on(
        "laptop-hybrid",
        &[(0, 15.0), (2, 15.0), (12, 6.0), (13, 6.0)],
    );
    // A schema-1 file predates the CPU design and the port limit it gives each cell.
    now.info.topology.cpu = None;
    for cell in &mut now.cells {
        cell.figures.port_limit = None;
    }
    assert_eq!(read, now);
    assert_eq!(
        read.cells[0].groups[1].group,
        GroupKey::CoreType(CoreKind::Efficiency)
    );
}
