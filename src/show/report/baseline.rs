//! A snapshot the live monitor measures its table against (`--baseline A.json`), cell by cell,
//! matched as `compare` matches cells: by what the working set measures, the thread count and
//! the op.

use super::compare::{Key, Measure, key_of};
use super::json::load_snapshot;
use super::model::{CellSnapshot, Snapshot};
use crate::base::error::Result;
use crate::engine::kernel::Op;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A snapshot to measure the live table against (`--baseline A.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub(crate) path: PathBuf,
    snapshot: Snapshot,
    /// Index into `snapshot.cells` by what the cell measures.
    cells: HashMap<Key, usize>,
}

impl Baseline {
    /// Reads a JSON snapshot; errors are one line naming the file (`Error::Usage`).
    pub fn load(path: &Path) -> Result<Baseline> {
        Ok(Baseline::from_snapshot(path, load_snapshot(path)?))
    }

    pub(crate) fn from_snapshot(path: &Path, snapshot: Snapshot) -> Baseline {
        let mut cells = HashMap::new();
        for (i, c) in snapshot.cells.iter().enumerate() {
            cells.entry(key_of(c)).or_insert(i);
        }
        Baseline {
            path: path.to_path_buf(),
            snapshot,
            cells,
        }
    }

    /// The baseline's cell that measures the same as ours: the set's level (or its size where
    /// it has none), the thread count, whether it is the rerun row, and the op.
    pub fn cell(
        &self,
        measure: Measure,
        threads: usize,
        rerun: bool,
        op: Op,
    ) -> Option<&CellSnapshot> {
        let key = (measure, threads, rerun, op.name().to_string());
        let i = *self.cells.get(&key)?;
        self.snapshot.cells.get(i)
    }

    /// The baseline's median for a working-set label (`WorkingSet::label()`) and thread count
    /// (the first run, not the rerun).
    pub fn median_for(&self, set_label: &str, threads: usize) -> Option<f64> {
        self.median_for_cell(set_label, threads, false)
    }

    /// The same, for the rerun row too.
    pub fn median_for_cell(&self, set_label: &str, threads: usize, rerun: bool) -> Option<f64> {
        self.snapshot
            .cell(set_label, threads, rerun)
            .map(|c| c.figures.median_gbs)
    }

    /// A median now against the baseline's: `now / baseline` (1.05 is 5 % faster).
    pub fn change(&self, set_label: &str, threads: usize, median_now: f64) -> Option<f64> {
        self.median_for(set_label, threads)
            .filter(|m| *m > 0.0 && median_now.is_finite())
            .map(|m| median_now / m)
    }
}
