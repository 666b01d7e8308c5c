//! Contention as a state: each cell has a reference, its undisturbed level, and is contended
//! while its rounds stay well below it.
//!
//! The reference is the median of the cell's first window of timed rounds after focus or reset
//! (learned), the `--baseline` run's median for the cell, or the median the user pinned with a
//! key. It never follows the rounds afterwards: a lasting hog does not become the new normal.
//! A cell enters contention after `rounds` rounds in a row more than `drop` below the reference
//! and leaves it once the median of its last `rounds` rounds is back within half of `drop` (the
//! hysteresis: a cell hovering at the threshold does not flap, and on a noisy machine one slow
//! round does not keep an episode open, nor one fast round end it). Each spell is an `Episode`
//! with its start, end, depth and, filled in by the app, its suspects.

use super::suspects::Suspect;
use crate::base::median::median;
use crate::engine::plan::CellId;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Episodes kept, oldest dropped first.
pub const EPISODES_KEPT: usize = 100;
/// While an episode lasts, the log hears of it this often.
pub const NOTE_EVERY: Duration = Duration::from_secs(60);

/// When a cell counts as contended (`--contention-drop`, `--contention-rounds`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A round is slow more than this fraction below the reference (0.15 = 15 %).
    pub drop: f64,
    /// Slow rounds in a row to enter; the last rounds whose median must have recovered to
    /// leave.
    pub rounds: u32,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            drop: 0.15,
            rounds: 5,
        }
    }
}

impl Thresholds {
    /// Rounds below this rate are slow.
    pub fn slow_below(&self, reference: f64) -> f64 {
        reference * (1.0 - self.drop)
    }

    /// Rounds at or above this rate have recovered: half the drop.
    pub fn recovered_at(&self, reference: f64) -> f64 {
        reference * (1.0 - self.drop / 2.0)
    }
}

/// Where a cell's reference came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The median of the first window after focus or reset.
    Learned,
    /// The `--baseline` snapshot's median.
    Baseline,
    /// Pinned by the user (`p`): the median at that moment.
    Pinned,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Learned => "learned",
            Source::Baseline => "baseline",
            Source::Pinned => "pinned",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    pub gbs: f64,
    pub source: Source,
}

/// A spell of contention on one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    pub id: u64,
    pub cell: CellId,
    /// The first slow round of the streak that began it.
    pub started: Instant,
    /// The first recovered round of the window that ended it; or when a reset cut it short.
    pub ended: Option<Instant>,
    /// A reset or a new reference ended it, not a recovery.
    pub cut_short: bool,
    pub reference: Reference,
    /// Rounds from its start to its end.
    pub rounds: u64,
    sum_gbs: f64,
    pub worst_gbs: f64,
    /// When the log last heard of it.
    pub noted: Instant,
    /// Ranked by the app from the processes' activity; the most recent ranking.
    pub suspects: Vec<Suspect>,
}

impl Episode {
    pub fn mean_gbs(&self) -> f64 {
        self.sum_gbs / self.rounds.max(1) as f64
    }

    /// How far below the reference on average, as a fraction (0.3 = 30 % below).
    pub fn depth(&self) -> f64 {
        1.0 - self.mean_gbs() / self.reference.gbs
    }

    pub fn worst_depth(&self) -> f64 {
        1.0 - self.worst_gbs / self.reference.gbs
    }

    /// From its start to its end, or to `now` while it lasts.
    pub fn duration(&self, now: Instant) -> Duration {
        self.ended
            .unwrap_or(now)
            .saturating_duration_since(self.started)
    }

    fn add(&mut self, gbs: f64) {
        self.rounds += 1;
        self.sum_gbs += gbs;
        self.worst_gbs = self.worst_gbs.min(gbs);
    }

    /// Takes back a round that came after its end (a recovered one: never the worst).
    fn take_back(&mut self, gbs: f64) {
        self.rounds = self.rounds.saturating_sub(1);
        self.sum_gbs -= gbs;
    }
}

/// What a round (or a change of reference) did to a cell's state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// The first window is complete: the cell has a reference.
    Learned(Reference),
    /// An episode began (its id).
    Began(u64),
    /// It still lasts, `NOTE_EVERY` after the last note.
    Lasting(u64),
    /// It ended.
    Ended(u64),
}

/// A cell's state, for the screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    /// No reference yet: `have` of the `need` rounds of the first window.
    Learning { have: usize, need: usize },
    /// Judged against the reference and not contended.
    Calm(Reference),
    /// In this episode.
    Contended(u64),
}

#[derive(Debug, Clone, Default)]
struct CellWatch {
    reference: Option<Reference>,
    /// The first window's rates, while the reference is learned.
    learning: Vec<f64>,
    /// The slow rounds in a row so far, with the time of the first.
    slow: Vec<f64>,
    slow_since: Option<Instant>,
    /// The last `rounds` rounds judged against the reference, oldest first.
    last: VecDeque<(Instant, f64)>,
    open: Option<u64>,
}

/// Every cell's reference and contention state, and the episodes so far.
#[derive(Debug, Clone)]
pub struct Watch {
    pub thresholds: Thresholds,
    /// Rounds in the first window (`--rounds`).
    window: usize,
    cells: HashMap<CellId, CellWatch>,
    episodes: VecDeque<Episode>,
    next_id: u64,
}

impl Watch {
    pub fn new(thresholds: Thresholds, window: usize) -> Watch {
        Watch {
            thresholds,
            window: window.max(1),
            cells: HashMap::new(),
            episodes: VecDeque::new(),
            next_id: 1,
        }
    }

    /// Takes a timed round's rate at `at`.
    pub fn round(&mut self, cell: CellId, gbs: f64, at: Instant) -> Option<Change> {
        let t = self.thresholds;
        let window = self.window;
        let w = self.cells.entry(cell).or_default();
        let Some(reference) = w.reference else {
            w.learning.push(gbs);
            if w.learning.len() < window {
                return None;
            }
            let r = Reference {
                gbs: median(&w.learning),
                source: Source::Learned,
            };
            w.learning.clear();
            w.reference = Some(r);
            return Some(Change::Learned(r));
        };
        let n = t.rounds.max(1) as usize;
        if w.last.len() >= n {
            w.last.pop_front();
        }
        w.last.push_back((at, gbs));
        match w.open {
            None => {
                if gbs >= t.slow_below(reference.gbs) {
                    w.slow.clear();
                    w.slow_since = None;
                    return None;
                }
                w.slow_since.get_or_insert(at);
                w.slow.push(gbs);
                if w.slow.len() < n {
                    return None;
                }
                let id = self.next_id;
                self.next_id += 1;
                let mut ep = Episode {
                    id,
                    cell,
                    started: w.slow_since.take().unwrap_or(at),
                    ended: None,
                    cut_short: false,
                    reference,
                    rounds: 0,
                    sum_gbs: 0.0,
                    worst_gbs: f64::INFINITY,
                    noted: at,
                    suspects: Vec::new(),
                };
                for v in w.slow.drain(..) {
                    ep.add(v);
                }
                w.open = Some(id);
                if self.episodes.len() >= EPISODES_KEPT {
                    self.episodes.pop_front();
                }
                self.episodes.push_back(ep);
                Some(Change::Began(id))
            }
            Some(id) => {
                let recovered_at = t.recovered_at(reference.gbs);
                let level = median(&w.last.iter().map(|(_, g)| *g).collect::<Vec<_>>());
                let over = w.last.len() >= n && level >= recovered_at;
                // It ended with the first recovered round of the window that says so.
                let tail: Vec<(Instant, f64)> = if over {
                    let first = w
                        .last
                        .iter()
                        .position(|(_, g)| *g >= recovered_at)
                        .unwrap_or(0);
                    w.last.iter().skip(first).copied().collect()
                } else {
                    Vec::new()
                };
                if over {
                    w.open = None;
                }
                let ep = self.episode_mut(id)?;
                ep.add(gbs);
                if over {
                    ep.ended = tail.first().map(|(t, _)| *t).or(Some(at));
                    for (_, g) in &tail {
                        ep.take_back(*g);
                    }
                    return Some(Change::Ended(id));
                }
                if at.saturating_duration_since(ep.noted) >= NOTE_EVERY {
                    ep.noted = at;
                    return Some(Change::Lasting(id));
                }
                None
            }
        }
    }

    /// Gives a cell this reference (a baseline's or a pinned one); an episode against the old
    /// one ends. Returns the id of the episode it ended.
    pub fn set_reference(&mut self, cell: CellId, r: Reference, at: Instant) -> Option<u64> {
        let ended = self.cut_short(cell, at);
        let w = self.cells.entry(cell).or_default();
        w.reference = Some(r);
        w.learning.clear();
        w.last.clear();
        w.slow.clear();
        w.slow_since = None;
        ended
    }

    /// Forgets a cell's learned reference, so that the next window teaches a new one (focus).
    /// With `forget_pin` (`r`, `R`) a pinned or baseline reference goes too, and `baseline`
    /// (the `--baseline` median) comes back where there is one. Returns the id of an episode
    /// it ended.
    pub fn relearn(
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
        match (w.and_then(|w| w.open), w.and_then(|w| w.reference)) {
            (Some(id), _) => State::Contended(id),
            (None, Some(r)) => State::Calm(r),
            (None, None) => State::Learning {
                have: w.map_or(0, |w| w.learning.len()),
                need: self.window,
            },
        }
    }

    pub fn reference(&self, cell: CellId) -> Option<Reference> {
        self.cells.get(&cell).and_then(|w| w.reference)
    }

    /// Whether a contended cell's latest round is back at speed (its episode may be ending).
    pub fn recovering(&self, cell: CellId) -> bool {
        let t = self.thresholds;
        self.cells.get(&cell).is_some_and(|w| {
            w.open.is_some()
                && w.reference.is_some_and(|r| {
                    w.last
                        .back()
                        .is_some_and(|(_, g)| *g >= t.recovered_at(r.gbs))
                })
        })
    }

    /// The median of a cell's last `rounds` rounds against its reference: where it is now.
    pub fn level(&self, cell: CellId) -> Option<f64> {
        let w = self.cells.get(&cell)?;
        (!w.last.is_empty()).then(|| median(&w.last.iter().map(|(_, g)| *g).collect::<Vec<_>>()))
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

    pub fn episode_mut(&mut self, id: u64) -> Option<&mut Episode> {
        self.episodes.iter_mut().rev().find(|e| e.id == id)
    }

    /// Every episode kept, oldest first.
    pub fn episodes(&self) -> impl DoubleEndedIterator<Item = &Episode> {
        self.episodes.iter()
    }

    /// Ids of the episodes open now.
    pub fn open_ids(&self) -> Vec<u64> {
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
            assert_eq!(w.round(c, v, t0 + s(i as u64)), None);
            assert!(matches!(w.state(c), State::Learning { need: 4, .. }));
        }
        let r = Reference {
            gbs: 11.5,
            source: Source::Learned,
        };
        assert_eq!(w.round(c, 13.0, t0 + s(3)), Some(Change::Learned(r)));
        // Rounds at 9.5 (17 % below) for a long time: not slow, and the reference stays.
        for i in 0..100 {
            assert_eq!(w.round(c, 9.5, t0 + s(4 + i)), None);
        }
        assert_eq!(w.state(c), State::Calm(r));
    }

    #[test]
    fn enters_after_n_slow_rounds_and_leaves_when_the_last_n_have_recovered() {
        let (mut w, t0, c) = watch();
        for i in 0..4 {
            w.round(c, 10.0, t0 + s(i));
        }
        // Two slow rounds and one at speed: the streak breaks.
        assert_eq!(w.round(c, 7.0, t0 + s(10)), None);
        assert_eq!(w.round(c, 7.0, t0 + s(11)), None);
        assert_eq!(w.round(c, 9.0, t0 + s(12)), None);
        // Three in a row: contended, from the first of them.
        assert_eq!(w.round(c, 6.0, t0 + s(20)), None);
        assert_eq!(w.round(c, 7.0, t0 + s(21)), None);
        assert_eq!(w.round(c, 5.0, t0 + s(22)), Some(Change::Began(1)));
        assert_eq!(w.state(c), State::Contended(1));
        assert_eq!(w.open(c).unwrap().started, t0 + s(20));
        // 8.5 is above the entry line (8) but below the recovery line (9): still contended,
        // however long it lasts (hysteresis), with a note each minute.
        let mut notes = 0;
        for i in 0..130 {
            match w.round(c, 8.5, t0 + s(23 + i)) {
                Some(Change::Lasting(1)) => notes += 1,
                None => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(notes, 2, "a note at 1 and 2 minutes");
        // A recovered round, then a relapse: the median of the last 3 stays under 9.
        assert_eq!(w.round(c, 9.5, t0 + s(180)), None);
        assert_eq!(w.level(c), Some(8.5));
        assert_eq!(w.round(c, 8.0, t0 + s(181)), None);
        assert_eq!(w.round(c, 8.0, t0 + s(182)), None);
        assert!(w.is_contended(c));
        // Two recovered rounds of the last three: over, as of the first of them.
        assert_eq!(w.round(c, 9.0, t0 + s(190)), None);
        assert_eq!(w.round(c, 10.0, t0 + s(191)), Some(Change::Ended(1)));
        let ep = w.episode(1).unwrap();
        assert_eq!(ep.ended, Some(t0 + s(190)));
        assert_eq!(ep.duration(t0 + s(999)), s(170));
        assert!(!ep.cut_short);
        assert_eq!(ep.worst_gbs, 5.0);
        // 3 entry rounds, 130 at 8.5, the relapse's 3; not the two from its end on.
        assert_eq!(ep.rounds, 136);
        assert!((ep.depth() - (1.0 - ep.mean_gbs() / 10.0)).abs() < 1e-12);
        assert!(ep.depth() > 0.15 && ep.depth() < 0.2, "{}", ep.depth());
        assert!(matches!(w.state(c), State::Calm(_)));
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
            w.round(c, 10.0, t0 + s(i));
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
        assert_eq!(w.state(c), State::Learning { have: 0, need: 4 });
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
            w.round(a, 1.0, t0 + s(i));
            w.round(b, 10.0, t0 + s(i));
        }
        assert!(w.is_contended(a) && !w.is_contended(b));
        let mut t = t0 + s(10);
        for _ in 0..EPISODES_KEPT + 5 {
            for _ in 0..3 {
                t += s(1);
                w.round(a, 10.0, t);
            }
            for _ in 0..3 {
                t += s(1);
                w.round(a, 1.0, t);
            }
        }
        assert_eq!(w.episodes().count(), EPISODES_KEPT);
        assert!(w.open(a).is_some());
    }
}
