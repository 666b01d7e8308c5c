//! `stream-top`: parse the command line, pick the live monitor, headless or compare, and map
//! errors to exit codes (2: something the person asked for is wrong; 1: the run failed).

use clap::Parser;
use std::process::ExitCode;
use stream_top::cli::{Args, Config, Mode};
use stream_top::engine::plan::Schedule;
use stream_top::session::{Session, SetupError};
use stream_top::{headless, report, tui};

/// Timed rounds per visit of a cell in the live sweep.
const ROUNDS_PER_VISIT: u32 = 5;

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // One line: clap's first line names the flag and the problem.
            let text = e.render().to_string();
            eprintln!(
                "stream-top: {}",
                text.lines()
                    .next()
                    .unwrap_or("bad arguments")
                    .trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let config = match Config::from_args(args) {
        Ok(c) => c,
        Err(e) => return fail(2, &e),
    };
    match run(&config) {
        Ok(code) => code,
        Err((code, e)) => fail(code, &e),
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("stream-top: {message}");
    ExitCode::from(code)
}

fn run(config: &Config) -> Result<ExitCode, (u8, String)> {
    let prepare = |schedule| {
        Session::prepare(config, schedule).map_err(|e| match e {
            SetupError::Usage(m) => (2, m),
            SetupError::Machine(m) => (1, m),
        })
    };
    match &config.mode {
        Mode::Compare { a, b } => {
            let text = report::compare(a, b).map_err(|e| (2, e))?;
            headless::print_stdout(&text);
            Ok(ExitCode::SUCCESS)
        }
        Mode::Headless => {
            let session = prepare(Schedule::Once {
                rounds: config.rounds,
            })?;
            let outcome = headless::run(config, session).map_err(|e| (1, e))?;
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
                report::Baseline::load(path).map_err(|e| (2, format!("--baseline: {e}")))?;
            }
            if !std::io::stdout().is_terminal() {
                return Err((
                    2,
                    "stdout is not a terminal: the live monitor needs one; use --headless for a table".into(),
                ));
            }
            let session = prepare(Schedule::Sweep {
                rounds_per_visit: ROUNDS_PER_VISIT,
            })?;
            let Session { plan, info } = session;
            tui::run(tui::Launch {
                plan,
                info,
                window: config.rounds as usize,
                export_dir: config.export.clone().unwrap_or_else(|| "results".into()),
                baseline: config.baseline.clone(),
                root: config.root.clone(),
            })
            .map_err(|e| (e.exit_code(), e.to_string()))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
