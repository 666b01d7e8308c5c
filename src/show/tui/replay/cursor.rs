//! Moving the cursor: to a time (the frames fed on, or the state rebuilt), by steps, to the
//! next or previous contention episode, to a typed time, and on while playing at a speed; and
//! the header's and the footer's view of where it is.

use super::super::app::{Replaying, speed_after};
use super::Replay;
use super::feed::wall;
use crate::base::error::{Error, Result};
use crate::show::record::replay::TimeSpec;
use std::time::Duration;

/// `[` and `]` step this far (times the count typed first).
const STEP_MS: u64 = 1000;

impl Replay {
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
    pub(super) fn say(&mut self) {
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
}

#[cfg(test)]
mod tests {
    use super::super::Did;
    use super::super::fixtures::*;
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent};

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
}
