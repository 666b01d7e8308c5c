//! Contention as a state: each cell has a reference, its undisturbed level, and is contended
//! while its rounds stay well below it; a run of disturbed rounds is a state of its own.
//!
//! The reference is the median of the cell's first window of calm timed rounds after focus or
//! reset (learned), the `--baseline` run's median for the cell, or the median the user pinned
//! with a key. A round the board judged disturbed (a worker switched out for more than
//! [`OFF_CPU_SHARE`](crate::engine::events::OFF_CPU_SHARE) of its span, a span or a thread far
//! off the window's medians: `judge::disturbance`) never teaches it: a hog that was there first
//! does not become the reference. Until a calm window exists the cell has no reference ("no
//! calm reference yet"), never a calm one. The reference never follows the rounds afterwards
//! either: a lasting hog does not become the new normal.
//!
//! A cell enters contention after `rounds` rounds in a row more than `drop` below the reference
//! and leaves it once the median of its last `rounds` rounds is back within half of `drop` (the
//! hysteresis: a cell hovering at the threshold does not flap, and on a noisy machine one slow
//! round does not keep an episode open, nor one fast round end it). After it the cell is
//! recovering until the median of its window (the median the screen shows) is back within that
//! band too. A cell is disturbed, with or without a reference, after `rounds` disturbed rounds
//! in a row, and leaves it once most of its last `rounds` rounds are calm; contention, the
//! stronger evidence, takes over from it. Each spell is an `Episode` with its kind, start, end,
//! depth and, filled in by the app, its suspects.

use super::episode::Seen;
pub use super::episode::{
    Change, Disturbed, Episode, EpisodeKind, OffCpu, Reference, Source, State, Thresholds,
};
use crate::base::median::median;
use crate::engine::plan::CellId;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Episodes kept, oldest dropped first.
const EPISODES_KEPT: usize = 100;
/// While an episode lasts, the log hears of it this often.
pub(crate) const NOTE_EVERY: Duration = Duration::from_secs(60);
/// A streak of slow or disturbed rounds opens an episode once it has lasted this long too
/// (and `rounds` rounds): the process sampling interval.
const OPEN_AFTER: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Default)]
struct CellWatch {
    reference: Option<Reference>,
    /// The first window's calm rates, while the reference is learned.
    learning: Vec<f64>,
    /// Rounds since focus or reset while there is no reference, and the disturbed ones.
    seen: usize,
    disturbed: usize,
    /// The last disturbed round's worker most off its CPU.
    last_off: Option<OffCpu>,
    /// The slow rounds in a row so far; the disturbed rounds in a row.
    slow: Vec<Seen>,
    troubled: Vec<Seen>,
    /// The last `rounds` rounds, oldest first.
    last: VecDeque<Seen>,
    /// The rates of the last window of rounds (`--rounds`): the median the screen shows.
    window: VecDeque<f64>,
    open: Option<u64>,
    /// A contention episode ended and the window's median is not back within the band.
    recovering: bool,
}

/// Every cell's reference and contention state, and the episodes so far.
#[derive(Debug, Clone)]
pub struct Watch {
    pub(crate) thresholds: Thresholds,
    /// Rounds in the first window (`--rounds`).
    window: usize,
    cells: HashMap<CellId, CellWatch>,
    episodes: VecDeque<Episode>,
    next_id: u64,
    /// How long a streak must last to open an episode (`OPEN_AFTER` unless told).
    open_after: Duration,
    /// A replay of a recording that holds the watch's changes: the rounds keep the levels and
    /// windows the screens show, but no episode opens or ends here (`restore` puts the
    /// recorded ones in).
    follows_recording: bool,
}

fn push_bounded<T>(q: &mut VecDeque<T>, v: T, cap: usize) {
    while q.len() >= cap.max(1) {
        q.pop_front();
    }
    q.push_back(v);
}

/// A streak of `n` rounds or more that has lasted `open_after`: long enough to open an
/// episode. Fast rounds (a cache cell's, milliseconds apart) make `n` of them in a blink: a
/// blip that short is no episode, and no process sample could say who caused it.
fn long_enough(streak: &[Seen], n: usize, open_after: Duration) -> bool {
    match (streak.first(), streak.last()) {
        (Some(first), Some(last)) => {
            streak.len() >= n && last.at.saturating_duration_since(first.at) >= open_after
        }
        _ => false,
    }
}

fn find(episodes: &mut VecDeque<Episode>, id: u64) -> Option<&mut Episode> {
    episodes.iter_mut().rev().find(|e| e.id == id)
}

/// Adds a round to an open episode, and ends it when `over`: as of the first of the last
/// rounds that `ok` says recovered, taking back the rounds from there on.
fn carry_on(
    ep: &mut Episode,
    last: &VecDeque<Seen>,
    seen: &Seen,
    over: bool,
    ok: impl Fn(&Seen) -> bool,
) -> Option<Change> {
    ep.add(seen);
    if over {
        let first = last.iter().position(ok).unwrap_or(0);
        ep.ended = Some(last.get(first).map_or(seen.at, |s| s.at));
        for s in last.iter().skip(first) {
            ep.take_back(s);
        }
        return Some(Change::Ended(ep.id));
    }
    if seen.at.saturating_duration_since(ep.noted) >= NOTE_EVERY {
        ep.noted = seen.at;
        return Some(Change::Lasting(ep.id));
    }
    None
}

impl Watch {
    pub fn new(thresholds: Thresholds, window: usize) -> Watch {
        Watch {
            thresholds,
            window: window.max(1),
            cells: HashMap::new(),
            episodes: VecDeque::new(),
            next_id: 1,
            open_after: OPEN_AFTER,
            follows_recording: false,
        }
    }

    /// A watch whose streaks open an episode after `open_after` (and `rounds` rounds): for
    /// samples that are evidence enough on their own.
    pub(crate) fn opening_after(mut self, open_after: Duration) -> Watch {
        self.open_after = open_after;
        self
    }

    /// Opens an episode of `kind` on `cell` with the rounds of the streak that began it.
    fn begin(
        &mut self,
        cell: CellId,
        kind: EpisodeKind,
        reference: Option<Reference>,
        streak: &[Seen],
        at: Instant,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut ep = Episode {
            id,
            cell,
            kind,
            started: streak.first().map_or(at, |s| s.at),
            ended: None,
            cut_short: false,
            superseded: false,
            reference,
            rounds: 0,
            disturbed_rounds: 0,
            sum_gbs: 0.0,
            worst_gbs: f64::INFINITY,
            worst_off_cpu: None,
            noted: at,
            suspects: Vec::new(),
        };
        for s in streak {
            ep.add(s);
        }
        if self.episodes.len() >= EPISODES_KEPT {
            self.episodes.pop_front();
        }
        self.episodes.push_back(ep);
        id
    }

    /// Takes a timed round's rate at `at`, with the board's finding: `disturbed` or not.
    pub fn round(
        &mut self,
        cell: CellId,
        gbs: f64,
        disturbed: Option<Disturbed>,
        at: Instant,
    ) -> Vec<Change> {
        let seen = Seen { at, gbs, disturbed };
        let mut out = Vec::new();
        // Judged against the reference it had before this round (none on the round that
        // teaches it).
        let judged = self.observe(cell, seen, &mut out);
        if self.follows_recording {
            self.recovered(cell);
            return out;
        }
        self.extend_streaks(cell, seen, judged);
        let open = self.cells.get(&cell).and_then(|w| w.open);
        let kind = open.and_then(|id| self.episode(id)).map(|e| e.kind);
        match (open, kind) {
            (Some(id), Some(EpisodeKind::Contention)) => {
                self.go_on_contended(cell, id, seen, &mut out);
            }
            (Some(id), Some(EpisodeKind::Disturbance)) => {
                if self.go_on_disturbed(cell, id, seen, judged, &mut out) {
                    return out;
                }
            }
            _ => self.maybe_begin(cell, at, &mut out),
        }
        self.recovered(cell);
        out
    }

    /// Keeps the round in the cell's last rounds and window, and learns the reference from
    /// it while there is none. Returns the reference the round is judged against.
    fn observe(&mut self, cell: CellId, seen: Seen, out: &mut Vec<Change>) -> Option<Reference> {
        let n = self.thresholds.rounds.max(1) as usize;
        let window = self.window;
        let w = self.cells.entry(cell).or_default();
        push_bounded(&mut w.last, seen, n);
        push_bounded(&mut w.window, seen.gbs, window);
        if let Some(d) = seen.disturbed {
            w.last_off = d.off_cpu;
        }
        let judged = w.reference;
        if judged.is_none() {
            w.seen += 1;
            if seen.disturbed.is_some() {
                w.disturbed += 1;
            } else {
                w.learning.push(seen.gbs);
                if w.learning.len() >= window {
                    let r = Reference {
                        gbs: median(&w.learning),
                        source: Source::Learned,
                    };
                    w.learning.clear();
                    w.reference = Some(r);
                    out.push(Change::Learned(r));
                }
            }
        }
        judged
    }

    /// Adds the round to the cell's streak of slow rounds and of disturbed ones, or breaks
    /// them.
    fn extend_streaks(&mut self, cell: CellId, seen: Seen, judged: Option<Reference>) {
        let t = self.thresholds;
        let Some(w) = self.cells.get_mut(&cell) else {
            return;
        };
        if judged.is_some_and(|r| seen.gbs < t.slow_below(r.gbs)) {
            w.slow.push(seen);
        } else {
            w.slow.clear();
        }
        if seen.disturbed.is_some() {
            w.troubled.push(seen);
        } else {
            w.troubled.clear();
        }
    }

    /// A round of an open contention episode: it goes on, or ends once the median of the
    /// last rounds is back within half the drop.
    fn go_on_contended(&mut self, cell: CellId, id: u64, seen: Seen, out: &mut Vec<Change>) {
        let t = self.thresholds;
        let n = t.rounds.max(1) as usize;
        let Some(w) = self.cells.get_mut(&cell) else {
            return;
        };
        w.slow.clear();
        w.troubled.clear();
        let Some(reference) = w.reference else {
            return;
        };
        let recovered_at = t.recovered_at(reference.gbs);
        let level = median(&w.last.iter().map(|s| s.gbs).collect::<Vec<_>>());
        let over = w.last.len() >= n && level >= recovered_at;
        if over {
            w.open = None;
            w.recovering = true;
        }
        let last = w.last.clone();
        if let Some(ep) = find(&mut self.episodes, id) {
            out.extend(carry_on(ep, &last, &seen, over, |s| s.gbs >= recovered_at));
        }
    }

    /// A round of an open disturbance: contention takes over after a long enough slow
    /// streak (returns true), it ends once most of the last rounds are calm, or it goes on.
    fn go_on_disturbed(
        &mut self,
        cell: CellId,
        id: u64,
        seen: Seen,
        judged: Option<Reference>,
        out: &mut Vec<Change>,
    ) -> bool {
        let n = self.thresholds.rounds.max(1) as usize;
        let Some(w) = self.cells.get_mut(&cell) else {
            return false;
        };
        w.troubled.clear();
        if long_enough(&w.slow, n, self.open_after) {
            // Contention takes over: the disturbance ends where the slow streak began, and
            // gives back the rounds from there on.
            let slow = std::mem::take(&mut w.slow);
            w.open = None;
            if let Some(ep) = find(&mut self.episodes, id) {
                let started = ep.started;
                for s in slow.iter().filter(|s| s.at >= started && s.at < seen.at) {
                    ep.take_back(s);
                }
                ep.ended = Some(slow[0].at.max(started));
                ep.superseded = true;
                out.push(Change::Ended(id));
            }
            let new = self.begin(cell, EpisodeKind::Contention, judged, &slow, seen.at);
            if let Some(w) = self.cells.get_mut(&cell) {
                w.open = Some(new);
            }
            out.push(Change::Began(new));
            return true;
        }
        let calm = w.last.iter().filter(|s| s.disturbed.is_none()).count();
        let over = w.last.len() >= n && 2 * calm > n;
        if over {
            w.open = None;
        }
        let last = w.last.clone();
        if let Some(ep) = find(&mut self.episodes, id) {
            out.extend(carry_on(ep, &last, &seen, over, |s| s.disturbed.is_none()));
        }
        false
    }

    /// With no episode open, a long enough streak of slow rounds opens a contention episode,
    /// else one of disturbed rounds a disturbance.
    fn maybe_begin(&mut self, cell: CellId, at: Instant, out: &mut Vec<Change>) {
        let n = self.thresholds.rounds.max(1) as usize;
        let Some(w) = self.cells.get_mut(&cell) else {
            return;
        };
        w.open = None;
        let (kind, streak) = if long_enough(&w.slow, n, self.open_after) {
            w.troubled.clear();
            (EpisodeKind::Contention, std::mem::take(&mut w.slow))
        } else if long_enough(&w.troubled, n, self.open_after) {
            (EpisodeKind::Disturbance, std::mem::take(&mut w.troubled))
        } else {
            return;
        };
        if kind == EpisodeKind::Contention {
            w.recovering = false;
        }
        let reference = w.reference;
        let id = self.begin(cell, kind, reference, &streak, at);
        if let Some(w) = self.cells.get_mut(&cell) {
            w.open = Some(id);
        }
        out.push(Change::Began(id));
    }

    /// A cell recovering from contention whose window's median is back within the band is
    /// not recovering any more.
    fn recovered(&mut self, cell: CellId) {
        let t = self.thresholds;
        if let Some(w) = self.cells.get_mut(&cell)
            && w.recovering
            && let Some(r) = w.reference
            && median(&w.window.iter().copied().collect::<Vec<_>>()) >= t.recovered_at(r.gbs)
        {
            w.recovering = false;
        }
    }

    /// From now on the episodes are a recording's (`restore`), not judged from the rounds.
    pub(crate) fn follow_recording(&mut self) {
        self.follows_recording = true;
    }

    /// A recorded change on `cell`: its reference after it, and the episode as it stood then
    /// (open until it has an end).
    pub(crate) fn restore(
        &mut self,
        cell: CellId,
        reference: Option<Reference>,
        episode: Option<Episode>,
    ) {
        let w = self.cells.entry(cell).or_default();
        if reference.is_some() {
            w.reference = reference;
            w.learning.clear();
        }
        let Some(ep) = episode else {
            return;
        };
        if ep.ended.is_none() {
            w.open = Some(ep.id);
            w.recovering = false;
        } else if w.open == Some(ep.id) {
            w.open = None;
            w.recovering = ep.kind == EpisodeKind::Contention && !ep.cut_short;
        }
        match find(&mut self.episodes, ep.id) {
            Some(kept) => *kept = ep,
            None => push_bounded(&mut self.episodes, ep, EPISODES_KEPT),
        }
    }

    /// Gives a cell this reference (a baseline's or a pinned one); a contention episode
    /// against the old one ends (a disturbance goes on: no reference judged it). Returns the
    /// id of the episode it ended.
    pub(crate) fn set_reference(&mut self, cell: CellId, r: Reference, at: Instant) -> Option<u64> {
        let contended = self.open(cell).map(|e| e.kind) == Some(EpisodeKind::Contention);
        let ended = if contended {
            self.cut_short(cell, at)
        } else {
            None
        };
        let w = self.cells.entry(cell).or_default();
        w.reference = Some(r);
        w.learning.clear();
        w.slow.clear();
        w.recovering = false;
        if w.open.is_none() {
            w.last.clear();
            w.troubled.clear();
        }
        ended
    }

    /// Forgets a cell's learned reference, so that the next window teaches a new one (focus).
    /// With `forget_pin` (`r`, `R`) a pinned or baseline reference goes too, and `baseline`
    /// (the `--baseline` median) comes back where there is one. Returns the id of an episode
    /// it ended.
    pub(crate) fn relearn(
        &mut self,
        cell: CellId,
        baseline: Option<f64>,
        forget_pin: bool,
        at: Instant,
    ) -> Option<u64> {
        let chosen = self
            .reference(cell)
            .is_some_and(|r| r.source != Source::Learned);
        if chosen && !forget_pin {
            return None;
        }
        let ended = self.cut_short(cell, at);
        let w = self.cells.entry(cell).or_default();
        *w = CellWatch::default();
        w.reference = baseline.filter(|b| *b > 0.0).map(|gbs| Reference {
            gbs,
            source: Source::Baseline,
        });
        ended
    }

    /// Ends a cell's open episode at `at`, as cut short.
    fn cut_short(&mut self, cell: CellId, at: Instant) -> Option<u64> {
        let w = self.cells.get_mut(&cell)?;
        let id = w.open.take()?;
        let ep = self.episode_mut(id)?;
        ep.ended = Some(at);
        ep.cut_short = true;
        Some(id)
    }

    pub fn state(&self, cell: CellId) -> State {
        let w = self.cells.get(&cell);
        if let Some(ep) = self.open(cell) {
            return match ep.kind {
                EpisodeKind::Contention => State::Contended(ep.id),
                EpisodeKind::Disturbance => State::Disturbed(ep.id),
            };
        }
        match w.and_then(|w| w.reference) {
            Some(r) if w.is_some_and(|w| w.recovering) => State::Recovering(r),
            Some(r) => State::Calm(r),
            None => self.learning(cell),
        }
    }

    /// A cell's learning of its reference: how many calm rounds it has of the window it
    /// needs, and how many of the rounds it saw were disturbed (as if it had no reference).
    pub(crate) fn learning(&self, cell: CellId) -> State {
        let w = self.cells.get(&cell);
        State::Learning {
            have: w.map_or(0, |w| w.learning.len()),
            need: self.window,
            disturbed: w.map_or(0, |w| w.disturbed),
            seen: w.map_or(0, |w| w.seen),
        }
    }

    pub fn reference(&self, cell: CellId) -> Option<Reference> {
        self.cells.get(&cell).and_then(|w| w.reference)
    }

    /// Whether the latest round of a cell's open episode looks recovered (at speed for
    /// contention, calm for a disturbance): the episode may be ending.
    pub fn recovering(&self, cell: CellId) -> bool {
        let t = self.thresholds;
        let Some(w) = self.cells.get(&cell) else {
            return false;
        };
        let Some(latest) = w.last.back() else {
            return false;
        };
        match self.open(cell).map(|e| e.kind) {
            Some(EpisodeKind::Contention) => w
                .reference
                .is_some_and(|r| latest.gbs >= t.recovered_at(r.gbs)),
            Some(EpisodeKind::Disturbance) => latest.disturbed.is_none(),
            None => false,
        }
    }

    /// The median of a cell's last `rounds` rounds: where it is now.
    pub fn level(&self, cell: CellId) -> Option<f64> {
        let w = self.cells.get(&cell)?;
        (!w.last.is_empty()).then(|| median(&w.last.iter().map(|s| s.gbs).collect::<Vec<_>>()))
    }

    /// The median of a cell's last window of rounds (`--rounds`): what recovery waits for.
    pub(crate) fn window_level(&self, cell: CellId) -> Option<f64> {
        let w = self.cells.get(&cell)?;
        (!w.window.is_empty()).then(|| median(&w.window.iter().copied().collect::<Vec<_>>()))
    }

    /// Of a cell's last `rounds` rounds, the disturbed ones and all.
    pub(crate) fn disturbed_of_last(&self, cell: CellId) -> (usize, usize) {
        self.cells.get(&cell).map_or((0, 0), |w| {
            (
                w.last.iter().filter(|s| s.disturbed.is_some()).count(),
                w.last.len(),
            )
        })
    }

    /// The worker most off its CPU in a cell's last disturbed round, where it was counted.
    pub(crate) fn off_cpu(&self, cell: CellId) -> Option<OffCpu> {
        self.cells.get(&cell)?.last_off
    }

    pub fn is_contended(&self, cell: CellId) -> bool {
        matches!(self.state(cell), State::Contended(_))
    }

    /// The open episode of a cell.
    pub fn open(&self, cell: CellId) -> Option<&Episode> {
        let id = self.cells.get(&cell)?.open?;
        self.episode(id)
    }

    pub fn episode(&self, id: u64) -> Option<&Episode> {
        self.episodes.iter().rev().find(|e| e.id == id)
    }

    pub(crate) fn episode_mut(&mut self, id: u64) -> Option<&mut Episode> {
        find(&mut self.episodes, id)
    }

    /// Every episode kept, oldest first.
    pub fn episodes(&self) -> impl DoubleEndedIterator<Item = &Episode> {
        self.episodes.iter()
    }

    /// Ids of the episodes open now.
    pub(crate) fn open_ids(&self) -> Vec<u64> {
        self.cells.values().filter_map(|w| w.open).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch() -> (Watch, Instant, CellId) {
        (
            Watch::new(
                Thresholds {
                    drop: 0.2,
                    rounds: 3,
                },
                4,
            ),
            Instant::now(),
            CellId::new(1, 2),
        )
    }

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn the_first_window_is_the_reference_and_it_does_not_drift() {
        let (mut w, t0, c) = watch();
        for (i, v) in [10.0, 12.0, 11.0].into_iter().enumerate() {
            assert_eq!(w.round(c, v, None, t0 + s(i as u64)), vec![]);
            assert!(matches!(w.state(c), State::Learning { need: 4, .. }));
        }
        let r = Reference {
            gbs: 11.5,
            source: Source::Learned,
        };
        assert_eq!(w.round(c, 13.0, None, t0 + s(3)), vec![Change::Learned(r)]);
        // Rounds at 9.5 (17 % below) for a long time: not slow, and the reference stays.
        for i in 0..100 {
            assert_eq!(w.round(c, 9.5, None, t0 + s(4 + i)), vec![]);
        }
        assert_eq!(w.state(c), State::Calm(r));
    }

    #[test]
    fn enters_after_n_slow_rounds_and_leaves_when_the_last_n_have_recovered() {
        let (mut w, t0, c) = watch();
        for i in 0..4 {
            w.round(c, 10.0, None, t0 + s(i));
        }
        // Two slow rounds and one at speed: the streak breaks.
        assert_eq!(w.round(c, 7.0, None, t0 + s(10)), vec![]);
        assert_eq!(w.round(c, 7.0, None, t0 + s(11)), vec![]);
        assert_eq!(w.round(c, 9.0, None, t0 + s(12)), vec![]);
        // Three in a row: contended, from the first of them.
        assert_eq!(w.round(c, 6.0, None, t0 + s(20)), vec![]);
        assert_eq!(w.round(c, 7.0, None, t0 + s(21)), vec![]);
        assert_eq!(w.round(c, 5.0, None, t0 + s(22)), vec![Change::Began(1)]);
        assert_eq!(w.state(c), State::Contended(1));
        assert_eq!(w.open(c).unwrap().started, t0 + s(20));
        // 8.5 is above the entry line (8) but below the recovery line (9): still contended,
        // however long it lasts (hysteresis), with a note each minute.
        let mut notes = 0;
        for i in 0..130 {
            match w.round(c, 8.5, None, t0 + s(23 + i)).as_slice() {
                [Change::Lasting(1)] => notes += 1,
                [] => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(notes, 2, "a note at 1 and 2 minutes");
        // A recovered round, then a relapse: the median of the last 3 stays under 9.
        assert_eq!(w.round(c, 9.5, None, t0 + s(180)), vec![]);
        assert_eq!(w.level(c), Some(8.5));
        assert_eq!(w.round(c, 8.0, None, t0 + s(181)), vec![]);
        assert_eq!(w.round(c, 8.0, None, t0 + s(182)), vec![]);
        assert!(w.is_contended(c));
        // Two recovered rounds of the last three: over, as of the first of them.
        assert_eq!(w.round(c, 9.0, None, t0 + s(190)), vec![]);
        assert_eq!(w.round(c, 10.0, None, t0 + s(191)), vec![Change::Ended(1)]);
        let ep = w.episode(1).unwrap();
        assert_eq!(ep.ended, Some(t0 + s(190)));
        assert_eq!(ep.duration(t0 + s(999)), s(170));
        assert!(!ep.cut_short);
        assert_eq!(ep.worst_gbs, 5.0);
        // 3 entry rounds, 130 at 8.5, the relapse's 3; not the two from its end on.
        assert_eq!(ep.rounds, 136);
        assert!((ep.depth() - (1.0 - ep.mean_gbs() / 10.0)).abs() < 1e-12);
        assert!(ep.depth() > 0.15 && ep.depth() < 0.2, "{}", ep.depth());
        // The window's median (8, 8, 9, 10 → 8.5) is still under the band (9): recovering,
        // not calm, until it is back.
        let r = w.reference(c).unwrap();
        assert_eq!(w.state(c), State::Recovering(r));
        assert_eq!(w.window_level(c), Some(8.5));
        // One more round at speed: 8, 9, 10, 10 → 9.5, within the band: calm.
        assert_eq!(w.round(c, 10.0, None, t0 + s(192)), vec![]);
        assert_eq!(w.window_level(c), Some(9.5));
        assert_eq!(w.state(c), State::Calm(r));
        // Slow rounds under the band without an episode are not "recovering": that follows
        // an episode only.
        for i in 0..2 {
            w.round(c, 8.5, None, t0 + s(200 + i));
        }
        assert_eq!(w.state(c), State::Calm(r));
    }

    fn off(share: f64) -> Option<Disturbed> {
        Some(Disturbed {
            off_cpu: Some(OffCpu { thread: 0, share }),
        })
    }

    #[test]
    fn the_reference_is_learned_from_calm_rounds_only() {
        let (mut w, t0, c) = watch();
        // A hog on the worker's CPU from the start: every round disturbed, at half speed.
        for i in 0..50 {
            let ch = w.round(c, 5.0, off(0.52), t0 + s(i));
            assert!(ch.is_empty() || ch == [Change::Began(1)], "{ch:?}");
            assert!(
                matches!(w.state(c), State::Learning { .. } | State::Disturbed(_)),
                "never calm: {:?}",
                w.state(c)
            );
        }
        assert_eq!(w.reference(c), None);
        assert_eq!(
            w.learning(c),
            State::Learning {
                have: 0,
                need: 4,
                disturbed: 50,
                seen: 50
            }
        );
        assert_eq!(
            w.off_cpu(c),
            Some(OffCpu {
                thread: 0,
                share: 0.52
            })
        );
        // Calm rounds among disturbed ones: only they teach the reference, 10 not 5.
        let mut learned = None;
        for i in 0..8 {
            let (gbs, d) = if i % 2 == 0 {
                (10.0, None)
            } else {
                (5.0, off(0.5))
            };
            for ch in w.round(c, gbs, d, t0 + s(100 + i)) {
                if let Change::Learned(r) = ch {
                    learned = Some(r);
                }
            }
        }
        let r = Reference {
            gbs: 10.0,
            source: Source::Learned,
        };
        assert_eq!(learned, Some(r));
        assert_eq!(w.reference(c), Some(r));
    }

    #[test]
    fn disturbed_rounds_in_a_row_are_an_episode_with_the_same_hysteresis() {
        let (mut w, t0, c) = watch();
        // Two disturbed rounds and a calm one: the streak breaks.
        w.round(c, 5.0, off(0.5), t0 + s(0));
        w.round(c, 5.0, off(0.5), t0 + s(1));
        assert_eq!(w.round(c, 10.0, None, t0 + s(2)), vec![]);
        assert!(matches!(
            w.state(c),
            State::Learning {
                disturbed: 2,
                seen: 3,
                have: 1,
                ..
            }
        ));
        // Three in a row: disturbed, from the first of them, without a reference.
        w.round(c, 5.0, off(0.4), t0 + s(10));
        w.round(c, 5.0, off(0.6), t0 + s(11));
        assert_eq!(
            w.round(c, 5.0, off(0.5), t0 + s(12)),
            vec![Change::Began(1)]
        );
        assert_eq!(w.state(c), State::Disturbed(1));
        let ep = w.open(c).unwrap();
        assert_eq!(ep.kind, EpisodeKind::Disturbance);
        assert_eq!(ep.started, t0 + s(10));
        assert_eq!(ep.reference, None);
        assert_eq!((ep.disturbed_rounds, ep.rounds), (3, 3));
        assert_eq!(
            ep.worst_off_cpu,
            Some(OffCpu {
                thread: 0,
                share: 0.6
            })
        );
        assert!(ep.against().is_none(), "a snapshot records contention only");
        // One calm round of the last three: still disturbed (hysteresis); it looks
        // recovered for the suspects meanwhile.
        w.round(c, 10.0, None, t0 + s(13));
        assert!(w.recovering(c));
        w.round(c, 5.0, off(0.5), t0 + s(14));
        assert!(!w.recovering(c));
        assert_eq!(w.round(c, 5.0, off(0.5), t0 + s(15)), vec![]);
        assert_eq!(w.state(c), State::Disturbed(1));
        // Two calm of the last three: over, as of the first of them.
        w.round(c, 10.0, None, t0 + s(16));
        // The fourth calm round completes the first window: the reference, from the calm
        // rounds only (10, not the disturbed rounds' 5).
        let learned = Reference {
            gbs: 10.0,
            source: Source::Learned,
        };
        assert_eq!(
            w.round(c, 10.0, None, t0 + s(17)),
            vec![Change::Learned(learned), Change::Ended(1)]
        );
        let ep = w.episode(1).unwrap();
        assert_eq!(ep.ended, Some(t0 + s(16)));
        assert!(!ep.cut_short && !ep.superseded);
        // 3 to begin, 13–15; not the two calm ones from its end on.
        assert_eq!((ep.disturbed_rounds, ep.rounds), (5, 6));
        assert_eq!(w.state(c), State::Calm(learned));
        // A pin does not end a disturbance; contention against it takes over from one.
        for i in 0..3 {
            w.round(c, 10.0, off(0.5), t0 + s(20 + i));
        }
        assert_eq!(w.state(c), State::Disturbed(2));
        let pinned = Reference {
            gbs: 10.0,
            source: Source::Pinned,
        };
        assert_eq!(w.set_reference(c, pinned, t0 + s(23)), None);
        assert_eq!(w.state(c), State::Disturbed(2));
        w.round(c, 5.0, off(0.5), t0 + s(24));
        w.round(c, 5.0, off(0.5), t0 + s(25));
        assert_eq!(
            w.round(c, 5.0, off(0.5), t0 + s(26)),
            vec![Change::Ended(2), Change::Began(3)]
        );
        let ep = w.episode(2).unwrap();
        assert!(ep.superseded);
        assert_eq!(ep.ended, Some(t0 + s(24)));
        assert_eq!(ep.rounds, 3, "the slow rounds went to the contention");
        assert_eq!(w.state(c), State::Contended(3));
        let ep = w.episode(3).unwrap();
        assert_eq!((ep.started, ep.rounds), (t0 + s(24), 3));
        assert_eq!(ep.against(), Some(pinned));
        // While contended, disturbed rounds at speed are no episode of their own; after it
        // the cell recovers (window 5, 5, 10, 10: median 7.5), then is calm (5, 10, 10, 10).
        w.round(c, 10.0, off(0.5), t0 + s(30));
        assert_eq!(
            w.round(c, 10.0, off(0.5), t0 + s(31)),
            vec![Change::Ended(3)]
        );
        assert_eq!(w.episode(3).unwrap().ended, Some(t0 + s(30)));
        assert_eq!(w.state(c), State::Recovering(pinned));
        assert_eq!(w.round(c, 10.0, off(0.5), t0 + s(32)), vec![]);
        assert_eq!(w.state(c), State::Calm(pinned));
    }

    #[test]
    fn a_pinned_or_baseline_reference_stays_through_focus_but_not_through_reset() {
        let (mut w, t0, c) = watch();
        let pinned = Reference {
            gbs: 20.0,
            source: Source::Pinned,
        };
        w.set_reference(c, pinned, t0);
        assert_eq!(w.state(c), State::Calm(pinned));
        for i in 0..3 {
            w.round(c, 10.0, None, t0 + s(i));
        }
        assert!(w.is_contended(c));
        // Focus keeps a pin (and the episode).
        assert_eq!(w.relearn(c, None, false, t0 + s(5)), None);
        assert!(w.is_contended(c));
        // A reset forgets it: the episode ends, cut short, and the baseline comes back.
        assert_eq!(w.relearn(c, Some(12.0), true, t0 + s(6)), Some(1));
        let ep = w.episode(1).unwrap();
        assert!(ep.cut_short);
        assert_eq!(ep.ended, Some(t0 + s(6)));
        assert_eq!(
            w.reference(c),
            Some(Reference {
                gbs: 12.0,
                source: Source::Baseline
            })
        );
        // Without a baseline a reset means learning again.
        w.relearn(c, None, true, t0 + s(7));
        assert_eq!(
            w.state(c),
            State::Learning {
                have: 0,
                need: 4,
                disturbed: 0,
                seen: 0
            }
        );
    }

    #[test]
    fn cells_are_judged_apart_and_the_episode_list_is_bounded() {
        let (mut w, t0, a) = watch();
        let b = CellId::new(0, 1);
        let r = Reference {
            gbs: 10.0,
            source: Source::Pinned,
        };
        w.set_reference(a, r, t0);
        w.set_reference(b, r, t0);
        for i in 0..3 {
            w.round(a, 1.0, None, t0 + s(i));
            w.round(b, 10.0, None, t0 + s(i));
        }
        assert!(w.is_contended(a) && !w.is_contended(b));
        let mut t = t0 + s(10);
        for _ in 0..EPISODES_KEPT + 5 {
            for _ in 0..3 {
                t += s(1);
                w.round(a, 10.0, None, t);
            }
            for _ in 0..3 {
                t += s(1);
                w.round(a, 1.0, None, t);
            }
        }
        assert_eq!(w.episodes().count(), EPISODES_KEPT);
        assert!(w.open(a).is_some());
    }

    /// Rounds milliseconds apart make a streak of `rounds` slow (or disturbed) rounds in a
    /// blink: no episode opens until the streak has lasted a second, so a blip is never an
    /// episode over after 0 s.
    #[test]
    fn a_streak_shorter_than_a_second_opens_no_episode() {
        let (mut w, t0, c) = watch();
        let ms = Duration::from_millis;
        for i in 0..4 {
            w.round(c, 10.0, None, t0 + s(i));
        }
        for i in 0..20 {
            assert_eq!(w.round(c, 5.0, off(0.5), t0 + s(10) + ms(10 * i)), vec![]);
        }
        for i in 0..20 {
            assert_eq!(w.round(c, 10.0, None, t0 + s(11) + ms(10 * i)), vec![]);
        }
        assert_eq!(w.episodes().count(), 0);
        // The same slow rounds for over a second: an episode, from the first of them.
        let mut began = Vec::new();
        for i in 0..120 {
            began.extend(w.round(c, 5.0, None, t0 + s(20) + ms(10 * i)));
        }
        assert_eq!(began, vec![Change::Began(1)]);
        assert_eq!(w.open(c).unwrap().started, t0 + s(20));
    }
}
