//! The NUMA bandwidth matrix, as Intel MLC's `--bandwidth_matrix` measures it: for every CPU
//! node × memory node, all cores of the CPU node (one thread each) streaming a dram-sized set
//! whose pages are bound to the memory node. The engine runs it as a grid with one working set
//! per pair, each with its CPUs and its memory node (`Numa::matrix`), every pair at the same
//! thread count.

use super::plan::{Grid, MatrixPair, WorkingSet};
use crate::base::units::format_bytes;
use crate::machine::topology::{PinPolicy, Topology};

/// What the matrix measures on a machine: its pairs (CPU node by CPU node, memory node by
/// memory node), the thread count every pair runs, and what a reader should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixPlan {
    pub pairs: Vec<MatrixPair>,
    pub threads: usize,
    pub note: Option<String>,
}

impl MatrixPlan {
    /// The pairs of `topo` over the CPUs in `usable`: CPU nodes are the nodes with a usable
    /// CPU, memory nodes every node. Each CPU node gives one CPU of each of its cores, in the
    /// spread order; every pair runs as many threads as the smallest CPU node has cores.
    pub fn new(topo: &Topology, usable: &[usize]) -> MatrixPlan {
        let order: Vec<usize> = topo
            .cpu_order(PinPolicy::Spread)
            .into_iter()
            .filter(|c| usable.contains(c))
            .collect();
        let cores = topo.cores();
        let mut cpu_nodes: Vec<(usize, Vec<usize>)> = Vec::new();
        for node in &topo.nodes {
            let mut seen: Vec<usize> = Vec::new();
            let mut cpus = Vec::new();
            for &cpu in &order {
                if topo.cpu(cpu).map(|c| c.node) != Some(node.id) {
                    continue;
                }
                let core = cores.iter().position(|c| c.contains(&cpu));
                if let Some(core) = core {
                    if seen.contains(&core) {
                        continue;
                    }
                    seen.push(core);
                }
                cpus.push(cpu);
            }
            if !cpus.is_empty() {
                cpu_nodes.push((node.id, cpus));
            }
        }
        let threads = cpu_nodes.iter().map(|(_, c)| c.len()).min().unwrap_or(1);
        let mut pairs = Vec::new();
        for (cpu_node, cpus) in &cpu_nodes {
            for mem in &topo.nodes {
                pairs.push(MatrixPair {
                    cpu_node: *cpu_node,
                    mem_node: mem.id,
                    cpus: cpus[..threads].to_vec(),
                });
            }
        }
        let mut notes = Vec::new();
        if topo.nodes.len() < 2 {
            notes.push(format!(
                "one NUMA node: the matrix is 1×1, the local bandwidth of its {threads} {}",
                if threads == 1 { "core" } else { "cores" }
            ));
        }
        if let Some((node, cpus)) = cpu_nodes.iter().find(|(_, c)| c.len() > threads) {
            notes.push(format!(
                "every pair runs {}, the cores of the smallest CPU node (node {node} has {})",
                crate::base::units::threads_phrase(threads),
                cpus.len()
            ));
        }
        MatrixPlan {
            pairs,
            threads,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }

    /// The grid the engine runs: one working set per pair, sized as `dram` is.
    pub fn grid(&self, dram: &WorkingSet) -> Grid {
        Grid {
            sets: self
                .pairs
                .iter()
                .map(|p| WorkingSet {
                    name: pair_name(p, dram),
                    level: None,
                    size: dram.size,
                    note: dram.note.clone(),
                })
                .collect(),
            threads: vec![self.threads],
            ops: vec![crate::engine::kernel::Op::Triad],
        }
    }
}

/// A pair's working set as a row names it: `128 MiB, CPU node 0 → memory node 1`.
fn pair_name(p: &MatrixPair, dram: &WorkingSet) -> String {
    format!(
        "{}, CPU node {} → memory node {}",
        format_bytes(dram.array_bytes(1)),
        p.cpu_node,
        p.mem_node
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::{ArraySize, Level};

    fn topo(name: &str) -> Topology {
        Topology::fixture(name)
    }

    fn dram() -> WorkingSet {
        WorkingSet {
            name: "dram".into(),
            level: Some(Level::Dram),
            size: ArraySize::Split(128 << 20),
            note: None,
        }
    }

    #[test]
    fn one_node_is_a_one_by_one_matrix_with_a_note() {
        let t = topo("vm-2core");
        let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
        let m = MatrixPlan::new(&t, &all);
        assert_eq!(m.pairs.len(), 1);
        assert_eq!((m.pairs[0].cpu_node, m.pairs[0].mem_node), (0, 0));
        assert_eq!(m.threads, t.physical_cores());
        assert!(
            m.note
                .unwrap()
                .starts_with("one NUMA node: the matrix is 1×1")
        );
        let g = MatrixPlan::new(&t, &all).grid(&dram());
        assert_eq!(g.threads, vec![t.physical_cores()]);
        assert_eq!(g.sets[0].label(), "128 MiB, CPU node 0 → memory node 0");
    }
}
