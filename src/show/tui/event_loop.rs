//! The event loop. Whatever can wake the monitor (a key, engine events, a host or process
//! sample, a signal) becomes one `Message`; the app takes it in; the pacer (`pacing`) says when
//! to ask the engine for a gap, when to draw and when to let the workers go. The loop is generic
//! over ratatui's `Backend` and reaches the engine and the terminal only through `Ports`, so it
//! runs on `TestBackend` with channels a test feeds.
//!
//! Ctrl-Z (or SIGTSTP) parks the workers first (a round must not span the stop), waiting for
//! the engine's word at most `PARK_WAIT`, then gives the terminal back and stops; after `fg`
//! the screen is taken again, drawn whole, and the workers go on.

use super::app::{Action, App};
use super::pacing::{Pacer, Wait};
use super::ui;
use super::view::ViewState;
use crate::base::error::{Error, Result};
use crate::engine::events::{Command, Event};
use crate::engine::latency::probe::ProbeEvent;
use crate::judge::watch::log::Kind;
use crate::machine::host::HostSample;
use crate::machine::procs::ProcSample;
use crate::show::record::Recorder;
use crate::show::serve::Exporter;
use crossbeam_channel::{Receiver, never, select};
use ratatui::crossterm::event::Event as TermEvent;
use ratatui::{Terminal, backend::Backend};
use signal_hook::consts::{SIGCONT, SIGTSTP};
use std::cell::RefCell;
use std::io;
use std::time::Instant;

/// Engine events taken in one go: rounds may come every few ms, and all of them are drawn once.
const MAX_BATCH: usize = 100_000;
use crate::platform::signals::PARK_WAIT;

/// Where the monitor's input comes from.
pub struct Channels {
    /// Keys, clicks, resizes, from the input thread.
    pub input: Receiver<Result<TermEvent>>,
    /// The engine's events.
    pub events: Receiver<Event>,
    /// Host samples, about once a second.
    pub host: Receiver<Result<HostSample>>,
    /// Samples of the other processes, about once a second.
    pub procs: Receiver<ProcSample>,
    /// SIGTERM, SIGHUP, SIGINT, SIGTSTP, SIGCONT.
    pub signals: Receiver<i32>,
}

/// How the loop acts on the world.
pub struct Ports<'a> {
    /// Sends a command to the engine.
    pub send: &'a dyn Fn(Command),
    /// `e`: writes a snapshot and logs where, or why it could not.
    pub export: &'a dyn Fn(&mut App),
    /// Whether the screen is still ours to draw on: false once a panic hook or a signal handler
    /// has given the terminal back.
    pub screen_is_ours: &'a dyn Fn() -> bool,
    /// Ctrl-Z: gives the terminal back and stops the process; returns after `fg`, the screen
    /// taken again.
    pub suspend: &'a dyn Fn() -> Result<()>,
    /// After SIGCONT: sets the terminal's modes again (the shell may have reset them).
    pub retake: &'a dyn Fn() -> Result<()>,
    /// `--serve`, `--prom-file`: takes in every engine event and host sample the loop receives.
    pub exporter: Option<&'a RefCell<Exporter>>,
    /// `--record FILE`: takes in every engine event and host sample too.
    pub recorder: Option<&'a Recorder>,
}

/// Why the monitor ended, when it was not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `q`, Esc or Ctrl-C.
    Quit,
    /// This signal arrived.
    Signal(i32),
}

/// Whatever woke the loop.
#[derive(Debug)]
enum Message {
    Input(TermEvent),
    /// The terminal could not be read, or the input thread ended.
    InputFailed(Error),
    /// Engine events in order, as many as were waiting.
    Engine(Vec<Event>),
    /// The engine's channel closed.
    EngineGone,
    /// Boxed: a sample is far larger than the other messages.
    Host(Box<HostSample>),
    HostFailed(Error),
    Procs(ProcSample),
    /// The probe's events in order, as many as were waiting.
    Probe(Vec<ProbeEvent>),
    Signal(i32),
    /// Nothing came within the wait.
    Timeout,
}

impl Channels {
    /// Waits for the next message, listening to the engine only when `wait` says so.
    fn next(&mut self, wait: &Wait, probe: &Receiver<ProbeEvent>) -> Message {
        let no_events = never();
        let engine = if wait.listen_to_engine {
            &self.events
        } else {
            &no_events
        };
        select! {
            recv(self.input) -> m => match m {
                Ok(Ok(ev)) => Message::Input(ev),
                Ok(Err(e)) => Message::InputFailed(e),
                Err(_) => Message::InputFailed(Error::Io {
                    what: "read the terminal".into(),
                    source: io::Error::other("the input thread ended"),
                }),
            },
            recv(engine) -> m => match m {
                Ok(ev) => Message::Engine(
                    std::iter::once(ev)
                        .chain(self.events.try_iter().take(MAX_BATCH))
                        .collect(),
                ),
                Err(_) => Message::EngineGone,
            },
            recv(self.host) -> m => match m {
                Ok(Ok(h)) => Message::Host(Box::new(h)),
                Ok(Err(e)) => Message::HostFailed(e),
                Err(_) => {
                    self.host = never();
                    Message::Timeout
                }
            },
            recv(self.procs) -> m => match m {
                Ok(p) => Message::Procs(p),
                Err(_) => {
                    self.procs = never();
                    Message::Timeout
                }
            },
            recv(probe) -> m => match m {
                Ok(ev) => Message::Probe(
                    std::iter::once(ev).chain(probe.try_iter().take(MAX_BATCH)).collect(),
                ),
                // Its thread ended without a word (its queue was full): it failed.
                Err(_) => Message::Probe(vec![ProbeEvent::Failed("its thread ended".into())]),
            },
            recv(self.signals) -> m => match m {
                Ok(sig) => Message::Signal(sig),
                Err(_) => {
                    self.signals = never();
                    Message::Timeout
                }
            },
            default(wait.timeout) => Message::Timeout,
        }
    }
}

/// Runs until quit or a signal (`Ok`), or until the engine ends or the terminal fails (`Err`;
/// for the engine, with its last error).
pub fn run<B: Backend>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    view: &mut ViewState,
    mut channels: Channels,
    ports: &Ports,
) -> Result<Ended> {
    let mut pacer = Pacer::new(Instant::now());
    let mut host_error_logged = false;
    let mut suspending: Option<Suspending> = None;
    // SIGCONTs still to come from our own stops (`fg` after Ctrl-Z): nothing to set up again.
    let mut own_continues = 0u32;
    loop {
        let mut wait = pacer.wait(Instant::now(), !channels.events.is_empty());
        if let Some(s) = &suspending {
            // The engine's word that it parked is what we wait for.
            wait.listen_to_engine = true;
            wait.timeout = wait
                .timeout
                .min(s.until.saturating_duration_since(Instant::now()));
        }
        if wait.request_gap {
            (ports.send)(Command::RequestGap);
        }
        let mut gap = false;
        // The probe's channel while it runs (`P` starts and stops it).
        let probe = app.probe.events().unwrap_or_else(never);
        match channels.next(&wait, &probe) {
            Message::Input(ev) => match on_input(app, terminal, view, ports, ev) {
                Action::Quit => return Ok(Ended::Quit),
                Action::Suspend => suspending = suspending.or_else(|| Suspending::ask(app, ports)),
                // Mouse moves and unbound keys change nothing: no frame for them.
                Action::None => {}
                _ => pacer.answer(),
            },
            Message::InputFailed(e) => return Err(e),
            Message::Engine(events) => gap = on_engine_events(app, ports, &mut pacer, &events),
            Message::EngineGone => {
                if !app.live.finished {
                    app.on_event(&Event::Finished);
                }
            }
            Message::Host(h) => {
                on_host(app, ports, h);
                pacer.changed();
            }
            Message::Procs(p) => {
                app.on_procs(p);
                pacer.changed();
            }
            Message::Probe(events) => {
                on_probe_events(app, ports, events);
                pacer.changed();
            }
            Message::HostFailed(e) => {
                if !host_error_logged {
                    host_error_logged = true;
                    app.log_line(Kind::Error, format!("host panel: {e}"));
                    pacer.changed();
                }
            }
            Message::Signal(SIGTSTP) => {
                suspending = suspending.or_else(|| Suspending::ask(app, ports));
            }
            Message::Signal(SIGCONT) if own_continues > 0 => own_continues -= 1,
            Message::Signal(SIGCONT) => {
                // Stopped by someone else's SIGSTOP: the screen is set up and drawn again.
                (ports.retake)()?;
                terminal.clear().map_err(|e| draw_error(e.to_string()))?;
                pacer.changed();
            }
            Message::Signal(sig) => return Ok(Ended::Signal(sig)),
            Message::Timeout => {}
        }
        if let (Some(r), Some(out)) = (ports.recorder, app.narration.unrecorded.as_mut()) {
            let changes = std::mem::take(out);
            r.changes(&app.narration.watch, changes, &|t| app.clock.wall_at(t));
        }
        if let Some(s) = suspending
            && (app.live.paused || !s.parked_by_us || Instant::now() >= s.until)
        {
            suspending = None;
            own_continues += 1;
            stop_and_continue(app, terminal, ports, s)?;
            pacer.changed();
        }
        if app.live.finished {
            // A worker panicked or the engine gave up: the caller restores the screen, then
            // the message is shown.
            let why = app.live.last_error.clone();
            return Err(Error::engine(
                why.unwrap_or_else(|| "the engine ended unexpectedly".into()),
            ));
        }
        let step = pacer.step(Instant::now(), gap);
        if step.draw && (ports.screen_is_ours)() {
            draw(terminal, app, view)?;
            pacer.drawn(Instant::now());
        }
        if step.gap_done {
            (ports.send)(Command::GapDone);
        }
    }
}

/// The engine's events: each recorded, taken into the board, and heard by the exporter's
/// watch; then the exporter's tick. Whether one of them was the engine's gap between rounds.
fn on_engine_events(app: &mut App, ports: &Ports, pacer: &mut Pacer, events: &[Event]) -> bool {
    let mut gap = false;
    for ev in events {
        if *ev == Event::Gap {
            gap = true;
            continue;
        }
        if let Some(r) = ports.recorder {
            r.event(ev);
        }
        if app.on_event(ev) {
            pacer.changed();
        }
        // After the board took it: the exporter's watch hears its finding.
        if let Some(x) = ports.exporter {
            x.borrow_mut().on_event(ev, &app.board);
        }
    }
    if tick_exporter(app, ports) {
        pacer.changed();
    }
    gap
}

/// The exporter's tick; a failure goes to the log (true then).
fn tick_exporter(app: &mut App, ports: &Ports) -> bool {
    let ticked = ports
        .exporter
        .map(|x| x.borrow_mut().tick(&app.grid, &app.board));
    if let Some(Err(e)) = ticked {
        app.log_line(Kind::Error, e.to_string());
        return true;
    }
    false
}

/// A host sample: to the exporter, the recorder (with its count of dropped frames), the app.
fn on_host(app: &mut App, ports: &Ports, h: Box<HostSample>) {
    if let Some(x) = ports.exporter {
        x.borrow_mut().on_host(&h);
    }
    if let Some(r) = ports.recorder {
        r.host(&h);
        if let Some(x) = ports.exporter {
            x.borrow_mut().record_dropped(r.dropped());
        }
    }
    app.on_host(*h);
}

/// The probe's events: to the exporter and the app, then the exporter's tick.
fn on_probe_events(app: &mut App, ports: &Ports, events: Vec<ProbeEvent>) {
    for ev in events {
        if let Some(x) = ports.exporter {
            x.borrow_mut().on_probe(&ev);
        }
        app.on_probe(ev);
    }
    tick_exporter(app, ports);
}

/// Ctrl-Z once the workers parked (or the wait ran out): the process stops; after `fg`
/// everything is drawn again and the workers go on.
fn stop_and_continue<B: Backend>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    ports: &Ports,
    s: Suspending,
) -> Result<()> {
    (ports.suspend)()?;
    terminal.clear().map_err(|e| draw_error(e.to_string()))?;
    if s.parked_by_us {
        (ports.send)(Command::Resume);
    }
    app.log_line(Kind::Info, "continued after Ctrl-Z".into());
    Ok(())
}

/// Draws a frame.
pub(crate) fn draw<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &App,
    view: &mut ViewState,
) -> Result<()> {
    terminal
        .draw(|f| ui::draw(f, app, view))
        .map(|_| ())
        .map_err(|e| draw_error(e.to_string()))
}

fn draw_error(why: String) -> Error {
    Error::Io {
        what: "draw the screen".into(),
        source: io::Error::other(why),
    }
}

/// A Ctrl-Z under way: the workers are asked to park; the process stops once they have, or
/// at `until`.
#[derive(Debug, Clone, Copy)]
struct Suspending {
    until: Instant,
    /// We paused the engine for the stop (and resume it after); false when it was already
    /// paused by the user.
    parked_by_us: bool,
}

impl Suspending {
    fn ask(app: &App, ports: &Ports) -> Option<Suspending> {
        let parked_by_us = !app.live.paused && !app.view.pause_requested;
        if parked_by_us {
            (ports.send)(Command::Pause);
        }
        Some(Suspending {
            until: Instant::now() + PARK_WAIT,
            parked_by_us,
        })
    }
}

/// Takes a key, a click or a resize, acts on what it asks, and says what it was.
fn on_input<B: Backend>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    view: &ViewState,
    ports: &Ports,
    ev: TermEvent,
) -> Action {
    let action = match ev {
        TermEvent::Key(k) => {
            if view.threads_page > 0 {
                app.view.threads_page = view.threads_page;
            }
            if view.log_page > 0 {
                app.view.log.page = view.log_page;
            }
            app.on_key(k)
        }
        TermEvent::Mouse(m) => app.on_mouse(m, &view.clicks),
        TermEvent::Resize(..) => {
            let _ = terminal.autoresize();
            Action::Redraw
        }
        _ => Action::None,
    };
    match &action {
        Action::Send(cmd) => (ports.send)(cmd.clone()),
        Action::Export => (ports.export)(app),
        Action::Quit | Action::None | Action::Redraw | Action::Suspend => {}
    }
    action
}
