//! Phrases the writers share: the machine, host, clock and vendor lines, and number formats.
//! They read the snapshot's plain fields only, so an old JSON snapshot renders the same lines.

use crate::engine::kernel::Stores;
use crate::machine::clock::ClockEstimate;
use crate::machine::host::HostState;
use crate::machine::topology::{PinPolicy, Topology};
use crate::machine::vendor::VendorFigure;
use std::collections::BTreeSet;

/// `1 thread`, `8 threads`.
pub(crate) fn threads_phrase(n: usize) -> String {
    if n == 1 {
        "1 thread".to_string()
    } else {
        format!("{n} threads")
    }
}

/// A finite value with `decimals`, or `–`.
pub(crate) fn num(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "–".to_string(),
    }
}

/// "AMD EPYC 7763 64-Core Processor; 2 cores, 2 threads, 1 package, 1 NUMA node; caches L1d…".
pub(crate) fn machine_line(t: &Topology) -> String {
    let model = if t.model.trim().is_empty() {
        "unknown CPU model"
    } else {
        t.model.trim()
    };
    format!("{model}; {}; caches {}", t.summary(), t.cache_summary())
}

/// The host line, as the machine module words it.
pub(crate) fn host_line(h: &HostState) -> String {
    h.line()
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
        None if source.contains("--vendor-gbs") => format!("Vendor figure: none: {source}"),
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
