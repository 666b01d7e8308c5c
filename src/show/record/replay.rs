//! `stream-top replay FILE… --headless --at TIME | --from A --to B`: the snapshot table of a
//! moment or a window of a recording, built as a headless run builds its own (a `Board` fed
//! the recorded events, then `Snapshot::with_cells` on the recording's frame), so that
//! `compare` can compare two windows of one night.
//!
//! A moment is the state the live monitor had then: every frame up to it. A window counts only
//! the rounds and host samples inside it (the choices, allocations and placements before it
//! still hold). Times are offsets from the recording's first frame (`90`, `90s`, `4m`,
//! `1h30m`) or RFC 3339 times (`2026-12-01T03:00:00Z`).

use super::format::{Body, Frame, Header};
use crate::base::error::{Error, Result};
use crate::base::time::{parse_duration_ms, parse_rfc3339, rfc3339};
use crate::engine::kernel::Op;
use crate::engine::plan::{Grid, WorkingSet};
use crate::judge::groups::CpuGroups;
use crate::judge::stats::{Board, Context};
use crate::machine::host::HostSample;
use crate::machine::topology::Topology;
use crate::show::report::Snapshot;
use std::fmt;

/// A time as the person gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpec {
    /// From the recording's first frame, ms.
    Offset(u64),
    /// Since the epoch, ms.
    Absolute(u64),
}

/// Why a time was not taken: a text that is no time, or an RFC 3339 time before the epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadTime {
    BeforeEpoch,
    NotATime(String),
}

impl fmt::Display for BadTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadTime::BeforeEpoch => f.write_str("before 1970"),
            BadTime::NotATime(text) => write!(
                f,
                "{text}: not a time (e.g. 90s, 4m, 1h30m, or 2026-12-01T03:00:00Z)"
            ),
        }
    }
}

/// The interactive replay's `g` prompt says the reason in its own line.
impl From<BadTime> for String {
    fn from(e: BadTime) -> String {
        e.to_string()
    }
}

impl TimeSpec {
    /// `90`, `90s`, `4m`, `1h30m`, `1.5m`, or an RFC 3339 time.
    pub fn parse(text: &str) -> std::result::Result<TimeSpec, BadTime> {
        if let Some(secs) = parse_rfc3339(text) {
            return u64::try_from(secs)
                .map(|s| TimeSpec::Absolute(s * 1000))
                .map_err(|_| BadTime::BeforeEpoch);
        }
        parse_duration_ms(text)
            .map(TimeSpec::Offset)
            .map_err(|_| BadTime::NotATime(text.to_string()))
    }

    fn resolve(self, start_ms: u64) -> u64 {
        match self {
            TimeSpec::Offset(ms) => start_ms.saturating_add(ms),
            TimeSpec::Absolute(ms) => ms,
        }
    }
}

/// What to print: the state at a moment, or the rounds of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    At(TimeSpec),
    Window(TimeSpec, TimeSpec),
}

/// The engine's grid and the statistics' context of a recorded session.
pub(crate) fn session_of(h: &Header) -> (Grid, Context, CpuGroups) {
    let grid = Grid {
        sets: h.frame.grid.sets.iter().map(WorkingSet::from).collect(),
        threads: h.frame.grid.threads.clone(),
        ops: ops_of(&h.frame.ops()),
    };
    let ctx = Context::new(h.vendor_gbs, h.ghz).not_a_measurement(h.not_a_measurement);
    let ctx = match h.cpus {
        Some(n) => ctx.with_cpus(n),
        None => ctx,
    };
    let groups = CpuGroups::of(&Topology::from(&h.frame.info.topology));
    (grid, ctx, groups)
}

/// The recorded run's ops, by name; a recording from before ops were recorded ran the triad.
fn ops_of(names: &[String]) -> Vec<Op> {
    let ops: Vec<Op> = names.iter().filter_map(|n| n.parse().ok()).collect();
    if ops.is_empty() { vec![Op::Triad] } else { ops }
}

/// The snapshot of `span` in the frames `frames()` walks (sorted by time; walked twice for a
/// window, so that nothing but the frame at hand is held).
pub fn snapshot<I>(frames: impl Fn() -> I, span: Span) -> Result<Snapshot>
where
    I: Iterator<Item = Frame>,
{
    let start = frames()
        .next()
        .map(|f| f.t_ms)
        .ok_or_else(|| Error::usage("replay: the recording has no frames"))?;
    let (from, to) = match span {
        Span::At(t) => (0, t.resolve(start)),
        Span::Window(a, b) => (a.resolve(start), b.resolve(start)),
    };
    if from > to {
        return Err(Error::usage("replay: --from is after --to"));
    }
    // A window's statistics cover every round inside it, not only the last `--rounds` of each
    // cell (which, at tens of rounds a second, are its last second).
    let window_rounds = match span {
        Span::At(_) => 0,
        Span::Window(..) => most_rounds_of_a_cell(frames(), from, to),
    };
    let mut header: Option<Box<Header>> = None;
    let mut board = Board::new(1);
    let mut rounds = 0u64;
    // The snapshot's time: the last frame it holds (`to` may be "the end", u64::MAX).
    let mut last_ms = start;
    for f in frames().take_while(|f| f.t_ms <= to) {
        last_ms = f.t_ms;
        let inside = f.t_ms >= from;
        match f.body {
            // A new session (another run appended to the file, with another grid) starts
            // afresh; each rotated file begins with the same header again, and goes on.
            Body::Header(h)
                if header
                    .as_ref()
                    .is_none_or(|old| old.frame.grid != h.frame.grid) =>
            {
                board = Board::new(h.window.max(window_rounds));
                header = Some(h);
                rounds = 0;
            }
            Body::Round(r) if inside => {
                board.record(&crate::engine::events::Event::Round(r));
                rounds += 1;
            }
            Body::Host(h) if inside => board.record_host(&HostSample::from(&h)),
            Body::Event(e) => {
                if let Some(ev) = e.event() {
                    board.record(&ev);
                }
            }
            _ => {}
        }
    }
    let header = header.ok_or_else(|| {
        Error::usage("replay: no recorded session starts before that time (the header was rotated away or comes later)")
    })?;
    if rounds == 0 {
        return Err(Error::usage(format!(
            "replay: no rounds recorded from {} to {}",
            rfc3339((from / 1000) as i64),
            rfc3339((to / 1000) as i64)
        )));
    }
    let (grid, ctx, groups) = session_of(&header);
    let mut frame = header.frame;
    frame.taken = rfc3339((last_ms / 1000) as i64);
    Ok(frame.with_cells(&grid, &board, ctx, &groups, None))
}

/// The most rounds any one cell has from `from` to `to`.
fn most_rounds_of_a_cell(frames: impl Iterator<Item = Frame>, from: u64, to: u64) -> usize {
    let mut per_cell = std::collections::HashMap::new();
    for f in frames.filter(|f| f.t_ms >= from && f.t_ms <= to) {
        if let Body::Round(r) = &f.body {
            *per_cell.entry(r.cell).or_insert(0usize) += 1;
        }
    }
    per_cell.into_values().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::record::format::tests::{header, round};

    /// A recording of cell (dram, 1 thread): 10 GB/s for its first minute, 5 GB/s for the
    /// next, a round a second.
    fn frames() -> Vec<Frame> {
        let mut out = vec![Frame {
            t_ms: 1_000_000,
            body: Body::Header(Box::new(header())),
        }];
        for s in 0..120u64 {
            let gbs = if s < 60 { 10.0 } else { 5.0 };
            out.push(Frame {
                t_ms: 1_000_000 + s * 1000,
                body: Body::Round(Box::new(round(1, 1, gbs))),
            });
        }
        out
    }

    fn median(s: &Snapshot) -> f64 {
        let c = s.cells.iter().find(|c| c.set == 1 && c.threads == 1);
        c.expect("the dram cell").figures.median_gbs
    }

    #[test]
    fn a_window_counts_only_its_own_rounds() {
        let f = frames();
        let w =
            |a: u64, b: u64| Span::Window(TimeSpec::Offset(a * 1000), TimeSpec::Offset(b * 1000));
        let first = snapshot(|| f.iter().cloned(), w(0, 59)).unwrap();
        let second = snapshot(|| f.iter().cloned(), w(60, 119)).unwrap();
        assert!((median(&first) - 10.0).abs() < 0.01, "{}", median(&first));
        assert!((median(&second) - 5.0).abs() < 0.01, "{}", median(&second));
        // Every round of a window counts, not only its cell's last `--rounds` (21): 40 fast
        // and 20 slow ones are fast; the last 21 alone would be slow.
        let across = snapshot(|| f.iter().cloned(), w(20, 79)).unwrap();
        assert!((median(&across) - 10.0).abs() < 0.01, "{}", median(&across));
        assert_eq!(across.cells[0].figures.rounds, 60);
        assert_eq!(first.cells.len(), 1);
        assert_eq!(second.taken, rfc3339(1000 + 119));
    }

    #[test]
    fn a_moment_is_the_state_then_and_an_empty_window_is_refused() {
        let f = frames();
        // The statistics cover the last 21 rounds: at 65 s, 15 fast ones and 6 slow ones; at
        // 80 s, 5 fast ones and 16 slow ones.
        let at = |s: u64| {
            median(&snapshot(|| f.iter().cloned(), Span::At(TimeSpec::Offset(s * 1000))).unwrap())
        };
        assert!((at(65) - 10.0).abs() < 0.01, "{}", at(65));
        assert!((at(80) - 5.0).abs() < 0.01, "{}", at(80));
        let none = Span::Window(TimeSpec::Offset(500_000), TimeSpec::Offset(600_000));
        assert!(snapshot(|| f.iter().cloned(), none).is_err());
    }

    #[test]
    fn the_end_is_the_last_frame_and_every_recorded_op_has_its_cells() {
        let mut f = frames();
        let Body::Header(h) = &mut f[0].body else {
            unreachable!()
        };
        h.frame.grid.ops = vec!["copy".into(), "triad".into()];
        let mut r = round(1, 1, 3.0);
        r.cell.op = Op::Copy;
        f.push(Frame {
            t_ms: 1_000_000 + 120_000,
            body: Body::Round(Box::new(r)),
        });
        let s = snapshot(|| f.iter().cloned(), Span::At(TimeSpec::Absolute(u64::MAX))).unwrap();
        assert_eq!(
            s.taken,
            rfc3339(1000 + 120),
            "the last frame's time, not the end of time"
        );
        let of = |op: &str| {
            s.cells
                .iter()
                .find(|c| c.op == op && c.set == 1 && c.threads == 1)
        };
        assert!((of("copy").unwrap().figures.median_gbs - 3.0).abs() < 0.01);
        assert!((of("triad").unwrap().figures.median_gbs - 5.0).abs() < 0.01);
        // A recording from before ops were recorded ran the triad alone.
        assert_eq!(ops_of(&[]), vec![Op::Triad]);
    }

    #[test]
    fn times_read_as_offsets_or_as_rfc3339() {
        assert_eq!(TimeSpec::parse("90"), Ok(TimeSpec::Offset(90_000)));
        assert_eq!(TimeSpec::parse("4m"), Ok(TimeSpec::Offset(240_000)));
        assert_eq!(TimeSpec::parse("1h30m"), Ok(TimeSpec::Offset(5_400_000)));
        assert_eq!(TimeSpec::parse("1.5s"), Ok(TimeSpec::Offset(1500)));
        assert_eq!(
            TimeSpec::parse("1970-01-01T00:01:00Z"),
            Ok(TimeSpec::Absolute(60_000))
        );
        assert!(TimeSpec::parse("soon").is_err());
        assert!(TimeSpec::parse("").is_err());
    }
}
