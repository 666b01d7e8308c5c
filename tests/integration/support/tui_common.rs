//! Synthetic grids and engine events for the TUI tests: no engine, no terminal.

use stream_top::engine::events::{Checksum, Event, RoundRecord, ThreadTiming};
use stream_top::engine::plan::{ArraySize, CellId, Grid, Level, WorkingSet};
use stream_top::judge::stats::Context;
use stream_top::show::tui::app::{App, Header};

/// Two sets (a per-thread cache set and a dram set) × threads 1 and 2.
pub fn grid() -> Grid {
    Grid {
        sets: vec![
            WorkingSet {
                name: "l2".into(),
                level: Some(Level::L2),
                size: ArraySize::PerThread(16 << 10),
                note: None,
            },
            WorkingSet {
                name: "dram".into(),
                level: Some(Level::Dram),
                size: ArraySize::Split(64 << 20),
                note: None,
            },
        ],
        threads: vec![1, 2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    }
}

pub fn header() -> Header {
    Header {
        machine: "testbox · Test CPU 9000 · 2 cores, 2 threads, 1 package, 1 NUMA node".into(),
        caches: "caches L1d 32 KiB ×2, L2 512 KiB ×2, L3 16 MiB ×1".into(),
        run: "kernel avx2 · normal stores · pin spread · clock 3.00 GHz".into(),
        vendor: "vendor 40.0 GB/s (--vendor-gbs)".into(),
    }
}

pub fn app() -> App {
    app_with(grid())
}

/// The monitor of `grid` with the context and header of [`app`], its clock fixed.
pub fn app_with(grid: Grid) -> App {
    let mut a = App::new(
        grid,
        5,
        Context {
            vendor_gbs: Some(40.0),
            ghz: Some(3.0),
            cpus: None,
            not_a_measurement: false,
        },
        header(),
        100,
    );
    a.clock.stamp = || "12:34:56".to_string();
    a
}

/// A round of `cell` at `gbs` GB/s per thread (every thread the same), 1 ms long, on CPUs
/// 0.., with thread 1 starting `late_ns` after thread 0.
pub fn round_at(cell: CellId, gbs_per_thread: f64, late_ns: u64, warmup: bool) -> Event {
    let own = 1_000_000u64;
    let bytes = (gbs_per_thread * own as f64) as u64;
    let threads = (0..cell.threads)
        .map(|t| {
            let start = if t == 1 { late_ns } else { 0 };
            ThreadTiming {
                start_ns: 1_000 + start,
                end_ns: 1_000 + start + own,
                cpu_start: t as i32,
                cpu_end: t as i32,
                bytes,
                ..Default::default()
            }
        })
        .collect();
    Event::Round(Box::new(RoundRecord::from_threads(
        cell, warmup, 10, threads,
    )))
}

pub fn round(cell: CellId, gbs_per_thread: f64) -> Event {
    round_at(cell, gbs_per_thread, 0, false)
}

pub fn checksum(cell: CellId, ok: bool) -> Event {
    Event::Checksum(Checksum {
        cell,
        expected: 1000,
        actual: if ok { 1000.0 } else { 999.0 },
        ok,
    })
}

/// An app with figures in every cell: l2 scales (10, 20 GB/s), dram does not (8, 12 GB/s).
pub fn app_with_figures() -> App {
    let mut a = app();
    for _ in 0..5 {
        a.on_event(&round(CellId::new(0, 1), 10.0));
        a.on_event(&round(CellId::new(0, 2), 10.0));
        a.on_event(&round(CellId::new(1, 1), 8.0));
        a.on_event(&round(CellId::new(1, 2), 6.0));
    }
    a
}
