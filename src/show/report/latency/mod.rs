//! What the writers of a latency snapshot (`--measure latency`) share: the latency-against-size
//! curve of a size sweep, the cache edges on it and its cliffs. The Markdown page is
//! `markdown/latency.rs`, the CSV table is in `csv.rs`, the chart `svg/latency.rs`; `compare` sets two snapshots' latency
//! cells side by side. The JSON is the snapshot's own (`model/latency.rs`).
//!
//! A rise in latency between two neighbouring sizes is found by the bandwidth sweep's detector
//! (`cliffs::edge_drops`) on loads per ns, the reciprocal: a rise of r is a drop of
//! 1 − 1/(1 + r) (the 20 % floor of a drop is a 25 % rise). The cache edges are where the
//! chase's buffer fills each level the chasing CPU reaches (one buffer, not three arrays).

pub(crate) mod compare;

use super::cliffs::edge_drops;
use super::model::{LatencyCell, Snapshot};
use super::sweep::{CacheEdge, SizeKind, cache_edges, size_sweep};
use crate::base::units::format_bytes;
use std::fmt::Write;

/// A point of the latency-against-size curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LatencyPoint {
    pub(crate) bytes: u64,
    pub(crate) ns: f64,
    pub(crate) small_pages_ns: Option<f64>,
}

impl LatencyPoint {
    /// A cell's point: its buffer's bytes, its median, its median on 4 KiB pages.
    pub(crate) fn of(c: &LatencyCell) -> LatencyPoint {
        LatencyPoint {
            bytes: c.bytes,
            ns: c.median_ns,
            small_pages_ns: c.small_pages_ns,
        }
    }
}

/// The curve of a size sweep (`--sets 4KiB..1GiB --measure latency`): every cell outside the
/// matrix, named levels too, smallest buffer first; None when the snapshot is no size sweep.
pub(crate) fn latency_curve(s: &Snapshot) -> Option<Vec<LatencyPoint>> {
    size_sweep(s)?;
    let mut points: Vec<LatencyPoint> = s
        .latency
        .iter()
        .filter(|c| c.mem_node.is_none())
        .map(LatencyPoint::of)
        .collect();
    points.sort_by_key(|p| p.bytes);
    Some(points)
}

/// Where the chase's buffer fills each cache level its CPU reaches: the level's capacity.
pub(crate) fn latency_edges(s: &Snapshot) -> Vec<CacheEdge> {
    let cpus: Vec<usize> = s.latency.iter().filter_map(|c| c.cpu).take(1).collect();
    cache_edges(&s.info.topology, SizeKind::Split, 1, &cpus)
        .into_iter()
        .map(|e| CacheEdge {
            bytes: e.capacity,
            ..e
        })
        .collect()
}

/// A step up in latency between two neighbouring buffer sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyCliff {
    below: u64,
    above: u64,
    /// The plateaus' medians before and after, ns per load.
    before_ns: f64,
    after_ns: f64,
    /// The cache edge nearest it, and whether that edge names it.
    edge: Option<CacheEdge>,
    named: bool,
    /// Only the last size lies past it.
    at_end: bool,
}

impl LatencyCliff {
    /// "L2 edge between 256 KiB and 362 KiB: 3.8 → 12.0 ns per load (×3.2); the buffer fills
    /// L2 (512 KiB reached) at 512 KiB".
    pub fn line(&self) -> String {
        let (below, above) = (format_bytes(self.below), format_bytes(self.above));
        let mut line = match self.edge {
            Some(e) if self.named => format!("{} edge between {below} and {above}", e.name()),
            Some(e) => format!(
                "a rise between {below} and {above}, {} the {} edge",
                if self.above <= e.bytes {
                    "before"
                } else {
                    "past"
                },
                e.name()
            ),
            None => format!("a rise between {below} and {above}, near no cache edge"),
        };
        let _ = write!(
            line,
            ": {:.2} → {:.2} ns per load (×{:.1})",
            self.before_ns,
            self.after_ns,
            self.after_ns / self.before_ns
        );
        if let Some(e) = self.edge {
            let _ = write!(
                line,
                "; the buffer fills {} ({} reached) at {}",
                e.name(),
                format_bytes(e.capacity),
                format_bytes(e.bytes)
            );
        }
        if self.at_end {
            line.push_str("; past it only the last size: a wider range would confirm it");
        }
        line
    }
}

/// The cliffs of a latency size sweep: rises found as drops of loads per ns, each named
/// after the nearest cache edge.
pub fn latency_cliffs(s: &Snapshot) -> Vec<LatencyCliff> {
    let Some(points) = latency_curve(s) else {
        return Vec::new();
    };
    let rates: Vec<f64> = points.iter().map(|p| 1.0 / p.ns).collect();
    let bytes: Vec<u64> = points.iter().map(|p| p.bytes).collect();
    edge_drops(&rates, &bytes, &latency_edges(s))
        .into_iter()
        .map(|(d, edge, named)| LatencyCliff {
            below: bytes[d.gap],
            above: bytes[d.gap + 1],
            before_ns: 1.0 / d.before,
            after_ns: 1.0 / d.after,
            edge,
            named,
            at_end: d.gap + 2 == points.len(),
        })
        .collect()
}
