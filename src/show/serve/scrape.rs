//! What a scrape shows: the run's labels, each cell's figures and counters, the host, copied by
//! the exporter into a [`Shared`] slot that the server only ever reads the latest copy of.

use crate::judge::run_info::RunInfo;
use crate::judge::stats::Figures;
use crate::machine::host::HostSample;
use std::sync::{Arc, Mutex};

/// The labels of `stream_top_info`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLabels {
    pub(crate) version: String,
    /// `--kernel`: `auto`, an instruction set (`avx2`), or a loop's name (each working set's
    /// loop is in `stream_top_loop_info`).
    pub(crate) kernel: String,
    pub(crate) stores: String,
    pub(crate) cpu_model: String,
    pub(crate) pin: String,
    /// The node's fingerprint, for `stream_top_machine_info`.
    pub(crate) machine: Option<crate::machine::fingerprint::Fingerprint>,
}

impl RunLabels {
    pub fn of(info: &RunInfo) -> RunLabels {
        RunLabels {
            version: info.version.clone(),
            kernel: info.loops.setting(info.kernel),
            stores: info.kernel.stores.to_string(),
            cpu_model: info.topology.model.clone(),
            pin: format!("{:?}", info.pin).to_lowercase(),
            machine: info.fingerprint.clone(),
        }
    }
}

/// One cell of the grid as a scrape shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFigures {
    /// The op the cell runs (`triad`, `copy`, …).
    pub(crate) op: String,
    /// The working set's name (`l2`, `dram`, `64 MiB`).
    pub(crate) set: String,
    /// The cache level it targets (`l1`, `l2`, `l3`, `dram`), or `none` for an explicit size.
    pub(crate) level: String,
    pub(crate) threads: usize,
    /// None until the cell has a timed round.
    pub(crate) figures: Option<Figures>,
    /// Timed rounds, late ones and checksum failures since the start, for the counters.
    pub(crate) rounds: u64,
    pub(crate) late_rounds: u64,
    pub(crate) checksum_failures: u64,
    /// When its last round ended (the engine's clock, `platform::now_ns`).
    pub(crate) last_round_ns: Option<u64>,
    /// The kernel loop and whether its arrays were advised onto huge pages, once its working
    /// set's choice is made.
    pub(crate) loop_pick: Option<(String, bool)>,
    /// Timed rounds the board judged disturbed since the start.
    pub(crate) disturbed_rounds: u64,
    /// Episodes the contention watch opened on the cell since the start, by kind.
    pub contention_episodes: u64,
    pub(crate) disturbance_episodes: u64,
    /// In a contention episode now (None without a contention watch).
    pub contended: Option<bool>,
    /// The rate the watch judges the cell by (learned from calm rounds), GB/s.
    pub reference_gbs: Option<f64>,
}

/// The figures as they stood at the last publish.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    pub(crate) run: RunLabels,
    pub cells: Vec<CellFigures>,
    /// The last host sample (load, steal, pressure, cgroup throttling), once there is one.
    pub(crate) host: Option<HostSample>,
    /// The cgroup's memory limit, bytes.
    pub(crate) memory_limit: Option<u64>,
    /// The last complete sweep over the grid: when it ended (seconds since 1970) and how long
    /// it took (seconds).
    pub last_sweep: Option<(f64, f64)>,
    /// The bytes of arrays the engine holds, once it said.
    pub arrays_bytes: Option<u64>,
    /// How often arrays were mapped and first-touched for a cell.
    pub(crate) arrays_mapped: u64,
    /// Failed cells tried again since the start, and cells failed now (not tried again since).
    pub cell_retries: u64,
    pub cells_failed: usize,
    /// Records the recorder dropped, when recording.
    pub(crate) record_dropped: Option<u64>,
    /// The latency probe, when it runs.
    pub(crate) probe: Option<ProbeFigures>,
    /// Idle latency per buffer, when the run measures latency.
    pub(crate) latency: Vec<super::latency::LatencyFigures>,
}

/// The latency probe as a scrape shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeFigures {
    /// The median of its last samples, ns per load (None before its first).
    pub(crate) latency_ns: Option<f64>,
    /// Its calm reference, ns (None while it learns one).
    pub(crate) reference_ns: Option<f64>,
    /// In a latency contention episode now.
    pub(crate) contended: bool,
    pub(crate) samples: u64,
    /// Episodes its watch opened since the start.
    pub(crate) episodes: u64,
}

/// The slot between the publishing loop and the server.
#[derive(Debug, Clone, Default)]
pub struct Shared(Arc<Mutex<Arc<Scrape>>>);

impl Shared {
    pub fn publish(&self, scrape: Scrape) {
        let scrape = Arc::new(scrape);
        // A panic elsewhere while holding the lock cannot leave a half-written Arc.
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = scrape;
    }

    pub fn latest(&self) -> Arc<Scrape> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
