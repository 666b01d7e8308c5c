//! Watching for contention, the part of the live monitor that is not drawing: each cell's
//! reference and contention state with its episodes (`contention`), the other processes
//! ranked as suspects (`suspects`), the event log (`log`) and what it says in words
//! (`narrative`).
//!
//! It sits below both the monitor and the report: `tui` keeps and draws it, and a snapshot
//! taken from the monitor records its episodes and log (`report::build`), so neither imports
//! the other for it.

pub mod contention;
pub mod episode;
pub mod log;
pub mod narrative;
pub mod probe;
pub mod suspects;
