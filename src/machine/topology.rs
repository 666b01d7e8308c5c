//! CPUs, cores, SMT siblings, packages, NUMA nodes and caches, read from sysfs under a root.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// How CPUs are ordered for pinning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PinPolicy {
    /// Across NUMA nodes first, then across cores, SMT siblings last.
    #[default]
    Spread,
    /// Fill a core's SMT siblings, then the next core, then the next node.
    Compact,
    /// Not pinned; the scheduler places threads.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoreKind {
    /// The kernel does not tell core types apart (most machines).
    Uniform,
    Performance,
    Efficiency,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub id: usize,
    pub package: usize,
    /// `core_id` from sysfs: unique within a package only.
    pub core: usize,
    pub node: usize,
    /// CPUs that share this CPU's core, itself included, sorted.
    pub smt_siblings: Vec<usize>,
    pub kind: CoreKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

/// One cache instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u8,
    pub kind: CacheKind,
    pub size: u64,
    /// Online CPUs that share this instance, sorted.
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumaNode {
    pub id: usize,
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub model: String,
    /// Online CPUs, sorted by id.
    pub cpus: Vec<Cpu>,
    /// Every cache instance once.
    pub caches: Vec<Cache>,
    pub nodes: Vec<NumaNode>,
}

impl Topology {
    /// Reads the topology under `root` (`/` in production).
    pub fn read(root: &Path) -> Result<Topology, String> {
        let _ = root;
        todo!("machine helper")
    }

    pub fn packages(&self) -> usize {
        todo!()
    }

    /// Physical cores: distinct (package, core) pairs.
    pub fn physical_cores(&self) -> usize {
        todo!()
    }

    /// The highest cache level that holds data.
    pub fn last_level(&self) -> Option<u8> {
        todo!()
    }

    /// Per-CPU share of a data/unified cache level: the smallest instance's size divided by the
    /// number of CPUs that share it.
    pub fn cache_share_per_cpu(&self, level: u8) -> Option<u64> {
        let _ = level;
        todo!()
    }

    /// Size of one instance of a data/unified cache level (the smallest).
    pub fn cache_instance_size(&self, level: u8) -> Option<u64> {
        let _ = level;
        todo!()
    }

    /// Sum of all instances of a data/unified level (for `dram` sizing: 4 × total LLC).
    pub fn cache_total(&self, level: u8) -> u64 {
        let _ = level;
        todo!()
    }

    /// CPUs in the order threads are pinned for the policy (for `None`, the spread order; the
    /// caller does not pin).
    pub fn cpu_order(&self, policy: PinPolicy) -> Vec<usize> {
        let _ = policy;
        todo!()
    }

    /// One line: "2 cores, 2 threads, 1 package, 1 NUMA node".
    pub fn summary(&self) -> String {
        todo!()
    }

    /// One line of caches: "L1d 32 KiB ×2, L2 512 KiB ×2, L3 32 MiB ×1".
    pub fn cache_summary(&self) -> String {
        todo!()
    }
}
