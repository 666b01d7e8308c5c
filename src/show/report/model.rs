//! The snapshot's wire format: the types a JSON snapshot is read into and written from.
//!
//! A snapshot is a file format with a version, read back by later builds of stream-top (for
//! `compare` and `--baseline`), so its layout must not follow the engine's, the machine's or the
//! statistics' types when they change. These types are its own: they are schema 2 field by
//! field, `build.rs` fills them from a run, and every writer, `compare` and `Baseline` read only
//! them. Changing a name, a field or a spelling here changes the schema: bump `SCHEMA_VERSION`
//! (the golden-file test in tests/integration/report_golden.rs says when that happened) and
//! teach `upgrade.rs` to bring the older files up to it.
//!
//! Units, one meaning per field: rates are decimal GB/s, sizes bytes, times RFC 3339 with their
//! offset, and every share of a whole (cv, the fraction of the vendor figure, the duty cycle) a
//! fraction from 0 (the Markdown and the screen show it as a percentage); a ratio (scaling) is
//! a plain multiple. The README's table of fields lists each one.

use crate::machine::cgroup::Limits;
use crate::machine::vendor::usable_gbs;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The JSON layout's version. Bump it whenever a field is renamed, removed or changes meaning;
/// `from_json` reads this one and the older ones `upgrade.rs` converts, and refuses the rest.
///
/// Schema 2 (from schema 1): `taken`, `info.started` and the contention episodes' `start` and
/// `end` are RFC 3339 with their offset; `size` is one shape, `{"kind", "bytes"}`; the vendor
/// figure's `source` is an enum beside its `source_text`; `info.duty` is a fraction and a
/// suspect's CPU time is in cores; `info.name`, `info.no_effect`, `grid.sets[].lands_in` and
/// `figures.noisy` are new; a cell's `groups[].group` is one shape, `{"kind", "node",
/// "core_type"}`; `figures.bytes_per_cycle_from` names the clock estimate too
/// (`clock_estimate`, where schema 1 left it out); and every field is written, empty or null
/// as it may be, never left out (schema 1 left out the counters, disturbed rounds and their
/// causes, the median's interval, steal and throttling, a cell's groups, where a run had
/// none).
///
/// Added to schema 2 since, null where a run has none (and read as null from files written
/// before): `info.numa` (where pages came from), `info.not_a_measurement` (`--oversubscribe`),
/// a cell's `pages` (where a sample of them sat) and `matrix` (`--matrix`).
/// `cliffs` (a size sweep's cache edges) likewise: an empty list where a run has none.
pub const SCHEMA_VERSION: u32 = 2;

/// The table as it stands, and what it was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema_version: u32,
    /// When the snapshot was taken: RFC 3339 with its offset, `2026-11-29T21:33:55+00:00`.
    pub taken: String,
    /// Seconds from the run's start (`info.started`) to `taken`, when both parse.
    pub run_seconds: Option<u64>,
    pub info: RunInfo,
    /// Load, memory and swap when the snapshot was taken (the start is `info.host_start`).
    pub host_now: HostState,
    /// The grid the cells come from (working sets with their sizes and notes, thread counts).
    pub grid: Grid,
    /// Cells with figures, in the sweep's order; the rerun row last. Tables show them in
    /// `table_cells` order.
    pub cells: Vec<CellSnapshot>,
    pub derived: Vec<DerivedRow>,
    /// Cells that could not run, with the reason: their arrays could not be mapped, a worker
    /// died, the engine stopped before them. Empty when every cell ran.
    #[serde(default)]
    pub failed: Vec<FailedCell>,
    /// The live monitor's contention episodes, oldest first; empty for a headless run.
    #[serde(default)]
    pub contention: Vec<Episode>,
    /// The live monitor's event log, oldest first; empty for a headless run.
    #[serde(default)]
    pub log: Vec<LogLine>,
    /// `--matrix`: the NUMA bandwidth matrix; null for other runs.
    #[serde(default)]
    pub matrix: Option<Matrix>,
    /// A size sweep's cliffs (`report/cliffs.rs`), curve by curve; empty when the snapshot is
    /// not a size sweep or its curves have none.
    #[serde(default)]
    pub cliffs: Vec<Cliff>,
}

impl Snapshot {
    /// The vendor figure when there is a usable one.
    pub fn vendor_gbs(&self) -> Option<f64> {
        self.info.vendor.usable_gbs()
    }

    /// The rows of a table: every cell, measured or failed, grouped by working set (in the
    /// grid's order), then by thread count, the single-thread rerun last. (The sweep runs that
    /// configuration first and last, so in the sweep's order one set's rows would be split.)
    pub fn table_rows(&self) -> Vec<TableRow<'_>> {
        let mut rows: Vec<TableRow<'_>> = self
            .cells
            .iter()
            .map(TableRow::Cell)
            .chain(self.failed.iter().map(TableRow::Failed))
            .collect();
        rows.sort_by_key(|r| match r {
            TableRow::Cell(c) => (c.rerun, c.set, c.threads),
            TableRow::Failed(f) => (f.rerun, f.set, f.threads),
        });
        rows
    }

    /// The cells with figures in the tables' order (`table_rows` without the failed ones).
    pub fn cells_in_table_order(&self) -> Vec<&CellSnapshot> {
        self.table_rows()
            .into_iter()
            .filter_map(|r| match r {
                TableRow::Cell(c) => Some(c),
                TableRow::Failed(_) => None,
            })
            .collect()
    }

    /// The cell of this set label, thread count and rerun flag.
    pub fn cell(&self, set_label: &str, threads: usize, rerun: bool) -> Option<&CellSnapshot> {
        self.cells
            .iter()
            .find(|c| c.set_label == set_label && c.threads == threads && c.rerun == rerun)
    }
}

impl Snapshot {
    /// Refuses numbers a snapshot cannot hold, naming the field: a negative or non-finite rate,
    /// clock, spread or ratio. (JSON has no infinity, but a hand-edited file can hold -5.)
    pub(crate) fn check_ranges(&self) -> crate::base::error::Result<()> {
        let mut bad: Option<String> = None;
        let mut check = |field: &dyn Fn() -> String, v: Option<f64>| {
            if bad.is_none()
                && let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                bad = Some(format!(
                    "{} is {v}: it must be a finite number, 0 or more",
                    field()
                ));
            }
        };
        check(&|| "info.vendor.gbs".into(), self.info.vendor.gbs);
        check(&|| "info.duty".into(), Some(self.info.duty));
        check(&|| "info.clock.ghz".into(), Some(self.info.clock.ghz));
        check(
            &|| "info.clock.check_ghz".into(),
            Some(self.info.clock.check_ghz),
        );
        for (i, c) in self.cells.iter().enumerate() {
            let f = &c.figures;
            for (name, v) in [
                ("median_gbs", Some(f.median_gbs)),
                ("best_gbs", Some(f.best_gbs)),
                ("cv", Some(f.cv)),
                ("fastest_thread_gbs", Some(f.fastest_thread_gbs)),
                ("slowest_thread_gbs", Some(f.slowest_thread_gbs)),
                ("scaling", f.scaling),
                ("vendor_fraction", f.vendor_fraction),
                ("bytes_per_cycle", f.bytes_per_cycle),
            ] {
                check(&|| format!("cells[{i}].figures.{name}"), v);
            }
            for (j, g) in c.groups.iter().enumerate() {
                for (name, v) in [("gbs", g.gbs), ("per_thread_gbs", g.per_thread_gbs)] {
                    check(&|| format!("cells[{i}].groups[{j}].{name}"), Some(v));
                }
            }
            for (j, r) in c.history.iter().enumerate() {
                for (name, v) in [
                    ("gbs", r.gbs),
                    ("fastest_thread_gbs", r.fastest_thread_gbs),
                    ("slowest_thread_gbs", r.slowest_thread_gbs),
                ] {
                    check(&|| format!("cells[{i}].history[{j}].{name}"), Some(v));
                }
            }
        }
        for (i, d) in self.derived.iter().enumerate() {
            check(&|| format!("derived[{i}].value"), Some(d.value));
        }
        for (i, c) in self.matrix.iter().flat_map(|m| &m.cells).enumerate() {
            check(&|| format!("matrix.cells[{i}].median_gbs"), c.median_gbs);
        }
        for (i, c) in self.cliffs.iter().enumerate() {
            for (name, v) in [
                ("before_gbs", c.before_gbs),
                ("after_gbs", c.after_gbs),
                ("drop", c.drop),
                ("threshold", c.threshold),
            ] {
                check(&|| format!("cliffs[{i}].{name}"), Some(v));
            }
        }
        if bad.is_none() && self.info.duty > 1.0 {
            bad = Some(format!(
                "info.duty is {}: it is a fraction of the time, at most 1",
                self.info.duty
            ));
        }
        bad.map_or(Ok(()), |b| Err(crate::base::error::Error::usage(b)))
    }
}

/// A drop in GB/s between two neighbouring sizes of a size sweep, and the cache level whose
/// edge it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// The curve's thread count.
    pub threads: usize,
    /// The sizes measured either side of the drop (the sweep's kind: per thread, or split).
    pub below: ArraySize,
    pub above: ArraySize,
    /// Medians of up to three sizes before and after the drop, GB/s.
    pub before_gbs: f64,
    pub after_gbs: f64,
    /// 1 − after ÷ before, a fraction.
    pub drop: f64,
    /// The drop the curve's cliffs had to exceed, a fraction (0.2, more on a noisy curve).
    pub threshold: f64,
    /// The cache level whose edge is nearest (1 is L1d), and its capacity the curve's threads
    /// reach, bytes; null when no edge is within two octaves.
    pub cache_level: Option<u8>,
    pub cache_bytes: Option<u64>,
    /// Where three arrays fill that level, in the sweep's kind; null with `cache_level`.
    pub edge: Option<ArraySize>,
    /// The drop is before the sweep's last size: one size past it, so a wider range confirms.
    pub at_end: bool,
    /// In words: `L2 edge between 128 KiB and 181 KiB per thread`.
    pub text: String,
}

/// A row of a table: a cell with figures, or one that could not run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableRow<'a> {
    Cell(&'a CellSnapshot),
    Failed(&'a FailedCell),
}

/// Said after the row label of the single-thread cache configuration run again last.
pub(crate) const RERUN_SUFFIX: &str = ", run again last";

/// Everything about the run that is not a cell's figures: printed above the tables.
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

impl CounterInfo {
    /// Why `name` is missing; None when it was counted or not named.
    pub fn why_missing(&self, name: &str) -> Option<&str> {
        self.missing
            .iter()
            .find(|m| m.counters.iter().any(|c| c == name))
            .map(|m| m.reason.as_str())
    }
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

/// The machine: online CPUs, cache instances and NUMA nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub model: String,
    /// Online CPUs, sorted by id.
    pub cpus: Vec<Cpu>,
    /// Every cache instance once.
    pub caches: Vec<Cache>,
    pub nodes: Vec<NumaNode>,
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
    pub source_text: String,
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

/// Thread counts × working sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub sets: Vec<WorkingSet>,
    pub threads: Vec<usize>,
}

/// A sized working set: a row of the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkingSet {
    /// `l2`, `dram`, `64 MiB`, `1 MiB/thread`.
    pub name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    /// Said beside the row when the sizing departed from the rule.
    pub note: Option<String>,
    /// An explicit size (no `level`): the level its three arrays land in, from the caches found
    /// (`report/lands.rs`); null for named levels and where no cache is known.
    #[serde(default)]
    pub lands_in: Option<Level>,
}

impl WorkingSet {
    /// Per-thread sets are cache sets.
    pub(crate) fn is_per_thread(&self) -> bool {
        matches!(self.size, ArraySize::PerThread(_))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    L1,
    L2,
    L3,
    Dram,
}

/// How big each of the three arrays is. Written as one shape, `{"kind": "per_thread",
/// "bytes": 87296}` or `{"kind": "split", "bytes": 134217728}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "SizeRepr", from = "SizeRepr")]
pub enum ArraySize {
    /// Bytes per array owned by each thread.
    PerThread(u64),
    /// Bytes per array, split across the threads.
    Split(u64),
}

/// `ArraySize` as the JSON holds it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct SizeRepr {
    kind: SizeKind,
    bytes: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SizeKind {
    PerThread,
    Split,
}

impl From<ArraySize> for SizeRepr {
    fn from(s: ArraySize) -> SizeRepr {
        match s {
            ArraySize::PerThread(bytes) => SizeRepr {
                kind: SizeKind::PerThread,
                bytes,
            },
            ArraySize::Split(bytes) => SizeRepr {
                kind: SizeKind::Split,
                bytes,
            },
        }
    }
}

impl From<SizeRepr> for ArraySize {
    fn from(r: SizeRepr) -> ArraySize {
        match r.kind {
            SizeKind::PerThread => ArraySize::PerThread(r.bytes),
            SizeKind::Split => ArraySize::Split(r.bytes),
        }
    }
}

/// One row of the per-cell table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSnapshot {
    /// The row label: the set's label, with `, run again last` on the rerun row.
    pub label: String,
    /// Index of the working set in `grid.sets`.
    pub set: usize,
    /// The set's label, e.g. `85 KiB/thread (l2)`, `128 MiB (dram)`.
    pub set_label: String,
    /// The set's name, e.g. `l2`, `dram`, `64 MiB`.
    pub set_name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    pub threads: usize,
    pub rerun: bool,
    pub figures: Figures,
    /// The timed rounds the figures are computed over, oldest first.
    pub history: Vec<Round>,
    /// The last checksum (a failure stays); None before the configuration ended once.
    pub checksum: Option<CheckResult>,
    pub checksum_failures: u64,
    /// CPUs the cell's threads ran on (-1 where unknown), sorted.
    pub cpus: Vec<i32>,
    /// Thread-rounds whose start and end CPU differed.
    pub migrations: u64,
    /// Bytes of the three arrays, and how many of them sat on huge pages (null: unknown,
    /// /proc/self/smaps could not be read).
    pub array_bytes: u64,
    #[serde(default)]
    pub huge_bytes: Option<u64>,
    /// The loop and page layout the cell ran with, and how they were chosen (the same for
    /// every cell of a working set). Absent in files from before the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<CellChoice>,
    /// Where a sample of its pages sat once in place for its threads (move_pages in query
    /// mode); null where that cannot be asked (macOS) and in files written before it existed.
    #[serde(default)]
    pub pages: Option<Pages>,
    /// The cell's threads per NUMA node and per core type, on machines with more than one of
    /// either; empty elsewhere.
    #[serde(default)]
    pub groups: Vec<ThreadGroup>,
}

/// A sample of a cell's pages, by NUMA node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pages {
    /// Pages asked about: a sample of each partition of each array.
    pub sampled: u64,
    /// Pages whose partition was meant for a node (its thread's, or the bound one), and how
    /// many of them sat on it.
    pub meant: u64,
    pub on_meant: u64,
    /// Pages on each node, by node id.
    pub by_node: BTreeMap<usize, u64>,
    /// Pages on no node (not present).
    pub absent: u64,
}

impl Pages {
    /// The share of pages on the node meant for them; None when no node was meant.
    pub fn share_on_meant(&self) -> Option<f64> {
        (self.meant > 0).then(|| self.on_meant as f64 / self.meant as f64)
    }
}

/// The NUMA bandwidth matrix (`--matrix`): every CPU node × memory node pair, all cores of the
/// CPU node streaming a dram-sized set bound to the memory node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// Threads of each pair (the cores of a CPU node).
    pub threads: usize,
    pub cpu_nodes: Vec<usize>,
    pub mem_nodes: Vec<usize>,
    /// Every pair, CPU node by CPU node, memory node by memory node.
    pub cells: Vec<MatrixCell>,
    /// What a reader should know (a one-node machine, nodes of different sizes).
    pub note: Option<String>,
}

/// One pair of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    pub cpu_node: usize,
    pub mem_node: usize,
    /// Index of the pair's working set in `grid.sets` (its cell has every figure).
    pub set: usize,
    /// The pair's median GB/s; absent until measured.
    pub median_gbs: Option<f64>,
}

impl Matrix {
    /// The pair of these nodes.
    pub fn cell(&self, cpu_node: usize, mem_node: usize) -> Option<&MatrixCell> {
        self.cells
            .iter()
            .find(|c| c.cpu_node == cpu_node && c.mem_node == mem_node)
    }
}

/// A cell's threads on one NUMA node or of one core type, over its rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadGroup {
    /// One shape, `{"kind": "node", "node": 0, "core_type": null}` or `{"kind": "core_type",
    /// "node": null, "core_type": "performance"}`.
    pub group: GroupKey,
    /// The most threads it had in one round.
    pub threads: usize,
    /// Median over rounds of the sum of its threads' own rates, GB/s.
    pub gbs: f64,
    /// Median over its thread-rounds of one thread's rate, GB/s.
    pub per_thread_gbs: f64,
}

/// What a group of threads shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "GroupRepr", try_from = "GroupRepr")]
pub enum GroupKey {
    Node(usize),
    CoreType(CoreKind),
}

/// `GroupKey` as the JSON holds it: the kind, and the one of its two fields that kind names.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct GroupRepr {
    kind: GroupKind,
    node: Option<usize>,
    core_type: Option<CoreKind>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum GroupKind {
    Node,
    CoreType,
}

impl From<GroupKey> for GroupRepr {
    fn from(k: GroupKey) -> GroupRepr {
        match k {
            GroupKey::Node(n) => GroupRepr {
                kind: GroupKind::Node,
                node: Some(n),
                core_type: None,
            },
            GroupKey::CoreType(c) => GroupRepr {
                kind: GroupKind::CoreType,
                node: None,
                core_type: Some(c),
            },
        }
    }
}

impl TryFrom<GroupRepr> for GroupKey {
    type Error = crate::base::error::Error;

    fn try_from(r: GroupRepr) -> crate::base::error::Result<GroupKey> {
        match (r.kind, r.node, r.core_type) {
            (GroupKind::Node, Some(n), _) => Ok(GroupKey::Node(n)),
            (GroupKind::CoreType, _, Some(c)) => Ok(GroupKey::CoreType(c)),
            (GroupKind::Node, None, _) => Err(crate::base::error::Error::usage(
                "a group of kind `node` without its `node`",
            )),
            (GroupKind::CoreType, _, None) => Err(crate::base::error::Error::usage(
                "a group of kind `core_type` without its `core_type`",
            )),
        }
    }
}

impl GroupKey {
    /// `node 0`, `P-cores`, `E-cores`.
    pub fn name(self) -> String {
        match self {
            GroupKey::Node(n) => format!("node {n}"),
            GroupKey::CoreType(CoreKind::Performance) => "P-cores".into(),
            GroupKey::CoreType(CoreKind::Efficiency) => "E-cores".into(),
            GroupKey::CoreType(CoreKind::Uniform) => "cores".into(),
        }
    }
}

impl CellSnapshot {
    /// The rates of its timed rounds, oldest first (what a comparison tests).
    pub fn rates(&self) -> Vec<f64> {
        self.history.iter().map(|r| r.gbs).collect()
    }
}

/// A cell of the grid that could not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedCell {
    /// The row label, as `CellSnapshot::label`.
    pub label: String,
    /// Index of the working set in `grid.sets`.
    pub set: usize,
    pub set_label: String,
    pub threads: usize,
    pub rerun: bool,
    pub reason: String,
}

/// `--kernel` and `--huge-pages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// `auto`, an instruction set (`avx2`: its default loops) or a loop's name.
    pub kernel: String,
    /// `auto`, `on` or `off`.
    pub huge_pages: String,
}

/// A working set's loop and page layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellChoice {
    /// The loop's name in the kernel table, e.g. `avx2 ymm mul+add`.
    pub variant: String,
    /// Whether the arrays were advised onto huge pages (how many bytes got them: `huge_bytes`).
    pub huge_pages: bool,
    /// How the loop was settled, and how the layout was.
    pub kernel_by: ChoiceBy,
    pub layout_by: ChoiceBy,
    /// After a trial: the best other candidate and the kept one's rate over its rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<RunnerUp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<Trial>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChoiceBy {
    /// Timed against the alternatives.
    Trial,
    /// Huge pages for arrays in memory; the default when a trial had no room.
    Rule,
    /// Given on the command line.
    Pinned,
    /// Nothing else to choose.
    Only,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunnerUp {
    pub variant: String,
    pub huge_pages: bool,
    /// The kept candidate's trial rate over this one's (medians, paired round by round).
    pub ratio: f64,
}

/// The trial a choice came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Thread counts it timed.
    pub threads: Vec<usize>,
    /// Loops × layouts timed.
    pub candidates: usize,
    /// Timed rounds per candidate and thread count.
    pub rounds: u32,
    /// How long it took, mapping its arrays included.
    pub seconds: f64,
    /// The lead over the default loop and layout that a candidate needed to be kept.
    pub margin: f64,
}

/// A cell's figures. Every rate is a finite number (the builder makes sure of it), so the JSON
/// always reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub median_gbs: f64,
    pub best_gbs: f64,
    /// Coefficient of variation of the round rates, a fraction (0.048, shown as 4.8 %).
    pub cv: f64,
    /// Medians over rounds of each round's fastest and slowest thread.
    pub fastest_thread_gbs: f64,
    pub slowest_thread_gbs: f64,
    pub late_rounds: u32,
    pub rounds: u32,
    /// Median against the single-thread cell of the same working set.
    pub scaling: Option<f64>,
    /// The median as a fraction of the vendor figure (0.827, shown as 82.7 %).
    pub vendor_fraction: Option<f64>,
    /// Bytes per cycle per thread, its cycles from where `bytes_per_cycle_from` says.
    pub bytes_per_cycle: Option<f64>,
    pub checksum_ok: Option<bool>,
    /// Rounds disturbed: a worker switched out inside its span, a span far above the cell's
    /// median, or a thread far below its own median rate. Like late rounds, they stay in the
    /// median.
    #[serde(default)]
    pub disturbed_rounds: u32,
    /// Where bytes/cycle's cycles came from; null when there is no bytes/cycle.
    #[serde(default)]
    pub bytes_per_cycle_from: Option<CycleSource>,
    /// The 95 % confidence interval of the median, `[low, high]` GB/s, from order statistics;
    /// null under 6 rounds.
    #[serde(default)]
    pub median_ci_gbs: Option<[f64; 2]>,
    /// Medians and per-round means of the counters; null where nothing was counted.
    #[serde(default)]
    pub counters: Option<CellCounters>,
    /// Why the figure cannot be trusted, one reason each (cv, late or disturbed rounds, steal
    /// or throttling over their share, more threads than CPUs): the screen's `~` mark. Empty:
    /// nothing says so.
    #[serde(default)]
    pub noisy: Vec<String>,
}

/// Where bytes/cycle's cycles came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleSource {
    /// Counted on the workers' own threads (median over rounds of bytes ÷ Σ cycles).
    Counted,
    /// The clock estimate: GB/s ÷ GHz ÷ threads.
    ClockEstimate,
}

/// A cell's counters over its rounds, each null where it was not counted in every round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CellCounters {
    /// Median over thread-rounds of counted cycles ÷ the thread's own time.
    #[serde(default)]
    pub ghz: Option<f64>,
    /// Median over thread-rounds of instructions ÷ cycles.
    #[serde(default)]
    pub ipc: Option<f64>,
    /// Involuntary context switches of all threads, per round (mean).
    #[serde(default)]
    pub switches_per_round: Option<f64>,
    #[serde(default)]
    pub migrations_per_round: Option<f64>,
    #[serde(default)]
    pub page_faults_per_round: Option<f64>,
    /// Last-level-cache misses per KiB counted.
    #[serde(default)]
    pub llc_misses_per_kib: Option<f64>,
}

/// One timed round of a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub span_ns: u64,
    pub bytes: u64,
    pub gbs: f64,
    pub fastest_thread_gbs: f64,
    pub slowest_thread_gbs: f64,
    pub late: bool,
    /// Disturbed (see `Figures::disturbed_rounds`).
    #[serde(default)]
    pub disturbed: bool,
    /// Why the round was late or disturbed, where the counters or the cell's medians show it
    /// ("t1 switched out 2× (180 ms off CPU)"); null otherwise.
    #[serde(default)]
    pub cause: Option<String>,
    /// Involuntary context switches of all its threads; null where not counted.
    #[serde(default)]
    pub switches: Option<u64>,
    /// The host's steal and the cgroup's throttled share, fractions (0.05 is 5 % of the CPU
    /// time, of the quota's periods), over the host sample that covered the round; null where
    /// not sampled.
    #[serde(default)]
    pub steal: Option<f64>,
    #[serde(default)]
    pub throttled: Option<f64>,
}

/// The sum of `a` after a configuration against its integer reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub expected: u64,
    /// A broken kernel can leave NaN or infinity here: JSON has no such numbers, so they are
    /// written as the strings `"NaN"`, `"inf"`, `"-inf"` and read back.
    #[serde(with = "any_f64")]
    pub actual: f64,
    pub ok: bool,
}

/// A spell of contention on one cell of the live monitor: it ran more than the threshold
/// below its reference from `start` to `end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The cell: the set's label as in `CellSnapshot::set_label`, its threads and rerun flag.
    pub set_label: String,
    pub threads: usize,
    pub rerun: bool,
    /// RFC 3339 with its offset: the first slow round.
    pub start: String,
    /// RFC 3339: the first recovered round; null while it lasts.
    pub end: Option<String>,
    /// To `end`, or to when the snapshot was taken.
    pub duration_s: f64,
    /// A reset or a new reference ended it, not a recovery.
    pub cut_short: bool,
    pub reference_gbs: f64,
    /// `learned` (the first window after focus or reset), `baseline` or `pinned`.
    pub reference_source: String,
    /// Over the rounds while it lasted.
    pub mean_gbs: f64,
    pub worst_gbs: f64,
    /// Fractions below the reference: of the mean, and of the worst round.
    pub depth: f64,
    pub worst_depth: f64,
    pub rounds: u64,
    /// `measured` when resctrl measured a suspect's memory bandwidth, else `inferred`.
    pub basis: String,
    /// Most suspect first.
    pub suspects: Vec<Suspect>,
}

/// A process and the evidence against it in one episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    pub pid: u32,
    pub comm: String,
    pub user: Option<String>,
    /// Another stream-top.
    pub stream_top: bool,
    /// CPU time in cores (0.5 is half of one core, 2 two whole ones) in the calm minute
    /// before, and while contended.
    pub cpu_before_cores: f64,
    pub cpu_cores: f64,
    /// Page faults per second while contended.
    pub faults_per_s: f64,
    pub rss_growth_bytes_per_s: Option<f64>,
    pub on_our_cpus: bool,
    pub on_our_node: bool,
    /// Memory bandwidth resctrl measured for its group, bytes/s, and the group.
    pub measured_bytes_per_s: Option<f64>,
    pub resctrl_group: Option<String>,
    /// The ranking's key (CPU rise × the weight of the other evidence).
    pub score: f64,
}

/// A line of the live monitor's event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    /// Local time of day, `HH:MM:SS`.
    pub time: String,
    /// `info`, `late`, `contention`, `checksum`, `export` or `error`.
    pub kind: String,
    pub text: String,
    /// How many times in a row (late rounds fold).
    pub count: u32,
}

/// One row of the derived table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DerivedRow {
    /// Names the sets and thread counts, as the seed does.
    pub name: String,
    pub value: f64,
    pub unit: Unit,
}

/// What a derived value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Printed with 2 decimals.
    #[serde(rename = "ratio")]
    Ratio,
    /// A fraction of the vendor figure: 0.827 in the JSON, printed as a percentage (82.7 %).
    #[serde(rename = "fraction")]
    Fraction,
    /// Decimal GB/s, printed with 1 decimal.
    #[serde(rename = "GB/s")]
    Gbs,
}

impl Unit {
    /// The derived table's unit column (the Markdown's word, not the JSON's).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ratio => "ratio",
            Unit::Fraction => "percent",
            Unit::Gbs => "GB/s",
        }
    }

    /// The value as the derived table prints it: a fraction as a percentage, as every
    /// fraction is in Markdown and on the screen.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Ratio => format!("{value:.2}"),
            Unit::Fraction => format!("{:.1} %", value * 100.0),
            Unit::Gbs => format!("{value:.1}"),
        }
    }
}

/// Serde for an f64 that may not be finite (JSON would write `null` and fail to read it back).
mod any_f64 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Num(f64),
        Text(String),
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Num(v) => Ok(v),
            Repr::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                _ => Err(D::Error::custom(format!(
                    "expected a number, NaN, inf or -inf, found {t:?}"
                ))),
            },
        }
    }
}
