//! `--headless --measure latency`: idle latency per working set (or, with `--matrix`, per CPU
//! node × memory node), chased on this thread pinned where the triad's first thread runs, then
//! printed through the same writers as the bandwidth table (Markdown, CSV, JSON) and exported
//! as they are. With `--repeat N` every buffer is chased N times, each on a fresh chain, the
//! sets in turn (as the bandwidth grid's repetitions). A signal ends the run within the step
//! of the chase under way (the chase checks a stop flag between its steps): the buffers
//! finished are printed, marked partial, and the exit code is 128 + the signal's number. With
//! `--serve` the figures are served until SIGTERM; with `--prom-file` they are written once.

use crate::app::cli::{Config, FormatArg};
use crate::app::session::Session;
use crate::base::error::{Error, Result};
use crate::base::output;
use crate::base::units::format_bytes;
use crate::engine::latency::{
    ChaseJob, ChaseOptions, LatencyRow, chase_job, matrix_jobs, set_jobs,
};
use crate::engine::plan::Grid;
use crate::judge::run_info::RunInfo;
use crate::judge::stats::Board;
use crate::machine::topology::PinPolicy;
use crate::platform;
use crate::platform::signals::{Asks, Signals, signal_name};
use crate::show::headless::{Outcome, print_then_save, save, snapshot};
use crate::show::report::model::Level;
use crate::show::report::{self, Snapshot};
use crate::show::serve::Exporter;
use crate::show::serve::latency::LatencyFigures;
use crossbeam_channel::{Receiver, select};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Measures, prints and exports idle latency.
pub fn run(config: &Config, session: Session, mut exporter: Option<Exporter>) -> Result<Outcome> {
    let Session { plan, info } = session;
    // Pinned as the triad's first thread is, unless nothing is pinned (`--pin none`, macOS).
    let cpu = if plan.pin == PinPolicy::None || !platform::HAS_AFFINITY {
        None
    } else {
        plan.cpu_order.first().copied()
    };
    let jobs: Vec<ChaseJob> = if config.matrix {
        matrix_jobs(&plan.numa.matrix, &plan.grid.sets)
    } else {
        set_jobs(&plan.grid.sets, cpu)
    };
    announce(config, &info, cpu, jobs.len());
    let (_signals, signal_rx) = Signals::start()?;
    let mut outcome = Outcome::default();
    let measured = measure_all(config, &info, &jobs, &signal_rx, &mut outcome);
    let chased = measured.iter().filter(|reps| !reps.is_empty()).count();
    if chased == 0 {
        return nothing_measured(outcome);
    }
    let grid = Grid {
        sets: plan.grid.sets.clone(),
        threads: Vec::new(),
        ops: Vec::new(),
    };
    let board = Board::new(1);
    let mut snap = snapshot(config, &info, &grid, &board);
    // The bandwidth matrix's frame is not this run's: the latency cells carry their pairs.
    snap.matrix = None;
    snap.set_latency(&jobs, &measured);
    let repeat = config.repeat.max(1) as usize;
    snap.partial = outcome.signal.map(|sig| match repeat {
        1 => partial_run(sig, chased, jobs.len(), "buffer"),
        _ => partial_run(
            sig,
            measured.iter().map(Vec::len).min().unwrap_or(0),
            repeat,
            "repetition",
        ),
    });
    if let Some(x) = &mut exporter {
        publish(config, x, &snap, &grid, &board, &signal_rx, &mut outcome);
    }
    if config.format == FormatArg::Csv {
        for c in report::latency::latency_cliffs(&snap) {
            output::stderr(&format!("stream-top: cliff: {}", c.line()));
        }
    }
    print_then_save(&report::table_text(config.format, &snap), || {
        save(config, &snap)
    })?;
    Ok(outcome)
}

/// What the run is, said on stderr before it starts: the machine, where the chase runs, the
/// clock, the buffers, and the NUMA line.
fn announce(config: &Config, info: &RunInfo, cpu: Option<usize>, jobs: usize) {
    output::stderr(&format!(
        "stream-top: {} · idle latency, a pointer chase {} · clock {} · {jobs} {}",
        info.topology.model,
        match (config.matrix, cpu) {
            (true, _) => "from each CPU node's first CPU".to_string(),
            (false, Some(c)) => format!("on CPU {c}"),
            (false, None) => "unpinned".to_string(),
        },
        info.clock.line(),
        if jobs == 1 { "buffer" } else { "buffers" }
    ));
    if let Some(line) = &info.numa {
        output::say(line);
    }
}

/// Every buffer chased `--repeat` times, the sets in turn, until done, an error, or a signal
/// (which a watcher beside the chase turns into the chase's stop flag, so a long buffer ends
/// within its current step). Each buffer keeps as many repetitions as all of them finished.
fn measure_all(
    config: &Config,
    info: &RunInfo,
    jobs: &[ChaseJob],
    signal_rx: &Receiver<i32>,
    outcome: &mut Outcome,
) -> Vec<Vec<LatencyRow>> {
    let stop = Arc::new(AtomicBool::new(false));
    let opts = ChaseOptions {
        counters: config.counters,
        tlb: config.tlb,
        stop: Some(stop.clone()),
        ..ChaseOptions::default()
    };
    let repeat = config.repeat.max(1) as usize;
    let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
    let mut measured = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| watch_for_end(signal_rx, &done_rx, &stop));
        let measured = chase_all(jobs, repeat, info, &opts, outcome);
        drop(done_tx);
        outcome.signal = watcher.join().ok().flatten();
        measured
    });
    // A repetition cut short leaves some buffers one repetition ahead: every cell keeps as
    // many repetitions as all of them finished, so each compares like with like.
    let finished = measured.iter().map(Vec::len).min().unwrap_or(0).max(1);
    for reps in &mut measured {
        reps.truncate(finished);
    }
    measured
}

/// The chase itself: each repetition over every buffer, stopping at the first error or when
/// the stop flag ends a chase (that buffer then has nothing of this repetition).
fn chase_all(
    jobs: &[ChaseJob],
    repeat: usize,
    info: &RunInfo,
    opts: &ChaseOptions,
    outcome: &mut Outcome,
) -> Vec<Vec<LatencyRow>> {
    let stopped = || {
        opts.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };
    let mut measured: Vec<Vec<LatencyRow>> = vec![Vec::new(); jobs.len()];
    for rep in 1..=repeat {
        if repeat > 1 {
            output::stderr(&format!(
                "stream-top: repetition {rep} of {repeat}: every buffer on a fresh chain"
            ));
        }
        for (job, reps) in jobs.iter().zip(&mut measured) {
            match chase_job(job, &info.clock, opts) {
                Ok(row) if !stopped() => {
                    output::stderr(&progress_line(job, &row));
                    reps.push(row);
                }
                Ok(_) => return measured,
                Err(_) if stopped() => return measured,
                Err(e) => {
                    output::stderr(&format!("stream-top: error: {e}"));
                    outcome.errors.push(e.to_string());
                    return measured;
                }
            }
        }
    }
    measured
}

/// Beside the chase until `done` closes: the first signal that ends a run sets `stop` and is
/// returned. Ctrl-Z and SIGCONT are let pass, as before.
fn watch_for_end(signal_rx: &Receiver<i32>, done: &Receiver<()>, stop: &AtomicBool) -> Option<i32> {
    loop {
        select! {
            recv(signal_rx) -> sig => match sig.map(Asks::of) {
                Ok(Asks::End(sig)) => {
                    output::stderr(&format!("stream-top: {}: stopping", signal_name(sig)));
                    stop.store(true, Ordering::Relaxed);
                    return Some(sig);
                }
                Ok(_) => {}
                Err(_) => return None,
            },
            recv(done) -> _ => return None,
        }
    }
}

/// Nothing chased: a signal before the first buffer is its exit code, anything else an error.
fn nothing_measured(outcome: Outcome) -> Result<Outcome> {
    if let Some(sig) = outcome.signal {
        output::stderr(&format!(
            "stream-top: {} before the first buffer was chased: nothing to print",
            signal_name(sig)
        ));
        return Ok(outcome);
    }
    Err(Error::engine(match outcome.errors.first() {
        Some(e) => format!("latency: nothing measured: {e}"),
        None => "latency: nothing measured (stopped before the first buffer)".into(),
    }))
}

/// What a latency run a signal ended says, in its snapshot and on stderr: `stopped by
/// SIGTERM after 2 of 5 buffers`.
pub(crate) fn partial_run(sig: i32, done: usize, of: usize, what: &str) -> String {
    let line = format!(
        "stopped by {} after {done} of {of} {what}{}",
        signal_name(sig),
        if of == 1 { "" } else { "s" }
    );
    output::stderr(&format!("stream-top: a partial run: {line}"));
    line
}

/// The figures to the exporter; as a service (and no signal yet), served until one comes.
fn publish(
    config: &Config,
    x: &mut Exporter,
    snap: &Snapshot,
    grid: &Grid,
    board: &Board,
    signal_rx: &Receiver<i32>,
    outcome: &mut Outcome,
) {
    x.on_latency(figures(snap));
    if let Err(e) = x.publish(grid, board, true) {
        output::stderr(&format!("stream-top: {e}"));
        outcome.errors.push(e.to_string());
    }
    if !config.is_service() || outcome.signal.is_some() {
        return;
    }
    if let Some(url) = x.serving_at() {
        output::stderr(&format!("stream-top: serving {url} until SIGTERM"));
    }
    while let Ok(sig) = signal_rx.recv() {
        if let Asks::End(sig) = Asks::of(sig) {
            output::stderr(&format!("stream-top: {}: stopping", signal_name(sig)));
            outcome.signal = Some(sig);
            break;
        }
    }
}

/// `  l1, 15.8 KiB: 1.25 ns per load (4.1 cycles) · 4 KiB pages 1.26 ns`.
fn progress_line(job: &ChaseJob, row: &LatencyRow) -> String {
    let name = match job.level {
        Some(_) => format!("{}, {}", job.set_name, format_bytes(row.bytes)),
        None => job.label.clone(),
    };
    let mut line = format!(
        "  {name}: {:.2} ns per load ({:.1} cycles)",
        row.ns, row.cycles
    );
    if let Some(small) = row.ns_small_pages {
        line.push_str(&format!(" · 4 KiB pages {small:.2} ns"));
    }
    line
}

/// The Prometheus figures of the snapshot's cells, in seconds at rendering: a set by its name,
/// a matrix pair as `cpuN-memM`.
fn figures(snap: &Snapshot) -> Vec<LatencyFigures> {
    snap.latency
        .iter()
        .map(|c| LatencyFigures {
            set: match (c.cpu_node, c.mem_node) {
                (Some(cpu), Some(mem)) => format!("cpu{cpu}-mem{mem}"),
                _ => c.set_name.clone(),
            },
            level: match c.level {
                Some(Level::L1) => "l1",
                Some(Level::L2) => "l2",
                Some(Level::L3) => "l3",
                Some(Level::Dram) => "dram",
                None => "none",
            }
            .to_string(),
            median_ns: c.median_ns,
            min_ns: c.min_ns,
            max_ns: c.max_ns,
        })
        .collect()
}
