//! `stream-top`: parse the command line, check what it names, run the live monitor, headless or
//! compare, and turn the outcome into an exit code (the error's own: 2 for what the person can
//! fix, 1 for a failed run).

use std::process::ExitCode;
use stream_top::app::cli::{Config, Measure, Mode, Parsed};
use stream_top::app::session::Session;
use stream_top::base::error::{Error, Result};
use stream_top::base::output;
use stream_top::engine::plan::Schedule;
use stream_top::judge::watch;
use stream_top::platform;
use stream_top::show::serve::Exporter;
use stream_top::show::{
    check, fleet, headless, headless_latency, loaded_latency, preflight, record, report, tui,
};

/// Timed rounds per visit of a cell in the live sweep.
const ROUNDS_PER_VISIT: u32 = 5;
/// A service's visit: one timed round (after the warm-up), its arrays let go afterwards, so
/// that at a low duty every cell still comes round again soon (docs/operations.md, "Serving to
/// Prometheus", has the measured ages and the cost to a co-runner).
const SERVICE_ROUNDS_PER_VISIT: u32 = 1;
/// The longest a service's cycle over the grid may take: its idle yields to this, so no
/// cell's figure is older than about this plus one visit (the stated bound is 5 minutes).
const SERVICE_CYCLE_S: u32 = 240;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        // `stream-top … | head`: the reader has all it wanted.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            output::stderr(&format!("stream-top: {e}"));
            ExitCode::from(e.exit_code())
        }
    }
}

fn run() -> Result<ExitCode> {
    // A calibrate child ends with its parent, wherever the kernel does not see to it.
    platform::watch_parent();
    // `>&-`: the runtime put /dev/null on the closed stdout; a result written there is lost,
    // which is a failed write (exit 1), not a success.
    if let Some(e) = platform::stdout_closed_at_start() {
        output::stdout_closed(&e);
    }
    let config = match Config::parse_from(std::env::args_os())? {
        Parsed::Run(config) => *config,
        Parsed::Print(text) => {
            // --help and --version.
            output::stdout(&text)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    // Every file and address the person named, checked before anything is measured (exit 2
    // at once): a port that is taken is one line.
    let checked = preflight::check(&config)?;
    match &config.mode {
        Mode::Compare { a, b, every } => run_compare(&config, a, b, *every),
        Mode::Replay {
            files,
            headless,
            at,
            window,
            format,
        } => {
            if *headless {
                record::run_replay(files, at.as_deref(), window.as_ref(), *format)
            } else if window.is_some() {
                Err(Error::usage(
                    "replay: --from and --to print a window's table: add --headless",
                ))
            } else {
                Ok(ExitCode::from(tui::replay::run(files, at.as_deref())?))
            }
        }
        Mode::Fleet(args) => Ok(ExitCode::from(fleet::run(args)?)),
        Mode::Check(args) => Ok(ExitCode::from(check::run(args, &config.root)?)),
        Mode::Headless if config.measure == Measure::LoadedLatency => {
            let session = Session::prepare(&config, once(&config))?;
            Ok(ExitCode::from(loaded_latency::run(&config, session)?))
        }
        Mode::Headless | Mode::Calibrate => run_headless(&config, checked),
        Mode::Live if config.measure == Measure::LoadedLatency => run_live_loaded(&config),
        Mode::Live => run_live(&config, checked),
    }
}

/// One pass over the grid, `--rounds` timed rounds a cell.
fn once(config: &Config) -> Schedule {
    Schedule::Once {
        rounds: config.rounds,
    }
}

/// `compare`: the table on stdout; a regression past `--fail-if-slower` is exit 1, as a
/// failed run, and a gate the evidence cannot decide is exit 3.
fn run_compare(
    config: &Config,
    a: &[std::path::PathBuf],
    b: &[std::path::PathBuf],
    every: bool,
) -> Result<ExitCode> {
    let gate = report::compare::Gate {
        percent: config.fail_if_slower,
        allow_single_run: config.allow_single_run,
    };
    let cmp = report::compare::compare_sides(a, b, every, gate)?;
    output::stdout(&cmp.text)?;
    if cmp.slower.is_empty() {
        if cmp.undecided.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        output::stderr(&format!(
            "stream-top: compare: the gate is undecided: {}",
            cmp.undecided.join("; ")
        ));
        return Ok(ExitCode::from(report::compare::UNDECIDED_EXIT));
    }
    output::stderr(&format!(
        "stream-top: compare: slower by more than {} %: {}",
        config.fail_if_slower.unwrap_or(0.0),
        cmp.slower.join("; ")
    ));
    Ok(ExitCode::from(1))
}

/// `--headless` (one sweep, or a service's sweeps until stopped) and `calibrate`.
fn run_headless(config: &Config, checked: preflight::Checked) -> Result<ExitCode> {
    // A service sweeps until it is stopped, holding no arrays between visits.
    let schedule = if config.is_service() {
        Schedule::Service {
            rounds_per_visit: SERVICE_ROUNDS_PER_VISIT,
            cycle_s: SERVICE_CYCLE_S,
        }
    } else {
        once(config)
    };
    let mut session = Session::prepare(config, schedule)?;
    session.reuse_choices(checked.choices.as_ref())?;
    let mut exporter = Exporter::start(checked.listener, config.prom_file.clone(), &session.info)?;
    if let Some(x) = &mut exporter {
        x.watch_contention(thresholds(config), config.rounds as usize);
        if config.is_service() {
            x.log_sweeps();
        }
    }
    let outcome = if config.measure == Measure::Latency {
        headless_latency::run(config, session, exporter)?
    } else {
        headless::run(config, session, exporter)?
    };
    Ok(ExitCode::from(outcome.exit_code()))
}

/// The live loaded-latency curve.
fn run_live_loaded(config: &Config) -> Result<ExitCode> {
    tui::require_terminal()?;
    let session = Session::prepare(config, once(config))?;
    let plan = loaded_latency::load_plan(&session.plan);
    let line = loaded_latency::plan_line(&plan, config);
    let ended = tui::loaded::run(plan, loaded_latency::options(config), line)?;
    Ok(exit_code(ended))
}

/// The live monitor.
fn run_live(config: &Config, checked: preflight::Checked) -> Result<ExitCode> {
    // No terminal is the person's to fix (exit 2), found before anything is measured.
    tui::require_terminal()?;
    let mut session = Session::prepare(
        config,
        Schedule::Sweep {
            rounds_per_visit: ROUNDS_PER_VISIT,
        },
    )?;
    session.reuse_choices(checked.choices.as_ref())?;
    let mut exporter = Exporter::start(checked.listener, config.prom_file.clone(), &session.info)?;
    if let Some(x) = &mut exporter {
        x.watch_contention(thresholds(config), config.rounds as usize);
    }
    let Session { plan, info } = session;
    let recorder = record::start(config, &info, &plan.grid)?;
    let ended = tui::run(tui::Launch {
        plan,
        info,
        window: config.rounds as usize,
        export_dir: config
            .export
            .clone()
            .unwrap_or_else(|| preflight::DEFAULT_EXPORT_DIR.into()),
        baseline: checked.baseline,
        root: config.root.clone(),
        thresholds: thresholds(config),
        exporter,
        recorder,
        probe: config.probe,
        probe_cpu: config.probe_cpu,
    })?;
    Ok(exit_code(ended))
}

/// How the monitor ended: a signal ends it with 128 + its number, as a shell reports it.
fn exit_code(ended: tui::Ended) -> ExitCode {
    match ended {
        tui::Ended::Quit => ExitCode::SUCCESS,
        tui::Ended::Signal(sig) => ExitCode::from(platform::signals::exit_code(sig)),
    }
}

/// When a cell counts as contended: the live monitor's and the exporter's watch alike.
fn thresholds(config: &Config) -> watch::contention::Thresholds {
    watch::contention::Thresholds {
        drop: config.contention_drop,
        rounds: config.contention_rounds,
    }
}
