//! The recordings the replay's tests run on: a night of dram × 1 rounds with a slow spell,
//! with or without the watch's changes.

use super::{Recording, Replay};
use crate::engine::events::Event;
use crate::engine::plan::CellId;
use crate::judge::stats::Board;
use crate::judge::watch::contention::Thresholds;
use crate::show::record::format::tests::{header, round};
use crate::show::record::format::{Body, Frame};
use crate::show::record::reader::Frames;
use crate::show::record::watch::{Tap, epoch_ms, wall_of};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::time::{Duration, Instant};

pub(super) const DRAM_1: CellId = CellId {
    op: crate::engine::kernel::Op::Triad,
    set: 1,
    threads: 1,
    rerun: false,
};

/// dram ×1, ten rounds a second for 150 s: 10 GB/s, but 5 GB/s from 60 s to 90 s. With
/// `recorded`, the watch's changes as a recorder's own watch made them (a recording of
/// today); without, none (an older recording). Returns the first frame's time too.
pub(super) fn recording(recorded: bool) -> (Recording, u64) {
    recording_of(recorded, 1500)
}

/// The same over `rounds` rounds (the slow spell still from 60 s to 90 s).
pub(super) fn recording_of(recorded: bool, rounds: u64) -> (Recording, u64) {
    let (frames, t0) = frames_of(recorded, rounds);
    (held(frames, "night.rec"), t0)
}

pub(super) fn held(frames: Vec<Frame>, name: &str) -> Recording {
    Recording::of(Frames::held(frames), name.into()).unwrap()
}

/// The frames of `recording_of`, and the first one's time.
pub(super) fn frames_of(recorded: bool, rounds: u64) -> (Vec<Frame>, u64) {
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

pub(super) fn key(c: char) -> KeyEvent {
    KeyEvent::from(KeyCode::Char(c))
}

pub(super) fn rounds_seen(r: &Replay) -> u64 {
    r.app.board.cell(DRAM_1).map_or(0, |c| c.total_rounds)
}
