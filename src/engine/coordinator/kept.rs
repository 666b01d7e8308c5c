//! What the coordinator keeps of a working set between visits: its arrays and what was done
//! to their pages. The arrays' life (mapping, reuse, eviction) is `arrays.rs`.

use crate::engine::plan::{ArraySize, CellId, MemPolicy};
use crate::engine::pool::PartitionedArrays;
use std::collections::HashSet;
use std::ops::Range;

/// What makes two working sets' arrays the same: their size and where their pages come from.
/// A working set has one set of arrays whatever its thread count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct ArraysKey {
    pub(super) size: ArraySize,
    pub(super) policy: MemPolicy,
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
    pub(super) announced: HashSet<CellId>,
    /// The cell the pages were last sampled for: a visit of the same cell again (focus) has
    /// them where they were.
    pub(super) sampled_for: Option<CellId>,
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
