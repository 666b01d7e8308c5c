//! The latency snapshot (`--measure latency`) in every writer, read back: Markdown, CSV, JSON
//! (and a schema-3 file upgraded to 4 with no latency), the cliffs of a latency sweep named by
//! level, the log-log SVG, the NUMA latency matrix, and `compare` of latency cells, where lower
//! is better.

use crate::support::csv::parse_csv;
use crate::support::latency_fixtures::*;
use crate::support::report_fixtures::fixture_path;
use std::path::Path;
use stream_top::engine::latency::SplitMix64;
use stream_top::engine::latency::matrix_jobs;
use stream_top::engine::matrix::MatrixPlan;
use stream_top::engine::plan::{ArraySize, Level, WorkingSet};
use stream_top::machine::topology::Topology;
use stream_top::show::report::LATENCY_CSV_COLUMNS;
use stream_top::show::report::latency::latency_cliffs;
use stream_top::show::report::model::{self as wire, LatencyCell};
use stream_top::show::report::{
    SCHEMA_VERSION, Snapshot, from_json, load_snapshot, to_csv, to_json, to_markdown, to_svg,
};

#[test]
fn the_latency_rows_are_in_every_format() {
    let s = levels_snapshot();
    assert!(s.is_latency_run());
    let md = to_markdown(&s);
    assert!(
        md.contains("| set | buffer | ns/load | cycles/load |"),
        "{md}"
    );
    assert!(md.contains("| l1 | 16 KiB | 1.25 | 3.8 | 100 % |"), "{md}");
    assert!(md.contains("| dram | 768 MiB | 100.00 |"), "{md}");
    assert!(md.contains("Hardware prefetchers stay on"), "{md}");
    assert!(md.contains("ns × the clock estimate's 3.00 GHz"), "{md}");
    // No bandwidth table beside it.
    assert!(!md.contains("median GB/s"), "{md}");

    let rows = parse_csv(&to_csv(&s));
    assert_eq!(rows[0], LATENCY_CSV_COLUMNS);
    assert_eq!(rows.len(), 5);
    let col = |name: &str| LATENCY_CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
    assert_eq!(rows[2][col("set_name")], "l2");
    assert_eq!(rows[2][col("level")], "l2");
    assert_eq!(rows[2][col("median_ns")], "4");
    assert_eq!(rows[2][col("cycles_from")], "clock_estimate");
    assert_eq!(rows[4][col("bytes")], (768u64 << 20).to_string());

    let json = to_json(&s);
    assert!(json.contains("\"latency\": ["), "{json}");
    let back = from_json(&json, Path::new("lat.json")).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.schema_version, 4);
}

/// A TLB cost below zero (the 4 KiB chase came out faster than the huge-page one) is the
/// spread of the two chases, not a cost: the table says it is within the noise.
#[test]
fn a_tlb_cost_below_zero_is_shown_as_within_noise() {
    let mut l2 = latency_cell("l2", Some(wire::Level::L2), 1 << 20, &[4.0]);
    l2.small_pages_ns = Some(3.61);
    l2.tlb_ns = Some(-0.39);
    let mut l1 = latency_cell("l1", Some(wire::Level::L1), 16 << 10, &[1.25]);
    l1.small_pages_ns = Some(1.249);
    l1.tlb_ns = Some(-0.001);
    let s = latency_snapshot(Vec::new(), vec![l1, l2]);
    let md = to_markdown(&s);
    assert!(md.contains("| 3.61 | ≈0 (within noise: −0.39) |"), "{md}");
    assert!(!md.contains("-0.39") && !md.contains("| -0.00 |"), "{md}");
    assert!(md.contains("| 1.25 | 0.00 |"), "{md}");
    // Scripts still get the figure as measured.
    assert!(to_csv(&s).contains(",-0.39,"), "{}", to_csv(&s));
}

#[test]
fn a_schema_3_snapshot_reads_as_4_with_no_latency() {
    assert_eq!(SCHEMA_VERSION, 4);
    let s = load_snapshot(&fixture_path("golden-v3.json")).unwrap();
    assert_eq!(s.schema_version, 4);
    assert!(s.latency.is_empty());
    assert!(!s.is_latency_run());
    // And a latency field a schema-3 writer never wrote is not invented for older files.
    let v1 = load_snapshot(&fixture_path("golden-v1.json")).unwrap();
    assert!(v1.latency.is_empty());
}

#[test]
fn a_bad_latency_figure_is_refused_naming_it() {
    let mut s = levels_snapshot();
    s.latency[1].median_ns = -4.0;
    let e = from_json(&to_json(&s), Path::new("bad.json")).unwrap_err();
    assert!(e.to_string().contains("latency[1].median_ns is -4"), "{e}");
}

#[test]
fn a_latency_sweep_names_its_cliffs_by_level() {
    let s = sweep_snapshot();
    let cliffs = latency_cliffs(&s);
    let lines: Vec<String> = cliffs.iter().map(|c| c.line()).collect();
    assert_eq!(cliffs.len(), 3, "{lines:#?}");
    assert!(
        lines[0].starts_with("L1d edge between 32 KiB and 64 KiB: 1.25 → 4.00 ns"),
        "{lines:#?}"
    );
    assert!(
        lines[1].starts_with("L2 edge between 512 KiB and 1 MiB: 4.00 → 20.00 ns"),
        "{lines:#?}"
    );
    assert!(
        lines[2].starts_with("L3 edge between 64 MiB and 128 MiB"),
        "{lines:#?}"
    );
    assert!(
        lines[1].contains("the buffer fills L2 (512 KiB reached) at 512 KiB"),
        "{lines:#?}"
    );
    let md = to_markdown(&s);
    assert!(md.contains("## Latency against size"), "{md}");
    assert!(
        md.contains("- Cliff: L2 edge between 512 KiB and 1 MiB"),
        "{md}"
    );
    // The four levels alone are no sweep: no cliffs.
    assert!(latency_cliffs(&levels_snapshot()).is_empty());
}

#[test]
fn the_latency_chart_is_log_log_with_both_page_sizes_and_the_cache_edges() {
    let svg = to_svg(&sweep_snapshot());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    let has = |t: &str| texts.iter().any(|x| x.contains(t));
    assert!(has("median ns per load (log scale)"), "{texts:?}");
    assert!(has("bytes of the chased buffer (log scale)"), "{texts:?}");
    assert!(has("pointer chase, idle latency"), "{texts:?}");
    assert!(has("L2 (512 KiB)"), "{texts:?}");
    assert!(has("huge pages") && has("4 KiB pages"), "{texts:?}");
    assert!(
        has("Cliff: L1d edge between 32 KiB and 64 KiB"),
        "{texts:?}"
    );
    // Two lines (huge and 4 KiB pages), each through every size; on a log y axis the step
    // from 1.25 to 4 ns (×3.2) is as tall as the one from 20 to 100 (×5) is taller.
    let lines: Vec<Vec<(f64, f64)>> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| {
            n.attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .filter(|pts: &Vec<(f64, f64)>| pts.len() == 17)
        .collect();
    assert_eq!(lines.len(), 2, "{svg}");
    let huge = &lines[0];
    let step = |a: usize, b: usize| huge[a].1 - huge[b].1;
    // Points 3 (32 KiB) → 4 (64 KiB): ×3.2; 14 (64 MiB) → 15 (128 MiB): ×5; ln ratio 0.72.
    let ratio = step(3, 4) / step(14, 15);
    assert!((ratio - 3.2f64.ln() / 5f64.ln()).abs() < 0.02, "{ratio}");
    // Evenly spaced doublings on the x axis: a log axis.
    let dx: Vec<f64> = huge.windows(2).map(|w| w[1].0 - w[0].0).collect();
    assert!(dx.iter().all(|d| (d - dx[0]).abs() < 1.5), "{dx:?}");
}

#[test]
fn the_numa_latency_matrix_is_a_table_of_cpu_nodes_by_memory_nodes() {
    let pair = |cpu: usize, mem: usize, ns: f64| LatencyCell {
        label: format!("768 MiB, CPU node {cpu} → memory node {mem}"),
        cpu_node: Some(cpu),
        mem_node: Some(mem),
        ..latency_cell("dram", None, 768 << 20, &[ns])
    };
    let s = latency_snapshot(
        vec![size_set(256 << 20); 4],
        vec![
            pair(0, 0, 90.0),
            pair(0, 1, 140.0),
            pair(1, 0, 141.0),
            pair(1, 1, 91.0),
        ],
    );
    let md = to_markdown(&s);
    assert!(md.contains("## NUMA latency matrix"), "{md}");
    assert!(
        md.contains("| CPU node \\ memory node | node 0 | node 1 |"),
        "{md}"
    );
    assert!(md.contains("| node 0 | 90.0 | 140.0 |"), "{md}");
    assert!(md.contains("| node 1 | 141.0 | 91.0 |"), "{md}");
    // The pairs are not rows of the per-buffer table.
    assert!(!md.contains("| set | buffer |"), "{md}");
}

#[test]
fn the_latency_matrix_chases_every_pair_of_the_two_node_fixture_from_its_cpu_node() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server-2s");
    let t = Topology::read(&root).unwrap();
    let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
    let m = MatrixPlan::new(&t, &all);
    let dram = WorkingSet {
        name: "dram".into(),
        level: Some(Level::Dram),
        size: ArraySize::Split(1 << 30),
        note: None,
    };
    let jobs = matrix_jobs(&m.pairs, &m.grid(&dram).sets);
    let pairs: Vec<(Option<usize>, Option<usize>)> =
        jobs.iter().map(|j| (j.cpu_node, j.mem_node)).collect();
    assert_eq!(
        pairs,
        vec![
            (Some(0), Some(0)),
            (Some(0), Some(1)),
            (Some(1), Some(0)),
            (Some(1), Some(1))
        ]
    );
    for j in &jobs {
        // One thread, on a CPU of its CPU node, chasing the dram row's buffer: 3 arrays.
        let cpu = j.cpu.unwrap();
        assert_eq!(t.cpu(cpu).unwrap().node, j.cpu_node.unwrap(), "{j:?}");
        assert_eq!(j.bytes, 3 << 30);
        assert!(j.label.ends_with(&format!(
            "CPU node {} → memory node {}",
            j.cpu_node.unwrap(),
            j.mem_node.unwrap()
        )));
    }
}

/// `n` repetition medians about `centre`, ±2 %, from `seed`.
fn reps(seed: u64, centre: f64, n: usize) -> Vec<f64> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| centre * (0.98 + 0.04 * r.below(1000) as f64 / 1000.0))
        .collect()
}

fn side(cells: Vec<LatencyCell>, dir: &Path, name: &str) -> std::path::PathBuf {
    let mut s = levels_snapshot();
    s.latency = cells;
    let path = dir.join(name);
    std::fs::write(&path, to_json(&s)).unwrap();
    path
}

#[test]
fn compare_judges_latency_lower_is_better() {
    let dir = tempfile::tempdir().unwrap();
    let l1 = |seed, centre| {
        latency_cell(
            "l1",
            Some(wire::Level::L1),
            16 << 10,
            &reps(seed, centre, 5),
        )
    };
    let dram = |seed, centre| {
        latency_cell(
            "dram",
            Some(wire::Level::Dram),
            768 << 20,
            &reps(seed, centre, 5),
        )
    };
    // B's DRAM 20 % slower (higher latency), its L1 as A's; five repetitions a side.
    let a = side(vec![l1(1, 1.25), dram(2, 100.0)], dir.path(), "a.json");
    let b = side(vec![l1(3, 1.25), dram(4, 120.0)], dir.path(), "b.json");
    let cmp = stream_top::show::report::compare(&a, &b, None).unwrap();
    let row = |label: &str| {
        cmp.text
            .lines()
            .find(|l| l.starts_with(&format!("| {label} | 5 | 5 |")))
            .unwrap_or_else(|| panic!("{label}: {}", cmp.text))
            .to_string()
    };
    assert!(
        row("dram").contains("| slower (higher latency) |"),
        "{}",
        cmp.text
    );
    let dram_row = row("dram");
    let ratio: f64 = dram_row.split(" | ").nth(5).unwrap().parse().unwrap();
    assert!(ratio > 1.1 && ratio < 1.3, "{dram_row}");
    assert!(
        row("l1").contains("no significant difference (5 a side)"),
        "{}",
        cmp.text
    );
    assert!(cmp.text.contains("lower is better"), "{}", cmp.text);
    assert!(cmp.text.contains("1 slower, 1 undecided"), "{}", cmp.text);
    // The other way round, B is faster.
    let cmp = stream_top::show::report::compare(&b, &a, None).unwrap();
    assert!(
        cmp.text.contains("| faster (lower latency) |"),
        "{}",
        cmp.text
    );
    // No "no cell in both" for two latency runs.
    assert!(!cmp.text.contains("No cell is in both"), "{}", cmp.text);
}

#[test]
fn compare_of_one_latency_run_a_side_says_the_spread_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let a = side(
        vec![latency_cell(
            "dram",
            Some(wire::Level::Dram),
            768 << 20,
            &[100.0],
        )],
        dir.path(),
        "a.json",
    );
    let b = side(
        vec![
            latency_cell("dram", Some(wire::Level::Dram), 768 << 20, &[110.0]),
            latency_cell("l1", Some(wire::Level::L1), 16 << 10, &[1.25]),
        ],
        dir.path(),
        "b.json",
    );
    let cmp = stream_top::show::report::compare(&a, &b, None).unwrap();
    assert!(
        cmp.text
            .contains("no verdict: one run a side, B/A 1.100, run-to-run spread unknown"),
        "{}",
        cmp.text
    );
    assert!(cmp.text.contains("Only in B: latency l1."), "{}", cmp.text);
}

#[test]
fn a_latency_snapshot_is_not_taken_for_a_bandwidth_one() {
    let s: Snapshot = load_snapshot(&fixture_path("a.json")).unwrap();
    assert!(!s.is_latency_run());
    assert!(!to_markdown(&s).contains("ns/load"));
}
