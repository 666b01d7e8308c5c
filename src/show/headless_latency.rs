//! `--headless --measure latency`: idle latency per working set (or, with `--matrix`, per CPU
//! node × memory node), chased on this thread pinned where the triad's first thread runs, then
//! printed through the same writers as the bandwidth table (Markdown, CSV, JSON) and exported
//! as they are. With `--repeat N` every buffer is chased N times, each on a fresh chain, the
//! sets in turn (as the bandwidth grid's repetitions). A signal ends the run between buffers,
//! with the buffers finished. With `--serve` the figures are served until SIGTERM; with
//! `--prom-file` they are written once.

use crate::app::cli::{Config, FormatArg};
use crate::app::session::Session;
use crate::base::error::{Error, Result};
use crate::base::output;
use crate::base::units::format_bytes;
use crate::engine::latency::{
    ChaseJob, ChaseOptions, LatencyRow, chase_job, matrix_jobs, set_jobs,
};
use crate::engine::plan::Grid;
use crate::judge::stats::Board;
use crate::machine::host::HostState;
use crate::machine::topology::PinPolicy;
use crate::platform;
use crate::platform::signals::{Asks, Signals, signal_name};
use crate::show::headless::{Outcome, print_then_save, save, table_text};
use crate::show::report::model::Level;
use crate::show::report::{self, Snapshot};
use crate::show::serve::Exporter;
use crate::show::serve::latency::LatencyFigures;

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
    output::stderr(&format!(
        "stream-top: {} · idle latency, a pointer chase {} · clock {} · {} {}",
        info.topology.model,
        match (config.matrix, cpu) {
            (true, _) => "from each CPU node's first CPU".to_string(),
            (false, Some(c)) => format!("on CPU {c}"),
            (false, None) => "unpinned".to_string(),
        },
        info.clock.line(),
        jobs.len(),
        if jobs.len() == 1 { "buffer" } else { "buffers" }
    ));
    if let Some(line) = &info.numa {
        output::stderr(&format!("stream-top: {line}"));
    }
    let (_signals, signal_rx) = Signals::start()?;
    let opts = ChaseOptions {
        counters: config.counters,
        ..ChaseOptions::default()
    };
    let repeat = config.repeat.max(1) as usize;
    let mut measured: Vec<Vec<LatencyRow>> = vec![Vec::new(); jobs.len()];
    let mut outcome = Outcome::default();
    'reps: for rep in 1..=repeat {
        if repeat > 1 {
            output::stderr(&format!(
                "stream-top: repetition {rep} of {repeat}: every buffer on a fresh chain"
            ));
        }
        for (job, reps) in jobs.iter().zip(&mut measured) {
            if let Ok(Asks::End(sig)) = signal_rx.try_recv().map(Asks::of) {
                output::stderr(&format!("stream-top: {}: stopping", signal_name(sig)));
                outcome.signal = Some(sig);
                break 'reps;
            }
            match chase_job(job, &info.clock, &opts) {
                Ok(row) => {
                    output::stderr(&progress_line(job, &row));
                    reps.push(row);
                }
                Err(e) => {
                    output::stderr(&format!("stream-top: error: {e}"));
                    outcome.errors.push(e.to_string());
                    break 'reps;
                }
            }
        }
    }
    // A repetition cut short leaves some buffers one repetition ahead: every cell keeps as
    // many repetitions as all of them finished, so each compares like with like.
    let finished = measured.iter().map(Vec::len).min().unwrap_or(0).max(1);
    for reps in &mut measured {
        reps.truncate(finished);
    }
    if measured.iter().all(Vec::is_empty) {
        return Err(Error::engine(match outcome.errors.first() {
            Some(e) => format!("latency: nothing measured: {e}"),
            None => "latency: nothing measured (stopped before the first buffer)".into(),
        }));
    }

    let grid = Grid {
        sets: plan.grid.sets.clone(),
        threads: Vec::new(),
        ops: Vec::new(),
    };
    let board = Board::new(1);
    let host_now = HostState::read(&config.root).unwrap_or_else(|_| info.host_start.clone());
    let mut snap = Snapshot::build(
        &info,
        &grid,
        &board,
        &host_now,
        crate::base::time::utc_now_string(),
    );
    // The bandwidth matrix's frame is not this run's: the latency cells carry their pairs.
    snap.matrix = None;
    snap.set_latency(&jobs, &measured);

    if let Some(x) = &mut exporter {
        x.on_latency(figures(&snap));
        if let Err(e) = x.publish(&grid, &board, true) {
            output::stderr(&format!("stream-top: {e}"));
            outcome.errors.push(e.to_string());
        }
        if config.is_service() && outcome.signal.is_none() {
            if let Some(addr) = x.serving_at() {
                output::stderr(&format!(
                    "stream-top: serving http://{addr}/metrics until SIGTERM"
                ));
            }
            while let Ok(sig) = signal_rx.recv() {
                if let Asks::End(sig) = Asks::of(sig) {
                    output::stderr(&format!("stream-top: {}: stopping", signal_name(sig)));
                    outcome.signal = Some(sig);
                    break;
                }
            }
        }
    }
    if config.format == FormatArg::Csv {
        for c in report::latency::latency_cliffs(&snap) {
            output::stderr(&format!("stream-top: cliff: {}", c.line()));
        }
    }
    print_then_save(&table_text(config.format, &snap), || save(config, &snap))?;
    Ok(outcome)
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
