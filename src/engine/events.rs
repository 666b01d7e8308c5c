//! What flows between the engine and whoever watches it: events out, commands in.

use super::kernel::{Op, Variant};
use super::plan::{CellId, Grid};
use crate::machine::counters::Counts;
use std::collections::BTreeMap;
use std::fmt;

/// A round is late when its span exceeds the slowest thread's own time by more than this.
const LATE_FACTOR: f64 = 1.2;

/// How a working set's loop, or its page layout, was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Timed against the alternatives.
    Trial,
    /// A rule: huge pages for arrays in memory, where they win by a few per cent and a second
    /// mapping of a DRAM-sized set for a trial would cost more than the trial is worth; and the
    /// default loop and layout when there was no room for a trial's arrays.
    Rule,
    /// Given on the command line.
    Pinned,
    /// There was nothing else to choose (one loop for these stores).
    Only,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Trial => "trial",
            By::Rule => "rule",
            By::Pinned => "pinned",
            By::Only => "only",
        }
    }
}

/// A loop and a page layout: one candidate of a trial.
#[derive(Debug, Clone, Copy)]
pub struct Pick {
    pub variant: &'static Variant,
    /// Whether the arrays were advised onto transparent huge pages (MADV_HUGEPAGE) or away
    /// from them (MADV_NOHUGEPAGE).
    pub huge_pages: bool,
}

impl PartialEq for Pick {
    fn eq(&self, other: &Pick) -> bool {
        self.variant.name == other.variant.name && self.huge_pages == other.huge_pages
    }
}

/// The layout's words: `huge pages` or `no huge pages`.
pub(crate) fn layout_name(huge_pages: bool) -> &'static str {
    if huge_pages {
        "huge pages"
    } else {
        "no huge pages"
    }
}

impl fmt::Display for Pick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.variant.name, layout_name(self.huge_pages))
    }
}

/// What a trial was: for the report and the log.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialSummary {
    /// The thread counts it ran at.
    pub threads: Vec<usize>,
    pub candidates: usize,
    /// Timed rounds per candidate at each thread count (the fewest, when a busy machine cut
    /// the trial short).
    pub(crate) rounds: u32,
    /// From the start of its first mapping to the decision, ns.
    pub took_ns: u64,
    /// The lead the kept candidate needed over the default, as a fraction.
    pub margin: f64,
}

/// What a working set runs with for the rest of the run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The op the loop runs (each op's loop is chosen on its own).
    pub op: Op,
    /// The working set, as an index into the grid's sets.
    pub set: usize,
    pub kept: Pick,
    pub kernel_by: By,
    pub layout_by: By,
    /// After a trial: the best other candidate, and the kept one's rate over its rate (the
    /// ratio of their trial medians, against the default; under 1 when the default was kept
    /// though another was ahead by less than the margin).
    pub runner_up: Option<(Pick, f64)>,
    pub trial: Option<TrialSummary>,
}

impl Choice {
    /// `avx2 ymm mul+add, huge pages (1.05 × avx2 xmm fma, huge pages; loop: trial, pages:
    /// trial; 0.31 s)`, for the log and the headless progress.
    pub fn describe(&self) -> String {
        let mut why = Vec::new();
        match (&self.runner_up, &self.trial) {
            (Some((p, ratio)), _) => why.push(format!("{ratio:.2} × {p}")),
            // Every pair of some thread count had a round a neighbour held back.
            (None, Some(t)) if t.candidates > 1 => {
                why.push("the default: the machine held back the trial's rounds".into())
            }
            _ => {}
        }
        why.push(format!(
            "loop: {}, pages: {}",
            self.kernel_by.name(),
            self.layout_by.name()
        ));
        if let Some(t) = &self.trial {
            why.push(format!("trial {:.2} s", t.took_ns as f64 / 1e9));
        }
        format!("{} ({})", self.kept, why.join("; "))
    }
}

/// One thread's part of a round, from its own clock reads and counters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThreadTiming {
    /// CLOCK_MONOTONIC_RAW after leaving the start barrier, ns.
    pub start_ns: u64,
    /// CLOCK_MONOTONIC_RAW before arriving at the end barrier, ns.
    pub end_ns: u64,
    /// The CPU the thread was on at its start and end stamps (-1 where unknown).
    pub cpu_start: i32,
    pub cpu_end: i32,
    /// Bytes counted for this thread in the round (the op's bytes per element per pass).
    pub bytes: u64,
    /// What its counters counted from just before its start stamp to just after its end
    /// stamp (`None` for each counter the OS refused or `--counters off`).
    pub counters: Counts,
}

impl ThreadTiming {
    pub fn ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns).max(1)
    }

    /// The thread's own rate, decimal GB/s (bytes per ns).
    pub fn gbs(&self) -> f64 {
        self.bytes as f64 / self.ns() as f64
    }

    pub(crate) fn migrated(&self) -> bool {
        self.cpu_start != self.cpu_end
    }

    /// How long the thread was off its CPU inside its span, where the task clock is counted:
    /// its own time less the time it ran.
    pub(crate) fn off_cpu_ns(&self) -> Option<u64> {
        self.counters
            .task_clock_ns
            .map(|on| self.ns().saturating_sub(on))
    }

    /// Whether it was switched out involuntarily inside its span for more than
    /// [`OFF_CPU_SHARE`] of it (any switch where the task clock is not counted): the times
    /// it was switched out, or None when it was not (or switches are not counted).
    pub(crate) fn switched_out(&self) -> Option<u64> {
        let n = self.counters.switches.filter(|&n| n > 0)?;
        match self.off_cpu_ns() {
            Some(off) if off as f64 <= OFF_CPU_SHARE * self.ns() as f64 => None,
            _ => Some(n),
        }
    }
}

/// A switched-out worker disturbs its round when off its CPU for more than this share of its
/// own span: a wake-up of another thread for a few microseconds is not a disturbance; a
/// scheduler tick of a few milliseconds in a 20 ms round is.
pub(crate) const OFF_CPU_SHARE: f64 = 0.01;

/// One round of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundRecord {
    pub cell: CellId,
    /// Warm-up rounds are sent too (the TUI shows that something runs) but never counted.
    pub warmup: bool,
    /// Passes each thread made over its partition.
    pub passes: u32,
    /// Latest end minus earliest start, ns.
    pub span_ns: u64,
    /// Bytes counted over all threads.
    pub bytes: u64,
    pub(crate) late: bool,
    pub threads: Vec<ThreadTiming>,
}

/// Whether a round with this span and this slowest thread time had a late thread.
fn is_late(span_ns: u64, slowest_thread_ns: u64) -> bool {
    span_ns as f64 > slowest_thread_ns as f64 * LATE_FACTOR
}

impl RoundRecord {
    /// Builds a record from the threads' stamps, computing span, bytes and lateness.
    pub fn from_threads(
        cell: CellId,
        warmup: bool,
        passes: u32,
        threads: Vec<ThreadTiming>,
    ) -> RoundRecord {
        let start = threads.iter().map(|t| t.start_ns).min().unwrap_or(0);
        let end = threads.iter().map(|t| t.end_ns).max().unwrap_or(0);
        let span_ns = end.saturating_sub(start).max(1);
        let slowest = threads.iter().map(|t| t.ns()).max().unwrap_or(1);
        RoundRecord {
            cell,
            warmup,
            passes,
            span_ns,
            bytes: threads.iter().map(|t| t.bytes).sum(),
            late: is_late(span_ns, slowest),
            threads,
        }
    }

    /// The round's rate: all bytes over the span, decimal GB/s.
    pub fn gbs(&self) -> f64 {
        self.bytes as f64 / self.span_ns as f64
    }

    /// Whether something outside the workers held one of them back in this round: a thread
    /// started late, or one was switched out (see [`ThreadTiming::switched_out`]).
    pub(crate) fn held_back(&self) -> bool {
        self.late || self.threads.iter().any(|t| t.switched_out().is_some())
    }

    pub fn fastest_thread_gbs(&self) -> f64 {
        self.threads.iter().map(|t| t.gbs()).fold(0.0, f64::max)
    }

    /// The slowest thread's rate (0 for a round with no threads).
    pub fn slowest_thread_gbs(&self) -> f64 {
        self.threads
            .iter()
            .map(|t| t.gbs())
            .reduce(f64::min)
            .unwrap_or(0.0)
    }
}

/// The check of `a` after a configuration: its sum against the integer reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Checksum {
    pub cell: CellId,
    /// The integer reference (negative for some ops over an even number of passes).
    pub expected: i64,
    pub actual: f64,
    pub ok: bool,
}

/// Where a sample of a cell's pages sat once they were in place for its threads (move_pages(2)
/// in query mode on a sample of each partition of each array), or why that is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Sampled(PagePlacement),
    /// The OS cannot say (macOS has no NUMA API; a kernel or sandbox that refuses the call).
    Unknown(String),
}

/// A sample of a cell's pages, by node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagePlacement {
    /// Pages asked about.
    pub sampled: u64,
    /// Of them, pages whose partition is meant for a node (its pinned thread's, or the bound
    /// node), and how many of those sit on it. Under `--interleave`, or with threads not
    /// pinned, no node is meant.
    pub meant: u64,
    pub on_meant: u64,
    /// Pages on each node, by node id.
    pub by_node: BTreeMap<usize, u64>,
    /// Pages the kernel placed on no node (not present).
    pub absent: u64,
}

impl PagePlacement {
    /// The share of pages on the node meant for them; None when no node was meant.
    pub fn share_on_meant(&self) -> Option<f64> {
        (self.meant > 0).then(|| self.on_meant as f64 / self.meant as f64)
    }

    /// "100 % on their threads' nodes (48 sampled: node 0 48)", or without a node meant
    /// "48 sampled: node 0 24, node 1 24".
    pub fn line(&self) -> String {
        let mut nodes: Vec<String> = self
            .by_node
            .iter()
            .map(|(n, c)| format!("node {n} {c}"))
            .collect();
        if self.absent > 0 {
            nodes.push(format!("{} not present", self.absent));
        }
        let nodes = nodes.join(", ");
        match self.share_on_meant() {
            Some(s) => format!(
                "{:.0} % on the node meant for them ({} sampled: {nodes})",
                s * 100.0,
                self.sampled
            ),
            None => format!("{} sampled: {nodes}", self.sampled),
        }
    }

    /// A few words for a panel: "75 % of 48 sampled on the node meant", or by node when no
    /// node was meant.
    pub(crate) fn brief(&self) -> String {
        match self.share_on_meant() {
            Some(s) => format!(
                "{:.0} % of {} sampled on the node meant",
                s * 100.0,
                self.sampled
            ),
            None => self.line(),
        }
    }
}

/// Where a working set's trial stands: sent between its steps (after a chunk of first touch,
/// between timed rounds; never inside one), at most about ten times a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialProgress {
    /// The working set, as an index into the grid's sets.
    pub set: usize,
    /// The thread count whose rounds run now (the widest while the arrays are touched).
    pub threads: usize,
    /// The candidate timed now (its index, of `candidates`); None while the trial's arrays are
    /// first touched.
    pub candidate: Option<(usize, Pick)>,
    pub candidates: usize,
    /// How far along, 0 to 1, and about how long is left, ns (from the first touch's rate so
    /// far, and the timed rounds' limit).
    pub done: f64,
    pub left_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Allocating,
    FirstTouch,
    /// Pages moved to the nodes of a new partition's threads (NUMA only).
    Moving,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Arrays for a cell are being allocated, first touched, or moved to its threads' nodes.
    Progress {
        cell: CellId,
        stage: Stage,
        done_bytes: u64,
        total_bytes: u64,
    },
    /// A cell's arrays are in place: how many bytes (three arrays) and how many of them sit on
    /// transparent huge pages (AnonHugePages of the mapping, from /proc/self/smaps; None when
    /// that could not be read, or where the OS has none, macOS).
    Allocated {
        cell: CellId,
        bytes: u64,
        huge_bytes: Option<u64>,
    },
    /// The bytes of arrays the engine holds now, sent when that changes (mapped, kept, let go).
    ArraysHeld(u64),
    /// Where a sample of a cell's pages sits, once they are in place for its threads (each
    /// visit: a partition for another thread count may have moved them).
    Placement {
        cell: CellId,
        pages: Placement,
    },
    /// A cell could not run: its arrays could not be mapped (the engine goes on with the next
    /// cell and skips this one until the grid changes), or a worker died in it (an
    /// `Event::Error` and the end follow).
    CellFailed {
        cell: CellId,
        reason: String,
    },
    /// A failed cell is tried again (a service's backoff came due, or the person focused it or
    /// pressed `R`): it is no longer failed, and a `CellFailed` follows if it fails again.
    /// `tries`: how often it was tried again since it last ran.
    CellRetry {
        cell: CellId,
        tries: u32,
    },
    /// A working set's loop and page layout, settled before its first round (by a trial on
    /// the set's first visit); sent again for its index after the grid changes.
    Choice(Box<Choice>),
    /// A working set's trial is under way (its `Choice` ends it).
    Trial(TrialProgress),
    /// A configuration starts on a cell (a visit, in sweep mode).
    Visit {
        cell: CellId,
        passes: u32,
    },
    Round(Box<RoundRecord>),
    Checksum(Checksum),
    Paused,
    Resumed,
    /// Answer to `Command::RequestGap`: no round runs and the workers are parked until
    /// `Command::GapDone` (or 50 ms): the moment to draw without disturbing a measurement.
    Gap,
    /// Something went wrong; the engine goes on where it can and says so.
    Error(String),
    /// The engine ended: the schedule is done, it was stopped, or a fatal error came before.
    Finished,
}

/// What a watcher can ask of a running engine. A command takes effect between rounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Cycle over every cell of the grid (the default in the TUI).
    Sweep,
    /// Run only this cell, continuously.
    Focus(CellId),
    /// Park every worker until `Resume`.
    Pause,
    Resume,
    /// Run rounds only this percentage of the time (1..=100).
    SetDuty(u8),
    /// Ask for a gap between rounds (answered by `Event::Gap`), e.g. to draw the screen.
    RequestGap,
    /// The gap can end.
    GapDone,
    /// Replace the grid (thread counts and working sets).
    SetGrid(Grid),
    /// Show this op (the live monitor's `o`): a sweep visits only its cells.
    ShowOp(Op),
    /// Try every failed cell again (the live monitor's `R`): the memory it lacked may be free.
    RetryFailed,
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernel::{Stores, Variant};

    #[test]
    fn a_choice_says_its_runner_up_or_why_it_has_none() {
        let mut loops = Variant::all().filter(|v| v.stores == Stores::Normal && (v.available)());
        let kept = Pick {
            variant: loops.next().unwrap(),
            huge_pages: true,
        };
        let other = Pick {
            huge_pages: false,
            ..kept
        };
        let trial = TrialSummary {
            threads: vec![1, 2],
            candidates: 2,
            rounds: 7,
            took_ns: 310_000_000,
            margin: 0.01,
        };
        let mut c = Choice {
            op: Op::Triad,
            set: 0,
            kept,
            kernel_by: By::Only,
            layout_by: By::Trial,
            runner_up: Some((other, 1.05)),
            trial: Some(trial),
        };
        let judged = c.describe();
        assert!(
            judged.contains("(1.05 × ") && judged.ends_with("trial 0.31 s)"),
            "{judged}"
        );
        c.runner_up = None;
        let held_back = c.describe();
        assert!(
            held_back.contains("(the default: the machine held back the trial's rounds; loop:"),
            "{held_back}"
        );
        c.trial = None;
        assert!(!c.describe().contains("held back"));
    }
}
