//! `stream-top replay FILE…`: the live monitor's screens on a recording, at a time cursor.
//!
//! The state at the cursor is the live monitor's own `App`, fed the recorded frames up to it
//! with their recorded times (rounds, host samples, events, the watch's changes), so every
//! panel draws as it drew live. Forward the frames are fed on; backward the `App` is rebuilt
//! from the first frame (what the keys chose, the view, is kept). A recording that holds the
//! watch's changes shows its episodes (the ones the monitor had, with their suspects); an older
//! one has them judged again from the rounds, as the monitor would have, and says so.
//!
//! Keys: `[`/`]` step a second (a count typed first steps that many: `30]`), `{`/`}` jump to
//! the previous/next contention episode (where the watch declared it), `g` takes a time as
//! `--at` does, space plays and pauses, `>` cycles 1×/10×/60×; the live monitor's keys that
//! steer the engine or write files are refused in the footer; the others act as live.
//!
//! The pieces: `recording` reads the files and what the cursor needs of them; `feed` starts
//! a replay and feeds frames to the monitor's state; `kept` keeps states on the way for jumps
//! back; `cursor` moves the cursor (steps, episodes, typed times, play and speed); `keys` the
//! keys. This file holds the replay's state and its terminal loop; the pieces import it, and
//! it imports none of them but `recording`, so that its files import one another without a
//! circle.

mod cursor;
mod feed;
#[cfg(test)]
mod fixtures;
mod kept;
mod keys;
mod recording;

pub use recording::Recording;

use super::app::App;
use super::event_loop::draw;
use super::terminal::{self, require_terminal};
use super::view::ViewState;
use crate::base::error::{Error, Result};
use crate::show::record::format::Header as Recorded;
use crate::show::record::reader;
use crossbeam_channel::{after, never, select};
use ratatui::crossterm::event::Event as TermEvent;
use signal_hook::consts::{SIGCONT, SIGTSTP};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How often the cursor moves on while playing.
const PLAY_TICK: Duration = Duration::from_millis(100);

/// What a key did to the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Did {
    Nothing,
    Redraw,
    Quit,
}

/// The state after a number of frames, kept for jumps back.
struct Checkpoint {
    fed: usize,
    app: App,
    header: Option<Box<Recorded>>,
}

/// A recording at a cursor: the monitor's state there, and what the keys chose.
pub struct Replay {
    rec: Recording,
    /// The state at the cursor.
    app: App,
    /// The header the `App` was built from (a later one with another grid starts a new one).
    header: Option<Box<Recorded>>,
    /// Frames fed to `app` so far.
    fed: usize,
    /// The cursor, ms since the epoch.
    at_ms: u64,
    /// The `App`'s clock at the recording's first frame.
    base: Instant,
    /// Where the watch declared each contention episode, ms, in order.
    episodes: Vec<u64>,
    /// × the recording's own pace: one of `SPEEDS`.
    speed: u32,
    playing: bool,
    /// A count typed before `[` or `]`.
    count: Option<u64>,
    /// A time being typed after `g`.
    typing: Option<String>,
    /// States kept on the way forward, in order.
    checkpoints: Vec<Checkpoint>,
}

/// `stream-top replay FILE…` on a terminal: the screens until `q`, Esc, Ctrl-C or a signal;
/// `at` (`--at`) places the cursor first. The exit code: 1 when frames were lost in the middle
/// of a file (what was skipped is said on stderr once the terminal is restored), else 0.
pub fn run(files: &[PathBuf], at: Option<&str>) -> Result<u8> {
    // The files and the cursor first: a name mistyped is the error to hear of, whatever
    // stdout is.
    let mut replay = Replay::new(Recording::read(files)?);
    if let Some(t) = at {
        replay
            .goto(t)
            .map_err(|e| Error::usage(format!("--at {e}")))?;
    }
    require_terminal()?;
    let (signals, sig_rx) = crate::platform::Signals::start()?;
    let mut guard = terminal::Guard::enter()?;
    let (input, input_rx) = terminal::Input::start();
    let mut view = ViewState {
        monochrome: super::ui::monochrome_wanted(
            std::env::var_os("TERM").as_deref(),
            std::env::var_os("NO_COLOR").as_deref(),
        ),
        ..ViewState::default()
    };
    let mut last_tick = Instant::now();
    let outcome = loop {
        if let Err(e) = draw(&mut guard.terminal, &replay.app, &mut view) {
            break Err(e);
        }
        let tick = if replay.playing() {
            after(PLAY_TICK.saturating_sub(last_tick.elapsed()))
        } else {
            never()
        };
        select! {
            recv(input_rx) -> m => match m {
                Ok(Ok(ev)) => {
                    if let TermEvent::Resize(..) = ev {
                        let _ = guard.terminal.autoresize();
                    }
                    let was_playing = replay.playing();
                    if replay.on_input(ev, &view) == Did::Quit {
                        break Ok(());
                    }
                    if !was_playing {
                        last_tick = Instant::now();
                    }
                }
                Ok(Err(e)) => break Err(e),
                Err(_) => break Ok(()),
            },
            recv(sig_rx) -> s => match s {
                Ok(SIGTSTP | SIGCONT) => {}
                _ => break Ok(()),
            },
            recv(tick) -> _ => {
                let now = Instant::now();
                replay.play(now - last_tick);
                last_tick = now;
            }
        }
    };
    drop(guard);
    drop(input);
    drop(signals);
    outcome?;
    let damage = &replay.rec.damage;
    reader::tell_losses(damage, replay.rec.frames.dropped());
    Ok(u8::from(damage.lost_frames()))
}

#[cfg(test)]
mod tests {
    use super::feed::wall;
    use super::fixtures::{key, recording};
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen(r: &Replay, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        let mut view = ViewState::default();
        draw(&mut t, &r.app, &mut view).unwrap();
        let buf = t.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_header_says_replay_the_file_the_cursor_and_the_speed() {
        let (rec, t0) = recording(true);
        let mut r = Replay::new(rec);
        r.seek(t0 + 64_000);
        r.on_key(key('>'));
        r.on_key(key('j'));
        let at = (r.app.clock.time_of)(wall(t0 + 64_000));
        for (w, h) in [(80, 24), (160, 50)] {
            let s = screen(&r, w, h);
            let first = s.lines().next().unwrap();
            assert!(first.contains("REPLAY"), "{w}×{h}:\n{s}");
            assert!(first.contains("night.rec"), "{first}");
            assert!(
                first.contains(&format!("{at} (+1m04s of 2m30s)")),
                "{first}"
            );
            assert!(first.contains("paused, 10×"), "{first}");
            let last = s.lines().last().unwrap();
            assert!(last.contains("step") && last.contains("quit"), "{last}");
            assert!(!last.contains("duty"), "{last}");
        }
        let wide = screen(&r, 160, 50);
        assert!(wide.contains("episodes recorded"), "{wide}");
        assert!(
            wide.contains("CONTENDED"),
            "the detail shows the episode:\n{wide}"
        );
    }
}
