//! The grid (thread counts × working sets), how each working set is sized and split, and the
//! schedule the engine follows over it.

use super::kernel::{Kernel, Residence, Variant};
use super::sweep::{DEFAULT_POINTS_PER_OCTAVE, SizeRange};
use crate::base::error::{Error, Result};
use crate::base::units::{format_bytes, parse_size, spelled_size};
use crate::machine::cgroup::MemoryRoom;
use crate::machine::topology::{PinPolicy, Topology};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

/// Elements per partition boundary: partitions are cut on 128-byte boundaries.
pub(crate) const ALIGN_ELEMS: usize = 128 / 8;

/// Arrays for `dram` are at least this many times all last-level cache (STREAM's rule).
pub(crate) const DRAM_LLC_FACTOR: u64 = 4;

/// Where the last-level cache is not listed (Apple Silicon's system-level cache), `dram`
/// arrays are also at least this large: the seed's 512 MiB per array, 14 × all L2 of an M4
/// Pro and many times any system-level cache Apple has shipped.
pub const DRAM_HIDDEN_LLC_FLOOR: u64 = 512 << 20;

/// A named working-set level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    L1,
    L2,
    L3,
    Dram,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::L3 => "l3",
            Level::Dram => "dram",
        }
    }

    /// The cache level number, for cache levels.
    pub(crate) fn cache_level(self) -> Option<u8> {
        match self {
            Level::L1 => Some(1),
            Level::L2 => Some(2),
            Level::L3 => Some(3),
            Level::Dram => None,
        }
    }
}

/// A working set as the user wrote it. An explicit size keeps the user's spelling (`64 MB`,
/// `1.5 GiB`): its label says what was asked for, not a conversion of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetSpec {
    Level(Level),
    /// Bytes per array, split across the threads.
    Split {
        bytes: u64,
        text: String,
    },
    /// Bytes per array, per thread.
    PerThread {
        bytes: u64,
        text: String,
    },
    /// A size sweep, `SIZE..SIZE` or `SIZE/thread..SIZE/thread`: a row per size.
    Range(SizeRange),
}

impl SetSpec {
    /// Parses `l1`, `l2`, `l3`, `dram`, `SIZE`, `SIZE/thread` or a range of sizes at the
    /// default points per octave.
    pub fn parse(text: &str) -> Result<SetSpec> {
        SetSpec::parse_with(text, DEFAULT_POINTS_PER_OCTAVE)
    }

    /// As `parse`, with a range measured at `per_octave` sizes per doubling.
    pub fn parse_with(text: &str, per_octave: u32) -> Result<SetSpec> {
        let t = text.trim();
        if SizeRange::is_range(t) {
            let line = (ALIGN_ELEMS * 8) as u64;
            return SizeRange::parse(t, per_octave, line).map(SetSpec::Range);
        }
        match t.to_ascii_lowercase().as_str() {
            "l1" => return Ok(SetSpec::Level(Level::L1)),
            "l2" => return Ok(SetSpec::Level(Level::L2)),
            "l3" | "llc" => return Ok(SetSpec::Level(Level::L3)),
            "dram" | "mem" => return Ok(SetSpec::Level(Level::Dram)),
            _ => {}
        }
        if let Some(size) = t.strip_suffix("/thread").or_else(|| t.strip_suffix("/t")) {
            return Ok(SetSpec::PerThread {
                bytes: parse_size(size)?,
                text: spelled_size(size),
            });
        }
        let bytes = parse_size(t).map_err(|e| {
            Error::usage(format!(
                "{e}; a working set is l1, l2, l3, dram, SIZE or SIZE/thread"
            ))
        })?;
        Ok(SetSpec::Split {
            bytes,
            text: spelled_size(t),
        })
    }
}

/// How big each of the three arrays is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArraySize {
    /// Bytes per array owned by each thread (cache sets: each thread's slice sits in its cache).
    PerThread(u64),
    /// Bytes per array, split across the threads.
    Split(u64),
}

/// A sized working set: a row of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkingSet {
    /// `l2`, `dram`, or an explicit size as the user spelled it: `64 MB`, `1 MiB/thread`.
    pub name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    /// Said beside the row when the sizing departs from the rule (e.g. dram shrunk to fit).
    pub note: Option<String>,
}

/// Where each thread's partition lies in the arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Elements per array.
    pub len: usize,
    pub parts: Vec<Range<usize>>,
}

impl WorkingSet {
    /// A row label: `512 KiB/thread (l2)`, `128 MiB (dram)`; a set of no level is its name: an
    /// explicit size as the user spelled it (`64 MB`, `1 MiB/thread`), a matrix pair's.
    pub fn label(&self) -> String {
        let Some(level) = self.level else {
            return self.name.clone();
        };
        let size = match self.size {
            ArraySize::PerThread(b) => format!("{}/thread", format_bytes(b)),
            ArraySize::Split(b) => format_bytes(b),
        };
        format!("{size} ({})", level.name())
    }

    /// Per-thread sets are cache sets: scaling is about the cores, not the memory.
    pub(crate) fn is_per_thread(&self) -> bool {
        matches!(self.size, ArraySize::PerThread(_))
    }

    /// Where the arrays live, for the choice of loop and layout: per-thread sets in their
    /// cache, split sets in memory.
    pub(crate) fn residence(&self) -> Residence {
        if self.is_per_thread() {
            Residence::Cache
        } else {
            Residence::Memory
        }
    }

    /// How the arrays are laid out for `threads` threads: per-thread sets give thread t the
    /// t-th slice; split sets cut the arrays into near-equal parts on 128-byte boundaries.
    pub fn layout(&self, threads: usize) -> Layout {
        let threads = threads.max(1);
        match self.size {
            ArraySize::PerThread(bytes) => {
                let per = elems_for(bytes);
                Layout {
                    len: per * threads,
                    parts: (0..threads).map(|t| t * per..(t + 1) * per).collect(),
                }
            }
            ArraySize::Split(bytes) => {
                let len = elems_for(bytes);
                Layout {
                    len,
                    parts: split_aligned(len, threads),
                }
            }
        }
    }

    /// Bytes of one array for `threads` threads.
    pub fn array_bytes(&self, threads: usize) -> u64 {
        self.layout(threads).len as u64 * 8
    }
}

/// Elements for a byte size, rounded to whole 128-byte lines (at least one line).
fn elems_for(bytes: u64) -> usize {
    let elems = (bytes / 8) as usize;
    (elems / ALIGN_ELEMS).max(1) * ALIGN_ELEMS
}

/// Splits `len` elements into `parts` contiguous ranges whose boundaries fall on 128-byte
/// lines; sizes differ by at most one line (the last part takes any remainder).
pub(crate) fn split_aligned(len: usize, parts: usize) -> Vec<Range<usize>> {
    let lines = len / ALIGN_ELEMS;
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 0..parts {
        let end = if p + 1 == parts {
            len
        } else {
            (lines * (p + 1) / parts) * ALIGN_ELEMS
        };
        out.push(start..end);
        start = end;
    }
    out
}

/// A cell of the grid: a working set (index into the grid's sets) and a thread count.
/// `rerun` marks the single-thread cache configuration run again at the end of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellId {
    pub set: usize,
    pub threads: usize,
    pub rerun: bool,
}

impl CellId {
    pub fn new(set: usize, threads: usize) -> CellId {
        CellId {
            set,
            threads,
            rerun: false,
        }
    }
}

/// Thread counts × working sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub sets: Vec<WorkingSet>,
    /// Sorted, distinct, each at least 1.
    pub threads: Vec<usize>,
}

impl Grid {
    /// Every cell, set by set, thread count by thread count.
    pub fn cells(&self) -> Vec<CellId> {
        let mut out = Vec::new();
        for set in 0..self.sets.len() {
            for &t in &self.threads {
                out.push(CellId::new(set, t));
            }
        }
        out
    }

    /// The order of one headless sweep: the single-thread run on the first per-thread (cache)
    /// set first, then every cell, then that first configuration again (marked `rerun`).
    pub(crate) fn sweep_once(&self) -> Vec<CellId> {
        let first = self
            .sets
            .iter()
            .position(|s| s.is_per_thread())
            .filter(|_| self.threads.contains(&1));
        let mut order = Vec::new();
        if let Some(set) = first {
            order.push(CellId::new(set, 1));
        }
        for cell in self.cells() {
            if !order.contains(&cell) {
                order.push(cell);
            }
        }
        if let Some(set) = first {
            order.push(CellId {
                set,
                threads: 1,
                rerun: true,
            });
        }
        order
    }

    pub(crate) fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }
}

/// `--kernel`: the loops a run may use.
#[derive(Debug, Clone, Copy)]
pub enum Loops {
    /// Every loop this CPU runs for the stores, timed per working set (`--kernel auto`).
    Auto,
    /// The kernel's default loop for where the arrays live (`--kernel avx2`).
    Default,
    /// One loop of the table, for every working set (`--kernel 'avx2 xmm fma'`).
    Named(&'static Variant),
}

impl Loops {
    /// As `--kernel` takes it: `auto`, the instruction set (`avx2`), or the loop's name.
    pub fn setting(self, kernel: Kernel) -> String {
        match self {
            Loops::Auto => "auto".to_string(),
            Loops::Default => kernel.isa.name().to_string(),
            Loops::Named(v) => v.name.to_string(),
        }
    }
}

impl PartialEq for Loops {
    fn eq(&self, other: &Loops) -> bool {
        match (self, other) {
            (Loops::Auto, Loops::Auto) | (Loops::Default, Loops::Default) => true,
            (Loops::Named(a), Loops::Named(b)) => a.name == b.name,
            _ => false,
        }
    }
}

/// `--huge-pages`: the page layouts a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HugePages {
    /// Per working set: by trial for arrays in cache, on for arrays in memory.
    #[default]
    Auto,
    On,
    Off,
}

impl fmt::Display for HugePages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HugePages::Auto => "auto",
            HugePages::On => "on",
            HugePages::Off => "off",
        })
    }
}

/// How the engine walks the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Headless: each cell of `Grid::sweep_once` once, warm-up then `rounds` timed rounds.
    Once { rounds: u32 },
    /// Live: cycle over the cells, `rounds_per_visit` timed rounds per visit, until told
    /// otherwise.
    Sweep { rounds_per_visit: u32 },
}

/// Where the arrays' pages are taken from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum MemPolicy {
    /// From the node of the thread that first writes them; on NUMA, moved to their new
    /// threads' nodes when a working set is partitioned for another thread count.
    #[default]
    FirstTouch,
    /// From this node only (`--membind NODE`, a column of the matrix).
    Bind(usize),
    /// Round-robin across these nodes (`--interleave`).
    Interleave(Vec<usize>),
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemPolicy::FirstTouch => f.write_str("first touch"),
            MemPolicy::Bind(n) => write!(f, "bound to node {n}"),
            MemPolicy::Interleave(nodes) => {
                let list: Vec<String> = nodes.iter().map(usize::to_string).collect();
                let noun = if nodes.len() == 1 { "node" } else { "nodes" };
                write!(f, "interleaved across {noun} {}", list.join(","))
            }
        }
    }
}

/// One cell of the NUMA matrix: all cores of a CPU node streaming arrays bound to a memory
/// node. As a plan's working set, its threads run on `cpus` and its pages come from `mem_node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixPair {
    pub cpu_node: usize,
    pub mem_node: usize,
    /// One CPU of each core of the CPU node, in pinning order.
    pub cpus: Vec<usize>,
}

/// The NUMA side of a plan: where pages go, which node each CPU belongs to, and (for
/// `--matrix`) each working set's own CPUs and memory node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Numa {
    pub policy: MemPolicy,
    /// CPU id → NUMA node (empty: not known; then nothing is moved and no node is meant).
    pub node_of_cpu: BTreeMap<usize, usize>,
    /// `--matrix`: the pair each working set measures, by set index (empty otherwise).
    pub matrix: Vec<MatrixPair>,
}

impl Numa {
    /// Nodes with CPUs: with fewer than two, a page can be on no other node than its
    /// thread's, and nothing is ever moved.
    pub(crate) fn cpu_nodes(&self) -> usize {
        let mut nodes: Vec<usize> = self.node_of_cpu.values().copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes.len()
    }
}

/// Everything the engine needs to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub grid: Grid,
    /// The instruction set and stores (with `Loops::Auto`, the widest the CPU has: the loops
    /// timed are every one it runs for these stores).
    pub kernel: Kernel,
    /// Which loops the cells may run: each working set's fastest by trial, or one pinned.
    pub loops: Loops,
    pub pin: PinPolicy,
    /// CPUs in pinning order; worker i runs on `cpu_order[i % len]` unless `pin` is `None`.
    pub cpu_order: Vec<usize>,
    /// A round lasts at least this long (a DRAM round is at least one whole pass).
    pub round_ms: u32,
    pub schedule: Schedule,
    /// Percentage of the time rounds run (1..=100).
    pub duty: u8,
    /// Transparent huge pages for the arrays: advised (MADV_HUGEPAGE), refused
    /// (MADV_NOHUGEPAGE), or chosen per working set.
    pub huge_pages: HugePages,
    /// The most the arrays of all kept cells may hold at once, bytes ([`MemoryBudget`]).
    pub memory_budget: u64,
    /// Each worker counts its rounds (`machine::counters`); `--counters off` turns it off.
    pub counters: bool,
    /// Where pages go and which node each CPU is on.
    pub numa: Numa,
}

impl Plan {
    /// Checks what the engine relies on: a non-empty grid, thread counts of at least one, a
    /// CPU order to pin to, a round length and a duty cycle in range.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.grid.sets.is_empty() {
            return Err(Error::engine("the grid has no working sets"));
        }
        if self.grid.threads.is_empty() || self.grid.threads.contains(&0) {
            return Err(Error::engine("thread counts must be at least 1"));
        }
        if self.cpu_order.is_empty() {
            return Err(Error::engine("no CPUs to run on"));
        }
        if self.round_ms == 0 {
            return Err(Error::engine("a round must last at least 1 ms"));
        }
        if !(1..=100).contains(&self.duty) {
            return Err(Error::engine(
                "the duty cycle is a percentage from 1 to 100",
            ));
        }
        let matrix = &self.numa.matrix;
        if !matrix.is_empty()
            && (matrix.len() != self.grid.sets.len() || matrix.iter().any(|p| p.cpus.is_empty()))
        {
            return Err(Error::engine(
                "the matrix needs one pair with CPUs per working set",
            ));
        }
        Ok(())
    }

    /// The CPU worker `i` is pinned to, if any.
    pub(crate) fn cpu_for(&self, i: usize) -> Option<usize> {
        (self.pin != PinPolicy::None).then(|| self.cpu_order[i % self.cpu_order.len()])
    }

    /// The CPU worker `i` runs on for working set `set`: its matrix pair's CPUs, or the plan's.
    pub(crate) fn cpu_for_set(&self, set: usize, i: usize) -> Option<usize> {
        match self.numa.matrix.get(set) {
            Some(pair) if self.pin != PinPolicy::None => Some(pair.cpus[i % pair.cpus.len()]),
            _ => self.cpu_for(i),
        }
    }

    /// Where working set `set`'s pages come from: its matrix pair's memory node (where there
    /// is more than one node to choose from), or the plan's policy.
    pub(crate) fn policy_for(&self, set: usize) -> MemPolicy {
        match self.numa.matrix.get(set) {
            Some(pair) if self.numa.cpu_nodes() > 1 || pair.mem_node != pair.cpu_node => {
                MemPolicy::Bind(pair.mem_node)
            }
            Some(_) => MemPolicy::FirstTouch,
            None => self.numa.policy.clone(),
        }
    }

    /// The node worker `i`'s CPU is on for set `set`, where it is pinned and the node known.
    pub(crate) fn node_for(&self, set: usize, i: usize) -> Option<usize> {
        let cpu = self.cpu_for_set(set, i)?;
        self.numa.node_of_cpu.get(&cpu).copied()
    }

    /// The node worker `i`'s partition of set `set` is meant to sit on: its thread's under
    /// first touch, the bound node under a binding; none when interleaved.
    pub(crate) fn intended_node(&self, set: usize, i: usize) -> Option<usize> {
        match self.policy_for(set) {
            MemPolicy::FirstTouch => self.node_for(set, i),
            MemPolicy::Bind(n) => Some(n),
            MemPolicy::Interleave(_) => None,
        }
    }
}

/// Memory kept free when sizing: explicit sets larger than MemAvailable minus this are refused.
pub(crate) fn memory_margin(mem_available: u64) -> u64 {
    (mem_available / 8).max(512 << 20)
}

/// Memory kept free under a cgroup's limit: the process's own heap, stacks and page tables
/// are charged to the group too, and going over the limit means the OOM killer.
pub fn cgroup_margin(room: u64) -> u64 {
    (room / 8).max(32 << 20)
}

/// The most the arrays may hold at once, and what sets it: MemAvailable less its margin, or,
/// in a cgroup whose limit leaves less, that room less its margin. Computed once, before
/// anything is allocated; the live monitor's kept arrays obey it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    pub bytes: u64,
    pub mem_available: u64,
    /// The cgroup's limit and usage when it, not the host, sets the budget.
    pub cgroup: Option<MemoryRoom>,
}

impl MemoryBudget {
    /// The least of MemAvailable's budget and the cgroup room's (when there is a limit).
    pub fn new(mem_available: u64, cgroup: Option<MemoryRoom>) -> MemoryBudget {
        let host = mem_available.saturating_sub(memory_margin(mem_available));
        let cg = cgroup.map(|m| m.room().saturating_sub(cgroup_margin(m.room())));
        match cg {
            Some(b) if b < host => MemoryBudget {
                bytes: b,
                mem_available,
                cgroup,
            },
            _ => MemoryBudget {
                bytes: host,
                mem_available,
                cgroup: None,
            },
        }
    }

    /// Where the budget comes from, e.g. "MemAvailable 23 GiB less a 2.9 GiB margin" or
    /// "the container's memory limit 400 MiB, 10 MiB in use, less a 49 MiB margin".
    pub fn source(&self) -> String {
        match self.cgroup {
            Some(m) => format!(
                "the container's memory limit {}, {} in use, less a {} margin",
                format_bytes(m.limit),
                format_bytes(m.usage),
                format_bytes(cgroup_margin(m.room()))
            ),
            None => format!(
                "MemAvailable {} less a {} margin",
                format_bytes(self.mem_available),
                format_bytes(memory_margin(self.mem_available))
            ),
        }
    }
}

/// Sizes working sets from the machine's caches and memory.
///
/// A cache level gives each thread a slice per array such that its three slices fill half of
/// its share of that cache (and more than the level below holds). `dram` splits arrays of
/// 4 × all last-level cache, shrunk (with a note) when the memory budget does not allow it.
/// Explicit sets larger than the budget allows at `max_threads` are refused, and a range whose
/// largest size is (before any of its sizes is measured). A range gives a set per size.
pub fn size_sets(
    specs: &[SetSpec],
    topo: &Topology,
    memory: &MemoryBudget,
    max_threads: usize,
) -> Result<Vec<WorkingSet>> {
    let mut out: Vec<WorkingSet> = Vec::new();
    let mut add = |set: WorkingSet| {
        if !out.iter().any(|s| s.size == set.size) {
            out.push(set);
        }
    };
    for spec in specs {
        let set = match *spec {
            SetSpec::Level(Level::Dram) => dram_set(topo, memory),
            SetSpec::Level(level) => cache_set(level, topo)?,
            SetSpec::Split { bytes, ref text } => explicit_set(text, false, bytes),
            SetSpec::PerThread { bytes, ref text } => explicit_set(text, true, bytes),
            SetSpec::Range(ref range) => {
                let top = range.largest();
                let top = explicit_set(&top.label, range.per_thread, top.bytes);
                if let Some(why) = shortfall(&top, memory, max_threads) {
                    return Err(Error::usage(format!(
                        "--sets {}: its largest size, {}, {why}",
                        range.text, top.name
                    )));
                }
                for p in &range.points {
                    add(explicit_set(&p.label, range.per_thread, p.bytes));
                }
                continue;
            }
        };
        if let Some(why) = shortfall(&set, memory, max_threads) {
            return Err(Error::usage(format!("--sets {}: {why}", set.name)));
        }
        add(set);
    }
    Ok(out)
}

/// A set of an explicit size, named as the user wrote it (`64 MB`, `1 MiB/thread`).
fn explicit_set(text: &str, per_thread: bool, bytes: u64) -> WorkingSet {
    let (name, size) = if per_thread {
        (format!("{text}/thread"), ArraySize::PerThread(bytes))
    } else {
        (text.to_string(), ArraySize::Split(bytes))
    };
    WorkingSet {
        name,
        level: None,
        size,
        note: None,
    }
}

/// Why three arrays of `set` do not fit the budget at `max_threads` ("needs 192 GiB for three
/// arrays at 2 threads, but only … is available (…)"); None when they fit.
fn shortfall(set: &WorkingSet, memory: &MemoryBudget, max_threads: usize) -> Option<String> {
    let need = 3 * set.array_bytes(max_threads);
    (need > memory.bytes).then(|| {
        format!(
            "needs {} for three arrays at {}, but only {} is available ({})",
            format_bytes(need),
            crate::base::units::threads_phrase(max_threads),
            format_bytes(memory.bytes),
            memory.source(),
        )
    })
}

fn cache_set(level: Level, topo: &Topology) -> Result<WorkingSet> {
    let n = level.cache_level().expect("cache level");
    let last = topo.last_level().unwrap_or(0);
    // `l3` means the last level, whatever its number.
    let n = if level == Level::L3 && last > 0 && last != 3 {
        last
    } else {
        n
    };
    let share = topo.cache_share_per_cpu(n).ok_or_else(|| {
        Error::usage(format!(
            "--sets {}: this machine has no level-{n} data cache",
            level.name()
        ))
    })?;
    // Three slices fill half the share; round down to whole lines.
    let per_array = (share / 2 / 3 / 128).max(1) * 128;
    let below = if n > 1 {
        topo.cache_share_per_cpu(n - 1).unwrap_or(0)
    } else {
        0
    };
    let note = (3 * per_array <= below).then(|| {
        format!(
            "three slices of {} fit the level below ({} per CPU)",
            format_bytes(per_array),
            format_bytes(below)
        )
    });
    Ok(WorkingSet {
        name: level.name().to_string(),
        level: Some(level),
        size: ArraySize::PerThread(per_array),
        note,
    })
}

/// The `dram` arrays: 4 × all last-level cache (at least 8 MiB of it); where the last level
/// is not listed, 4 × the highest level listed and at least [`DRAM_HIDDEN_LLC_FLOOR`]; shrunk
/// to what memory allows, with a note.
fn dram_set(topo: &Topology, memory: &MemoryBudget) -> WorkingSet {
    let listed = topo.last_level();
    let llc = listed
        .map(|l| topo.cache_total(l))
        .unwrap_or(0)
        .max(8 << 20);
    let (rule, why) = if topo.llc_hidden {
        let level = listed.map_or("cache".to_string(), |l| format!("L{l}"));
        (
            (DRAM_LLC_FACTOR * llc).max(DRAM_HIDDEN_LLC_FLOOR),
            format!(
                "4 × {} of {level}, at least {}: the system-level cache is not listed",
                format_bytes(llc),
                format_bytes(DRAM_HIDDEN_LLC_FLOOR)
            ),
        )
    } else {
        (
            DRAM_LLC_FACTOR * llc,
            format!("4 × {} of last-level cache", format_bytes(llc)),
        )
    };
    let fits = memory.bytes / 3 / (2 << 20) * (2 << 20);
    let limit = if memory.cgroup.is_some() {
        "the container's memory limit"
    } else {
        "memory"
    };
    let (bytes, note) = if rule <= fits {
        (rule, None)
    } else {
        (
            fits.max(2 << 20),
            Some(format!(
                "below STREAM's rule: arrays should be {} ({why}), {limit} allows {}",
                format_bytes(rule),
                format_bytes(fits)
            )),
        )
    };
    WorkingSet {
        name: "dram".into(),
        level: Some(Level::Dram),
        size: ArraySize::Split(bytes),
        note,
    }
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let threads = crate::base::units::threads_phrase(self.threads);
        write!(f, "set {} × {threads}", self.set)?;
        if self.rerun {
            f.write_str(" (run again last)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_set_specs() {
        assert_eq!(SetSpec::parse("l2").unwrap(), SetSpec::Level(Level::L2));
        assert_eq!(SetSpec::parse("DRAM").unwrap(), SetSpec::Level(Level::Dram));
        let split = |bytes, text: &str| SetSpec::Split {
            bytes,
            text: text.into(),
        };
        assert_eq!(SetSpec::parse("64MiB").unwrap(), split(64 << 20, "64 MiB"));
        // The user's unit stays: 64MB is 64 MB, not the 61 MiB it comes to.
        assert_eq!(
            SetSpec::parse(" 64mb ").unwrap(),
            split(64_000_000, "64 MB")
        );
        assert_eq!(
            SetSpec::parse("1MiB/thread").unwrap(),
            SetSpec::PerThread {
                bytes: 1 << 20,
                text: "1 MiB".into()
            }
        );
        assert!(SetSpec::parse("l7").is_err());
        assert!(SetSpec::parse("0/thread").is_err());
    }

    #[test]
    fn split_is_aligned_and_covers_everything() {
        for (len, parts) in [(1600, 3), (16, 1), (1024 * 1024, 7), (160, 10)] {
            let r = split_aligned(len, parts);
            assert_eq!(r.len(), parts);
            assert_eq!(r[0].start, 0);
            assert_eq!(r.last().unwrap().end, len);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[1].start % ALIGN_ELEMS, 0);
            }
            let sizes: Vec<usize> = r.iter().map(|p| p.len()).collect();
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= ALIGN_ELEMS, "{sizes:?}");
        }
    }

    #[test]
    fn per_thread_layout_gives_each_thread_its_slice() {
        let ws = WorkingSet {
            name: "x".into(),
            level: None,
            size: ArraySize::PerThread(4096),
            note: None,
        };
        let l = ws.layout(3);
        assert_eq!(l.len, 3 * 512);
        assert_eq!(l.parts, vec![0..512, 512..1024, 1024..1536]);
        assert_eq!(ws.array_bytes(3), 3 * 4096);
    }

    #[test]
    fn sweep_once_runs_single_thread_cache_first_and_last() {
        let grid = Grid {
            sets: vec![
                WorkingSet {
                    name: "l2".into(),
                    level: Some(Level::L2),
                    size: ArraySize::PerThread(1 << 16),
                    note: None,
                },
                WorkingSet {
                    name: "dram".into(),
                    level: Some(Level::Dram),
                    size: ArraySize::Split(1 << 24),
                    note: None,
                },
            ],
            threads: vec![1, 2],
        };
        let order = grid.sweep_once();
        assert_eq!(order.len(), 5);
        assert_eq!(order[0], CellId::new(0, 1));
        assert_eq!(order[1], CellId::new(0, 2));
        assert_eq!(order[2], CellId::new(1, 1));
        assert!(order[4].rerun && order[4].set == 0 && order[4].threads == 1);
    }
}

#[cfg(test)]
mod sizing_tests {
    use super::*;
    use std::path::Path;

    fn host(mem_available: u64) -> MemoryBudget {
        MemoryBudget::new(mem_available, None)
    }

    fn topo(name: &str) -> Topology {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        Topology::read(&root).unwrap()
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn cache_levels_fill_half_of_each_threads_share() {
        let t = topo("vm-2core");
        let sets = size_sets(
            &[
                SetSpec::Level(Level::L1),
                SetSpec::Level(Level::L2),
                SetSpec::Level(Level::L3),
            ],
            &t,
            &host(20 * GIB),
            2,
        )
        .unwrap();
        // 32 KiB L1d: three slices of 5376 B = 15.75 KiB, half of it.
        assert_eq!(sets[0].size, ArraySize::PerThread(5376));
        // 512 KiB L2: 85.25 KiB per array.
        assert_eq!(sets[1].size, ArraySize::PerThread(87296));
        // 32 MiB L3 shared by 2 CPUs: 16 MiB share, 8 MiB for the three slices.
        assert_eq!(sets[2].size, ArraySize::PerThread(2796160));
        assert!(sets.iter().all(|s| s.note.is_none()));
        assert_eq!(sets[1].label(), "85.2 KiB/thread (l2)");
    }

    #[test]
    fn dram_is_four_times_all_last_level_cache() {
        let t = topo("vm-2core");
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &host(20 * GIB), 2).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(128 << 20));
        let server = topo("server-2s");
        let llc = server.cache_total(server.last_level().unwrap());
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &server, &host(64 * GIB), 64).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(4 * llc));
    }

    #[test]
    fn dram_shrinks_to_memory_and_says_so() {
        let t = topo("server-2s");
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &host(GIB), 4).unwrap();
        let ArraySize::Split(bytes) = sets[0].size else {
            panic!()
        };
        assert!(3 * bytes <= GIB - memory_margin(GIB));
        assert!(
            sets[0]
                .note
                .as_ref()
                .unwrap()
                .contains("below STREAM's rule")
        );
    }

    #[test]
    fn explicit_sets_larger_than_memory_are_refused_with_sizes() {
        let t = topo("vm-2core");
        let spec = |text: &str| SetSpec::parse(text).unwrap();
        let err = size_sets(&[spec("8GiB")], &t, &host(16 * GIB), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("24 GiB") && err.contains("available"), "{err}");
        let err = size_sets(&[spec("1GiB/thread")], &t, &host(4 * GIB), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("6 GiB"), "{err}");
        assert!(size_sets(&[spec("1GiB/thread")], &t, &host(16 * GIB), 2).is_ok());
    }

    #[test]
    fn a_cgroup_limit_below_memavailable_sets_the_budget() {
        let room = |limit: u64, usage: u64| Some(MemoryRoom { limit, usage });
        // 400 MiB limit, 10 MiB in use: 390 MiB room less its eighth.
        let b = MemoryBudget::new(20 * GIB, room(400 << 20, 10 << 20));
        assert_eq!(b.bytes, (390 << 20) - (390 << 20) / 8);
        assert_eq!(
            b.source(),
            "the container's memory limit 400 MiB, 10 MiB in use, less a 48.8 MiB margin"
        );
        // A limit above what the host has left changes nothing.
        let b = MemoryBudget::new(GIB, room(64 * GIB, 0));
        assert_eq!((b.bytes, b.cgroup), (GIB - memory_margin(GIB), None));
        assert!(b.source().starts_with("MemAvailable 1 GiB"));
    }

    #[test]
    fn dram_shrinks_to_the_container_and_explicit_sets_are_refused_naming_it() {
        let t = topo("vm-2core");
        let budget = MemoryBudget::new(
            20 * GIB,
            Some(MemoryRoom {
                limit: 400 << 20,
                usage: 10 << 20,
            }),
        );
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &budget, 2).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(112 << 20));
        let note = sets[0].note.as_deref().unwrap();
        assert!(
            note.contains("container's memory limit allows 112 MiB"),
            "{note}"
        );
        let err = size_sets(&[SetSpec::parse("1GiB").unwrap()], &t, &budget, 2)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--sets 1 GiB") && err.contains("memory limit 400 MiB"),
            "{err}"
        );
    }

    #[test]
    fn a_range_gives_a_set_per_size_and_is_refused_by_its_largest() {
        let t = topo("vm-2core");
        let specs = [
            SetSpec::Level(Level::L1),
            SetSpec::parse("16KiB..256KiB").unwrap(),
        ];
        let sets = size_sets(&specs, &t, &host(20 * GIB), 2).unwrap();
        let names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "l1", "16 KiB", "22.6 KiB", "32 KiB", "45.2 KiB", "64 KiB", "90.5 KiB", "128 KiB",
                "181 KiB", "256 KiB"
            ]
        );
        assert_eq!(sets[2].size, ArraySize::Split(23168));
        assert!(sets[1..].iter().all(|s| s.level.is_none()));
        let per = size_sets(
            &[SetSpec::parse("4KiB/thread..16KiB/thread").unwrap()],
            &t,
            &host(20 * GIB),
            2,
        )
        .unwrap();
        assert_eq!(per[1].name, "5.62 KiB/thread");
        assert_eq!(per[1].size, ArraySize::PerThread(5760));
        let err = size_sets(
            &[SetSpec::parse("16KiB..64GiB").unwrap()],
            &t,
            &host(16 * GIB),
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("--sets 16KiB..64GiB: its largest size, 64 GiB, needs 192 GiB"),
            "{err}"
        );
    }

    #[test]
    fn a_matrix_plan_pins_each_pair_to_its_node_and_binds_its_pages() {
        use crate::engine::matrix::MatrixPlan;
        let t = topo("server-2s");
        let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
        let m = MatrixPlan::new(&t, &all);
        let dram = size_sets(
            &[SetSpec::Level(Level::Dram)],
            &t,
            &host(64 * GIB),
            m.threads,
        )
        .unwrap()
        .remove(0);
        let plan = Plan {
            grid: m.grid(&dram),
            kernel: crate::engine::kernel::Kernel::resolve(
                None,
                super::super::kernel::Stores::Normal,
            )
            .unwrap(),
            pin: PinPolicy::Spread,
            cpu_order: m.pairs[0].cpus.clone(),
            round_ms: 20,
            schedule: Schedule::Once { rounds: 1 },
            duty: 100,
            huge_pages: HugePages::On,
            loops: Loops::Default,
            memory_budget: 64 * GIB,
            counters: false,
            numa: Numa {
                policy: MemPolicy::FirstTouch,
                node_of_cpu: t.cpus.iter().map(|c| (c.id, c.node)).collect(),
                matrix: m.pairs.clone(),
            },
        };
        plan.validate().unwrap();
        // Pair 1 is CPU node 0 → memory node 1; pair 2 is CPU node 1 → memory node 0.
        assert_eq!((m.pairs[1].cpu_node, m.pairs[1].mem_node), (0, 1));
        for (set, pair) in m.pairs.iter().enumerate() {
            assert_eq!(plan.policy_for(set), MemPolicy::Bind(pair.mem_node));
            for i in 0..m.threads {
                assert_eq!(plan.node_for(set, i), Some(pair.cpu_node));
                assert_eq!(plan.intended_node(set, i), Some(pair.mem_node));
            }
        }
        // Without the matrix, first touch means each thread's own node.
        let plain = Plan {
            numa: Numa {
                matrix: Vec::new(),
                ..plan.numa.clone()
            },
            grid: Grid {
                sets: vec![dram.clone()],
                threads: vec![2],
            },
            cpu_order: t.cpu_order(PinPolicy::Spread),
            ..plan.clone()
        };
        assert_eq!(plain.policy_for(0), MemPolicy::FirstTouch);
        assert_eq!(plain.intended_node(0, 0), Some(0));
        assert_eq!(
            plain.intended_node(0, 1),
            Some(1),
            "spread alternates nodes"
        );
        let interleaved = Plan {
            numa: Numa {
                policy: MemPolicy::Interleave(vec![0, 1]),
                ..plain.numa.clone()
            },
            ..plain.clone()
        };
        assert_eq!(interleaved.intended_node(0, 0), None);
        assert_eq!(plain.numa.cpu_nodes(), 2);
        // A matrix with a pair missing is refused.
        let mut broken = plan.clone();
        broken.numa.matrix.pop();
        assert!(broken.validate().is_err());
    }

    #[test]
    fn duplicate_sets_collapse() {
        let t = topo("vm-2core");
        let sets = size_sets(
            &[SetSpec::Level(Level::L2), SetSpec::Level(Level::L2)],
            &t,
            &host(20 * GIB),
            2,
        )
        .unwrap();
        assert_eq!(sets.len(), 1);
    }
}
