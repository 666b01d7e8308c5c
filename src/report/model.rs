//! What a run is: the settings and the machine a table was measured on.

use crate::engine::kernel::Kernel;
use crate::machine::cgroup::Limits;
use crate::machine::clock::ClockEstimate;
use crate::machine::host::HostState;
use crate::machine::topology::{PinPolicy, Topology};
use crate::machine::vendor::VendorFigure;
use serde::{Deserialize, Serialize};

/// Everything about a run that is not a cell's figures: printed above the tables and kept in
/// every snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// stream-top's version (CARGO_PKG_VERSION).
    pub version: String,
    /// The command line as given.
    pub command_line: String,
    pub hostname: String,
    /// When the run started, UTC, `YYYY-mm-dd HH:MM:SS`.
    pub started: String,
    pub topology: Topology,
    pub kernel: Kernel,
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
    /// The cgroup limits that applied at the start; absent outside a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Limits>,
}
