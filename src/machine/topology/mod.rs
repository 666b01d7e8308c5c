//! CPUs, cores, SMT siblings, packages, NUMA nodes and caches, read from sysfs under a root
//! (Linux, `sysfs.rs`) or built from `sysctl` values (macOS, `sysctl.rs`); this file holds the
//! types and the questions the rest of the program asks of them (pinning order, cache shares,
//! summaries).
//!
//! Working sets are sized from the caches and threads are pinned from the topology, so a
//! bandwidth figure can name where it ran. Everything is read under a root path so that tests
//! run on fixture trees of machines we do not have (a 2-socket server, a hybrid laptop, Macs).

mod sysctl;
mod sysfs;

use super::cpu_id::CpuId;
use super::sysctl::Sysctl;
use crate::base::error::Result;
use crate::base::units::format_bytes;
use std::collections::BTreeMap;
use std::path::Path;

/// How CPUs are ordered for pinning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PinPolicy {
    /// Across NUMA nodes first, then across cores, SMT siblings last.
    #[default]
    Spread,
    /// Fill a core's SMT siblings, then the next core, then the next node.
    Compact,
    /// Not pinned; the scheduler places threads.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreKind {
    /// The kernel does not tell core types apart (most machines).
    Uniform,
    Performance,
    Efficiency,
}

#[derive(Debug, Clone, PartialEq)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

/// One cache instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    pub level: u8,
    pub kind: CacheKind,
    pub size: u64,
    /// Online CPUs that share this instance, sorted.
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NumaNode {
    pub id: usize,
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub model: String,
    /// Online CPUs, sorted by id.
    pub cpus: Vec<Cpu>,
    /// Every cache instance once.
    pub caches: Vec<Cache>,
    pub nodes: Vec<NumaNode>,
    /// The package has a last-level cache the OS does not list (Apple Silicon's system-level
    /// cache), so the highest cache listed is not the last one before memory.
    pub llc_hidden: bool,
    /// The CPU design as the processor reports it, for the table of load and store ports;
    /// None where the machine does not say.
    pub cpu: Option<CpuId>,
}

impl Topology {
    /// The topology of a machine under `tests/fixtures/NAME`, for tests.
    #[cfg(test)]
    pub(crate) fn fixture(name: &str) -> Topology {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        Topology::read(&root).unwrap()
    }

    /// Reads the topology under `root` (`/` in production): from `sysctl` values on a Mac (the
    /// running one, or a root with a `sysctl.txt` listing), else from sysfs.
    ///
    /// From sysfs, only the online CPU list is required; every other file degrades when missing (no cache
    /// directory → no caches, no node directory → one node 0, no siblings list → CPUs with the
    /// same package and core id are siblings). Malformed contents are errors naming the file.
    pub fn read(root: &Path) -> Result<Topology> {
        if let Some(values) = Sysctl::under(root) {
            return Topology::from_sysctl(&values);
        }
        Topology::read_tree(root)
    }

    pub fn packages(&self) -> usize {
        let mut ids: Vec<usize> = self.cpus.iter().map(|c| c.package).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    /// Physical cores: distinct (package, core) pairs, where a core is the set of CPUs that
    /// sysfs lists as SMT siblings (core ids alone repeat across dies on some machines).
    pub fn physical_cores(&self) -> usize {
        self.cores().len()
    }

    /// The highest cache level that holds data.
    pub fn last_level(&self) -> Option<u8> {
        self.data_caches().map(|c| c.level).max()
    }

    /// Per-CPU share of a data/unified cache level: the smallest share over its instances,
    /// each instance's size divided by the number of CPUs that share it (on uniform machines,
    /// the one instance size divided by its sharers; on hybrid ones, the tighter core type).
    pub fn cache_share_per_cpu(&self, level: u8) -> Option<u64> {
        self.data_caches()
            .filter(|c| c.level == level)
            .map(|c| c.size / c.cpus.len().max(1) as u64)
            .min()
    }

    /// Size of one instance of a data/unified cache level (the smallest).
    pub fn cache_instance_size(&self, level: u8) -> Option<u64> {
        self.data_caches()
            .filter(|c| c.level == level)
            .map(|c| c.size)
            .min()
    }

    /// Sum of all instances of a data/unified level (for `dram` sizing: 4 × total LLC).
    pub fn cache_total(&self, level: u8) -> u64 {
        self.data_caches()
            .filter(|c| c.level == level)
            .map(|c| c.size)
            .sum()
    }

    /// CPUs in the order threads are pinned for the policy (for `None`, the spread order; the
    /// caller does not pin). Every online CPU appears exactly once.
    ///
    /// Spread: round-robin across NUMA nodes; within a node one CPU of every physical core
    /// first (P-cores before E-cores, cores alternating between last-level cache instances),
    /// then the second SMT sibling of every core, and so on. Compact: node by node, core by
    /// core (P-cores first), all of a core's siblings before the next core.
    pub fn cpu_order(&self, policy: PinPolicy) -> Vec<usize> {
        let mut per_node: BTreeMap<usize, Vec<Vec<usize>>> = BTreeMap::new();
        for core in self.cores() {
            let node = self.cpu(core[0]).map(|c| c.node).unwrap_or(0);
            per_node.entry(node).or_default().push(core);
        }
        match policy {
            PinPolicy::Compact => {
                let mut out = Vec::with_capacity(self.cpus.len());
                for (_, mut cores) in per_node {
                    cores.sort_by_key(|core| (self.kind_rank(core[0]), core[0]));
                    out.extend(cores.into_iter().flatten());
                }
                out
            }
            PinPolicy::Spread | PinPolicy::None => {
                let lists: Vec<Vec<usize>> = per_node
                    .into_values()
                    .map(|cores| self.spread_within_node(cores))
                    .collect();
                let mut out = Vec::with_capacity(self.cpus.len());
                let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
                for i in 0..longest {
                    out.extend(lists.iter().filter_map(|l| l.get(i)));
                }
                out
            }
        }
    }

    /// How many of the `usable` CPUs each NUMA node and each package holds, where the machine
    /// has more than one of them: the thread counts at which a run fills one node or one
    /// socket (distinct, sorted; nodes or packages without a usable CPU left out).
    pub fn domain_counts(&self, usable: &[usize]) -> Vec<usize> {
        let mut per_node: BTreeMap<usize, usize> = BTreeMap::new();
        let mut per_package: BTreeMap<usize, usize> = BTreeMap::new();
        for cpu in usable.iter().filter_map(|&c| self.cpu(c)) {
            *per_node.entry(cpu.node).or_default() += 1;
            *per_package.entry(cpu.package).or_default() += 1;
        }
        let mut out: Vec<usize> = [per_node, per_package]
            .into_iter()
            .filter(|m| m.len() > 1)
            .flat_map(BTreeMap::into_values)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The thread count at which a run pinned in `order` first has a thread on an E-core:
    /// None on machines without core types, or when no E-core is in the order.
    pub fn first_efficiency_thread(&self, order: &[usize]) -> Option<usize> {
        order
            .iter()
            .position(|&c| self.cpu(c).map(|x| x.kind) == Some(CoreKind::Efficiency))
            .map(|i| i + 1)
    }

    /// One line: "2 cores, 2 threads, 1 package, 1 NUMA node".
    pub fn summary(&self) -> String {
        let cores = self.cores();
        let count = |kind: CoreKind| {
            cores
                .iter()
                .filter(|c| self.cpu(c[0]).map(|x| x.kind) == Some(kind))
                .count()
        };
        let (p, e) = (count(CoreKind::Performance), count(CoreKind::Efficiency));
        let mut line = plural(cores.len(), "core", "cores");
        if p + e > 0 {
            line.push_str(&format!(" ({p} P + {e} E)"));
        }
        line.push_str(&format!(
            ", {}, {}, {}",
            crate::base::units::threads_phrase(self.cpus.len()),
            plural(self.packages(), "package", "packages"),
            plural(self.nodes.len(), "NUMA node", "NUMA nodes"),
        ));
        let empty = self.nodes.iter().filter(|n| n.cpus.is_empty()).count();
        if empty > 0 {
            line.push_str(&format!(" ({empty} without CPUs)"));
        }
        line
    }

    /// One line of caches: "L1d 32 KiB ×2, L2 512 KiB ×2, L3 32 MiB ×1".
    ///
    /// Data and unified caches only; instances of one level with different sizes (hybrid
    /// machines) are listed separately, larger first.
    pub fn cache_summary(&self) -> String {
        let mut groups: Vec<(u8, CacheKind, u64, usize)> = Vec::new();
        for c in self.data_caches() {
            match groups
                .iter_mut()
                .find(|g| g.0 == c.level && g.1 == c.kind && g.2 == c.size)
            {
                Some(g) => g.3 += 1,
                None => groups.push((c.level, c.kind, c.size, 1)),
            }
        }
        if groups.is_empty() {
            return "no caches listed".to_string();
        }
        groups.sort_by(|a, b| (a.0, b.2).cmp(&(b.0, a.2)));
        groups
            .iter()
            .map(|&(level, kind, size, n)| {
                let suffix = if kind == CacheKind::Data { "d" } else { "" };
                format!("L{level}{suffix} {} ×{n}", format_bytes(size))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The online CPU with this id.
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// Physical cores, each as its sorted list of SMT siblings, ordered by their first CPU.
    pub fn cores(&self) -> Vec<Vec<usize>> {
        let mut cores: Vec<Vec<usize>> = Vec::new();
        for cpu in &self.cpus {
            if !cores.iter().any(|c| c.contains(&cpu.id)) {
                // Siblings lists are symmetric on real machines; take the first one seen and
                // never give a CPU to two cores.
                let core: Vec<usize> = cpu
                    .smt_siblings
                    .iter()
                    .copied()
                    .filter(|s| !cores.iter().any(|c| c.contains(s)))
                    .collect();
                cores.push(if core.is_empty() { vec![cpu.id] } else { core });
            }
        }
        cores.sort_by_key(|c| c[0]);
        cores
    }

    /// The last-level cache instance that holds `cpu` (an index into `caches`).
    fn llc_of(&self, cpu: usize) -> Option<usize> {
        let last = self.last_level()?;
        self.caches.iter().position(|c| {
            c.level == last && c.kind != CacheKind::Instruction && c.cpus.contains(&cpu)
        })
    }

    fn data_caches(&self) -> impl Iterator<Item = &Cache> {
        self.caches
            .iter()
            .filter(|c| c.kind != CacheKind::Instruction)
    }

    fn kind_rank(&self, cpu: usize) -> u8 {
        match self.cpu(cpu).map(|c| c.kind) {
            Some(CoreKind::Efficiency) => 1,
            _ => 0,
        }
    }

    /// A node's CPUs for the spread order: sibling rank first (one thread per core before any
    /// second thread), then core type, then cores alternating across (package, LLC) domains.
    fn spread_within_node(&self, cores: Vec<Vec<usize>>) -> Vec<usize> {
        let mut by_kind: BTreeMap<u8, Vec<Vec<usize>>> = BTreeMap::new();
        for core in cores {
            by_kind
                .entry(self.kind_rank(core[0]))
                .or_default()
                .push(core);
        }
        let mut ordered: Vec<Vec<usize>> = Vec::new();
        for (_, cores) in by_kind {
            let mut domains: BTreeMap<(usize, usize), Vec<Vec<usize>>> = BTreeMap::new();
            for core in cores {
                let package = self.cpu(core[0]).map(|c| c.package).unwrap_or(0);
                let llc = self.llc_of(core[0]).unwrap_or(usize::MAX);
                domains.entry((package, llc)).or_default().push(core);
            }
            let mut domains: Vec<Vec<Vec<usize>>> = domains.into_values().collect();
            domains.sort_by_key(|d| d[0][0]);
            let longest = domains.iter().map(Vec::len).max().unwrap_or(0);
            for i in 0..longest {
                ordered.extend(domains.iter().filter_map(|d| d.get(i).cloned()));
            }
        }
        let deepest = ordered.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::new();
        for rank in 0..deepest {
            out.extend(ordered.iter().filter_map(|core| core.get(rank)));
        }
        out
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(id: usize, core: usize, siblings: Vec<usize>) -> Cpu {
        Cpu {
            id,
            package: 0,
            core,
            node: 0,
            smt_siblings: siblings,
            kind: CoreKind::Uniform,
        }
    }

    /// One node, two last-level cache instances (AMD CCX-like), 4 cores with SMT.
    fn two_ccx() -> Topology {
        let sib = |c: usize| vec![c, c + 4];
        Topology {
            model: "test".into(),
            cpus: (0..8).map(|c| cpu(c, c % 4, sib(c % 4))).collect(),
            caches: vec![
                Cache {
                    level: 3,
                    kind: CacheKind::Unified,
                    size: 16 << 20,
                    cpus: vec![0, 1, 4, 5],
                },
                Cache {
                    level: 3,
                    kind: CacheKind::Unified,
                    size: 16 << 20,
                    cpus: vec![2, 3, 6, 7],
                },
            ],
            nodes: vec![NumaNode {
                id: 0,
                cpus: (0..8).collect(),
            }],
            llc_hidden: false,
            cpu: None,
        }
    }

    #[test]
    fn spread_alternates_last_level_caches_within_a_node() {
        let t = two_ccx();
        assert_eq!(t.cpu_order(PinPolicy::Spread), vec![0, 2, 1, 3, 4, 6, 5, 7]);
        assert_eq!(
            t.cpu_order(PinPolicy::Compact),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(t.physical_cores(), 4);
        assert_eq!(t.cache_share_per_cpu(3), Some(4 << 20));
    }
}
