//! The Markdown page of a latency snapshot (`--measure latency`): the method, the per-buffer
//! table, a size sweep's cliffs and the NUMA latency matrix.

use super::sentences::{partial_line, run_line};
use crate::base::units::format_bytes;
use crate::show::report::latency::latency_cliffs;
use crate::show::report::lines::{clock_line, host_line, machine_line};
use crate::show::report::model::{CycleSource, LatencyCell, Snapshot};
use crate::show::report::text::num;
use std::fmt::Write;

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
    if let Some(line) = partial_line(s) {
        lines.insert(1, line);
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
            tlb_cost(c.tlb_ns),
            num(Some(c.min_ns), 2),
            num(Some(c.max_ns), 2),
            num(Some(c.cv * 100.0), 1),
        );
    }
}

/// The TLB cost column: 4 KiB pages − huge pages. A difference that rounds to nothing is no
/// cost, not `-0.00`; one below zero (the 4 KiB chase came out faster) cannot be a cost: it is
/// the spread between the two chases, shown as within the noise with the figure measured.
fn tlb_cost(ns: Option<f64>) -> String {
    match ns {
        Some(t) if t.abs() < 0.005 => num(Some(0.0), 2),
        Some(t) if t < 0.0 => format!("≈0 (within noise: −{:.2})", -t),
        other => num(other, 2),
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
