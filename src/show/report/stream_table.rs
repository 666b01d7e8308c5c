//! `--format stream`: STREAM's own table, per cell (working set × thread count), so a figure
//! can be set beside a STREAM result as STREAM prints it: one line per STREAM op the run has
//! (Copy, Scale, Add, Triad, in STREAM's order), the best rate in MB/s (10^6 bytes per second,
//! from the shortest pass, as STREAM computes it), and the average, shortest and longest time
//! of one pass over the cell's arrays in seconds, over the cell's timed rounds. A round of n
//! passes counts as n passes of its mean time.

use super::model::{CellSnapshot, Snapshot};
use crate::engine::kernel::Op;
use crate::engine::plan::WorkingSet;
use std::fmt::Write;

/// STREAM's header line, as stream.c prints it.
pub const HEADER: &str = "Function    Best Rate MB/s  Avg time     Min time     Max time";

/// STREAM's rule between its sections.
const RULE: &str = "-------------------------------------------------------------";

/// STREAM's table of every cell, or a line saying the snapshot holds none of its ops.
pub fn to_stream_table(s: &Snapshot) -> String {
    let s = &*s.printable();
    let ops: Vec<Op> = Op::STREAM
        .into_iter()
        .filter(|op| s.cells.iter().any(|c| c.op == op.name()))
        .collect();
    let mut out = String::new();
    let Some(&first) = ops.first() else {
        out.push_str("No cell of STREAM's ops (copy, scale, add, triad) has a timed round.\n");
        return out;
    };
    // The configurations, in the table's order, from the first STREAM op's cells.
    let configs: Vec<(usize, usize)> = s
        .cells_in_table_order()
        .into_iter()
        .filter(|c| c.op == first.name() && !c.rerun)
        .map(|c| (c.set, c.threads))
        .collect();
    for (set, threads) in configs {
        let cells: Vec<(Op, &CellSnapshot)> = ops
            .iter()
            .filter_map(|&op| {
                s.cells
                    .iter()
                    .find(|c| !c.rerun && c.op == op.name() && c.set == set && c.threads == threads)
                    .map(|c| (op, c))
            })
            .collect();
        let Some((_, any)) = cells.first() else {
            continue;
        };
        let _ = writeln!(out, "{RULE}");
        let _ = writeln!(
            out,
            "stream-top: {} × {}",
            any.set_label,
            super::text::threads_phrase(threads)
        );
        let _ = writeln!(out, "{RULE}");
        let _ = writeln!(out, "{HEADER}");
        for (op, c) in cells {
            let label = format!("{}:", op.stream_name().unwrap_or(op.name()));
            let line = match pass_times(s, op, c) {
                Some(t) => format!(
                    "{label:<11}{:12.1}  {:11.6}  {:11.6}  {:11.6}",
                    t.best_mbs, t.avg, t.min, t.max
                ),
                None => format!(
                    "{label:<11}{:>12}  {:>11}  {:>11}  {:>11}",
                    "–", "–", "–", "–"
                ),
            };
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = writeln!(out, "{RULE}");
    out
}

/// A cell's pass times, seconds, and its best rate, MB/s.
struct PassTimes {
    best_mbs: f64,
    avg: f64,
    min: f64,
    max: f64,
}

/// The time of one pass over the cell's arrays in each timed round (the round's time × the
/// bytes of one pass ÷ the round's bytes); None without rounds or without its set.
fn pass_times(s: &Snapshot, op: Op, c: &CellSnapshot) -> Option<PassTimes> {
    let set = WorkingSet::from(s.grid.sets.get(c.set)?);
    let pass_bytes = set.layout(c.threads).len as f64 * op.bytes_per_element() as f64;
    let times: Vec<f64> = c
        .history
        .iter()
        .filter(|r| r.bytes > 0)
        .map(|r| r.span_ns as f64 / 1e9 * pass_bytes / r.bytes as f64)
        .collect();
    if times.is_empty() || pass_bytes <= 0.0 {
        return None;
    }
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    let max = times.iter().copied().fold(0.0, f64::max);
    let avg = times.iter().sum::<f64>() / times.len() as f64;
    Some(PassTimes {
        best_mbs: 1e-6 * pass_bytes / min,
        avg,
        min,
        max,
    })
}
