//! `--choices-from A.json`: the loops and page layouts an earlier run settled, matched to this
//! run's grid and put in the plan (`plan::Reused`), so the run takes them instead of a trial.
//! The snapshot is read where its loader and model live (the show layer's preflight) into
//! [`Earlier`]; here every op × working set of this run's grid must find its choice there, a
//! loop this CPU runs with this run's stores, or the run is refused (exit 2, one line) before
//! anything is measured.

use super::session::Session;
use crate::base::error::{Error, Result};
use crate::engine::kernel::{Op, Stores, Variant};
use crate::engine::plan::{ArraySize, Level, Reused, WorkingSet};
use std::path::PathBuf;

/// The choices an earlier run's snapshot holds, one per op × working set.
#[derive(Debug, Clone, PartialEq)]
pub struct Earlier {
    /// The snapshot, as the person named it.
    pub file: PathBuf,
    pub sets: Vec<EarlierSet>,
}

/// One op × working set of the earlier run, and the loop and layout it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlierSet {
    pub op: Op,
    pub level: Option<Level>,
    pub size: ArraySize,
    /// The set's label in that run, e.g. `85 KiB/thread (l2)`.
    pub label: String,
    /// The loop's name in the kernel table.
    pub variant: String,
    pub huge_pages: bool,
}

impl EarlierSet {
    /// Whether it measures what `ws` measures: the same level, or the same size where neither
    /// has a level (as `compare` matches cells), so a `dram` sized a little differently on
    /// another day is still the same row.
    fn matches(&self, op: Op, ws: &WorkingSet) -> bool {
        self.op == op
            && match (self.level, ws.level) {
                (Some(a), Some(b)) => a == b,
                (None, None) => self.size == ws.size,
                _ => false,
            }
    }

    /// `triad on 85 KiB/thread (l2)`.
    fn name(&self) -> String {
        format!("{} on {}", self.op.name(), self.label)
    }
}

impl Session {
    /// Takes `earlier`'s loop and layout for each op × working set of the plan's grid (none:
    /// the trials as before). Refused, one line naming the file: a cell of the grid that
    /// `earlier` holds no choice for, a loop this build lacks or this CPU cannot run, and a loop
    /// of other stores than this run's.
    pub fn reuse_choices(&mut self, earlier: Option<&Earlier>) -> Result<()> {
        let Some(earlier) = earlier else {
            return Ok(());
        };
        let flag = format!("--choices-from {}", earlier.file.display());
        let from = earlier.file.display().to_string();
        let mut reused = Reused::new(from.clone());
        let stores = self.plan.kernel.stores;
        for ws in &self.plan.grid.sets {
            for &op in &self.plan.grid.ops {
                let Some(held) = earlier.sets.iter().find(|e| e.matches(op, ws)) else {
                    return Err(Error::usage(format!(
                        "{flag}: it holds no loop for {} on {}; it holds {}",
                        op.name(),
                        ws.label(),
                        held_list(earlier)
                    )));
                };
                let variant = runnable(held, stores).map_err(|e| e.context(&flag))?;
                reused.insert(op, ws.size, variant, held.huge_pages);
            }
        }
        self.plan.reused = Some(reused);
        self.info.choices_from = Some(from);
        Ok(())
    }
}

/// The loop `held` names, when this build has it for its op, it has `stores` and this CPU
/// runs it; else why not (`Error::Usage`).
fn runnable(held: &EarlierSet, stores: Stores) -> Result<&'static Variant> {
    let named = format!("{} ran '{}'", held.name(), held.variant);
    let Some(v) = Variant::all().find(|v| v.op == held.op && v.name == held.variant) else {
        return Err(Error::usage(format!(
            "{named}, a loop this stream-top does not have"
        )));
    };
    if !(v.available)() {
        return Err(Error::usage(format!("{named}, which this CPU cannot run")));
    }
    if v.stores != stores {
        return Err(Error::usage(format!(
            "{named}, a loop of {} stores, and this run has {stores} stores: give --stores {}",
            v.stores, v.stores
        )));
    }
    Ok(v)
}

/// What the file holds, for a refusal: `triad on 85 KiB/thread (l2), triad on 128 MiB (dram)`,
/// or that it holds none.
fn held_list(earlier: &Earlier) -> String {
    if earlier.sets.is_empty() {
        return "no loop for any working set (a snapshot from before stream-top recorded them, \
                or one whose cells all failed)"
            .into();
    }
    earlier
        .sets
        .iter()
        .map(EarlierSet::name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(op: Op, level: Option<Level>, size: ArraySize) -> EarlierSet {
        EarlierSet {
            op,
            level,
            size,
            label: "x".into(),
            variant: "portable".into(),
            huge_pages: true,
        }
    }

    fn set(level: Option<Level>, size: ArraySize) -> WorkingSet {
        WorkingSet {
            name: "x".into(),
            level,
            size,
            note: None,
        }
    }

    #[test]
    fn a_set_matches_by_level_or_by_size_where_neither_has_a_level() {
        let dram = held(Op::Triad, Some(Level::Dram), ArraySize::Split(1 << 30));
        let resized = set(Some(Level::Dram), ArraySize::Split(3 << 29));
        assert!(
            dram.matches(Op::Triad, &resized),
            "dram is dram at any size"
        );
        assert!(!dram.matches(Op::Copy, &resized), "another op's loop");
        let l2 = set(Some(Level::L2), ArraySize::Split(1 << 30));
        assert!(!dram.matches(Op::Triad, &l2));
        let sized = held(Op::Triad, None, ArraySize::Split(64 << 20));
        assert!(sized.matches(Op::Triad, &set(None, ArraySize::Split(64 << 20))));
        assert!(!sized.matches(Op::Triad, &set(None, ArraySize::PerThread(64 << 20))));
        assert!(!sized.matches(
            Op::Triad,
            &set(Some(Level::Dram), ArraySize::Split(64 << 20))
        ));
    }

    #[test]
    fn a_loop_of_other_stores_or_unknown_is_refused_by_name() {
        let mut h = held(Op::Triad, Some(Level::L2), ArraySize::PerThread(1 << 16));
        h.label = "64 KiB/thread (l2)".into();
        assert_eq!(runnable(&h, Stores::Normal).unwrap().name, "portable");
        let nt = Variant::all().find(|v| v.op == Op::Triad && v.stores == Stores::Nt);
        if let Some(nt) = nt.filter(|v| (v.available)()) {
            h.variant = nt.name.into();
            let why = runnable(&h, Stores::Normal).unwrap_err().to_string();
            assert!(why.contains("give --stores nt"), "{why}");
        }
        h.variant = "quantum zmm".into();
        assert_eq!(
            runnable(&h, Stores::Normal).unwrap_err().to_string(),
            "triad on 64 KiB/thread (l2) ran 'quantum zmm', a loop this stream-top does not have"
        );
    }
}
