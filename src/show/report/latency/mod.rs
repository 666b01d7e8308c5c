//! The writers of a latency snapshot (`--measure latency`): the Markdown page (the method, the
//! table, a size sweep's cliffs, the NUMA latency matrix), the CSV table, the latency-against-
//! size curve and its cliffs (`svg/latency.rs` draws the curve); `compare` sets two snapshots' latency
//! cells side by side. The JSON is the snapshot's own (`model/latency.rs`).
//!
//! A rise in latency between two neighbouring sizes is found by the bandwidth sweep's detector
//! (`cliffs::edge_drops`) on loads per ns, the reciprocal: a rise of r is a drop of
//! 1 − 1/(1 + r) (the 20 % floor of a drop is a 25 % rise). The cache edges are where the
//! chase's buffer fills each level the chasing CPU reaches (one buffer, not three arrays).

pub(crate) mod compare;

use super::cliffs::edge_drops;
use super::csv::field;
use super::lines::{clock_line, host_line, level_name, machine_line};
use super::markdown::run_line;
use super::model::{CycleSource, LatencyCell, Snapshot};
use super::sweep::{CacheEdge, SizeKind, cache_edges, size_sweep};
use super::text::num;
use crate::base::units::format_bytes;
use std::fmt::Write;

/// The CSV header of a latency snapshot, in order.
pub const LATENCY_CSV_COLUMNS: [&str; 19] = [
    "set_name",
    "label",
    "level",
    "bytes",
    "cpu",
    "cpu_node",
    "mem_node",
    "median_ns",
    "min_ns",
    "max_ns",
    "cv",
    "cycles",
    "cycles_from",
    "huge_share",
    "small_pages_ns",
    "tlb_ns",
    "runs",
    "hops_per_run",
    // Each repetition's median ns, `;`-separated.
    "repetitions",
];

/// The latency table as CSV: a row per cell, plain numbers in the JSON's units (ns, bytes,
/// fractions from 0), empty where unknown.
pub(crate) fn latency_csv(s: &Snapshot) -> String {
    let mut out = LATENCY_CSV_COLUMNS.join(",");
    out.push('\n');
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    let id = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
    for c in &s.latency {
        let reps: Vec<String> = c.repetitions.iter().map(|r| format!("{r}")).collect();
        let row = [
            field(&c.set_name),
            field(&c.label),
            c.level.map_or(String::new(), |l| level_name(l).to_string()),
            c.bytes.to_string(),
            id(c.cpu),
            id(c.cpu_node),
            id(c.mem_node),
            format!("{}", c.median_ns),
            format!("{}", c.min_ns),
            format!("{}", c.max_ns),
            format!("{}", c.cv),
            format!("{}", c.cycles),
            cycles_from_word(c.cycles_from).to_string(),
            opt(c.huge_share),
            opt(c.small_pages_ns),
            opt(c.tlb_ns),
            c.runs.to_string(),
            c.hops_per_run.to_string(),
            reps.join(";"),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// `counted` or `clock_estimate`, as the CSV and JSON spell it.
fn cycles_from_word(c: CycleSource) -> &'static str {
    match c {
        CycleSource::Counted => "counted",
        CycleSource::ClockEstimate => "clock_estimate",
    }
}

/// A table cell: a `|` would end it early.
fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The Markdown page of a latency snapshot.
pub(crate) fn latency_markdown(s: &Snapshot) -> String {
    let mut out = String::new();
    let info = &s.info;
    let cells: Vec<&LatencyCell> = s.latency.iter().filter(|c| c.mem_node.is_none()).collect();
    let pairs: Vec<&LatencyCell> = s.latency.iter().filter(|c| c.mem_node.is_some()).collect();
    let first = &s.latency[0];
    let reps = first.repetitions.len();
    let mut lines = vec![
        run_line(s),
        format!("Machine: {}.", machine_line(&info.topology)),
        format!(
            "Idle latency: a dependent pointer chase through a random cyclic permutation of the \
             buffer's 64-byte lines (one pointer per line), on one thread pinned {}; each figure \
             is the median ns per load of {} timed runs{}. Each chain is checked after its runs \
             to be one cycle through every line. Hardware prefetchers stay on: stream-top \
             changes no MSR (a random order gives them no stride to learn).",
            match first.cpu {
                Some(cpu) if first.mem_node.is_none() => {
                    format!("to CPU {cpu}, where the triad's first thread runs")
                }
                Some(_) => "to each CPU node's first CPU".to_string(),
                None => "nowhere (unpinned)".to_string(),
            },
            first.runs,
            if reps > 1 {
                format!(", and of the medians of {reps} repetitions, each on a fresh chain")
            } else {
                String::new()
            }
        ),
        format!("{}.", clock_line(&info.clock)),
        format!(
            "Cycles per load: {}.",
            match first.cycles_from {
                CycleSource::Counted => "counted by the PMU on the chasing thread".to_string(),
                CycleSource::ClockEstimate => format!(
                    "ns × the clock estimate's {:.2} GHz (no PMU counts cycles on this thread)",
                    info.clock.ghz
                ),
            }
        ),
        "Pages: the buffer is advised onto transparent huge pages (the share that took is \
         shown); the same chain on 4 KiB pages gives the TLB cost, 4 KiB − huge, where at least \
         half of the buffer sat on huge pages."
            .to_string(),
        format!(
            "Load at the start of this run: {}.",
            host_line(&info.host_start)
        ),
        format!("Load at this snapshot: {}.", host_line(&s.host_now)),
    ];
    if let Some(why) = &info.not_a_measurement {
        lines.insert(1, format!("**Not a measurement.** {why}."));
    }
    for line in lines {
        out.push_str(&line);
        out.push_str("\n\n");
    }
    if !cells.is_empty() {
        push_table(&mut out, &cells);
    }
    let cliffs = latency_cliffs(s);
    if !cliffs.is_empty() {
        out.push_str("\n## Latency against size\n\n");
        for c in &cliffs {
            let _ = writeln!(out, "- Cliff: {}", c.line());
        }
    }
    if !pairs.is_empty() {
        push_matrix(&mut out, &pairs);
    }
    out
}

/// The per-buffer table.
fn push_table(out: &mut String, cells: &[&LatencyCell]) {
    out.push_str(
        "| set | buffer | ns/load | cycles/load | on huge pages | ns on 4 KiB pages | TLB cost ns | \
         fastest–slowest run ns | runs | cv |\n",
    );
    out.push_str(&format!("|{}\n", "---|".repeat(10)));
    for c in cells {
        let runs = match c.repetitions.len() {
            0 | 1 => c.runs.to_string(),
            n => format!("{} × {n}", c.runs),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {}–{} | {runs} | {} % |",
            escape(&c.set_name),
            format_bytes(c.bytes),
            num(Some(c.median_ns), 2),
            num(Some(c.cycles), 1),
            c.huge_share
                .map_or("–".to_string(), |h| format!("{:.0} %", h * 100.0)),
            num(c.small_pages_ns, 2),
            num(c.tlb_ns, 2),
            num(Some(c.min_ns), 2),
            num(Some(c.max_ns), 2),
            num(Some(c.cv * 100.0), 1),
        );
    }
}

/// The NUMA latency matrix: a row per CPU node, a column per memory node, median ns per load.
fn push_matrix(out: &mut String, pairs: &[&LatencyCell]) {
    let mut cpu_nodes: Vec<usize> = pairs.iter().filter_map(|c| c.cpu_node).collect();
    let mut mem_nodes: Vec<usize> = pairs.iter().filter_map(|c| c.mem_node).collect();
    for v in [&mut cpu_nodes, &mut mem_nodes] {
        v.sort_unstable();
        v.dedup();
    }
    let _ = write!(
        out,
        "\n## NUMA latency matrix\n\nMedian ns per load of one thread on each CPU node's first CPU (a \
         row) chasing a {} buffer bound to each memory node (a column).\n\n",
        format_bytes(pairs[0].bytes)
    );
    let mut head = vec!["CPU node \\ memory node".to_string()];
    head.extend(mem_nodes.iter().map(|n| format!("node {n}")));
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
    for &cpu in &cpu_nodes {
        let mut row = vec![format!("node {cpu}")];
        row.extend(mem_nodes.iter().map(|&mem| {
            let v = pairs
                .iter()
                .find(|c| c.cpu_node == Some(cpu) && c.mem_node == Some(mem))
                .map(|c| c.median_ns);
            num(v, 1)
        }));
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if mem_nodes.len() < 2 {
        out.push_str("\nNote: one NUMA node: the matrix is 1×1, the local latency.\n");
    }
}

/// A point of the latency-against-size curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LatencyPoint {
    pub bytes: u64,
    pub ns: f64,
    pub small_pages_ns: Option<f64>,
}

/// The curve of a size sweep (`--sets 4KiB..1GiB --measure latency`): every cell outside the
/// matrix, named levels too, smallest buffer first; None when the snapshot is no size sweep.
pub(crate) fn latency_curve(s: &Snapshot) -> Option<Vec<LatencyPoint>> {
    size_sweep(s)?;
    let mut points: Vec<LatencyPoint> = s
        .latency
        .iter()
        .filter(|c| c.mem_node.is_none())
        .map(|c| LatencyPoint {
            bytes: c.bytes,
            ns: c.median_ns,
            small_pages_ns: c.small_pages_ns,
        })
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
    pub below: u64,
    pub above: u64,
    /// The plateaus' medians before and after, ns per load.
    pub before_ns: f64,
    pub after_ns: f64,
    /// The cache edge nearest it, and whether that edge names it.
    pub edge: Option<CacheEdge>,
    pub named: bool,
    /// Only the last size lies past it.
    pub at_end: bool,
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
