//! A replay's start, and feeding recorded frames to the monitor's own state: a fresh `App`
//! for each recorded session, each frame given at its recorded time, the watch's recorded
//! changes restored, or the episodes judged again from the rounds of an older recording.

use super::super::app::{App, SPEEDS};
use super::Replay;
use super::recording::{Recording, duty_of, header_of};
use crate::engine::events::Event;
use crate::judge::watch::contention::{Change, EpisodeKind, Thresholds};
use crate::judge::watch::log::Kind;
use crate::machine::host::HostSample;
use crate::show::record::format::{Body, Header as Recorded, WatchWire};
use crate::show::record::replay::session_of;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
    pub(super) fn judged_episodes(&mut self) -> Vec<u64> {
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
    pub(super) fn instant(&self, ms: u64) -> Instant {
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

    /// Starts again from before the first frame.
    pub(super) fn rebuild(&mut self) {
        self.fed = 0;
        let first = self.rec.first_header.clone();
        self.fresh_app(&first);
    }

    /// Feeds frame `i` to the state.
    pub(super) fn take(&mut self, i: usize) {
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

fn instant_of(base: Instant, start_ms: u64, ms: u64) -> Instant {
    match ms.checked_sub(start_ms) {
        Some(d) => base + Duration::from_millis(d),
        None => base
            .checked_sub(Duration::from_millis(start_ms - ms))
            .unwrap_or(base),
    }
}

pub(super) fn wall(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}
