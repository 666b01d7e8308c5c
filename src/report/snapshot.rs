//! The snapshot: the table as it stands at one moment, with everything needed to read it later
//! (machine, settings, host load, per-round history). Every writer and `compare` read only this,
//! so a JSON snapshot written today renders the same Markdown, CSV and chart tomorrow.

use super::derived::{DerivedRow, derive};
use super::model::RunInfo;
use super::time::parse_utc;
use crate::engine::plan::{ArraySize, CellId, Grid, Level};
use crate::machine::host::HostState;
use crate::stats::{Board, Context, Figures};
use serde::{Deserialize, Serialize};

/// The JSON layout's version. Bump it whenever a field is renamed, removed or changes meaning;
/// `from_json` refuses every other version.
pub const SCHEMA_VERSION: u32 = 1;

/// Said after the row label of the single-thread cache configuration run again last.
pub const RERUN_SUFFIX: &str = ", run again last";

/// The table as it stands, and what it was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema_version: u32,
    /// When the snapshot was taken, UTC, `YYYY-mm-dd HH:MM:SS`.
    pub taken: String,
    /// Seconds from the run's start (`info.started`) to `taken`, when both parse.
    pub run_seconds: Option<u64>,
    pub info: RunInfo,
    /// Load, memory and swap when the snapshot was taken (the start is `info.host_start`).
    pub host_now: HostState,
    /// The grid the cells come from (working sets with their sizes and notes, thread counts).
    pub grid: Grid,
    /// Cells with figures, in the sweep's order; the rerun row last.
    pub cells: Vec<CellSnapshot>,
    pub derived: Vec<DerivedRow>,
}

/// One row of the per-cell table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSnapshot {
    /// The row label: the set's label, with `, run again last` on the rerun row.
    pub label: String,
    /// Index of the working set in `grid.sets`.
    pub set: usize,
    /// `WorkingSet::label()`, e.g. `85 KiB/thread (l2)`, `128 MiB (dram)`.
    pub set_label: String,
    /// `WorkingSet::name`, e.g. `l2`, `dram`, `64 MiB`.
    pub set_name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    pub threads: usize,
    pub rerun: bool,
    pub figures: Figures,
    /// The timed rounds the figures are computed over, oldest first.
    pub history: Vec<Round>,
    /// The last checksum (a failure stays); None before the configuration ended once.
    pub checksum: Option<CheckResult>,
    pub checksum_failures: u64,
    /// CPUs the cell's threads ran on (-1 where unknown), sorted.
    pub cpus: Vec<i32>,
    /// Thread-rounds whose start and end CPU differed.
    pub migrations: u64,
    /// Bytes of the three arrays, and how many of them sat on huge pages.
    pub array_bytes: u64,
    pub huge_bytes: u64,
}

/// One timed round of a cell: the statistics' own summary of it.
pub use crate::stats::RoundSummary as Round;

/// The sum of `a` after a configuration against its integer reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub expected: u64,
    /// A broken kernel can leave NaN or infinity here: JSON has no such numbers, so they are
    /// written as the strings `"NaN"`, `"inf"`, `"-inf"` and read back.
    #[serde(with = "any_f64")]
    pub actual: f64,
    pub ok: bool,
}

/// Serde for an f64 that may not be finite (JSON would write `null` and fail to read it back).
mod any_f64 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Num(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Num(v) => Ok(v),
            Repr::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                _ => Err(D::Error::custom(format!(
                    "expected a number, NaN, inf or -inf, found {t:?}"
                ))),
            },
        }
    }
}

/// A rate that must be a finite number in the snapshot (0 when it was not).
fn finite(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// Figures with every value finite, so the JSON always reads back: a rate that is not a number
/// (a round with no threads) becomes 0, an optional one None.
fn finite_figures(f: Figures) -> Figures {
    let opt = |v: Option<f64>| v.filter(|x| x.is_finite());
    Figures {
        median_gbs: finite(f.median_gbs),
        best_gbs: finite(f.best_gbs),
        cv: finite(f.cv),
        fastest_thread_gbs: finite(f.fastest_thread_gbs),
        slowest_thread_gbs: finite(f.slowest_thread_gbs),
        scaling: opt(f.scaling),
        vendor_fraction: opt(f.vendor_fraction),
        bytes_per_cycle: opt(f.bytes_per_cycle),
        ..f
    }
}

impl CellSnapshot {
    /// `85 KiB/thread (l2) × 2 threads`, `…, run again last × 1 thread`: names a cell in prose.
    pub fn describe(&self) -> String {
        format!(
            "{} × {}",
            self.label,
            super::text::threads_phrase(self.threads)
        )
    }
}

impl Snapshot {
    /// The table as it stands: every cell of `grid` that has figures, in `grid.sweep_once()`
    /// order (the rerun row last), with the derived table computed from them.
    pub fn build(
        info: &RunInfo,
        grid: &Grid,
        board: &Board,
        host_now: &HostState,
        taken: String,
    ) -> Snapshot {
        let ctx = Context {
            vendor_gbs: info.vendor.gbs.filter(|v| v.is_finite() && *v > 0.0),
            ghz: Some(info.clock.ghz).filter(|g| g.is_finite() && *g > 0.0),
        };
        let cells: Vec<CellSnapshot> = grid
            .sweep_once()
            .into_iter()
            .filter_map(|id| cell_snapshot(grid, board, id, ctx))
            .collect();
        let derived = derive(&cells, &grid.sets, ctx.vendor_gbs);
        let run_seconds = match (parse_utc(&info.started), parse_utc(&taken)) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as u64),
            _ => None,
        };
        Snapshot {
            schema_version: SCHEMA_VERSION,
            taken,
            run_seconds,
            info: info.clone(),
            host_now: host_now.clone(),
            grid: grid.clone(),
            cells,
            derived,
        }
    }

    /// The vendor figure when there is a usable one.
    pub fn vendor_gbs(&self) -> Option<f64> {
        self.info.vendor.gbs.filter(|v| v.is_finite() && *v > 0.0)
    }

    /// The cell of this set label, thread count and rerun flag.
    pub fn cell(&self, set_label: &str, threads: usize, rerun: bool) -> Option<&CellSnapshot> {
        self.cells
            .iter()
            .find(|c| c.set_label == set_label && c.threads == threads && c.rerun == rerun)
    }
}

fn cell_snapshot(grid: &Grid, board: &Board, id: CellId, ctx: Context) -> Option<CellSnapshot> {
    let set = grid.sets.get(id.set)?;
    let figures = board.figures(id, ctx)?;
    let stats = board.cell(id)?;
    let set_label = set.label();
    let label = if id.rerun {
        format!("{set_label}{RERUN_SUFFIX}")
    } else {
        set_label.clone()
    };
    Some(CellSnapshot {
        label,
        set: id.set,
        set_label,
        set_name: set.name.clone(),
        level: set.level,
        size: set.size,
        threads: id.threads,
        rerun: id.rerun,
        figures: finite_figures(figures),
        history: stats.window.iter().copied().collect(),
        checksum: stats.checksum.as_ref().map(|c| CheckResult {
            expected: c.expected,
            actual: c.actual,
            ok: c.ok,
        }),
        checksum_failures: stats.checksum_failures,
        cpus: stats.cpus.iter().copied().collect(),
        migrations: stats.migrations,
        array_bytes: stats.array_bytes,
        huge_bytes: stats.huge_bytes,
    })
}
