//! What the contention watch says and keeps: its thresholds, a cell's reference and where it
//! came from, the evidence of a disturbed round, the episodes (contention or disturbance) with
//! their depth and suspects, and the states and changes `contention::Watch` reports.

use super::suspects::{Evidence, Suspect};
use crate::engine::events::RoundRecord;
use crate::engine::plan::CellId;
use std::time::{Duration, Instant};

/// When a cell counts as contended (`--contention-drop`, `--contention-rounds`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A round is slow more than this fraction below the reference (0.15 = 15 %).
    pub drop: f64,
    /// Slow (or disturbed) rounds in a row to enter; the last rounds whose median must have
    /// recovered (most of which must be calm) to leave.
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
    pub(crate) fn slow_below(&self, reference: f64) -> f64 {
        reference * (1.0 - self.drop)
    }

    /// Rounds at or above this rate have recovered: half the drop.
    pub(crate) fn recovered_at(&self, reference: f64) -> f64 {
        reference * (1.0 - self.drop / 2.0)
    }
}

/// Where a cell's reference came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The median of the first window of calm rounds after focus or reset.
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

/// The worker that spent the largest share of a round's span off its CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffCpu {
    pub(crate) thread: usize,
    /// Of its own span, 0–1.
    pub(crate) share: f64,
}

impl OffCpu {
    /// Of a round, where the task clock was counted and some worker was off its CPU.
    pub fn of(r: &RoundRecord) -> Option<OffCpu> {
        r.threads
            .iter()
            .enumerate()
            .filter_map(|(thread, t)| {
                let off = t.off_cpu_ns().filter(|&o| o > 0)?;
                (t.ns() > 0).then(|| OffCpu {
                    thread,
                    share: off as f64 / t.ns() as f64,
                })
            })
            .max_by(|a, b| a.share.total_cmp(&b.share))
    }

    /// `t0 off CPU 52 %`.
    pub fn describe(&self) -> String {
        format!("t{} off CPU {:.0} %", self.thread, self.share * 100.0)
    }
}

/// A timed round the board judged disturbed (`judge::disturbance`), with what showed it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Disturbed {
    /// Its worker most off its CPU, where that was counted.
    pub(crate) off_cpu: Option<OffCpu>,
}

impl Disturbed {
    /// The watch's view of round `r`, which the board judged `disturbed` or not.
    pub fn judged(r: &RoundRecord, disturbed: bool) -> Option<Disturbed> {
        disturbed.then(|| Disturbed {
            off_cpu: OffCpu::of(r),
        })
    }
}

/// What an episode is evidence of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpisodeKind {
    /// Rounds well below the reference: less bandwidth.
    Contention,
    /// Disturbed rounds in a row: workers kept off their CPUs (or far off their medians),
    /// with or without a reference to judge the bandwidth by.
    Disturbance,
}

impl EpisodeKind {
    /// What makes a process suspect of it.
    pub fn evidence(self) -> Evidence {
        match self {
            EpisodeKind::Contention => Evidence::Rise,
            EpisodeKind::Disturbance => Evidence::OnOurCpus,
        }
    }

    /// `contention`, `disturbance`.
    pub fn name(self) -> &'static str {
        match self {
            EpisodeKind::Contention => "contention",
            EpisodeKind::Disturbance => "disturbance",
        }
    }
}

/// A spell of contention or disturbance on one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    pub(crate) id: u64,
    pub(crate) cell: CellId,
    pub kind: EpisodeKind,
    /// The first slow (or disturbed) round of the streak that began it.
    pub started: Instant,
    /// The first recovered (or calm) round of the window that ended it; when a reset cut it
    /// short; or, for a disturbance, when contention took over.
    pub ended: Option<Instant>,
    /// A reset or a new reference ended it, not a recovery.
    pub cut_short: bool,
    /// A disturbance that ended because contention began.
    pub(crate) superseded: bool,
    /// What it is judged against: always there for contention; for a disturbance, the
    /// cell's reference when it began, if it had one.
    pub(crate) reference: Option<Reference>,
    /// Rounds from its start to its end, and the disturbed ones among them.
    pub rounds: u64,
    pub(crate) disturbed_rounds: u64,
    pub(crate) sum_gbs: f64,
    pub(crate) worst_gbs: f64,
    /// The largest share of a round a worker spent off its CPU.
    pub(crate) worst_off_cpu: Option<OffCpu>,
    /// When the log last heard of it.
    pub(crate) noted: Instant,
    /// Ranked by the app from the processes' activity; the most recent ranking.
    pub suspects: Vec<Suspect>,
}

impl Episode {
    pub(crate) fn mean_gbs(&self) -> f64 {
        self.sum_gbs / self.rounds.max(1) as f64
    }

    /// The reference of a contention episode (a disturbance is not judged by one): what a
    /// snapshot records.
    pub fn against(&self) -> Option<Reference> {
        self.reference
            .filter(|_| self.kind == EpisodeKind::Contention)
    }

    /// How far below the reference on average, as a fraction (0.3 = 30 % below); NaN
    /// without one.
    pub fn depth(&self) -> f64 {
        self.reference
            .map_or(f64::NAN, |r| 1.0 - self.mean_gbs() / r.gbs)
    }

    pub(crate) fn worst_depth(&self) -> f64 {
        self.reference
            .map_or(f64::NAN, |r| 1.0 - self.worst_gbs / r.gbs)
    }

    /// From its start to its end, or to `now` while it lasts.
    pub fn duration(&self, now: Instant) -> Duration {
        self.ended
            .unwrap_or(now)
            .saturating_duration_since(self.started)
    }

    pub(super) fn add(&mut self, s: &Seen) {
        self.rounds += 1;
        self.sum_gbs += s.gbs;
        self.worst_gbs = self.worst_gbs.min(s.gbs);
        if let Some(d) = s.disturbed {
            self.disturbed_rounds += 1;
            if let Some(o) = d.off_cpu
                && self.worst_off_cpu.is_none_or(|w| o.share > w.share)
            {
                self.worst_off_cpu = Some(o);
            }
        }
    }

    /// Takes back a round that came after its end (a recovered one: never the worst rate).
    pub(super) fn take_back(&mut self, s: &Seen) {
        self.rounds = self.rounds.saturating_sub(1);
        self.sum_gbs -= s.gbs;
        if s.disturbed.is_some() {
            self.disturbed_rounds = self.disturbed_rounds.saturating_sub(1);
        }
    }
}

/// What a round (or a change of reference) did to a cell's state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// The first calm window is complete: the cell has a reference.
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
    /// No reference yet: `have` of the `need` calm rounds of the first window; `disturbed` of
    /// the `seen` rounds since focus or reset were disturbed and taught nothing (any: "no calm
    /// reference yet").
    Learning {
        have: usize,
        need: usize,
        disturbed: usize,
        seen: usize,
    },
    /// Judged against the reference and not contended.
    Calm(Reference),
    /// After a contention episode, until the median of the window is back within the
    /// hysteresis band.
    Recovering(Reference),
    /// In this contention episode.
    Contended(u64),
    /// In this disturbance episode.
    Disturbed(u64),
}

/// One timed round as the watch keeps it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seen {
    pub(super) at: Instant,
    pub(super) gbs: f64,
    pub(super) disturbed: Option<Disturbed>,
}
