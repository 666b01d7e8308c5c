//! The event loop on ratatui's TestBackend, with channels the test feeds and a fake engine:
//! no terminal, no tmux, no workers. When frames are due and when a gap is asked for is tested
//! purely in `tui::pacing`; here, that the loop follows it.

use crate::support::tui_common::*;
use crossbeam_channel::{Receiver, Sender, unbounded};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::cell::{Cell, RefCell};
use std::time::Duration;
use stream_top::base::error::{Error, Result};
use stream_top::engine::events::{Command, Event};
use stream_top::engine::plan::CellId;
use stream_top::judge::watch::log::Kind;
use stream_top::machine::host::HostSample;
use stream_top::machine::procs::{ProcSample, Process};
use stream_top::show::tui::app::App;
use stream_top::show::tui::event_loop::{self, Channels, Ended, Ports};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

/// How long the fake engine waits for the loop's next command before it gives up.
const DEADLINE: Duration = Duration::from_secs(60);

/// The test's ends of the loop's channels.
struct Feed {
    input: Sender<Result<TermEvent>>,
    events: Sender<Event>,
    host: Sender<Result<HostSample>>,
    procs: Sender<ProcSample>,
    signals: Sender<i32>,
}

fn channels() -> (Feed, Channels) {
    let (input, input_rx) = unbounded();
    let (events, events_rx) = unbounded();
    let (host, host_rx) = unbounded();
    let (procs, procs_rx) = unbounded();
    let (signals, signals_rx) = unbounded();
    (
        Feed {
            input,
            events,
            host,
            procs,
            signals,
        },
        Channels {
            input: input_rx,
            events: events_rx,
            host: host_rx,
            procs: procs_rx,
            signals: signals_rx,
        },
    )
}

fn key(c: char) -> Result<TermEvent> {
    Ok(TermEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, 40)).unwrap()
}

/// The screen `app` makes, drawn afresh.
fn render(app: &App) -> Buffer {
    let mut t = terminal();
    t.draw(|f| ui::draw(f, app, &mut ViewState::default()))
        .unwrap();
    t.backend().buffer().clone()
}

/// Runs the loop with a 120×40 TestBackend; commands sent to the engine go to `commands`,
/// exports are counted in `exports`.
fn run_loop(
    app: &mut App,
    term: &mut Terminal<TestBackend>,
    view: &mut ViewState,
    ch: Channels,
    commands: &dyn Fn(Command),
    exports: &Cell<u32>,
) -> Result<Ended> {
    event_loop::run(
        app,
        term,
        view,
        ch,
        &Ports {
            send: commands,
            export: &|_app: &mut App| exports.set(exports.get() + 1),
            screen_is_ours: &|| true,
            suspend: &|| panic!("nothing here stops the process"),
            retake: &|| Ok(()),
            exporter: None,
            recorder: None,
        },
    )
}

/// Every cell measured five times, as `app_with_figures` has it.
fn rounds() -> Vec<Event> {
    let mut v = Vec::new();
    for _ in 0..5 {
        v.push(round(CellId::new(0, 1), 10.0));
        v.push(round(CellId::new(0, 2), 10.0));
        v.push(round(CellId::new(1, 1), 8.0));
        v.push(round(CellId::new(1, 2), 6.0));
    }
    v
}

/// What the fake engine saw: whether the loop kept the protocol, and any command after it.
type Seen = (std::result::Result<(), String>, Vec<Command>, Feed);

/// The fake engine: expects a request for a gap, answers it, expects the gap to end; then
/// quits the monitor whatever happened, so the loop always returns.
fn engine(feed: Feed, commands: Receiver<Command>) -> Seen {
    let script = || {
        let asked = commands.recv_timeout(DEADLINE).map_err(|e| e.to_string())?;
        if asked != Command::RequestGap {
            return Err(format!("expected RequestGap, got {asked:?}"));
        }
        feed.events.send(Event::Gap).unwrap();
        let done = commands.recv_timeout(DEADLINE).map_err(|e| e.to_string())?;
        if done != Command::GapDone {
            return Err(format!("expected GapDone, got {done:?}"));
        }
        Ok(())
    };
    let outcome = script();
    feed.input.send(key('q')).unwrap();
    // Whatever else the loop sends comes before it reads the `q` and ends.
    let after: Vec<Command> = commands.iter().collect();
    // The senders go back with the outcome: dropped here, the engine's channel would close
    // before the loop read the `q`.
    (outcome, after, feed)
}

#[test]
fn rounds_are_drawn_after_the_engine_grants_a_gap_which_then_ends() {
    let mut app = app();
    let mut term = terminal();
    let mut view = ViewState::default();
    let (feed, ch) = channels();
    // All the rounds wait in the channel before the loop starts: it reads them in one go once
    // its first frame is due.
    for ev in rounds() {
        feed.events.send(ev).unwrap();
    }
    let (cmd_tx, cmd_rx) = unbounded();
    let fake = std::thread::spawn(move || engine(feed, cmd_rx));
    let ended = run_loop(
        &mut app,
        &mut term,
        &mut view,
        ch,
        &|c| cmd_tx.send(c).unwrap(),
        &Cell::new(0),
    );
    // The loop has returned: closing its command channel ends the fake engine's listening.
    drop(cmd_tx);
    let (outcome, after, _feed) = fake.join().unwrap();
    outcome.unwrap();
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(after, vec![], "nothing more to ask once the frame is drawn");
    // The frame on screen is the whole state: every cell's figures, drawn by the loop.
    assert_eq!(term.backend().buffer(), &render(&app));
    let f = app.figures(CellId::new(1, 2)).unwrap();
    assert_eq!(f.rounds, 5);
}

#[test]
fn keys_steer_the_engine_and_export_in_order() {
    let mut app = app();
    let (feed, ch) = channels();
    for k in ['j', 'l', '\n', ' ', 'd', 'e', '?', 'q'] {
        let ev = if k == '\n' {
            Ok(TermEvent::Key(KeyEvent::new(
                KeyCode::Enter,
                KeyModifiers::NONE,
            )))
        } else {
            key(k)
        };
        feed.input.send(ev).unwrap();
    }
    let commands = RefCell::new(Vec::new());
    let exports = Cell::new(0);
    let ended = run_loop(
        &mut app,
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|c| commands.borrow_mut().push(c),
        &exports,
    );
    assert_eq!(ended.unwrap(), Ended::Quit);
    // Only the keys' commands: a request for a gap may slip in if a frame fell due meanwhile.
    let sent: Vec<Command> = commands
        .into_inner()
        .into_iter()
        .filter(|c| *c != Command::RequestGap)
        .collect();
    assert_eq!(
        sent,
        vec![
            Command::Focus(CellId::new(1, 2)),
            Command::Pause,
            Command::SetDuty(50),
        ]
    );
    assert_eq!(exports.get(), 1);
    assert!(app.view.help, "? opened the help before q");
}

#[test]
fn a_click_selects_the_cell_the_last_frame_drew_there() {
    let mut app = app();
    let mut term = terminal();
    let mut view = ViewState::default();
    term.draw(|f| ui::draw(f, &app, &mut view)).unwrap();
    let (feed, ch) = channels();
    // Row 7, x 40 at 120×40: dram × 2 (see the tui_render snapshots).
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 40,
        row: 7,
        modifiers: KeyModifiers::NONE,
    };
    feed.input.send(Ok(TermEvent::Mouse(click))).unwrap();
    feed.input.send(key('q')).unwrap();
    let ended = run_loop(&mut app, &mut term, &mut view, ch, &|_| {}, &Cell::new(0));
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(app.selected(), CellId::new(1, 2));
}

/// PgDn turns the per-thread list by the thread lines the last frame drew: the loop hands
/// the page from the screen to the state before the key.
#[test]
fn page_down_turns_the_thread_list_by_what_the_screen_showed() {
    let mut app = app();
    app.grid.threads = vec![1, 64];
    let cell = CellId::new(0, 64);
    for _ in 0..5 {
        app.on_event(&round(cell, 1.0));
    }
    app.view.sel_col = 1;
    app.view.threads_list = true;
    let mut term = terminal();
    let mut view = ViewState::default();
    term.draw(|f| ui::draw(f, &app, &mut view)).unwrap();
    let page = view.threads_page;
    assert!(page > 1 && page < 64, "{page}");
    let (feed, ch) = channels();
    let page_down = KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE);
    feed.input.send(Ok(TermEvent::Key(page_down))).unwrap();
    feed.input.send(key('q')).unwrap();
    let ended = run_loop(&mut app, &mut term, &mut view, ch, &|_| {}, &Cell::new(0));
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(app.view.threads_top, page);
}

#[test]
fn a_signal_ends_the_loop_and_says_which() {
    let (feed, ch) = channels();
    feed.signals.send(signal_hook::consts::SIGTERM).unwrap();
    let ended = run_loop(
        &mut app(),
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|_| {},
        &Cell::new(0),
    );
    assert_eq!(ended.unwrap(), Ended::Signal(signal_hook::consts::SIGTERM));
}

#[test]
fn the_end_of_the_engine_is_an_engine_error_with_its_last_message() {
    let (feed, ch) = channels();
    feed.events
        .send(Event::Error("worker 1 panicked: boom".into()))
        .unwrap();
    feed.events.send(Event::Finished).unwrap();
    let mut app = app();
    let err = run_loop(
        &mut app,
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|_| {},
        &Cell::new(0),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Engine(_)), "{err:?}");
    assert_eq!(err.to_string(), "worker 1 panicked: boom");
    assert_eq!(err.exit_code(), 1);
}

#[test]
fn an_engine_that_vanishes_without_a_word_is_an_error_too() {
    let (mut feed, ch) = channels();
    // The engine's end of its channel goes away before it said anything.
    feed.events = unbounded().0;
    let err = run_loop(
        &mut app(),
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|_| {},
        &Cell::new(0),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "the engine ended unexpectedly");
}

#[test]
fn a_terminal_that_cannot_be_read_ends_the_loop_with_its_error() {
    let (feed, ch) = channels();
    feed.input
        .send(Err(Error::Io {
            what: "read the terminal".into(),
            source: std::io::Error::other("gone"),
        }))
        .unwrap();
    let err = run_loop(
        &mut app(),
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|_| {},
        &Cell::new(0),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "cannot read the terminal: gone");
}

#[test]
fn host_samples_reach_the_app_and_a_failing_sampler_is_logged_once() {
    let (feed, ch) = channels();
    let sample = HostSample {
        load: [0.52, 0.40, 0.33],
        ..Default::default()
    };
    feed.host.send(Ok(sample)).unwrap();
    feed.procs
        .send(ProcSample {
            elapsed_s: 1.0,
            processes: vec![Process {
                pid: 4242,
                comm: "memhog".into(),
                user: Some("alice".into()),
                cpu_pct: 95.0,
                faults_per_s: 0.0,
                major_faults_per_s: 0.0,
                rss_bytes: None,
                rss_growth_per_s: None,
                cpus: Default::default(),
                stream_top: false,
            }],
            bandwidth: None,
        })
        .unwrap();
    for _ in 0..2 {
        feed.host
            .send(Err(Error::machine("cannot read proc/loadavg")))
            .unwrap();
    }
    // `q` only once the loop has taken every sample: it handles each before its next wait.
    let quitter = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        while !(feed.host.is_empty() && feed.procs.is_empty()) && start.elapsed() < DEADLINE {
            std::thread::sleep(Duration::from_millis(1));
        }
        feed.input.send(key('q')).unwrap();
        feed
    });
    let mut app = app();
    let ended = run_loop(
        &mut app,
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|_| {},
        &Cell::new(0),
    );
    let _feed = quitter.join().unwrap();
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(app.live.host.as_ref().map(|h| h.load[0]), Some(0.52));
    assert_eq!(app.busiest().first().map(|p| p.pid), Some(4242));
    let errors: Vec<&str> = app
        .narration
        .log
        .iter()
        .filter(|e| e.kind == Kind::Error)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(errors, vec!["host panel: cannot read proc/loadavg"]);
}

fn ctrl(c: char) -> Result<TermEvent> {
    Ok(TermEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

/// Ctrl-Z asks the engine to park, stops only once it has (the fake engine says `Paused`),
/// and after `fg` draws everything again and lets the workers go.
#[test]
fn ctrl_z_parks_the_workers_then_stops_and_after_fg_resumes() {
    let mut app = app();
    let (feed, ch) = channels();
    feed.input.send(ctrl('z')).unwrap();
    let (cmd_tx, cmd_rx) = unbounded::<Command>();
    let fake = std::thread::spawn(move || {
        while let Ok(c) = cmd_rx.recv_timeout(DEADLINE) {
            match c {
                Command::Pause => feed.events.send(Event::Paused).unwrap(),
                Command::RequestGap => feed.events.send(Event::Gap).unwrap(),
                Command::Resume => {
                    feed.events.send(Event::Resumed).unwrap();
                    feed.input.send(key('q')).unwrap();
                }
                _ => {}
            }
        }
        feed
    });
    let suspends = Cell::new(0);
    // Each command with the number of stops before it.
    let sent = RefCell::new(Vec::new());
    let ended = event_loop::run(
        &mut app,
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &Ports {
            send: &|c| {
                sent.borrow_mut().push((c.clone(), suspends.get()));
                cmd_tx.send(c).unwrap();
            },
            export: &|_| {},
            screen_is_ours: &|| true,
            suspend: &|| {
                suspends.set(suspends.get() + 1);
                Ok(())
            },
            retake: &|| Ok(()),
            exporter: None,
            recorder: None,
        },
    );
    drop(cmd_tx);
    let _feed = fake.join().unwrap();
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(suspends.get(), 1);
    let steer: Vec<(Command, u32)> = sent
        .into_inner()
        .into_iter()
        .filter(|(c, _)| matches!(c, Command::Pause | Command::Resume))
        .collect();
    assert_eq!(steer, vec![(Command::Pause, 0), (Command::Resume, 1)]);
    assert!(
        app.narration
            .log
            .iter()
            .any(|e| e.text.contains("continued after Ctrl-Z")),
        "{:?}",
        app.narration
            .log
            .iter()
            .map(|e| &e.text)
            .collect::<Vec<_>>()
    );
}

/// SIGTSTP (from `kill -TSTP`) stops the monitor as Ctrl-Z does; workers the user paused stay
/// paused, so nothing is asked of the engine.
#[test]
fn sigtstp_stops_too_and_leaves_a_users_pause_alone() {
    let mut app = app();
    app.on_key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE));
    app.on_event(&Event::Paused);
    let (feed, ch) = channels();
    feed.signals.send(signal_hook::consts::SIGTSTP).unwrap();
    let suspends = Cell::new(0);
    let sent = RefCell::new(Vec::new());
    let ended = event_loop::run(
        &mut app,
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &Ports {
            send: &|c| sent.borrow_mut().push(c),
            export: &|_| {},
            screen_is_ours: &|| true,
            suspend: &|| {
                suspends.set(suspends.get() + 1);
                feed.input.send(key('q')).unwrap();
                Ok(())
            },
            retake: &|| Ok(()),
            exporter: None,
            recorder: None,
        },
    );
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(suspends.get(), 1);
    assert!(
        !sent
            .into_inner()
            .iter()
            .any(|c| matches!(c, Command::Pause | Command::Resume))
    );
}

/// A paste, however long, is one event the monitor ignores: the keys after it work at once.
#[test]
fn a_paste_is_ignored_and_the_next_key_works() {
    let mut app = app();
    let (feed, ch) = channels();
    // `q`, `e`, `d` and spaces: each a command if it were typed.
    let text = "qed ".repeat(2560);
    feed.input.send(Ok(TermEvent::Paste(text))).unwrap();
    feed.input.send(key('?')).unwrap();
    feed.input.send(key('q')).unwrap();
    let commands = RefCell::new(Vec::new());
    let exports = Cell::new(0);
    let ended = run_loop(
        &mut app,
        &mut terminal(),
        &mut ViewState::default(),
        ch,
        &|c| commands.borrow_mut().push(c),
        &exports,
    );
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert!(app.view.help);
    assert_eq!(exports.get(), 0);
    assert!(
        commands
            .into_inner()
            .iter()
            .all(|c| *c == Command::RequestGap)
    );
}
