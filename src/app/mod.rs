//! From the command line to a run: `cli` turns arguments into a `Config`, `session` turns a
//! `Config` and the machine into the plan the engine runs.

pub mod cli;
pub mod session;
