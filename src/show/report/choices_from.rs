//! `--choices-from A.json` read: the loop and page layout per op × working set that the
//! snapshot's cells ran, for the app layer to match to this run's grid
//! (`app::choices_from`). The file goes through the one snapshot loader, so what is not a
//! snapshot is refused as `compare` and `--baseline` refuse it.

use super::json::load_snapshot;
use super::model::Snapshot;
use super::printable::printable;
use crate::app::choices_from::{Earlier, EarlierSet};
use crate::base::error::Result;
use crate::engine::kernel::Op;
use std::path::Path;

/// The choices of the snapshot at `path`; errors are one line naming the flag and the file.
pub fn earlier_choices(path: &Path) -> Result<Earlier> {
    let snapshot = load_snapshot(path).map_err(|e| e.context("--choices-from"))?;
    Ok(earlier_of(path, &snapshot))
}

/// Each op × working set once (its cells all ran the set's choice), in the file's order; a
/// cell without a choice (a file from before choices were recorded) or of an op this build
/// does not know holds none. Text from the file is made printable: it may reach a refusal.
fn earlier_of(path: &Path, snapshot: &Snapshot) -> Earlier {
    let mut sets: Vec<EarlierSet> = Vec::new();
    for c in &snapshot.cells {
        let (Some(choice), Ok(op)) = (&c.choice, c.op.parse::<Op>()) else {
            continue;
        };
        let (level, size) = (c.level.map(Into::into), c.size.into());
        if sets
            .iter()
            .any(|e| e.op == op && e.level == level && e.size == size)
        {
            continue;
        }
        sets.push(EarlierSet {
            op,
            level,
            size,
            label: printable(&c.set_label).into_owned(),
            variant: printable(&choice.variant).into_owned(),
            huge_pages: choice.huge_pages,
        });
    }
    Earlier {
        file: path.to_path_buf(),
        sets,
    }
}
