//! `stream-top fleet`: its arguments, a struct of their own so that the fleet's flags sit
//! apart from the measuring ones.

use super::values::{parse_floor_gbs, parse_percent};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `fleet FILES|DIRS…`: many nodes' snapshots judged against their peers.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct FleetArgs {
    /// Snapshots, or directories of them (every `*.json` in each); several snapshots of one
    /// node are its repetitions.
    #[arg(value_name = "FILE|DIR", required = true, num_args = 1..)]
    pub(crate) paths: Vec<PathBuf>,
    /// An outlier is below its class median by more than K median absolute deviations…
    #[arg(long, value_name = "K", default_value_t = 6.0)]
    pub(crate) mads: f64,
    /// …and by more than PERCENT, or 4 × the class's run-to-run spread where that is wider.
    #[arg(
        long,
        value_name = "PERCENT",
        default_value_t = 5.0,
        allow_negative_numbers = true,
        value_parser = parse_percent
    )]
    pub(crate) min_gap: f64,
    /// The tables' format: md (a Markdown table per class), json or csv.
    #[arg(long, value_enum, default_value_t = FleetFormat::Md)]
    pub(crate) format: FleetFormat,
    /// Exit 1 when any node is an outlier: slow on every one of three or more occasions (runs
    /// at least 10 minutes apart).
    #[arg(long)]
    pub(crate) fail_on_outlier: bool,
    /// Exit 3 when any node is a suspect: slow, but on fewer than three occasions (one run,
    /// runs in one burst, or two bursts), to run again at another time; an outlier's exit 1 wins with --fail-on-outlier.
    #[arg(long)]
    pub(crate) fail_on_suspect: bool,
    /// Write each class's medians per cell to FILE (JSON), a reference for `check --against`.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_reference: Option<PathBuf>,
    /// Draw each class's distribution into DIR, one chart per class (DIR/class-CLASS.svg).
    ///
    /// A row per cell, a point per node at its figure over the class median, the median, the
    /// outlier threshold dashed (the stricter rule), the outliers in red and named. One file
    /// per class, as a fleet holds many classes and each is read on its own: open the file
    /// of the class the tables name. DIR is created when missing (its parent must exist);
    /// a class's chart from an earlier run is replaced, never left half-written.
    #[arg(long, value_name = "DIR")]
    pub(crate) svg: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetFormat {
    Md,
    Json,
    Csv,
}

/// `check`: a short all-core DRAM triad against a reference, for schedulers.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct CheckArgs {
    /// The reference: a snapshot (its dram cell at the same thread count) or a file that
    /// `fleet --export-reference` wrote (this node's class's median).
    #[arg(long, value_name = "FILE", required_unless_present = "min_gbs")]
    pub(crate) against: Option<PathBuf>,
    /// The least GB/s that passes (a positive number).
    #[arg(
        long,
        value_name = "GB/s",
        conflicts_with = "against",
        allow_negative_numbers = true,
        value_parser = parse_floor_gbs
    )]
    pub(crate) min_gbs: Option<f64>,
    /// SLOW when below the reference by more than PERCENT.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0, value_parser = parse_percent)]
    pub(crate) max_gap: f64,
    /// The working set measured (for tests: a small one).
    #[arg(long, hide = true, default_value = "dram")]
    pub(crate) set: String,
    /// The triad's rounds (for tests: a run long enough to be signalled while it measures).
    #[arg(long, hide = true, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) rounds: u32,
    /// The time check keeps to, seconds (for tests: 0 leaves no time to measure again).
    #[arg(long, hide = true)]
    pub(crate) seconds: Option<u32>,
}
