//! From the command line to a run: `cli` turns arguments into a `Config`, `session` turns a
//! `Config` and the machine into the plan the engine runs, and `choices_from` puts an earlier
//! run's loops and layouts in that plan.

pub mod choices_from;
pub mod cli;
pub mod session;
