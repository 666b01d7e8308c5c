//! The loaded-latency curve in a snapshot (`--measure loaded-latency`): one entry per point, the
//! idle reference first.

use serde::{Deserialize, Serialize};

/// One point of the loaded-latency curve: the bandwidth the load threads pushed and the
/// chase's latency meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedLatencyPoint {
    /// The delay after each load thread's chunk of triad, ns; null for the idle reference
    /// (no load threads running).
    pub delay_ns: Option<u64>,
    /// The delay as spins of the calibrated loop; null for the idle reference.
    pub delay_spins: Option<u64>,
    /// Load threads running (0 for the idle reference).
    pub load_threads: usize,
    /// Their total bandwidth over the chase's timed runs, decimal GB/s, 24 bytes per element.
    pub load_gbs: f64,
    /// The chase's median ns per load.
    pub latency_ns: f64,
    /// `latency_ns` over the idle reference's (1 for the reference itself).
    pub times_idle: f64,
    /// The knee: the point of least bandwidth from which on latency stays above 2 × idle.
    pub knee: bool,
    /// The chase's buffer, bytes, and its CPU (null: not pinned).
    pub chase_bytes: u64,
    pub chase_cpu: Option<usize>,
}
