//! One sweep of the grid, printed as the seed's tables: the method with no terminal UI.
//! Progress goes to stderr, the table to stdout.

use crate::cli::{Config, FormatArg};
use crate::engine::Engine;
use crate::engine::events::{Event, Stage};
use crate::error::{Error, Result};
use crate::machine::host::HostState;
use crate::report::{self, Snapshot};
use crate::session::Session;
use crate::stats::{Board, Context};
use crate::units::format_bytes;
use std::io::{IsTerminal, Write};

/// How a sweep ended, for the exit code.
#[derive(Debug, Default)]
pub struct Outcome {
    pub checksum_failures: usize,
    pub errors: Vec<String>,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.checksum_failures == 0 && self.errors.is_empty()
    }
}

/// Runs the sweep, prints the table in the chosen format, and writes the exports asked for.
pub fn run(config: &Config, session: Session) -> Result<Outcome> {
    let Session { plan, info } = session;
    let grid = plan.grid.clone();
    let ctx = Context::new(info.vendor.gbs, Some(info.clock.ghz));
    eprintln!(
        "stream-top: {} · kernel {} · clock {} · {} cells",
        info.topology.model,
        info.kernel,
        info.clock.line(),
        grid.sweep_once().len()
    );
    let (engine, events) = Engine::start(plan)?;
    let mut board = Board::new(config.rounds as usize);
    let mut outcome = Outcome::default();
    let tty = std::io::stderr().is_terminal();
    for ev in events.iter() {
        board.record(&ev);
        match ev {
            Event::Progress {
                cell,
                stage: Stage::FirstTouch,
                done_bytes,
                total_bytes,
            } if total_bytes >= 64 << 20 => {
                let line = format!(
                    "  first touch of {} × {} threads: {:>3.0} % of {}",
                    grid.sets[cell.set].label(),
                    cell.threads,
                    100.0 * done_bytes as f64 / total_bytes as f64,
                    format_bytes(total_bytes)
                );
                let done = done_bytes >= total_bytes;
                if tty {
                    eprint!("\r{line}");
                    if done {
                        eprintln!();
                    }
                } else if done {
                    eprintln!("{line}");
                }
            }
            Event::Checksum(c) => {
                let label = grid.sets[c.cell.set].label();
                let rerun = if c.cell.rerun { ", run again last" } else { "" };
                let median = board
                    .figures(c.cell, ctx)
                    .map_or("no timed round".into(), |f| {
                        format!("{:.1} GB/s", f.median_gbs)
                    });
                if c.ok {
                    eprintln!("  {label} × {}{rerun}: {median}", c.cell.threads);
                } else {
                    outcome.checksum_failures += 1;
                    eprintln!(
                        "  {label} × {}{rerun}: CHECKSUM MISMATCH: sum of a is {} but must be {}",
                        c.cell.threads, c.actual, c.expected
                    );
                }
            }
            Event::Error(e) => {
                eprintln!("stream-top: error: {e}");
                outcome.errors.push(e);
            }
            Event::Finished => break,
            _ => {}
        }
    }
    engine.stop();

    let host_now = HostState::read(&config.root).unwrap_or_else(|_| info.host_start.clone());
    let snap = Snapshot::build(
        &info,
        &grid,
        &board,
        &host_now,
        report::time::utc_now_string(),
    );
    let text = match config.format {
        FormatArg::Md => report::to_markdown(&snap),
        FormatArg::Csv => report::to_csv(&snap),
        FormatArg::Json => report::to_json(&snap),
    };
    print_stdout(&text)?;
    if let Some(dir) = &config.export {
        for path in report::export(dir, &snap)? {
            eprintln!("stream-top: wrote {}", path.display());
        }
    }
    if let Some(file) = &config.readme {
        report::update_readme(file, &report::to_markdown(&snap))?;
        eprintln!("stream-top: updated {}", file.display());
    }
    Ok(outcome)
}

/// Prints to stdout, with a final newline. A failed write is an error; a closed pipe
/// (`| head`) is one too, which `main` ends quietly.
pub fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| {
            if text.ends_with('\n') {
                Ok(())
            } else {
                out.write_all(b"\n")
            }
        })
        .and_then(|_| out.flush())
        .map_err(|e| Error::stream("stdout", e))
}
