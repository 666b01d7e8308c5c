//! The grid for the snapshot, each explicit set with the level it lands in, and the NUMA
//! matrix from its plan and its pairs' medians.

use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::Grid;
use crate::machine::topology::Topology;
use crate::show::report::lands::landing;
use crate::show::report::model::{self as wire, CellSnapshot};

/// The grid, each explicit set with the level it lands in on `topo`.
pub(super) fn wire_grid(g: &Grid, topo: &Topology) -> wire::Grid {
    let Grid { sets, threads, ops } = g;
    wire::Grid {
        sets: sets
            .iter()
            .map(|s| {
                let mut set = wire::WorkingSet::from(s);
                if set.level.is_none() {
                    set.lands_in = landing(set.size, topo).map(|l| l.level);
                }
                set
            })
            .collect(),
        threads: threads.clone(),
        ops: ops.iter().map(|op| op.name().to_string()).collect(),
    }
}

/// The median of each set's cell (the matrix's pairs are its sets, one cell each).
pub(super) fn grid_ids(cells: &[CellSnapshot]) -> impl Fn(usize) -> Option<f64> + '_ {
    move |set| {
        cells
            .iter()
            .find(|c| c.set == set && !c.rerun)
            .map(|c| c.figures.median_gbs)
    }
}

/// The matrix from its plan and its pairs' medians.
pub(super) fn matrix(m: &MatrixPlan, median: impl Fn(usize) -> Option<f64>) -> wire::Matrix {
    let mut cpu_nodes: Vec<usize> = m.pairs.iter().map(|p| p.cpu_node).collect();
    let mut mem_nodes: Vec<usize> = m.pairs.iter().map(|p| p.mem_node).collect();
    for v in [&mut cpu_nodes, &mut mem_nodes] {
        v.sort_unstable();
        v.dedup();
    }
    wire::Matrix {
        threads: m.threads,
        cpu_nodes,
        mem_nodes,
        cells: m
            .pairs
            .iter()
            .enumerate()
            .map(|(set, p)| wire::MatrixCell {
                cpu_node: p.cpu_node,
                mem_node: p.mem_node,
                set,
                median_gbs: median(set),
            })
            .collect(),
        note: m.note.clone(),
    }
}
