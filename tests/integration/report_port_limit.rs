//! The "of port limit" column: a snapshot taken on a fixture CPU carries each cell's bytes per
//! cycle as a fraction of what the core's load and store ports allow its loop, in JSON and in
//! Markdown; a core the table does not know, or a cell with no recorded loop, shows `–` and
//! the reason.

use crate::support::report_fixtures::*;
use std::path::Path;
use stream_top::engine::events::{By, Choice, Event, Pick};
use stream_top::engine::kernel::{Op, Variant};
use stream_top::engine::plan::{CellId, Grid};
use stream_top::judge::stats::Board;
use stream_top::machine::cpu_id::{self, CpuId};
use stream_top::machine::uarch::{Core, vector_width};
use stream_top::show::report::model::PortLimit;
use stream_top::show::report::{Snapshot, from_json, to_json, to_markdown};

/// The triad's first loop on this build with a vector width Zen 3 has (AVX2 or NEON-sized, not
/// portable and not AVX-512).
fn vector_loop() -> &'static Variant {
    let zen3 = Core::of(Some(&zen3())).unwrap();
    Variant::all()
        .find(|v| {
            v.op == Op::Triad
                && vector_width(v.name).is_ok_and(|w| zen3.bytes_per_cycle(w, 2, 1).is_some())
        })
        .unwrap()
}

/// l2 and dram × 1 thread on a machine whose CPU design is `cpu`; l2's loop is `vector_loop`,
/// dram records none.
fn snapshot_on(cpu: Option<CpuId>) -> Snapshot {
    let mut info = run_info("bench-a", Some(40.0));
    info.topology.cpu = cpu;
    let grid = Grid {
        sets: vec![l2(), dram()],
        threads: vec![1],
        ops: vec![Op::Triad],
    };
    let mut board = Board::new(5);
    board.record(&Event::Choice(Box::new(Choice {
        op: Op::Triad,
        set: 0,
        kept: Pick {
            variant: vector_loop(),
            huge_pages: false,
        },
        kernel_by: By::Trial,
        layout_by: By::Trial,
        runner_up: None,
        trial: None,
    })));
    for (set, rate) in [(0, 30.0), (1, 12.0)] {
        let cell = CellId {
            op: Op::Triad,
            set,
            threads: 1,
            rerun: false,
        };
        feed(&mut board, cell, &[rate; 5], None);
    }
    Snapshot::build(
        &info,
        &grid,
        &board,
        &host(0.5),
        "2026-01-02 03:04:05".into(),
    )
}

fn zen3() -> CpuId {
    cpu_id::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpu-zen3")).unwrap()
}

/// The Markdown table's column for `header` in the row of set `set` × 1 thread.
fn column(md: &str, header: &str, set: &str) -> String {
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let head = md.lines().find(|l| l.contains("| per array")).expect(md);
    let at = cells(head).iter().position(|h| h == header).expect(md);
    cells(md_row(md, set, 1, false).expect(md))[at].clone()
}

#[test]
fn a_zen3_snapshot_shows_each_cell_against_its_port_limit() {
    let snap = snapshot_on(Some(zen3()));
    let zen3 = Core::of(Some(&self::zen3())).unwrap();
    let limit = zen3
        .bytes_per_cycle(vector_width(vector_loop().name).unwrap(), 2, 1)
        .unwrap();
    let l2 = &snap.cells[0].figures;
    let measured = l2.bytes_per_cycle.unwrap();
    let Some(PortLimit::Known {
        bytes_per_cycle,
        fraction,
        core,
        ..
    }) = &l2.port_limit
    else {
        panic!("l2 has no port limit: {:?}", l2.port_limit);
    };
    assert_eq!((*bytes_per_cycle, core.as_str()), (limit, "AMD Zen 3"));
    assert!((fraction.unwrap() - measured / limit).abs() < 1e-12);
    assert_eq!(
        snap.cells[1].figures.port_limit,
        Some(PortLimit::Unknown {
            reason: "the cell records no loop".into()
        })
    );

    // JSON carries the design and the limit, and reads back to the same snapshot.
    let json = to_json(&snap);
    assert!(json.contains("\"port_limit\""), "{json}");
    assert!(json.contains("\"family\": 25"), "{json}");
    assert_eq!(from_json(&json, Path::new("snap.json")).unwrap(), snap);

    let md = to_markdown(&snap);
    let shown = format!("{:.1} %", fraction.unwrap() * 100.0);
    assert_eq!(
        column(&md, "of port limit", "85 KiB/thread (l2)"),
        shown,
        "{md}"
    );
    assert_eq!(column(&md, "of port limit", "128 MiB (dram)"), "–", "{md}");
    let note = md.lines().find(|l| l.starts_with("Of port limit")).unwrap();
    assert!(note.contains("ceiling for data in L1"), "{note}");
    assert!(note.contains("AMD Zen 3 ("), "{note}");
    assert!(note.contains("the cell records no loop"), "{note}");
}

#[test]
fn an_unknown_core_shows_a_dash_and_why() {
    let unknown = CpuId::X86 {
        vendor: "GenuineIntel".into(),
        family: 6,
        model: 1,
        stepping: None,
    };
    let reason = Core::of(Some(&unknown)).unwrap_err().0;
    let snap = snapshot_on(Some(unknown));
    assert_eq!(
        snap.cells[0].figures.port_limit,
        Some(PortLimit::Unknown {
            reason: reason.clone()
        })
    );
    let md = to_markdown(&snap);
    assert_eq!(
        column(&md, "of port limit", "85 KiB/thread (l2)"),
        "–",
        "{md}"
    );
    let note = md.lines().find(|l| l.starts_with("Of port limit")).unwrap();
    assert!(note.contains(&reason), "{note}");
}

#[test]
fn without_a_cpu_design_the_reports_have_no_port_limit() {
    let snap = snapshot_on(None);
    assert!(snap.cells.iter().all(|c| c.figures.port_limit.is_none()));
    assert!(!to_json(&snap).contains("port_limit"));
    let md = to_markdown(&snap);
    assert!(
        !md.contains("of port limit") && !md.contains("Of port limit"),
        "{md}"
    );
}
