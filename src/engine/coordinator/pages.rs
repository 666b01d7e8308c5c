//! Where the arrays' pages go: the first touch of each partition by its own thread (with
//! progress), and on NUMA machines, moving a partition's pages to its thread's node when a
//! working set is cut for another thread count. Tracks which ranges are already in place so
//! nothing is moved twice.

use super::{Coordinator, Kept};
use crate::base::error::Result;
use crate::engine::events::{Event, Stage};
use crate::engine::plan::{CellId, Layout, MemPolicy};
use crate::engine::room::touch_in_steps;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Progress events while first touching, at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

impl Coordinator {
    /// First touch, by the cell's threads, of what its partition holds beyond what was touched
    /// before, in steps that stop short of the cgroup's memory limit (`room`). False when a
    /// stop cut it short, or when the limit came near (the cell is then failed and said so).
    pub(super) fn first_touch(&mut self, cell: CellId, kept: &mut Kept) -> Result<bool> {
        let layout = kept.memory.layout().clone();
        let from = kept.touched;
        let need = 3 * (layout.len - from) as u64 * 8;
        // Each thread writes the part of its partition not yet written.
        let fresh = Layout {
            len: layout.len,
            parts: layout
                .parts
                .iter()
                .map(|p| p.start.max(from).min(p.end)..p.end)
                .collect(),
        };
        kept.memory.set_layout(fresh.clone())?;
        let events = self.events.clone();
        let mut last = Instant::now();
        let stop = &self.stop;
        let r = touch_in_steps(
            &mut self.pool,
            cell.threads,
            &mut kept.memory,
            &self.room,
            || stop.load(Ordering::Relaxed),
            |elems| {
                // The full count is sent once, after the job.
                if last.elapsed() >= PROGRESS_EVERY && elems * 24 < need {
                    last = Instant::now();
                    let _ = events.send(Event::Progress {
                        cell,
                        stage: Stage::FirstTouch,
                        done_bytes: elems * 24,
                        total_bytes: need,
                    });
                }
            },
        );
        kept.memory.set_layout(layout)?;
        if let Some(reason) = r? {
            // The cgroup's room went while touching: the cell fails (its arrays are let go)
            // rather than the run being OOM-killed, and the sweep goes on.
            self.fail(cell, reason);
            return Ok(false);
        }
        if self.stopping() {
            return Ok(false);
        }
        kept.touched = kept.memory.layout().len;
        let nodes = self.first_touch_nodes(cell);
        settle_placed(&mut kept.placed, &fresh.parts, &nodes);
        self.send(Event::Progress {
            cell,
            stage: Stage::FirstTouch,
            done_bytes: need,
            total_bytes: need,
        });
        Ok(true)
    }

    /// On a NUMA machine under first touch: moves the pages of each partition that are not
    /// known to be on its thread's node there, each thread its own. Nothing to do on one node.
    pub(super) fn move_to_threads(&mut self, cell: CellId, kept: &mut Kept) -> Result<()> {
        if self.plan.numa.cpu_nodes() < 2 {
            return Ok(());
        }
        let nodes = self.first_touch_nodes(cell);
        let parts = kept.memory.layout().parts.clone();
        if !needs_moving(&kept.placed, &parts, &nodes) {
            return Ok(());
        }
        let total = 3 * kept.memory.layout().len as u64 * 8;
        self.send(Event::Progress {
            cell,
            stage: Stage::Moving,
            done_bytes: 0,
            total_bytes: total,
        });
        self.pool.place(cell.threads, &kept.memory, &nodes)?;
        settle_placed(&mut kept.placed, &parts, &nodes);
        self.send(Event::Progress {
            cell,
            stage: Stage::Moving,
            done_bytes: total,
            total_bytes: total,
        });
        Ok(())
    }

    /// The node each of the cell's threads puts pages on by first touch (its CPU's), under a
    /// first-touch policy; none under a binding.
    fn first_touch_nodes(&self, cell: CellId) -> Vec<Option<usize>> {
        let first_touch = self.plan.policy_for(cell.set) == MemPolicy::FirstTouch;
        (0..cell.threads)
            .map(|i| {
                first_touch
                    .then(|| self.plan.node_for(cell.set, i))
                    .flatten()
            })
            .collect()
    }
}

/// Whether some partition's pages are not all known to be on its thread's node: no placed
/// partition with that node covers it.
fn needs_moving(
    placed: &[(Range<usize>, Option<usize>)],
    parts: &[Range<usize>],
    nodes: &[Option<usize>],
) -> bool {
    parts.iter().zip(nodes).any(|(part, node)| {
        node.is_some()
            && !part.is_empty()
            && !placed
                .iter()
                .any(|(r, n)| n == node && r.start <= part.start && part.end <= r.end)
    })
}

/// Records that `parts` now have their pages on `nodes`: what they overlap is forgotten.
fn settle_placed(
    placed: &mut Vec<(Range<usize>, Option<usize>)>,
    parts: &[Range<usize>],
    nodes: &[Option<usize>],
) {
    let parts: Vec<(Range<usize>, Option<usize>)> = parts
        .iter()
        .cloned()
        .zip(nodes.iter().copied())
        .filter(|(p, _)| !p.is_empty())
        .collect();
    placed.retain(|(r, _)| {
        !parts
            .iter()
            .any(|(p, _)| p.start < r.end && r.start < p.end)
    });
    placed.extend(parts);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // One partition is one range.
    fn partitions_whose_pages_are_on_their_threads_nodes_need_no_move() {
        // A split set first touched by two threads on nodes 0 and 1.
        let mut placed = Vec::new();
        settle_placed(&mut placed, &[0..500, 500..1000], &[Some(0), Some(1)]);
        // Again at two threads: in place. At one thread on node 0: half of it is on node 1.
        assert!(!needs_moving(
            &placed,
            &[0..500, 500..1000],
            &[Some(0), Some(1)]
        ));
        assert!(needs_moving(&placed, &[0..1000], &[Some(0)]));
        // A part inside a placed one on the same node needs nothing; on another node it does.
        assert!(!needs_moving(&placed, &[0..250], &[Some(0)]));
        assert!(needs_moving(&placed, &[0..250], &[Some(1)]));
        // Threads with no known node (not pinned) never ask for a move.
        assert!(!needs_moving(&placed, &[0..1000], &[None]));
        // Moved to one thread on node 0: what it overlapped is forgotten.
        settle_placed(&mut placed, &[0..1000], &[Some(0)]);
        assert_eq!(placed, vec![(0..1000, Some(0))]);
        // A per-thread set grown to a third slice keeps the first two.
        let mut placed = vec![(0..100, Some(0)), (100..200, Some(1))];
        settle_placed(
            &mut placed,
            &[0..0, 100..100, 200..300],
            &[Some(0), Some(1), Some(0)],
        );
        assert_eq!(placed.len(), 3);
        assert!(!needs_moving(
            &placed,
            &[0..100, 100..200, 200..300],
            &[Some(0), Some(1), Some(0)]
        ));
    }
}
