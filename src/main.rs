//! `stream-top`: parse the command line, run the live monitor, headless or compare, and turn the
//! outcome into an exit code (the error's own: 2 for what the person can fix, 1 for a failed run).

use clap::Parser;
use std::process::ExitCode;
use stream_top::cli::{Args, Config, Mode};
use stream_top::engine::plan::Schedule;
use stream_top::error::{Error, Result};
use stream_top::session::Session;
use stream_top::{headless, report, tui};

/// Timed rounds per visit of a cell in the live sweep.
const ROUNDS_PER_VISIT: u32 = 5;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        // `stream-top … | head`: the reader has all it wanted.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stream-top: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run() -> Result<ExitCode> {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // One line: clap's first line names the flag and the problem.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            return Err(Error::usage(first.trim_start_matches("error: ")));
        }
        Err(e) => {
            // --help and --version.
            headless::print_stdout(&e.render().to_string())?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let config = Config::from_args(args)?;
    match &config.mode {
        Mode::Compare { a, b } => {
            let text = report::compare(a, b)?;
            headless::print_stdout(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Mode::Headless => {
            let session = Session::prepare(
                &config,
                Schedule::Once {
                    rounds: config.rounds,
                },
            )?;
            let outcome = headless::run(&config, session)?;
            Ok(if outcome.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Mode::Live => {
            // A bad baseline file or no terminal is the person's to fix (exit 2), found
            // before anything is measured.
            let baseline = config
                .baseline
                .as_deref()
                .map(|path| report::Baseline::load(path).map_err(|e| e.context("--baseline")))
                .transpose()?;
            tui::require_terminal()?;
            let session = Session::prepare(
                &config,
                Schedule::Sweep {
                    rounds_per_visit: ROUNDS_PER_VISIT,
                },
            )?;
            let Session { plan, info } = session;
            let ended = tui::run(tui::Launch {
                plan,
                info,
                window: config.rounds as usize,
                export_dir: config.export.clone().unwrap_or_else(|| "results".into()),
                baseline,
                root: config.root.clone(),
                thresholds: tui::contention::Thresholds {
                    drop: config.contention_drop,
                    rounds: config.contention_rounds,
                },
            })?;
            // A signal ends the monitor with 128 + its number, as a shell reports it.
            Ok(match ended {
                tui::Ended::Quit => ExitCode::SUCCESS,
                tui::Ended::Signal(sig) => ExitCode::from(128u8.saturating_add(sig as u8)),
            })
        }
    }
}
