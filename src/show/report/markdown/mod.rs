//! The Markdown snapshot: the lines that describe the run above its tables, its per-cell table
//! (with bytes/cycle and checksum columns added) and its derived table, ready to paste.
//!
//! mod.rs lays the page out: which paragraphs, tables and sections come in what order, and
//! every table's cells; sentences.rs words the paragraphs above and below the tables (each a
//! function of the snapshot, some also said by `compare`).

mod latency;
mod port_limit;
mod sentences;

use crate::base::time::display;
use crate::show::report::cliffs::{MIN_DROP, NOISE_FACTOR, WINDOW, cliff_line, raised_thresholds};
use crate::show::report::lines::{choice_kept, choice_versus, row_label_on};
use crate::show::report::model::{
    CellCounters, CellSnapshot, FailedCell, GroupKey, RERUN_SUFFIX, Snapshot, TableRow,
};
use crate::show::report::ops::op_heading;
use crate::show::report::sweep::size_sweep;
use crate::show::report::text::{gbs_plain, num, threads_phrase};
use sentences::{PARTIAL_MARK, drift_line, header_lines, noisy_line};
use std::fmt::Write;

pub(crate) use sentences::{checksum_line, duty_percent, no_effect_lines};

/// The counter columns a snapshot's table has: those its run counted in some cell.
#[derive(Debug, Clone, Copy, Default)]
struct CounterColumns {
    ghz: bool,
    ipc: bool,
    switches: bool,
    llc: bool,
}

impl CounterColumns {
    fn of(s: &Snapshot) -> CounterColumns {
        let any = |f: &dyn Fn(&CellCounters) -> Option<f64>| {
            s.cells
                .iter()
                .any(|c| c.figures.counters.as_ref().and_then(f).is_some())
        };
        CounterColumns {
            ghz: any(&|c| c.ghz),
            ipc: any(&|c| c.ipc),
            switches: any(&|c| c.switches_per_round),
            llc: any(&|c| c.llc_misses_per_kib),
        }
    }

    fn header(&self) -> Vec<&'static str> {
        [
            (self.ghz, "GHz (counted)"),
            (self.ipc, "IPC"),
            (self.switches, "switches/round"),
            (self.llc, "LLC misses/KiB"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    fn row(&self, c: Option<&CellCounters>) -> Vec<String> {
        let v = |f: fn(&CellCounters) -> Option<f64>, places| num(c.and_then(f), places);
        [
            (self.ghz, v(|c| c.ghz, 2)),
            (self.ipc, v(|c| c.ipc, 2)),
            (self.switches, v(|c| c.switches_per_round, 1)),
            (self.llc, v(|c| c.llc_misses_per_kib, 2)),
        ]
        .into_iter()
        .filter_map(|(on, text)| on.then_some(text))
        .collect()
    }
}

/// The per-cell table's header, with the vendor figure in the fraction column's name, the
/// disturbed rounds beside the late ones, the median's interval, and the counters the run had.
fn table_header(s: &Snapshot) -> Vec<String> {
    let vendor_gbs = s.vendor_gbs();
    let fraction = match vendor_gbs {
        Some(v) => format!("% of {}", gbs_plain(v)),
        None => "% of vendor figure".to_string(),
    };
    let mut header: Vec<String> = [
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
        "disturbed rounds",
        "bytes/cycle",
        "checksum",
        "95 % CI of median GB/s",
    ]
    .iter()
    .chain(CounterColumns::of(s).header().iter())
    .map(|s| s.to_string())
    .collect();
    if port_limit::shown(s) {
        header.insert(PORT_LIMIT_AT, port_limit::HEADER.to_string());
    }
    header
}

/// A row's label as the table shows it: the set's label with, for an explicit size, the level
/// it lands in against the caches the row's `threads` reach on `cpus` (`64 MB, past L3 (48 MiB
/// reached): dram`), and `, run again last` on the rerun row.
fn row_label(
    s: &Snapshot,
    (set, threads, cpus): (usize, usize, &[i32]),
    rerun: bool,
    stored: &str,
) -> String {
    let Some(ws) = s.grid.sets.get(set) else {
        return stored.to_string();
    };
    let label = row_label_on(ws, &s.info.topology, threads, cpus);
    if rerun {
        format!("{label}{RERUN_SUFFIX}")
    } else {
        label
    }
}

/// The interval of the median, `50.1–53.2`; `–` under 6 rounds.
fn interval(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([l, h]) => format!("{}–{}", num(Some(l), 1), num(Some(h), 1)),
        None => "–".to_string(),
    }
}

/// One row of the per-cell table, cell by cell as the header names them.
fn table_row(s: &Snapshot, c: &CellSnapshot, counters: CounterColumns) -> Vec<String> {
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
    let mut row = row_head(s, c);
    row.extend([
        num(Some(f.median_gbs), 1),
        num(Some(f.best_gbs), 1),
        percent(Some(f.cv)),
        percent(f.vendor_fraction),
        scaling,
        num(Some(f.fastest_thread_gbs), 1),
        num(Some(f.slowest_thread_gbs), 1),
        f.late_rounds.to_string(),
        f.disturbed_rounds.to_string(),
        num(f.bytes_per_cycle, 2),
        checksum,
        interval(f.median_ci_gbs),
    ]);
    row.extend(counters.row(f.counters.as_ref()));
    // An --oversubscribe run's figures, not its label, threads, round counts or checksum.
    for (i, cell) in row.iter_mut().enumerate().skip(2) {
        if ![9, 10, 12].contains(&i) {
            *cell = strike_if(s, std::mem::take(cell));
        }
    }
    if port_limit::shown(s) {
        row.insert(
            PORT_LIMIT_AT,
            strike_if(s, percent(port_limit::fraction(f))),
        );
    }
    row
}

/// Where the port limit's column stands: right after bytes/cycle.
const PORT_LIMIT_AT: usize = 12;

/// A row's first two columns: the cell's working set (as its row is labelled) and threads.
fn row_head(s: &Snapshot, c: &CellSnapshot) -> Vec<String> {
    vec![
        escape(&row_label(
            s,
            (c.set, c.threads, &c.cpus),
            c.rerun,
            &c.label,
        )),
        c.threads.to_string(),
    ]
}

/// A fraction as Markdown shows it: `4.9 %` (CSV and JSON hold 0.049), or `–`.
fn percent(fraction: Option<f64>) -> String {
    match fraction.filter(|f| f.is_finite()) {
        Some(f) => format!("{} %", num(Some(f * 100.0), 1)),
        None => "–".to_string(),
    }
}

/// The row of a cell that could not run: its reason where the median would be, `–` elsewhere.
fn failed_row(s: &Snapshot, f: &FailedCell, columns: usize) -> Vec<String> {
    let mut row = vec![
        escape(&row_label(s, (f.set, f.threads, &[]), f.rerun, &f.label)),
        f.threads.to_string(),
        format!("FAILED: {}", escape(&f.reason)),
    ];
    row.resize(columns.max(row.len()), "–".to_string());
    row
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

/// The NUMA matrix as a table: a row per CPU node, a column per memory node, median GB/s.
fn matrix_section(s: &Snapshot, out: &mut String) {
    let Some(m) = &s.matrix else {
        return;
    };
    let _ = write!(
        out,
        "
## NUMA matrix

Median GB/s of all {} of each CPU node (a row) streaming \
         arrays bound to each memory node (a column).

",
        threads_phrase(m.threads)
    );
    let mut head = vec!["CPU node \\ memory node".to_string()];
    head.extend(m.mem_nodes.iter().map(|n| format!("node {n}")));
    out.push_str(&table_line(&head));
    out.push('\n');
    out.push_str(&separator(head.len()));
    out.push('\n');
    for &cpu in &m.cpu_nodes {
        let mut row = vec![format!("node {cpu}")];
        row.extend(m.mem_nodes.iter().map(|&mem| {
            let v = m.cell(cpu, mem).and_then(|c| c.median_gbs);
            strike_if(s, num(v, 1))
        }));
        out.push_str(&table_line(&row));
        out.push('\n');
    }
    if let Some(note) = &m.note {
        let _ = writeln!(out, "\nNote: {note}.");
    }
}

/// A figure of an `--oversubscribe` run, struck through: it is not a measurement.
fn strike_if(s: &Snapshot, text: String) -> String {
    if s.info.not_a_measurement.is_some() && text != "–" {
        format!("~~{text}~~")
    } else {
        text
    }
}

/// The columns the compact table keeps: working set, threads, median, best, cv and the
/// fraction of the vendor figure (the first six of the full table).
const COMPACT_COLUMNS: usize = 6;

/// The Markdown snapshot: header lines, the per-cell table, the derived table.
pub fn to_markdown(s: &Snapshot) -> String {
    let s = &*s.printable();
    if s.is_latency_run() {
        return latency::latency_markdown(s);
    }
    let mut out = String::new();
    // A loaded-latency run has its curve and no cells (so no checksum to speak of).
    let loaded = s.cells.is_empty() && !s.loaded_latency.is_empty();
    let checksums = checksum_line(s);
    for line in header_lines(s) {
        if loaded && line == checksums {
            continue;
        }
        out.push_str(&line);
        out.push_str("\n\n");
    }
    if loaded {
        out.push_str(&crate::show::report::loaded::markdown(s));
        return out;
    }
    push_tables(&mut out, s, usize::MAX);
    push_cliffs(&mut out, &s.of_op(&s.primary_op()));
    if !s.derived.is_empty() {
        out.push_str("\n| derived | value | unit |\n|---|---|---|\n");
        for d in &s.derived {
            out.push_str(&table_line(&[
                escape(&d.name),
                strike_if(s, d.unit.format(d.value)),
                d.unit.name().to_string(),
            ]));
            out.push('\n');
        }
    }
    matrix_section(s, &mut out);
    groups_section(s, &mut out);
    contention_section(s, &mut out);
    out
}

/// The cells' threads per NUMA node and per core type, a column per group; nothing on a
/// machine with one node and one core type.
fn groups_section(s: &Snapshot, out: &mut String) {
    let mut keys: Vec<GroupKey> = Vec::new();
    for g in s.cells.iter().flat_map(|c| &c.groups) {
        if !keys.contains(&g.group) {
            keys.push(g.group);
        }
    }
    if keys.is_empty() {
        return;
    }
    out.push_str("\n## Per NUMA node and core type\n\n");
    out.push_str(
        "Each group's GB/s is the median over rounds of the sum of its threads' own rates; in \
         brackets its threads × the median rate of one.\n\n",
    );
    let mut head = vec!["cell".to_string(), "threads".to_string()];
    head.extend(keys.iter().map(|k| k.name()));
    out.push_str(&table_line(&head));
    out.push('\n');
    out.push_str(&separator(head.len()));
    out.push('\n');
    for c in s
        .cells_in_table_order()
        .into_iter()
        .filter(|c| !c.groups.is_empty())
    {
        let mut row = row_head(s, c);
        row.extend(keys.iter().map(|k| {
            c.groups
                .iter()
                .find(|g| g.group == *k)
                .map_or("–".to_string(), |g| {
                    format!("{:.1} ({} × {:.2})", g.gbs, g.threads, g.per_thread_gbs)
                })
        }));
        out.push_str(&table_line(&row));
        out.push('\n');
    }
}

/// The live monitor's contention episodes as a table, and its event log as a list; nothing
/// for a headless run.
fn contention_section(s: &Snapshot, out: &mut String) {
    if !s.contention.is_empty() {
        out.push_str("\n## Contention\n\n");
        let head = [
            "cell",
            "from",
            "to",
            "duration",
            "reference GB/s",
            "below it",
            "at worst",
            "suspects",
        ];
        out.push_str(&table_line(&head.map(String::from)));
        out.push('\n');
        out.push_str(&separator(head.len()));
        out.push('\n');
        for e in &s.contention {
            let suspects: Vec<String> = e
                .suspects
                .iter()
                .filter(|p| p.score > 0.0)
                .take(3)
                .map(|p| {
                    let name = if p.stream_top {
                        "another stream-top"
                    } else {
                        p.comm.as_str()
                    };
                    let user = p
                        .user
                        .as_deref()
                        .map(|u| format!(" ({u})"))
                        .unwrap_or_default();
                    format!(
                        "PID {} {name}{user}, CPU {:.0}→{:.0} %",
                        p.pid,
                        p.cpu_before_cores * 100.0,
                        p.cpu_cores * 100.0
                    )
                })
                .collect();
            let suspects = if suspects.is_empty() {
                "none found".to_string()
            } else {
                format!("{} ({})", suspects.join("; "), e.basis)
            };
            let end = match (&e.end, e.cut_short) {
                (None, _) => "lasting".to_string(),
                (Some(t), false) => display(t),
                (Some(t), true) => format!("{} (reset)", display(t)),
            };
            out.push_str(&table_line(&[
                escape(&format!("{} × {}", e.set_label, e.threads)),
                display(&e.start),
                end,
                format!("{:.0} s", e.duration_s),
                format!("{:.2} ({})", e.reference_gbs, e.reference_source),
                format!("{:.0} %", e.depth * 100.0),
                format!("{:.0} %", e.worst_depth * 100.0),
                escape(&suspects),
            ]));
            out.push('\n');
        }
    }
    if !s.log.is_empty() {
        out.push_str("\n## Event log\n\n");
        // A folded line's text says its count.
        for l in &s.log {
            out.push_str(&format!("- {} {}\n", l.time, l.text));
        }
    }
}

/// The short form for a README (`--readme-style compact`): the first line, the machine and
/// kernel, the notes, and the table's first six columns; no derived table.
pub fn to_markdown_compact(s: &Snapshot) -> String {
    let s = &*s.printable();
    // The latency table is already compact.
    if s.is_latency_run() {
        return latency::latency_markdown(s);
    }
    let lines = header_lines(s);
    let keep = |l: &&String| {
        l.starts_with("Machine: ") || l.starts_with("Kernel: ") || l.starts_with(PARTIAL_MARK)
    };
    let mut out = String::new();
    let firsts = lines.first().into_iter().chain(lines.iter().filter(keep));
    for line in firsts.chain(no_effect_lines(s).iter()) {
        out.push_str(line);
        out.push_str("\n\n");
    }
    push_tables(&mut out, s, COMPACT_COLUMNS);
    push_cliffs(&mut out, &s.of_op(&s.primary_op()));
    out
}

/// The per-cell table and what says its figures cannot be trusted: of one op as it always
/// was; of several, a table per op under a heading that names it, its loop and its bytes.
fn push_tables(out: &mut String, s: &Snapshot, columns: usize) {
    let ops = s.ops();
    if ops.len() < 2 {
        push_cell_table(out, s, columns);
        push_judgement_lines(out, s);
        return;
    }
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "### {}\n\n", escape(&op_heading(op)));
        let view = s.of_op(op);
        push_cell_table(out, &view, columns);
        push_judgement_lines(out, &view);
    }
}

/// A size sweep's cliffs under its table, one per line, with the rule that found them; a
/// snapshot that is not a size sweep says nothing.
fn push_cliffs(out: &mut String, s: &Snapshot) {
    if size_sweep(s).is_none() {
        return;
    }
    let rule = format!(
        "drop of more than {:.0} % between neighbouring sizes (each side's level the median \
         of up to {WINDOW} sizes; on a noisy curve, more than {NOISE_FACTOR:.0} × its median \
         step)",
        MIN_DROP * 100.0
    );
    if s.cliffs.is_empty() {
        let _ = write!(out, "\nCliffs: none found, no {rule}.");
        let raised: Vec<String> = raised_thresholds(s)
            .into_iter()
            .map(|(t, x)| format!("{:.0} % at {}", x * 100.0, threads_phrase(t)))
            .collect();
        if !raised.is_empty() {
            let _ = write!(
                out,
                " The curves' own scatter raised that to {}: too noisy to place a cache edge.",
                raised.join(", ")
            );
        }
        out.push('\n');
        return;
    }
    let _ = write!(
        out,
        "\nCliffs, each a {rule}, named after the nearest cache edge (where three arrays fill \
         the level):\n\n"
    );
    for c in &s.cliffs {
        let _ = writeln!(out, "- {}", cliff_line(c));
    }
}

/// The per-cell table, its first `columns` columns, with a row per cell that could not run.
fn push_cell_table(out: &mut String, s: &Snapshot, columns: usize) {
    // Files from before the choice have no loop per cell: their table stays as it was.
    let loops = s.cells.iter().any(|c| c.choice.is_some());
    let mut header = table_header(s);
    if loops {
        header.extend([
            "loop, pages".to_string(),
            "against the runner-up".to_string(),
        ]);
    }
    header.truncate(columns);
    let counters = CounterColumns::of(s);
    out.push_str(&table_line(&header));
    out.push('\n');
    out.push_str(&separator(header.len()));
    out.push('\n');
    for row in s.table_rows() {
        let mut row = match row {
            TableRow::Cell(c) => {
                let mut row = table_row(s, c, counters);
                if loops {
                    let ch = c.choice.as_ref();
                    row.push(ch.map_or("–".into(), |ch| escape(&choice_kept(ch))));
                    row.push(
                        ch.and_then(choice_versus)
                            .map_or("–".into(), |v| escape(&v)),
                    );
                }
                row
            }
            TableRow::Failed(f) => failed_row(s, f, header.len()),
        };
        row.truncate(columns);
        out.push_str(&table_line(&row));
        out.push('\n');
    }
    if s.cells.is_empty() && s.failed.is_empty() {
        out.push_str("\nNo cell has a timed round yet.\n");
    }
    // The column's footnote, where the table kept the column.
    if header.get(PORT_LIMIT_AT).map(String::as_str) == Some(port_limit::HEADER)
        && let Some(line) = port_limit::line(s)
    {
        out.push('\n');
        out.push_str(&line);
        out.push('\n');
    }
}

/// Below the table, what says a figure cannot be trusted: the noisy cells and the rerun's
/// drift, each only when there is something to say (the compact form keeps them too).
fn push_judgement_lines(out: &mut String, s: &Snapshot) {
    for line in [noisy_line(s), drift_line(s)].into_iter().flatten() {
        out.push('\n');
        out.push_str(&line);
        out.push('\n');
    }
}
