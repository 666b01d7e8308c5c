//! Snapshots of the table and their writers.
//!
//! `model` is the snapshot's wire format (a JSON file with a schema version), with types of its
//! own; `build` fills it from a run (its description, grid and statistics board; `mirror`
//! holds the conversions that the wording in `lines` also makes the other way), `derived`
//! computes the ratios between its cells, `lands` the level an explicit size lands in, `sweep`
//! a size sweep's curves and cache edges and `cliffs` the drops on them, named by cache level.
//! Everything else reads only the model: the pure writers — Markdown (the per-cell and derived tables,
//! ready to paste, or a compact form), CSV, JSON (and the reader, which brings older schemas up
//! to date through `upgrade` and refuses what it cannot read) and an SVG chart —, `export`,
//! which writes all four atomically and never over an existing file, `update_readme`, which
//! puts the Markdown between markers in a README (rewriting it in place), `check_export_dir`
//! and `check_readme`, which find before a run what would make those fail, `input`, which
//! reads a named file within limits, and `compare` and `Baseline`, which set two snapshots side
//! by side (`compare` takes a directory's newest snapshot too).

pub mod baseline;
pub mod build;
pub mod calibration;
mod choices_from;
pub mod cliffs;
pub mod compare;
pub mod csv;
pub mod derived;
mod formats;
pub(crate) mod input;
pub mod json;
mod lands;
pub mod latency;
mod lines;
pub mod loaded;
pub(crate) mod markdown;
mod mirror;
pub mod model;
mod ops;
pub mod printable;
pub mod stream_table;
pub mod svg;
pub mod sweep;
mod text;
mod upgrade;
pub mod write;

pub use baseline::Baseline;
pub use choices_from::earlier_choices;
pub use compare::{Comparison, Measure, compare};
pub use csv::{CSV_COLUMNS, LATENCY_CSV_COLUMNS, to_csv};
pub use formats::table_text;
pub use input::MAX_INPUT_BYTES;
pub use json::{from_json, load_snapshot, to_json};
pub use markdown::{to_markdown, to_markdown_compact};
pub(crate) use mirror::HostWire;
pub use model::{
    CellSnapshot, CheckResult, DerivedRow, FailedCell, Round, SCHEMA_VERSION, Snapshot, Unit,
};
pub use printable::printable;
pub use svg::to_svg;
pub use write::{
    BEGIN_MARKER, END_MARKER, check_export_dir, check_readme, export, make_output_dir,
    update_readme,
};
