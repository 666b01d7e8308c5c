//! The Markdown snapshot: the M4 Pro reference run's columns, one row per cell, the derived table, and
//! the lines above them.

use crate::support::report_fixtures::*;
use stream_top::show::report::to_markdown;
use stream_top::show::report::{DerivedRow, Unit};

const SEED_COLUMNS: [&str; 10] = [
    "per array",
    "threads",
    "median GB/s",
    "best GB/s",
    "cv",
    "% of",
    "scaling vs 1 thread",
    "fastest thread GB/s",
    "slowest thread GB/s",
    "rounds with a late thread",
];

fn cells_of(line: &str) -> Vec<String> {
    line.trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .split(" | ")
        .map(|s| s.trim().to_string())
        .collect()
}

/// The per-cell table: header and rows (lines from the header up to the first blank line).
fn cell_table(md: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = md.lines().skip_while(|l| !l.starts_with("| per array"));
    let header = cells_of(lines.next().expect("the per-cell table"));
    let sep = lines.next().unwrap();
    assert!(sep.starts_with("|---|"), "{sep}");
    let rows = lines
        .take_while(|l| l.starts_with('|'))
        .map(cells_of)
        .collect();
    (header, rows)
}

#[test]
fn the_table_has_every_reference_column_and_a_row_per_cell() {
    for snap in [snapshot_a(), snapshot_b(), m4_pro_reference_snapshot()] {
        let md = to_markdown(&snap);
        let (header, rows) = cell_table(&md);
        for (i, col) in SEED_COLUMNS.iter().enumerate() {
            assert!(header[i].starts_with(col), "column {i}: {:?}", header[i]);
        }
        // Disturbed rounds beside the late ones, then bytes/cycle, checksum and the
        // median's interval.
        assert_eq!(header[10], "disturbed rounds");
        assert_eq!(header[11], "bytes/cycle");
        assert_eq!(header[12], "checksum");
        assert_eq!(header[13], "95 % CI of median GB/s");
        assert_eq!(rows.len(), snap.cells.len(), "{md}");
        // These snapshots hold their cells in the table's order.
        for (row, cell) in rows.iter().zip(&snap.cells) {
            assert_eq!(row.len(), header.len(), "{row:?}");
            assert!(row[0].starts_with(&cell.set_label), "{row:?}");
            assert_eq!(row[0].ends_with(", run again last"), cell.rerun);
            assert_eq!(row[1], cell.threads.to_string());
        }
    }
}

#[test]
fn rows_are_formatted_as_the_reference_run_prints_them() {
    let md = to_markdown(&m4_pro_reference_snapshot());
    let (header, rows) = cell_table(&md);
    assert_eq!(header[5], "% of 273 GB/s");
    // The reference run's own rows, with disturbed rounds, bytes/cycle, checksum and the median's
    // interval (a dash: the fixture keeps no rounds) after them; every fraction (cv, of the
    // vendor figure) as a percentage, and the explicit 512 MiB set with where it lands.
    assert_eq!(
        rows[0].join(" | "),
        "1 MiB/thread (l2) | 1 | 123.2 | 129.8 | 1.3 % | 45.1 % | 1.00 | 123.2 | 123.2 | 0 | 0 | 27.44 | ok | –"
    );
    assert_eq!(
        rows[10][..10].join(" | "),
        "512 MiB, past L3 (64 MiB reached): dram | 14 | 149.4 | 182.5 | 10.5 % | 54.7 % | 1.25 | 20.6 | 10.7 | 0"
    );
    assert_eq!(
        rows[11][..10].join(" | "),
        "1 MiB/thread (l2), run again last | 1 | 120.4 | 124.3 | 0.9 % | 44.1 % | - | 120.4 | 120.4 | 0"
    );
}

#[test]
fn the_derived_table_follows_the_cell_table() {
    let snap = m4_pro_reference_snapshot();
    let md = to_markdown(&snap);
    let derived: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("| derived | value | unit |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(derived.len(), snap.derived.len());
    assert!(derived.contains(
        &"| highest 1 MiB/thread (l2) median (10 threads) / vendor figure | 2.85 | ratio |"
    ));
    assert!(
        derived
            .contains(&"| highest 512 MiB median (8 threads) / vendor figure | 82.7 % | percent |")
    );
    assert!(md.find("| per array").unwrap() < md.find("| derived").unwrap());
}

#[test]
fn without_a_vendor_figure_the_fraction_column_is_a_dash_and_says_why() {
    let snap = snapshot_b();
    let md = to_markdown(&snap);
    let (header, rows) = cell_table(&md);
    assert_eq!(header[5], "% of vendor figure");
    assert!(rows.iter().all(|r| r[5] == "–"), "{rows:?}");
    assert!(
        md.contains("Vendor figure: none (pass --vendor-gbs N)"),
        "{md}"
    );
    assert!(
        !snap.derived.iter().any(|d| d.name.contains("vendor")),
        "no vendor rows without a vendor figure: {:?}",
        snap.derived
    );
}

#[test]
fn the_lines_above_the_tables() {
    let md = to_markdown(&snapshot_a());
    for needle in [
        "stream-top 0.1.0 on bench-a, snapshot taken 2026-01-02 03:04:05 UTC, 245 s after the run started: `stream-top --headless --threads 1,2,4`",
        "Machine: AMD EPYC 7763 64-Core Processor; 2 cores, 2 threads, 1 package, 1 NUMA node; caches L1d 32 KiB ×2, L2 512 KiB ×2, L3 64 MiB ×1.",
        "Kernel: avx2 triad, normal stores.",
        "Pinning: spread (across NUMA nodes, then cores, SMT siblings last); threads ran on CPUs 0-3; no thread changed CPU within a round.",
        "Clock estimate 3.00 GHz (dependent 1-cycle add chain, min of 7 runs).",
        "Median over 5 timed rounds per cell",
        "Vendor figure: 40 GB/s (--vendor-gbs).",
        "Load at the start of this run: load average 0.50 0.25 0.01; swap 0 B of 0 B used; MemAvailable 6 GiB of 8 GiB.",
        "Load at this snapshot: load average 0.75 0.38 0.01;",
        "Huge pages: 2 GiB of the arrays' 2.6 GiB (75 %, summed over the configurations) sat on transparent huge pages.",
        "128 MiB (dram): arrays of 128 MiB split into one contiguous partition per thread; note: below STREAM's rule",
        "checksums: every configuration produced the reference sum of array a",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in\n{md}");
    }
    // The late rounds show in their column.
    let (_, rows) = cell_table(&md);
    let d4 = rows
        .iter()
        .find(|r| r[0] == "128 MiB (dram)" && r[1] == "4")
        .unwrap();
    assert_eq!(d4[9], "2");
}

#[test]
fn a_failed_checksum_is_named() {
    let md = to_markdown(&snapshot_b());
    assert!(
        md.contains("checksums: FAILED for 128 MiB (dram) × 2 threads (sum of array a 268173311 against the reference 268173312); 5 configurations produced the reference sum of array a"),
        "{md}"
    );
    let (_, rows) = cell_table(&md);
    let bad = rows
        .iter()
        .find(|r| r[0] == "128 MiB (dram)" && r[1] == "2")
        .unwrap();
    assert_eq!(bad[12], "FAILED");
}

#[test]
fn derived_units_format_with_fractions_as_percentages() {
    let row = |unit, value| DerivedRow {
        name: "x".into(),
        value,
        unit,
    };
    for (r, text) in [
        (row(Unit::Ratio, 2.846), "2.85"),
        (row(Unit::Fraction, 0.82710), "82.7 %"),
        (row(Unit::Gbs, 301.0667), "301.1"),
    ] {
        assert_eq!(r.unit.format(r.value), text);
    }
}

#[test]
#[ignore = "prints the fixtures' Markdown"]
fn print_markdown() {
    println!("{}", to_markdown(&snapshot_a()));
}

#[test]
fn a_container_is_said_above_the_table_and_in_compare() {
    use stream_top::show::report::model::Container;
    let mut snap = snapshot_a();
    snap.info.container = Some(Container {
        memory_limit: Some(400 << 20),
        cpu_quota: Some(1.5),
    });
    let md = to_markdown(&snap);
    assert!(
        md.lines()
            .any(|l| l == "In a container: memory limit 400 MiB, CPU quota 1.5 CPUs."),
        "{md}"
    );
    assert!(!to_markdown(&snapshot_a()).contains("container"));
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, stream_top::show::report::to_json(&snapshot_a())).unwrap();
    std::fs::write(&b, stream_top::show::report::to_json(&snap)).unwrap();
    let diff = stream_top::show::report::compare(&a, &b, None)
        .unwrap()
        .text;
    assert!(
        diff.contains("container: none (A) → in a container: memory limit 400 MiB"),
        "{diff}"
    );
}

#[test]
fn a_macs_snapshot_says_what_does_not_apply_instead_of_zero() {
    use stream_top::show::report::model::MemPressure;
    let mut snap = snapshot_a();
    snap.info.placement = Some("not controllable on macOS (no thread affinity)".into());
    snap.info.huge_pages = Some("not applicable on macOS (no transparent huge pages)".into());
    for c in &mut snap.cells {
        c.huge_bytes = None;
        c.cpus.clear();
    }
    snap.info.host_start.anon_huge = None;
    snap.info.host_start.compressor = Some(11 << 30);
    snap.info.host_start.mem_pressure = Some(MemPressure::Warning);
    let md = to_markdown(&snap);
    for needle in [
        "Pinning: spread (across NUMA nodes, then cores, SMT siblings last); placement is not controllable on macOS (no thread affinity).",
        "Huge pages: not applicable on macOS (no transparent huge pages).",
        "swap 0 B of 0 B used; available 6 GiB of 8 GiB, compressor 11 GiB, memory pressure warning.",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in\n{md}");
    }
    assert!(!md.contains("sat on transparent huge pages"), "{md}");
    assert!(!md.contains("changed CPU"), "{md}");
    // And it reads back as written.
    let text = stream_top::show::report::to_json(&snap);
    assert!(text.contains("\"anon_huge\": null") && text.contains("\"mem_pressure\": \"warning\""));
    let back =
        stream_top::show::report::from_json(&text, std::path::Path::new("mac.json")).unwrap();
    assert_eq!(back, snap);
}

/// A sweep whose first per-thread set is not the grid's first: the sweep runs `1 MiB/thread × 1`
/// first, yet the table groups rows by set, then thread count, with the rerun last.
fn explicit_sets_snapshot() -> stream_top::show::report::Snapshot {
    use stream_top::engine::plan::{CellId, Grid, MemoryBudget, SetSpec, size_sets};
    use stream_top::judge::stats::Board;
    let specs = ["64MB", "1MiB/thread"].map(|s| SetSpec::parse(s).unwrap());
    let sets = size_sets(&specs, &topology(), &MemoryBudget::new(6 * GIB, None), 2).unwrap();
    let grid = Grid {
        sets,
        threads: vec![1, 2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(5);
    let rerun = CellId {
        op: stream_top::engine::kernel::Op::Triad,
        set: 1,
        threads: 1,
        rerun: true,
    };
    for cell in [
        CellId::new(1, 1),
        CellId::new(0, 1),
        CellId::new(0, 2),
        CellId::new(1, 2),
        rerun,
    ] {
        feed(&mut board, cell, &[10.0, 11.0, 12.0], None);
        checksum(&mut board, cell, true);
    }
    stream_top::show::report::Snapshot::build(
        &run_info("h", None),
        &grid,
        &board,
        &host(0.1),
        "2026-01-02 03:04:05".into(),
    )
}

#[test]
fn rows_are_grouped_by_set_then_threads_with_the_rerun_last() {
    let md = to_markdown(&explicit_sets_snapshot());
    let (_, rows) = cell_table(&md);
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    // The fixture machine: L2 512 KiB per core, one 64 MiB L3 shared by its 2 CPUs.
    let big = "64 MB, past L3 (64 MiB reached): dram";
    let small = "1 MiB/thread, within L3 (64 MiB reached): l3";
    assert_eq!(
        got,
        [
            (big, "1"),
            (big, "2"),
            (small, "1"),
            (small, "2"),
            (
                "1 MiB/thread, within L3 (64 MiB reached): l3, run again last",
                "1"
            ),
        ]
    );
    // The user's unit stays in the prose too, and the rule is said once.
    assert!(
        md.contains("arrays of 64 MB split into one contiguous partition per thread"),
        "{md}"
    );
    assert!(
        md.contains("each thread streams its own 1 MiB of each array"),
        "{md}"
    );
    assert_eq!(
        md.matches("An explicit size lands in the first cache level")
            .count(),
        1
    );
}

#[test]
fn a_small_explicit_set_lands_in_the_first_cache_that_holds_it() {
    use stream_top::engine::plan::{MemoryBudget, SetSpec, size_sets};
    let specs = ["8KiB/thread", "100KB/thread", "256KiB"].map(|s| SetSpec::parse(s).unwrap());
    let mut snap = explicit_sets_snapshot();
    snap.grid.sets = size_sets(&specs, &topology(), &MemoryBudget::new(6 * GIB, None), 2)
        .unwrap()
        .iter()
        .map(Into::into)
        .collect();
    let md = to_markdown(&snap);
    for label in [
        // Per-thread sets against a level's share per CPU: 3 × 8 KiB fit the 32 KiB L1d,
        // 3 × 100 KB fit the 512 KiB L2 but not the L1d.
        "8 KiB/thread, within L1d (32 KiB per CPU): l1",
        "100 KB/thread, within L2 (512 KiB per CPU): l2",
        // Split sets against all of a level: 768 KiB fit the two L2s (1 MiB).
        "256 KiB, within L2 (1 MiB): l2",
    ] {
        assert!(md.contains(label), "no {label:?} in\n{md}");
    }
}

#[test]
fn counters_noise_and_drift_are_said_beside_the_table() {
    use stream_top::show::report::model::{CounterInfo, MissingCounters};
    // The l2 × 2 cell's rounds spread 20 % either side of their median: its cv is 14.1 %.
    let mut snap = snapshot_a_noisy_l2();
    // Without counters in the snapshot (schema 1 as it was), no counters line.
    assert!(!to_markdown(&snap).contains("Counters:"));
    snap.info.counters = Some(CounterInfo {
        counted: vec!["task clock".into(), "context switches".into()],
        missing: vec![MissingCounters {
            counters: vec!["cycles".into(), "instructions".into()],
            reason: "this VM exposes no hardware counters".into(),
        }],
    });
    let first = snap
        .cells
        .iter()
        .position(|c| !c.rerun && c.threads == 1 && c.set == 0)
        .unwrap();
    let again = snap.cells.iter().position(|c| c.rerun).unwrap();
    snap.cells[again].figures.median_gbs = snap.cells[first].figures.median_gbs * 0.8;
    let md = to_markdown(&snap);
    assert!(
        md.contains(
            "Counters: counted per thread, just outside each timed span: task clock, context \
             switches; not counted: cycles, instructions — this VM exposes no hardware counters; \
             bytes/cycle uses the clock estimate."
        ),
        "{md}"
    );
    assert!(
        md.contains("Noisy: 85 KiB/thread (l2) × 2 threads: cv 14.1 % over 5 %; ")
            && md.contains("85 KiB/thread (l2) × 4 threads: 4 threads on 2 CPUs"),
        "{md}"
    );
    assert!(
        md.contains("Drift: 85 KiB/thread (l2) × 1 thread run again last is -20.0 % against its first run (over 5 %; rank test: slower)"),
        "{md}"
    );
}

/// A snapshot whose label and run name carry a terminal title sequence, a clear-screen
/// sequence and a newline that would forge a Markdown row.
fn hostile_snapshot() -> stream_top::show::report::Snapshot {
    let mut snap = snapshot_a();
    snap.info.hostname = "box\u{1b}]0;PWNED\u{7}\n| forged | row |".into();
    snap.info.name = Some("run\u{1b}[2J".into());
    let old = std::mem::replace(
        &mut snap.grid.sets[0].name,
        "l1\u{1b}[2J\n| forged |".into(),
    );
    for c in snap.cells.iter_mut().filter(|c| c.set_label == old) {
        c.set_label = snap.grid.sets[0].name.clone();
    }
    snap
}

/// Whether `text` holds a control character other than the line ends the renderer wrote.
fn has_raw_control(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn control_characters_in_labels_are_escaped_in_every_text_format() {
    use stream_top::show::report::{stream_table::to_stream_table, to_csv, to_markdown_compact};
    let (clean, hostile) = (snapshot_a(), hostile_snapshot());
    for (name, render) in [
        ("markdown", to_markdown as fn(&_) -> String),
        ("compact", to_markdown_compact),
        ("csv", to_csv),
        ("stream", to_stream_table),
    ] {
        let text = render(&hostile);
        assert!(!has_raw_control(&text), "{name}: {text:?}");
        assert!(
            !text.lines().any(|l| l.starts_with("| forged")),
            "{name}: {text}"
        );
        assert_eq!(
            text.lines().count(),
            render(&clean).lines().count(),
            "{name}: a label's newline adds no line"
        );
    }
    let md = to_markdown(&hostile);
    assert!(
        md.contains("box\\u{1b}]0;PWNED\\u{7}\\n| forged | row |"),
        "{md}"
    );
    assert!(md.contains("run\\u{1b}[2J"), "{md}");
}
