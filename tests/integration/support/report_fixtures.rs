//! Snapshots built by hand for the report tests: machine, host and clock as struct literals, a
//! statistics board fed with synthetic rounds, and the M4 Pro reference run's
//! table.

use std::path::PathBuf;
use stream_top::engine::events::{Checksum, Event, RoundRecord, ThreadTiming};
use stream_top::engine::kernel::{Isa, Kernel, Stores};
use stream_top::engine::plan::{ArraySize, CellId, Grid, HugePages, Level, Loops, WorkingSet};
use stream_top::judge::run_info::RunInfo;
use stream_top::judge::stats::Board;
use stream_top::machine::clock::ClockEstimate;
use stream_top::machine::host::HostState;
use stream_top::machine::topology::{
    Cache, CacheKind, CoreKind, Cpu, NumaNode, PinPolicy, Topology,
};
use stream_top::machine::vendor::{VendorFigure, VendorSource};
use stream_top::show::report::derived::derive;
use stream_top::show::report::model::{self as wire, Figures};
use stream_top::show::report::{CellSnapshot, CheckResult, DerivedRow, SCHEMA_VERSION, Snapshot};

pub const GIB: u64 = 1 << 30;

pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/snapshots")
        .join(name)
}

pub fn topology() -> Topology {
    let cpu = |id| Cpu {
        id,
        package: 0,
        core: id,
        node: 0,
        smt_siblings: vec![id],
        kind: CoreKind::Uniform,
    };
    let cache = |level, kind, size, cpus: Vec<usize>| Cache {
        level,
        kind,
        size,
        cpus,
    };
    Topology {
        model: "AMD EPYC 7763 64-Core Processor".into(),
        cpus: vec![cpu(0), cpu(1)],
        caches: vec![
            cache(1, CacheKind::Data, 32 << 10, vec![0]),
            cache(1, CacheKind::Instruction, 32 << 10, vec![0]),
            cache(2, CacheKind::Unified, 512 << 10, vec![0]),
            cache(1, CacheKind::Data, 32 << 10, vec![1]),
            cache(1, CacheKind::Instruction, 32 << 10, vec![1]),
            cache(2, CacheKind::Unified, 512 << 10, vec![1]),
            cache(3, CacheKind::Unified, 64 << 20, vec![0, 1]),
        ],
        nodes: vec![NumaNode {
            id: 0,
            cpus: vec![0, 1],
        }],
        llc_hidden: false,
        cpu: None,
    }
}

pub fn host(load: f64) -> HostState {
    HostState {
        load: [load, load / 2.0, 0.01],
        mem_total: 8 * GIB,
        mem_available: 6 * GIB,
        swap_total: 0,
        swap_used: 0,
        anon_huge: Some(0),
        compressor: None,
        mem_pressure: None,
    }
}

pub fn run_info(hostname: &str, vendor: Option<f64>) -> RunInfo {
    RunInfo {
        version: "0.1.0".into(),
        name: None,
        command_line: "stream-top --headless --threads 1,2,4".into(),
        hostname: hostname.into(),
        started: "2026-01-02 03:00:00".into(),
        topology: topology(),
        kernel: Kernel {
            isa: Isa::Avx2,
            stores: Stores::Normal,
        },
        loops: Loops::Default,
        huge_pages_flag: HugePages::On,
        choices_from: None,
        pin: PinPolicy::Spread,
        clock: ClockEstimate {
            ghz: 3.0,
            check_ghz: 3.01,
            agree: true,
            method: "dependent 1-cycle add chain, min of 7 runs".into(),
            counted_ghz: None,
        },
        vendor: VendorFigure {
            gbs: vendor,
            kind: match vendor {
                Some(_) => VendorSource::Flag,
                None => VendorSource::None,
            },
            source: match vendor {
                Some(_) => "--vendor-gbs".into(),
                None => "no SMBIOS memory devices readable".into(),
            },
        },
        host_start: host(0.5),
        rounds: 5,
        round_ms: 20,
        duty: 100,
        container: None,
        placement: None,
        huge_pages: None,
        no_effect: Vec::new(),
        counters: None,
        numa: None,
        matrix: None,
        not_a_measurement: None,
        threads_note: None,
        fingerprint: None,
    }
}

pub fn l2() -> WorkingSet {
    WorkingSet {
        name: "l2".into(),
        level: Some(Level::L2),
        size: ArraySize::PerThread(85 << 10),
        note: None,
    }
}

pub fn dram() -> WorkingSet {
    WorkingSet {
        name: "dram".into(),
        level: Some(Level::Dram),
        size: ArraySize::Split(128 << 20),
        note: Some("below STREAM's rule: arrays should be 256 MiB (4 × 64 MiB of last-level cache), memory allows 128 MiB".into()),
    }
}

/// Bytes each thread moves per round in the synthetic rounds.
const THREAD_BYTES: u64 = 24_000_000;

/// Feeds timed rounds whose total rates are `rates` (GB/s) to a cell of `threads` threads; the
/// last thread is 10 % slower than the others, and `late_every` makes every n-th round late.
pub fn feed(board: &mut Board, cell: CellId, rates: &[f64], late_every: Option<usize>) {
    // A warm-up round that must not count.
    board.record(&round(cell, true, 1.0, false));
    for (i, &rate) in rates.iter().enumerate() {
        let late = late_every.is_some_and(|n| i % n == n - 1);
        board.record(&round(cell, false, rate, late));
    }
    board.record(&Event::Allocated {
        cell,
        bytes: (3 * 128) << 20,
        huge_bytes: Some((3 * 96) << 20),
    });
}

fn round(cell: CellId, warmup: bool, rate: f64, late: bool) -> Event {
    let t = cell.threads as u64;
    // The slowest thread sets the span: total bytes over the span is `rate`.
    let span = (THREAD_BYTES * t) as f64 / rate;
    let threads = (0..t)
        .map(|i| {
            let own = if i + 1 == t { span } else { span / 1.1 };
            // A late round: one thread starts a third of the span late.
            let start = if late && i == 0 {
                (span / 3.0) as u64
            } else {
                0
            };
            ThreadTiming {
                start_ns: start,
                end_ns: start + own.round() as u64,
                cpu_start: i as i32,
                cpu_end: i as i32,
                bytes: THREAD_BYTES,
                ..Default::default()
            }
        })
        .collect();
    Event::Round(Box::new(RoundRecord::from_threads(
        cell, warmup, 1, threads,
    )))
}

pub fn checksum(board: &mut Board, cell: CellId, ok: bool) {
    board.record(&Event::Checksum(Checksum {
        cell,
        expected: 268_173_312,
        actual: if ok { 268_173_312.0 } else { 268_173_311.0 },
        ok,
    }));
}

/// A: l2 and dram × 1, 2, 4 threads with the rerun, vendor figure 40 GB/s, every checksum ok.
pub fn snapshot_a() -> Snapshot {
    snapshot_a_with(false)
}

/// A with its l2 × 2 cell's rounds spread 20 % either side of 58 GB/s (cv 14.1 %): noisy.
pub fn snapshot_a_noisy_l2() -> Snapshot {
    snapshot_a_with(true)
}

fn snapshot_a_with(noisy_l2: bool) -> Snapshot {
    let grid = Grid {
        sets: vec![l2(), dram()],
        threads: vec![1, 2, 4],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(5);
    let rates: [(usize, usize, bool, f64); 7] = [
        (0, 1, false, 30.0),
        (0, 2, false, 58.0),
        (0, 4, false, 110.0),
        (1, 1, false, 12.0),
        (1, 2, false, 19.0),
        (1, 4, false, 20.0),
        (0, 1, true, 29.0),
    ];
    for (set, threads, rerun, rate) in rates {
        let cell = CellId {
            op: stream_top::engine::kernel::Op::Triad,
            set,
            threads,
            rerun,
        };
        let rates = if noisy_l2 && cell == CellId::new(0, 2) {
            [rate * 0.8, rate, rate * 1.2, rate, rate]
        } else {
            [rate * 0.98, rate, rate * 1.01, rate, rate * 1.03]
        };
        feed(
            &mut board,
            cell,
            &rates,
            (set == 1 && threads == 4).then_some(2),
        );
        checksum(&mut board, cell, true);
    }
    Snapshot::build(
        &run_info("bench-a", Some(40.0)),
        &grid,
        &board,
        &host(0.75),
        "2026-01-02 03:04:05".into(),
    )
}

/// B: the same sets × 1, 2, 8 threads (no rerun), AVX-512, compact pinning, no vendor figure,
/// and a failed checksum on dram × 2.
pub fn snapshot_b() -> Snapshot {
    let grid = Grid {
        sets: vec![l2(), dram()],
        threads: vec![1, 2, 8],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(5);
    for (set, threads, rate) in [
        (0, 1, 33.0),
        (0, 2, 64.0),
        (0, 8, 200.0),
        (1, 1, 13.0),
        (1, 2, 21.0),
        (1, 8, 22.0),
    ] {
        let cell = CellId::new(set, threads);
        feed(&mut board, cell, &[rate, rate * 1.1, rate * 0.9], None);
        checksum(&mut board, cell, !(set == 1 && threads == 2));
    }
    let mut info = run_info("bench-b", None);
    info.kernel.isa = Isa::Avx512;
    info.pin = PinPolicy::Compact;
    info.command_line = "stream-top --headless --threads 1,2,8".into();
    Snapshot::build(
        &info,
        &grid,
        &board,
        &host(2.0),
        "2026-01-03 10:00:00".into(),
    )
}

/// The M4 Pro reference run's table (a STREAM-style run on a 14-core M4 Pro whose tables the
/// report was built to reproduce), cell by cell, as a snapshot (figures as that
/// table prints them).
pub fn m4_pro_reference_snapshot() -> Snapshot {
    let cache = WorkingSet {
        name: "1 MiB/thread".into(),
        level: Some(Level::L2),
        size: ArraySize::PerThread(1 << 20),
        note: None,
    };
    let big = WorkingSet {
        name: "512 MiB".into(),
        level: None,
        size: ArraySize::Split(512 << 20),
        note: None,
    };
    let labels = [cache.label(), big.label()];
    let sets: Vec<wire::WorkingSet> = vec![(&cache).into(), (&big).into()];
    let vendor = 273.0;
    // (set, threads, rerun, median, best, cv %, fastest, slowest)
    type Row = (usize, usize, bool, f64, f64, f64, f64, f64);
    let rows: [Row; 12] = [
        (0, 1, false, 123.2, 129.8, 1.3, 123.2, 123.2),
        (0, 2, false, 238.1, 247.1, 1.1, 119.1, 119.0),
        (0, 4, false, 458.5, 466.9, 1.1, 138.7, 114.6),
        (0, 8, false, 691.9, 715.0, 1.7, 106.4, 86.5),
        (0, 10, false, 776.9, 844.4, 5.0, 92.7, 77.7),
        (1, 1, false, 119.2, 124.1, 7.9, 119.2, 119.2),
        (1, 2, false, 214.2, 216.6, 2.2, 107.8, 107.1),
        (1, 4, false, 223.7, 227.8, 2.0, 56.5, 55.9),
        (1, 8, false, 225.8, 229.0, 1.2, 28.4, 28.2),
        (1, 10, false, 225.5, 229.3, 0.8, 22.6, 22.6),
        (1, 14, false, 149.4, 182.5, 10.5, 20.6, 10.7),
        (0, 1, true, 120.4, 124.3, 0.9, 120.4, 120.4),
    ];
    let one = |set: usize| rows.iter().find(|r| r.0 == set && r.1 == 1).unwrap().3;
    let cells: Vec<CellSnapshot> = rows
        .iter()
        .map(|&(set, threads, rerun, median, best, cv, fast, slow)| {
            let set_label = labels[set].clone();
            CellSnapshot {
                op: "triad".into(),
                label: if rerun {
                    format!("{set_label}, run again last")
                } else {
                    set_label.clone()
                },
                set,
                set_label,
                set_name: sets[set].name.clone(),
                level: sets[set].level,
                size: sets[set].size,
                threads,
                rerun,
                repetitions: vec![median],
                figures: Figures {
                    median_gbs: median,
                    best_gbs: best,
                    cv: cv / 100.0,
                    fastest_thread_gbs: fast,
                    slowest_thread_gbs: slow,
                    late_rounds: 0,
                    rounds: 21,
                    scaling: (!rerun).then(|| median / one(set)),
                    vendor_fraction: Some(median / vendor),
                    bytes_per_cycle: Some(median / 4.49 / threads as f64),
                    checksum_ok: Some(true),
                    disturbed_rounds: 0,
                    bytes_per_cycle_from: None,
                    median_ci_gbs: None,
                    counters: None,
                    noisy: Vec::new(),
                    port_limit: None,
                },
                history: Vec::new(),
                checksum: Some(CheckResult {
                    expected: 268_173_312,
                    actual: 268_173_312.0,
                    ok: true,
                }),
                checksum_failures: 0,
                cpus: Vec::new(),
                migrations: 0,
                array_bytes: 0,
                huge_bytes: Some(0),
                choice: None,
                pages: None,
                groups: Vec::new(),
            }
        })
        .collect();
    let derived: Vec<DerivedRow> = derive(&cells, &sets, Some(vendor));
    let mut info = wire::RunInfo::from(&run_info("mac16-7", Some(vendor)));
    info.rounds = 21;
    info.clock.ghz = 4.49;
    Snapshot {
        schema_version: SCHEMA_VERSION,
        taken: "2026-01-02T03:04:05+00:00".into(),
        run_seconds: Some(245),
        info,
        host_now: (&host(11.55)).into(),
        grid: wire::Grid {
            sets,
            threads: vec![1, 2, 4, 8, 10, 14],
            ops: vec!["triad".into()],
        },
        cells,
        derived,
        contention: Vec::new(),
        log: Vec::new(),
        failed: Vec::new(),
        matrix: None,
        cliffs: Vec::new(),
        latency: Vec::new(),
        loaded_latency: Vec::new(),
        partial: None,
    }
}

/// The Markdown table row of a set and thread count (the rerun row when `rerun`): its label is
/// the set's, or the set's with where an explicit size lands (`4 MiB, within L3 (…): l3`),
/// which depends on the machine the test runs on.
pub fn md_row<'a>(md: &'a str, set: &str, threads: usize, rerun: bool) -> Option<&'a str> {
    md.lines().find(|l| {
        let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
        cells.len() > 2
            && (cells[0] == set || cells[0].starts_with(&format!("{set}, ")))
            && cells[0].ends_with(", run again last") == rerun
            && cells[1] == threads.to_string()
    })
}
