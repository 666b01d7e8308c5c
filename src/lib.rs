//! stream-top: `top` for memory bandwidth.
//!
//! The modules are layers, each using only those below it (a test checks the order):
//!
//! ```text
//! base < platform < machine < engine < judge < app < show
//! ```
//!
//! `base` (errors, the one writer, units, time), `platform` (every OS call), `machine` (what the
//! host is), `engine` (rounds of the kernels, one record per round over a channel), `judge`
//! (what the rounds mean: statistics, disturbance, the contention watch), `app` (the command
//! line and the session it plans), `show` (headless tables, the live monitor, snapshots, the
//! Prometheus target). Commands flow back to the engine over its own channel.
//!
//! The library is the program: its public API is what the `stream-top` binary, the tests and
//! the benches use (the layers' entry points and the types they pass), and nothing it offers
//! is meant to be stable for other crates; everything used only inside is `pub(crate)` or
//! private.
//!
//! `unsafe` is denied here and allowed only where it must be: the platform layer (OS calls),
//! the engine's pool, buffers and kernels, and the clock's instruction chains.

#![deny(unsafe_code)]

pub mod app;
pub mod base;
pub mod engine;
pub mod judge;
pub mod machine;
#[allow(unsafe_code)]
pub mod platform;
pub mod show;
