//! The arrays the coordinator keeps between visits (`kept.rs`): one set per working set,
//! mapped for its largest thread count, reused while the memory budget allows and evicted least
//! recently used when a new set needs the room. Kept apart from the rounds so what holds memory,
//! and when it is let go, is in one place.

use super::Coordinator;
use super::kept::{ArraysKey, Kept};
use crate::base::error::Result;
use crate::engine::buffers::Arrays;
use crate::engine::events::{Event, Stage};
use crate::engine::placement::sample_placement;
use crate::engine::plan::{CellId, Layout};
use crate::engine::pool::PartitionedArrays;
use std::collections::HashSet;

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
                self.fail(cell, e.to_string());
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
