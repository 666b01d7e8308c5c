//! The cliffs of a size sweep: where GB/s drops between two neighbouring sizes, and the cache
//! level whose edge that is ("L2 edge between 128 KiB and 181 KiB per thread").
//!
//! The detector works on one curve of cell medians (each already the median of its rounds):
//!
//! - The plateau either side of a gap between neighbouring sizes is the median of up to
//!   `WINDOW` points on that side: a median of three is the smallest that one stray point
//!   cannot move, so a single slow or fast cell is not a cliff.
//! - A gap is a cliff when the plateau after it lies more than the threshold below the plateau
//!   before it, and the step across the gap itself is at least half the threshold: the drop
//!   happens there, not spread thinly over many sizes.
//! - The threshold is `MIN_DROP` (20 %), raised on a noisy curve to `NOISE_FACTOR` times the
//!   median step between neighbours (on a log scale). On the 2-vCPU Zen 3 VM this was built on,
//!   the smallest edge measured was the L1d's, 27 % plateau to plateau (the L2's 37 %, the L3's
//!   68 %), and the medians of neighbouring sizes differed by a median of 4 % in a quiet run:
//!   a fifth lies between the two. The median step is the curve's own scatter, which the few
//!   large steps of the cliffs do not move; four times it is about 2.7 standard deviations of a
//!   step, so noise that large (10 % between neighbours at a load average of 4 there, which
//!   raised the threshold to 32 %) does not pass for a cliff.
//! - Neighbouring gaps see the same drop through their windows: the cliff is placed at the
//!   steepest step among them, and no other cliff is named within `WINDOW` gaps of it.
//!
//! A cliff is then tied to the cache level whose edge (where three arrays fill it, from
//! `sweep::cache_edges`) lies nearest to it on the log scale, within `MAX_EDGE_OCTAVES`. A
//! level names one cliff of a curve, the nearest: another drop near the same edge (a level
//! that empties in two stages, or a noisy curve) is a drop before or past that edge.

use super::model::{ArraySize, Cliff, Snapshot};
use super::sweep::{CacheEdge, Curve, SizeKind, cache_edges, curves, size_sweep};
use super::text::threads_phrase;
use crate::base::median::median_of;
use crate::base::units::format_bytes;

/// A drop smaller than this share of the plateau is never a cliff.
pub(crate) const MIN_DROP: f64 = 0.20;

/// On a noisy curve, a cliff must also exceed this many times the median step between
/// neighbours.
pub(crate) const NOISE_FACTOR: f64 = 4.0;

/// Points either side of a gap whose median is its plateau.
pub(crate) const WINDOW: usize = 3;

/// A cliff further than this from every cache edge, in octaves, is named after none.
const MAX_EDGE_OCTAVES: f64 = 2.0;

/// A drop on a curve, by index: between `points[gap]` and `points[gap + 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drop {
    pub(crate) gap: usize,
    /// The plateaus' medians before and after, GB/s.
    pub(crate) before: f64,
    pub(crate) after: f64,
    /// The threshold this curve's drops had to exceed, a fraction.
    threshold: f64,
}

impl Drop {
    /// The plateau's drop, a fraction: 1 − after ÷ before.
    pub fn depth(&self) -> f64 {
        1.0 - self.after / self.before
    }
}

/// The threshold for a curve: `MIN_DROP`, or `NOISE_FACTOR` times its median step (as a
/// fraction of the plateau) when that is more.
pub fn threshold(values: &[f64]) -> f64 {
    let steps: Vec<f64> = values
        .windows(2)
        .map(|w| (w[1] / w[0]).ln().abs())
        .filter(|s| s.is_finite())
        .collect();
    let scatter = median_of(&steps).unwrap_or(0.0);
    MIN_DROP.max(1.0 - (-NOISE_FACTOR * scatter).exp())
}

/// The cliffs of a curve of medians, smallest size first (each value a positive GB/s).
fn find_drops(values: &[f64]) -> Vec<Drop> {
    let n = values.len();
    if n < 3 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Vec::new();
    }
    let threshold = threshold(values);
    let mut candidates: Vec<Drop> = (0..n - 1)
        .filter_map(|gap| {
            let before = median_of(&values[(gap + 1).saturating_sub(WINDOW)..=gap])?;
            let after = median_of(&values[gap + 1..(gap + 1 + WINDOW).min(n)])?;
            let step = 1.0 - values[gap + 1] / values[gap];
            let drop = Drop {
                gap,
                before,
                after,
                threshold,
            };
            (drop.depth() > threshold && step >= threshold / 2.0).then_some(drop)
        })
        .collect();
    // Neighbouring gaps see the same plateaus through their windows, so their depths are
    // alike: the cliff is placed at the steepest step among them (then the deeper drop).
    let step = |d: &Drop| values[d.gap + 1] / values[d.gap];
    candidates.sort_by(|a, b| {
        step(a)
            .total_cmp(&step(b))
            .then(b.depth().total_cmp(&a.depth()))
            .then(a.gap.cmp(&b.gap))
    });
    let mut chosen: Vec<Drop> = Vec::new();
    for c in candidates {
        if chosen.iter().all(|k| k.gap.abs_diff(c.gap) >= WINDOW) {
            chosen.push(c);
        }
    }
    chosen.sort_by_key(|d| d.gap);
    chosen
}

/// The cache edge nearest the gap between `below` and `above` bytes (at their geometric
/// middle, on a log scale), when one lies within `MAX_EDGE_OCTAVES`.
fn nearest_edge(edges: &[CacheEdge], below: u64, above: u64) -> Option<CacheEdge> {
    edges
        .iter()
        .map(|e| (e, octaves_from(e, below, above)))
        .filter(|&(_, d)| d <= MAX_EDGE_OCTAVES)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(e, _)| *e)
}

/// Octaves between an edge and the geometric middle of `below` and `above`.
fn octaves_from(edge: &CacheEdge, below: u64, above: u64) -> f64 {
    let middle = ((below as f64).log2() + (above as f64).log2()) / 2.0;
    ((edge.bytes as f64).log2() - middle).abs()
}

/// The cliffs of a snapshot's size sweep, curve by curve (fewest threads first), each named
/// after the cache level whose edge it is; none when the snapshot is not a size sweep.
pub fn cliffs(s: &Snapshot) -> Vec<Cliff> {
    let Some(kind) = size_sweep(s) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for curve in curves(s, kind) {
        let values: Vec<f64> = curve.points.iter().map(|p| p.gbs).collect();
        let bytes: Vec<u64> = curve.points.iter().map(|p| p.bytes).collect();
        let edges = cache_edges(&s.info.topology, kind, curve.threads, &curve.cpus);
        for (d, edge, named) in edge_drops(&values, &bytes, &edges) {
            out.push(cliff(s, kind, &curve, edge, named, d));
        }
    }
    out
}

/// The drops of a curve of rates at sizes `bytes` (ascending), each with its nearest cache
/// edge and whether that edge names it (no other drop of the curve lies nearer to it). The
/// latency sweep finds its rises here too, on loads per ns.
pub(crate) fn edge_drops(
    values: &[f64],
    bytes: &[u64],
    edges: &[CacheEdge],
) -> Vec<(Drop, Option<CacheEdge>, bool)> {
    let drops = find_drops(values);
    let near: Vec<Option<(CacheEdge, f64)>> = drops
        .iter()
        .map(|d| {
            let (lo, hi) = (bytes[d.gap], bytes[d.gap + 1]);
            nearest_edge(edges, lo, hi).map(|e| (e, octaves_from(&e, lo, hi)))
        })
        .collect();
    drops
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let named = near[i].is_some_and(|(e, dist)| {
                near.iter().enumerate().all(|(j, other)| match other {
                    Some((o, od)) if j != i && o.level == e.level => {
                        dist < *od || (dist == *od && i < j)
                    }
                    _ => true,
                })
            });
            (d, near[i].map(|n| n.0), named)
        })
        .collect()
}

/// Each curve's threshold (fewest threads first) where its scatter raised it above `MIN_DROP`:
/// what a reader needs to know when a noisy curve shows no cliff.
pub(crate) fn raised_thresholds(s: &Snapshot) -> Vec<(usize, f64)> {
    let Some(kind) = size_sweep(s) else {
        return Vec::new();
    };
    curves(s, kind)
        .into_iter()
        .filter_map(|c| {
            let values: Vec<f64> = c.points.iter().map(|p| p.gbs).collect();
            let t = threshold(&values);
            (values.len() >= 3 && t > MIN_DROP).then_some((c.threads, t))
        })
        .collect()
}

/// The cliff at drop `d` of `curve`, whose nearest cache edge is `edge`; `named` when that
/// edge names it (no other drop of the curve lies nearer to it).
fn cliff(
    s: &Snapshot,
    kind: SizeKind,
    curve: &Curve,
    edge: Option<CacheEdge>,
    named: bool,
    d: Drop,
) -> Cliff {
    let (lo, hi) = (curve.points[d.gap], curve.points[d.gap + 1]);
    let label = |set: usize, bytes: u64| {
        s.grid.sets.get(set).map_or_else(
            || format_bytes(bytes),
            |w| match w.level {
                // A named level's size, as computed.
                Some(_) => format_bytes(bytes),
                None => w.name.trim_end_matches("/thread").to_string(),
            },
        )
    };
    let (below, above) = (label(lo.set, lo.bytes), label(hi.set, hi.bytes));
    let per = match kind {
        SizeKind::PerThread => " per thread",
        SizeKind::Split => "",
    };
    let text = match edge {
        Some(e) if named => format!("{} edge between {below} and {above}{per}", e.name()),
        Some(e) => format!(
            "a drop between {below} and {above}{per}, {} the {} edge",
            if hi.bytes <= e.bytes {
                "before"
            } else {
                "past"
            },
            e.name()
        ),
        None => format!("a drop between {below} and {above}{per}, near no cache edge"),
    };
    let size = |b| match kind {
        SizeKind::PerThread => ArraySize::PerThread(b),
        SizeKind::Split => ArraySize::Split(b),
    };
    Cliff {
        threads: curve.threads,
        below: size(lo.bytes),
        above: size(hi.bytes),
        before_gbs: d.before,
        after_gbs: d.after,
        drop: d.depth(),
        threshold: d.threshold,
        cache_level: edge.map(|e| e.level),
        cache_bytes: edge.map(|e| e.capacity),
        edge: edge.map(|e| size(e.bytes)),
        at_end: d.gap + 2 == curve.points.len(),
        text,
    }
}

/// A cliff as one line of prose: "L2 edge between 128 KiB and 181 KiB per thread, 1 thread:
/// 96.1 → 51.2 GB/s (−47 %); three arrays fill L2 (512 KiB reached) at 171 KiB per thread".
pub fn cliff_line(c: &Cliff) -> String {
    let mut line = format!(
        "{}, {}: {:.1} → {:.1} GB/s (−{:.0} %)",
        c.text,
        threads_phrase(c.threads),
        c.before_gbs,
        c.after_gbs,
        c.drop * 100.0
    );
    if let (Some(level), Some(capacity), Some(edge)) = (c.cache_level, c.cache_bytes, c.edge) {
        let name = CacheEdge {
            level,
            capacity,
            bytes: 0,
        }
        .name();
        let (bytes, per) = match edge {
            ArraySize::PerThread(b) => (b, " per thread"),
            ArraySize::Split(b) => (b, ""),
        };
        line.push_str(&format!(
            "; three arrays fill {name} ({} reached) at {}{per}",
            format_bytes(capacity),
            format_bytes(bytes)
        ));
    }
    if c.at_end {
        line.push_str("; past it only the last size: a wider range would confirm it");
    }
    if c.threshold > MIN_DROP {
        line.push_str(&format!(
            "; the curve's scatter raised the threshold to {:.0} %",
            c.threshold * 100.0
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plateaus of `levels` GB/s, `each` points long.
    fn steps(levels: &[f64], each: usize) -> Vec<f64> {
        levels
            .iter()
            .flat_map(|&v| std::iter::repeat_n(v, each))
            .collect()
    }

    #[test]
    fn clean_steps_are_found_at_their_gaps() {
        let v = steps(&[200.0, 100.0, 60.0, 15.0], 4);
        let d = find_drops(&v);
        assert_eq!(d.iter().map(|d| d.gap).collect::<Vec<_>>(), [3, 7, 11]);
        assert_eq!((d[0].before, d[0].after), (200.0, 100.0));
        assert!((d[2].depth() - 0.75).abs() < 1e-12);
        assert_eq!(d[0].threshold, MIN_DROP);
    }

    #[test]
    fn a_stray_point_on_a_plateau_is_not_a_cliff() {
        let mut v = steps(&[100.0, 50.0], 6);
        v[2] = 60.0; // one slow cell
        v[9] = 80.0; // one fast cell on the lower plateau
        let d = find_drops(&v);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].gap, 5);
    }

    #[test]
    fn noisy_plateaus_keep_their_cliff_and_raise_the_threshold() {
        // ±8 % around 100 and 40, alternating: a step of about 16 % between neighbours.
        let v: Vec<f64> = (0..16)
            .map(|i| {
                let base = if i < 8 { 100.0 } else { 40.0 };
                base * if i % 2 == 0 { 1.08 } else { 0.92 }
            })
            .collect();
        let d = find_drops(&v);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].gap, 7);
        assert!(d[0].threshold > 0.4, "{}", d[0].threshold);
    }

    #[test]
    fn a_smooth_or_flat_curve_has_no_cliff() {
        assert!(find_drops(&[100.0; 10]).is_empty());
        // 5 % less per size: 40 % over ten sizes, but no drop at any one gap.
        let slope: Vec<f64> = (0..10).map(|i| 100.0 * 0.95f64.powi(i)).collect();
        assert!(find_drops(&slope).is_empty());
        // Rising (start-up cost at the smallest sizes) is not a cliff either.
        let rise: Vec<f64> = (0..8).map(|i| 50.0 + 10.0 * i as f64).collect();
        assert!(find_drops(&rise).is_empty());
        // Too few points to tell a plateau, or a value that is not a rate.
        assert!(find_drops(&[100.0, 10.0]).is_empty());
        assert!(find_drops(&[100.0, f64::NAN, 10.0, 10.0]).is_empty());
    }

    #[test]
    fn a_cliff_at_the_last_point_is_found() {
        let v = [100.0, 101.0, 99.0, 100.0, 100.0, 45.0];
        let d = find_drops(&v);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].gap, 4);
        assert_eq!(d[0].after, 45.0);
    }

    #[test]
    fn a_cliff_is_placed_at_its_steepest_step_whatever_the_plateaus_noise() {
        // Measured on the VM under load: 36.6 → 15.2 is the cliff, 15.2 → 10.1 its tail,
        // and the plateau after is a hair deeper seen from the tail.
        let v = [35.1, 36.3, 36.6, 15.2, 10.14, 10.08, 9.0, 11.9, 10.5];
        let d = find_drops(&v);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].gap, 2);
    }

    #[test]
    fn a_cliff_spread_over_two_gaps_is_named_once_at_its_steeper_step() {
        let v = [100.0, 100.0, 100.0, 100.0, 75.0, 50.0, 50.0, 50.0, 50.0];
        let d = find_drops(&v);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].gap, 4);
        assert_eq!((d[0].before, d[0].after), (100.0, 50.0));
    }

    #[test]
    fn the_nearest_edge_names_the_cliff() {
        let edges = [
            CacheEdge {
                level: 1,
                capacity: 32 << 10,
                bytes: 10922,
            },
            CacheEdge {
                level: 2,
                capacity: 512 << 10,
                bytes: 174762,
            },
        ];
        assert_eq!(
            nearest_edge(&edges, 131072, 185344).map(|e| e.level),
            Some(2)
        );
        assert_eq!(nearest_edge(&edges, 8192, 11585).map(|e| e.level), Some(1));
        assert_eq!(nearest_edge(&edges, 16 << 20, 23 << 20), None);
    }
}
