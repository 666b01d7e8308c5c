//! A worker that panics ends the engine with an error event, never a hang. Its own test
//! binary: the hook is an environment variable, read when the engine starts.

use std::time::Duration;
use stream_top::engine::Engine;
use stream_top::engine::events::Event;
use stream_top::engine::kernel::{Kernel, Stores};
use stream_top::engine::plan::{ArraySize, Grid, Plan, Schedule, WorkingSet};
use stream_top::machine::topology::PinPolicy;

#[test]
fn a_worker_panic_ends_the_engine_with_an_error() {
    let (engine, rx) = {
        // SAFETY: no other thread of this test reads or writes the environment concurrently.
        unsafe { std::env::set_var("STREAM_TOP_PANIC_WORKER", "1") };
        let r = Engine::start(Plan {
            grid: Grid {
                sets: vec![WorkingSet {
                    name: "1 MiB".into(),
                    level: None,
                    size: ArraySize::Split(1 << 20),
                    note: None,
                }],
                threads: vec![2],
            },
            kernel: Kernel::resolve(None, Stores::Normal).unwrap(),
            pin: PinPolicy::None,
            cpu_order: vec![0],
            round_ms: 2,
            schedule: Schedule::Once { rounds: 3 },
            duty: 100,
            huge_pages: true,
        })
        .unwrap();
        // SAFETY: as above.
        unsafe { std::env::remove_var("STREAM_TOP_PANIC_WORKER") };
        r
    };
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
