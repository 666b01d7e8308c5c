//! One pass over the host's sources, before rates: what the Linux readers (procfs.rs) and the
//! Mac's (mac.rs) both hand the sampler, so that it computes its rates one way for either OS.

use super::MemPressure;
use std::collections::HashMap;

/// One pass over the host's sources, before rates: what either OS gives.
#[derive(Debug, Default)]
pub(super) struct Reading {
    pub(super) load: [f64; 3],
    pub(super) mem: MemInfo,
    pub(super) swap_in: Option<u64>,
    pub(super) swap_out: Option<u64>,
    pub(super) cpu_line: Option<CpuTimes>,
    pub(super) cpu_psi: Pressure,
    pub(super) mem_psi: Pressure,
    pub(super) mem_pressure: Option<MemPressure>,
    /// pid → (name, CPU time in ns): macOS's process table. On Linux the process sampler
    /// reads /proc/[pid] instead.
    pub(super) procs: HashMap<u32, (String, u64)>,
    pub(super) unreadable: usize,
    pub(super) problems: Vec<String>,
}

/// Memory and swap, bytes, from either OS.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct MemInfo {
    pub(super) total: u64,
    pub(super) available: u64,
    pub(super) swap_total: u64,
    pub(super) swap_used: u64,
    pub(super) anon_huge: u64,
}

/// The aggregate `cpu` line of /proc/stat's counters, in clock ticks since boot.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuTimes {
    pub(super) total: u64,
    pub(super) steal: u64,
}

/// A PSI file's `avg10` figures, percent (Linux only).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Pressure {
    pub(super) some_avg10: Option<f64>,
    pub(super) full_avg10: Option<f64>,
}
