//! The arrays the coordinator keeps between visits: one set per working set (`ArraysKey`),
//! mapped for its largest thread count, reused while the memory budget allows and evicted least
//! recently used when a new set needs the room. Kept apart from the rounds so what holds memory,
//! and when it is let go, is in one place.

use super::Coordinator;
use crate::base::error::Result;
use crate::engine::buffers::Arrays;
use crate::engine::events::{Event, Stage};
use crate::engine::placement::sample_placement;
use crate::engine::plan::{ArraySize, CellId, Layout, MemPolicy};
use crate::engine::pool::PartitionedArrays;
use std::collections::HashSet;
use std::ops::Range;

/// What makes two working sets' arrays the same: their size and where their pages come from.
/// A working set has one set of arrays whatever its thread count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct ArraysKey {
    size: ArraySize,
    policy: MemPolicy,
}

/// A working set's arrays, sized for its largest thread count and partitioned for the cell
/// that uses them now.
pub(super) struct Kept {
    pub(super) memory: PartitionedArrays,
    /// Elements of each array written by a first touch, from the start: all of a split set's
    /// at its first cell; a per-thread set's grow with its thread count.
    pub(super) touched: usize,
    /// Under first touch, each partition the pages were put in place for and its node: a new
    /// partition whose pages are not all where its thread is gets them moved.
    pub(super) placed: Vec<(Range<usize>, Option<usize>)>,
    /// Cells whose `Event::Allocated` has been sent for these arrays.
    announced: HashSet<CellId>,
    /// The cell the pages were last sampled for: a visit of the same cell again (focus) has
    /// them where they were.
    sampled_for: Option<CellId>,
    /// When they were last used (for eviction).
    pub(super) last_use: u64,
}

impl Kept {
    /// Arrays whose every element was first touched already (a trial's), partitioned as the
    /// widest cell has them.
    pub(super) fn touched(memory: PartitionedArrays, now: u64) -> Kept {
        Kept {
            touched: memory.layout().len,
            memory,
            placed: Vec::new(),
            announced: HashSet::new(),
            sampled_for: None,
            last_use: now,
        }
    }
}

impl Coordinator {
    /// The key of working set `set`'s arrays.
    pub(super) fn key_of(&self, set: usize) -> ArraysKey {
        ArraysKey {
            size: self.plan.grid.sets[set].size,
            policy: self.plan.policy_for(set),
        }
    }

    /// Bytes of the kept arrays.
    pub(super) fn kept_bytes(&self) -> u64 {
        self.buffers
            .values()
            .map(|b| b.memory.arrays().bytes())
            .sum()
    }

    /// Evicts the least recently used arrays until `need` more bytes fit the budget.
    pub(super) fn make_room(&mut self, need: u64) {
        while !self.buffers.is_empty() && self.kept_bytes() + need > self.plan.memory_budget {
            let oldest = self
                .buffers
                .iter()
                .min_by_key(|(_, b)| b.last_use)
                .map(|(k, _)| k.clone())
                .expect("non-empty");
            self.buffers.remove(&oldest);
        }
    }

    /// The cell's working set's arrays, partitioned for its threads: taken out of the kept
    /// ones (the visit puts them back) or newly mapped; what the partition has not yet touched
    /// is first touched by its threads, and on NUMA pages not on their new thread's node are
    /// moved there. None when they cannot be mapped (said with `Event::CellFailed`; the cell
    /// is skipped) or when a stop cut the first touch short (the arrays are dropped).
    pub(super) fn arrays_for(&mut self, cell: CellId) -> Result<Option<Kept>> {
        let key = self.key_of(cell.set);
        self.visits += 1;
        if !self.keep_buffers {
            self.buffers.retain(|k, _| *k == key);
        }
        let mut kept = match self.buffers.remove(&key) {
            Some(k) => k,
            None => match self.map_arrays(cell, &key)? {
                Some(k) => k,
                None => return Ok(None),
            },
        };
        let layout = self.plan.grid.sets[cell.set].layout(cell.threads);
        kept.memory.set_layout(layout)?;
        self.pool.activate(cell.threads);
        if kept.touched < kept.memory.layout().len {
            if !self.first_touch(cell, &mut kept)? {
                return Ok(None);
            }
        } else {
            self.move_to_threads(cell, &mut kept)?;
        }
        if self.stopping() {
            return Ok(None);
        }
        if kept.sampled_for.replace(cell) != Some(cell) {
            let plan = &self.plan;
            let layout = kept.memory.layout();
            let parts = &layout.parts[..cell.threads.min(layout.parts.len())];
            let pages = sample_placement(kept.memory.arrays(), parts, |i| {
                plan.intended_node(cell.set, i)
            });
            self.send(Event::Placement { cell, pages });
        }
        if kept.announced.insert(cell) {
            let bytes = 3 * kept.memory.layout().len as u64 * 8;
            self.send(Event::Allocated {
                cell,
                bytes,
                huge_bytes: kept.memory.arrays().huge_bytes().map(|h| h.min(bytes)),
            });
        }
        Ok(Some(kept))
    }

    /// Maps a working set's arrays for its largest thread count, bound as its policy says;
    /// nothing is touched yet.
    fn map_arrays(&mut self, cell: CellId, key: &ArraysKey) -> Result<Option<Kept>> {
        let len = self.plan.grid.sets[cell.set]
            .layout(self.plan.grid.max_threads())
            .len;
        let need = 3 * len as u64 * 8;
        self.make_room(need);
        self.send(Event::Progress {
            cell,
            stage: Stage::Allocating,
            done_bytes: 0,
            total_bytes: need,
        });
        // The address space may be limited (`ulimit -v`) rather than the memory: kept arrays
        // are let go for a second try before the cell is given up.
        let huge_pages = self.pick_for(cell.op, cell.set).huge_pages;
        let map = |huge| {
            let arrays = Arrays::map(len, huge)?;
            arrays.bind(&key.policy)?;
            Ok::<_, crate::base::error::Error>(arrays)
        };
        let mapped = map(huge_pages).or_else(|e| {
            if self.buffers.is_empty() {
                Err(e)
            } else {
                self.buffers.clear();
                map(huge_pages)
            }
        });
        let arrays = match mapped {
            Ok(arrays) => {
                self.mapped += 1;
                arrays
            }
            Err(e) => {
                self.failed.insert(cell);
                self.send(Event::CellFailed {
                    cell,
                    reason: e.to_string(),
                });
                return Ok(None);
            }
        };
        let layout = Layout {
            len: 0,
            parts: Vec::new(),
        };
        Ok(Some(Kept {
            memory: PartitionedArrays::new(arrays, layout)?,
            touched: 0,
            placed: Vec::new(),
            announced: HashSet::new(),
            sampled_for: None,
            last_use: self.visits,
        }))
    }
}
