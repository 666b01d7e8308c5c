//! A cell of the table: its figures, rounds, checksum, placement, loop and page choice and
//! per-group figures, or the reason it could not run.

use super::grid::{ArraySize, Level};
use super::machine::CoreKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One row of the per-cell table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSnapshot {
    /// The op the cell ran (`triad`, `copy`, …, `mix-1:1`; schema 4).
    pub op: String,
    /// The row label: the set's label, with `, run again last` on the rerun row.
    pub label: String,
    /// Index of the working set in `grid.sets`.
    pub set: usize,
    /// The set's label, e.g. `85 KiB/thread (l2)`, `128 MiB (dram)`.
    pub set_label: String,
    /// The set's name, e.g. `l2`, `dram`, `64 MiB`.
    pub set_name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    pub threads: usize,
    pub rerun: bool,
    pub figures: Figures,
    /// Each repetition's median GB/s (`--repeat`: a fresh engine, fresh arrays, each), the
    /// evidence `compare` judges by; one, the run's own median, for a plain run. `figures` are
    /// over the pooled rounds of every repetition.
    pub repetitions: Vec<f64>,
    /// The timed rounds the figures are computed over, oldest first.
    pub history: Vec<Round>,
    /// The last checksum (a failure stays); None before the configuration ended once.
    pub checksum: Option<CheckResult>,
    pub checksum_failures: u64,
    /// CPUs the cell's threads ran on (-1 where unknown), sorted.
    pub cpus: Vec<i32>,
    /// Thread-rounds whose start and end CPU differed.
    pub migrations: u64,
    /// Bytes of the three arrays, and how many of them sat on huge pages (null: unknown,
    /// /proc/self/smaps could not be read).
    pub array_bytes: u64,
    #[serde(default)]
    pub huge_bytes: Option<u64>,
    /// The loop and page layout the cell ran with, and how they were chosen (the same for
    /// every cell of a working set). Absent in files from before the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<CellChoice>,
    /// Where a sample of its pages sat once in place for its threads (move_pages in query
    /// mode); null where that cannot be asked (macOS) and in files written before it existed.
    #[serde(default)]
    pub pages: Option<Pages>,
    /// The cell's threads per NUMA node and per core type, on machines with more than one of
    /// either; empty elsewhere.
    #[serde(default)]
    pub groups: Vec<ThreadGroup>,
}

/// A sample of a cell's pages, by NUMA node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pages {
    /// Pages asked about: a sample of each partition of each array.
    pub(crate) sampled: u64,
    /// Pages whose partition was meant for a node (its thread's, or the bound one), and how
    /// many of them sat on it.
    pub(crate) meant: u64,
    pub(crate) on_meant: u64,
    /// Pages on each node, by node id.
    pub(crate) by_node: BTreeMap<usize, u64>,
    /// Pages on no node (not present).
    pub(crate) absent: u64,
}

impl Pages {
    /// The share of pages on the node meant for them; None when no node was meant.
    pub fn share_on_meant(&self) -> Option<f64> {
        (self.meant > 0).then(|| self.on_meant as f64 / self.meant as f64)
    }
}

/// A cell's threads on one NUMA node or of one core type, over its rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadGroup {
    /// One shape, `{"kind": "node", "node": 0, "core_type": null}` or `{"kind": "core_type",
    /// "node": null, "core_type": "performance"}`.
    pub group: GroupKey,
    /// The most threads it had in one round.
    pub threads: usize,
    /// Median over rounds of the sum of its threads' own rates, GB/s.
    pub gbs: f64,
    /// Median over its thread-rounds of one thread's rate, GB/s.
    pub per_thread_gbs: f64,
}

/// What a group of threads shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "GroupRepr", try_from = "GroupRepr")]
pub enum GroupKey {
    Node(usize),
    CoreType(CoreKind),
}

/// `GroupKey` as the JSON holds it: the kind, and the one of its two fields that kind names.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct GroupRepr {
    kind: GroupKind,
    node: Option<usize>,
    core_type: Option<CoreKind>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum GroupKind {
    Node,
    CoreType,
}

impl From<GroupKey> for GroupRepr {
    fn from(k: GroupKey) -> GroupRepr {
        match k {
            GroupKey::Node(n) => GroupRepr {
                kind: GroupKind::Node,
                node: Some(n),
                core_type: None,
            },
            GroupKey::CoreType(c) => GroupRepr {
                kind: GroupKind::CoreType,
                node: None,
                core_type: Some(c),
            },
        }
    }
}

impl TryFrom<GroupRepr> for GroupKey {
    type Error = crate::base::error::Error;

    fn try_from(r: GroupRepr) -> crate::base::error::Result<GroupKey> {
        match (r.kind, r.node, r.core_type) {
            (GroupKind::Node, Some(n), _) => Ok(GroupKey::Node(n)),
            (GroupKind::CoreType, _, Some(c)) => Ok(GroupKey::CoreType(c)),
            (GroupKind::Node, None, _) => Err(crate::base::error::Error::usage(
                "a group of kind `node` without its `node`",
            )),
            (GroupKind::CoreType, _, None) => Err(crate::base::error::Error::usage(
                "a group of kind `core_type` without its `core_type`",
            )),
        }
    }
}

impl GroupKey {
    /// `node 0`, `P-cores`, `E-cores`.
    pub fn name(self) -> String {
        match self {
            GroupKey::Node(n) => format!("node {n}"),
            GroupKey::CoreType(CoreKind::Performance) => "P-cores".into(),
            GroupKey::CoreType(CoreKind::Efficiency) => "E-cores".into(),
            GroupKey::CoreType(CoreKind::Uniform) => "cores".into(),
        }
    }
}

impl CellSnapshot {
    /// The rates of its timed rounds, oldest first (what a comparison tests).
    pub fn rates(&self) -> Vec<f64> {
        self.history.iter().map(|r| r.gbs).collect()
    }
}

/// A cell of the grid that could not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedCell {
    /// The op, as `CellSnapshot::op`.
    pub(crate) op: String,
    /// The row label, as `CellSnapshot::label`.
    pub(crate) label: String,
    /// Index of the working set in `grid.sets`.
    pub(crate) set: usize,
    pub set_label: String,
    pub threads: usize,
    pub(crate) rerun: bool,
    pub reason: String,
}

/// A working set's loop and page layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellChoice {
    /// The loop's name in the kernel table, e.g. `avx2 ymm mul+add`.
    pub variant: String,
    /// Whether the arrays were advised onto huge pages (how many bytes got them: `huge_bytes`).
    pub huge_pages: bool,
    /// How the loop was settled, and how the layout was.
    pub kernel_by: ChoiceBy,
    pub layout_by: ChoiceBy,
    /// After a trial: the best other candidate and the kept one's rate over its rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<RunnerUp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<Trial>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChoiceBy {
    /// Timed against the alternatives.
    Trial,
    /// Huge pages for arrays in memory; the default when a trial had no room.
    Rule,
    /// Given on the command line.
    Pinned,
    /// Nothing else to choose.
    Only,
    /// Taken from an earlier run's snapshot (`--choices-from`; the file: `info.choices_from`).
    Reused,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunnerUp {
    pub variant: String,
    pub huge_pages: bool,
    /// The kept candidate's trial rate over this one's (medians, paired round by round).
    pub ratio: f64,
}

/// The trial a choice came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Thread counts it timed.
    pub threads: Vec<usize>,
    /// Loops × layouts timed.
    pub candidates: usize,
    /// Timed rounds per candidate and thread count.
    pub rounds: u32,
    /// How long it took, mapping its arrays included.
    pub seconds: f64,
    /// The lead over the default loop and layout that a candidate needed to be kept.
    pub margin: f64,
}

/// A cell's figures. Every rate is a finite number (the builder makes sure of it), so the JSON
/// always reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub median_gbs: f64,
    pub best_gbs: f64,
    /// Coefficient of variation of the round rates, a fraction (0.048, shown as 4.8 %).
    pub cv: f64,
    /// Medians over rounds of each round's fastest and slowest thread.
    pub fastest_thread_gbs: f64,
    pub slowest_thread_gbs: f64,
    pub late_rounds: u32,
    pub rounds: u32,
    /// Median against the single-thread cell of the same working set.
    pub scaling: Option<f64>,
    /// The median as a fraction of the vendor figure (0.827, shown as 82.7 %).
    pub vendor_fraction: Option<f64>,
    /// Bytes per cycle per thread, its cycles from where `bytes_per_cycle_from` says.
    pub bytes_per_cycle: Option<f64>,
    pub checksum_ok: Option<bool>,
    /// Rounds disturbed: a worker switched out inside its span, a span far above the cell's
    /// median, or a thread far below its own median rate. Like late rounds, they stay in the
    /// median.
    #[serde(default)]
    pub disturbed_rounds: u32,
    /// Where bytes/cycle's cycles came from; null when there is no bytes/cycle.
    #[serde(default)]
    pub bytes_per_cycle_from: Option<CycleSource>,
    /// The 95 % confidence interval of the median, `[low, high]` GB/s, from order statistics;
    /// null under 6 rounds.
    #[serde(default)]
    pub median_ci_gbs: Option<[f64; 2]>,
    /// Medians and per-round means of the counters; null where nothing was counted.
    #[serde(default)]
    pub counters: Option<CellCounters>,
    /// Why the figure cannot be trusted, one reason each (cv, late or disturbed rounds, steal
    /// or throttling over their share, more threads than CPUs): the screen's `~` mark. Empty:
    /// nothing says so.
    #[serde(default)]
    pub noisy: Vec<String>,
    /// What the core's load and store ports allow this loop per cycle; absent where the
    /// snapshot records no CPU design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_limit: Option<PortLimit>,
}

/// The bytes per cycle a core's load and store ports allow a cell's loop: a ceiling for data
/// in L1, so a figure below L1 sits under it by design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortLimit {
    Known {
        /// Bytes per cycle per thread the ports allow.
        bytes_per_cycle: f64,
        /// The cell's bytes per cycle over the limit (0.62, shown as 62 %); null without a
        /// measured bytes per cycle.
        fraction: Option<f64>,
        /// The core design, e.g. `AMD Zen 3`.
        core: String,
        /// Where the table's figures for it come from.
        source: String,
    },
    /// Why no limit can be given (`–` in the tables).
    Unknown { reason: String },
}

/// Where bytes/cycle's cycles came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleSource {
    /// Counted on the workers' own threads (median over rounds of bytes ÷ Σ cycles).
    Counted,
    /// The clock estimate: GB/s ÷ GHz ÷ threads.
    ClockEstimate,
}

/// A cell's counters over its rounds, each null where it was not counted in every round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CellCounters {
    /// Median over thread-rounds of counted cycles ÷ the thread's own time.
    #[serde(default)]
    pub(crate) ghz: Option<f64>,
    /// Median over thread-rounds of instructions ÷ cycles.
    #[serde(default)]
    pub(crate) ipc: Option<f64>,
    /// Involuntary context switches of all threads, per round (mean).
    #[serde(default)]
    pub(crate) switches_per_round: Option<f64>,
    #[serde(default)]
    pub(crate) migrations_per_round: Option<f64>,
    #[serde(default)]
    pub(crate) page_faults_per_round: Option<f64>,
    /// Last-level-cache misses per KiB counted.
    #[serde(default)]
    pub(crate) llc_misses_per_kib: Option<f64>,
}

/// One timed round of a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub(crate) span_ns: u64,
    pub bytes: u64,
    pub(crate) gbs: f64,
    pub(crate) fastest_thread_gbs: f64,
    pub slowest_thread_gbs: f64,
    pub(crate) late: bool,
    /// Disturbed (see `Figures::disturbed_rounds`).
    #[serde(default)]
    pub(crate) disturbed: bool,
    /// Why the round was late or disturbed, where the counters or the cell's medians show it
    /// ("t1 switched out 2× (180 ms off CPU)"); null otherwise.
    #[serde(default)]
    pub(crate) cause: Option<String>,
    /// Involuntary context switches of all its threads; null where not counted.
    #[serde(default)]
    pub(crate) switches: Option<u64>,
    /// The host's steal and the cgroup's throttled share, fractions (0.05 is 5 % of the CPU
    /// time, of the quota's periods), over the host sample that covered the round; null where
    /// not sampled.
    #[serde(default)]
    pub(crate) steal: Option<f64>,
    #[serde(default)]
    pub(crate) throttled: Option<f64>,
}

/// The sum of `a` after a configuration against its integer reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The integer reference (negative for some ops over an even number of passes).
    pub expected: i64,
    /// A broken kernel can leave NaN or infinity here: JSON has no such numbers, so they are
    /// written as the strings `"NaN"`, `"inf"`, `"-inf"` and read back.
    #[serde(with = "any_f64")]
    pub actual: f64,
    pub ok: bool,
}

/// Serde for an f64 that may not be finite (JSON would write `null` and fail to read it back).
mod any_f64 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Num(f64),
        Text(String),
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Num(v) => Ok(v),
            Repr::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                _ => Err(D::Error::custom(format!(
                    "expected a number, NaN, inf or -inf, found {t:?}"
                ))),
            },
        }
    }
}
