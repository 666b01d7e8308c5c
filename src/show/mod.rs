//! What a person sees: the headless tables (`headless`), the live monitor (`tui`), snapshots
//! and their files (`report`), the Prometheus target (`serve`), and the check of every file
//! and address they will use, made before anything is measured (`preflight`).

pub mod calibrate;
pub mod check;
pub mod fleet;
pub mod headless;
pub mod headless_latency;
pub mod loaded_latency;
pub mod preflight;
pub mod record;
pub mod report;
pub mod serve;
pub mod tui;
