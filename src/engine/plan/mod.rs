//! Everything the engine needs to run (`Plan`): the grid, the loops and page layouts a run
//! may use, pinning, round length, duty cycle, memory budget and NUMA policy. Each part has
//! its own file; this one holds the plan itself and re-exports the parts, so
//! `engine::plan::X` names every one of them.

mod grid;
mod numa;
mod reused;
mod sets;
mod sizing;

pub use grid::{CellId, Grid, Schedule};
pub use numa::{MatrixPair, MemPolicy, Numa};
pub use reused::Reused;
pub use sets::{ArraySize, Layout, Level, SetSpec, WorkingSet};
pub(crate) use sizing::CGROUP_MARGIN_MIN;
pub use sizing::{DRAM_HIDDEN_LLC_FLOOR, MemoryBudget, cgroup_margin, size_sets};

use super::kernel::{Kernel, Variant};
use crate::base::error::{Error, Result};
use crate::machine::topology::PinPolicy;
use std::fmt;

/// `--kernel`: the loops a run may use.
#[derive(Debug, Clone, Copy)]
pub enum Loops {
    /// Every loop this CPU runs for the stores, timed per working set (`--kernel auto`).
    Auto,
    /// The kernel's default loop for where the arrays live (`--kernel avx2`).
    Default,
    /// One loop of the table, for every working set (`--kernel 'avx2 xmm fma'`).
    Named(&'static Variant),
}

impl Loops {
    /// As `--kernel` takes it: `auto`, the instruction set (`avx2`), or the loop's name.
    pub fn setting(self, kernel: Kernel) -> String {
        match self {
            Loops::Auto => "auto".to_string(),
            Loops::Default => kernel.isa.name().to_string(),
            Loops::Named(v) => v.name.to_string(),
        }
    }
}

impl PartialEq for Loops {
    fn eq(&self, other: &Loops) -> bool {
        match (self, other) {
            (Loops::Auto, Loops::Auto) | (Loops::Default, Loops::Default) => true,
            (Loops::Named(a), Loops::Named(b)) => a.name == b.name,
            _ => false,
        }
    }
}

/// `--huge-pages`: the page layouts a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HugePages {
    /// Per working set: by trial for arrays in cache, on for arrays in memory.
    #[default]
    Auto,
    On,
    Off,
}

impl fmt::Display for HugePages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HugePages::Auto => "auto",
            HugePages::On => "on",
            HugePages::Off => "off",
        })
    }
}

/// Everything the engine needs to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub grid: Grid,
    /// The instruction set and stores (with `Loops::Auto`, the widest the CPU has: the loops
    /// timed are every one it runs for these stores).
    pub kernel: Kernel,
    /// Which loops the cells may run: each working set's fastest by trial, or one pinned.
    pub loops: Loops,
    pub pin: PinPolicy,
    /// CPUs in pinning order; worker i runs on `cpu_order[i % len]` unless `pin` is `None`.
    pub cpu_order: Vec<usize>,
    /// A round lasts at least this long (a DRAM round is at least one whole pass).
    pub round_ms: u32,
    pub schedule: Schedule,
    /// Percentage of the time rounds run (1..=100).
    pub duty: u8,
    /// Transparent huge pages for the arrays: advised (MADV_HUGEPAGE), refused
    /// (MADV_NOHUGEPAGE), or chosen per working set.
    pub huge_pages: HugePages,
    /// The most the arrays of all kept cells may hold at once, bytes ([`MemoryBudget`]).
    pub memory_budget: u64,
    /// Each worker counts its rounds (`machine::counters`); `--counters off` turns it off.
    pub counters: bool,
    /// Where pages go and which node each CPU is on.
    pub numa: Numa,
    /// Loops and layouts an earlier run settled (`--choices-from`): a working set held here
    /// runs them, with no trial.
    pub reused: Option<Reused>,
}

impl Plan {
    /// Checks what the engine relies on: a non-empty grid, thread counts of at least one, a
    /// CPU order to pin to, a round length and a duty cycle in range.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.grid.sets.is_empty() {
            return Err(Error::engine("the grid has no working sets"));
        }
        if self.grid.threads.is_empty() || self.grid.threads.contains(&0) {
            return Err(Error::engine("thread counts must be at least 1"));
        }
        if self.grid.ops.is_empty() {
            return Err(Error::engine("the grid has no ops"));
        }
        if self.cpu_order.is_empty() {
            return Err(Error::engine("no CPUs to run on"));
        }
        if self.round_ms == 0 {
            return Err(Error::engine("a round must last at least 1 ms"));
        }
        if !(1..=100).contains(&self.duty) {
            return Err(Error::engine(
                "the duty cycle is a percentage from 1 to 100",
            ));
        }
        let matrix = &self.numa.matrix;
        if !matrix.is_empty()
            && (matrix.len() != self.grid.sets.len() || matrix.iter().any(|p| p.cpus.is_empty()))
        {
            return Err(Error::engine(
                "the matrix needs one pair with CPUs per working set",
            ));
        }
        Ok(())
    }

    /// The CPU worker `i` is pinned to, if any.
    pub(crate) fn cpu_for(&self, i: usize) -> Option<usize> {
        (self.pin != PinPolicy::None).then(|| self.cpu_order[i % self.cpu_order.len()])
    }
}
