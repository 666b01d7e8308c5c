//! Contention narration: what the watch (`judge::watch`) makes of the rounds, told in the event
//! log. An episode's start waits for a process sample to name its suspects (at most
//! `SUSPECTS_WAIT`), its suspects are ranked again with each sample while it lasts, and its end
//! is logged with the span and the suspects as last ranked. The sentences themselves are
//! `judge::watch::narrative`'s; this file decides when each is said.

use super::app::{App, Mode};
use crate::engine::plan::CellId;
use crate::judge::watch::contention::Change;
use crate::judge::watch::episode::Episode;
use crate::judge::watch::log::Kind;
use crate::judge::watch::narrative::{self, gbs};
use std::time::{Duration, Instant};

/// How long the log waits for a process sample to name suspects before it says that an
/// episode began without them.
const SUSPECTS_WAIT: Duration = Duration::from_millis(2500);

impl App {
    /// Logs what a round did to a cell's contention state.
    pub(super) fn contention(&mut self, cell: CellId, c: Change, at: Instant) {
        // An end is handed over in `episode_ended`, which the keys reach too.
        if !matches!(c, Change::Ended(_))
            && let Some(out) = &mut self.narration.unrecorded
        {
            out.push((cell, c));
        }
        let name = self.cell_name(cell);
        match c {
            Change::Learned(r) => {
                // Said of the focused cell only: in the sweep every cell learns one at the
                // start, and the detail shows it.
                if self.view.mode == Mode::Focus(cell) {
                    let text = format!(
                        "reference for {name}: {} GB/s, the median of its first {} calm rounds",
                        gbs(r.gbs),
                        self.board.window
                    );
                    self.note(Kind::Info, Some(cell), text);
                }
            }
            Change::Began(id) => {
                let Some((started, kind)) = self
                    .narration
                    .watch
                    .episode(id)
                    .map(|e| (e.started, e.kind.evidence()))
                else {
                    return;
                };
                self.narration.suspects.open(cell, started, kind);
                self.rank(cell);
                self.narration.unannounced.push((id, at + SUSPECTS_WAIT));
                self.announce_waiting(at);
            }
            Change::Lasting(id) => {
                self.rank(cell);
                if let Some(ep) = self.narration.watch.episode(id) {
                    let text = narrative::lasting(&name, ep, ep.duration(at));
                    self.note(Kind::Contention, Some(cell), text);
                }
            }
            Change::Ended(id) => self.episode_ended(cell, id, at),
        }
    }

    /// `21:03:07–21:04:12`: when an episode began and ended (or `at`, while it lasts).
    pub(super) fn episode_span(&self, ep: &Episode, at: Instant) -> String {
        format!(
            "{}–{}",
            self.clock.time_of_day(ep.started),
            self.clock.time_of_day(ep.ended.unwrap_or(at))
        )
    }

    /// An episode ended: its start is logged if it was not yet, then its end with its
    /// suspects as last ranked (the samples while its rounds recovered do not count); its
    /// windows go.
    pub(super) fn episode_ended(&mut self, cell: CellId, id: u64, at: Instant) {
        if let Some(out) = &mut self.narration.unrecorded {
            out.push((cell, Change::Ended(id)));
        }
        if self.narration.unannounced.iter().any(|(u, _)| *u == id) {
            self.announce(id);
        }
        let sampled = self.narration.suspects.has_evidence(cell);
        self.narration.suspects.close(cell);
        let Some(ep) = self.narration.watch.episode(id) else {
            return;
        };
        let span = self.episode_span(ep, at);
        let who = narrative::suspects(&ep.suspects, 3, sampled || !ep.suspects.is_empty());
        let text = narrative::ended(&self.cell_name(cell), &span, ep, ep.duration(at), &who);
        self.note(Kind::Contention, Some(cell), text);
    }

    /// A cell learns its reference anew (see `Watch::relearn`); an episode it cuts short is
    /// logged.
    pub(super) fn relearn(&mut self, cell: CellId, forget_pin: bool) {
        let base = self.baseline.medians.get(&cell).copied();
        let now = self.clock.now;
        if let Some(id) = self.narration.watch.relearn(cell, base, forget_pin, now) {
            self.episode_ended(cell, id, now);
        }
    }

    /// Ranks the suspects of a cell's open episode, once there is a sample of it.
    pub(super) fn rank(&mut self, cell: CellId) {
        if !self.narration.suspects.has_evidence(cell) {
            return;
        }
        let placement = self.placement(cell);
        let n = &mut self.narration;
        let ranked = n.suspects.rank(cell, &placement, self.setup.own_pid);
        if let Some(id) = n.watch.open(cell).map(|e| e.id)
            && let Some(ep) = n.watch.episode_mut(id)
        {
            ep.suspects = ranked;
        }
    }

    /// Logs the start of episodes whose suspects are known now, or whose wait is over.
    pub(super) fn announce_waiting(&mut self, at: Instant) {
        let n = &self.narration;
        let due: Vec<u64> = n
            .unannounced
            .iter()
            .filter(|(id, until)| {
                at >= *until
                    || n.watch
                        .episode(*id)
                        .is_some_and(|e| n.suspects.has_evidence(e.cell))
            })
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            self.announce(id);
        }
    }

    /// Logs that an episode began.
    fn announce(&mut self, id: u64) {
        self.narration.unannounced.retain(|(u, _)| *u != id);
        let Some(ep) = self.narration.watch.episode(id) else {
            return;
        };
        let cell = ep.cell;
        let since = self.clock.time_of_day(ep.started);
        let sampled = self.narration.suspects.has_evidence(cell) || !ep.suspects.is_empty();
        let who = narrative::suspects(&ep.suspects, 3, sampled);
        let text = narrative::began(
            &self.cell_name(cell),
            &since,
            ep,
            &who,
            self.live.host.as_ref(),
        );
        self.note(Kind::Contention, Some(cell), text);
    }
}
