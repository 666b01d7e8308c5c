//! A snapshot seen as a size sweep: its curves of median GB/s against size (one per thread
//! count) and where three arrays fill each cache level on them. The SVG draws these; `cliffs`
//! finds the drops on them and names the cache level each belongs to.

use super::model::{ArraySize, CacheKind, Snapshot, Topology};

/// Explicit sizes of one kind from which a snapshot is a size sweep.
const SIZE_SWEEP_MIN: usize = 4;

/// Which sizes a curve runs over: per-thread sets or split ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeKind {
    PerThread,
    Split,
}

impl SizeKind {
    /// A size's kind and bytes per array.
    pub fn of(size: ArraySize) -> (SizeKind, u64) {
        match size {
            ArraySize::PerThread(b) => (SizeKind::PerThread, b),
            ArraySize::Split(b) => (SizeKind::Split, b),
        }
    }
}

/// The kind a snapshot sweeps, when it has `SIZE_SWEEP_MIN` or more explicit sizes of it (the
/// kind with more of them when it has both).
pub fn size_sweep(s: &Snapshot) -> Option<SizeKind> {
    let count = |kind| {
        s.grid
            .sets
            .iter()
            .filter(|w| w.level.is_none() && SizeKind::of(w.size).0 == kind)
            .count()
    };
    [SizeKind::PerThread, SizeKind::Split]
        .into_iter()
        .map(|k| (count(k), k))
        .filter(|&(n, _)| n >= SIZE_SWEEP_MIN)
        .max_by_key(|&(n, _)| n)
        .map(|(_, k)| k)
}

/// A measured size on a curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// The set's index in `grid.sets`.
    pub(crate) set: usize,
    /// Bytes per array (per thread for a per-thread sweep).
    pub(crate) bytes: u64,
    pub(crate) gbs: f64,
}

/// Median GB/s against size at one thread count, over every set of the sweep's kind (named
/// levels of that kind too: they are sizes like any other), smallest size first.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub(crate) threads: usize,
    pub(crate) points: Vec<CurvePoint>,
    /// The CPUs its cells ran on, sorted (none known: empty).
    pub(crate) cpus: Vec<usize>,
}

/// The curves of a sweep of `kind`, fewest threads first; the rerun row is left out.
pub fn curves(s: &Snapshot, kind: SizeKind) -> Vec<Curve> {
    let bytes_of = |set: usize| {
        s.grid
            .sets
            .get(set)
            .map(|w| SizeKind::of(w.size))
            .filter(|(k, _)| *k == kind)
            .map(|(_, b)| b)
    };
    let mut threads: Vec<usize> = s
        .cells
        .iter()
        .filter(|c| !c.rerun && bytes_of(c.set).is_some())
        .map(|c| c.threads)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    threads
        .into_iter()
        .map(|t| {
            let cells = s.cells.iter().filter(|c| !c.rerun && c.threads == t);
            let mut points: Vec<CurvePoint> = cells
                .clone()
                .filter_map(|c| {
                    Some(CurvePoint {
                        set: c.set,
                        bytes: bytes_of(c.set)?,
                        gbs: c.figures.median_gbs,
                    })
                })
                .collect();
            points.sort_by_key(|p| p.bytes);
            let mut cpus: Vec<usize> = cells
                .filter(|c| bytes_of(c.set).is_some())
                .flat_map(|c| c.cpus.iter().filter_map(|&id| usize::try_from(id).ok()))
                .collect();
            cpus.sort_unstable();
            cpus.dedup();
            Curve {
                threads: t,
                points,
                cpus,
            }
        })
        .collect()
}

/// Where three arrays fill one cache level, on a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheEdge {
    /// 1 (L1d), 2, 3, ….
    pub(crate) level: u8,
    /// The level's capacity the curve's threads reach: every instance holding one of their
    /// CPUs, summed.
    pub capacity: u64,
    /// Bytes per array (per thread for a per-thread sweep) at which three arrays fill it.
    pub(crate) bytes: u64,
}

impl CacheEdge {
    /// `L1d`, `L2`, `L3`.
    pub fn name(&self) -> String {
        match self.level {
            1 => "L1d".to_string(),
            n => format!("L{n}"),
        }
    }
}

/// The cache edges of a curve of `threads` threads that ran on `cpus`, lowest level first.
/// A level's capacity is the sum of its instances (data or unified) that hold one of those
/// CPUs; where the CPUs are not known, the level's share per CPU times the threads (at most
/// all of it). A per-thread sweep fills it at capacity ÷ 3 ÷ threads per array, a split one at
/// capacity ÷ 3.
pub fn cache_edges(
    topo: &Topology,
    kind: SizeKind,
    threads: usize,
    cpus: &[usize],
) -> Vec<CacheEdge> {
    let threads = threads.max(1) as u64;
    let mut levels: Vec<u8> = topo
        .caches
        .iter()
        .filter(|c| c.kind != CacheKind::Instruction)
        .map(|c| c.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels
        .into_iter()
        .filter_map(|level| {
            let instances = topo
                .caches
                .iter()
                .filter(|c| c.level == level && c.kind != CacheKind::Instruction);
            let reached: u64 = instances
                .clone()
                .filter(|c| c.cpus.iter().any(|id| cpus.contains(id)))
                .map(|c| c.size)
                .sum();
            let capacity = if reached > 0 {
                reached
            } else {
                let total: u64 = instances.clone().map(|c| c.size).sum();
                let per_cpu = instances
                    .map(|c| c.size / c.cpus.len().max(1) as u64)
                    .min()
                    .unwrap_or(0);
                (per_cpu * threads).min(total)
            };
            let bytes = match kind {
                SizeKind::PerThread => capacity / 3 / threads,
                SizeKind::Split => capacity / 3,
            };
            (bytes > 0).then_some(CacheEdge {
                level,
                capacity,
                bytes,
            })
        })
        .collect()
}
