//! The one choice of a text writer by `--format`, for every command that prints a snapshot
//! (a headless run, a replay).

use super::model::Snapshot;
use crate::app::cli::FormatArg;

/// The snapshot's table in the format asked for (`--format stream` is refused before a
/// latency run starts, so its snapshots never get here with it).
pub fn table_text(format: FormatArg, snap: &Snapshot) -> String {
    match format {
        FormatArg::Md => super::markdown::to_markdown(snap),
        FormatArg::Csv => super::csv::to_csv(snap),
        FormatArg::Json => super::json::to_json(snap),
        FormatArg::Stream => super::stream_table::to_stream_table(snap),
    }
}
