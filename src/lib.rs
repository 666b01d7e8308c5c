//! stream-top: `top` for memory bandwidth.
//!
//! Data flows one way: `machine` says what the host is, `engine` runs STREAM triad rounds and
//! sends one record per round over a channel, `stats` turns records into per-cell figures, and
//! `report` / `tui` / `headless` show them; `watch` is the live monitor's contention watching,
//! which the monitor draws and its snapshots record. Commands flow back to the engine over its own channel.
//!
//! `unsafe` is denied here and allowed only where it must be: the platform layer (OS calls),
//! the engine's pool, buffers and kernels, and the clock's instruction chains.

#![deny(unsafe_code)]

pub mod cli;
pub mod disturbance;
pub mod engine;
pub mod error;
pub mod groups;
pub mod headless;
pub mod inference;
pub mod machine;
pub mod no_effect;
pub mod output;
#[allow(unsafe_code)]
pub mod platform;
pub mod preflight;
pub mod report;
pub mod serve;
pub mod session;
pub mod stats;
pub mod tui;
pub mod units;
pub mod watch;
