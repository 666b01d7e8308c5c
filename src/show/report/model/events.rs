//! What the live monitor saw and a headless run does not have: contention episodes with their
//! suspects, and the event log.

use serde::{Deserialize, Serialize};

/// A spell of contention on one cell of the live monitor: it ran more than the threshold
/// below its reference from `start` to `end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The cell: the set's label as in `CellSnapshot::set_label`, its threads and rerun flag.
    pub(crate) set_label: String,
    pub threads: usize,
    pub(crate) rerun: bool,
    /// RFC 3339 with its offset: the first slow round.
    pub(crate) start: String,
    /// RFC 3339: the first recovered round; null while it lasts.
    pub end: Option<String>,
    /// To `end`, or to when the snapshot was taken.
    pub duration_s: f64,
    /// A reset or a new reference ended it, not a recovery.
    pub cut_short: bool,
    pub(crate) reference_gbs: f64,
    /// `learned` (the first window after focus or reset), `baseline` or `pinned`.
    pub(crate) reference_source: String,
    /// Over the rounds while it lasted.
    pub(crate) mean_gbs: f64,
    pub(crate) worst_gbs: f64,
    /// Fractions below the reference: of the mean, and of the worst round.
    pub depth: f64,
    pub(crate) worst_depth: f64,
    pub rounds: u64,
    /// `measured` when resctrl measured a suspect's memory bandwidth, else `inferred`.
    pub basis: String,
    /// Most suspect first.
    pub suspects: Vec<Suspect>,
}

/// A process and the evidence against it in one episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    pub pid: u32,
    pub(crate) comm: String,
    pub(crate) user: Option<String>,
    /// Another stream-top.
    pub stream_top: bool,
    /// CPU time in cores (0.5 is half of one core, 2 two whole ones) in the calm minute
    /// before, and while contended.
    pub(crate) cpu_before_cores: f64,
    pub(crate) cpu_cores: f64,
    /// Page faults per second while contended.
    pub(crate) faults_per_s: f64,
    pub(crate) rss_growth_bytes_per_s: Option<f64>,
    pub on_our_cpus: bool,
    pub(crate) on_our_node: bool,
    /// Memory bandwidth resctrl measured for its group, bytes/s, and the group.
    pub measured_bytes_per_s: Option<f64>,
    pub(crate) resctrl_group: Option<String>,
    /// The ranking's key (CPU rise × the weight of the other evidence).
    pub score: f64,
}

/// A line of the live monitor's event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    /// Local time of day, `HH:MM:SS`.
    pub time: String,
    /// `info`, `late`, `contention`, `choice`, `checksum`, `export` or `error`.
    pub kind: String,
    pub text: String,
    /// How many times (a cell's late and disturbed rounds of a minute fold into one line,
    /// whose text says the count).
    pub count: u32,
}
