//! The CSV snapshot: one row per cell (in the Markdown table's order), every figure, plain
//! numbers for scripts in the JSON's units (GB/s, bytes, fractions from 0: cv 0.049, not 4.9);
//! a cell that could not run has its reason in `failed` and its figures empty.
//! Quoting follows RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.

use super::lines::{choice_by_name, level_name};
use super::model::{
    ArraySize, CellCounters, CellSnapshot, CycleSource, FailedCell, Level, Snapshot, TableRow,
    WorkingSet,
};
use super::printable::printable;

/// The header row's fields, in order.
pub const CSV_COLUMNS: [&str; 50] = [
    "label",
    "set_label",
    "set_name",
    "level",
    "lands_in",
    "size_kind",
    "size_bytes",
    "threads",
    "rerun",
    "rounds",
    "median_gbs",
    "best_gbs",
    "cv",
    "vendor_gbs",
    "vendor_fraction",
    "scaling",
    "fastest_thread_gbs",
    "slowest_thread_gbs",
    "late_rounds",
    "bytes_per_cycle",
    "checksum_ok",
    "checksum_expected",
    "checksum_actual",
    "checksum_failures",
    "cpus",
    "migrations",
    "array_bytes",
    "huge_bytes",
    "disturbed_rounds",
    "median_ci_low_gbs",
    "median_ci_high_gbs",
    "bytes_per_cycle_from",
    "ghz",
    "ipc",
    "switches_per_round",
    "migrations_per_round",
    "page_faults_per_round",
    "llc_misses_per_kib",
    "noisy",
    // The loop and page layout (empty in files from before the choice).
    "loop",
    "huge_pages_advised",
    "loop_by",
    "pages_by",
    "runner_up_loop",
    "runner_up_huge_pages",
    "runner_up_ratio",
    "trial_seconds",
    // Per NUMA node and core type (empty on one node and one core type): `node 0: 64 × 1.54 =
    // 97.9; node 1: …`, each group's threads, one thread's median GB/s and their sum's median.
    "groups",
    "failed",
    // The op the cell ran (schema 4): after every older column, so scripts that read them by
    // position read them as before.
    "op",
];

/// A field: printable (a control character acts in the terminal a CSV is shown in), and
/// quoted when the text as given holds a comma, a quote or a line break.
pub(crate) fn field(text: &str) -> String {
    let quoted = text.contains([',', '"', '\n', '\r']);
    let text = printable(text);
    if quoted {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.into_owned()
    }
}

/// A number as Rust prints it (shortest form that reads back the same); empty when unknown.
fn number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => String::new(),
    }
}

fn size_fields(size: ArraySize) -> (&'static str, u64) {
    match size {
        ArraySize::PerThread(b) => ("per_thread", b),
        ArraySize::Split(b) => ("split", b),
    }
}

/// A cell that could not run: what names it, its reason last, every figure empty.
fn failed_row(f: &FailedCell, set: Option<&WorkingSet>) -> Vec<String> {
    let mut row = vec![f.label.clone(), f.set_label.clone()];
    match set {
        Some(set) => {
            let (size_kind, size_bytes) = size_fields(set.size);
            row.extend([
                set.name.clone(),
                level_text(set.level),
                level_text(set.lands_in),
                size_kind.to_string(),
                size_bytes.to_string(),
            ]);
        }
        None => row.extend(std::iter::repeat_n(String::new(), 5)),
    }
    row.extend([f.threads.to_string(), f.rerun.to_string()]);
    row.resize(CSV_COLUMNS.len() - 2, String::new());
    row.push(f.reason.clone());
    row.push(f.op.clone());
    row
}

/// A cell's groups in one field: `node 0: 64 × 1.54 = 97.9; node 1: 64 × 1.54 = 97.7`.
fn groups_field(c: &CellSnapshot) -> String {
    c.groups
        .iter()
        .map(|g| {
            format!(
                "{}: {} × {} = {}",
                g.group.name(),
                g.threads,
                number(Some(g.per_thread_gbs)),
                number(Some(g.gbs))
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn level_text(level: Option<Level>) -> String {
    level.map(|l| level_name(l).to_string()).unwrap_or_default()
}

fn row(c: &CellSnapshot, set: Option<&WorkingSet>, vendor: Option<f64>) -> Vec<String> {
    let f = &c.figures;
    let (size_kind, size_bytes) = size_fields(c.size);
    let noisy = f.noisy.join("; ");
    let cpus: Vec<String> = c.cpus.iter().map(|c| c.to_string()).collect();
    let counted = |g: fn(&CellCounters) -> Option<f64>| f.counters.as_ref().and_then(g);
    let mut fields = vec![
        c.label.clone(),
        c.set_label.clone(),
        c.set_name.clone(),
        level_text(c.level),
        level_text(set.and_then(|s| s.lands_in)),
        size_kind.to_string(),
        size_bytes.to_string(),
        c.threads.to_string(),
        c.rerun.to_string(),
        f.rounds.to_string(),
        number(Some(f.median_gbs)),
        number(Some(f.best_gbs)),
        number(Some(f.cv)),
        number(vendor),
        number(f.vendor_fraction),
        number(f.scaling),
        number(Some(f.fastest_thread_gbs)),
        number(Some(f.slowest_thread_gbs)),
        f.late_rounds.to_string(),
        number(f.bytes_per_cycle),
        c.checksum
            .as_ref()
            .map(|k| (k.ok && c.checksum_failures == 0).to_string())
            .unwrap_or_default(),
        c.checksum
            .as_ref()
            .map(|k| k.expected.to_string())
            .unwrap_or_default(),
        number(c.checksum.as_ref().map(|k| k.actual)),
        c.checksum_failures.to_string(),
        cpus.join(" "),
        c.migrations.to_string(),
        c.array_bytes.to_string(),
        c.huge_bytes.map(|h| h.to_string()).unwrap_or_default(),
        f.disturbed_rounds.to_string(),
        number(f.median_ci_gbs.map(|ci| ci[0])),
        number(f.median_ci_gbs.map(|ci| ci[1])),
        // The JSON's words for the source.
        f.bytes_per_cycle_from
            .map_or("", cycles_from_word)
            .to_string(),
        number(counted(|k| k.ghz)),
        number(counted(|k| k.ipc)),
        number(counted(|k| k.switches_per_round)),
        number(counted(|k| k.migrations_per_round)),
        number(counted(|k| k.page_faults_per_round)),
        number(counted(|k| k.llc_misses_per_kib)),
        noisy,
    ];
    let ch = c.choice.as_ref();
    let up = ch.and_then(|ch| ch.runner_up.as_ref());
    fields.extend([
        ch.map(|ch| ch.variant.clone()).unwrap_or_default(),
        ch.map(|ch| ch.huge_pages.to_string()).unwrap_or_default(),
        ch.map(|ch| choice_by_name(ch.kernel_by).to_string())
            .unwrap_or_default(),
        ch.map(|ch| choice_by_name(ch.layout_by).to_string())
            .unwrap_or_default(),
        up.map(|u| u.variant.clone()).unwrap_or_default(),
        up.map(|u| u.huge_pages.to_string()).unwrap_or_default(),
        number(up.map(|u| u.ratio)),
        number(ch.and_then(|ch| ch.trial.as_ref()).map(|t| t.seconds)),
        groups_field(c),
        String::new(),
        c.op.clone(),
    ]);
    fields
}

/// The CSV snapshot: the header row, then one row per cell (a latency snapshot's own table,
/// `LATENCY_CSV_COLUMNS`, for `--measure latency`).
pub fn to_csv(s: &Snapshot) -> String {
    let s = &*s.printable();
    if s.is_latency_run() {
        return latency_csv(s);
    }
    // A loaded-latency run has its curve and no cells: its own table.
    if s.cells.is_empty() && !s.loaded_latency.is_empty() {
        return super::loaded::csv(s);
    }
    let mut out = String::new();
    let line = |fields: Vec<String>| {
        fields
            .iter()
            .map(|f| field(f))
            .collect::<Vec<_>>()
            .join(",")
            + "\n"
    };
    out.push_str(&line(CSV_COLUMNS.iter().map(|s| s.to_string()).collect()));
    for r in s.table_rows() {
        out.push_str(&line(match r {
            TableRow::Cell(c) => row(c, s.grid.sets.get(c.set), s.vendor_gbs()),
            TableRow::Failed(f) => failed_row(f, s.grid.sets.get(f.set)),
        }));
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("128 MiB (dram)"), "128 MiB (dram)");
        assert_eq!(field("a, run again last"), "\"a, run again last\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\\nlines\"");
        assert_eq!(field("\u{1b}]0;x\u{7}"), "\\u{1b}]0;x\\u{7}");
        assert_eq!(number(Some(0.1)), "0.1");
        assert_eq!(number(Some(f64::NAN)), "");
        assert_eq!(number(None), "");
    }
}
