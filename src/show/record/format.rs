//! The recording's bytes: a file is a magic line and then frames, appended and never rewritten.
//!
//! A frame is `len: u32 LE`, `crc: u32 LE` (CRC-32 of the payload) and the payload: `kind: u8`,
//! `t_ms: u64 LE` (wall clock, ms since the epoch) and the body. A frame cut short by a crash
//! (a torn tail) is found by its length, a damaged one by its checksum; the reader skips both.
//!
//! Bodies: a round, which is nearly all of a recording (tens a second), is a fixed little-endian
//! layout of about 60 bytes plus 40 a thread, a third of its JSON; everything rare (the header
//! with the run's description, host samples, the engine's other events) is JSON of the wire
//! types below, so that a field added later reads back as its default.

use crate::engine::events::{
    By, Checksum, Choice, Event, Pick, Placement, RoundRecord, ThreadTiming, TrialSummary,
};
use crate::engine::kernel::{Op, Variant};
use crate::engine::plan::CellId;
use crate::machine::counters::Counts;
use crate::machine::host::HostSample;
pub(crate) use crate::show::report::HostWire;
use crate::show::report::Snapshot;
use crate::show::report::model as wire;
use serde::{Deserialize, Serialize};

/// The first bytes of every recording file; the last byte is the format's version.
pub(crate) const MAGIC: &[u8; 8] = b"STOPREC\x01";

/// A frame longer than this is damage, not data: the reader stops there (it cannot resync).
pub(crate) const MAX_FRAME: usize = 16 << 20;

/// Bytes before a frame's payload: its length and its checksum.
pub(crate) const FRAME_HEAD: usize = 8;

const KIND_HEADER: u8 = 1;
const KIND_ROUND: u8 = 2;
const KIND_HOST: u8 = 3;
const KIND_EVENT: u8 = 4;
const KIND_GAP: u8 = 5;
/// Added after the first recordings, under the same version byte: a reader that predates it
/// skips it (`Body::Unknown`), and a recording without it replays with its episodes judged
/// again from the rounds.
const KIND_WATCH: u8 = 6;

/// What a session records once, at the start of each file: the run's description as a snapshot
/// with no cells (machine, grid, settings), and what the statistics need to judge the cells.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// The rounds each cell's statistics cover (`--rounds`).
    pub(crate) window: usize,
    pub(crate) vendor_gbs: Option<f64>,
    pub(crate) ghz: Option<f64>,
    pub(crate) cpus: Option<usize>,
    pub(crate) not_a_measurement: bool,
    pub(crate) frame: Snapshot,
    /// The contention watch's thresholds (`--contention-drop`, `--contention-rounds`); None in
    /// recordings made before they were recorded.
    #[serde(default)]
    pub(crate) contention: Option<(f64, u32)>,
}

/// A cell as the recording names it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellWire {
    /// The cell's op; recordings made before ops were recorded hold triad cells only.
    #[serde(default, with = "op_by_name")]
    op: Op,
    set: usize,
    threads: usize,
    #[serde(default)]
    rerun: bool,
}

impl From<CellId> for CellWire {
    fn from(c: CellId) -> CellWire {
        CellWire {
            op: c.op,
            set: c.set,
            threads: c.threads,
            rerun: c.rerun,
        }
    }
}

impl From<CellWire> for CellId {
    fn from(c: CellWire) -> CellId {
        CellId {
            op: c.op,
            set: c.set,
            threads: c.threads,
            rerun: c.rerun,
        }
    }
}

/// The engine's events other than rounds that change what the screens and the table show
/// (first-touch progress and gaps do not; the end is the end of the frames).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventWire {
    Visit {
        cell: CellWire,
        passes: u32,
    },
    Checksum {
        cell: CellWire,
        expected: i64,
        actual: f64,
        ok: bool,
    },
    Allocated {
        cell: CellWire,
        bytes: u64,
        huge_bytes: Option<u64>,
    },
    CellFailed {
        cell: CellWire,
        reason: String,
    },
    /// A failed cell tried again (its failed mark comes off). Recordings made before retries
    /// were recorded have none, and replay as they always did.
    CellRetry {
        cell: CellWire,
        tries: u32,
    },
    /// A working set's loop and layout, and what it was chosen against.
    Choice {
        /// The op whose loop this is (triad in recordings made before ops were recorded).
        #[serde(default, with = "op_by_name")]
        op: Op,
        set: usize,
        kernel: String,
        huge_pages: bool,
        kernel_by: String,
        layout_by: String,
        /// The runner-up's loop and layout, and the kept one's rate over its rate.
        #[serde(default)]
        runner_up: Option<(String, bool, f64)>,
        #[serde(default)]
        trial: Option<TrialWire>,
    },
    /// Where a sample of a cell's pages sits (`pages`), or why that is not known.
    Placement {
        cell: CellWire,
        pages: Option<wire::Pages>,
        unknown: Option<String>,
    },
    Paused,
    Resumed,
    Error(String),
}

/// A trial's summary (`TrialSummary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialWire {
    threads: Vec<usize>,
    candidates: usize,
    rounds: u32,
    took_ns: u64,
    margin: f64,
}

/// The loop of `op` named `name` in the table (every op has an `avx2 ymm`).
fn variant(op: Op, name: &str) -> Option<&'static Variant> {
    Variant::all().find(|v| v.op == op && v.name == name)
}

/// An op on the wire: its name (`copy`, `mix-3:1`), so that a table reordered later still reads.
mod op_by_name {
    use crate::engine::kernel::Op;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(op: &Op, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(op.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

fn by_name(name: &str) -> By {
    [By::Trial, By::Rule, By::Pinned, By::Only]
        .into_iter()
        .find(|b| b.name() == name)
        .unwrap_or(By::Rule)
}

impl EventWire {
    /// The wire form of an event worth recording; None for the others.
    pub fn of(ev: &Event) -> Option<EventWire> {
        Some(match ev {
            Event::Visit { cell, passes } => EventWire::Visit {
                cell: (*cell).into(),
                passes: *passes,
            },
            Event::Checksum(c) => EventWire::Checksum {
                cell: c.cell.into(),
                expected: c.expected,
                actual: c.actual,
                ok: c.ok,
            },
            Event::Allocated {
                cell,
                bytes,
                huge_bytes,
            } => EventWire::Allocated {
                cell: (*cell).into(),
                bytes: *bytes,
                huge_bytes: *huge_bytes,
            },
            Event::CellFailed { cell, reason } => EventWire::CellFailed {
                cell: (*cell).into(),
                reason: reason.clone(),
            },
            Event::CellRetry { cell, tries } => EventWire::CellRetry {
                cell: (*cell).into(),
                tries: *tries,
            },
            Event::Choice(c) => EventWire::Choice {
                op: c.op,
                set: c.set,
                kernel: c.kept.variant.name.to_string(),
                huge_pages: c.kept.huge_pages,
                kernel_by: c.kernel_by.name().into(),
                layout_by: c.layout_by.name().into(),
                runner_up: c
                    .runner_up
                    .map(|(p, r)| (p.variant.name.to_string(), p.huge_pages, r)),
                trial: c.trial.as_ref().map(|t| TrialWire {
                    threads: t.threads.clone(),
                    candidates: t.candidates,
                    rounds: t.rounds,
                    took_ns: t.took_ns,
                    margin: t.margin,
                }),
            },
            Event::Placement { cell, pages } => EventWire::Placement {
                cell: (*cell).into(),
                pages: match pages {
                    Placement::Sampled(p) => Some(p.into()),
                    Placement::Unknown(_) => None,
                },
                unknown: match pages {
                    Placement::Sampled(_) => None,
                    Placement::Unknown(why) => Some(why.clone()),
                },
            },
            Event::Paused => EventWire::Paused,
            Event::Resumed => EventWire::Resumed,
            Event::Error(e) => EventWire::Error(e.clone()),
            _ => return None,
        })
    }

    /// The event again; None for a choice whose loop this build does not have.
    pub fn event(&self) -> Option<Event> {
        Some(match self {
            EventWire::Visit { cell, passes } => Event::Visit {
                cell: (*cell).into(),
                passes: *passes,
            },
            EventWire::Checksum {
                cell,
                expected,
                actual,
                ok,
            } => Event::Checksum(Checksum {
                cell: (*cell).into(),
                expected: *expected,
                actual: *actual,
                ok: *ok,
            }),
            EventWire::Allocated {
                cell,
                bytes,
                huge_bytes,
            } => Event::Allocated {
                cell: (*cell).into(),
                bytes: *bytes,
                huge_bytes: *huge_bytes,
            },
            EventWire::CellFailed { cell, reason } => Event::CellFailed {
                cell: (*cell).into(),
                reason: reason.clone(),
            },
            EventWire::CellRetry { cell, tries } => Event::CellRetry {
                cell: (*cell).into(),
                tries: *tries,
            },
            EventWire::Choice {
                op,
                set,
                kernel,
                huge_pages,
                kernel_by,
                layout_by,
                runner_up,
                trial,
            } => Event::Choice(Box::new(Choice {
                op: *op,
                set: *set,
                kept: Pick {
                    variant: variant(*op, kernel)?,
                    huge_pages: *huge_pages,
                },
                kernel_by: by_name(kernel_by),
                layout_by: by_name(layout_by),
                runner_up: match runner_up {
                    Some((name, huge_pages, ratio)) => Some((
                        Pick {
                            variant: variant(*op, name)?,
                            huge_pages: *huge_pages,
                        },
                        *ratio,
                    )),
                    None => None,
                },
                trial: trial.as_ref().map(|t| TrialSummary {
                    threads: t.threads.clone(),
                    candidates: t.candidates,
                    rounds: t.rounds,
                    took_ns: t.took_ns,
                    margin: t.margin,
                }),
            })),
            EventWire::Placement {
                cell,
                pages,
                unknown,
            } => Event::Placement {
                cell: (*cell).into(),
                pages: match (pages, unknown) {
                    (Some(p), _) => Placement::Sampled(p.into()),
                    (None, why) => Placement::Unknown(why.clone().unwrap_or_default()),
                },
            },
            EventWire::Paused => Event::Paused,
            EventWire::Resumed => Event::Resumed,
            EventWire::Error(e) => Event::Error(e.clone()),
        })
    }
}

/// What the contention watch said of a cell: it learned a reference, or an episode began, still
/// lasts or ended (with the episode as it stood then). The live monitor records its own
/// watch's changes (which the keys steer: focus, reset, pin), a service those of a watch fed
/// the same rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchWire {
    /// `learned`, `began`, `lasting` or `ended`.
    pub(crate) change: String,
    pub(crate) cell: CellWire,
    /// The cell's reference after the change.
    #[serde(default)]
    pub(crate) reference: Option<ReferenceWire>,
    #[serde(default)]
    pub(crate) episode: Option<EpisodeWire>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceWire {
    pub(crate) gbs: f64,
    /// `learned`, `baseline` or `pinned`.
    pub(crate) source: String,
}

/// An episode as it stood at a change (`judge::watch::episode::Episode`, times as wall-clock
/// ms since the epoch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeWire {
    pub(crate) id: u64,
    /// `contention` or `disturbance`.
    pub(crate) kind: String,
    pub(crate) started_ms: u64,
    pub(crate) ended_ms: Option<u64>,
    pub(crate) cut_short: bool,
    #[serde(default)]
    pub(crate) superseded: bool,
    pub(crate) reference: Option<ReferenceWire>,
    pub(crate) rounds: u64,
    pub(crate) disturbed_rounds: u64,
    pub(crate) mean_gbs: f64,
    /// None before the first round counted (no worst rate yet).
    pub(crate) worst_gbs: Option<f64>,
    /// The worker most off its CPU and its share of the round.
    #[serde(default)]
    pub(crate) worst_off_cpu: Option<(usize, f64)>,
    #[serde(default)]
    pub(crate) suspects: Vec<wire::Suspect>,
}

/// What a frame holds, decoded.
#[derive(Debug, Clone)]
pub enum Body {
    Header(Box<Header>),
    Round(Box<RoundRecord>),
    Host(HostWire),
    Event(EventWire),
    /// A change of the contention watch.
    Watch(Box<WatchWire>),
    /// Frames the writer could not write (a full channel or disk) since the last gap frame.
    Gap(u64),
    /// A kind this build does not know (a later version's): skipped.
    Unknown(u8),
}

/// A frame with its time.
#[derive(Debug, Clone)]
pub struct Frame {
    pub(crate) t_ms: u64,
    pub(crate) body: Body,
}

/// The framed bytes of one payload.
fn framed(kind: u8, t_ms: u64, body: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(9 + body.len());
    payload.push(kind);
    payload.extend_from_slice(&t_ms.to_le_bytes());
    payload.extend_from_slice(body);
    let mut out = Vec::with_capacity(FRAME_HEAD + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

fn json_frame(kind: u8, t_ms: u64, value: &impl Serialize) -> Vec<u8> {
    // The wire types serialise infallibly (no maps with non-string keys).
    framed(kind, t_ms, &serde_json::to_vec(value).unwrap_or_default())
}

pub(crate) fn header_frame(t_ms: u64, h: &Header) -> Vec<u8> {
    json_frame(KIND_HEADER, t_ms, h)
}

pub(crate) fn host_frame(t_ms: u64, h: &HostSample) -> Vec<u8> {
    json_frame(KIND_HOST, t_ms, &HostWire::from(h))
}

pub(crate) fn watch_frame(t_ms: u64, w: &WatchWire) -> Vec<u8> {
    json_frame(KIND_WATCH, t_ms, w)
}

pub(crate) fn gap_frame(t_ms: u64, dropped: u64) -> Vec<u8> {
    framed(KIND_GAP, t_ms, &dropped.to_le_bytes())
}

/// The frame of an event worth recording (a round or one of `EventWire`'s); None for others.
pub(crate) fn event_frame(t_ms: u64, ev: &Event) -> Option<Vec<u8>> {
    match ev {
        Event::Round(r) => Some(framed(KIND_ROUND, t_ms, &round_bytes(r))),
        _ => EventWire::of(ev).map(|w| json_frame(KIND_EVENT, t_ms, &w)),
    }
}

const WARMUP: u8 = 1;
const LATE: u8 = 2;
const RERUN: u8 = 4;
/// The flags' high four bits hold the op, as its place in `Op::ALL` (0, triad, in recordings
/// made before ops were recorded, which older readers ignore).
const OP_SHIFT: u32 = 4;
const _: () = assert!(
    Op::ALL.len() <= 1 << (8 - OP_SHIFT),
    "the ops outgrew the flags"
);

fn op_bits(op: Op) -> u8 {
    let index = Op::ALL.iter().position(|&o| o == op).unwrap_or(0) as u8;
    index << OP_SHIFT
}

/// The op of a round's flags; None for a place past this build's ops (a later version's op).
fn op_of(flags: u8) -> Option<Op> {
    Op::ALL.get(usize::from(flags >> OP_SHIFT)).copied()
}

/// A round: cell, flags, passes, span, bytes, then per thread its stamps, CPUs, bytes and the
/// counters it has (a mask, then the present ones).
fn round_bytes(r: &RoundRecord) -> Vec<u8> {
    let mut b = Vec::with_capacity(40 + r.threads.len() * 48);
    b.extend_from_slice(&(r.cell.set as u32).to_le_bytes());
    b.extend_from_slice(&(r.cell.threads as u32).to_le_bytes());
    let flags = (u8::from(r.warmup) * WARMUP)
        | (u8::from(r.late) * LATE)
        | (u8::from(r.cell.rerun) * RERUN)
        | op_bits(r.cell.op);
    b.push(flags);
    b.extend_from_slice(&r.passes.to_le_bytes());
    b.extend_from_slice(&r.span_ns.to_le_bytes());
    b.extend_from_slice(&r.bytes.to_le_bytes());
    b.extend_from_slice(&(r.threads.len() as u32).to_le_bytes());
    for t in &r.threads {
        b.extend_from_slice(&t.start_ns.to_le_bytes());
        b.extend_from_slice(&t.end_ns.to_le_bytes());
        b.extend_from_slice(&t.cpu_start.to_le_bytes());
        b.extend_from_slice(&t.cpu_end.to_le_bytes());
        b.extend_from_slice(&t.bytes.to_le_bytes());
        let counts = counts_list(&t.counters);
        let mask = counts
            .iter()
            .enumerate()
            .fold(0u8, |m, (i, c)| m | (u8::from(c.is_some()) << i));
        b.push(mask);
        for v in counts.into_iter().flatten() {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b
}

fn counts_list(c: &Counts) -> [Option<u64>; 7] {
    [
        c.task_clock_ns,
        c.switches,
        c.migrations,
        c.page_faults,
        c.cycles,
        c.instructions,
        c.llc_misses,
    ]
}

/// Reads little-endian fields off a byte slice; None past its end.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn i32(&mut self) -> Option<i32> {
        self.take().map(i32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
}

fn round_from(bytes: &[u8]) -> Option<RoundRecord> {
    let mut c = Cursor(bytes);
    let set = c.u32()? as usize;
    let threads = c.u32()? as usize;
    let flags = c.u8()?;
    let passes = c.u32()?;
    let span_ns = c.u64()?;
    let total = c.u64()?;
    let n = c.u32()? as usize;
    // Each thread takes at least 33 bytes: a count past what is left is damage.
    if n > c.0.len() / 33 {
        return None;
    }
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        let start_ns = c.u64()?;
        let end_ns = c.u64()?;
        let cpu_start = c.i32()?;
        let cpu_end = c.i32()?;
        let bytes = c.u64()?;
        let mask = c.u8()?;
        let mut v = [None; 7];
        for (i, slot) in v.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *slot = Some(c.u64()?);
            }
        }
        list.push(ThreadTiming {
            start_ns,
            end_ns,
            cpu_start,
            cpu_end,
            bytes,
            counters: Counts {
                task_clock_ns: v[0],
                switches: v[1],
                migrations: v[2],
                page_faults: v[3],
                cycles: v[4],
                instructions: v[5],
                llc_misses: v[6],
            },
        });
    }
    Some(RoundRecord {
        cell: CellId {
            op: op_of(flags)?,
            set,
            threads,
            rerun: flags & RERUN != 0,
        },
        warmup: flags & WARMUP != 0,
        passes,
        span_ns,
        bytes: total,
        late: flags & LATE != 0,
        threads: list,
    })
}

/// Decodes a payload whose checksum held; None when its body does not parse (counted as
/// damage by the reader).
pub(crate) fn decode(payload: &[u8]) -> Option<Frame> {
    let (&kind, rest) = payload.split_first()?;
    let (t, body) = rest.split_first_chunk::<8>()?;
    let t_ms = u64::from_le_bytes(*t);
    let body = match kind {
        KIND_HEADER => Body::Header(Box::new(serde_json::from_slice(body).ok()?)),
        KIND_ROUND => Body::Round(Box::new(round_from(body)?)),
        KIND_HOST => Body::Host(serde_json::from_slice(body).ok()?),
        KIND_EVENT => Body::Event(serde_json::from_slice(body).ok()?),
        KIND_WATCH => Body::Watch(Box::new(serde_json::from_slice(body).ok()?)),
        KIND_GAP => Body::Gap(u64::from_le_bytes(*body.first_chunk::<8>()?)),
        k => Body::Unknown(k),
    };
    Some(Frame { t_ms, body })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A header whose frame is a snapshot fixture's (sets l2 and dram, threads 1, 2, 4).
    pub(crate) fn header() -> Header {
        let text = include_str!("../../../tests/fixtures/snapshots/a.json");
        let frame = crate::show::report::from_json(text, std::path::Path::new("a.json")).unwrap();
        Header {
            window: 21,
            vendor_gbs: None,
            ghz: None,
            cpus: Some(4),
            not_a_measurement: false,
            frame,
            contention: None,
        }
    }

    pub(crate) fn round(set: usize, threads: usize, gbs: f64) -> RoundRecord {
        let ns = 20_000_000u64;
        let bytes = (gbs * ns as f64) as u64 / threads as u64;
        let list = (0..threads)
            .map(|i| ThreadTiming {
                start_ns: 1000,
                end_ns: 1000 + ns,
                cpu_start: i as i32,
                cpu_end: i as i32,
                bytes,
                counters: Counts {
                    switches: Some(0),
                    task_clock_ns: Some(ns),
                    ..Counts::default()
                },
            })
            .collect();
        RoundRecord::from_threads(CellId::new(set, threads), false, 3, list)
    }

    fn payload(frame: &[u8]) -> &[u8] {
        &frame[FRAME_HEAD..]
    }

    #[test]
    fn a_round_reads_back_as_it_was_written() {
        let mut r = round(1, 2, 12.5);
        r.threads[1].counters.llc_misses = Some(77);
        r.threads[0].counters.switches = None;
        let f = event_frame(42, &Event::Round(Box::new(r.clone()))).unwrap();
        let got = decode(payload(&f)).unwrap();
        assert_eq!(got.t_ms, 42);
        match got.body {
            Body::Round(back) => assert_eq!(*back, r),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_choice_a_checksum_a_failure_and_a_retry_read_back() {
        let kept = Pick {
            variant: Variant::all().next().unwrap(),
            huge_pages: true,
        };
        let choice = Event::Choice(Box::new(Choice {
            op: Op::Triad,
            set: 1,
            kept,
            kernel_by: By::Trial,
            layout_by: By::Rule,
            runner_up: Some((
                Pick {
                    huge_pages: false,
                    ..kept
                },
                1.04,
            )),
            trial: Some(TrialSummary {
                threads: vec![1, 2],
                candidates: 4,
                rounds: 7,
                took_ns: 5,
                margin: 0.01,
            }),
        }));
        let sum = Event::Checksum(Checksum {
            cell: CellId::new(0, 2),
            expected: 10,
            actual: 9.0,
            ok: false,
        });
        let failed = Event::CellFailed {
            cell: CellId::new(1, 2),
            reason: "stopped before the container's memory limit".into(),
        };
        let retry = Event::CellRetry {
            cell: CellId::new(1, 2),
            tries: 3,
        };
        for ev in [choice, sum, failed, retry] {
            let f = event_frame(1, &ev).unwrap();
            match decode(payload(&f)).unwrap().body {
                Body::Event(w) => assert_eq!(w.event().unwrap(), ev),
                other => panic!("{other:?}"),
            }
        }
        assert!(event_frame(1, &Event::Gap).is_none());
    }

    #[test]
    fn every_op_of_a_round_and_of_a_choice_reads_back() {
        for op in Op::ALL {
            let mut r = round(1, 2, 12.5);
            r.cell.op = op;
            r.cell.rerun = true;
            let f = event_frame(7, &Event::Round(Box::new(r.clone()))).unwrap();
            match decode(payload(&f)).unwrap().body {
                Body::Round(back) => assert_eq!(*back, r, "{op}"),
                other => panic!("{other:?}"),
            }
            // Every op but the triad has a loop called `avx2 ymm`: the op says whose it is.
            let kept = Pick {
                variant: Variant::all().find(|v| v.op == op).unwrap(),
                huge_pages: false,
            };
            let choice = Event::Choice(Box::new(Choice {
                op,
                set: 0,
                kept,
                kernel_by: By::Trial,
                layout_by: By::Rule,
                runner_up: None,
                trial: None,
            }));
            let f = event_frame(1, &choice).unwrap();
            match decode(payload(&f)).unwrap().body {
                Body::Event(w) => assert_eq!(w.event().unwrap(), choice, "{op}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_recording_made_before_ops_were_recorded_reads_as_triad() {
        // A round without op bits in its flags, and a cell and a choice without an op field.
        let mut r = round(0, 1, 10.0);
        r.cell.op = Op::Copy;
        let f = event_frame(7, &Event::Round(Box::new(r))).unwrap();
        let mut p = payload(&f).to_vec();
        // kind, t_ms (8 bytes), set (4), threads (4), then the flags.
        p[1 + 8 + 8] &= (1 << OP_SHIFT) - 1;
        match decode(&p).unwrap().body {
            Body::Round(back) => assert_eq!(back.cell.op, Op::Triad),
            other => panic!("{other:?}"),
        }
        let old: EventWire = serde_json::from_str(
            r#"{"choice": {"set": 0, "kernel": "portable", "huge_pages": false,
                "kernel_by": "rule", "layout_by": "rule"}}"#,
        )
        .unwrap();
        match old.event().unwrap() {
            Event::Choice(c) => assert_eq!((c.op, c.kept.variant.op), (Op::Triad, Op::Triad)),
            other => panic!("{other:?}"),
        }
        let cell: CellWire = serde_json::from_str(r#"{"set": 1, "threads": 2}"#).unwrap();
        assert_eq!(CellId::from(cell), CellId::new(1, 2));
        // A later version's op (a place past this build's) is damage, not a triad.
        p[1 + 8 + 8] |= 0xF0;
        assert!(decode(&p).is_none());
    }

    #[test]
    fn a_header_recorded_before_the_thresholds_reads_back_without_them() {
        let mut h = header();
        h.contention = Some((0.2, 7));
        let f = header_frame(3, &h);
        match decode(payload(&f)).unwrap().body {
            Body::Header(back) => assert_eq!(back.contention, Some((0.2, 7))),
            other => panic!("{other:?}"),
        }
        // The header as the first recordings wrote it: no `contention` field.
        let mut old = serde_json::to_value(header()).unwrap();
        old.as_object_mut().unwrap().remove("contention");
        let f = framed(KIND_HEADER, 3, &serde_json::to_vec(&old).unwrap());
        match decode(payload(&f)).unwrap().body {
            Body::Header(back) => assert_eq!(back.contention, None),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_kind_this_build_does_not_know_is_skipped_not_damage() {
        // What an older build makes of a watch frame, and this one of a later version's kind.
        // Times of late 2026: a reader refuses times no recorder writes.
        let t = 1_780_000_000_000;
        let later = framed(200, t + 9, b"{}");
        assert!(matches!(
            decode(payload(&later)).unwrap().body,
            Body::Unknown(200)
        ));
        let mut bytes = MAGIC.to_vec();
        for f in [gap_frame(t + 1, 1), later, gap_frame(t + 2, 2)] {
            bytes.extend_from_slice(&f);
        }
        let mut d = crate::show::record::reader::Damage::default();
        let got = crate::show::record::reader::frames_of(&bytes, &mut d).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(d, crate::show::record::reader::Damage::default());
    }

    #[test]
    fn a_frame_says_its_length_and_checksum() {
        let f = gap_frame(5, 3);
        let len = u32::from_le_bytes(f[0..4].try_into().unwrap()) as usize;
        assert_eq!(len, f.len() - FRAME_HEAD);
        let crc = u32::from_le_bytes(f[4..8].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(payload(&f)));
    }

    #[test]
    fn a_host_sample_reads_back_with_every_field_the_panel_takes() {
        let sample = HostSample {
            load: [1.0, 2.0, 3.0],
            mem_available: 5,
            mem_total: 8,
            swap_used: 1,
            has_rates: true,
            elapsed_s: 1.5,
            steal_pct: Some(2.5),
            cpu_quota: Some(1.5),
            throttled_ratio: Some(0.25),
            ..HostSample::default()
        };
        let f = host_frame(4, &sample);
        match decode(payload(&f)).unwrap().body {
            Body::Host(w) => assert_eq!(HostSample::from(&w), sample),
            other => panic!("{other:?}"),
        }
    }
}
