//! The live terminal monitor: the engine's rounds as a grid of cells that fill in as they are
//! measured, the selected cell in detail, the host beside it, and keys that steer the engine.
//!
//! `app` holds the state and is fed events, keys and samples; `ui` draws it; `terminal` owns the
//! screen and its restoration; this file is the event loop that ties them to the engine. The
//! loop draws only when something changed, at most ten times a second, and right after a round
//! has ended rather than in the middle of one: while a frame is not yet due it does not even
//! listen to the engine (its events wait in the channel), so the UI thread wakes at most about
//! ten times a second for the engine however fast the rounds come.

pub mod app;
pub mod contention;
pub mod host;
pub mod log;
pub mod terminal;
pub mod ui;

use crate::engine::Engine;
use crate::engine::events::{Command, Event};
use crate::engine::plan::CellId;
use crate::engine::plan::{Plan, Schedule};
use crate::machine::host::{HostSample, HostSampler, HostState};
use crate::report::model::RunInfo;
use crate::report::{self, Baseline, Snapshot};
use crate::serve::Exporter;
use crate::stats::Context;
use app::{Action, App, Header};
use crossbeam_channel::{Receiver, never, select};
use ratatui::crossterm::event::Event as TermEvent;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Shortest time between two frames.
pub const FRAME: Duration = Duration::from_millis(100);
/// How long a pending change waits for a gap between rounds before it is drawn anyway.
pub const GAP_WAIT: Duration = Duration::from_millis(250);
/// A request for a gap that was never answered is made again after this long.
pub const GAP_RETRY: Duration = Duration::from_secs(1);
/// How often the host panel is sampled.
pub const HOST_EVERY: Duration = Duration::from_secs(1);

/// Everything `run` needs, from the command line.
pub struct Launch {
    /// schedule = Schedule::Sweep { rounds_per_visit }
    pub plan: Plan,
    /// Header: machine, kernel, stores, pin, clock, vendor.
    pub info: RunInfo,
    /// `--rounds`: statistics over the last N rounds of each cell.
    pub window: usize,
    /// Where `e` writes (default results/).
    pub export_dir: PathBuf,
    /// `--baseline A.json`
    pub baseline: Option<PathBuf>,
    /// "/" (host sampler root).
    pub root: PathBuf,
    /// `--serve`, `--prom-file`: fed with the events and host samples the loop receives.
    pub exporter: Option<Exporter>,
}

impl Header {
    /// The header lines from the run's description.
    pub fn from_info(info: &RunInfo) -> Header {
        let t = &info.topology;
        let mut vendor = match info.vendor.gbs {
            Some(g) => format!("vendor {g:.1} GB/s ({})", info.vendor.source),
            None => format!("vendor figure unknown ({})", info.vendor.source),
        };
        if let Some(line) = info.container.and_then(|c| c.line()) {
            vendor.push_str(&format!(" · {line}"));
        }
        Header {
            machine: format!("{} · {} · {}", info.hostname, t.model, t.summary()),
            caches: format!("caches {}", t.cache_summary()),
            run: format!(
                "kernel {} · {} stores · pin {} · clock {}",
                info.kernel.isa,
                info.kernel.stores,
                format!("{:?}", info.pin).to_lowercase(),
                info.clock.line()
            ),
            vendor,
        }
    }
}

/// Runs the monitor until `q`, a signal, or the end of the engine.
pub fn run(mut launch: Launch) -> Result<(), String> {
    if !std::io::stdout().is_terminal() {
        return Err(
            "stdout is not a terminal; use --headless to print a table instead of the live monitor"
                .into(),
        );
    }
    debug_assert!(matches!(launch.plan.schedule, Schedule::Sweep { .. }));
    let ctx = Context {
        vendor_gbs: launch.info.vendor.gbs,
        ghz: Some(launch.info.clock.ghz).filter(|g| *g > 0.0),
    };
    let mut app = App::new(
        launch.plan.grid.clone(),
        launch.window,
        ctx,
        Header::from_info(&launch.info),
        launch.plan.duty,
    );
    load_baseline(&mut app, &launch)?;

    let (signals, sig_rx) = terminal::Signals::start()?;
    let mut guard = terminal::Guard::enter()?;
    let (input, input_rx) = terminal::Input::start();
    // Draw once before the engine starts: allocation may take a while.
    let _ = guard.terminal.draw(|f| ui::draw(f, &app));

    let (engine, events) = match Engine::start(launch.plan.clone()) {
        Ok(x) => x,
        Err(e) => {
            drop(guard);
            return Err(e.to_string());
        }
    };
    let (host, host_rx) = host::HostThread::start(host_sampler(&launch), HOST_EVERY);
    let mut exporter = launch.exporter.take();

    let outcome = event_loop(
        &mut app,
        &mut guard,
        &engine,
        &launch,
        &mut exporter,
        Channels {
            input: input_rx,
            events,
            host: host_rx,
            signals: sig_rx,
        },
    );
    // The screen first, so the shell is back at once; then the engine and the threads.
    drop(guard);
    drop(input);
    engine.stop();
    drop(host);
    drop(signals);
    outcome
}

struct Channels {
    input: Receiver<Result<TermEvent, String>>,
    events: Receiver<Event>,
    host: Receiver<Result<HostSample, String>>,
    signals: Receiver<i32>,
}

/// Runs until quit (Ok), a signal (Ok) or the end of the engine (Err with its last error).
///
/// Frames: when one is due (100 ms after the last) and something changed, the loop asks the
/// engine for a gap between rounds (`RequestGap`); the engine parks its workers and answers
/// `Event::Gap`; the loop drains, draws and says `GapDone`. If no gap comes within `GAP_WAIT`
/// (arrays being first touched, a long round), it draws anyway. Until a frame is due the loop
/// does not listen to the engine at all: its events wait in the (unbounded) channel.
fn event_loop(
    app: &mut App,
    guard: &mut terminal::Guard,
    engine: &Engine,
    launch: &Launch,
    exporter: &mut Option<Exporter>,
    mut ch: Channels,
) -> Result<(), String> {
    let no_events: Receiver<Event> = never();
    let mut last_draw = Instant::now();
    let mut dirty = false;
    let mut gap_asked: Option<Instant> = None;
    let mut host_error_logged = false;
    loop {
        let now = Instant::now();
        let due = last_draw + FRAME;
        let frame_open = now >= due;
        if frame_open && gap_asked.is_none() && (dirty || !ch.events.is_empty()) {
            engine.send(Command::RequestGap);
            gap_asked = Some(now);
        }
        let engine_rx = if frame_open || gap_asked.is_some() {
            &ch.events
        } else {
            &no_events
        };
        let timeout = if !frame_open {
            due - now
        } else if let Some(t) = gap_asked.filter(|t| now < *t + GAP_WAIT) {
            t + GAP_WAIT - now
        } else if dirty {
            Duration::ZERO
        } else if let Some(t) = gap_asked {
            // A request that was never answered is asked again after a while.
            (t + GAP_RETRY).saturating_duration_since(now)
        } else {
            Duration::from_secs(3600)
        };
        let mut gap = false;
        select! {
            recv(ch.input) -> m => match m {
                Ok(Ok(ev)) => {
                    match handle_term_event(app, guard, engine, launch, ev)? {
                        Action::Quit => return Ok(()),
                        // Mouse moves and unbound keys change nothing: no frame for them.
                        Action::None => {}
                        _ => dirty = true,
                    }
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err("the input thread ended".into()),
            },
            recv(engine_rx) -> m => match m {
                Ok(ev) => {
                    // Rounds may come every few ms: take all there are, then draw once.
                    for ev in std::iter::once(ev).chain(ch.events.try_iter().take(100_000)) {
                        if ev == Event::Gap {
                            gap = true;
                        } else {
                            if let Some(x) = exporter.as_mut() {
                                x.on_event(&ev);
                            }
                            dirty |= app.on_event(&ev);
                        }
                    }
                    if let Some(Err(e)) = exporter.as_mut().map(|x| x.tick(&app.grid, &app.board)) {
                        app.log_line(log::Kind::Error, e.to_string());
                        dirty = true;
                    }
                }
                Err(_) => {
                    if !app.finished {
                        app.on_event(&Event::Finished);
                    }
                }
            },
            recv(ch.host) -> m => match m {
                Ok(Ok(h)) => {
                    if let Some(x) = exporter.as_mut() {
                        x.on_host(&h);
                    }
                    app.on_host(h);
                    dirty = true;
                }
                Ok(Err(e)) => {
                    if !host_error_logged {
                        host_error_logged = true;
                        app.log_line(log::Kind::Error, format!("host panel: {e}"));
                        dirty = true;
                    }
                }
                Err(_) => ch.host = never(),
            },
            recv(ch.signals) -> _ => return Ok(()),
            default(timeout) => {}
        }
        if app.finished {
            // A worker panicked or the engine gave up: the caller restores the screen, then
            // the message is shown.
            return Err(app
                .last_error
                .clone()
                .unwrap_or_else(|| "the engine ended unexpectedly".into()));
        }
        let now = Instant::now();
        let waited_out = gap_asked.is_some_and(|t| now >= t + GAP_WAIT);
        if gap {
            // Workers are parked: draw now, then let them go.
            if dirty && terminal::active() {
                draw(app, guard)?;
                last_draw = Instant::now();
                dirty = false;
            }
            engine.send(Command::GapDone);
            gap_asked = None;
        } else if dirty && waited_out && now >= last_draw + FRAME && terminal::active() {
            // No gap in sight (first touch, a long round): draw anyway, keep the request.
            draw(app, guard)?;
            last_draw = Instant::now();
            dirty = false;
        }
        if gap_asked.is_some_and(|t| now >= t + GAP_RETRY) {
            gap_asked = None;
        }
    }
}

fn draw(app: &mut App, guard: &mut terminal::Guard) -> Result<(), String> {
    guard
        .terminal
        .draw(|f| ui::draw(f, app))
        .map(|_| ())
        .map_err(|e| format!("cannot draw: {e}"))
}

/// Handles a key, a click or a resize, and says what it did.
fn handle_term_event(
    app: &mut App,
    guard: &mut terminal::Guard,
    engine: &Engine,
    launch: &Launch,
    ev: TermEvent,
) -> Result<Action, String> {
    let action = match ev {
        TermEvent::Key(k) => app.on_key(k),
        TermEvent::Mouse(m) => {
            let size = guard
                .terminal
                .size()
                .map_err(|e| format!("cannot read the terminal size: {e}"))?;
            app.on_mouse(m, ratatui::layout::Rect::new(0, 0, size.width, size.height))
        }
        TermEvent::Resize(..) => {
            let _ = guard.terminal.autoresize();
            Action::Redraw
        }
        _ => Action::None,
    };
    match &action {
        Action::Send(cmd) => engine.send(cmd.clone()),
        Action::Export => {
            let r = export(app, launch);
            app.exported(r);
        }
        Action::Quit | Action::None | Action::Redraw => {}
    }
    Ok(action)
}

/// Writes a snapshot of the table (Markdown, CSV, JSON, SVG) with the report module.
fn export(app: &App, launch: &Launch) -> Result<Vec<PathBuf>, String> {
    let host_now = HostState::read(&launch.root).map_err(|e| e.to_string())?;
    let snap = Snapshot::build(
        &launch.info,
        &app.grid,
        &app.board,
        &host_now,
        report::utc_now_string(),
    );
    report::export(&launch.export_dir, &snap)
}

/// Reads `--baseline` and keeps its median for every cell of our grid that it has.
fn load_baseline(app: &mut App, launch: &Launch) -> Result<(), String> {
    let Some(path) = &launch.baseline else {
        return Ok(());
    };
    let base = Baseline::load(path).map_err(|e| format!("--baseline: {e}"))?;
    for (si, set) in app.grid.sets.iter().enumerate() {
        for &t in &app.grid.threads {
            if let Some(m) = base.median_for(&set.label(), t) {
                app.baseline.insert(CellId::new(si, t), m);
            }
        }
    }
    app.baseline_name = Some(
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
    );
    if app.baseline.is_empty() {
        let text = format!(
            "--baseline {}: none of its cells is in this grid",
            path.display()
        );
        app.log_line(log::Kind::Error, text);
    }
    Ok(())
}

fn host_sampler(launch: &Launch) -> host::Sampler {
    let mut sampler = HostSampler::new(&launch.root, std::process::id());
    Box::new(move || Ok(sampler.sample()))
}
