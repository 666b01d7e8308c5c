//! What is printed above a run's table: the host's load, memory and swap at one moment
//! (`HostState`) and macOS's memory-pressure level, and their one line of words. The types
//! alone: `HostState::read` (mod.rs) picks the OS's reader.

use crate::base::units::format_bytes;

/// macOS's memory-pressure level (`kern.memorystatus_vm_pressure_level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemPressure {
    Normal,
    Warning,
    Critical,
}

impl MemPressure {
    /// From the sysctl's value: 1 normal, 2 warning, 4 critical.
    pub(crate) fn from_level(level: u64) -> Option<MemPressure> {
        match level {
            1 => Some(MemPressure::Normal),
            2 => Some(MemPressure::Warning),
            4 => Some(MemPressure::Critical),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MemPressure::Normal => "normal",
            MemPressure::Warning => "warning",
            MemPressure::Critical => "critical",
        }
    }
}

/// What is printed above the table: read once at the start of a run and at a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct HostState {
    pub load: [f64; 3],
    pub mem_total: u64,
    /// MemAvailable on Linux; on macOS the free, speculative, inactive and purgeable pages of
    /// `host_statistics64` (see `mac_available` in mac.rs).
    pub mem_available: u64,
    pub swap_total: u64,
    pub swap_used: u64,
    /// AnonHugePages from /proc/meminfo, bytes; `None` where the OS has no transparent huge
    /// pages (macOS).
    pub anon_huge: Option<u64>,
    /// Bytes the memory compressor occupies (macOS).
    pub compressor: Option<u64>,
    /// The memory-pressure level (macOS).
    pub mem_pressure: Option<MemPressure>,
}

impl HostState {
    /// "load average 0.18 0.05 0.01; swap 0 B of 0 B used; MemAvailable 23.3 GiB of 23.5 GiB",
    /// on macOS "…; available 2 GiB of 64 GiB, compressor 11.4 GiB, memory pressure normal".
    pub fn line(&self) -> String {
        let mut line = format!(
            "load average {:.2} {:.2} {:.2}; swap {} of {} used; ",
            self.load[0],
            self.load[1],
            self.load[2],
            format_bytes(self.swap_used),
            format_bytes(self.swap_total),
        );
        let mem = format!(
            "{} of {}",
            format_bytes(self.mem_available),
            format_bytes(self.mem_total)
        );
        match self.compressor {
            None => line.push_str(&format!("MemAvailable {mem}")),
            Some(c) => line.push_str(&format!("available {mem}, compressor {}", format_bytes(c))),
        }
        if let Some(p) = self.mem_pressure {
            line.push_str(&format!(", memory pressure {}", p.name()));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_levels_are_the_sysctls_values() {
        assert_eq!(MemPressure::from_level(1), Some(MemPressure::Normal));
        assert_eq!(MemPressure::from_level(4), Some(MemPressure::Critical));
        assert_eq!(MemPressure::from_level(3), None);
    }
}
