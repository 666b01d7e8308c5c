//! What the test modules share, and the only module they import from one another (the rule
//! `test_modules_share_helpers_only_through_support` in architecture.rs): builders of synthetic
//! inputs, fixture trees, and the binary run as the tests run it. A test module's own helpers
//! stay in it; a helper a second module needs moves here.

pub mod binary;
pub mod csv;
pub mod fail_common;
pub mod latency_fixtures;
pub mod machine_fixtures;
#[cfg(target_os = "linux")] // /proc
pub mod procs;
pub mod prometheus;
pub mod report_fixtures;
pub mod running;
pub mod serve;
pub mod tools;
pub mod tui_common;
