//! The contention watch in a recording: its changes (a reference learned, an episode begun,
//! lasting or ended) as `WatchWire` frames, and back as the episodes a replay shows. A replay
//! of a recording that holds them shows the episodes the monitor had (with the suspects it
//! ranked and the episodes the keys cut short), not episodes judged again.
//!
//! The live monitor hands its own watch's changes over; a headless run or a service has no
//! watch of its own (the exporter's, if any, is not ours to read), so the recorder runs one
//! (`Tap`) fed the same rounds and the board's findings, as the exporter's is.

use super::format::{EpisodeWire, ReferenceWire, WatchWire};
use crate::engine::events::Event;
use crate::engine::plan::CellId;
use crate::judge::stats::Board;
use crate::judge::watch::contention::{
    Change, Disturbed, Episode, EpisodeKind, OffCpu, Reference, Source, Thresholds, Watch,
};
use crate::judge::watch::suspects::Suspect;
use crate::show::report::model as wire;
#[cfg(test)]
use std::time::Duration;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch of a wall-clock time.
pub(crate) fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The wall-clock time of an instant of this process, reckoned from now.
pub(crate) fn wall_of(at: Instant) -> SystemTime {
    let now = Instant::now();
    match now.checked_duration_since(at) {
        Some(ago) => SystemTime::now() - ago,
        None => SystemTime::now() + at.saturating_duration_since(now),
    }
}

fn reference_wire(r: Reference) -> ReferenceWire {
    ReferenceWire {
        gbs: r.gbs,
        source: r.source.name().into(),
    }
}

fn reference_of(r: &ReferenceWire) -> Reference {
    let source = [Source::Learned, Source::Baseline, Source::Pinned]
        .into_iter()
        .find(|s| s.name() == r.source)
        .unwrap_or(Source::Learned);
    Reference { gbs: r.gbs, source }
}

fn suspect_of(s: &wire::Suspect) -> Suspect {
    Suspect {
        pid: s.pid,
        comm: s.comm.clone(),
        user: s.user.clone(),
        stream_top: s.stream_top,
        cpu_before_pct: s.cpu_before_cores * 100.0,
        cpu_pct: s.cpu_cores * 100.0,
        faults_per_s: s.faults_per_s,
        rss_growth_per_s: s.rss_growth_bytes_per_s,
        on_our_cpus: s.on_our_cpus,
        on_our_node: s.on_our_node,
        measured_bytes_per_s: s.measured_bytes_per_s,
        group: s.resctrl_group.clone(),
        score: s.score,
        exited: false,
    }
}

impl EpisodeWire {
    fn of(e: &Episode, wall_ms: &dyn Fn(Instant) -> u64) -> EpisodeWire {
        EpisodeWire {
            id: e.id,
            kind: e.kind.name().into(),
            started_ms: wall_ms(e.started),
            ended_ms: e.ended.map(wall_ms),
            cut_short: e.cut_short,
            superseded: e.superseded,
            reference: e.reference.map(reference_wire),
            rounds: e.rounds,
            disturbed_rounds: e.disturbed_rounds,
            mean_gbs: e.mean_gbs(),
            worst_gbs: e.worst_gbs.is_finite().then_some(e.worst_gbs),
            worst_off_cpu: e.worst_off_cpu.map(|o| (o.thread, o.share)),
            suspects: e.suspects.iter().map(Into::into).collect(),
        }
    }

    /// The episode again, its times placed by `instant` (wall-clock ms to the replay's clock).
    pub(crate) fn episode(&self, cell: CellId, instant: &dyn Fn(u64) -> Instant) -> Episode {
        let kind = if self.kind == EpisodeKind::Disturbance.name() {
            EpisodeKind::Disturbance
        } else {
            EpisodeKind::Contention
        };
        Episode {
            id: self.id,
            cell,
            kind,
            started: instant(self.started_ms),
            ended: self.ended_ms.map(instant),
            cut_short: self.cut_short,
            superseded: self.superseded,
            reference: self.reference.as_ref().map(reference_of),
            rounds: self.rounds,
            disturbed_rounds: self.disturbed_rounds,
            sum_gbs: self.mean_gbs * self.rounds as f64,
            worst_gbs: self.worst_gbs.unwrap_or(f64::INFINITY),
            worst_off_cpu: self
                .worst_off_cpu
                .map(|(thread, share)| OffCpu { thread, share }),
            // A lasting note comes from the replay's own rounds; the recorded ones are logged.
            noted: instant(self.ended_ms.unwrap_or(self.started_ms)),
            suspects: self.suspects.iter().map(suspect_of).collect(),
        }
    }
}

impl WatchWire {
    /// A change of `watch` on `cell`, with the episode as it stands now; None for an episode
    /// the watch no longer keeps.
    pub(crate) fn of(
        watch: &Watch,
        cell: CellId,
        change: Change,
        wall_ms: &dyn Fn(Instant) -> u64,
    ) -> Option<WatchWire> {
        let (name, id) = match change {
            Change::Learned(_) => ("learned", None),
            Change::Began(id) => ("began", Some(id)),
            Change::Lasting(id) => ("lasting", Some(id)),
            Change::Ended(id) => ("ended", Some(id)),
        };
        let episode = match id {
            Some(id) => Some(EpisodeWire::of(watch.episode(id)?, wall_ms)),
            None => None,
        };
        let reference = match change {
            Change::Learned(r) => Some(r),
            _ => watch.reference(cell),
        };
        Some(WatchWire {
            change: name.into(),
            cell: cell.into(),
            reference: reference.map(reference_wire),
            episode,
        })
    }

    /// The cell's reference after the change.
    pub(crate) fn reference(&self) -> Option<Reference> {
        self.reference.as_ref().map(reference_of)
    }

    pub(crate) fn cell(&self) -> CellId {
        CellId::from(self.cell)
    }
}

/// A recorder's own contention watch (a headless run or a service): fed every event after the
/// board took it, it returns the changes to record.
#[derive(Debug)]
pub(crate) struct Tap {
    watch: Watch,
}

impl Tap {
    pub(crate) fn new(thresholds: Thresholds, window: usize) -> Tap {
        Tap {
            watch: Watch::new(thresholds, window.max(1)),
        }
    }

    /// The watch's changes on a timed round, each as its frame's body.
    pub(crate) fn on_event(&mut self, ev: &Event, board: &Board, at: Instant) -> Vec<WatchWire> {
        let Event::Round(r) = ev else {
            return Vec::new();
        };
        if r.warmup {
            return Vec::new();
        }
        let disturbed = board.cell(r.cell).is_some_and(|c| c.last_finding.disturbed);
        let changes = self
            .watch
            .round(r.cell, r.gbs(), Disturbed::judged(r, disturbed), at);
        let wall = |t: Instant| epoch_ms(wall_of(t));
        changes
            .into_iter()
            .filter_map(|c| WatchWire::of(&self.watch, r.cell, c, &wall))
            .collect()
    }
}

/// How long ago an instant was, for tests that place episodes in the past.
#[cfg(test)]
pub(crate) fn ago(d: Duration) -> Instant {
    Instant::now() - d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::record::format::tests::round;

    #[test]
    fn an_episode_reads_back_as_the_watch_kept_it() {
        let cell = CellId::new(1, 2);
        let mut w = Watch::new(Thresholds::default(), 3);
        let t0 = ago(Duration::from_secs(100));
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut changes = Vec::new();
        for s in 0..3 {
            changes.extend(w.round(cell, 10.0, None, at(s)));
        }
        for s in 3..10 {
            changes.extend(w.round(cell, 5.0, None, at(s)));
        }
        let began = changes
            .iter()
            .find_map(|c| match c {
                Change::Began(id) => Some(*id),
                _ => None,
            })
            .expect("a slow streak opens an episode");
        assert!(matches!(changes[0], Change::Learned(_)));
        let base_ms = 1_000_000u64;
        let wall = |t: Instant| base_ms + t.saturating_duration_since(t0).as_millis() as u64;
        let wire = WatchWire::of(&w, cell, Change::Began(began), &wall).unwrap();
        assert_eq!(wire.change, "began");
        assert_eq!(wire.cell(), cell);
        assert_eq!(wire.reference().map(|r| r.gbs), Some(10.0));
        let ep = wire.episode.as_ref().unwrap();
        assert_eq!(ep.started_ms, base_ms + 3000);
        let back = ep.episode(cell, &|ms| t0 + Duration::from_millis(ms - base_ms));
        let kept = w.episode(began).unwrap();
        assert_eq!(back.started, kept.started);
        assert_eq!(back.rounds, kept.rounds);
        assert_eq!(back.kind, EpisodeKind::Contention);
        assert!((back.depth() - kept.depth()).abs() < 1e-9);
        // And through the frame's bytes.
        let f = crate::show::record::format::watch_frame(7, &wire);
        let got =
            crate::show::record::format::decode(&f[crate::show::record::format::FRAME_HEAD..]);
        match got.unwrap().body {
            crate::show::record::format::Body::Watch(back) => assert_eq!(*back, wire),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tap_records_what_a_service_watch_sees() {
        let mut board = Board::new(3);
        let mut tap = Tap::new(Thresholds::default(), 3);
        let t0 = ago(Duration::from_secs(100));
        let mut got = Vec::new();
        for s in 0..12u64 {
            let gbs = if s < 4 { 10.0 } else { 4.0 };
            let ev = Event::Round(Box::new(round(1, 1, gbs)));
            board.record(&ev);
            got.extend(tap.on_event(&ev, &board, t0 + Duration::from_secs(s)));
        }
        let names: Vec<&str> = got.iter().map(|w| w.change.as_str()).collect();
        assert_eq!(names.first(), Some(&"learned"), "{names:?}");
        assert!(names.contains(&"began"), "{names:?}");
    }
}
