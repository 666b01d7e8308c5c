//! The engine's own cost per round against the number of workers: the start and end barriers,
//! the job handed out, the per-worker counters read around the span, the stamps collected and
//! the round's record built and sent, as the coordinator does each round. Each worker's part is
//! one pass over 128 bytes, so a round is almost nothing but that cost.
//!
//! ```text
//! cargo bench --bench round_overhead -- 1 2 4 8 16                  # worker counts
//! cargo bench --bench round_overhead -- 1 2 4 8 16 32 64 --oversubscribe
//! ROUNDS=2000 COUNTERS=off cargo bench --bench round_overhead -- 16 256
//! ```
//!
//! Counts above 4 × the usable CPUs need `--oversubscribe` (as on the command line); with more
//! workers than CPUs the barriers yield the CPU, and what is measured is mostly the scheduler.
//! Workers are pinned in the spread order, as `--pin spread` places them. Prints, per count:
//! the median over repetitions of the wall time per round, of the span the workers' own stamps
//! give (latest end − earliest start), and their difference, the overhead, in total and per
//! worker. Environment: `ROUNDS` per repetition (default 500), `REPS` (default 5), `COUNTERS`
//! (`on`, the engine's default, or `off`).
// A benchmark's report is what it prints: its own stdout and stderr, not the monitor's writer.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A benchmark that cannot set itself up has nothing to report: it stops there.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use stream_top::base::median::median;
use stream_top::engine::buffers::Arrays;
use stream_top::engine::events::{Event, RoundRecord};
use stream_top::engine::kernel::{Kernel, Op, Residence, Stores};
use stream_top::engine::plan::{ArraySize, CellId, WorkingSet};
use stream_top::engine::pool::{JobKind, PartitionedArrays, Pass, Pool};
use stream_top::machine::topology::{PinPolicy, Topology};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` adds `--bench`.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let oversubscribe = args.iter().any(|a| a == "--oversubscribe");
    let counts: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse())
        .collect::<Result<_, _>>()
        .map_err(|_| "worker counts are whole numbers, e.g. 1 2 4 8")?;
    let counts = if counts.is_empty() {
        vec![1, 2, 4]
    } else {
        counts
    };
    let rounds = env("ROUNDS", 500).max(1);
    let reps = env("REPS", 5).max(1);
    let counters = std::env::var("COUNTERS").map_or(true, |v| v != "off");

    let topo = Topology::read(Path::new("/"))?;
    let order = topo.cpu_order(PinPolicy::Spread);
    let max = counts.iter().copied().max().unwrap_or(1);
    if max > 4 * order.len() && !oversubscribe {
        return Err(format!(
            "{max} workers is more than 4 × the {} CPUs: add --oversubscribe",
            order.len()
        )
        .into());
    }
    let kernel = Kernel::resolve(None, Stores::Normal).map_err(|e| e.to_string())?;
    let pass = Pass {
        op: Op::Triad,
        function: kernel.pass_function(Op::Triad, Residence::Cache),
        fence: false,
    };
    // One line (16 elements, 128 bytes) per worker.
    let set = WorkingSet {
        name: "128 B/thread".into(),
        level: None,
        size: ArraySize::PerThread(128),
        note: None,
    };
    let cpus: Vec<Option<usize>> = (0..max).map(|i| Some(order[i % order.len()])).collect();
    let mut pool = Pool::new(cpus, counters, Arc::default())?;
    // The records go where the engine sends them: a channel another thread drains.
    let (tx, rx) = crossbeam_channel::unbounded::<Event>();
    let drain = std::thread::spawn(move || rx.iter().count());

    println!(
        "engine overhead per round: {rounds} rounds × {reps} repetitions per count, counters {}, \
         {} CPUs ({})",
        if counters { "on" } else { "off" },
        order.len(),
        topo.model.trim()
    );
    println!(
        "| workers | µs per round | µs span | µs overhead | ns overhead per worker | workers per CPU |"
    );
    println!("|---|---|---|---|---|---|");
    for &n in &counts {
        let layout = set.layout(n);
        let memory = PartitionedArrays::new(Arrays::map(layout.len, false)?, layout)?;
        pool.activate(n);
        pool.run(n, JobKind::Touch, &memory, 0, Pass::NONE, |_| {})?;
        let cell = CellId::new(0, n);
        let (mut walls, mut spans) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let mut span_ns = Vec::with_capacity(rounds);
            let start = Instant::now();
            for _ in 0..rounds {
                pool.run(n, JobKind::Round, &memory, 1, pass, |_| {})?;
                let record = RoundRecord::from_threads(
                    cell,
                    false,
                    1,
                    pool.timings(n, &memory, 1, Op::Triad),
                );
                span_ns.push(record.span_ns as f64);
                tx.send(Event::Round(Box::new(record)))?;
            }
            walls.push(start.elapsed().as_nanos() as f64 / rounds as f64);
            spans.push(median(&span_ns));
        }
        pool.park_all();
        let (wall, span) = (median(&walls), median(&spans));
        let overhead = (wall - span).max(0.0);
        println!(
            "| {n} | {:.1} | {:.1} | {:.1} | {:.0} | {:.1} |",
            wall / 1e3,
            span / 1e3,
            overhead / 1e3,
            overhead / n as f64,
            n as f64 / order.len() as f64
        );
    }
    drop(tx);
    drain.join().map_err(|_| "the draining thread panicked")?;
    Ok(())
}
