//! The host's condition from /proc under a root: load, memory, swap, pressure, steal and the
//! other processes competing for the machine.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// What is printed above the table: read once at the start of a run and at a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    pub load: [f64; 3],
    pub mem_total: u64,
    pub mem_available: u64,
    pub swap_total: u64,
    pub swap_used: u64,
    /// AnonHugePages from /proc/meminfo, bytes.
    pub anon_huge: u64,
}

impl HostState {
    pub fn read(root: &Path) -> Result<HostState, String> {
        let _ = root;
        todo!("machine helper")
    }

    /// "load average 0.18 0.05 0.01; swap 0 B of 0 B used; MemAvailable 23.3 GiB"
    pub fn line(&self) -> String {
        todo!()
    }
}
