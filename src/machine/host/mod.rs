//! The host's condition: load, memory, swap, pressure, steal, the other processes competing
//! for the machine, and the throttling of our cgroup's CPU quota; from /proc under a root on
//! Linux, from `sysctl` values, the VM counters and the process table on macOS.
//!
//! A bandwidth figure is only worth showing with the load it was measured under: a compile
//! job on a sibling core or a host stealing cycles from a VM moves the figure. `HostState`
//! (state.rs) is read once for the header of a run; `HostSampler` (sampler.rs) is polled (about
//! once a second, off the UI thread) for the live host panel and turns counters into rates
//! between samples. Both read a Linux root through procfs.rs and a Mac through mac.rs (the
//! sampler gets one `Reading` from either, reading.rs). What a platform lacks (PSI and steal
//! on macOS; the memory-pressure level on Linux) is `None`.

mod mac;
mod procfs;
mod reading;
mod sampler;
mod state;

use crate::base::error::Result;
use mac::MacReading;
use std::path::Path;

pub use mac::VM_STAT_FILE;
pub use sampler::{HostSample, HostSampler, HostSource, ProcessCpu};
pub use state::{HostState, MemPressure};

impl HostState {
    /// Reads `proc/loadavg` and `proc/meminfo` under `root`, or on a Mac (the running one, or
    /// a root with `sysctl.txt` and `vm_stat.txt`) its `sysctl` values and VM counters.
    pub fn read(root: &Path) -> Result<HostState> {
        if let Some(mac) = MacReading::under(root) {
            return mac.state();
        }
        let load = procfs::read_loadavg(&root.join("proc/loadavg"))?;
        let mem = procfs::read_meminfo(&root.join("proc/meminfo"))?;
        Ok(HostState {
            load,
            mem_total: mem.total,
            mem_available: mem.available,
            swap_total: mem.swap_total,
            swap_used: mem.swap_used,
            anon_huge: Some(mem.anon_huge),
            compressor: None,
            mem_pressure: None,
        })
    }
}
