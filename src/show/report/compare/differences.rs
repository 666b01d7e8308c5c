//! What differs between two runs' machines and settings, said above the comparison's table:
//! a difference there can explain a difference in the figures better than the change can.

use crate::show::report::lines::{
    cache_summary, clock_line, host_line, isa_name, pin_line, set_label, stores_name,
    topology_summary,
};
use crate::show::report::markdown::{checksum_line, duty_percent};
use crate::show::report::model::Snapshot;
use crate::show::report::text::gbs_plain;

/// Clock estimates closer than this (relative) are the same clock measured twice.
const CLOCK_TOLERANCE: f64 = 0.01;

/// The lines that say how A and B differ; empty when they do not.
pub(crate) fn differences(a: &Snapshot, b: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    let mut diff = |what: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{what}: {x} (A) → {y} (B)"));
        }
    };
    let (ia, ib) = (&a.info, &b.info);
    diff(
        "CPU model",
        ia.topology.model.trim().to_string(),
        ib.topology.model.trim().to_string(),
    );
    diff(
        "topology",
        topology_summary(&ia.topology),
        topology_summary(&ib.topology),
    );
    diff(
        "caches",
        cache_summary(&ia.topology),
        cache_summary(&ib.topology),
    );
    diff(
        "kernel",
        isa_name(ia.kernel.isa).to_string(),
        isa_name(ib.kernel.isa).to_string(),
    );
    let selection = |s: &Snapshot| match &s.info.selection {
        Some(sel) => format!("--kernel {} --huge-pages {}", sel.kernel, sel.huge_pages),
        None => format!("--kernel {} --huge-pages on", isa_name(s.info.kernel.isa)),
    };
    diff("kernel and pages chosen by", selection(a), selection(b));
    diff(
        "stores",
        stores_name(ia.kernel.stores).to_string(),
        stores_name(ib.kernel.stores).to_string(),
    );
    diff(
        "pinning",
        pin_line(ia.pin).to_string(),
        pin_line(ib.pin).to_string(),
    );
    let same_clock = match (ia.clock.usable_ghz(), ib.clock.usable_ghz()) {
        (Some(x), Some(y)) => {
            (y / x - 1.0).abs() < CLOCK_TOLERANCE && ia.clock.agree == ib.clock.agree
        }
        (None, None) => true,
        _ => false,
    };
    if !same_clock {
        diff("clock", clock_line(&ia.clock), clock_line(&ib.clock));
    }
    let vendor = |s: &Snapshot| match s.vendor_gbs() {
        Some(v) => format!("{} ({})", gbs_plain(v), s.info.vendor.source_text.trim()),
        None => "none".to_string(),
    };
    diff("vendor figure", vendor(a), vendor(b));
    diff("rounds", ia.rounds.to_string(), ib.rounds.to_string());
    diff("round_ms", ia.round_ms.to_string(), ib.round_ms.to_string());
    diff("duty", duty_percent(ia.duty), duty_percent(ib.duty));
    let limits = |i: &crate::show::report::model::RunInfo| {
        i.container.and_then(|c| c.line()).unwrap_or("none".into())
    };
    diff("container", limits(ia), limits(ib));
    let sets = |s: &Snapshot| {
        s.grid
            .sets
            .iter()
            .map(set_label)
            .collect::<Vec<_>>()
            .join(", ")
    };
    diff("working sets", sets(a), sets(b));
    let threads = |s: &Snapshot| {
        s.grid
            .threads
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    diff("thread counts", threads(a), threads(b));
    diff(
        "checksums",
        checksum_line(a).replace("checksums: ", ""),
        checksum_line(b).replace("checksums: ", ""),
    );
    diff(
        "load at start",
        host_line(&ia.host_start),
        host_line(&ib.host_start),
    );
    out
}
