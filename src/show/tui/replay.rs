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

use super::app::{Action, App, Header, Replaying, SPEEDS, speed_after};
use super::event_loop::draw;
use super::terminal::{self, require_terminal};
use super::view::ViewState;
use crate::base::error::{Error, Result};
use crate::engine::events::{Command, Event};
use crate::judge::watch::contention::{Change, EpisodeKind, Thresholds};
use crate::judge::watch::log::Kind;
use crate::machine::host::HostSample;
use crate::machine::topology::Topology;
use crate::show::record::format::{Body, Header as Recorded, WatchWire};
use crate::show::record::reader::{self, Damage, Frames};
use crate::show::record::replay::{TimeSpec, session_of};
use crossbeam_channel::{after, never, select};
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers,
};
use signal_hook::consts::{SIGCONT, SIGTSTP};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `[` and `]` step this far (times the count typed first).
const STEP_MS: u64 = 1000;
/// How often the cursor moves on while playing.
const PLAY_TICK: Duration = Duration::from_millis(100);
/// The state is kept every this many frames fed: a jump back starts from the last one kept
/// before it (an hour of the busiest recording is about 270 000 frames, 27 states).
const CHECKPOINT_FRAMES: usize = 10_000;

/// The state after a number of frames, kept for jumps back.
struct Checkpoint {
    fed: usize,
    app: App,
    header: Option<Box<Recorded>>,
}

/// A recording's frames and what the cursor needs of them.
pub struct Recording {
    frames: Frames,
    /// The first recorded session's description.
    first_header: Box<Recorded>,
    /// The first frame's time and the last's, ms since the epoch.
    start_ms: u64,
    end_ms: u64,
    /// The file names, for the header.
    name: String,
    /// The recording holds the watch's changes: its episodes are the recorded ones.
    episodes_recorded: bool,
    /// Where the recorded watch declared each contention episode, ms, in order.
    recorded_episodes: Vec<u64>,
    damage: Damage,
}

impl Recording {
    /// The frames of `files` (sorted), named for the header.
    pub fn read(files: &[PathBuf]) -> Result<Recording> {
        let frames = Frames::open(files)?;
        let name = files
            .iter()
            .map(|f| {
                f.file_name()
                    .map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect::<Vec<_>>()
            .join(", ");
        Recording::of(frames, name)
    }

    /// A recording of these frames (sorted by time): one pass over them finds its first
    /// session, whether the watch's changes were recorded, and the contention episodes they
    /// declared.
    pub fn of(frames: Frames, name: String) -> Result<Recording> {
        let (mut first_header, mut episodes_recorded) = (None, false);
        let mut recorded_episodes = Vec::new();
        for f in frames.iter() {
            match f.body {
                Body::Header(h) if first_header.is_none() => first_header = Some(h),
                Body::Watch(w) => {
                    episodes_recorded = true;
                    if w.change == "began" && is_contention(&w) {
                        recorded_episodes.push(f.t_ms);
                    }
                }
                _ => {}
            }
        }
        let first_header = first_header.ok_or_else(|| {
            Error::usage("replay: no recorded session in the files (no header frame)")
        })?;
        let start_ms = frames.t_ms(0).unwrap_or(0);
        let end_ms = frames.t_ms(frames.len().saturating_sub(1)).unwrap_or(0);
        let damage = frames.damage();
        Ok(Recording {
            frames,
            first_header,
            start_ms,
            end_ms,
            name,
            episodes_recorded,
            recorded_episodes,
            damage,
        })
    }
}

/// The monitor's header lines from a recorded run's description.
fn header_of(h: &Recorded) -> Header {
    let info = &h.frame.info;
    let topo = Topology::from(&info.topology);
    Header {
        machine: format!("{} · {} · {}", info.hostname, topo.model, topo.summary()),
        caches: format!("caches {}", topo.cache_summary()),
        run: format!(
            "kernel {} · {} stores · pin {} · clock {:.2} GHz · duty {:.0} %",
            lower(info.kernel.isa),
            lower(info.kernel.stores),
            lower(info.pin),
            info.clock.ghz,
            info.duty * 100.0
        ),
        vendor: match info.vendor.gbs {
            Some(g) => format!("vendor {g:.1} GB/s ({})", info.vendor.source_text),
            None => format!("vendor figure unknown ({})", info.vendor.source_text),
        },
    }
}

/// A setting's name as the header words it: `avx2`, `spread`.
fn lower(v: impl std::fmt::Debug) -> String {
    format!("{v:?}").to_lowercase()
}

/// What a key did to the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Did {
    Nothing,
    Redraw,
    Quit,
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

impl Replay {
    /// A replay of `rec` with its cursor at the first frame. A recording without the watch's
    /// changes is fed to its end once, to find the episodes the watch judges from its rounds.
    pub fn new(rec: Recording) -> Replay {
        let base = Instant::now();
        let app = app_for(&rec.first_header, base, &rec);
        let mut r = Replay {
            app,
            header: None,
            fed: 0,
            at_ms: rec.start_ms,
            base,
            episodes: Vec::new(),
            speed: SPEEDS[0],
            playing: false,
            count: None,
            typing: None,
            checkpoints: Vec::new(),
            rec,
        };
        r.episodes = if r.rec.episodes_recorded {
            std::mem::take(&mut r.rec.recorded_episodes)
        } else {
            r.judged_episodes()
        };
        r.rebuild();
        r.seek(r.rec.start_ms);
        r
    }

    /// Feeds every frame once, noting where each contention episode the watch opens is
    /// declared; the state is rebuilt after.
    fn judged_episodes(&mut self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut last = None;
        for i in 0..self.rec.frames.len() {
            self.take(i);
            self.fed = i + 1;
            self.keep();
            let newest = self.app.narration.watch.episodes().next_back();
            if let Some(e) = newest
                && Some(e.id) != last
            {
                last = Some(e.id);
                if e.kind == EpisodeKind::Contention
                    && let Some(t) = self.rec.frames.t_ms(i)
                {
                    out.push(t);
                }
            }
        }
        self.fed = self.rec.frames.len();
        out
    }

    /// The instant of the `App`'s clock at a recorded time.
    fn instant(&self, ms: u64) -> Instant {
        instant_of(self.base, self.rec.start_ms, ms)
    }

    /// A fresh `App` for a recorded session, keeping what the keys chose.
    fn fresh_app(&mut self, h: &Recorded) {
        let mut app = app_for(h, self.base, &self.rec);
        // The selection and the overlays stay where they were.
        if self.header.is_some() {
            std::mem::swap(&mut app.view, &mut self.app.view);
            let cols = app.grid.threads.len().saturating_sub(1);
            app.view.sel_col = app.view.sel_col.min(cols);
            app.view.sel_set = app.view.sel_set.min(app.grid.sets.len().saturating_sub(1));
        }
        app.replay = self.app.replay.take();
        self.app = app;
        self.header = Some(Box::new(h.clone()));
    }

    /// Keeps the state every `CHECKPOINT_FRAMES` frames fed, once.
    fn keep(&mut self) {
        let due = self.fed.is_multiple_of(CHECKPOINT_FRAMES);
        if due && self.checkpoints.last().is_none_or(|c| c.fed < self.fed) {
            self.checkpoints.push(Checkpoint {
                fed: self.fed,
                app: self.app.clone(),
                header: self.header.clone(),
            });
        }
    }

    /// The last state kept with no frame after `ms` fed.
    fn kept_before(&self, ms: u64) -> Option<usize> {
        let frames = &self.rec.frames;
        self.checkpoints
            .iter()
            .rposition(|c| frames.t_ms(c.fed - 1).is_some_and(|t| t <= ms))
    }

    /// Goes to a state kept, keeping what the keys chose.
    fn restore_kept(&mut self, i: usize) {
        let c = &self.checkpoints[i];
        let mut app = c.app.clone();
        std::mem::swap(&mut app.view, &mut self.app.view);
        app.replay = self.app.replay.take();
        self.app = app;
        self.header = c.header.clone();
        self.fed = c.fed;
    }

    /// Starts again from before the first frame.
    fn rebuild(&mut self) {
        self.fed = 0;
        let first = self.rec.first_header.clone();
        self.fresh_app(&first);
    }

    /// Feeds frame `i` to the state.
    fn take(&mut self, i: usize) {
        let Some(frame) = self.rec.frames.get(i) else {
            return;
        };
        let at = self.instant(frame.t_ms);
        let app = &mut self.app;
        match frame.body {
            Body::Header(h) => {
                // Each rotated file starts with the header again; a run appended with another
                // grid starts a new state.
                if self
                    .header
                    .as_ref()
                    .is_none_or(|old| old.frame.grid != h.frame.grid)
                {
                    self.fresh_app(&h);
                }
            }
            Body::Round(r) => {
                app.on_event_at(&Event::Round(r), at);
            }
            Body::Host(h) => {
                app.clock.advance(at);
                app.on_host(HostSample::from(&h));
            }
            Body::Event(e) => {
                if let Some(ev) = e.event() {
                    app.on_event_at(&ev, at);
                }
            }
            Body::Watch(w) if self.rec.episodes_recorded => {
                self.restore(&w, at);
            }
            Body::Gap(n) => {
                app.clock.advance(at);
                let text = format!("the recorder dropped {n} frames here (a slow or full disk)");
                app.log_line(Kind::Error, text);
            }
            Body::Watch(_) | Body::Unknown(_) => {}
        }
    }

    /// A recorded change of the watch: the episode as it stood, told in the log as live.
    fn restore(&mut self, w: &WatchWire, at: Instant) {
        let cell = w.cell();
        let (base, start) = (self.base, self.rec.start_ms);
        let ep = w
            .episode
            .as_ref()
            .map(|e| e.episode(cell, &|ms| instant_of(base, start, ms)));
        let id = ep.as_ref().map(|e| e.id);
        let app = &mut self.app;
        app.narration.watch.restore(cell, w.reference(), ep);
        let change = match (w.change.as_str(), id, w.reference()) {
            ("began", Some(id), _) => Change::Began(id),
            ("lasting", Some(id), _) => Change::Lasting(id),
            ("ended", Some(id), _) => Change::Ended(id),
            ("learned", _, Some(r)) => Change::Learned(r),
            _ => return,
        };
        app.clock.advance(at);
        app.contention(cell, change, at);
    }

    /// Moves the cursor to `ms` (clamped to the recording).
    pub fn seek(&mut self, ms: u64) {
        let ms = ms.clamp(self.rec.start_ms, self.rec.end_ms);
        let kept = self.kept_before(ms);
        match kept {
            // Back, or on past a state kept (a second jump through an old recording).
            Some(i) if ms < self.at_ms || self.checkpoints[i].fed > self.fed => {
                self.restore_kept(i)
            }
            None if ms < self.at_ms || self.fed == 0 => self.rebuild(),
            _ if self.fed == 0 => self.rebuild(),
            _ => {}
        }
        while self.rec.frames.t_ms(self.fed).is_some_and(|t| t <= ms) {
            self.take(self.fed);
            self.fed += 1;
            self.keep();
        }
        self.at_ms = ms;
        let now = self.instant(ms);
        self.app.clock.advance(now);
        self.say();
    }

    /// The header's and the footer's view of the cursor.
    fn say(&mut self) {
        self.app.replay = Some(Replaying {
            file: self.rec.name.clone(),
            at: wall(self.at_ms),
            offset: Duration::from_millis(self.at_ms - self.rec.start_ms),
            length: Duration::from_millis(self.rec.end_ms - self.rec.start_ms),
            speed: self.speed,
            playing: self.playing,
            typing: self.typing.clone(),
            episodes_recorded: self.rec.episodes_recorded,
        });
    }

    /// The cursor, ms since the epoch.
    pub fn at_ms(&self) -> u64 {
        self.at_ms
    }

    /// `[`/`]`: `n` steps back or on.
    pub fn step(&mut self, n: i64) {
        let d = n.unsigned_abs() * STEP_MS;
        let to = if n < 0 {
            self.at_ms.saturating_sub(d)
        } else {
            self.at_ms.saturating_add(d)
        };
        self.seek(to);
    }

    /// `}`/`{`: the next or previous contention episode; false (and a notice) when there is
    /// none that way.
    pub fn jump(&mut self, forward: bool) -> bool {
        let to = if forward {
            self.episodes.iter().copied().find(|&t| t > self.at_ms)
        } else {
            self.episodes
                .iter()
                .copied()
                .rev()
                .find(|&t| t < self.at_ms)
        };
        match to {
            Some(t) => {
                self.seek(t);
                true
            }
            None => {
                let which = if forward { "after" } else { "before" };
                self.notice(format!("no contention episode {which} the cursor"));
                false
            }
        }
    }

    /// `g`: a time as `--at` takes it, from the recording's first frame or RFC 3339.
    pub fn goto(&mut self, text: &str) -> Result<()> {
        let t = match TimeSpec::parse(text).map_err(Error::usage)? {
            TimeSpec::Offset(ms) => self.rec.start_ms.saturating_add(ms),
            TimeSpec::Absolute(ms) => ms,
        };
        self.seek(t);
        Ok(())
    }

    /// Space: plays from the cursor, or pauses.
    pub fn toggle_play(&mut self) {
        self.playing = !self.playing && self.at_ms < self.rec.end_ms;
        self.say();
    }

    /// `>`: the next speed.
    pub fn next_speed(&mut self) {
        self.speed = speed_after(self.speed);
        self.say();
    }

    pub fn playing(&self) -> bool {
        self.playing
    }

    /// While playing, `real` time went by: the cursor moves on by it times the speed, and
    /// stops at the end.
    pub fn play(&mut self, real: Duration) {
        if !self.playing {
            return;
        }
        let d = real.as_millis() as u64 * u64::from(self.speed);
        let to = self.at_ms.saturating_add(d);
        if to >= self.rec.end_ms {
            self.playing = false;
        }
        self.seek(to);
    }

    fn notice(&mut self, text: String) {
        self.app.view.guard.notice = Some(text);
    }

    /// A key: the replay's own, a refusal for the live monitor's that steer the engine or
    /// write files, or the live monitor's handling.
    pub fn on_key(&mut self, key: KeyEvent) -> Did {
        if key.kind != KeyEventKind::Press {
            return Did::Nothing;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(text) = &mut self.typing {
            match key.code {
                KeyCode::Enter => {
                    let text = std::mem::take(text);
                    self.typing = None;
                    if let Err(e) = self.goto(&text) {
                        self.notice(format!("g {e}"));
                    }
                }
                KeyCode::Esc => self.typing = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char('c') if ctrl => return Did::Quit,
                KeyCode::Char(c) => text.push(c),
                _ => return Did::Nothing,
            }
            self.say();
            return Did::Redraw;
        }
        // The log view and the help take their keys as live.
        let overlay = self.app.view.log.open || self.app.view.help;
        if !overlay && !ctrl {
            let had_notice = self.app.view.guard.notice.take().is_some();
            let count = self.count.take();
            let n = count.unwrap_or(1).max(1) as i64;
            match key.code {
                KeyCode::Char(d @ '0'..='9') => {
                    let d = u64::from(d as u8 - b'0');
                    self.count = Some(count.unwrap_or(0).saturating_mul(10).saturating_add(d));
                    return Did::Nothing;
                }
                KeyCode::Char('[') => self.step(-n),
                KeyCode::Char(']') => self.step(n),
                KeyCode::Char('{') => {
                    self.jump(false);
                }
                KeyCode::Char('}') => {
                    self.jump(true);
                }
                KeyCode::Char('g') => {
                    self.typing = Some(String::new());
                    self.say();
                }
                KeyCode::Char(' ') => self.toggle_play(),
                KeyCode::Char('>') => self.next_speed(),
                KeyCode::Enter | KeyCode::Char('d' | 'e' | 'r' | 'R' | 'p' | 'P' | 'f') => {
                    self.notice(
                        "a replay shows what was recorded: focus, duty, export, reset, pin and \
                         the engine's keys are the live monitor's"
                            .into(),
                    );
                }
                _ => return self.live_key(key, had_notice),
            }
            return Did::Redraw;
        }
        self.live_key(key, false)
    }

    /// A key the live monitor handles, at the cursor's time; what would reach the engine or
    /// write a file is dropped.
    fn live_key(&mut self, key: KeyEvent, had_notice: bool) -> Did {
        let at = self.instant(self.at_ms);
        match self.app.on_key_at(key, at) {
            Action::Quit => Did::Quit,
            Action::None if had_notice => Did::Redraw,
            Action::None => Did::Nothing,
            Action::Redraw => Did::Redraw,
            // `o` shows the next recorded op: the view changes, the engine it would tell is
            // not there.
            Action::Send(Command::ShowOp(_)) => Did::Redraw,
            Action::Send(_) | Action::Export | Action::Suspend => {
                self.notice("not in a replay: that key is the live monitor's".into());
                Did::Redraw
            }
        }
    }

    /// A terminal event (a key, a click, a resize).
    fn on_input(&mut self, ev: TermEvent, view: &ViewState) -> Did {
        match ev {
            TermEvent::Key(k) => {
                if view.threads_page > 0 {
                    self.app.view.threads_page = view.threads_page;
                }
                if view.log_page > 0 {
                    self.app.view.log.page = view.log_page;
                }
                self.on_key(k)
            }
            TermEvent::Mouse(m) => match self.app.on_mouse(m, &view.clicks) {
                Action::None => Did::Nothing,
                Action::Quit => Did::Quit,
                _ => Did::Redraw,
            },
            TermEvent::Resize(..) => Did::Redraw,
            _ => Did::Nothing,
        }
    }
}

/// The monitor's state before the first frame of a recorded session: its grid, statistics,
/// thresholds and header, its clock at the recording's start.
fn app_for(h: &Recorded, base: Instant, rec: &Recording) -> App {
    let (grid, ctx, groups) = session_of(h);
    let mut app = App::new(grid, h.window, ctx, header_of(h), duty_of(h));
    if let Some((drop, rounds)) = h.contention {
        app.set_thresholds(Thresholds { drop, rounds });
    }
    app.setup.groups = groups;
    app.clock.started = base;
    app.clock.now = base;
    app.clock.replaying(wall(rec.start_ms));
    if rec.episodes_recorded {
        app.narration.watch.follow_recording();
    } else {
        app.log_line(
            Kind::Info,
            "episodes judged again from the rounds: this recording predates recorded episodes \
             (no suspects)"
                .into(),
        );
    }
    let d = &rec.damage;
    if d.torn_bytes > 0 || d.bad_frames > 0 {
        let text = format!(
            "replay: skipped {} damaged frames and a torn tail of {} bytes",
            d.bad_frames, d.torn_bytes
        );
        app.log_line(Kind::Error, text);
    }
    app
}

fn is_contention(w: &WatchWire) -> bool {
    w.episode
        .as_ref()
        .is_some_and(|e| e.kind == EpisodeKind::Contention.name())
}

/// The duty the run had, in percent.
fn duty_of(h: &Recorded) -> u8 {
    (h.frame.info.duty * 100.0).round().clamp(1.0, 100.0) as u8
}

fn instant_of(base: Instant, start_ms: u64, ms: u64) -> Instant {
    match ms.checked_sub(start_ms) {
        Some(d) => base + Duration::from_millis(d),
        None => base
            .checked_sub(Duration::from_millis(start_ms - ms))
            .unwrap_or(base),
    }
}

fn wall(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
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
    use super::*;
    use crate::engine::kernel::Op;
    use crate::engine::plan::CellId;
    use crate::judge::stats::Board;
    use crate::show::record::format::Frame;
    use crate::show::record::format::tests::{header, round};
    use crate::show::record::watch::{Tap, epoch_ms, wall_of};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    const DRAM_1: CellId = CellId {
        op: crate::engine::kernel::Op::Triad,
        set: 1,
        threads: 1,
        rerun: false,
    };

    /// dram ×1, ten rounds a second for 150 s: 10 GB/s, but 5 GB/s from 60 s to 90 s. With
    /// `recorded`, the watch's changes as a recorder's own watch made them (a recording of
    /// today); without, none (an older recording). Returns the first frame's time too.
    fn recording(recorded: bool) -> (Recording, u64) {
        recording_of(recorded, 1500)
    }

    /// The same over `rounds` rounds (the slow spell still from 60 s to 90 s).
    fn recording_of(recorded: bool, rounds: u64) -> (Recording, u64) {
        let (frames, t0) = frames_of(recorded, rounds);
        (held(frames, "night.rec"), t0)
    }

    fn held(frames: Vec<Frame>, name: &str) -> Recording {
        Recording::of(Frames::held(frames), name.into()).unwrap()
    }

    /// The frames of `recording_of`, and the first one's time.
    fn frames_of(recorded: bool, rounds: u64) -> (Vec<Frame>, u64) {
        let base = Instant::now() - Duration::from_secs(1000);
        let t0 = epoch_ms(wall_of(base));
        let mut frames = vec![Frame {
            t_ms: t0,
            body: Body::Header(Box::new(header())),
        }];
        let mut board = Board::new(21);
        let mut tap = Tap::new(Thresholds::default(), 21);
        for i in 1..=rounds {
            let ms = i * 100;
            let gbs = if (600..900).contains(&i) { 5.0 } else { 10.0 };
            let r = round(1, 1, gbs);
            let ev = Event::Round(Box::new(r.clone()));
            frames.push(Frame {
                t_ms: t0 + ms,
                body: Body::Round(Box::new(r)),
            });
            board.record(&ev);
            let changes = tap.on_event(&ev, &board, base + Duration::from_millis(ms));
            for w in changes.into_iter().filter(|_| recorded) {
                frames.push(Frame {
                    t_ms: t0 + ms,
                    body: Body::Watch(Box::new(w)),
                });
            }
        }
        (frames, t0)
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::from(KeyCode::Char(c))
    }

    fn rounds_seen(r: &Replay) -> u64 {
        r.app.board.cell(DRAM_1).map_or(0, |c| c.total_rounds)
    }

    #[test]
    fn the_jump_keys_find_the_episode_recorded_or_judged_again() {
        for recorded in [true, false] {
            let (rec, t0) = recording(recorded);
            let mut r = Replay::new(rec);
            assert_eq!(r.at_ms(), t0);
            assert_eq!(r.rec.episodes_recorded, recorded);
            assert!(!r.app.narration.watch.is_contended(DRAM_1));
            assert_eq!(r.on_key(key('}')), Did::Redraw);
            // The slow round that makes the streak five rounds and a second long (at 61.0 s)
            // declares it.
            assert_eq!(r.at_ms(), t0 + 61_000, "recorded: {recorded}");
            assert!(r.app.narration.watch.is_contended(DRAM_1));
            let ep = r.app.open_episode(DRAM_1).unwrap();
            assert_eq!(ep.rounds, 11);
            // None after it: the cursor stays, and the footer says why.
            r.on_key(key('}'));
            assert_eq!(r.at_ms(), t0 + 61_000);
            assert!(r.app.view.guard.notice.is_some());
            r.seek(t0 + 150_000);
            assert!(!r.app.narration.watch.is_contended(DRAM_1));
            r.on_key(key('{'));
            assert_eq!(r.at_ms(), t0 + 61_000);
            assert!(r.app.narration.watch.is_contended(DRAM_1));
            let said = r
                .app
                .narration
                .log
                .iter()
                .any(|e| e.text.contains("judged again"));
            assert_eq!(said, !recorded);
        }
    }

    #[test]
    fn steps_a_count_and_a_typed_time_move_the_cursor_and_back_rebuilds() {
        let (rec, t0) = recording(true);
        let mut r = Replay::new(rec);
        r.on_key(key(']'));
        assert_eq!(r.at_ms(), t0 + 1000);
        assert_eq!(rounds_seen(&r), 10);
        for c in ['3', '0', ']'] {
            r.on_key(key(c));
        }
        assert_eq!(r.at_ms(), t0 + 31_000);
        assert_eq!(rounds_seen(&r), 310);
        for c in "g80s".chars() {
            r.on_key(key(c));
        }
        assert_eq!(
            r.app.replay.as_ref().unwrap().typing.as_deref(),
            Some("80s")
        );
        r.on_key(KeyEvent::from(KeyCode::Enter));
        assert_eq!(r.at_ms(), t0 + 80_000);
        assert!(r.app.narration.watch.is_contended(DRAM_1));
        // Back: the state is rebuilt to the cursor, with the selection kept.
        r.on_key(key('j'));
        let sel = r.app.view.sel_set;
        r.on_key(key('['));
        assert_eq!(r.at_ms(), t0 + 79_000);
        assert_eq!(rounds_seen(&r), 790);
        assert_eq!(r.app.view.sel_set, sel);
        r.goto("20s").unwrap();
        assert_eq!(rounds_seen(&r), 200);
        assert!(!r.app.narration.watch.is_contended(DRAM_1));
        // Past either end is the end; a time that is not one is said.
        r.goto("1h").unwrap();
        assert_eq!(r.at_ms(), t0 + 150_000);
        for c in "gsoon".chars() {
            r.on_key(key(c));
        }
        r.on_key(KeyEvent::from(KeyCode::Enter));
        let notice = r.app.view.guard.notice.clone().unwrap_or_default();
        assert!(notice.contains("not a time"), "{notice}");
        assert_eq!(r.at_ms(), t0 + 150_000);
    }

    #[test]
    fn play_moves_at_one_ten_and_sixty_times_and_stops_at_the_end() {
        let (rec, t0) = recording(true);
        let mut r = Replay::new(rec);
        r.play(Duration::from_secs(1));
        assert_eq!(r.at_ms(), t0, "paused: nothing moves");
        r.on_key(key(' '));
        assert!(r.playing());
        r.play(Duration::from_secs(1));
        assert_eq!(r.at_ms(), t0 + 1000);
        r.on_key(key('>'));
        r.play(Duration::from_secs(1));
        assert_eq!(r.at_ms(), t0 + 11_000);
        r.on_key(key('>'));
        assert_eq!(r.app.replay.as_ref().unwrap().speed, 60);
        r.play(Duration::from_secs(1));
        assert_eq!(r.at_ms(), t0 + 71_000);
        r.play(Duration::from_secs(10));
        assert_eq!(r.at_ms(), t0 + 150_000);
        assert!(!r.playing(), "the end pauses");
        r.on_key(key('>'));
        assert_eq!(r.app.replay.as_ref().unwrap().speed, 1, "60× wraps to 1×");
        r.on_key(key(' '));
        r.on_key(key(' '));
        assert!(!r.playing(), "at the end space does not play");
    }

    #[test]
    fn o_shows_each_recorded_op_in_turn() {
        let (mut frames, _) = frames_of(true, 50);
        let Body::Header(h) = &mut frames[0].body else {
            unreachable!()
        };
        h.frame.grid.ops = vec!["triad".into(), "copy".into()];
        let mut copy = round(1, 1, 4.0);
        copy.cell.op = Op::Copy;
        // At the recording's last time, so that its end is unchanged.
        frames.push(Frame {
            t_ms: frames.last().unwrap().t_ms,
            body: Body::Round(Box::new(copy)),
        });
        let mut r = Replay::new(held(frames, "night.rec"));
        r.seek(u64::MAX);
        assert_eq!(r.app.view.op, Op::Triad);
        assert_eq!(r.on_key(key('o')), Did::Redraw);
        assert_eq!(r.app.view.op, Op::Copy, "o shows the next op, as live");
        assert!(r.app.view.guard.notice.is_none(), "and is not refused");
        let copy_cell = CellId::of(Op::Copy, 1, 1);
        assert_eq!(r.app.board.cell(copy_cell).map(|c| c.total_rounds), Some(1));
        r.on_key(key('o'));
        assert_eq!(r.app.view.op, Op::Triad, "and back to the first");
    }

    #[test]
    fn the_engines_keys_are_refused_and_q_quits() {
        let (rec, _) = recording(true);
        let mut r = Replay::new(rec);
        let duty = r.app.view.duty;
        for c in ['d', 'r', 'p', 'e'] {
            assert_eq!(r.on_key(key(c)), Did::Redraw);
            let notice = r.app.view.guard.notice.clone().unwrap_or_default();
            assert!(notice.contains("live monitor"), "{c}: {notice}");
        }
        r.on_key(KeyEvent::from(KeyCode::Enter));
        assert_eq!(r.app.view.mode, crate::show::tui::app::Mode::Sweep);
        assert_eq!(r.app.view.duty, duty);
        // The help and the log view open as live.
        r.on_key(key('?'));
        assert!(r.app.view.help);
        r.on_key(key('x'));
        assert!(!r.app.view.help);
        assert_eq!(r.on_key(key('q')), Did::Quit);
    }

    #[test]
    fn a_jump_back_from_a_kept_state_is_the_state_fed_from_the_start() {
        let (rec, t0) = recording_of(true, 25_000);
        let mut r = Replay::new(rec);
        r.seek(u64::MAX);
        assert_eq!(
            r.checkpoints.len(),
            2,
            "kept every {CHECKPOINT_FRAMES} frames"
        );
        r.on_key(key('j'));
        r.goto("30m").unwrap();
        let (again, _) = recording_of(true, 25_000);
        let mut fresh = Replay::new(again);
        fresh.goto("30m").unwrap();
        assert_eq!(r.at_ms(), t0 + 1_800_000);
        assert_eq!(rounds_seen(&r), 18_000);
        assert_eq!(rounds_seen(&r), rounds_seen(&fresh));
        assert_eq!(r.app.figures(DRAM_1), fresh.app.figures(DRAM_1));
        let log = |r: &Replay| r.app.narration.log.iter().count();
        assert_eq!(log(&r), log(&fresh));
        assert_eq!(r.app.view.sel_set, 1, "the selection is kept");
        r.goto("61s").unwrap();
        assert!(r.app.narration.watch.is_contended(DRAM_1));
        assert_eq!(rounds_seen(&r), 610);
    }

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

    /// Not a test but a figure: how long a one-hour recording takes to open, to jump from its
    /// start to its end, and to step back a second from the end (a rebuild from the first
    /// frame). The rate is the most a 20 ms round allows, 50 rounds a second over the live
    /// grid's six cells, a visit event every other round and a host sample a second (a loaded
    /// live monitor here recorded 13.8 rounds a second). Run in a release build:
    /// `cargo test --release --lib one_hour_recording -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn one_hour_recording_figures() {
        use crate::show::record::format::{EventWire, HostWire};
        let base = Instant::now() - Duration::from_secs(4000);
        let t0 = epoch_ms(wall_of(base));
        let mut h = header();
        h.frame.grid.threads = vec![1, 2];
        let mut frames = vec![Frame {
            t_ms: t0,
            body: Body::Header(Box::new(h)),
        }];
        let mut board = Board::new(21);
        let mut tap = Tap::new(Thresholds::default(), 21);
        let mut watch = Vec::new();
        for i in 1..=180_000u64 {
            let ms = i * 20;
            let (set, threads) = ((i / 20 % 2) as usize, (i / 40 % 2 + 1) as usize);
            // A hog for a minute every ten.
            let gbs = if ms / 60_000 % 10 == 4 { 5.0 } else { 10.0 };
            let r = round(set, threads, gbs);
            let ev = Event::Round(Box::new(r.clone()));
            board.record(&ev);
            watch.extend(tap.on_event(&ev, &board, base + Duration::from_millis(ms)));
            frames.push(Frame {
                t_ms: t0 + ms,
                body: Body::Round(Box::new(r)),
            });
            for w in watch.drain(..) {
                frames.push(Frame {
                    t_ms: t0 + ms,
                    body: Body::Watch(Box::new(w)),
                });
            }
            if i.is_multiple_of(2) {
                frames.push(Frame {
                    t_ms: t0 + ms,
                    body: Body::Event(EventWire::Visit {
                        cell: CellId::new(set, threads).into(),
                        passes: 3,
                    }),
                });
            }
            if ms.is_multiple_of(1000) {
                frames.push(Frame {
                    t_ms: t0 + ms,
                    body: Body::Host(HostWire::default()),
                });
            }
        }
        for recorded in [true, false] {
            let frames: Vec<Frame> = frames
                .iter()
                .filter(|f| recorded || !matches!(f.body, Body::Watch(_)))
                .cloned()
                .collect();
            let n = frames.len();
            let rec = held(frames, "hour.rec");
            let t = Instant::now();
            let mut r = Replay::new(rec);
            let open = t.elapsed();
            let t = Instant::now();
            r.seek(u64::MAX);
            let to_end = t.elapsed();
            let t = Instant::now();
            r.step(-1);
            let back = t.elapsed();
            let t = Instant::now();
            r.jump(false);
            let episode = t.elapsed();
            let _ = crate::base::output::stdout(&format!(
                "one hour, {n} frames, {} contention episodes ({}): open {:.3} s, start to end \
                 {:.3} s, a step back from the end {:.3} s, {{ from there {:.3} s\n",
                r.episodes.len(),
                if recorded { "recorded" } else { "judged again" },
                open.as_secs_f64(),
                to_end.as_secs_f64(),
                back.as_secs_f64(),
                episode.as_secs_f64()
            ));
        }
    }
}
