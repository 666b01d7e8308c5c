//! `stream-top`: parse the command line, run the live monitor, headless or compare, and turn the
//! outcome into an exit code (the error's own: 2 for what the person can fix, 1 for a failed run).

use clap::Parser;
use std::process::ExitCode;
use stream_top::cli::{Args, Config, Mode};
use stream_top::engine::plan::Schedule;
use stream_top::error::{Error, Result};
use stream_top::serve::{self, Exporter};
use stream_top::session::Session;
use stream_top::{headless, report, tui};

/// Timed rounds per visit of a cell in the live sweep (and a service's).
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
    // What --serve and --prom-file need is checked before anything is measured: a port that
    // is taken is one line and exit 2 at once.
    let listener = config.serve.map(serve::bind).transpose()?;
    if let Some(path) = &config.prom_file {
        serve::check_prom_file(path)?;
    }
    match &config.mode {
        Mode::Compare { a, b } => {
            let text = report::compare(a, b).map_err(Error::Usage)?;
            headless::print_stdout(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Mode::Headless => {
            // A service sweeps like the live monitor, until it is stopped.
            let schedule = if config.is_service() {
                Schedule::Sweep {
                    rounds_per_visit: ROUNDS_PER_VISIT,
                }
            } else {
                Schedule::Once {
                    rounds: config.rounds,
                }
            };
            let session = Session::prepare(&config, schedule)?;
            let exporter = Exporter::start(listener, config.prom_file.clone(), &session.info)?;
            let outcome = headless::run(&config, session, exporter)?;
            Ok(if outcome.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Mode::Live => {
            use std::io::IsTerminal;
            // A bad baseline file is the person's to fix (exit 2), found before anything else.
            if let Some(path) = &config.baseline {
                report::Baseline::load(path)
                    .map_err(|e| Error::usage(format!("--baseline: {e}")))?;
            }
            if !std::io::stdout().is_terminal() {
                return Err(Error::usage(
                    "stdout is not a terminal: the live monitor needs one; use --headless for a table",
                ));
            }
            let session = Session::prepare(
                &config,
                Schedule::Sweep {
                    rounds_per_visit: ROUNDS_PER_VISIT,
                },
            )?;
            let exporter = Exporter::start(listener, config.prom_file.clone(), &session.info)?;
            let Session { plan, info } = session;
            tui::run(tui::Launch {
                plan,
                info,
                window: config.rounds as usize,
                export_dir: config.export.clone().unwrap_or_else(|| "results".into()),
                baseline: config.baseline.clone(),
                root: config.root.clone(),
                exporter,
            })
            .map_err(Error::Engine)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
