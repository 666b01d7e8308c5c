//! stream-top: `top` for memory bandwidth.
//!
//! Data flows one way: `machine` says what the host is, `engine` runs STREAM triad rounds and
//! sends one record per round over a channel, `stats` turns records into per-cell figures, and
//! `report` / `tui` / `headless` show them. Commands flow back to the engine over its own channel.

pub mod cli;
pub mod engine;
pub mod error;
pub mod headless;
pub mod machine;
pub mod output;
pub(crate) mod platform;
pub mod preflight;
pub mod report;
pub mod serve;
pub mod session;
pub mod stats;
pub mod tui;
pub mod units;
