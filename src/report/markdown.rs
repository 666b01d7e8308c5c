//! The Markdown snapshot: the lines the seed README prints above its tables, its per-cell table
//! (with bytes/cycle and checksum columns added) and its derived table, ready to paste.

use super::snapshot::{CellSnapshot, Snapshot};
use super::text::{
    clock_line, cpu_ranges, host_line, machine_line, num, pin_line, stores_name, threads_phrase,
    vendor_line,
};
use crate::engine::plan::ArraySize;
use crate::units::format_bytes;
use std::collections::BTreeSet;
use std::fmt::Write;

/// The per-cell table's header, with the vendor figure in the fraction column's name.
pub fn table_header(vendor_gbs: Option<f64>) -> Vec<String> {
    let fraction = match vendor_gbs {
        Some(v) => format!("fraction of {}", super::text::gbs_plain(v)),
        None => "fraction of vendor figure".to_string(),
    };
    [
        "per array",
        "threads",
        "median GB/s",
        "best GB/s",
        "cv",
        &fraction,
        "scaling vs 1 thread",
        "fastest thread GB/s",
        "slowest thread GB/s",
        "rounds with a late thread",
        "bytes/cycle",
        "checksum",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// One row of the per-cell table, cell by cell as the header names them.
pub fn table_row(c: &CellSnapshot) -> Vec<String> {
    let f = &c.figures;
    let scaling = if c.rerun {
        "-".to_string()
    } else {
        num(f.scaling, 2)
    };
    let checksum = match (&c.checksum, c.checksum_failures) {
        (_, n) if n > 0 => "FAILED".to_string(),
        (Some(k), _) if !k.ok => "FAILED".to_string(),
        (Some(_), _) => "ok".to_string(),
        (None, _) => "–".to_string(),
    };
    vec![
        escape(&c.label),
        c.threads.to_string(),
        num(Some(f.median_gbs), 1),
        num(Some(f.best_gbs), 1),
        format!("{} %", num(Some(f.cv * 100.0), 1)),
        num(f.vendor_fraction, 3),
        scaling,
        num(Some(f.fastest_thread_gbs), 1),
        num(Some(f.slowest_thread_gbs), 1),
        f.late_rounds.to_string(),
        num(f.bytes_per_cycle, 2),
        checksum,
    ]
}

/// A table cell: a `|` would end the cell early.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn table_line(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

fn separator(n: usize) -> String {
    format!("|{}", "---|".repeat(n))
}

/// The lines above the tables, one paragraph each.
pub fn header_lines(s: &Snapshot) -> Vec<String> {
    let info = &s.info;
    let mut lines = Vec::new();

    let mut first = format!(
        "stream-top {} on {}, snapshot taken {} UTC",
        info.version, info.hostname, s.taken
    );
    match s.run_seconds {
        Some(secs) => {
            let _ = write!(first, ", {secs} s after the run started");
        }
        None => {
            let _ = write!(first, " (run started {} UTC)", info.started);
        }
    }
    if !info.command_line.trim().is_empty() {
        let _ = write!(first, ": `{}`", info.command_line.trim().replace('`', "'"));
    }
    lines.push(first);

    lines.push(format!("Machine: {}.", machine_line(&info.topology)));
    if let Some(mut line) = info.container.and_then(|c| c.line()) {
        line[..1].make_ascii_uppercase();
        lines.push(format!("{line}."));
    }
    lines.push(format!(
        "Kernel: {} triad, {}.",
        info.kernel.isa,
        stores_name(info.kernel.stores)
    ));
    lines.push(pinning_line(s));
    lines.push(format!("{}.", clock_line(&info.clock)));
    lines.push(method_line(s));
    lines.push(sets_line(s));
    lines.push(format!("{}.", vendor_line(&info.vendor)));
    lines.push(format!(
        "Load at the start of this run: {}.",
        host_line(&info.host_start)
    ));
    lines.push(format!(
        "Load at this snapshot: {}.",
        host_line(&s.host_now)
    ));
    lines.push(huge_pages_line(s));
    lines.push(checksum_line(s));
    lines
}

fn pinning_line(s: &Snapshot) -> String {
    let cpus: BTreeSet<i32> = s
        .cells
        .iter()
        .flat_map(|c| c.cpus.iter().copied())
        .collect();
    let migrations: u64 = s.cells.iter().map(|c| c.migrations).sum();
    let mut line = format!("Pinning: {}", pin_line(s.info.pin));
    let ran = cpu_ranges(&cpus);
    if !ran.is_empty() {
        let _ = write!(line, "; threads ran on CPUs {ran}");
    }
    match migrations {
        0 => line.push_str("; no thread changed CPU within a round."),
        n => {
            let _ = write!(
                line,
                "; {n} thread-rounds started and ended on different CPUs."
            );
        }
    }
    line
}

fn method_line(s: &Snapshot) -> String {
    let counts: BTreeSet<u32> = s.cells.iter().map(|c| c.figures.rounds).collect();
    let rounds = match (counts.first(), counts.last()) {
        (Some(a), Some(b)) if a == b => format!("{a} timed rounds"),
        (Some(a), Some(b)) => format!("the last {a} to {b} timed rounds"),
        _ => format!("{} timed rounds", s.info.rounds),
    };
    format!(
        "STREAM triad a[i] = b[i] + s*c[i] over three float64 arrays, 24 bytes counted per \
         element, decimal GB/s. Median over {rounds} per cell (--rounds {}, rounds of at least \
         {} ms, duty {} %), after warm-up rounds covering at least 100 ms and numbering at least \
         3; the best round is what STREAM would report. Fastest and slowest thread are the \
         medians of each round's quickest and slowest partition; scaling is against one thread \
         over the same working set; a round has a late thread when its span exceeds the slowest \
         thread's own time by more than 20 %; bytes/cycle is GB/s ÷ GHz ÷ threads. The \
         single-thread cache configuration runs first and again last.",
        s.info.rounds, s.info.round_ms, s.info.duty
    )
}

fn sets_line(s: &Snapshot) -> String {
    let sets: Vec<String> = s
        .grid
        .sets
        .iter()
        .map(|set| {
            let what = match set.size {
                ArraySize::PerThread(b) => format!(
                    "each thread streams its own {} of each array, repeated for the round",
                    format_bytes(b)
                ),
                ArraySize::Split(b) => format!(
                    "arrays of {} split into one contiguous partition per thread",
                    format_bytes(b)
                ),
            };
            match &set.note {
                Some(note) => format!("{}: {what}; note: {note}", set.label()),
                None => format!("{}: {what}", set.label()),
            }
        })
        .collect();
    if sets.is_empty() {
        "Working sets: none.".to_string()
    } else {
        format!("Working sets: {}.", sets.join("; "))
    }
}

fn huge_pages_line(s: &Snapshot) -> String {
    let cells: Vec<&CellSnapshot> = s.cells.iter().filter(|c| c.array_bytes > 0).collect();
    if cells.is_empty() {
        return "Huge pages: not reported.".to_string();
    }
    let total: u64 = cells.iter().map(|c| c.array_bytes).sum();
    let huge: u64 = cells.iter().map(|c| c.huge_bytes.min(c.array_bytes)).sum();
    format!(
        "Huge pages: {} of the arrays' {} ({:.0} %, summed over the configurations) sat on \
         transparent huge pages.",
        format_bytes(huge),
        format_bytes(total),
        huge as f64 * 100.0 / total as f64
    )
}

/// "checksums: every configuration produced the reference sum of a", or the failures by name.
pub fn checksum_line(s: &Snapshot) -> String {
    let failed: Vec<&CellSnapshot> = s
        .cells
        .iter()
        .filter(|c| c.checksum_failures > 0 || c.checksum.as_ref().is_some_and(|k| !k.ok))
        .collect();
    let unchecked = s.cells.iter().filter(|c| c.checksum.is_none()).count();
    let ok = s.cells.len() - failed.len() - unchecked;
    if s.cells.is_empty() {
        return "checksums: no configuration has finished yet".to_string();
    }
    let mut line = if failed.is_empty() {
        if unchecked == 0 {
            "checksums: every configuration produced the reference sum of a".to_string()
        } else {
            format!(
                "checksums: {} produced the reference sum of a; {} not checked yet",
                plural_cfg(ok),
                plural_cfg(unchecked)
            )
        }
    } else {
        let names: Vec<String> = failed
            .iter()
            .map(|c| match &c.checksum {
                Some(k) if !k.ok => format!(
                    "{} (sum of a {} against the reference {})",
                    c.describe(),
                    k.actual,
                    k.expected
                ),
                _ => format!("{} (failed in an earlier visit)", c.describe()),
            })
            .collect();
        format!(
            "checksums: FAILED for {}; {} produced the reference sum of a",
            names.join(", "),
            plural_cfg(ok)
        )
    };
    if !failed.is_empty() && unchecked > 0 {
        let _ = write!(line, "; {} not checked yet", plural_cfg(unchecked));
    }
    line
}

fn plural_cfg(n: usize) -> String {
    if n == 1 {
        "1 configuration".to_string()
    } else {
        format!("{n} configurations")
    }
}

/// The Markdown snapshot: header lines, the per-cell table, the derived table.
pub fn to_markdown(s: &Snapshot) -> String {
    let mut out = String::new();
    for line in header_lines(s) {
        out.push_str(&line);
        out.push_str("\n\n");
    }
    let header = table_header(s.vendor_gbs());
    out.push_str(&table_line(&header));
    out.push('\n');
    out.push_str(&separator(header.len()));
    out.push('\n');
    for c in &s.cells {
        out.push_str(&table_line(&table_row(c)));
        out.push('\n');
    }
    if s.cells.is_empty() {
        out.push_str("\nNo cell has a timed round yet.\n");
    }
    if !s.derived.is_empty() {
        out.push_str("\n| derived | value | unit |\n|---|---|---|\n");
        for d in &s.derived {
            out.push_str(&table_line(&[
                escape(&d.name),
                d.unit.format(d.value),
                d.unit.name().to_string(),
            ]));
            out.push('\n');
        }
    }
    out
}

/// `85 KiB/thread (l2) × 2 threads` and the like, for messages.
pub(crate) fn cell_name(label: &str, threads: usize) -> String {
    format!("{label} × {}", threads_phrase(threads))
}
