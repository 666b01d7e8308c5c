//! The Mac's host figures: its `sysctl` values, the VM counters (`host_statistics64`, or
//! `vm_stat`'s text in a fixture root), the load average and the other processes' times, from
//! the running system or a fixture root. PSI and steal stay `None`: macOS has neither.

use super::reading::{MemInfo, Reading};
use super::{HostState, MemPressure};
use crate::base::error::{Error, Result};
use crate::machine::sysctl::{HOST_NAMES, Sysctl, is_live_mac, parse_loadavg, parse_swapusage};
use crate::platform::{self, ProcessTimes, VmCounters};
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// The fixture file of a Mac root with its VM counters, as `vm_stat` prints them.
pub const VM_STAT_FILE: &str = "vm_stat.txt";

/// What a Mac's host figures are built from: its `sysctl` values, the VM counters, the load
/// average and the other processes' times, from the running system or a fixture root.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MacReading {
    sysctl: Sysctl,
    /// `None` when they could not be read (or a fixture root has no `vm_stat.txt`).
    vm: Option<VmCounters>,
    load: Option<[f64; 3]>,
    /// `None` for fixture roots.
    procs: Option<ProcessTimes>,
}

impl MacReading {
    /// The running Mac when `root` is `/` on macOS, a fixture root with `sysctl.txt` (and
    /// `vm_stat.txt`, a `vm.loadavg` line), or `None` for a Linux root.
    pub(super) fn under(root: &Path) -> Option<MacReading> {
        let Some(sysctl) = Sysctl::fixture(root) else {
            if !is_live_mac(root) {
                return None;
            }
            let names: Vec<String> = HOST_NAMES.iter().map(|n| n.to_string()).collect();
            return Some(MacReading {
                sysctl: Sysctl::read_live_names(&names),
                vm: platform::vm_counters(),
                load: platform::load_average(),
                procs: platform::process_times(u32::MAX),
            });
        };
        let vm = fs::read_to_string(root.join(VM_STAT_FILE))
            .ok()
            .and_then(|t| parse_vm_stat(&t));
        let load = sysctl.get("vm.loadavg").and_then(parse_loadavg);
        Some(MacReading {
            sysctl,
            vm,
            load,
            procs: None,
        })
    }

    /// The header's state; an error naming what is missing.
    pub(super) fn state(&self) -> Result<HostState> {
        let src = self.sysctl.source();
        let load = self
            .load
            .ok_or_else(|| Error::machine(format!("{src}: no load average (vm.loadavg)")))?;
        let vm = self.vm.ok_or_else(|| {
            Error::machine(format!(
                "{src}: no VM counters (host_statistics64, or {VM_STAT_FILE} in a fixture)"
            ))
        })?;
        let mem = self.mem_info()?;
        Ok(HostState {
            load,
            mem_total: mem.total,
            mem_available: mac_available(&vm),
            swap_total: mem.swap_total,
            swap_used: mem.swap_used,
            anon_huge: None,
            compressor: Some(vm.compressor * vm.page_size),
            mem_pressure: self.pressure(),
        })
    }

    /// Memory total from `hw.memsize`, available from the VM counters, swap from
    /// `vm.swapusage`.
    fn mem_info(&self) -> Result<MemInfo> {
        let total = self.sysctl.required_int("hw.memsize")?;
        let swap = self.sysctl.get("vm.swapusage");
        let (swap_total, swap_used) = swap.and_then(parse_swapusage).ok_or_else(|| {
            Error::machine(format!(
                "{}: vm.swapusage is {}",
                self.sysctl.source(),
                swap.map_or("missing".to_string(), |s| format!("'{s}'"))
            ))
        })?;
        Ok(MemInfo {
            total,
            available: self.vm.as_ref().map_or(0, mac_available),
            swap_total,
            swap_used,
            anon_huge: 0,
        })
    }

    fn pressure(&self) -> Option<MemPressure> {
        self.sysctl
            .int("kern.memorystatus_vm_pressure_level")
            .ok()
            .flatten()
            .and_then(MemPressure::from_level)
    }

    /// One pass for the sampler: PSI and steal stay `None`, macOS has neither.
    pub(super) fn reading(&self, exclude: u32) -> Reading {
        let mut problems = Vec::new();
        let load = self.load.unwrap_or_else(|| {
            problems.push(format!("{}: no load average", self.sysctl.source()));
            [0.0; 3]
        });
        let mem = self.mem_info().unwrap_or_else(|e| {
            problems.push(e.to_string());
            MemInfo::default()
        });
        if self.vm.is_none() {
            problems.push(format!("{}: no VM counters", self.sysctl.source()));
        }
        let (procs, unreadable) = match &self.procs {
            Some(p) => (
                p.readable
                    .iter()
                    .filter(|t| t.pid != exclude)
                    .map(|t| (t.pid, (t.name.clone(), t.cpu_ns)))
                    .collect(),
                p.unreadable,
            ),
            None => (HashMap::new(), 0),
        };
        Reading {
            load,
            mem,
            swap_in: self.vm.map(|v| v.swapins),
            swap_out: self.vm.map(|v| v.swapouts),
            mem_pressure: self.pressure(),
            procs,
            unreadable,
            problems,
            ..Reading::default()
        }
    }
}

/// Available memory on macOS: the free, speculative, inactive and purgeable pages of
/// `host_statistics64`, the pages the kernel can hand out without swapping or compressing
/// (the `vm_stat` lines "Pages free", "Pages speculative", "Pages inactive", "Pages
/// purgeable"), times the page size.
fn mac_available(vm: &VmCounters) -> u64 {
    (vm.free + vm.speculative + vm.inactive + vm.purgeable) * vm.page_size
}

/// The counters from what `vm_stat` prints ("Mach Virtual Memory Statistics: (page size of
/// 16384 bytes)", then "Pages free: 3669." and so on); `None` without the page size.
fn parse_vm_stat(text: &str) -> Option<VmCounters> {
    let page_size = text
        .split("page size of ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim().trim_matches('"') == name)
                    .then(|| v.trim().trim_end_matches('.').parse().ok())?
            })
            .unwrap_or(0)
    };
    Some(VmCounters {
        page_size,
        free: field("Pages free"),
        active: field("Pages active"),
        inactive: field("Pages inactive"),
        speculative: field("Pages speculative"),
        purgeable: field("Pages purgeable"),
        wired: field("Pages wired down"),
        compressor: field("Pages occupied by compressor"),
        swapins: field("Swapins"),
        swapouts: field("Swapouts"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_stat_text_gives_the_counters_and_available_memory() {
        let text = "Mach Virtual Memory Statistics: (page size of 4096 bytes)\n\
                    Pages free:            10.\nPages speculative:       2.\n\
                    Pages inactive:        20.\nPages purgeable:         3.\n\
                    Pages occupied by compressor: 7.\nSwapins:   5.\nSwapouts:  6.\n";
        let vm = parse_vm_stat(text).unwrap();
        assert_eq!(
            (
                vm.page_size,
                vm.free,
                vm.compressor,
                vm.swapins,
                vm.swapouts
            ),
            (4096, 10, 7, 5, 6)
        );
        assert_eq!(mac_available(&vm), 35 * 4096);
        assert_eq!(parse_vm_stat("Pages free: 10."), None);
    }
}
