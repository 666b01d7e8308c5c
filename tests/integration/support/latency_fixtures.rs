//! Latency snapshots built by hand: the run's frame from `report_fixtures`, with latency cells
//! of chosen figures (no bandwidth cell, as `--measure latency` writes).

use super::report_fixtures::{host, run_info};
use stream_top::engine::plan::{ArraySize, Grid, Level, WorkingSet};
use stream_top::judge::stats::Board;
use stream_top::show::report::Snapshot;
use stream_top::show::report::model::{self as wire, CycleSource, LatencyCell};

/// A latency cell of `set` (a level's name or a size), `bytes`, whose repetitions had these
/// medians; 4 KiB pages 10 % slower.
pub fn latency_cell(
    set: &str,
    level: Option<wire::Level>,
    bytes: u64,
    reps: &[f64],
) -> LatencyCell {
    let mut sorted = reps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    LatencyCell {
        label: set.to_string(),
        set_name: set.to_string(),
        level,
        bytes,
        cpu: Some(0),
        cpu_node: None,
        mem_node: None,
        median_ns: median,
        min_ns: sorted[0],
        max_ns: sorted[sorted.len() - 1],
        cv: 0.01,
        cycles: median * 3.0,
        cycles_from: CycleSource::ClockEstimate,
        huge_share: Some(1.0),
        small_pages_ns: Some(median * 1.1),
        tlb_ns: Some(median * 0.1),
        runs: 11,
        hops_per_run: 1 << 20,
        repetitions: reps.to_vec(),
    }
}

/// The snapshot of a latency run over `sets` holding `cells`.
pub fn latency_snapshot(sets: Vec<WorkingSet>, cells: Vec<LatencyCell>) -> Snapshot {
    let grid = Grid {
        sets,
        threads: Vec::new(),
        ops: Vec::new(),
    };
    let mut s = Snapshot::build(
        &run_info("lat", None),
        &grid,
        &Board::new(1),
        &host(0.5),
        "2026-01-02 03:04:05".into(),
    );
    s.latency = cells;
    s
}

/// A level's working set, as the plan sizes it (the size matters only to its label).
pub fn level_set(level: Level, bytes: u64) -> WorkingSet {
    WorkingSet {
        name: level.name().to_string(),
        level: Some(level),
        size: ArraySize::PerThread(bytes / 3),
        note: None,
    }
}

/// An explicit size's working set.
pub fn size_set(bytes: u64) -> WorkingSet {
    WorkingSet {
        name: format!("{bytes}B"),
        level: None,
        size: ArraySize::Split(bytes),
        note: None,
    }
}

/// The four levels at the fixture machine's sizes, one repetition each: l1 1.25 ns, l2 4, l3
/// 20, dram 100.
pub fn levels_snapshot() -> Snapshot {
    let levels = [
        (Level::L1, wire::Level::L1, 16 << 10, 1.25),
        (Level::L2, wire::Level::L2, 256 << 10, 4.0),
        (Level::L3, wire::Level::L3, 32 << 20, 20.0),
        (Level::Dram, wire::Level::Dram, 768 << 20, 100.0),
    ];
    latency_snapshot(
        levels.iter().map(|l| level_set(l.0, l.2)).collect(),
        levels
            .iter()
            .map(|l| latency_cell(l.0.name(), Some(l.1), l.2, &[l.3]))
            .collect(),
    )
}

/// A size sweep from 4 KiB to 256 MiB, doubling, over the fixture's caches (L1d 32 KiB, L2
/// 512 KiB, L3 64 MiB): 1.25 ns while the buffer fits L1d, 4 in L2, 20 in L3, 100 past it.
pub fn sweep_snapshot() -> Snapshot {
    let sizes: Vec<u64> = (12..=28).map(|p| 1u64 << p).collect();
    let ns = |b: u64| match b {
        b if b <= 32 << 10 => 1.25,
        b if b <= 512 << 10 => 4.0,
        b if b <= 64 << 20 => 20.0,
        _ => 100.0,
    };
    latency_snapshot(
        sizes.iter().map(|&b| size_set(b)).collect(),
        sizes
            .iter()
            .map(|&b| latency_cell(&format!("{b}B"), None, b, &[ns(b)]))
            .collect(),
    )
}
