//! Which level an explicit working set lands in, from the caches the machine has: `--sets 64MB`
//! is labelled "64 MB, past L3 (48 MiB): dram", `--sets 1MiB/thread` on a 2 MiB-per-core L2
//! "1 MiB/thread, within L2 (2 MiB per CPU): l2".
//!
//! The three arrays together are what must fit. A per-thread set is held against each level's
//! share per CPU (each thread streams its own slices); a split set against each level's total
//! over the machine, which is where it lands when every CPU runs a thread (fewer threads reach
//! fewer caches, so it can spill further at low thread counts). The first level that holds it
//! is where it lands; past the last, it is DRAM.
//!
//! That is where a set lands on the machine. A row of the table, a set at a thread count, is
//! labelled against what its own threads reach (`landing_reached`): the caches that hold one of
//! the CPUs they ran on, as the cliffs of a size sweep are (`sweep::cache_edges`), so that one
//! thread's row of a 22.6 KiB split set reads "past L1d (48 KiB reached)" where the machine's
//! two L1ds (96 KiB) would hold it.

use super::model::{self as wire, ArraySize, Level};
use super::sweep::{SizeKind, cache_edges};
use crate::base::units::format_bytes;
use crate::machine::topology::Topology;

/// What a landing's capacity is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Basis {
    /// A level's share per CPU (a per-thread set on the machine).
    PerCpu,
    /// All of a level's caches (a split set on the machine, every CPU running a thread).
    Total,
    /// The caches a row's threads reach.
    Reached,
}

/// Where a set lands and the cache level that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Landing {
    pub(crate) level: Level,
    /// The cache level it fits in, or the last one it is past (for DRAM).
    cache_level: u8,
    /// That level's capacity as compared: per CPU for per-thread sets, in all otherwise, or
    /// what a row's threads reach.
    capacity: u64,
    basis: Basis,
}

impl Landing {
    /// "past L3 (48 MiB): dram", "within L2 (512 KiB per CPU): l2", "past L1d (48 KiB
    /// reached): l2".
    pub(crate) fn phrase(&self) -> String {
        let cache = match self.cache_level {
            1 => "L1d".to_string(),
            n => format!("L{n}"),
        };
        let within = if self.level == Level::Dram {
            "past"
        } else {
            "within"
        };
        let per = match self.basis {
            Basis::PerCpu => " per CPU",
            Basis::Total => "",
            Basis::Reached => " reached",
        };
        format!(
            "{within} {cache} ({}{per}): {}",
            format_bytes(self.capacity),
            level_word(self.level)
        )
    }
}

fn level_word(level: Level) -> &'static str {
    match level {
        Level::L1 => "l1",
        Level::L2 => "l2",
        Level::L3 => "l3",
        Level::Dram => "dram",
    }
}

/// Where arrays of `size` land on `topo`; None when the machine reports no data cache.
pub(crate) fn landing(size: ArraySize, topo: &Topology) -> Option<Landing> {
    let last = topo.last_level()?;
    let (footprint, per_cpu) = match size {
        ArraySize::PerThread(b) => (b.saturating_mul(3), true),
        ArraySize::Split(b) => (b.saturating_mul(3), false),
    };
    let capacity = |n: u8| {
        if per_cpu {
            topo.cache_share_per_cpu(n)
        } else {
            Some(topo.cache_total(n)).filter(|&t| t > 0)
        }
    };
    let basis = if per_cpu { Basis::PerCpu } else { Basis::Total };
    let mut past = None;
    for n in 1..=last {
        let Some(cap) = capacity(n) else { continue };
        if footprint <= cap {
            return Some(Landing {
                level: level_of(n),
                cache_level: n,
                capacity: cap,
                basis,
            });
        }
        past = Some((n, cap));
    }
    let (cache_level, capacity) = past?;
    Some(Landing {
        level: Level::Dram,
        cache_level,
        capacity,
        basis,
    })
}

fn level_of(n: u8) -> Level {
    match n {
        1 => Level::L1,
        2 => Level::L2,
        _ => Level::L3,
    }
}

/// Where arrays of `size` land for a row of `threads` threads that ran on `cpus` (-1 or none:
/// not known): in the first level whose capacity those threads reach holds the three arrays
/// (each thread's, for a per-thread set), the rule of `sweep::cache_edges`; past the last,
/// DRAM. None when the snapshot's machine reports no data cache.
pub(crate) fn landing_reached(
    size: ArraySize,
    topo: &wire::Topology,
    threads: usize,
    cpus: &[i32],
) -> Option<Landing> {
    let (kind, bytes) = SizeKind::of(size);
    let cpus: Vec<usize> = cpus
        .iter()
        .filter_map(|&c| usize::try_from(c).ok())
        .collect();
    let edges = cache_edges(topo, kind, threads, &cpus);
    let landing = |level, edge: &super::sweep::CacheEdge| Landing {
        level,
        cache_level: edge.level,
        capacity: edge.capacity,
        basis: Basis::Reached,
    };
    match edges.iter().find(|e| bytes <= e.bytes) {
        Some(e) => Some(landing(level_of(e.level), e)),
        None => edges.last().map(|e| landing(Level::Dram, e)),
    }
}

/// A set's row label with, for an explicit size (no level of its own), where it lands:
/// "64 MB" → "64 MB, past L3 (48 MiB): dram". Named levels and unknown caches keep the label.
pub(crate) fn with_landing(
    label: String,
    level: Option<Level>,
    size: ArraySize,
    topo: &Topology,
) -> String {
    match (level, landing(size, topo)) {
        (None, Some(l)) => format!("{label}, {}", l.phrase()),
        _ => label,
    }
}
