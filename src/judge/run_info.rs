//! The run's own description: everything about a run that is not a cell's figures (the
//! machine, the kernel and its loops, the settings, the host at the start), built by the
//! session, shown above the live table and kept in every snapshot.

use crate::engine::kernel::Kernel;
use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::{HugePages, Loops};
use crate::judge::no_effect::NoEffect;
use crate::judge::stats::Context;
use crate::machine::cgroup::Limits;
use crate::machine::clock::ClockEstimate;
use crate::machine::counters::Availability;
use crate::machine::host::HostState;
use crate::machine::topology::{PinPolicy, Topology};
use crate::machine::vendor::VendorFigure;

/// Everything about a run that is not a cell's figures: shown above the live table and the
/// reports, and kept in every snapshot (as the report's own wire type).
///
/// Why two types and not one: the snapshot's `RunInfo` (`show::report::model::run`) is a file
/// format that older files must still read as they were written, and this one is what the run
/// works with. They hold the same facts in different shapes: `started` here is the local
/// `YYYY-mm-dd HH:MM:SS` and there RFC 3339; `duty` a percentage here and a fraction there;
/// `--kernel` and `--huge-pages` two settings here and there one `selection`, absent for the
/// defaults older files ran; the machine's parts (topology, clock, vendor, host) here the
/// machine layer's own types and there wire types with their own serde shapes; the matrix's
/// plan here and nothing there (its cells carry it). Making them one would change the JSON
/// every snapshot is written in, so the one conversion between them (`From<&RunInfo>` in
/// `show::report::build::run`) is the only place that knows both.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// stream-top's version (CARGO_PKG_VERSION).
    pub version: String,
    /// `--name`: the run's label, in the snapshot and the exported file names.
    pub name: Option<String>,
    /// The command line as given.
    pub command_line: String,
    pub hostname: String,
    /// When the run started, UTC, `YYYY-mm-dd HH:MM:SS`.
    pub started: String,
    pub topology: Topology,
    pub kernel: Kernel,
    /// `--kernel`: the loops the cells could run (which one each ran is in its choice).
    pub loops: Loops,
    /// `--huge-pages`.
    pub huge_pages_flag: HugePages,
    /// `--choices-from`: the snapshot each working set's loop and layout came from.
    pub choices_from: Option<String>,
    pub pin: PinPolicy,
    pub clock: ClockEstimate,
    pub vendor: VendorFigure,
    /// Load, memory and swap when the run started.
    pub host_start: HostState,
    /// Timed rounds per cell (`--rounds`).
    pub rounds: u32,
    pub round_ms: u32,
    /// Percentage of the time rounds ran.
    pub duty: u8,
    /// The cgroup limits that applied at the start; None outside a container.
    pub container: Option<Limits>,
    /// Where the OS lets no thread be placed (macOS), what `--pin` does instead.
    pub placement: Option<&'static str>,
    /// Where the OS has no transparent huge pages (macOS), saying so.
    pub huge_pages: Option<&'static str>,
    /// Settings that change nothing on this machine, each said once beside the table.
    pub no_effect: Vec<NoEffect>,
    /// Which per-thread counters the workers have and why the others are missing (opened
    /// once on this thread to find out); None where not asked (tests).
    pub counters: Option<Availability>,
    /// Where the arrays' pages come from, when the run chose (`--membind`, `--interleave`) or
    /// the machine has something to say about it: said beside the table.
    pub numa: Option<String>,
    /// `--matrix`: what it measures (the grid's working sets are its pairs, in order).
    pub matrix: Option<MatrixPlan>,
    /// `--oversubscribe`: why no figure of this run is a measurement.
    pub not_a_measurement: Option<String>,
    /// What a CPU quota did to the thread counts (capped the defaults, or throttles the asked
    /// ones): said beside the table.
    pub threads_note: Option<String>,
    /// What decides the node's bandwidth, for judging it against its peers (`fleet`); None
    /// where not read (tests).
    pub fingerprint: Option<crate::machine::fingerprint::Fingerprint>,
}

impl RunInfo {
    /// What every cell's figures are computed against: the vendor figure, the clock, and the
    /// online CPUs (a cell with more threads is noisy).
    pub fn context(&self) -> Context {
        Context::new(self.vendor.gbs, Some(self.clock.ghz))
            .with_cpus(self.topology.cpus.len())
            .not_a_measurement(self.not_a_measurement.is_some())
    }
}
