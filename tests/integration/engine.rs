//! The engine end to end on small working sets: rounds, checksums, commands, errors.

use std::time::Duration;
use stream_top::engine::Engine;
use stream_top::engine::events::{By, Choice, Command, Event, Stage};
use stream_top::engine::kernel::{Kernel, Op, Residence, Stores, Variant};
use stream_top::engine::plan::{
    ArraySize, CellId, Grid, HugePages, Loops, Plan, Schedule, WorkingSet,
};
use stream_top::judge::stats::{Board, Context};
use stream_top::machine::topology::PinPolicy;

fn set(name: &str, size: ArraySize) -> WorkingSet {
    WorkingSet {
        name: name.into(),
        level: None,
        size,
        note: None,
    }
}

fn plan(schedule: Schedule, threads: Vec<usize>) -> Plan {
    Plan {
        grid: Grid {
            sets: vec![
                set("16 KiB/thread", ArraySize::PerThread(16 << 10)),
                set("4 MiB", ArraySize::Split(4 << 20)),
            ],
            threads,
            ops: vec![stream_top::engine::kernel::Op::Triad],
        },
        kernel: Kernel::resolve(None, Stores::Normal).unwrap(),
        loops: Loops::Default,
        pin: PinPolicy::None,
        cpu_order: vec![0],
        round_ms: 2,
        schedule,
        duty: 100,
        huge_pages: HugePages::On,
        memory_budget: 4 << 30,
        counters: true,
        numa: Default::default(),
        reused: None,
    }
}

/// Collects events until Finished (or panics after a generous timeout: the engine must end).
fn drain(rx: &crossbeam_channel::Receiver<Event>, limit: Duration) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = rx.recv_timeout(limit).expect("the engine must not hang");
        let fin = ev == Event::Finished;
        out.push(ev);
        if fin {
            return out;
        }
    }
}

#[test]
fn a_headless_sweep_runs_every_cell_with_correct_checksums() {
    let (engine, rx) = Engine::start(plan(Schedule::Once { rounds: 5 }, vec![1, 2])).unwrap();
    let events = drain(&rx, Duration::from_secs(60));
    engine.stop();
    let mut board = Board::new(5);
    for e in &events {
        board.record(e);
        if let Event::Error(msg) = e {
            panic!("engine error: {msg}");
        }
    }
    let checks: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Checksum(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    // 4 cells plus the single-thread cache cell run again last.
    assert_eq!(checks.len(), 5, "{checks:?}");
    assert!(checks.iter().all(|c| c.ok), "{checks:?}");
    assert!(checks.last().unwrap().cell.rerun);
    // 4 MiB split over 2 threads: a holds 524288 elements.
    let split = checks.iter().find(|c| c.cell == CellId::new(1, 2)).unwrap();
    assert_eq!(
        split.expected,
        stream_top::engine::buffers::expected_sum(524288) as i64
    );
    for cell in [
        CellId::new(0, 1),
        CellId::new(0, 2),
        CellId::new(1, 1),
        CellId::new(1, 2),
    ] {
        let f = board.figures(cell, Context::default()).expect("figures");
        assert_eq!(f.rounds, 5);
        assert!(f.median_gbs > 0.0 && f.best_gbs >= f.median_gbs);
        assert!(f.fastest_thread_gbs >= f.slowest_thread_gbs);
        assert_eq!(f.checksum_ok, Some(true));
    }
    // Rounds carry one timing per thread and count 24 bytes per element per pass.
    let r = events
        .iter()
        .find_map(|e| match e {
            Event::Round(r) if r.cell == CellId::new(1, 2) && !r.warmup => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(r.threads.len(), 2);
    assert_eq!(r.bytes, 524288 * 24 * r.passes as u64);
    // Warm-up came first on every first visit: at least 3 warm-up rounds per cell.
    let warm = events
        .iter()
        .filter(|e| matches!(e, Event::Round(r) if r.cell == CellId::new(0, 1) && r.warmup))
        .count();
    assert!(warm >= 3, "{warm}");
    assert!(events.iter().any(|e| matches!(e, Event::Allocated { .. })));
}

#[test]
fn sweep_mode_obeys_focus_pause_and_stop() {
    let (engine, rx) = Engine::start(plan(
        Schedule::Sweep {
            rounds_per_visit: 2,
        },
        vec![1, 2],
    ))
    .unwrap();
    let focus = CellId::new(1, 2);
    engine.send(Command::Focus(focus));
    // After focusing, only the focused cell runs.
    let mut seen_focus = 0;
    while seen_focus < 10 {
        if let Event::Round(r) = rx.recv_timeout(Duration::from_secs(30)).unwrap() {
            if r.cell == focus {
                seen_focus += 1;
            } else {
                assert_eq!(seen_focus, 0, "another cell ran after focus: {:?}", r.cell);
            }
        }
    }
    engine.send(Command::Pause);
    loop {
        if rx.recv_timeout(Duration::from_secs(30)).unwrap() == Event::Paused {
            break;
        }
    }
    // Paused: no rounds come.
    assert!(
        !matches!(
            rx.recv_timeout(Duration::from_millis(300)),
            Ok(Event::Round(_))
        ),
        "a round ran while paused"
    );
    engine.send(Command::Resume);
    loop {
        if let Event::Round(_) = rx.recv_timeout(Duration::from_secs(30)).unwrap() {
            break;
        }
    }
    engine.send(Command::Stop);
    let rest = drain(&rx, Duration::from_secs(30));
    assert_eq!(rest.last(), Some(&Event::Finished));
    engine.stop();
}

#[test]
fn a_gap_parks_the_rounds_until_done() {
    let (engine, rx) = Engine::start(plan(
        Schedule::Sweep {
            rounds_per_visit: 3,
        },
        vec![1],
    ))
    .unwrap();
    // Wait for rounds to flow, then ask for a gap.
    while !matches!(
        rx.recv_timeout(Duration::from_secs(30)).unwrap(),
        Event::Round(_)
    ) {}
    engine.send(Command::RequestGap);
    while rx.recv_timeout(Duration::from_secs(30)).unwrap() != Event::Gap {}
    // Within the gap (it lasts up to 50 ms without GapDone), no round is sent.
    let during = rx.recv_timeout(Duration::from_millis(20));
    assert!(!matches!(during, Ok(Event::Round(_))), "{during:?}");
    engine.send(Command::GapDone);
    while !matches!(
        rx.recv_timeout(Duration::from_secs(30)).unwrap(),
        Event::Round(_)
    ) {}
    engine.stop();
}

/// A stop during the first touch of a large set cuts the touch short: the arrays never come
/// into place, no round runs and no checksum is taken, and the engine still ends with Finished.
#[test]
fn a_stop_during_the_first_touch_cuts_it_short() {
    let mut p = plan(
        Schedule::Sweep {
            rounds_per_visit: 5,
        },
        vec![1],
    );
    p.grid.sets = vec![set("256 MiB", ArraySize::Split(256 << 20))];
    let (engine, rx) = Engine::start(p).unwrap();
    // Wait for the touch to be under way, partly done.
    loop {
        match rx.recv_timeout(Duration::from_secs(60)).expect("progress") {
            Event::Progress {
                stage: Stage::FirstTouch,
                done_bytes,
                total_bytes,
                ..
            } if done_bytes < total_bytes => break,
            Event::Allocated { .. } => panic!("the touch ended before it could be stopped"),
            _ => {}
        }
    }
    assert!(
        engine.stop_within(Duration::from_secs(60)),
        "the engine ended"
    );
    let rest: Vec<Event> = rx.iter().collect();
    assert_eq!(rest.last(), Some(&Event::Finished), "{rest:?}");
    assert!(
        !rest.iter().any(|e| matches!(
            e,
            Event::Allocated { .. } | Event::Round(_) | Event::Checksum(_)
        )),
        "{rest:?}"
    );
}

fn choices(events: &[Event]) -> Vec<(usize, Choice)> {
    events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            Event::Choice(c) => Some((i, (**c).clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn auto_settles_each_working_set_once_by_trial_before_its_first_round() {
    let mut p = plan(Schedule::Once { rounds: 3 }, vec![1, 2]);
    p.loops = Loops::Auto;
    p.huge_pages = HugePages::Auto;
    let (engine, rx) = Engine::start(p).unwrap();
    let events = drain(&rx, Duration::from_secs(120));
    engine.stop();
    for e in &events {
        if let Event::Error(msg) = e {
            panic!("engine error: {msg}");
        }
        if let Event::Checksum(c) = e {
            assert!(c.ok, "{c:?}");
        }
    }
    let loops: Vec<&str> = Variant::all()
        .filter(|v| v.op == Op::Triad && v.stores == Stores::Normal && (v.available)())
        .map(|v| v.name)
        .collect();
    let found = choices(&events);
    assert_eq!(found.len(), 2, "one choice per working set: {found:?}");
    let kernel = Kernel::resolve(None, Stores::Normal).unwrap();
    for (set, layouts, layout_by, residence) in [
        (0, 2, By::Trial, Residence::Cache),
        (1, 1, By::Rule, Residence::Memory),
    ] {
        let (at, c) = found.iter().find(|(_, c)| c.set == set).unwrap();
        let first_round = events
            .iter()
            .position(|e| matches!(e, Event::Round(r) if r.cell.set == set))
            .unwrap();
        assert!(*at < first_round, "set {set} chosen before its first round");
        assert!(loops.contains(&c.kept.variant.name), "{c:?} runs here");
        assert_eq!(c.layout_by, layout_by);
        let by = if loops.len() > 1 { By::Trial } else { By::Only };
        assert_eq!(c.kernel_by, by);
        if layout_by == By::Rule {
            assert!(c.kept.huge_pages, "arrays in memory get huge pages");
        }
        let t = c.trial.as_ref().expect("a trial");
        assert_eq!(t.threads, vec![1, 2]);
        assert_eq!(t.candidates, loops.len() * layouts);
        assert!(t.took_ns > 0 && t.margin >= 0.01);
        match c.runner_up {
            Some((up, ratio)) => {
                assert!(up != c.kept && ratio.is_finite() && ratio > 0.0, "{c:?}")
            }
            // No candidate kept enough rounds that no neighbour held back (a busy machine, as
            // CI's two cores running the tests can be): then the default stays.
            None => assert_eq!(
                (c.kept.variant.name, c.kept.huge_pages),
                (kernel.default_loop(Op::Triad, residence).name, true),
                "{c:?}"
            ),
        }
    }
}

#[test]
fn a_pinned_loop_and_layout_run_without_a_trial() {
    let kernel = Kernel::resolve(None, Stores::Normal).unwrap();
    let last = kernel.loops(Op::Triad).last().unwrap();
    let mut p = plan(Schedule::Once { rounds: 2 }, vec![1]);
    p.loops = Loops::Named(last);
    p.huge_pages = HugePages::Off;
    let (engine, rx) = Engine::start(p).unwrap();
    let events = drain(&rx, Duration::from_secs(60));
    engine.stop();
    let found = choices(&events);
    assert_eq!(found.len(), 2);
    for (_, c) in &found {
        assert_eq!(c.kept.variant.name, last.name);
        assert!(!c.kept.huge_pages);
        assert_eq!((c.kernel_by, c.layout_by), (By::Pinned, By::Pinned));
        assert!(c.trial.is_none() && c.runner_up.is_none());
    }
    for e in &events {
        if let Event::Allocated { huge_bytes, .. } = e {
            assert!(
                huge_bytes.is_none_or(|h| h == 0),
                "MADV_NOHUGEPAGE: no huge pages"
            );
        }
        if let Event::Checksum(c) = e {
            assert!(c.ok);
        }
    }
}

#[test]
fn an_instruction_set_with_huge_pages_on_pins_its_default_loops() {
    // The plan the other tests run: --kernel <best> --huge-pages on.
    let (engine, rx) = Engine::start(plan(Schedule::Once { rounds: 2 }, vec![1])).unwrap();
    let events = drain(&rx, Duration::from_secs(60));
    engine.stop();
    let kernel = Kernel::resolve(None, Stores::Normal).unwrap();
    let found = choices(&events);
    assert_eq!(found.len(), 2);
    for (_, c) in &found {
        assert_eq!(c.kept.variant.kernel(), kernel);
        assert!(c.kept.huge_pages);
        assert_eq!((c.kernel_by, c.layout_by), (By::Pinned, By::Pinned));
        assert!(c.trial.is_none());
    }
}

#[test]
fn every_op_runs_its_cells_with_its_own_bytes_checksum_and_choice() {
    let mut p = plan(Schedule::Once { rounds: 2 }, vec![1, 2]);
    p.grid.ops = Op::ALL.to_vec();
    p.loops = Loops::Auto;
    p.huge_pages = HugePages::Auto;
    let grid = p.grid.clone();
    let (engine, rx) = Engine::start(p).unwrap();
    let events = drain(&rx, Duration::from_secs(300));
    engine.stop();
    let mut checked = Vec::new();
    let mut rounds = 0;
    for e in &events {
        match e {
            Event::Error(msg) => panic!("engine error: {msg}"),
            Event::Checksum(c) => {
                assert!(c.ok, "{c:?}");
                checked.push(c.cell);
            }
            Event::Round(r) => {
                // The op's bytes per element, per pass, over the cell's elements.
                let len = grid.sets[r.cell.set].layout(r.cell.threads).len as u64;
                let want = len * r.cell.op.bytes_per_element() * u64::from(r.passes);
                assert_eq!(r.bytes, want, "{}", r.cell);
                let threads: u64 = r.threads.iter().map(|t| t.bytes).sum();
                assert_eq!(threads, want, "{}", r.cell);
                rounds += 1;
            }
            _ => {}
        }
    }
    assert!(rounds > 0);
    for cell in grid.cells() {
        assert!(checked.contains(&cell), "{cell} checked");
    }
    // Each op's loop is chosen on its own, for each set: only its own loops.
    let found = choices(&events);
    assert_eq!(found.len(), Op::ALL.len() * grid.sets.len(), "{found:?}");
    for (_, c) in &found {
        assert_eq!(c.kept.variant.op, c.op, "{c:?}");
    }
    for op in Op::ALL {
        for set in 0..grid.sets.len() {
            assert!(found.iter().any(|(_, c)| c.op == op && c.set == set));
        }
    }
}
