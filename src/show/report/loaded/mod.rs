//! The loaded-latency curve (`--measure loaded-latency`) in the snapshot's formats: its table
//! in Markdown (below the run's header lines), its CSV, and the words for its knee, which the
//! SVG, the headless progress and the live view also use. The JSON is the snapshot's own.

use super::model::{LoadedLatencyPoint, Snapshot};
use crate::base::units::format_bytes;
use crate::engine::latency::loaded::LoadedCurve;

/// The CSV header of a loaded-latency snapshot, one row per point (the idle reference first).
pub const LOADED_CSV_COLUMNS: [&str; 9] = [
    "delay_ns",
    "delay_spins",
    "load_threads",
    "load_gbs",
    "latency_ns",
    "times_idle",
    "knee",
    "chase_bytes",
    "chase_cpu",
];

/// The curve as the snapshot holds it: the idle reference first, then each point in the order
/// run, with its multiple of idle and the knee marked.
pub fn points_of(curve: &LoadedCurve) -> Vec<LoadedLatencyPoint> {
    let idle_ns = curve.idle.latency_ns;
    let point = |p: &crate::engine::latency::loaded::LoadedPoint, knee: bool| LoadedLatencyPoint {
        delay_ns: p.delay_ns,
        delay_spins: p.delay_spins,
        load_threads: p.load_threads,
        load_gbs: p.load_gbs,
        latency_ns: p.latency_ns,
        times_idle: if idle_ns > 0.0 {
            p.latency_ns / idle_ns
        } else {
            0.0
        },
        knee,
        chase_bytes: curve.chase_bytes,
        chase_cpu: curve.chase_cpu,
    };
    std::iter::once(point(&curve.idle, false))
        .chain(
            curve
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| point(p, curve.knee == Some(i))),
        )
        .collect()
}

/// A delay as people read it: `idle (no load)`, `0 ns`, `750 ns`, `12.5 µs`, `1.25 ms`.
pub fn delay_text(delay_ns: Option<u64>) -> String {
    match delay_ns {
        None => "idle (no load)".into(),
        Some(ns) if ns < 1_000 => format!("{ns} ns"),
        Some(ns) if ns < 1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        Some(ns) => format!("{:.2} ms", ns as f64 / 1e6),
    }
}

/// The idle reference: the point without a delay.
pub fn idle_point(points: &[LoadedLatencyPoint]) -> Option<&LoadedLatencyPoint> {
    points.iter().find(|p| p.delay_ns.is_none())
}

/// What the knee is, in one sentence: where it is, or that the curve has none.
pub fn knee_line(points: &[LoadedLatencyPoint]) -> String {
    let Some(idle) = idle_point(points) else {
        return "No knee: there is no idle reference.".into();
    };
    match points.iter().find(|p| p.knee) {
        Some(k) => format!(
            "Knee at {:.1} GB/s of load (delay {}): {:.1} ns, {:.2} × the idle {:.1} ns; from \
             there on, latency stays above 2 × idle: queueing for the memory takes longer than \
             the access itself.",
            k.load_gbs,
            delay_text(k.delay_ns),
            k.latency_ns,
            k.times_idle,
            idle.latency_ns
        ),
        None => {
            let most = points.iter().map(|p| p.load_gbs).fold(0.0f64, f64::max);
            format!(
                "No knee: at the most load measured ({most:.1} GB/s) latency is not above 2 × \
                 the idle {:.1} ns for good.",
                idle.latency_ns
            )
        }
    }
}

/// The Markdown section: what ran, the table (one row per point), the knee.
pub(crate) fn markdown(s: &Snapshot) -> String {
    let points = &s.loaded_latency;
    let mut out = String::new();
    if let Some(first) = points.first() {
        let threads = points.iter().map(|p| p.load_threads).max().unwrap_or(0);
        let cpu = first
            .chase_cpu
            .map_or("unpinned".to_string(), |c| format!("on CPU {c}"));
        out.push_str(&format!(
            "Loaded latency: a pointer chase through {} ({cpu}) while {threads} load {} \
             {} the triad over arrays of their own, with a delay after each chunk of \
             192 KiB of traffic; latency is the chase's median ns per load, bandwidth the load \
             threads' total (24 bytes per element).\n\n",
            format_bytes(first.chase_bytes),
            if threads == 1 { "thread" } else { "threads" },
            if threads == 1 { "streams" } else { "stream" },
        ));
    }
    out.push_str("| delay | load GB/s | latency ns | × idle |\n|---|---|---|---|\n");
    for p in points {
        let knee = if p.knee { " (knee)" } else { "" };
        out.push_str(&format!(
            "| {} | {:.2} | {:.1} | {:.2}{knee} |\n",
            delay_text(p.delay_ns),
            p.load_gbs,
            p.latency_ns,
            p.times_idle
        ));
    }
    out.push('\n');
    out.push_str(&knee_line(points));
    out.push('\n');
    out
}

/// The CSV: [`LOADED_CSV_COLUMNS`], one row per point, plain numbers (empty where null).
pub(crate) fn csv(s: &Snapshot) -> String {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let mut out = LOADED_CSV_COLUMNS.join(",") + "\n";
    for p in &s.loaded_latency {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{}\n",
            opt(p.delay_ns),
            opt(p.delay_spins),
            p.load_threads,
            p.load_gbs,
            p.latency_ns,
            p.times_idle,
            p.knee,
            p.chase_bytes,
            opt(p.chase_cpu.map(|c| c as u64)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_read_in_their_unit() {
        assert_eq!(delay_text(None), "idle (no load)");
        assert_eq!(delay_text(Some(0)), "0 ns");
        assert_eq!(delay_text(Some(999)), "999 ns");
        assert_eq!(delay_text(Some(12_500)), "12.5 µs");
        assert_eq!(delay_text(Some(1_250_000)), "1.25 ms");
    }
}
