//! Each op's loop and page layout per working set taken from an earlier run's snapshot
//! (`--choices-from A.json`) instead of a trial: two runs of a before/after comparison then
//! differ in the change alone, not in a loop one trial preferred and the next did not. The app
//! layer reads the file and matches its sets to this run's; the engine only looks them up.

use super::sets::ArraySize;
use crate::engine::kernel::{Op, Variant};
use std::collections::HashMap;

/// The loops and layouts an earlier run settled, by op and by this run's working set.
#[derive(Debug, Clone)]
pub struct Reused {
    /// The snapshot they came from, as the person named it.
    pub from: String,
    picks: HashMap<(Op, ArraySize), (&'static Variant, bool)>,
}

impl Reused {
    pub fn new(from: String) -> Reused {
        Reused {
            from,
            picks: HashMap::new(),
        }
    }

    /// `op` on the set of `size` runs `variant`, on huge pages or not.
    pub fn insert(&mut self, op: Op, size: ArraySize, variant: &'static Variant, huge_pages: bool) {
        self.picks.insert((op, size), (variant, huge_pages));
    }

    /// The loop and whether on huge pages for `op` on the set of `size`, when held.
    pub fn get(&self, op: Op, size: ArraySize) -> Option<(&'static Variant, bool)> {
        self.picks.get(&(op, size)).copied()
    }
}

impl PartialEq for Reused {
    /// Loops compare by their names, unique for their op in the table.
    fn eq(&self, other: &Reused) -> bool {
        self.from == other.from
            && self.picks.len() == other.picks.len()
            && self.picks.iter().all(|(k, (v, huge))| {
                other
                    .get(k.0, k.1)
                    .is_some_and(|(w, h)| w.name == v.name && h == *huge)
            })
    }
}
