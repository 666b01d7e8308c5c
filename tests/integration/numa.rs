//! Big machines on this small one: where pages sit (move_pages in query mode), one set of
//! arrays per working set re-partitioned for each thread count, the memory policies, the NUMA
//! matrix (its pairs on the 2-node fixture, a 1×1 run here), and 64 workers on this machine's
//! CPUs with `--oversubscribe`.

use crate::support::binary::{SMALL, run_binary as stream_top};
use std::path::Path;
use std::time::Duration;
use stream_top::engine::Engine;
use stream_top::engine::events::{Command as EngineCommand, Event, Placement, Stage};
use stream_top::engine::kernel::{Kernel, Stores};
use stream_top::engine::matrix::MatrixPlan;
use stream_top::engine::plan::{
    ArraySize, CellId, Grid, MemPolicy, Numa, Plan, Schedule, WorkingSet,
};
use stream_top::machine::topology::{PinPolicy, Topology};

fn set(name: &str, size: ArraySize) -> WorkingSet {
    WorkingSet {
        name: name.into(),
        level: None,
        size,
        note: None,
    }
}

/// Two sets at 1 and 2 threads, pinned in the spread order of this machine, each CPU's node
/// known.
fn plan(schedule: Schedule, policy: MemPolicy) -> Plan {
    let topo = Topology::read(Path::new("/")).unwrap();
    Plan {
        grid: Grid {
            sets: vec![
                set("16 KiB/thread", ArraySize::PerThread(16 << 10)),
                set("4 MiB", ArraySize::Split(4 << 20)),
            ],
            threads: vec![1, 2],
            ops: vec![stream_top::engine::kernel::Op::Triad],
        },
        kernel: Kernel::resolve(None, Stores::Normal).unwrap(),
        pin: PinPolicy::Spread,
        cpu_order: topo.cpu_order(PinPolicy::Spread),
        round_ms: 2,
        schedule,
        duty: 100,
        huge_pages: stream_top::engine::plan::HugePages::On,
        loops: stream_top::engine::plan::Loops::Default,
        memory_budget: 4 << 30,
        counters: false,
        numa: Numa {
            policy,
            node_of_cpu: topo.cpus.iter().map(|c| (c.id, c.node)).collect(),
            matrix: Vec::new(),
        },
        reused: None,
    }
}

fn until_finished(rx: &crossbeam_channel::Receiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the engine must not hang");
        if let Event::Error(e) = &ev {
            panic!("engine error: {e}");
        }
        let end = ev == Event::Finished;
        out.push(ev);
        if end {
            return out;
        }
    }
}

fn one_node() -> bool {
    Topology::read(Path::new("/")).unwrap().nodes.len() == 1
}

#[test]
fn every_sampled_page_of_every_cell_is_on_its_threads_node() {
    for policy in [MemPolicy::FirstTouch, MemPolicy::Bind(0)] {
        let (engine, rx) =
            Engine::start(plan(Schedule::Once { rounds: 2 }, policy.clone())).unwrap();
        let events = until_finished(&rx);
        engine.stop();
        let placed: Vec<(CellId, Placement)> = events
            .iter()
            .filter_map(|e| match e {
                Event::Placement { cell, pages } => Some((*cell, pages.clone())),
                _ => None,
            })
            .collect();
        // One per visit: 4 cells and the rerun.
        assert_eq!(placed.len(), 5, "{policy}: {placed:?}");
        for (cell, pages) in placed {
            let Placement::Sampled(p) = pages else {
                panic!("{policy}: {cell}: the kernel could not say where pages are: {pages:?}");
            };
            assert!(p.sampled > 0 && p.absent == 0, "{cell}: {p:?}");
            // Pinned threads, their nodes known: every page is meant for a node and on it.
            assert_eq!(p.meant, p.sampled, "{cell}: {p:?}");
            assert_eq!(p.on_meant, p.meant, "{policy}: {cell}: {p:?}");
            if one_node() {
                assert_eq!(p.by_node.get(&0), Some(&p.sampled), "{cell}: {p:?}");
            }
        }
    }
}

#[test]
fn each_working_set_has_one_set_of_arrays_for_every_thread_count() {
    let (engine, rx) = Engine::start(plan(
        Schedule::Sweep {
            rounds_per_visit: 1,
        },
        MemPolicy::FirstTouch,
    ))
    .unwrap();
    // Two sweeps over the four cells: 1 → 2 threads and back, on both sets.
    let mut events = Vec::new();
    let mut checks = 0;
    while checks < 8 {
        let ev = rx.recv_timeout(Duration::from_secs(60)).expect("no hang");
        if let Event::Error(e) = &ev {
            panic!("{e}");
        }
        if let Event::Checksum(c) = &ev {
            assert!(c.ok, "{c:?}");
            checks += 1;
        }
        events.push(ev);
    }
    engine.stop();
    let mapped = |set: usize| {
        events
            .iter()
            .filter(|e| {
                matches!(e, Event::Progress { cell, stage: Stage::Allocating, .. } if cell.set == set)
            })
            .count()
    };
    assert_eq!(
        (mapped(0), mapped(1)),
        (1, 1),
        "one mapping per working set"
    );
    // Each cell says once what it uses of them: a per-thread set's share grows with its
    // threads; a split set's arrays are whole at every thread count.
    let bytes = |cell: CellId| {
        let said: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                Event::Allocated { cell: c, bytes, .. } if *c == cell => Some(*bytes),
                _ => None,
            })
            .collect();
        assert_eq!(said.len(), 1, "{cell}: {said:?}");
        said[0]
    };
    assert_eq!(bytes(CellId::new(0, 1)), 3 * (16 << 10));
    assert_eq!(bytes(CellId::new(0, 2)), 3 * 2 * (16 << 10));
    assert_eq!(bytes(CellId::new(1, 1)), 3 * (4 << 20));
    assert_eq!(bytes(CellId::new(1, 2)), 3 * (4 << 20));
    // A focus on one cell after the sweep takes the same arrays again.
    let (engine, rx) = Engine::start(plan(
        Schedule::Sweep {
            rounds_per_visit: 1,
        },
        MemPolicy::FirstTouch,
    ))
    .unwrap();
    engine.send(EngineCommand::Focus(CellId::new(1, 2)));
    let mut seen = 0;
    let mut allocating = 0;
    while seen < 3 {
        match rx.recv_timeout(Duration::from_secs(60)).expect("no hang") {
            Event::Checksum(c) if c.cell == CellId::new(1, 2) => {
                assert!(c.ok);
                seen += 1;
            }
            Event::Progress {
                stage: Stage::Allocating,
                cell,
                ..
            } if cell.set == 1 => allocating += 1,
            Event::Error(e) => panic!("{e}"),
            _ => {}
        }
    }
    engine.stop();
    assert_eq!(allocating, 1);
}

#[test]
fn a_node_the_machine_lacks_is_refused_and_policies_on_one_node_come_with_a_note() {
    let (code, out, err) = stream_top(&["--headless", "--membind", "4095"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("stream-top: --membind 4095: no such NUMA node (this machine has node"),
        "{err}"
    );
    let (code, _, err) = stream_top(&["--headless", "--membind", "0", "--interleave"]);
    assert_eq!(code, 2, "{err}");
    for flag in [&["--membind", "0"][..], &["--interleave"]] {
        let mut args = SMALL.to_vec();
        args.extend_from_slice(flag);
        args.extend_from_slice(&["--format", "json"]);
        let (code, out, err) = stream_top(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let note = v["info"]["numa"]
            .as_str()
            .expect("the note beside the table");
        assert!(note.contains(flag[0]), "{note}");
        if one_node() {
            assert!(note.contains("one NUMA node"), "{note}");
        }
        for c in v["cells"].as_array().unwrap() {
            let p = &c["pages"];
            if flag[0] == "--membind" || one_node() {
                assert_eq!(p["on_meant"], p["meant"], "{c}");
            }
            assert!(p["sampled"].as_u64().unwrap() > 0, "{c}");
        }
    }
}

#[test]
fn the_matrix_pairs_every_cpu_node_with_every_memory_node_on_the_two_node_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server-2s");
    let t = Topology::read(&root).unwrap();
    let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
    let m = MatrixPlan::new(&t, &all);
    let pairs: Vec<(usize, usize)> = m.pairs.iter().map(|p| (p.cpu_node, p.mem_node)).collect();
    assert_eq!(pairs, vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
    // All cores of the node, one thread each, on the node's own CPUs.
    assert_eq!(m.threads, t.physical_cores() / 2);
    for p in &m.pairs {
        assert_eq!(p.cpus.len(), m.threads);
        let mut cores: Vec<(usize, usize)> = p
            .cpus
            .iter()
            .map(|&c| {
                let cpu = t.cpu(c).unwrap();
                assert_eq!(cpu.node, p.cpu_node, "CPU {c} of {p:?}");
                (cpu.package, cpu.core)
            })
            .collect();
        cores.sort_unstable();
        cores.dedup();
        assert_eq!(cores.len(), m.threads, "one CPU per core: {p:?}");
    }
    assert_eq!(m.note, None);
    // Only the CPUs the process may use count: node 1 left out, its row goes.
    let node0: Vec<usize> = t.nodes[0].cpus.clone();
    let m = MatrixPlan::new(&t, &node0);
    assert_eq!(m.pairs.len(), 2);
    assert!(m.pairs.iter().all(|p| p.cpu_node == 0));
}

#[test]
fn the_matrix_of_the_four_node_epyc_and_the_sub_numa_xeon() {
    for (name, nodes, threads) in [("epyc-2s", 4, 32), ("xeon-snc2", 2, 20)] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let t = Topology::read(&root).unwrap();
        let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
        let m = MatrixPlan::new(&t, &all);
        assert_eq!(m.pairs.len(), nodes * nodes, "{name}");
        assert_eq!(
            m.threads, threads,
            "{name}: every core of a node, one thread each"
        );
        for (i, p) in m.pairs.iter().enumerate() {
            assert_eq!((p.cpu_node, p.mem_node), (i / nodes, i % nodes), "{name}");
            assert!(
                p.cpus.iter().all(|&c| t.cpu(c).unwrap().node == p.cpu_node),
                "{name}: {p:?}"
            );
        }
        // The grid the engine runs: a working set per pair, all at the node's core count.
        let g = m.grid(&set("dram", ArraySize::Split(1 << 30)));
        assert_eq!(g.sets.len(), nodes * nodes);
        assert_eq!(g.threads, vec![threads]);
        assert_eq!(
            g.sets[nodes + 1].label(),
            "1 GiB, CPU node 1 → memory node 1"
        );
    }
}

#[test]
fn a_one_by_one_matrix_runs_here_with_its_note() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = stream_top(&[
        "--headless",
        "--matrix",
        "--rounds",
        "3",
        "--round-ms",
        "2",
        "--format",
        "json",
        "--export",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let m = &v["matrix"];
    let cells = m["cells"].as_array().expect("the matrix");
    let nodes = Topology::read(Path::new("/")).unwrap().nodes.len();
    assert_eq!(cells.len(), nodes * nodes, "{m}");
    for c in cells {
        assert!(c["median_gbs"].as_f64().unwrap() > 0.0, "{c}");
        let set = c["set"].as_u64().unwrap();
        let cell = v["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["set"].as_u64() == Some(set))
            .unwrap();
        assert_eq!(cell["figures"]["checksum_ok"], true, "{cell}");
        assert_eq!(cell["threads"], m["threads"]);
    }
    if nodes == 1 {
        assert!(
            m["note"].as_str().unwrap().contains("the matrix is 1×1"),
            "{m}"
        );
        assert!(v["info"]["numa"].as_str().unwrap().contains("1×1"));
    }
    // The Markdown export prints it as a table.
    let md = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .expect("a Markdown export");
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("## NUMA matrix"), "{md}");
    assert!(md.contains("| CPU node \\ memory node | node 0 |"), "{md}");
}

#[test]
fn sixty_four_workers_on_this_machine_finish_with_correct_checksums_as_no_measurement() {
    let (code, _, err) = stream_top(&["--headless", "--threads", "64", "--sets", "16KiB/thread"]);
    if std::thread::available_parallelism().map_or(1, |p| p.get()) * 4 < 64 {
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--oversubscribe"), "{err}");
    }
    let (code, out, err) = stream_top(&[
        "--headless",
        "--oversubscribe",
        "--threads",
        "64",
        "--sets",
        "16KiB/thread,4MiB",
        "--rounds",
        "3",
        "--round-ms",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("NOT A MEASUREMENT"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["info"]["not_a_measurement"]
            .as_str()
            .unwrap()
            .contains("64 threads")
    );
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for c in cells {
        assert_eq!(c["threads"], 64);
        assert_eq!(c["figures"]["checksum_ok"], true, "{c}");
        assert_eq!(c["checksum_failures"], 0);
    }
}
