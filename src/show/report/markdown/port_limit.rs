//! The per-cell table's "of port limit" column and its footnote: a cell's bytes per cycle as a
//! fraction of what the core's load and store ports allow its loop. Shown only where the
//! snapshot records the CPU design, so older files read as they did.

use crate::show::report::model::{Figures, PortLimit, Snapshot};
use std::collections::BTreeSet;

/// The column's name.
pub(super) const HEADER: &str = "of port limit";

/// Whether the table has the column: the snapshot records the CPU design.
pub(super) fn shown(s: &Snapshot) -> bool {
    s.info.topology.cpu.is_some()
}

/// A cell's fraction of its limit; None (`–`) where the limit or the measured bytes per cycle
/// is unknown.
pub(super) fn fraction(f: &Figures) -> Option<f64> {
    match &f.port_limit {
        Some(PortLimit::Known { fraction, .. }) => *fraction,
        _ => None,
    }
}

/// The footnote: what the limit is and where it comes from, that it is a ceiling for data in
/// L1, and why a `–` stands where it does.
pub(super) fn line(s: &Snapshot) -> Option<String> {
    if !shown(s) {
        return None;
    }
    let mut known = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    for c in &s.cells {
        match &c.figures.port_limit {
            Some(PortLimit::Known { core, source, .. }) => {
                known.insert(format!("{core} ({source})"));
            }
            Some(PortLimit::Unknown { reason }) => {
                unknown.insert(reason.clone());
            }
            None => {}
        }
    }
    let mut line = String::from(
        "Of port limit: bytes/cycle over what the core's load and store ports allow the loop \
         per cycle, a ceiling for data in L1 (lower levels sit below it by design)",
    );
    if !known.is_empty() {
        let cores: Vec<String> = known.into_iter().collect();
        line.push_str(&format!("; {}", cores.join(", ")));
    }
    if !unknown.is_empty() {
        let reasons: Vec<String> = unknown.into_iter().collect();
        line.push_str(&format!("; – where {}", reasons.join("; ")));
    }
    line.push('.');
    Some(line)
}
