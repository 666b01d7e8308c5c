//! The lines about the machine and the run that the Markdown and `compare` print.
//!
//! The machine module words a topology and a host reading, and the engine names its kernels and
//! working sets; a report says the same as the live view. So a snapshot's values are handed back
//! to those types and worded by them, through the conversions in mirror.rs (each beside its
//! counterpart the other way, which build/ uses). Wording is all they are used for: what a
//! snapshot holds is the wire model alone.

use super::lands::{landing_reached, with_landing};
use super::model::{
    CellChoice, ChoiceBy, ClockEstimate, HostState, Isa, Level, Pages, PinPolicy, Stores, Topology,
    VendorFigure, WorkingSet,
};
use super::text::gbs_plain;
use crate::engine::events::PagePlacement;
use crate::engine::{events, kernel, plan};
use crate::machine::{host, topology};

/// "AMD EPYC 7763 64-Core Processor; 2 cores, 2 threads, 1 package, 1 NUMA node; caches L1d…".
pub(crate) fn machine_line(t: &Topology) -> String {
    let model = if t.model.trim().is_empty() {
        "unknown CPU model"
    } else {
        t.model.trim()
    };
    let machine = machine_topology(t);
    format!(
        "{model}; {}; caches {}",
        machine.summary(),
        machine.cache_summary()
    )
}

/// "2 cores, 2 threads, 1 package, 1 NUMA node".
pub(crate) fn topology_summary(t: &Topology) -> String {
    machine_topology(t).summary()
}

/// "L1d 32 KiB ×2, L2 512 KiB ×2, L3 32 MiB ×1".
pub(crate) fn cache_summary(t: &Topology) -> String {
    machine_topology(t).cache_summary()
}

/// "load average 0.18 0.05 0.01; swap 0 B of 0 B used; MemAvailable 23.3 GiB of 23.5 GiB".
pub(crate) fn host_line(h: &HostState) -> String {
    host::HostState::from(h).line()
}

/// "Clock estimate 4.49 GHz (dependent 1-cycle add chain, …)", or both chains when they
/// disagree.
pub(crate) fn clock_line(c: &ClockEstimate) -> String {
    let Some(g) = c.usable_ghz() else {
        return "Clock estimate: none, so no bytes/cycle".to_string();
    };
    let method = if c.method.trim().is_empty() {
        String::new()
    } else {
        format!(" ({})", c.method.trim())
    };
    let counted = c
        .counted_ghz
        .filter(|k| ((k - g) / g).abs() > crate::machine::clock::COUNTED_TOLERANCE)
        .map(|k| format!("; cycles counted on the chain's thread give {k:.2} GHz"))
        .unwrap_or_default();
    if c.agree || !(c.check_ghz.is_finite() && c.check_ghz > 0.0) {
        format!("Clock estimate {g:.2} GHz{method}{counted}")
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
    let source = v.source_text.trim();
    match v.usable_gbs() {
        Some(g) if source.is_empty() => format!("Vendor figure: {}", gbs_plain(g)),
        Some(g) => format!("Vendor figure: {} ({source})", gbs_plain(g)),
        None if source.is_empty() => "Vendor figure: none (pass --vendor-gbs N)".to_string(),
        None if source.contains("--vendor-gbs") => format!("Vendor figure: none: {source}"),
        None => format!("Vendor figure: none (pass --vendor-gbs N); {source}"),
    }
}

/// `avx2`, `portable`: the engine's name for the instruction set.
pub(crate) fn isa_name(isa: Isa) -> &'static str {
    kernel::Isa::from(isa).name()
}

pub(crate) fn stores_name(s: Stores) -> &'static str {
    match s {
        Stores::Normal => "normal stores",
        Stores::Nt => "non-temporal stores",
    }
}

/// `avx2 ymm mul+add, huge pages`: the loop and layout a cell ran with.
pub(crate) fn choice_kept(c: &CellChoice) -> String {
    format!("{}, {}", c.variant, events::layout_name(c.huge_pages))
}

/// `1.05 × avx2 xmm fma, huge pages`: the kept candidate against the runner-up of its trial.
pub(crate) fn choice_versus(c: &CellChoice) -> Option<String> {
    c.runner_up.as_ref().map(|r| {
        format!(
            "{:.2} × {}, {}",
            r.ratio,
            r.variant,
            events::layout_name(r.huge_pages)
        )
    })
}

/// `avx2 ymm mul+add, huge pages (1.05 × avx2 xmm fma, huge pages)`: both, for one cell.
pub(crate) fn choice_line(c: &CellChoice) -> String {
    match choice_versus(c) {
        Some(v) => format!("{} ({v})", choice_kept(c)),
        None => choice_kept(c),
    }
}

/// `trial`, `rule`, `pinned`, `only`: the engine's word for how a choice was settled.
pub(crate) fn choice_by_name(by: ChoiceBy) -> &'static str {
    events::By::from(by).name()
}

pub(crate) fn pin_line(p: PinPolicy) -> &'static str {
    match p {
        PinPolicy::Spread => "spread (across NUMA nodes, then cores, SMT siblings last)",
        PinPolicy::Compact => "compact (a core's SMT siblings first, then the next core)",
        PinPolicy::None => "none (the scheduler placed the threads)",
    }
}

/// `l2`, `dram`: the engine's name for the level.
pub(crate) fn level_name(level: Level) -> &'static str {
    plan::Level::from(level).name()
}

/// `512 KiB/thread (l2)`, `128 MiB (dram)`, `64 MiB`: the engine's label of the set, the one
/// the live view shows.
pub(crate) fn set_label(set: &WorkingSet) -> String {
    plan::WorkingSet::from(set).label()
}

/// The set's label with, for an explicit size, the level it lands in on the snapshot's machine
/// (`64 MB, past L3 (48 MiB): dram`), as the table's rows are labelled.
pub(crate) fn set_label_on(set: &WorkingSet, t: &Topology) -> String {
    with_landing(set_label(set), set.level, set.size, &machine_topology(t))
}

/// The label of a set's row at `threads` threads that ran on `cpus`: for an explicit size,
/// where it lands against the caches those threads reach (`64 MB, past L3 (64 MiB reached):
/// dram`), the capacity the cliffs of a size sweep name too.
pub(crate) fn row_label_on(set: &WorkingSet, t: &Topology, threads: usize, cpus: &[i32]) -> String {
    let label = set_label(set);
    match (set.level, landing_reached(set.size, t, threads, cpus)) {
        (None, Some(l)) => format!("{label}, {}", l.phrase()),
        _ => label,
    }
}

/// The machine module's topology of a snapshot's, for its wording and its cache arithmetic.
pub(crate) fn machine_topology(t: &Topology) -> topology::Topology {
    t.into()
}

/// "100 % on the node meant for them (48 sampled: node 0 48)", as the engine words it.
pub(crate) fn pages_words(p: &Pages) -> String {
    PagePlacement::from(p).line()
}
