//! States kept on the way forward, so that a jump back starts from the last one before it
//! instead of from the first frame.

use super::{Checkpoint, Replay};

/// The state is kept every this many frames fed: a jump back starts from the last one kept
/// before it (an hour of the busiest recording is about 270 000 frames, 27 states).
const CHECKPOINT_FRAMES: usize = 10_000;

impl Replay {
    /// Keeps the state every `CHECKPOINT_FRAMES` frames fed, once.
    pub(super) fn keep(&mut self) {
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
    pub(super) fn kept_before(&self, ms: u64) -> Option<usize> {
        let frames = &self.rec.frames;
        self.checkpoints
            .iter()
            .rposition(|c| frames.t_ms(c.fed - 1).is_some_and(|t| t <= ms))
    }

    /// Goes to a state kept, keeping what the keys chose.
    pub(super) fn restore_kept(&mut self, i: usize) {
        let c = &self.checkpoints[i];
        let mut app = c.app.clone();
        std::mem::swap(&mut app.view, &mut self.app.view);
        app.replay = self.app.replay.take();
        self.app = app;
        self.header = c.header.clone();
        self.fed = c.fed;
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use crate::engine::events::Event;
    use crate::engine::plan::CellId;
    use crate::judge::stats::Board;
    use crate::judge::watch::contention::Thresholds;
    use crate::show::record::format::tests::{header, round};
    use crate::show::record::format::{Body, Frame};
    use crate::show::record::watch::{Tap, epoch_ms, wall_of};
    use std::time::{Duration, Instant};

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
