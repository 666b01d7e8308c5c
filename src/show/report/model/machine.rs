//! The machine a snapshot was taken on: its topology, the clock estimate, the vendor's figure,
//! and the host's load and memory at the start of the run and at the snapshot.

use crate::machine::vendor::usable_gbs;
use serde::{Deserialize, Serialize};

/// The machine: online CPUs, cache instances and NUMA nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub model: String,
    /// Online CPUs, sorted by id.
    pub cpus: Vec<Cpu>,
    /// Every cache instance once.
    pub caches: Vec<Cache>,
    pub nodes: Vec<NumaNode>,
    /// The CPU design as the processor reports it; absent where the machine did not say (and
    /// in snapshots from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuDesign>,
}

/// The CPU design: what the table of load and store ports is looked up by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "arch")]
pub enum CpuDesign {
    /// CPUID's vendor string, display family, model and stepping.
    X86 {
        vendor: String,
        family: u32,
        model: u32,
        stepping: Option<u32>,
    },
    /// The MIDR's implementer, primary part number, variant and revision.
    Arm {
        implementer: u32,
        part: u32,
        variant: Option<u32>,
        revision: Option<u32>,
    },
    /// An Apple chip under macOS: `hw.cpufamily` and the brand string.
    Apple {
        cpufamily: Option<u32>,
        brand: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub id: usize,
    pub package: usize,
    /// `core_id` from sysfs: unique within a package only.
    pub core: usize,
    pub node: usize,
    /// CPUs that share this CPU's core, itself included, sorted.
    pub smt_siblings: Vec<usize>,
    pub kind: CoreKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoreKind {
    Uniform,
    Performance,
    Efficiency,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u8,
    pub kind: CacheKind,
    /// Bytes.
    pub size: u64,
    /// Online CPUs that share this instance, sorted.
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumaNode {
    pub id: usize,
    pub cpus: Vec<usize>,
}

/// The core clock estimate from dependent instruction chains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockEstimate {
    /// GHz from the dependent 1-cycle add chain.
    pub ghz: f64,
    /// GHz from a second, different dependent chain, as a check.
    pub check_ghz: f64,
    /// Whether the two agree.
    pub agree: bool,
    /// How it was measured.
    pub method: String,
    /// GHz from cycles counted during the add chain, where the PMU counts cycles; null
    /// elsewhere.
    #[serde(default)]
    pub counted_ghz: Option<f64>,
}

impl ClockEstimate {
    /// The clock when it can divide a rate (finite and positive, as `stats::Context` wants it).
    pub(crate) fn usable_ghz(&self) -> Option<f64> {
        Some(self.ghz).filter(|&g| usable_gbs(g))
    }
}

/// The vendor's peak bandwidth figure and where it came from (or why there is none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VendorFigure {
    /// GB/s (decimal), when known.
    pub gbs: Option<f64>,
    pub source: VendorSource,
    /// The source in words: `--vendor-gbs`, `SMBIOS: 2 × DDR4-3200 × 64 bit, assumes one DIMM
    /// per channel`, or why there is no figure.
    pub(crate) source_text: String,
}

/// Where a vendor figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VendorSource {
    /// `--vendor-gbs`.
    Flag,
    /// Estimated from the SMBIOS memory devices.
    Smbios,
    /// A published figure for the CPU model (Apple's, on a Mac).
    Table,
    /// No figure.
    None,
}

impl VendorFigure {
    /// The figure when it can divide a rate (finite and positive).
    pub(crate) fn usable_gbs(&self) -> Option<f64> {
        self.gbs.filter(|&g| usable_gbs(g))
    }
}

/// Load, memory and swap at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    pub load: [f64; 3],
    /// Bytes, as are the others.
    pub mem_total: u64,
    pub mem_available: u64,
    pub swap_total: u64,
    pub swap_used: u64,
    /// AnonHugePages from /proc/meminfo; `null` where the OS has no transparent huge pages
    /// (macOS).
    pub anon_huge: Option<u64>,
    /// Bytes the memory compressor occupies (macOS only; null elsewhere).
    #[serde(default)]
    pub compressor: Option<u64>,
    /// The memory-pressure level (macOS only; null elsewhere).
    #[serde(default)]
    pub mem_pressure: Option<MemPressure>,
}

/// macOS's memory-pressure level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemPressure {
    Normal,
    Warning,
    Critical,
}
