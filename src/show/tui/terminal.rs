//! The terminal: entering and leaving raw mode and the alternate screen (with mouse reporting
//! and bracketed paste), and making sure it is left whatever happens — quit, error, a panic in
//! any thread (the panic hook restores first), SIGTERM, SIGINT, SIGHUP and SIGQUIT (a signal
//! thread turns them into a message for the event loop, which ends; the exit code is 128 + the
//! signal's number). Ctrl-Z leaves it and stops the process as a shell job
//! expects; `fg` enters it again (`suspend`). Input is read on its own thread into a channel,
//! so the event loop can select over it.

use crate::base::error::{Error, Result};
use crossbeam_channel::{Receiver, Sender};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use std::io::{self, Stdout, stdout};
use std::sync::Arc;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Whether the terminal is in our hands (raw mode, alternate screen).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Whether the screen is still ours: false once a panic hook or a signal has restored it, and
/// then nothing may be drawn any more.
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Leaves raw mode and the alternate screen, shows the cursor. Safe to call many times and
/// from any thread; only the first call after `Guard::enter` does anything.
fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            stdout(),
            DisableBracketedPaste,
            DisableMouseCapture,
            LeaveAlternateScreen,
            cursor::Show
        );
        let _ = disable_raw_mode();
    }
}

/// Raw mode, the alternate screen, mouse reporting and bracketed paste (a paste arrives as one
/// event, never as keys), the cursor hidden.
fn take_screen() -> Result<()> {
    enable_raw_mode().map_err(|e| terminal_error("put the terminal in raw mode", e))?;
    ACTIVE.store(true, Ordering::SeqCst);
    set_modes().inspect_err(|_| restore())
}

/// The alternate screen, mouse reporting, bracketed paste, the cursor hidden.
fn set_modes() -> Result<()> {
    execute!(
        stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste,
        cursor::Hide
    )
    .map_err(|e| terminal_error("set up the terminal", e))
}

/// Ctrl-Z: gives the terminal back and stops the process (SIGSTOP, as the default action of
/// SIGTSTP would); returns once the shell continues it (`fg`, SIGCONT), with the screen ours
/// again. The caller redraws everything.
pub(crate) fn suspend() -> Result<()> {
    restore();
    crate::platform::signals::stop_process().map_err(|e| terminal_error("stop the process", e))?;
    take_screen()
}

/// After a SIGCONT that did not come through `suspend` (someone sent SIGSTOP): the shell may
/// have reset the terminal while we were stopped, so every mode is set again, without leaving
/// the alternate screen.
pub(crate) fn retake() -> Result<()> {
    if !active() {
        return Ok(());
    }
    // crossterm sets raw mode only once until it is left: leave it, then set it again.
    let _ = disable_raw_mode();
    enable_raw_mode().map_err(|e| terminal_error("put the terminal in raw mode", e))?;
    set_modes()
}

/// Owns the terminal while the monitor runs; restores it when dropped.
pub(crate) struct Guard {
    pub(crate) terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Guard {
    pub(crate) fn enter() -> Result<Guard> {
        install_panic_hook();
        take_screen()?;
        match Terminal::new(CrosstermBackend::new(stdout())) {
            Ok(terminal) => Ok(Guard { terminal }),
            Err(e) => {
                restore();
                Err(terminal_error("set up the terminal", e))
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

fn terminal_error(what: &str, source: io::Error) -> Error {
    Error::Io {
        what: what.into(),
        source,
    }
}

/// A panic anywhere restores the terminal before the message is printed, so the message is
/// readable and the shell usable.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// Reads terminal input on its own thread.
pub(crate) struct Input {
    stop: Arc<AtomicBool>,
    /// Held only to be dropped (detached), never joined.
    thread: Option<JoinHandle<()>>,
}

impl Input {
    pub fn start() -> (Input, Receiver<Result<event::Event>>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("input".into())
            .spawn(move || read_input(tx, flag))
            .ok();
        (Input { stop, thread }, rx)
    }
}

fn read_input(tx: Sender<Result<event::Event>>, stop: Arc<AtomicBool>) {
    // Poll with a timeout so the thread notices `stop` and ends; a key costs no more than
    // a blocking read.
    while !stop.load(Ordering::Relaxed) {
        match event::poll(Duration::from_millis(250)) {
            Ok(false) => {}
            Ok(true) => match event::read() {
                Ok(ev) => {
                    if tx.send(Ok(ev)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(terminal_error("read the terminal", e)));
                    return;
                }
            },
            Err(e) => {
                let _ = tx.send(Err(terminal_error("read the terminal", e)));
                return;
            }
        }
    }
}

impl Drop for Input {
    /// Asks the thread to end but does not wait for it: once the terminal has hung up,
    /// crossterm's poll can keep returning at once without an event, and a join there would
    /// hold the whole exit hostage. The process ends right after anyway.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take();
    }
}

/// The monitor needs a terminal on stdout: checked before anything is measured.
pub fn require_terminal() -> Result<()> {
    if crate::base::output::stdout_is_terminal() {
        Ok(())
    } else {
        Err(Error::usage(
            "stdout is not a terminal: the live monitor needs one; use --headless for a table",
        ))
    }
}
