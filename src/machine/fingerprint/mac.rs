//! The fingerprint of a Mac: what `sysctl` gives (CPU brand, packages, kernel release, memory
//! size, the microcode of an Intel Mac) and the memory modules from `system_profiler
//! SPMemoryDataType`'s text, parsed into the same `Dimm` model SMBIOS fills on Linux. An Apple
//! silicon Mac lists one entry, the memory in its package (size and type, no speed); an Intel
//! Mac lists every DIMM slot, populated or `Empty`, with its size, type and speed.
//!
//! What macOS does not have (EDAC, transparent huge pages, a frequency governor, NUMA
//! settings, a BIOS) is `Missing` with a macOS reason, never a Linux path. Under a fixture root
//! the listings are `sysctl.txt` and `SPMemoryDataType.txt`; on a live Mac they are read
//! through the platform layer.

use super::{Dimm, Fingerprint, Known};
use crate::machine::sysctl::{Sysctl, is_live_mac};
use crate::platform;
use std::path::Path;

/// What `system_profiler SPMemoryDataType` printed, under a fixture root.
const PROFILE_FILE: &str = "SPMemoryDataType.txt";

/// The fingerprint of the Mac under `root`, whose `sysctl` values are `s`; the CPU model and
/// packages come from `sysctl` where listed, else from the topology the run read.
pub(super) fn read_mac(
    root: &Path,
    s: &Sysctl,
    node: &str,
    cpu_model: &str,
    sockets: usize,
) -> Fingerprint {
    Fingerprint {
        node: node.to_string(),
        machine_id: missing("macOS has no /etc/machine-id (its hardware UUID is not read)"),
        cpu_model: s
            .get("machdep.cpu.brand_string")
            .unwrap_or(cpu_model)
            .to_string(),
        sockets: s
            .int("hw.packages")
            .ok()
            .flatten()
            .map_or(sockets, |p| p as usize),
        dimms: dimms(root, s),
        bios: missing("macOS has no BIOS (Apple's firmware version is not read)"),
        microcode: match s.int("machdep.cpu.microcode_version") {
            Ok(Some(v)) => Known::Value(format!("0x{v:x}")),
            _ => missing("macOS gives no machdep.cpu.microcode_version (Apple silicon has none)"),
        },
        kernel_release: s.get("kern.osrelease").map_or_else(
            || missing("sysctl gives no kern.osrelease"),
            |r| Known::Value(r.to_string()),
        ),
        thp: missing("macOS has no transparent huge pages"),
        governor: missing("macOS has no CPU frequency governor"),
        boost: missing("macOS has no boost setting"),
        zone_reclaim_mode: missing("macOS has no NUMA zone reclaim"),
        numa_balancing: missing("macOS has no NUMA balancing"),
        edac: missing("macOS has no EDAC interface"),
    }
}

/// A field macOS does not give, and why.
fn missing<T>(why: &str) -> Known<T> {
    Known::Missing(why.to_string())
}

/// The modules `system_profiler` lists, or why there are none.
fn dimms(root: &Path, s: &Sysctl) -> Known<Vec<Dimm>> {
    let text = match std::fs::read_to_string(root.join(PROFILE_FILE)) {
        Ok(t) => Some(t),
        Err(_) if is_live_mac(root) => platform::memory_profile(),
        Err(_) => None,
    };
    let memsize = match s.int("hw.memsize") {
        Ok(Some(bytes)) => format!("; hw.memsize says {} MiB in all", bytes >> 20),
        _ => String::new(),
    };
    let Some(text) = text else {
        return Known::Missing(format!(
            "system_profiler SPMemoryDataType gave no listing{memsize}"
        ));
    };
    let dimms = parse_memory_profile(&text);
    if dimms.is_empty() {
        return Known::Missing(format!(
            "system_profiler SPMemoryDataType listed no memory{memsize}"
        ));
    }
    Known::Value(dimms)
}

/// The modules in `system_profiler SPMemoryDataType`'s text: a slot per heading that names one
/// (`BANK 0/ChannelA-DIMM0:`), or, on Apple silicon, one entry named `Memory` from the
/// `Memory: 48 GB` line. `Size`, `Type` and `Speed` fill the entry they follow; an `Empty` slot
/// has no size (it is not populated) and no speed. The speed macOS prints in MHz is the
/// transfer rate (DDR4-2667 shows as `2667 MHz`), the speed the module runs at.
pub fn parse_memory_profile(text: &str) -> Vec<Dimm> {
    let slot = |locator: &str| Dimm {
        locator: locator.to_string(),
        size_mib: None,
        memory_type: String::new(),
        rated_mts: None,
        configured_mts: None,
        rank: None,
    };
    let mut dimms: Vec<Dimm> = Vec::new();
    // Whether the lines read belong to an entry (a slot, or the package's memory).
    let mut in_entry = false;
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if value.is_empty() {
            // A heading: the section's own (`Memory:`, `Memory Slots:`) or a slot's.
            in_entry = !matches!(key, "Memory" | "Memory Slots");
            if in_entry {
                dimms.push(slot(key));
            }
            continue;
        }
        if key == "Memory" && !in_entry {
            in_entry = true;
            dimms.push(slot("Memory"));
        }
        let Some(d) = dimms.last_mut().filter(|_| in_entry) else {
            continue;
        };
        match key {
            "Size" | "Memory" => d.size_mib = size_mib(value),
            "Type" => d.memory_type = value.to_string(),
            "Speed" => d.configured_mts = leading_number(value),
            _ => {}
        }
    }
    dimms
}

/// `8 GB`, `512 MB`, `1 TB` in MiB; `Empty` (or anything else) is no module.
fn size_mib(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let scale = match words.next()? {
        "MB" => 1,
        "GB" => 1 << 10,
        "TB" => 1 << 20,
        _ => return None,
    };
    Some(n * scale).filter(|&m| m > 0)
}

/// `2667 MHz` → 2667; `Empty` → None.
fn leading_number(text: &str) -> Option<u32> {
    text.split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_speeds_read_as_macos_prints_them() {
        assert_eq!(size_mib("48 GB"), Some(49152));
        assert_eq!(size_mib("512 MB"), Some(512));
        assert_eq!(size_mib("Empty"), None);
        assert_eq!(leading_number("2667 MHz"), Some(2667));
        assert_eq!(leading_number("Empty"), None);
    }

    #[test]
    fn text_without_memory_lists_nothing() {
        assert!(parse_memory_profile("").is_empty());
        assert!(
            parse_memory_profile("Memory:\n\n    Memory Slots:\n\n      ECC: Disabled\n")
                .is_empty()
        );
    }
}
