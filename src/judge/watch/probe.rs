//! The probe's latency as a contention signal of its own (`engine::latency::probe`): a
//! reference learned from calm samples, a state with the contention watch's hysteresis, and
//! episodes with suspects, told in the log as a cell's are.
//!
//! It is the contention watch itself, fed the probe's rate instead of a cell's: loads per ns,
//! the inverse of the latency. A latency `rise` above the reference is a rate `1 − 1/(1 + rise)`
//! below it, so "more than +20 % for `samples` samples in a row" is the watch's "more than
//! 16.7 % below for that many rounds", and its recovery (the median of the last `samples`
//! within half the drop) is latency back within +9.1 %. One home for the learning from calm
//! samples, the hysteresis, the episodes and their bounded list; this file only translates.
//! The probe has no disturbed samples (no board judges them): a preempted burst is one long
//! sample, which the streak and the median absorb.

use super::contention::{Change, Episode, State, Thresholds, Watch};
use super::narrative;
use crate::engine::plan::CellId;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The probe's place in the suspects' tracker and the watch: a cell no grid has.
pub const PROBE_CELL: CellId = CellId {
    op: crate::engine::kernel::Op::Triad,
    set: usize::MAX,
    threads: 0,
    rerun: false,
};

/// Calm samples that teach the reference: 5 s at ten a second.
pub const LEARN: usize = 50;
/// Samples whose median is "the probe's latency now" (the header, the metric): one second.
pub const RECENT: usize = 10;

/// When the probe counts as contended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeThresholds {
    /// Latency this fraction above the reference is slow (0.2 = +20 %).
    rise: f64,
    /// Slow samples in a row to enter; the last samples whose median must have recovered to
    /// leave.
    samples: u32,
}

impl Default for ProbeThresholds {
    /// +20 % for 2 s (20 samples): a rise a busy neighbour causes, not one slow burst.
    fn default() -> ProbeThresholds {
        ProbeThresholds {
            rise: 0.20,
            samples: 20,
        }
    }
}

impl ProbeThresholds {
    /// The same, in the rate the watch judges.
    fn as_rate(self) -> Thresholds {
        Thresholds {
            drop: 1.0 - 1.0 / (1.0 + self.rise),
            rounds: self.samples,
        }
    }
}

/// The probe's state, in latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProbeState {
    /// `have` of the `need` calm samples of the reference.
    Learning { have: usize, need: usize },
    /// Judged against the reference (ns) and not contended.
    Calm { reference_ns: f64 },
    /// After an episode, until the median of the learning window's span is back.
    Recovering { reference_ns: f64 },
    /// In this episode.
    Contended { id: u64, reference_ns: f64 },
}

impl ProbeState {
    /// `learning 12/50`, `calm`, `recovering`, `CONTENDED`.
    pub fn word(&self) -> String {
        match self {
            ProbeState::Learning { have, need } => format!("learning {have}/{need}"),
            ProbeState::Calm { .. } => "calm".into(),
            ProbeState::Recovering { .. } => "recovering".into(),
            ProbeState::Contended { .. } => "CONTENDED".into(),
        }
    }
}

/// The probe's watch.
#[derive(Debug, Clone)]
pub struct ProbeWatch {
    watch: Watch,
    recent: VecDeque<f64>,
    /// Samples taken in since the start.
    pub(crate) samples: u64,
}

impl Default for ProbeWatch {
    fn default() -> ProbeWatch {
        ProbeWatch::new(ProbeThresholds::default(), LEARN)
    }
}

fn ns_of(rate: f64) -> f64 {
    1.0 / rate
}

impl ProbeWatch {
    pub fn new(t: ProbeThresholds, learn: usize) -> ProbeWatch {
        ProbeWatch {
            // Ten samples a second, each a measurement of its own: `rounds` in a row are
            // evidence enough, however short.
            watch: Watch::new(t.as_rate(), learn).opening_after(Duration::ZERO),
            recent: VecDeque::with_capacity(RECENT),
            samples: 0,
        }
    }

    /// Takes a sample (ns per load) taken at `at`; what it did to the state.
    pub fn sample(&mut self, ns: f64, at: Instant) -> Vec<Change> {
        if !(ns.is_finite() && ns > 0.0) {
            return Vec::new();
        }
        self.samples += 1;
        if self.recent.len() >= RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(ns);
        self.watch.round(PROBE_CELL, 1.0 / ns, None, at)
    }

    /// The median of the last `RECENT` samples, ns.
    pub fn latency_ns(&self) -> Option<f64> {
        (!self.recent.is_empty())
            .then(|| crate::base::median::median(&self.recent.iter().copied().collect::<Vec<_>>()))
    }

    /// The calm latency it is judged against, ns.
    pub fn reference_ns(&self) -> Option<f64> {
        self.watch.reference(PROBE_CELL).map(|r| ns_of(r.gbs))
    }

    pub fn state(&self) -> ProbeState {
        let reference_ns = self.reference_ns().unwrap_or(f64::NAN);
        match self.watch.state(PROBE_CELL) {
            State::Learning { have, need, .. } => ProbeState::Learning { have, need },
            State::Calm(_) => ProbeState::Calm { reference_ns },
            State::Recovering(_) => ProbeState::Recovering { reference_ns },
            State::Contended(id) | State::Disturbed(id) => {
                ProbeState::Contended { id, reference_ns }
            }
        }
    }

    pub fn is_contended(&self) -> bool {
        matches!(self.state(), ProbeState::Contended { .. })
    }

    /// Whether its latest sample looks recovered (for the suspects' windows).
    pub fn recovering(&self) -> bool {
        self.watch.recovering(PROBE_CELL)
    }

    /// Forgets the reference (a new one is learned), ending an open episode as cut short:
    /// the probe was off, and what it comes back to may be another normal.
    pub fn relearn(&mut self, at: Instant) -> Option<u64> {
        self.recent.clear();
        self.watch.relearn(PROBE_CELL, None, true, at)
    }

    pub fn open(&self) -> Option<&Episode> {
        self.watch.open(PROBE_CELL)
    }

    pub fn episode(&self, id: u64) -> Option<&Episode> {
        self.watch.episode(id)
    }

    pub(crate) fn episode_mut(&mut self, id: u64) -> Option<&mut Episode> {
        self.watch.episode_mut(id)
    }

    pub fn episodes(&self) -> impl DoubleEndedIterator<Item = &Episode> {
        self.watch.episodes()
    }
}

/// How far an episode's latency rose above its reference on average (0.4 = +40 %): the mean
/// rate's inverse, the latency of all its loads together.
pub fn rise(ep: &Episode) -> f64 {
    ep.reference
        .map_or(f64::NAN, |r| r.gbs / ep.mean_gbs() - 1.0)
}

/// Its worst sample's rise.
pub fn worst_rise(ep: &Episode) -> f64 {
    ep.reference
        .map_or(f64::NAN, |r| r.gbs / ep.worst_gbs - 1.0)
}

fn reference_ns(ep: &Episode) -> f64 {
    ep.reference.map_or(f64::NAN, |r| ns_of(r.gbs))
}

/// `probe latency contended since 12:00:03: 142 ns, +48 % over its calm 96 ns; suspects …`.
pub fn began(since: &str, ep: &Episode, suspects_text: &str) -> String {
    format!(
        "probe latency contended since {since}: {:.0} ns, {:+.0} % over its calm {:.0} ns; \
         {suspects_text}",
        ns_of(ep.mean_gbs()),
        rise(ep) * 100.0,
        reference_ns(ep)
    )
}

/// The log line each minute while it lasts.
pub fn lasting(ep: &Episode, d: Duration) -> String {
    let top = ep
        .suspects
        .iter()
        .find(|s| s.score > 0.0)
        .map(|s| format!("; top suspect {}", narrative::who(s)))
        .unwrap_or_default();
    format!(
        "probe latency contention lasts: {} so far, {:+.0} % over {:.0} ns{top}",
        narrative::duration(d),
        rise(ep) * 100.0,
        reference_ns(ep)
    )
}

/// The log line when it ends.
pub fn ended(span: &str, ep: &Episode, d: Duration, suspects_text: &str) -> String {
    let how = if ep.cut_short {
        " (cut short: the probe stopped)"
    } else {
        ""
    };
    format!(
        "probe latency contention {span} ({}){how}: {:+.0} % over its calm {:.0} ns on \
         average, {:+.0} % at worst; {suspects_text}",
        narrative::duration(d),
        rise(ep) * 100.0,
        reference_ns(ep),
        worst_rise(ep) * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(w: &mut ProbeWatch, t0: Instant, from: u64, series: &[f64]) -> Vec<(u64, Change)> {
        let mut out = Vec::new();
        for (i, &ns) in series.iter().enumerate() {
            let n = from + i as u64;
            for c in w.sample(ns, t0 + Duration::from_millis(100 * n)) {
                out.push((n, c));
            }
        }
        out
    }

    fn watch() -> ProbeWatch {
        ProbeWatch::new(
            ProbeThresholds {
                rise: 0.2,
                samples: 5,
            },
            10,
        )
    }

    /// A noisy calm series around 100 ns: ±8 %, with a preempted burst (3×) now and then.
    fn calm(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| match i % 17 {
                16 => 300.0,
                k => 92.0 + (k % 5) as f64 * 4.0,
            })
            .collect()
    }

    #[test]
    fn calm_samples_teach_the_reference_and_noise_never_triggers() {
        let t0 = Instant::now();
        let mut w = watch();
        assert_eq!(w.state(), ProbeState::Learning { have: 0, need: 10 });
        let changes = run(&mut w, t0, 0, &calm(2000));
        assert!(
            matches!(changes.as_slice(), [(9, Change::Learned(_))]),
            "{changes:?}"
        );
        let r = w.reference_ns().unwrap();
        assert!((92.0..=108.0).contains(&r), "{r}");
        assert_eq!(w.state(), ProbeState::Calm { reference_ns: r });
        // Four slow samples in a row, then one back: no episode (5 in a row are needed).
        let spikes = [130.0, 140.0, 135.0, 150.0, 100.0];
        assert!(run(&mut w, t0, 2000, &spikes).is_empty());
        assert_eq!(w.episodes().count(), 0);
        // Hovering just under the threshold (+18 %) for long: still calm.
        assert!(run(&mut w, t0, 2100, &[r * 1.18; 500]).is_empty());
        assert!(!w.is_contended());
    }

    #[test]
    fn a_rise_is_an_episode_that_ends_with_hysteresis() {
        let t0 = Instant::now();
        let mut w = watch();
        run(&mut w, t0, 0, &[100.0; 10]);
        assert_eq!(w.reference_ns(), Some(100.0));
        // +50 % for 5 samples: contended, from the first of them.
        let changes = run(&mut w, t0, 10, &[150.0; 5]);
        assert_eq!(changes, vec![(14, Change::Began(1))]);
        let ep = w.open().unwrap();
        assert_eq!(ep.started, t0 + Duration::from_millis(1000));
        assert!((rise(ep) - 0.5).abs() < 1e-9, "{}", rise(ep));
        assert!(matches!(
            w.state(),
            ProbeState::Contended { id: 1, reference_ns } if reference_ns == 100.0
        ));
        // The latency now: the median of the last second, five calm and five slow.
        assert_eq!(w.latency_ns(), Some(125.0));
        // Back to +12 %: under the entry line (+20 %), over the recovery line (+9.1 %): still
        // contended however long (hysteresis).
        assert!(run(&mut w, t0, 15, &[112.0; 100]).is_empty());
        assert!(w.is_contended());
        // Within +9 %: over, as of the first recovered sample of the last five.
        let changes = run(&mut w, t0, 115, &[105.0; 3]);
        assert_eq!(changes, vec![(117, Change::Ended(1))]);
        let ep = w.episode(1).unwrap();
        assert_eq!(ep.ended, Some(t0 + Duration::from_millis(11500)));
        assert!(worst_rise(ep) > 0.49 && rise(ep) > 0.12 && rise(ep) < 0.2);
        // The latency now is the median of the last second: seven at 112, three at 105.
        assert_eq!(w.latency_ns(), Some(112.0));
        // Recovering until the learning window's median is back within the band, then calm.
        assert_eq!(
            w.state(),
            ProbeState::Recovering {
                reference_ns: 100.0
            }
        );
        run(&mut w, t0, 118, &[100.0; 3]);
        assert_eq!(
            w.state(),
            ProbeState::Calm {
                reference_ns: 100.0
            }
        );
        // The reference never followed the rise.
        assert_eq!(w.reference_ns(), Some(100.0));
    }

    #[test]
    fn a_lasting_rise_does_not_become_the_reference_and_relearning_cuts_it_short() {
        let t0 = Instant::now();
        let mut w = watch();
        run(&mut w, t0, 0, &[80.0; 10]);
        run(&mut w, t0, 10, &[200.0; 3000]);
        assert!(w.is_contended());
        assert_eq!(w.reference_ns(), Some(80.0));
        let at = t0 + Duration::from_secs(400);
        assert_eq!(w.relearn(at), Some(1));
        assert!(w.episode(1).unwrap().cut_short);
        assert_eq!(w.state(), ProbeState::Learning { have: 0, need: 10 });
        assert!(
            ended("a–b", w.episode(1).unwrap(), Duration::from_secs(299), "x")
                .contains("cut short")
        );
        // Bad samples teach nothing.
        assert!(w.sample(f64::NAN, at).is_empty() && w.sample(0.0, at).is_empty());
        assert_eq!(w.samples, 3010);
    }

    #[test]
    fn the_log_lines_speak_latency() {
        let t0 = Instant::now();
        let mut w = watch();
        run(&mut w, t0, 0, &[100.0; 10]);
        run(&mut w, t0, 10, &[150.0; 5]);
        let ep = w.open().unwrap();
        assert_eq!(
            began("12:00:01", ep, "suspects: no process sample yet"),
            "probe latency contended since 12:00:01: 150 ns, +50 % over its calm 100 ns; \
             suspects: no process sample yet"
        );
        assert!(lasting(ep, Duration::from_secs(60)).starts_with("probe latency contention lasts"));
    }
}
