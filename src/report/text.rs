//! Phrases the writers share: the machine, host, clock and vendor lines, and number formats.
//! They read the snapshot's plain fields only, so an old JSON snapshot renders the same lines.

use crate::engine::kernel::Stores;
use crate::machine::clock::ClockEstimate;
use crate::machine::host::HostState;
use crate::machine::topology::{CacheKind, CoreKind, PinPolicy, Topology};
use crate::machine::vendor::VendorFigure;
use crate::units::format_bytes;
use std::collections::{BTreeMap, BTreeSet};

/// `1 thread`, `8 threads`.
pub(crate) fn threads_phrase(n: usize) -> String {
    if n == 1 {
        "1 thread".to_string()
    } else {
        format!("{n} threads")
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A finite value with `decimals`, or `–`.
pub(crate) fn num(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "–".to_string(),
    }
}

/// "2 cores, 2 threads, 1 package, 1 NUMA node" (with core types on hybrid parts).
pub(crate) fn topology_summary(t: &Topology) -> String {
    let cores: BTreeSet<(usize, usize)> = t.cpus.iter().map(|c| (c.package, c.core)).collect();
    let packages: BTreeSet<usize> = t.cpus.iter().map(|c| c.package).collect();
    let nodes = if t.nodes.is_empty() {
        t.cpus.iter().map(|c| c.node).collect::<BTreeSet<_>>().len()
    } else {
        t.nodes.len()
    };
    let mut s = format!(
        "{}, {}, {}, {}",
        plural(cores.len(), "core", "cores"),
        plural(t.cpus.len(), "thread", "threads"),
        plural(packages.len(), "package", "packages"),
        plural(nodes, "NUMA node", "NUMA nodes"),
    );
    let kind_cores = |k: CoreKind| {
        t.cpus
            .iter()
            .filter(|c| c.kind == k)
            .map(|c| (c.package, c.core))
            .collect::<BTreeSet<_>>()
            .len()
    };
    let (p, e) = (
        kind_cores(CoreKind::Performance),
        kind_cores(CoreKind::Efficiency),
    );
    if p + e > 0 {
        s.push_str(&format!(" ({p} performance and {e} efficiency cores)"));
    }
    s
}

/// "L1d 32 KiB ×2, L1i 32 KiB ×2, L2 512 KiB ×2, L3 32 MiB ×1".
pub(crate) fn cache_summary(t: &Topology) -> String {
    let mut groups: BTreeMap<(u8, u8, u64), usize> = BTreeMap::new();
    for c in &t.caches {
        let kind = match c.kind {
            CacheKind::Data => 0,
            CacheKind::Instruction => 1,
            CacheKind::Unified => 2,
        };
        *groups.entry((c.level, kind, c.size)).or_default() += 1;
    }
    if groups.is_empty() {
        return "none reported".to_string();
    }
    groups
        .iter()
        .map(|(&(level, kind, size), n)| {
            let suffix = match (level, kind) {
                (1, 0) => "d",
                (_, 1) => "i",
                _ => "",
            };
            format!("L{level}{suffix} {} ×{n}", format_bytes(size))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "AMD EPYC 7763 64-Core Processor; 2 cores, 2 threads, 1 package, 1 NUMA node; caches L1d…".
pub(crate) fn machine_line(t: &Topology) -> String {
    let model = if t.model.trim().is_empty() {
        "unknown CPU model"
    } else {
        t.model.trim()
    };
    format!(
        "{model}; {}; caches {}",
        topology_summary(t),
        cache_summary(t)
    )
}

/// "load average 0.18 0.05 0.01; swap 0 B of 0 B used; MemAvailable 23.3 GiB of 31.2 GiB".
pub(crate) fn host_line(h: &HostState) -> String {
    format!(
        "load average {:.2} {:.2} {:.2}; swap {} of {} used; MemAvailable {} of {}",
        h.load[0],
        h.load[1],
        h.load[2],
        format_bytes(h.swap_used),
        format_bytes(h.swap_total),
        format_bytes(h.mem_available),
        format_bytes(h.mem_total),
    )
}

/// A usable clock figure.
pub(crate) fn ghz(c: &ClockEstimate) -> Option<f64> {
    Some(c.ghz).filter(|g| g.is_finite() && *g > 0.0)
}

/// "Clock estimate 4.49 GHz (dependent 1-cycle add chain, …)", or both chains when they
/// disagree.
pub(crate) fn clock_line(c: &ClockEstimate) -> String {
    let Some(g) = ghz(c) else {
        return "Clock estimate: none, so no bytes/cycle".to_string();
    };
    let method = if c.method.trim().is_empty() {
        String::new()
    } else {
        format!(" ({})", c.method.trim())
    };
    if c.agree || !(c.check_ghz.is_finite() && c.check_ghz > 0.0) {
        format!("Clock estimate {g:.2} GHz{method}")
    } else {
        format!(
            "Clock estimate {g:.2} GHz{method}, but a second dependent chain gives {:.2} GHz: \
             the two disagree, and bytes/cycle uses {g:.2}",
            c.check_ghz
        )
    }
}

/// "Vendor figure: 273 GB/s (--vendor-gbs)" or "Vendor figure: none (pass --vendor-gbs N)".
pub(crate) fn vendor_line(v: &VendorFigure) -> String {
    let source = v.source.trim();
    match v.gbs.filter(|g| g.is_finite() && *g > 0.0) {
        Some(g) if source.is_empty() => format!("Vendor figure: {}", gbs_plain(g)),
        Some(g) => format!("Vendor figure: {} ({source})", gbs_plain(g)),
        None if source.is_empty() => "Vendor figure: none (pass --vendor-gbs N)".to_string(),
        None => format!("Vendor figure: none (pass --vendor-gbs N); {source}"),
    }
}

/// `273 GB/s`, `51.2 GB/s`: no trailing `.0`.
pub(crate) fn gbs_plain(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{} GB/s", v.round() as i64)
    } else {
        format!("{v:.1} GB/s")
    }
}

pub(crate) fn stores_name(s: Stores) -> &'static str {
    match s {
        Stores::Normal => "normal stores",
        Stores::Nt => "non-temporal stores",
    }
}

pub(crate) fn pin_line(p: PinPolicy) -> &'static str {
    match p {
        PinPolicy::Spread => "spread (across NUMA nodes, then cores, SMT siblings last)",
        PinPolicy::Compact => "compact (a core's SMT siblings first, then the next core)",
        PinPolicy::None => "none (the scheduler placed the threads)",
    }
}

/// CPU ids as ranges: "0-3, 8, 10-11".
pub(crate) fn cpu_ranges(cpus: &BTreeSet<i32>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut iter = cpus.iter().copied().filter(|c| *c >= 0).peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end = iter.next().unwrap_or(end);
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_plurals() {
        let set: BTreeSet<i32> = [0, 1, 2, 3, 8, 10, 11, -1].into_iter().collect();
        assert_eq!(cpu_ranges(&set), "0-3, 8, 10-11");
        assert_eq!(threads_phrase(1), "1 thread");
        assert_eq!(threads_phrase(14), "14 threads");
        assert_eq!(gbs_plain(273.0), "273 GB/s");
        assert_eq!(gbs_plain(51.2), "51.2 GB/s");
        assert_eq!(num(None, 2), "–");
        assert_eq!(num(Some(f64::NAN), 2), "–");
        assert_eq!(num(Some(1.005), 1), "1.0");
    }
}
