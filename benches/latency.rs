//! Idle latency: stream-top's pointer chase at the working sets the engine sizes, printed as a
//! table, or one chase at a given size for `bench/vs_chase.sh` to compare with `bench/chase.c`.
//!
//! ```text
//! cargo bench --bench latency                       # l1, l2, l3, dram: ns, cycles, TLB cost
//! SETS=l1,dram,4KiB..1GiB cargo bench --bench latency
//! cargo bench --bench latency -- sizes              # "l1 16128" …: the chase's bytes per level
//! cargo bench --bench latency -- chase 16128        # one chase: ns_per_load lines hops_per_run
//! cargo bench --bench latency -- chase 16128 small portable
//! ```
//!
//! Environment: `CPU` (default: the first CPU of the triad's spread order, where the engine
//! pins its first thread), `SETS` (the table's sets as `--sets` takes them, default
//! `l1,l2,l3,dram`), `WALKER` (`asm` or `portable`, default the native one), `SEED`, `RUNS` and
//! `RUN_US` (timed runs and the length of one, default 11 and 1000), `COUNTERS` (0: no
//! thread counters opened; cycles from the clock estimate).
//! Sizes: the chase's buffer for a level is the triad's footprint at one thread
//! (`stream_top::engine::latency::chase_bytes`).
// A benchmark's report is what it prints: its own stdout and stderr, not the monitor's writer.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A benchmark that cannot set itself up has nothing to report: it stops there.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use stream_top::engine::latency::{self, ChaseOptions, Pages, Walker};
use stream_top::engine::plan::{MemoryBudget, SetSpec, WorkingSet, size_sets};
use stream_top::machine::clock::ClockEstimate;
use stream_top::machine::host::HostState;
use stream_top::machine::topology::{PinPolicy, Topology};

fn main() {
    // `cargo bench` passes `--bench`; the rest are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let topo = Topology::read(Path::new("/")).unwrap_or_else(|e| fail(&e.to_string()));
    let cpu = std::env::var("CPU")
        .ok()
        .and_then(|c| c.parse().ok())
        .or_else(|| topo.cpu_order(PinPolicy::Spread).first().copied());
    let mut opts = ChaseOptions::default();
    if let Ok(w) = std::env::var("WALKER") {
        opts.walker = walker(&w);
    }
    if let Some(seed) = std::env::var("SEED").ok().and_then(|s| s.parse().ok()) {
        opts.seed = seed;
    }
    if let Some(us) = std::env::var("RUN_US")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        opts.run_ns = us * 1000;
    }
    if let Some(runs) = std::env::var("RUNS").ok().and_then(|s| s.parse().ok()) {
        opts.runs = runs;
    }
    opts.counters = std::env::var("COUNTERS").map_or(true, |c| c != "0");
    match args.first().map(String::as_str) {
        None => table(&topo, cpu, &opts),
        Some("sizes") => {
            for set in sets(&topo, "l1,l2,l3,dram") {
                println!("{} {}", set.name, latency::chase_bytes(&set));
            }
        }
        Some("chase") => {
            let bytes: u64 = args
                .get(1)
                .and_then(|b| b.parse().ok())
                .unwrap_or_else(|| fail("chase BYTES [huge|small] [asm|portable]"));
            let pages = match args.get(2).map(String::as_str) {
                Some("small") => Pages::Small,
                _ => Pages::Huge,
            };
            if let Some(w) = args.get(3) {
                opts.walker = walker(w);
            }
            // The clock is not needed for ns: a fixed one keeps the chase alone on its CPU.
            let m = latency::measure(bytes, pages, cpu, &ClockEstimate::fixed(1.0), &opts)
                .unwrap_or_else(|e| fail(&e.to_string()));
            println!(
                "{:.3} {} {}",
                m.ns,
                m.bytes / latency::LINE as u64,
                m.hops_per_run
            );
        }
        Some(other) => fail(&format!("unknown mode {other}: sizes | chase BYTES")),
    }
}

fn table(topo: &Topology, cpu: Option<usize>, opts: &ChaseOptions) {
    let sets = sets(
        topo,
        &std::env::var("SETS").unwrap_or_else(|_| "l1,l2,l3,dram".into()),
    );
    let clock = ClockEstimate::measure(cpu);
    println!("# stream-top idle latency");
    println!("clock: {}", clock.line());
    println!(
        "walker: {}; pinned to cpu {}; {} runs of {} µs, median; prefetchers as the machine has them (no MSR changed)",
        opts.walker.name(),
        cpu.map_or("none".into(), |c| c.to_string()),
        opts.runs,
        opts.run_ns / 1_000
    );
    let rows =
        latency::idle_latency(&sets, cpu, &clock, opts).unwrap_or_else(|e| fail(&e.to_string()));
    println!(
        "{:<22} {:>10} {:>8} {:>10} {:>10} {:>9}  cycles",
        "set", "ns/load", "cycles", "huge pages", "4 KiB ns", "TLB ns"
    );
    for r in rows {
        let opt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
        println!(
            "{:<22} {:>10.2} {:>8.1} {:>10} {:>10} {:>9}  {}",
            r.label,
            r.ns,
            r.cycles,
            r.huge_share
                .map_or("?".into(), |s| format!("{:.0} %", s * 100.0)),
            opt(r.ns_small_pages),
            opt(r.tlb_ns),
            r.cycles_source.words()
        );
    }
}

fn sets(topo: &Topology, text: &str) -> Vec<WorkingSet> {
    let specs: Vec<SetSpec> = text
        .split(',')
        .map(|s| SetSpec::parse(s).unwrap_or_else(|e| fail(&e.to_string())))
        .collect();
    let host = HostState::read(Path::new("/")).unwrap_or_else(|e| fail(&e.to_string()));
    let memory = MemoryBudget::new(host.mem_available, None);
    size_sets(&specs, topo, &memory, 1).unwrap_or_else(|e| fail(&e.to_string()))
}

fn walker(name: &str) -> Walker {
    match name {
        "asm" => Walker::Asm,
        "portable" => Walker::Portable,
        _ => fail("WALKER is asm or portable"),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("latency bench: {msg}");
    std::process::exit(2)
}
