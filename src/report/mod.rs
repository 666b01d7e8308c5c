//! Snapshots of the table and their writers.
//!
//! One model (`Snapshot`, built from the run's info, the grid and the statistics board) and
//! several pure writers: Markdown (the seed README's tables, ready to paste), CSV, JSON (with a
//! schema version, and a reader that refuses other versions) and an SVG chart. `export` writes
//! all four atomically and never over an existing file; `update_readme` puts the Markdown
//! between markers in a README; `compare` and `Baseline` set two snapshots side by side.

pub mod compare;
pub mod csv;
pub mod derived;
pub mod json;
pub mod markdown;
pub mod model;
pub mod snapshot;
pub mod svg;
mod text;
pub mod time;
pub mod write;

pub use compare::{Baseline, compare, render_compare};
pub use csv::{CSV_COLUMNS, to_csv};
pub use derived::{DerivedRow, Unit};
pub use json::{from_json, load_snapshot, to_json};
pub use markdown::to_markdown;
pub use model::RunInfo;
pub use snapshot::{CellSnapshot, CheckResult, Round, SCHEMA_VERSION, Snapshot};
pub use svg::to_svg;
pub use time::{file_stamp, utc_now_string, utc_string};
pub use write::{BEGIN_MARKER, END_MARKER, export, update_readme};
