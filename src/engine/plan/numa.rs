//! Where threads run and where pages come from: the memory policy (first touch, a binding,
//! interleaving), the node of each CPU, the pairs of the NUMA matrix, and what the plan makes
//! of them for each working set and worker.

use super::Plan;
use crate::machine::topology::PinPolicy;
use std::collections::BTreeMap;
use std::fmt;

/// Where the arrays' pages are taken from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum MemPolicy {
    /// From the node of the thread that first writes them; on NUMA, moved to their new
    /// threads' nodes when a working set is partitioned for another thread count.
    #[default]
    FirstTouch,
    /// From this node only (`--membind NODE`, a column of the matrix).
    Bind(usize),
    /// Round-robin across these nodes (`--interleave`).
    Interleave(Vec<usize>),
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemPolicy::FirstTouch => f.write_str("first touch"),
            MemPolicy::Bind(n) => write!(f, "bound to node {n}"),
            MemPolicy::Interleave(nodes) => {
                let list: Vec<String> = nodes.iter().map(usize::to_string).collect();
                let noun = if nodes.len() == 1 { "node" } else { "nodes" };
                write!(f, "interleaved across {noun} {}", list.join(","))
            }
        }
    }
}

/// One cell of the NUMA matrix: all cores of a CPU node streaming arrays bound to a memory
/// node. As a plan's working set, its threads run on `cpus` and its pages come from `mem_node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixPair {
    pub cpu_node: usize,
    pub mem_node: usize,
    /// One CPU of each core of the CPU node, in pinning order.
    pub cpus: Vec<usize>,
}

/// The NUMA side of a plan: where pages go, which node each CPU belongs to, and (for
/// `--matrix`) each working set's own CPUs and memory node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Numa {
    pub policy: MemPolicy,
    /// CPU id → NUMA node (empty: not known; then nothing is moved and no node is meant).
    pub node_of_cpu: BTreeMap<usize, usize>,
    /// `--matrix`: the pair each working set measures, by set index (empty otherwise).
    pub matrix: Vec<MatrixPair>,
}

impl Numa {
    /// Nodes with CPUs: with fewer than two, a page can be on no other node than its
    /// thread's, and nothing is ever moved.
    pub(crate) fn cpu_nodes(&self) -> usize {
        let mut nodes: Vec<usize> = self.node_of_cpu.values().copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes.len()
    }
}

impl Plan {
    /// The CPU worker `i` runs on for working set `set`: its matrix pair's CPUs, or the plan's.
    pub(crate) fn cpu_for_set(&self, set: usize, i: usize) -> Option<usize> {
        match self.numa.matrix.get(set) {
            Some(pair) if self.pin != PinPolicy::None => Some(pair.cpus[i % pair.cpus.len()]),
            _ => self.cpu_for(i),
        }
    }

    /// Where working set `set`'s pages come from: its matrix pair's memory node (where there
    /// is more than one node to choose from), or the plan's policy.
    pub(crate) fn policy_for(&self, set: usize) -> MemPolicy {
        match self.numa.matrix.get(set) {
            Some(pair) if self.numa.cpu_nodes() > 1 || pair.mem_node != pair.cpu_node => {
                MemPolicy::Bind(pair.mem_node)
            }
            Some(_) => MemPolicy::FirstTouch,
            None => self.numa.policy.clone(),
        }
    }

    /// The node worker `i`'s CPU is on for set `set`, where it is pinned and the node known.
    pub(crate) fn node_for(&self, set: usize, i: usize) -> Option<usize> {
        let cpu = self.cpu_for_set(set, i)?;
        self.numa.node_of_cpu.get(&cpu).copied()
    }

    /// The node worker `i`'s partition of set `set` is meant to sit on: its thread's under
    /// first touch, the bound node under a binding; none when interleaved.
    pub(crate) fn intended_node(&self, set: usize, i: usize) -> Option<usize> {
        match self.policy_for(set) {
            MemPolicy::FirstTouch => self.node_for(set, i),
            MemPolicy::Bind(n) => Some(n),
            MemPolicy::Interleave(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::plan::*;
    use crate::machine::topology::{PinPolicy, Topology};

    fn topo(name: &str) -> Topology {
        Topology::fixture(name)
    }

    const GIB: u64 = 1 << 30;

    fn host(mem_available: u64) -> MemoryBudget {
        MemoryBudget::new(mem_available, None)
    }

    #[test]
    fn a_matrix_plan_pins_each_pair_to_its_node_and_binds_its_pages() {
        use crate::engine::matrix::MatrixPlan;
        let t = topo("server-2s");
        let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
        let m = MatrixPlan::new(&t, &all);
        let dram = size_sets(
            &[SetSpec::Level(Level::Dram)],
            &t,
            &host(64 * GIB),
            m.threads,
        )
        .unwrap()
        .remove(0);
        let plan = Plan {
            grid: m.grid(&dram),
            kernel: crate::engine::kernel::Kernel::resolve(
                None,
                crate::engine::kernel::Stores::Normal,
            )
            .unwrap(),
            pin: PinPolicy::Spread,
            cpu_order: m.pairs[0].cpus.clone(),
            round_ms: 20,
            schedule: Schedule::Once { rounds: 1 },
            duty: 100,
            huge_pages: HugePages::On,
            loops: Loops::Default,
            memory_budget: 64 * GIB,
            counters: false,
            numa: Numa {
                policy: MemPolicy::FirstTouch,
                node_of_cpu: t.cpus.iter().map(|c| (c.id, c.node)).collect(),
                matrix: m.pairs.clone(),
            },
            reused: None,
        };
        plan.validate().unwrap();
        // Pair 1 is CPU node 0 → memory node 1; pair 2 is CPU node 1 → memory node 0.
        assert_eq!((m.pairs[1].cpu_node, m.pairs[1].mem_node), (0, 1));
        for (set, pair) in m.pairs.iter().enumerate() {
            assert_eq!(plan.policy_for(set), MemPolicy::Bind(pair.mem_node));
            for i in 0..m.threads {
                assert_eq!(plan.node_for(set, i), Some(pair.cpu_node));
                assert_eq!(plan.intended_node(set, i), Some(pair.mem_node));
            }
        }
        // Without the matrix, first touch means each thread's own node.
        let plain = Plan {
            numa: Numa {
                matrix: Vec::new(),
                ..plan.numa.clone()
            },
            grid: Grid {
                sets: vec![dram.clone()],
                threads: vec![2],
                ops: vec![crate::engine::kernel::Op::Triad],
            },
            cpu_order: t.cpu_order(PinPolicy::Spread),
            ..plan.clone()
        };
        assert_eq!(plain.policy_for(0), MemPolicy::FirstTouch);
        assert_eq!(plain.intended_node(0, 0), Some(0));
        assert_eq!(
            plain.intended_node(0, 1),
            Some(1),
            "spread alternates nodes"
        );
        let interleaved = Plan {
            numa: Numa {
                policy: MemPolicy::Interleave(vec![0, 1]),
                ..plain.numa.clone()
            },
            ..plain.clone()
        };
        assert_eq!(interleaved.intended_node(0, 0), None);
        assert_eq!(plain.numa.cpu_nodes(), 2);
        // A matrix with a pair missing is refused.
        let mut broken = plan.clone();
        broken.numa.matrix.pop();
        assert!(broken.validate().is_err());
    }
}
