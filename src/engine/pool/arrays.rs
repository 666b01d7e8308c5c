//! The arrays a job runs on, paired with the partition of their elements among the workers
//! and checked when they are put together: what makes the workers' raw pointers sound, kept
//! apart so that the check has one home.

use super::super::buffers::Arrays;
use super::super::plan::Layout;
use crate::base::error::{Error, Result};
use std::ops::Range;

/// A cell's three arrays and the partition of their elements among its threads, checked once:
/// the only thing the pool runs jobs on.
pub struct PartitionedArrays {
    arrays: Arrays,
    layout: Layout,
}

impl PartitionedArrays {
    /// Puts the arrays and the layout together when every part lies inside the arrays and no
    /// two parts overlap; an engine error otherwise (a bug in the plan, not the user's doing).
    pub fn new(arrays: Arrays, layout: Layout) -> Result<PartitionedArrays> {
        check(&arrays, &layout)?;
        Ok(PartitionedArrays { arrays, layout })
    }

    /// The same arrays partitioned another way (another thread count), checked as `new`
    /// checks.
    pub(crate) fn repartition(mut self, layout: Layout) -> Result<PartitionedArrays> {
        self.set_layout(layout)?;
        Ok(self)
    }

    /// Partitions the arrays another way, checked as `new` checks; on an error the old
    /// partition stays.
    pub(crate) fn set_layout(&mut self, layout: Layout) -> Result<()> {
        check(&self.arrays, &layout)?;
        self.layout = layout;
        Ok(())
    }

    pub fn arrays(&self) -> &Arrays {
        &self.arrays
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
}

/// Every part inside the arrays, no two overlapping.
fn check(arrays: &Arrays, layout: &Layout) -> Result<()> {
    let len = arrays.a.len().min(arrays.b.len()).min(arrays.c.len());
    if layout.len > len {
        return Err(Error::engine(format!(
            "the layout covers {} elements but the arrays hold {len}",
            layout.len
        )));
    }
    let mut parts: Vec<&Range<usize>> = layout.parts.iter().collect();
    parts.sort_by_key(|p| p.start);
    if let Some(p) = parts.iter().find(|p| p.start > p.end || p.end > layout.len) {
        return Err(Error::engine(format!(
            "part {p:?} lies outside the {} elements of the arrays",
            layout.len
        )));
    }
    if let Some(w) = parts.windows(2).find(|w| w[0].end > w[1].start) {
        return Err(Error::engine(format!(
            "parts {:?} and {:?} overlap",
            w[0], w[1]
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(len: usize, parts: Vec<Range<usize>>) -> Layout {
        Layout { len, parts }
    }

    #[test]
    fn arrays_and_a_partition_are_checked_once_when_put_together() {
        let arrays = || Arrays::map(1000, false).unwrap();
        assert!(PartitionedArrays::new(arrays(), layout(1000, vec![0..500, 500..1000])).is_ok());
        let bad = [
            layout(1001, vec![0..500, 500..1001]),
            layout(1000, vec![0..600, 500..1000]),
            layout(1000, vec![0..500, 500..1200]),
        ];
        for l in bad {
            let e = PartitionedArrays::new(arrays(), l).err().expect("refused");
            assert!(matches!(e, Error::Engine(_)), "{e}");
        }
    }
}
