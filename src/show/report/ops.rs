//! A snapshot of several ops, op by op: the ops it holds, the view of one op (its cells and
//! failed cells only, as a snapshot of that op alone would hold them), the op whose cells the
//! seed's derived table and the cliffs are computed from, and the heading of an op's table.
//! Every writer that shows a table per op takes its views from here.

use super::model::Snapshot;
use crate::engine::kernel::Op;

impl Snapshot {
    /// The ops of the snapshot, in the run's order: the grid's, or (for a grid that lists
    /// none) each op its cells name, in their order.
    pub fn ops(&self) -> Vec<String> {
        let mut ops = self.grid.ops.clone();
        let named = self.cells.iter().map(|c| &c.op);
        for op in named.chain(self.failed.iter().map(|f| &f.op)) {
            if !ops.contains(op) {
                ops.push(op.clone());
            }
        }
        ops
    }

    /// The op the derived table, the cliffs and the rerun's drift are about: the triad where
    /// the run has it (the figure STREAM results are most often quoted by), else its first op.
    pub fn primary_op(&self) -> String {
        let ops = self.ops();
        if ops.iter().any(|o| o == "triad") || ops.is_empty() {
            "triad".into()
        } else {
            ops[0].clone()
        }
    }

    /// The snapshot with `op`'s cells and failed cells only.
    pub fn of_op(&self, op: &str) -> Snapshot {
        let mut s = self.clone();
        s.cells.retain(|c| c.op == op);
        s.failed.retain(|f| f.op == op);
        s.grid.ops = vec![op.to_string()];
        s
    }
}

/// The heading of an op's table: `copy: a = b, 16 bytes counted per element`.
pub(crate) fn op_heading(op: &str) -> String {
    match op.parse::<Op>() {
        Ok(o) => format!(
            "{op}: {}, {} bytes counted per element",
            o.formula(),
            o.bytes_per_element()
        ),
        Err(_) => op.to_string(),
    }
}
