//! The snapshot's wire format: the types a JSON snapshot is read into and written from.
//!
//! A snapshot is a file format with a version, read back by later builds of stream-top (for
//! `compare` and `--baseline`), so its layout must not follow the engine's, the machine's or the
//! statistics' types when they change. These types are its own: they are schema 2 field by
//! field, `build/` fills them from a run, and every writer, `compare` and `Baseline` read only
//! them. Changing a name, a field or a spelling here changes the schema: bump `SCHEMA_VERSION`
//! (the golden-file test in tests/integration/report_golden.rs says when that happened) and
//! teach `upgrade.rs` to bring the older files up to it.
//!
//! Units, one meaning per field: rates are decimal GB/s, sizes bytes, times RFC 3339 with their
//! offset, and every share of a whole (cv, the fraction of the vendor figure, the duty cycle) a
//! fraction from 0 (the Markdown and the screen show it as a percentage); a ratio (scaling) is
//! a plain multiple. docs/reference.md ("Fields and units") lists each one.
//!
//! The types by part of the snapshot: run.rs (what ran), machine.rs (what it ran on), grid.rs
//! (thread counts × working sets), cell.rs (a row of the table), findings.rs (the derived
//! table, the matrix and the cliffs) and events.rs (what the live monitor saw); this file holds
//! the snapshot itself and re-exports them all, so `model::X` names each.

mod cell;
mod events;
mod findings;
mod grid;
mod latency;
mod loaded_latency;
mod machine;
mod run;

use serde::{Deserialize, Serialize};

pub use cell::{
    CellChoice, CellCounters, CellSnapshot, CheckResult, ChoiceBy, CycleSource, FailedCell,
    Figures, GroupKey, Pages, PortLimit, Round, RunnerUp, ThreadGroup, Trial,
};
pub use events::{Episode, LogLine, Suspect};
pub use findings::{Cliff, DerivedRow, Matrix, MatrixCell, Unit};
pub use grid::{ArraySize, Grid, Level, WorkingSet};
pub use latency::LatencyCell;
pub use loaded_latency::LoadedLatencyPoint;
pub use machine::{
    Cache, CacheKind, ClockEstimate, CoreKind, Cpu, CpuDesign, HostState, MemPressure, NumaNode,
    Topology, VendorFigure, VendorSource,
};
pub use run::{
    Container, CounterInfo, Isa, Kernel, MissingCounters, NoEffect, PinPolicy, RunInfo, Selection,
    Setting, Stores,
};

/// The JSON layout's version. Bump it whenever a field is renamed, removed or changes meaning;
/// `from_json` reads this one and the older ones `upgrade.rs` converts, and refuses the rest.
///
/// Schema 2 (from schema 1): `taken`, `info.started` and the contention episodes' `start` and
/// `end` are RFC 3339 with their offset; `size` is one shape, `{"kind", "bytes"}`; the vendor
/// figure's `source` is an enum beside its `source_text`; `info.duty` is a fraction and a
/// suspect's CPU time is in cores; `info.name`, `info.no_effect`, `grid.sets[].lands_in` and
/// `figures.noisy` are new; a cell's `groups[].group` is one shape, `{"kind", "node",
/// "core_type"}`; `figures.bytes_per_cycle_from` names the clock estimate too
/// (`clock_estimate`, where schema 1 left it out); and every field is written, empty or null
/// as it may be, never left out (schema 1 left out the counters, disturbed rounds and their
/// causes, the median's interval, steal and throttling, a cell's groups, where a run had
/// none).
///
/// Added to schema 2 since, null where a run has none (and read as null from files written
/// before): `info.numa` (where pages came from), `info.not_a_measurement` (`--oversubscribe`),
/// a cell's `pages` (where a sample of them sat) and `matrix` (`--matrix`).
/// `cliffs` (a size sweep's cache edges) likewise: an empty list where a run has none.
///
/// Schema 3: each cell's `repetitions`, the median of each repetition (`--repeat`), one for a
/// plain run; schema 2's files read with their one median there.
///
/// Schema 4: `latency`, the idle-latency cells of `--measure latency` (`latency.rs`: median,
/// fastest and slowest run in ns per load, cycles and where they come from, the share on huge
/// pages, 4 KiB pages and the TLB cost, each repetition's median); an empty list for a
/// bandwidth run, and for schema 3's files.
/// Schema 4: `loaded_latency`, the loaded-latency curve (`--measure loaded-latency`): the idle
/// reference (`delay_ns` null) and one point per delay, each with the load's GB/s, the
/// chase's median ns, its multiple of idle and whether it is the knee; an empty list for
/// other runs and for files written before.
/// Schema 4: every cell (and failed cell) names its `op`, the traffic pattern it ran
/// (`triad`, `copy`, `scale`, `add`, `read`, `write`, `update`, `mix-3:1`, `mix-2:1`,
/// `mix-1:1`), and `grid.ops` lists the run's ops in order; a cell is an op × a working set ×
/// a thread count. A checksum's `expected` may be negative. Schema 3's files read as triad
/// cells of a triad grid.
pub const SCHEMA_VERSION: u32 = 4;

/// The table as it stands, and what it was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema_version: u32,
    /// When the snapshot was taken: RFC 3339 with its offset, `2026-11-29T21:33:55+00:00`.
    pub taken: String,
    /// Seconds from the run's start (`info.started`) to `taken`, when both parse.
    pub run_seconds: Option<u64>,
    pub info: RunInfo,
    /// Load, memory and swap when the snapshot was taken (the start is `info.host_start`).
    pub host_now: HostState,
    /// The grid the cells come from (working sets with their sizes and notes, thread counts).
    pub grid: Grid,
    /// Cells with figures, in the sweep's order; the rerun row last. Tables show them in
    /// `table_cells` order.
    pub cells: Vec<CellSnapshot>,
    pub derived: Vec<DerivedRow>,
    /// Cells that could not run, with the reason: their arrays could not be mapped, a worker
    /// died, the engine stopped before them. Empty when every cell ran.
    #[serde(default)]
    pub failed: Vec<FailedCell>,
    /// The live monitor's contention episodes, oldest first; empty for a headless run.
    #[serde(default)]
    pub contention: Vec<Episode>,
    /// The live monitor's event log, oldest first; empty for a headless run.
    #[serde(default)]
    pub log: Vec<LogLine>,
    /// `--matrix`: the NUMA bandwidth matrix; null for other runs.
    #[serde(default)]
    pub matrix: Option<Matrix>,
    /// A size sweep's cliffs (`report/cliffs.rs`), curve by curve; empty when the snapshot is
    /// not a size sweep or its curves have none.
    #[serde(default)]
    pub cliffs: Vec<Cliff>,
    /// `--measure latency`: idle latency per working set (or per pair of the latency matrix),
    /// in the order measured; empty for a bandwidth run.
    #[serde(default)]
    pub latency: Vec<LatencyCell>,
    /// `--measure loaded-latency`: the curve, the idle reference first; empty for other runs.
    #[serde(default)]
    pub loaded_latency: Vec<LoadedLatencyPoint>,
    /// A latency or loaded-latency run that a signal ended: what it measured before the signal
    /// (`stopped by SIGTERM after 2 of 5 buffers`). Absent for every other run: a
    /// bandwidth run says it cell by cell, in `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
}

impl Snapshot {
    /// The vendor figure when there is a usable one.
    pub fn vendor_gbs(&self) -> Option<f64> {
        self.info.vendor.usable_gbs()
    }

    /// The rows of a table: every cell, measured or failed, grouped by working set (in the
    /// grid's order), then by thread count, the single-thread rerun last. (The sweep runs that
    /// configuration first and last, so in the sweep's order one set's rows would be split.)
    pub(crate) fn table_rows(&self) -> Vec<TableRow<'_>> {
        let mut rows: Vec<TableRow<'_>> = self
            .cells
            .iter()
            .map(TableRow::Cell)
            .chain(self.failed.iter().map(TableRow::Failed))
            .collect();
        // Op by op, in the grid's order (one op: as before ops).
        let op = |name: &str| self.grid.ops.iter().position(|o| o == name);
        rows.sort_by_key(|r| match r {
            TableRow::Cell(c) => (op(&c.op), c.rerun, c.set, c.threads),
            TableRow::Failed(f) => (op(&f.op), f.rerun, f.set, f.threads),
        });
        rows
    }

    /// The cells with figures in the tables' order (`table_rows` without the failed ones).
    pub(crate) fn cells_in_table_order(&self) -> Vec<&CellSnapshot> {
        self.table_rows()
            .into_iter()
            .filter_map(|r| match r {
                TableRow::Cell(c) => Some(c),
                TableRow::Failed(_) => None,
            })
            .collect()
    }

    /// The cell of this set label, thread count and rerun flag.
    pub fn cell(&self, set_label: &str, threads: usize, rerun: bool) -> Option<&CellSnapshot> {
        self.cells
            .iter()
            .find(|c| c.set_label == set_label && c.threads == threads && c.rerun == rerun)
    }
}

/// The most memory bandwidth a snapshot's figure may claim, GB/s: 100 TB/s, some ten times
/// the fastest memory of any machine built (HBM3e parts reach about 8 TB/s, a cache's
/// aggregate over hundreds of cores a few tens). A figure above it was not measured: it is
/// a damaged or edited file, and judged it would move a fleet's median or a gate.
pub const MAX_PLAUSIBLE_GBS: f64 = 100_000.0;

impl Snapshot {
    /// Refuses numbers a snapshot cannot hold, naming the field: a negative or non-finite rate,
    /// clock, spread or ratio (JSON has no infinity, but a hand-edited file can hold -5), and
    /// a rate of GB/s beyond `MAX_PLAUSIBLE_GBS`.
    pub(crate) fn check_ranges(&self) -> crate::base::error::Result<()> {
        let mut bad: Option<String> = None;
        let mut check = |field: &dyn Fn() -> String, v: Option<f64>| {
            let Some(v) = v.filter(|_| bad.is_none()) else {
                return;
            };
            let name = field();
            if !(v.is_finite() && v >= 0.0) {
                bad = Some(format!(
                    "{name} is {v}: it must be a finite number, 0 or more"
                ));
            } else if is_rate(&name) && v > MAX_PLAUSIBLE_GBS {
                bad = Some(format!(
                    "{name} is {v:.3e} GB/s: implausible, beyond any memory (at most \
                     {MAX_PLAUSIBLE_GBS} GB/s)"
                ));
            }
        };
        check(&|| "info.vendor.gbs".into(), self.info.vendor.gbs);
        check(&|| "info.duty".into(), Some(self.info.duty));
        check(&|| "info.clock.ghz".into(), Some(self.info.clock.ghz));
        check(
            &|| "info.clock.check_ghz".into(),
            Some(self.info.clock.check_ghz),
        );
        for (i, c) in self.cells.iter().enumerate() {
            let f = &c.figures;
            for (name, v) in [
                ("median_gbs", Some(f.median_gbs)),
                ("best_gbs", Some(f.best_gbs)),
                ("cv", Some(f.cv)),
                ("fastest_thread_gbs", Some(f.fastest_thread_gbs)),
                ("slowest_thread_gbs", Some(f.slowest_thread_gbs)),
                ("scaling", f.scaling),
                ("vendor_fraction", f.vendor_fraction),
                ("bytes_per_cycle", f.bytes_per_cycle),
            ] {
                check(&|| format!("cells[{i}].figures.{name}"), v);
            }
            for (j, r) in c.repetitions.iter().enumerate() {
                check(&|| format!("cells[{i}].repetitions[{j}]"), Some(*r));
            }
            for (j, g) in c.groups.iter().enumerate() {
                for (name, v) in [("gbs", g.gbs), ("per_thread_gbs", g.per_thread_gbs)] {
                    check(&|| format!("cells[{i}].groups[{j}].{name}"), Some(v));
                }
            }
            for (j, r) in c.history.iter().enumerate() {
                for (name, v) in [
                    ("gbs", r.gbs),
                    ("fastest_thread_gbs", r.fastest_thread_gbs),
                    ("slowest_thread_gbs", r.slowest_thread_gbs),
                ] {
                    check(&|| format!("cells[{i}].history[{j}].{name}"), Some(v));
                }
            }
        }
        for (i, d) in self.derived.iter().enumerate() {
            check(&|| format!("derived[{i}].value"), Some(d.value));
        }
        for (i, c) in self.matrix.iter().flat_map(|m| &m.cells).enumerate() {
            check(&|| format!("matrix.cells[{i}].median_gbs"), c.median_gbs);
        }
        for (i, c) in self.cliffs.iter().enumerate() {
            for (name, v) in [
                ("before_gbs", c.before_gbs),
                ("after_gbs", c.after_gbs),
                ("drop", c.drop),
                ("threshold", c.threshold),
            ] {
                check(&|| format!("cliffs[{i}].{name}"), Some(v));
            }
        }
        for (i, c) in self.latency.iter().enumerate() {
            for (name, v) in [
                ("median_ns", Some(c.median_ns)),
                ("min_ns", Some(c.min_ns)),
                ("max_ns", Some(c.max_ns)),
                ("cv", Some(c.cv)),
                ("cycles", Some(c.cycles)),
                ("huge_share", c.huge_share),
                ("small_pages_ns", c.small_pages_ns),
            ] {
                check(&|| format!("latency[{i}].{name}"), v);
            }
            for (j, r) in c.repetitions.iter().enumerate() {
                check(&|| format!("latency[{i}].repetitions[{j}]"), Some(*r));
            }
        }
        for (i, p) in self.loaded_latency.iter().enumerate() {
            for (name, v) in [
                ("load_gbs", p.load_gbs),
                ("latency_ns", p.latency_ns),
                ("times_idle", p.times_idle),
            ] {
                check(&|| format!("loaded_latency[{i}].{name}"), Some(v));
            }
        }
        if bad.is_none() && self.info.duty > 1.0 {
            bad = Some(format!(
                "info.duty is {}: it is a fraction of the time, at most 1",
                self.info.duty
            ));
        }
        bad.map_or(Ok(()), |b| Err(crate::base::error::Error::usage(b)))
    }
}

/// Whether a field (as `check_ranges` names it) holds GB/s: its name says so, or it is a
/// cell's repetitions (each a run's median GB/s).
fn is_rate(field: &str) -> bool {
    let last = field.rsplit('.').next().unwrap_or(field);
    last.ends_with("gbs") || (field.starts_with("cells[") && last.starts_with("repetitions["))
}

/// A row of a table: a cell with figures, or one that could not run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TableRow<'a> {
    Cell(&'a CellSnapshot),
    Failed(&'a FailedCell),
}

/// Said after the row label of the single-thread cache configuration run again last.
pub(crate) const RERUN_SUFFIX: &str = ", run again last";
