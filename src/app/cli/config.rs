//! The checked command line: what stream-top was asked to do (`Mode`), with what (`Config`),
//! and the few questions the layers above ask of it. `cli.rs` builds it from the arguments.

use super::args::{FormatArg, Measure, ReadmeStyle};
use super::fleet::{CheckArgs, FleetArgs};
use super::values::KernelArg;
use super::values::default_threads;
use crate::base::error::{Error, Result};
use crate::engine::kernel::{Op, Stores};
use crate::engine::plan::{HugePages, SetSpec};
use crate::machine::topology::PinPolicy;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The largest thread count accepted, as a multiple of the online CPUs.
const MAX_OVERSUBSCRIPTION: usize = 4;

/// Whether the latency probe runs (`engine::latency::probe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeMode {
    Off,
    /// Beside the triad (`--probe`; a service's default).
    On,
    /// Alone: no triad workers (`--probe-only`).
    Only,
}

/// What stream-top was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Live,
    Headless,
    /// `compare A B`, or `compare A1 A2 … -- B1 B2 …` (`every`: a directory stands for every
    /// snapshot in it, not its newest).
    Compare {
        a: Vec<PathBuf>,
        b: Vec<PathBuf>,
        every: bool,
    },
    /// `calibrate`: a headless sweep repeated, whose spread is written for `compare`.
    Calibrate,
    /// `stream-top replay FILE… --headless`: the snapshot of a moment (`at`, the end when
    /// None) or of a window (`from`, `to`); the times are read by `show::record`.
    Replay {
        files: Vec<PathBuf>,
        headless: bool,
        at: Option<String>,
        window: Option<(String, String)>,
        format: FormatArg,
    },
    /// `fleet FILES|DIRS…`: nodes judged against their peers.
    Fleet(FleetArgs),
    /// `check`: a short all-core triad against a reference.
    Check(CheckArgs),
}

/// The validated command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mode: Mode,
    /// `--delays`: the loaded-latency delays in ns, rising (None: the default ladder).
    pub(crate) delays: Option<Vec<u64>>,
    /// `--measure latency`: also chase on 4 KiB pages for the TLB cost (not with `--no-tlb`).
    pub(crate) tlb: bool,
    /// None: the default for the online CPUs.
    pub(crate) threads: Option<Vec<usize>>,
    pub(crate) sets: Vec<SetSpec>,
    pub rounds: u32,
    pub(crate) round_ms: u32,
    pub(crate) pin: PinPolicy,
    pub(crate) kernel: KernelArg,
    /// `--op`: the ops each cell of the grid runs, in the order given.
    pub(crate) ops: Vec<Op>,
    pub(crate) stores: Stores,
    pub(crate) vendor_gbs: Option<f64>,
    pub(crate) duty: u8,
    pub(crate) huge_pages: HugePages,
    /// `--choices-from A.json`: each working set's loop and layout from that snapshot (read
    /// before anything is measured, by the preflight).
    pub(crate) choices_from: Option<PathBuf>,
    /// `--membind NODE`: every page from this node (checked against the machine's nodes later).
    pub(crate) membind: Option<usize>,
    /// `--interleave`: pages round-robin across every node.
    pub(crate) interleave: bool,
    /// `--max-memory SIZE`: the most the arrays may hold in all, bytes.
    pub(crate) max_memory: Option<u64>,
    /// `--measure`: bandwidth (the triad), idle latency (the pointer chase), or loaded latency.
    pub measure: Measure,
    /// `--matrix`: the NUMA bandwidth matrix instead of the grid (the latency matrix with
    /// `--measure latency`).
    pub(crate) matrix: bool,
    /// `--oversubscribe`: thread counts past `MAX_OVERSUBSCRIPTION` × the CPUs, as no
    /// measurement.
    pub(crate) oversubscribe: bool,
    /// `--serve`: where to answer scrapes.
    pub(crate) serve: Option<SocketAddr>,
    /// `--web-config`: how --serve is secured (checked and loaded by the preflight).
    pub(crate) web_config: Option<PathBuf>,
    /// `--prom-file`: the textfile written after each sweep.
    pub prom_file: Option<PathBuf>,
    pub(crate) format: FormatArg,
    pub export: Option<PathBuf>,
    pub(crate) readme: Option<PathBuf>,
    pub(crate) readme_style: ReadmeStyle,
    /// `--name`: the run's label, checked to be safe in a file name.
    pub(crate) name: Option<String>,
    /// `--node`: the node's name for `fleet` (None: the hostname).
    pub(crate) node: Option<String>,
    pub baseline: Option<PathBuf>,
    /// Per-thread counters on (`--counters`).
    pub(crate) counters: bool,
    /// `compare --fail-if-slower PERCENT`: the slowdown, percent, that fails the comparison.
    pub fail_if_slower: Option<f64>,
    /// `compare --allow-single-run`: the gate may judge single runs against the spread.
    pub allow_single_run: bool,
    /// `--repeat N`: sweeps of the grid, each on fresh arrays (1 unless asked; calibrate 10).
    pub(crate) repeat: u32,
    /// `calibrate --span`: the time its processes are spread over, ms.
    pub(crate) calibrate_span_ms: u64,
    /// `--contention-drop` as a fraction (0.15).
    pub contention_drop: f64,
    pub contention_rounds: u32,
    /// `--probe`, `--probe-only`, `--no-probe` (a service runs it unless told).
    pub probe: ProbeMode,
    /// `--probe-cpu N` (checked against the usable CPUs once they are known).
    pub probe_cpu: Option<usize>,
    /// `--record FILE` and `--record-max` in bytes.
    pub(crate) record: Option<PathBuf>,
    pub(crate) record_max: u64,
    pub root: PathBuf,
}

impl Config {
    /// `--measure loaded-latency`: the chase's working set first, the load's dram set after.
    pub fn is_loaded_latency(&self) -> bool {
        self.measure == Measure::LoadedLatency
    }

    /// `--headless --serve`: sweep until told to stop, answering scrapes.
    pub fn is_service(&self) -> bool {
        self.mode == Mode::Headless && self.serve.is_some()
    }

    /// The thread counts to run with `online` CPUs: the given ones (refused past
    /// `MAX_OVERSUBSCRIPTION` × online unless `--oversubscribe`), or [`default_threads`] over
    /// them and the counts that fill a node or a socket (`domains`), but no more than `quota`
    /// (the whole CPUs of a cgroup's CPU quota) when there is one.
    pub(crate) fn thread_counts(
        &self,
        online: usize,
        quota: Option<usize>,
        domains: &[usize],
    ) -> Result<Vec<usize>> {
        let online = online.max(1);
        match &self.threads {
            Some(t) => {
                let max = MAX_OVERSUBSCRIPTION * online;
                if let Some(bad) = t.iter().find(|&&n| n > max)
                    && !self.oversubscribe
                {
                    return Err(Error::usage(format!(
                        "--threads: {bad} is more than {MAX_OVERSUBSCRIPTION} × the {online} online CPUs (--oversubscribe runs it, as no measurement)"
                    )));
                }
                Ok(t.clone())
            }
            None => Ok(default_threads(
                quota.map_or(online, |q| q.min(online)),
                domains,
            )),
        }
    }
}
