//! Does the live monitor's gap protocol disturb the figures? In one process, on one cell at all
//! CPUs, alternately: 60 timed rounds with nobody asking for gaps, then 60 rounds while a watcher
//! asks for a gap every 100 ms (as the TUI does to draw) and holds it 1 ms. Prints each pair of
//! medians and their ratio, then the median ratio. Same arrays, same process: what differs is
//! only the gaps.
//!
//! cargo bench --bench gap_ab -- [SET (dram)] [PAIRS (6)]
// A benchmark's report is what it prints: its own stdout and stderr, not the monitor's writer.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A benchmark that cannot set itself up has nothing to report: it stops there.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};
use stream_top::base::median::median;
use stream_top::engine::Engine;
use stream_top::engine::events::{Command, Event};
use stream_top::engine::kernel::{Kernel, Stores};
use stream_top::engine::plan::{
    CellId, Grid, HugePages, Loops, MemoryBudget, Plan, Schedule, SetSpec, size_sets,
};
use stream_top::machine::host::HostState;
use stream_top::machine::topology::{PinPolicy, Topology};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` adds `--bench`: flags are not ours.
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let set = args.next().unwrap_or_else(|| "dram".into());
    let pairs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(6);
    let root = Path::new("/");
    let topo = Topology::read(root)?;
    let threads = topo.cpus.len();
    let host = HostState::read(root)?;
    let memory = MemoryBudget::new(host.mem_available, None);
    let sets = size_sets(&[SetSpec::parse(&set)?], &topo, &memory, threads)?;
    let plan = Plan {
        grid: Grid {
            sets,
            threads: vec![threads],
            ops: vec![stream_top::engine::kernel::Op::Triad],
        },
        kernel: Kernel::resolve(None, Stores::Normal).map_err(|e| e.to_string())?,
        loops: Loops::Default,
        pin: PinPolicy::Spread,
        cpu_order: topo.cpu_order(PinPolicy::Spread),
        round_ms: 20,
        schedule: Schedule::Sweep {
            rounds_per_visit: 5,
        },
        duty: 100,
        huge_pages: HugePages::On,
        memory_budget: memory.bytes,
        counters: true,
        numa: Default::default(),
        reused: None,
    };
    let cell = CellId::new(0, threads);
    let (engine, rx) = Engine::start(plan)?;
    engine.send(Command::Focus(cell));
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(2) {
        let _ = rx.recv_timeout(Duration::from_millis(100));
    }
    let mut ratios = Vec::new();
    println!("{set} × {threads}: median GB/s of 60 rounds, without and with gaps");
    for pair in 1..=pairs {
        let mut medians = [0.0; 2];
        for (i, gaps) in [false, true].into_iter().enumerate() {
            let mut rates = Vec::new();
            let mut next = Instant::now();
            let mut asked = false;
            while rates.len() < 60 {
                if gaps && !asked && Instant::now() >= next {
                    engine.send(Command::RequestGap);
                    asked = true;
                }
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(Event::Round(r)) if !r.warmup && r.cell == cell => rates.push(r.gbs()),
                    Ok(Event::Gap) => {
                        // What a frame costs the TUI, roughly.
                        std::thread::sleep(Duration::from_millis(1));
                        engine.send(Command::GapDone);
                        asked = false;
                        next = Instant::now() + Duration::from_millis(100);
                    }
                    Ok(Event::Error(e)) => return Err(e.into()),
                    Ok(Event::Finished) => return Err("the engine ended".into()),
                    _ => {}
                }
            }
            medians[i] = median(&rates);
        }
        let ratio = medians[1] / medians[0];
        ratios.push(ratio);
        println!(
            "pair {pair}: without {:.2}  with {:.2}  with/without {ratio:.3}",
            medians[0], medians[1]
        );
    }
    println!("median with/without: {:.3}", median(&ratios));
    engine.stop();
    Ok(())
}
