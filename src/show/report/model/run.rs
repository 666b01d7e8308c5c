//! What the run was: its version, name and command line, the kernel and the settings it ran
//! with, the counters it had, its container limits and the settings that changed nothing; the
//! part of `info` that is not the machine.

use super::machine::{ClockEstimate, HostState, Topology, VendorFigure};
use crate::machine::cgroup::Limits;
use serde::{Deserialize, Serialize};

/// Everything about the run that is not a cell's figures: printed above the tables. The wire
/// shape of the run's own `judge::run_info::RunInfo`, which says why the two differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// stream-top's version.
    pub version: String,
    /// The run's label (`--name`), in the exported file names too; null without one.
    #[serde(default)]
    pub name: Option<String>,
    /// The command line as given.
    pub command_line: String,
    pub hostname: String,
    /// When the run started: RFC 3339 with its offset.
    pub started: String,
    pub topology: Topology,
    /// The instruction set and stores. With `--kernel auto` (see `selection`) the widest the
    /// CPU has; each cell's `choice` names the loop it ran.
    pub kernel: Kernel,
    /// `--kernel` and `--huge-pages` as the run had them. Absent when they were an instruction
    /// set and `on`, which is what every file before the choice ran (each cell the kernel's
    /// default loop, on huge pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// `--choices-from`: the snapshot whose loops and page layouts the cells ran, each cell's
    /// `choice` then settled `reused`; absent when the run settled its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices_from: Option<String>,
    pub pin: PinPolicy,
    pub clock: ClockEstimate,
    pub vendor: VendorFigure,
    /// Load, memory and swap when the run started.
    pub host_start: HostState,
    /// Timed rounds per cell (`--rounds`).
    pub rounds: u32,
    pub round_ms: u32,
    /// The share of the time rounds ran, a fraction (1 = always; `--duty 50` is 0.5).
    pub duty: f64,
    /// The cgroup limits that applied at the start; null outside a container.
    #[serde(default)]
    pub container: Option<Container>,
    /// Where placement cannot be controlled (macOS), how threads were placed instead; null
    /// where `pin` says it all.
    #[serde(default)]
    pub placement: Option<String>,
    /// Where the OS has no transparent huge pages (macOS), saying so; null elsewhere.
    #[serde(default)]
    pub huge_pages: Option<String>,
    /// Settings that change nothing on this machine (`--pin spread` where compact places the
    /// same, `--huge-pages` where THP is `never`), said once beside the table.
    #[serde(default)]
    pub no_effect: Vec<NoEffect>,
    /// Which per-thread counters the run had, and why the others were missing (with
    /// `--counters off`, none counted and that reason); null in files written before counters
    /// existed.
    #[serde(default)]
    pub counters: Option<CounterInfo>,
    /// Where the arrays' pages came from, when the run chose (`--membind`, `--interleave`,
    /// the matrix) or the machine has several NUMA nodes; null otherwise.
    #[serde(default)]
    pub numa: Option<String>,
    /// Why no figure of this run is a measurement (`--oversubscribe`); null for a measurement.
    #[serde(default)]
    pub not_a_measurement: Option<String>,
    /// What a CPU quota did to the thread counts ("threads capped at 1 by the CPU quota 0.5
    /// CPUs", or a warning that asked-for threads are throttled); absent when it did nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_note: Option<String>,
    /// The node's name and hardware fingerprint (`fleet` groups and judges by it); absent
    /// from snapshots written before it, and where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<crate::machine::fingerprint::Fingerprint>,
}

/// A setting that changes nothing on the machine of the run, and why (one sentence).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoEffect {
    pub setting: Setting,
    pub text: String,
}

/// The setting a `NoEffect` is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    Pin,
    HugePages,
}

/// Which per-thread counters a run had (`context switches`, `cycles`, …), and for those it
/// did not have, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterInfo {
    pub counted: Vec<String>,
    pub missing: Vec<MissingCounters>,
}

/// Counters refused together, and why, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingCounters {
    pub counters: Vec<String>,
    pub reason: String,
}

/// The cgroup limits that applied at the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Container {
    /// The tightest memory limit, bytes.
    pub memory_limit: Option<u64>,
    /// The tightest CPU quota, CPUs.
    pub cpu_quota: Option<f64>,
}

impl Container {
    /// "in a container: memory limit 400 MiB, CPU quota 1.5 CPUs"; None when no limit applies.
    pub fn line(&self) -> Option<String> {
        Limits {
            memory_limit: self.memory_limit,
            cpu_quota: self.cpu_quota,
        }
        .line()
    }
}

/// The triad variant that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    pub isa: Isa,
    pub stores: Stores,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    Avx512,
    Avx2,
    Sse2,
    Neon,
    Portable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stores {
    Normal,
    Nt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PinPolicy {
    Spread,
    Compact,
    None,
}

/// `--kernel` and `--huge-pages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// `auto`, an instruction set (`avx2`: its default loops) or a loop's name.
    pub kernel: String,
    /// `auto`, `on` or `off`.
    pub huge_pages: String,
}
