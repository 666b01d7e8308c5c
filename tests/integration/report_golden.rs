//! The JSON snapshot's schema, pinned: a snapshot built from known machine, settings and rounds
//! must write exactly the committed golden file of the current schema (golden-v4.json), the
//! same run as schema 1 wrote it (golden-v1.json, as released) must read as that very snapshot,
//! and the committed fixtures must read back and write again byte for byte. A failure here
//! means schema 4 changed: put it back, or bump SCHEMA_VERSION, add a golden file for the new
//! version and teach `report/upgrade.rs` to read the older ones.
//!
//! A second pair holds a run with per-worker counters, disturbed rounds, the median's interval
//! and host steal (golden-counted-v1.json, as the last schema-1 build wrote it, which left
//! those fields out where a run had none, and golden-counted-v4.json). The schema-2 and schema-3
//! files of both runs (golden-v2.json, golden-counted-v2.json, golden-v3.json,
//! golden-counted-v3.json, as those schemas wrote them) read as the schema-4 snapshot too.
//!
//! The v1, v2 and v3 files are never rewritten. Rewrite the v4 files only after a deliberate
//! schema change, with `STREAM_TOP_BLESS=1 cargo test --test integration report_golden`.

use crate::support::report_fixtures::*;
use std::fs;
use std::path::Path;
use stream_top::engine::events::{Checksum, Event, RoundRecord};
use stream_top::engine::kernel::{Isa, Kernel, Stores};
use stream_top::engine::plan::{ArraySize, CellId, Grid, Level, WorkingSet};
use stream_top::judge::stats::Board;
use stream_top::machine::clock::ClockEstimate;
use stream_top::machine::host::HostState;
use stream_top::machine::topology::{
    Cache, CacheKind, CoreKind, Cpu, NumaNode, PinPolicy, Topology,
};
use stream_top::machine::vendor::{VendorFigure, VendorSource};
use stream_top::show::report::{Snapshot, from_json, to_json};

/// A hybrid laptop: two P-core SMT siblings, one E-core, a second NUMA node without CPUs, and
/// every kind of cache.
fn hybrid_topology() -> Topology {
    let cpu = |id, core, smt_siblings, kind| Cpu {
        id,
        package: 0,
        core,
        node: 0,
        smt_siblings,
        kind,
    };
    Topology {
        model: "12th Gen Intel(R) Core(TM) i7-1260P".into(),
        cpus: vec![
            cpu(0, 0, vec![0, 1], CoreKind::Performance),
            cpu(1, 0, vec![0, 1], CoreKind::Performance),
            cpu(2, 8, vec![2], CoreKind::Efficiency),
        ],
        caches: vec![
            Cache {
                level: 1,
                kind: CacheKind::Data,
                size: 48 << 10,
                cpus: vec![0, 1],
            },
            Cache {
                level: 1,
                kind: CacheKind::Instruction,
                size: 32 << 10,
                cpus: vec![0, 1],
            },
            Cache {
                level: 2,
                kind: CacheKind::Unified,
                size: 1280 << 10,
                cpus: vec![0, 1],
            },
            Cache {
                level: 3,
                kind: CacheKind::Unified,
                size: 18 << 20,
                cpus: vec![0, 1, 2],
            },
        ],
        nodes: vec![
            NumaNode {
                id: 0,
                cpus: vec![0, 1, 2],
            },
            NumaNode {
                id: 1,
                cpus: Vec::new(),
            },
        ],
        llc_hidden: false,
        cpu: None,
    }
}

fn set(name: &str, level: Option<Level>, size: ArraySize, note: Option<&str>) -> WorkingSet {
    WorkingSet {
        name: name.into(),
        level,
        size,
        note: note.map(Into::into),
    }
}

/// The run the golden file holds: every level, both sizes, a note, non-temporal stores with no
/// pinning, clocks that disagree, a vendor figure from SMBIOS, a failed checksum whose sum is
/// NaN, a cell never checked, and a round with no threads.
fn golden_snapshot() -> Snapshot {
    let mut info = run_info("laptop \"7\"", Some(76.8));
    info.command_line = "stream-top --headless --sets l1,l2,l3,dram,64M,1M/thread --threads 1,2 --pin none --stores nt".into();
    info.topology = hybrid_topology();
    info.kernel = Kernel {
        isa: Isa::Avx512,
        stores: Stores::Nt,
    };
    info.pin = PinPolicy::None;
    info.clock = ClockEstimate {
        ghz: 2.934_567_891,
        check_ghz: 2.5,
        agree: false,
        method: "dependent 1-cycle add chain, min of 7 runs".into(),
        counted_ghz: None,
    };
    info.vendor = VendorFigure {
        gbs: Some(76.8),
        kind: VendorSource::Smbios,
        source: "SMBIOS: 2 × DDR5-4800 × 64 bit, assumes one DIMM per channel".into(),
    };
    info.host_start = HostState {
        load: [1.25, 0.875, 0.5],
        mem_total: 16 * GIB,
        mem_available: 9 * GIB + 123_456_789,
        swap_total: 2 * GIB,
        swap_used: 4096,
        anon_huge: Some(6 << 20),
        compressor: None,
        mem_pressure: None,
    };
    info.rounds = 3;
    info.round_ms = 25;
    info.duty = 80;
    let grid = Grid {
        sets: vec![
            set("l1", Some(Level::L1), ArraySize::PerThread(16 << 10), None),
            set("l2", Some(Level::L2), ArraySize::PerThread(426 << 10), None),
            set("l3", Some(Level::L3), ArraySize::Split(6 << 20), None),
            set(
                "dram",
                Some(Level::Dram),
                ArraySize::Split(72 << 20),
                Some("shrunk to fit MemAvailable"),
            ),
            set("64 MiB", None, ArraySize::Split(64 << 20), None),
            set("1 MiB/thread", None, ArraySize::PerThread(1 << 20), None),
        ],
        threads: vec![1, 2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(3);
    let l1 = |threads| CellId::new(0, threads);
    let dram = |threads| CellId::new(3, threads);
    feed(&mut board, l1(1), &[101.3, 99.7, 103.9], None);
    checksum(&mut board, l1(1), true);
    feed(&mut board, l1(2), &[197.25, 201.5, 188.0], Some(2));
    checksum(&mut board, l1(2), true);
    feed(&mut board, dram(1), &[17.1, 16.9, 17.4], None);
    checksum(&mut board, dram(1), true);
    feed(&mut board, dram(2), &[23.3, 24.1, 22.8], None);
    board.record(&Event::Checksum(Checksum {
        cell: dram(2),
        expected: 75_497_472,
        actual: f64::NAN,
        ok: false,
    }));
    // A round with no threads: its slowest thread is no number and must be written as one.
    board.record(&Event::Round(Box::new(RoundRecord::from_threads(
        CellId::new(4, 2),
        false,
        1,
        Vec::new(),
    ))));
    feed(&mut board, CellId::new(4, 2), &[21.0], None);
    let rerun = CellId {
        op: stream_top::engine::kernel::Op::Triad,
        set: 0,
        threads: 1,
        rerun: true,
    };
    feed(&mut board, rerun, &[98.6, 97.2], None);
    checksum(&mut board, rerun, true);
    Snapshot::build(
        &info,
        &grid,
        &board,
        &HostState {
            load: [2.5, 1.0, 0.25],
            mem_total: 16 * GIB,
            mem_available: 8 * GIB,
            swap_total: 2 * GIB,
            swap_used: 8192,
            anon_huge: Some(200 << 20),
            compressor: None,
            mem_pressure: None,
        },
        "2026-03-04 05:06:07".into(),
    )
}

/// `to_json(snap)` against the committed file (written instead under STREAM_TOP_BLESS).
fn assert_writes(snap: &Snapshot, name: &str) {
    let path = fixture_path(name);
    let text = to_json(snap);
    if std::env::var_os("STREAM_TOP_BLESS").is_some() {
        fs::write(&path, &text).unwrap();
    }
    assert_same_text(&text, &path);
}

fn assert_same_text(text: &str, path: &Path) {
    let name = path.display();
    let want = fs::read_to_string(path).unwrap();
    if text != want {
        let line = text
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(text.lines().count().min(want.lines().count()));
        panic!(
            "{name}: the JSON differs at line {} (wrote {:?}, the file has {:?})",
            line + 1,
            text.lines().nth(line),
            want.lines().nth(line)
        );
    }
}

#[test]
fn a_snapshot_built_from_known_data_writes_the_golden_file() {
    let snap = golden_snapshot();
    // The golden run holds what it claims to.
    assert_eq!(snap.cells.len(), 6);
    assert!(snap.cells.last().unwrap().rerun);
    assert!(snap.cells.iter().any(|c| c.checksum.is_none()));
    assert_writes(&snap, "golden-v4.json");
    let text = to_json(&snap);
    assert!(text.contains("\"actual\": \"NaN\""), "{text}");
    // NaN is not equal to itself, so the file is compared as text (below) and the sum here.
    let back = from_json(&text, Path::new("golden-v4.json")).unwrap();
    assert!(back.cells[3].checksum.as_ref().unwrap().actual.is_nan());
}

#[test]
fn schema_4_has_one_meaning_per_field() {
    let v: serde_json::Value = serde_json::from_str(&to_json(&golden_snapshot())).unwrap();
    assert_eq!(v["schema_version"], 4);
    // A bandwidth run has no latency cell, and says so.
    assert_eq!(v["latency"], serde_json::json!([]));
    // Schema 4: the loaded-latency curve, empty for a bandwidth run.
    assert_eq!(v["loaded_latency"], serde_json::json!([]));
    // Every cell names its op; the grid lists the run's ops.
    assert_eq!(v["grid"]["ops"], serde_json::json!(["triad"]));
    for c in v["cells"].as_array().unwrap() {
        assert_eq!(c["op"], "triad", "{}", c["label"]);
    }
    // A plain run is one repetition: its median.
    assert_eq!(
        v["cells"][0]["repetitions"],
        serde_json::json!([v["cells"][0]["figures"]["median_gbs"]])
    );
    // Times: RFC 3339 with the offset.
    assert_eq!(v["taken"], "2026-03-04T05:06:07+00:00");
    assert_eq!(v["info"]["started"], "2026-01-02T03:00:00+00:00");
    // One shape of size, in the grid and the cells.
    assert_eq!(
        v["grid"]["sets"][0]["size"],
        serde_json::json!({"kind": "per_thread", "bytes": 16384})
    );
    assert_eq!(
        v["cells"][1]["size"],
        serde_json::json!({"kind": "per_thread", "bytes": 16384})
    );
    assert_eq!(v["grid"]["sets"][3]["size"]["kind"], "split");
    // The vendor figure's source as an enum beside its words.
    assert_eq!(v["info"]["vendor"]["source"], "smbios");
    assert!(
        v["info"]["vendor"]["source_text"]
            .as_str()
            .unwrap()
            .starts_with("SMBIOS: 2 × DDR5-4800")
    );
    // Every share a fraction: duty 80 % is 0.8, cv and the vendor fraction below 1.
    assert_eq!(v["info"]["duty"], 0.8);
    let f = &v["cells"][0]["figures"];
    assert!(f["cv"].as_f64().unwrap() < 0.1, "{f}");
    assert!(f["vendor_fraction"].as_f64().unwrap() < 2.0, "{f}");
    // Explicit sizes say where they land; named levels do not.
    assert_eq!(v["grid"]["sets"][4]["lands_in"], "dram");
    assert_eq!(v["grid"]["sets"][5]["lands_in"], "l3");
    assert!(v["grid"]["sets"][0]["lands_in"].is_null());
    // Fields that may be empty are written anyway.
    assert!(v["info"]["name"].is_null());
    assert_eq!(v["info"]["no_effect"], serde_json::json!([]));
    assert_eq!(v["failed"], serde_json::json!([]));
    // So are those of a run without counters (3 rounds a cell: no interval of the median).
    assert!(v["info"].get("counters").is_some_and(|c| c.is_null()));
    assert!(
        v["info"]["clock"]
            .get("counted_ghz")
            .is_some_and(|c| c.is_null())
    );
    assert_eq!(f["disturbed_rounds"], 0);
    assert_eq!(f["bytes_per_cycle_from"], "clock_estimate");
    assert!(f.get("median_ci_gbs").is_some_and(|c| c.is_null()));
    assert!(f.get("counters").is_some_and(|c| c.is_null()));
    assert!(f["noisy"].is_array());
    let round = &v["cells"][0]["history"][0];
    assert_eq!(round["disturbed"], false);
    for key in ["cause", "switches", "steal", "throttled"] {
        assert!(
            round.get(key).is_some_and(|c| c.is_null()),
            "{key}: {round}"
        );
    }
}

#[test]
fn a_version_1_file_reads_as_the_snapshot_schema_4_writes_of_the_same_run() {
    let v1 = fixture_path("golden-v1.json");
    let text = fs::read_to_string(&v1).unwrap();
    assert!(text.contains("\"schema_version\": 1"));
    let read = from_json(&text, &v1).unwrap();
    assert_eq!(read.schema_version, 4);
    assert_same_text(&to_json(&read), &fixture_path("golden-v4.json"));
}

#[test]
fn version_2_files_read_as_the_snapshots_schema_4_writes_of_the_same_runs() {
    for (v2, v4) in [
        ("golden-v2.json", "golden-v4.json"),
        ("golden-counted-v2.json", "golden-counted-v4.json"),
    ] {
        let path = fixture_path(v2);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"schema_version\": 2"));
        assert!(!text.contains("\"repetitions\""));
        let read = from_json(&text, &path).unwrap();
        assert_eq!(read.schema_version, 4);
        for c in &read.cells {
            assert_eq!(c.repetitions.len(), 1, "{v2}: {}", c.label);
        }
        assert_same_text(&to_json(&read), &fixture_path(v4));
    }
}

#[test]
fn version_3_files_read_as_triad_cells_of_the_same_runs() {
    for (v3, v4) in [
        ("golden-v3.json", "golden-v4.json"),
        ("golden-counted-v3.json", "golden-counted-v4.json"),
    ] {
        let path = fixture_path(v3);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"schema_version\": 3"));
        assert!(!text.contains("\"op\""));
        let read = from_json(&text, &path).unwrap();
        assert_eq!(read.schema_version, 4);
        assert_eq!(read.grid.ops, ["triad"]);
        assert!(read.cells.iter().all(|c| c.op == "triad"), "{v3}");
        assert_same_text(&to_json(&read), &fixture_path(v4));
    }
}

#[test]
fn version_3_files_read_as_the_snapshots_schema_4_writes_of_the_same_runs() {
    for (v3, v4) in [
        ("golden-v3.json", "golden-v4.json"),
        ("golden-counted-v3.json", "golden-counted-v4.json"),
    ] {
        let path = fixture_path(v3);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"schema_version\": 3"));
        assert!(!text.contains("\"latency\""));
        let read = from_json(&text, &path).unwrap();
        assert_eq!(read.schema_version, 4);
        assert!(read.latency.is_empty(), "{v3}");
        assert_same_text(&to_json(&read), &fixture_path(v4));
    }
}

#[test]
fn the_committed_snapshots_write_back_byte_for_byte() {
    // The test fixtures, and the example snapshot of a real run in docs/examples/ (not in
    // results/, where a user's own runs write).
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples");
    let examples = fs::read_dir(&results)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"));
    let paths: Vec<_> = [
        "a.json",
        "b.json",
        "golden-v4.json",
        "golden-counted-v4.json",
    ]
    .into_iter()
    .map(fixture_path)
    .chain(examples)
    .collect();
    assert!(
        paths.len() > 4,
        "no example snapshot in {}",
        results.display()
    );
    for path in paths {
        let text = fs::read_to_string(&path).unwrap();
        let snap = from_json(&text, &path).unwrap();
        if std::env::var_os("STREAM_TOP_BLESS").is_some() {
            // After a schema change: the committed snapshots in the current schema.
            fs::write(&path, to_json(&snap)).unwrap();
            continue;
        }
        assert!(
            to_json(&snap) == text,
            "{} does not write back the same",
            path.display()
        );
    }
    // Older files are written back as schema 4, which reads back as itself.
    for name in [
        "golden-v1.json",
        "a-v1.json",
        "golden-counted-v1.json",
        "golden-v2.json",
        "golden-counted-v2.json",
        "golden-v3.json",
        "golden-counted-v3.json",
    ] {
        let path = fixture_path(name);
        let once = to_json(&from_json(&fs::read_to_string(&path).unwrap(), &path).unwrap());
        let twice = to_json(&from_json(&once, &path).unwrap());
        assert_eq!(once, twice, "{name}");
        assert!(once.contains("\"schema_version\": 4"));
    }
}

/// The JSON text of the kernel and pinning of a run, for every spelling (schema 2 spells them
/// as schema 1 did).
#[test]
fn every_kernel_and_pinning_is_spelled_as_the_schema_spells_it() {
    let grid = Grid {
        sets: vec![l2()],
        threads: vec![1],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let board = Board::new(3);
    let spelled = |kernel: Kernel, pin: PinPolicy| {
        let mut info = run_info("h", None);
        info.kernel = kernel;
        info.pin = pin;
        let text = to_json(&Snapshot::build(
            &info,
            &grid,
            &board,
            &host(0.0),
            "2026-01-02 03:04:05".into(),
        ));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        (
            value["info"]["kernel"]["isa"].as_str().unwrap().to_string(),
            value["info"]["kernel"]["stores"]
                .as_str()
                .unwrap()
                .to_string(),
            value["info"]["pin"].as_str().unwrap().to_string(),
        )
    };
    let isas = [
        (Isa::Avx512, "avx512"),
        (Isa::Avx2, "avx2"),
        (Isa::Sse2, "sse2"),
        (Isa::Neon, "neon"),
        (Isa::Portable, "portable"),
    ];
    let stores = [(Stores::Normal, "normal"), (Stores::Nt, "nt")];
    let pins = [
        (PinPolicy::Spread, "spread"),
        (PinPolicy::Compact, "compact"),
        (PinPolicy::None, "none"),
    ];
    for (isa, isa_name) in isas {
        for (store, store_name) in stores {
            for (pin, pin_name) in pins {
                let got = spelled(Kernel { isa, stores: store }, pin);
                assert_eq!(
                    got,
                    (
                        isa_name.to_string(),
                        store_name.to_string(),
                        pin_name.to_string()
                    )
                );
            }
        }
    }
}

/// The run the counted golden files hold (the counters' fields): l2 × 1 thread with software
/// counters only (bytes/cycle from the clock estimate), l2 × 2 with cycles, instructions and
/// LLC misses counted (bytes/cycle from counted cycles) and one round in which thread 1 was
/// switched out for half its span (disturbed, with its cause), 7 rounds each (so the median has
/// its interval), a host sample with steal and throttling over them, CPU migrations missing with
/// their reason, and the chain's counted clock.
fn counted_snapshot() -> Snapshot {
    use stream_top::engine::events::ThreadTiming;
    use stream_top::machine::counters::{Availability, Counter, Counts};
    use stream_top::machine::host::HostSample;
    let mut info = run_info("counted", Some(40.0));
    info.clock.counted_ghz = Some(3.1);
    info.counters = Some(Availability {
        counted: vec![
            Counter::TaskClock,
            Counter::Switches,
            Counter::PageFaults,
            Counter::Cycles,
            Counter::Instructions,
            Counter::LlcMisses,
        ],
        missing: vec![(
            vec![Counter::Migrations],
            "kernel.perf_event_paranoid is 2 (CAP_PERFMON or a setting of 1 counts them)".into(),
        )],
    });
    let grid = Grid {
        sets: vec![l2()],
        threads: vec![1, 2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(8);
    let round = |cell: CellId, i: u64, warmup: bool| {
        let hardware = cell.threads == 2;
        let threads = (0..cell.threads as u64)
            .map(|t| {
                let own = 1_000_000 + 10_000 * ((i * 3 + t) % 5);
                let preempted = hardware && i == 3 && t == 1;
                ThreadTiming {
                    start_ns: 0,
                    end_ns: own,
                    cpu_start: t as i32,
                    cpu_end: t as i32,
                    bytes: 24_000_000,
                    counters: Counts {
                        task_clock_ns: Some(if preempted { own / 2 } else { own }),
                        switches: Some(if preempted { 2 } else { 0 }),
                        migrations: None,
                        page_faults: Some(i % 2),
                        cycles: hardware.then_some(own * 3),
                        instructions: hardware.then_some(own * 5),
                        llc_misses: hardware.then_some(375_000),
                    },
                }
            })
            .collect();
        Event::Round(Box::new(RoundRecord::from_threads(
            cell, warmup, 1, threads,
        )))
    };
    for cell in [CellId::new(0, 1), CellId::new(0, 2)] {
        board.record(&round(cell, 0, true));
        for i in 0..7 {
            board.record(&round(cell, i, false));
        }
        checksum(&mut board, cell, true);
    }
    board.record_host(&HostSample {
        has_rates: true,
        steal_pct: Some(10.0),
        throttled_ratio: Some(0.02),
        ..Default::default()
    });
    Snapshot::build(
        &info,
        &grid,
        &board,
        &host(0.25),
        "2026-05-06 07:08:09".into(),
    )
}

#[test]
fn a_counted_run_writes_its_golden_file_with_one_meaning_per_field() {
    let snap = counted_snapshot();
    assert_writes(&snap, "golden-counted-v4.json");
    let v: serde_json::Value = serde_json::from_str(&to_json(&snap)).unwrap();
    let info = &v["info"];
    assert_eq!(info["clock"]["counted_ghz"], 3.1);
    assert_eq!(info["counters"]["counted"][1], "context switches");
    assert_eq!(
        info["counters"]["missing"][0]["counters"][0],
        "CPU migrations"
    );
    assert!(
        info["counters"]["missing"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("kernel.perf_event_paranoid is 2")
    );
    let (one, two) = (&v["cells"][0], &v["cells"][1]);
    assert_eq!(one["threads"], 1);
    // Bytes/cycle says where its cycles came from, both ways.
    assert_eq!(one["figures"]["bytes_per_cycle_from"], "clock_estimate");
    assert_eq!(two["figures"]["bytes_per_cycle_from"], "counted");
    // The counters: a field not counted is written as null, never left out.
    let counters = &two["figures"]["counters"];
    assert_eq!(counters["ghz"], 3.0);
    assert!((counters["ipc"].as_f64().unwrap() - 5.0 / 3.0).abs() < 1e-9);
    assert!(counters["migrations_per_round"].is_null());
    assert!(counters.get("migrations_per_round").is_some());
    assert!(one["figures"]["counters"]["ghz"].is_null());
    // The disturbed round: counted, marked and named; the others say they were not.
    assert_eq!(two["figures"]["disturbed_rounds"], 1);
    assert_eq!(one["figures"]["disturbed_rounds"], 0);
    let rounds = two["history"].as_array().unwrap();
    assert_eq!(rounds.len(), 7);
    assert_eq!(rounds[3]["disturbed"], true);
    assert!(
        rounds[3]["cause"]
            .as_str()
            .unwrap()
            .starts_with("t1 switched out 2× ("),
        "{}",
        rounds[3]
    );
    assert_eq!(rounds[0]["disturbed"], false);
    assert!(rounds[0]["cause"].is_null());
    assert_eq!(rounds[3]["switches"], 2);
    // Steal and throttling are fractions of the time, like every share.
    assert_eq!(rounds[0]["steal"], 0.1);
    assert_eq!(rounds[0]["throttled"], 0.02);
    // The median's interval: [low, high] GB/s around the median, from 7 rounds.
    let ci = two["figures"]["median_ci_gbs"].as_array().unwrap();
    let median = two["figures"]["median_gbs"].as_f64().unwrap();
    assert!(ci[0].as_f64().unwrap() <= median && median <= ci[1].as_f64().unwrap());
    // Noisy: the reasons as the screen gives them (the steal is over its 5 %).
    let noisy = two["figures"]["noisy"].as_array().unwrap();
    assert!(
        noisy
            .iter()
            .any(|r| r.as_str().unwrap().starts_with("the hypervisor stole 10 %")),
        "{noisy:?}"
    );
}

#[test]
fn version_3_files_read_as_schema_4_with_no_loaded_latency() {
    for (v3, v4) in [
        ("golden-v3.json", "golden-v4.json"),
        ("golden-counted-v3.json", "golden-counted-v4.json"),
    ] {
        let path = fixture_path(v3);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"schema_version\": 3"));
        assert!(!text.contains("\"loaded_latency\""));
        let read = from_json(&text, &path).unwrap();
        assert_eq!(read.schema_version, 4);
        assert!(read.loaded_latency.is_empty());
        assert_same_text(&to_json(&read), &fixture_path(v4));
    }
}

#[test]
fn a_counted_version_1_file_reads_as_the_snapshot_schema_4_writes_of_the_same_run() {
    // golden-counted-v1.json is the counted run as the last schema-1 build wrote it: its
    // counters, disturbed rounds, causes, intervals, steal and throttling were written only
    // where present, and its noisy reasons were not written at all.
    let v1 = fixture_path("golden-counted-v1.json");
    let text = fs::read_to_string(&v1).unwrap();
    assert!(text.contains("\"schema_version\": 1"));
    assert!(!text.contains("\"noisy\""));
    assert!(!text.contains("clock_estimate"));
    let read = from_json(&text, &v1).unwrap();
    assert_same_text(&to_json(&read), &fixture_path("golden-counted-v4.json"));
}
