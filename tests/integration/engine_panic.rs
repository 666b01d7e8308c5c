//! A worker that panics ends the engine with an error event, never a hang.

use std::time::Duration;
use stream_top::engine::Engine;
use stream_top::engine::events::Event;
use stream_top::engine::kernel::{Kernel, Stores};
use stream_top::engine::plan::{ArraySize, Grid, HugePages, Loops, Plan, Schedule, WorkingSet};
use stream_top::machine::topology::PinPolicy;

#[test]
fn a_worker_panic_ends_the_engine_with_an_error() {
    let (engine, rx) = Engine::start_with_panic(
        Plan {
            grid: Grid {
                sets: vec![WorkingSet {
                    name: "1 MiB".into(),
                    level: None,
                    size: ArraySize::Split(1 << 20),
                    note: None,
                }],
                threads: vec![2],
                ops: vec![stream_top::engine::kernel::Op::Triad],
            },
            kernel: Kernel::resolve(None, Stores::Normal).unwrap(),
            loops: Loops::Default,
            pin: PinPolicy::None,
            cpu_order: vec![0],
            round_ms: 2,
            schedule: Schedule::Once { rounds: 3 },
            duty: 100,
            huge_pages: HugePages::On,
            memory_budget: 4 << 30,
            counters: true,
            numa: Default::default(),
            reused: None,
        },
        Some(1),
    )
    .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the engine must not hang");
        let fin = ev == Event::Finished;
        events.push(ev);
        if fin {
            break;
        }
    }
    engine.stop();
    let err = events.iter().find_map(|e| match e {
        Event::Error(m) => Some(m.clone()),
        _ => None,
    });
    assert!(err.unwrap().contains("worker 1 panicked"));
}
