//! The Markdown snapshot: the lines the seed README prints above its tables, its per-cell table
//! (with bytes/cycle and checksum columns added) and its derived table, ready to paste.

use super::cliffs::{MIN_DROP, NOISE_FACTOR, WINDOW, cliff_line, raised_thresholds};
use super::lines::{
    choice_by_name, choice_kept, choice_line, choice_versus, clock_line, host_line, isa_name,
    machine_line, pages_words, pin_line, set_label_on, stores_name, vendor_line,
};
use super::model::{
    ArraySize, CellCounters, CellSnapshot, CycleSource, FailedCell, GroupKey, Pages, RERUN_SUFFIX,
    Snapshot, TableRow, WorkingSet,
};
use super::sweep::{SizeKind, size_sweep};
use super::text::{cell_name, cpu_ranges, gbs_plain, num, threads_phrase};
use crate::base::time::display;
use crate::base::units::format_bytes;
use std::collections::BTreeSet;
use std::fmt::Write;

/// The counter columns a snapshot's table has: those its run counted in some cell.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CounterColumns {
    ghz: bool,
    ipc: bool,
    switches: bool,
    llc: bool,
}

impl CounterColumns {
    pub(crate) fn of(s: &Snapshot) -> CounterColumns {
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
pub(crate) fn table_header(s: &Snapshot) -> Vec<String> {
    let vendor_gbs = s.vendor_gbs();
    let fraction = match vendor_gbs {
        Some(v) => format!("% of {}", gbs_plain(v)),
        None => "% of vendor figure".to_string(),
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
        "disturbed rounds",
        "bytes/cycle",
        "checksum",
        "95 % CI of median GB/s",
    ]
    .iter()
    .chain(CounterColumns::of(s).header().iter())
    .map(|s| s.to_string())
    .collect()
}

/// A row's label as the table shows it: the set's label with, for an explicit size, the level
/// it lands in (`64 MB, past L3 (48 MiB): dram`), and `, run again last` on the rerun row.
fn row_label(s: &Snapshot, set: usize, rerun: bool, stored: &str) -> String {
    let Some(ws) = s.grid.sets.get(set) else {
        return stored.to_string();
    };
    let label = set_label_on(ws, &s.info.topology);
    if rerun {
        format!("{label}{RERUN_SUFFIX}")
    } else {
        label
    }
}

/// The interval of the median, `50.1–53.2`; `–` under 6 rounds.
pub(crate) fn interval(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([l, h]) => format!("{}–{}", num(Some(l), 1), num(Some(h), 1)),
        None => "–".to_string(),
    }
}

/// One row of the per-cell table, cell by cell as the header names them.
pub(crate) fn table_row(s: &Snapshot, c: &CellSnapshot, counters: CounterColumns) -> Vec<String> {
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
    let mut row = vec![
        escape(&row_label(s, c.set, c.rerun, &c.label)),
        c.threads.to_string(),
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
    ];
    row.extend(counters.row(f.counters.as_ref()));
    // An --oversubscribe run's figures, not its label, threads, round counts or checksum.
    for (i, cell) in row.iter_mut().enumerate().skip(2) {
        if ![9, 10, 12].contains(&i) {
            *cell = strike_if(s, std::mem::take(cell));
        }
    }
    row
}

/// A fraction as Markdown shows it: `4.9 %` (CSV and JSON hold 0.049), or `–`.
pub(crate) fn percent(fraction: Option<f64>) -> String {
    match fraction.filter(|f| f.is_finite()) {
        Some(f) => format!("{} %", num(Some(f * 100.0), 1)),
        None => "–".to_string(),
    }
}

/// The duty cycle as `--duty` took it: `100 %`, `50 %`.
pub(crate) fn duty_percent(duty: f64) -> String {
    format!("{:.0} %", duty * 100.0)
}

/// The row of a cell that could not run: its reason where the median would be, `–` elsewhere.
fn failed_row(s: &Snapshot, f: &FailedCell, columns: usize) -> Vec<String> {
    let mut row = vec![
        escape(&row_label(s, f.set, f.rerun, &f.label)),
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

/// The lines above the tables, one paragraph each.
pub(crate) fn header_lines(s: &Snapshot) -> Vec<String> {
    let info = &s.info;
    let mut lines = Vec::new();

    let mut first = format!("stream-top {} on {}", info.version, info.hostname);
    if let Some(name) = &info.name {
        let _ = write!(first, ", run `{}`", name.replace('`', "'"));
    }
    let _ = write!(first, ", snapshot taken {}", display(&s.taken));
    match s.run_seconds {
        Some(secs) => {
            let _ = write!(first, ", {secs} s after the run started");
        }
        None => {
            let _ = write!(first, " (run started {})", display(&info.started));
        }
    }
    if !info.command_line.trim().is_empty() {
        let _ = write!(first, ": `{}`", info.command_line.trim().replace('`', "'"));
    }
    lines.push(first);
    if let Some(why) = &info.not_a_measurement {
        lines.push(format!(
            "**Not a measurement.** {why}: every figure below is struck through."
        ));
    }

    lines.push(format!("Machine: {}.", machine_line(&info.topology)));
    if let Some(mut line) = info.container.and_then(|c| c.line()) {
        line[..1].make_ascii_uppercase();
        lines.push(format!("{line}."));
    }
    lines.push(match &info.selection {
        None => format!(
            "Kernel: {} triad, {}.",
            isa_name(info.kernel.isa),
            stores_name(info.kernel.stores)
        ),
        Some(sel) => format!(
            "Kernel: --kernel {} --huge-pages {}, {}.",
            sel.kernel,
            sel.huge_pages,
            stores_name(info.kernel.stores)
        ),
    });
    if let Some(line) = choices_line(s) {
        lines.push(line);
    }
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
    if let Some(line) = pages_line(s) {
        lines.push(line);
    }
    if let Some(line) = counters_line(s) {
        lines.push(line);
    }
    lines.push(checksum_line(s));
    lines.extend(no_effect_lines(s));
    lines
}

/// Each working set's loop and page layout and how they were settled; None for a file from
/// before the choice.
fn choices_line(s: &Snapshot) -> Option<String> {
    let mut seen = BTreeSet::new();
    let mut sets = Vec::new();
    for c in s.cells.iter().filter(|c| seen.insert(c.set)) {
        let Some(ch) = &c.choice else { continue };
        let mut how = format!(
            "loop by {}, pages by {}",
            choice_by_name(ch.kernel_by),
            choice_by_name(ch.layout_by)
        );
        if let Some(t) = &ch.trial {
            // "at 1 thread", "at 1 and 2 threads": the last count says the plural.
            let (last, before) = t.threads.split_last().unwrap_or((&0, &[]));
            let mut threads: Vec<String> = before.iter().map(|n| n.to_string()).collect();
            threads.push(threads_phrase(*last));
            let _ = write!(
                how,
                "; trial of {} candidates at {}, {} rounds each, {:.2} s, margin {:.1} %",
                t.candidates,
                threads.join(" and "),
                t.rounds,
                t.seconds,
                t.margin * 100.0
            );
        }
        sets.push(format!("{}: {}; {how}", c.set_label, choice_line(ch)));
    }
    (!sets.is_empty()).then(|| {
        format!(
            "Loop and page layout, chosen once per working set before its first round (trials \
             interleave every candidate at 1 thread and at the largest thread count, and keep \
             the default loop on huge pages unless another is faster by more than the margin): \
             {}.",
            sets.join("; ")
        )
    })
}

/// "Note: --pin spread changes nothing here: …", one per setting: the last lines above the
/// table, so they stand beside it.
pub(crate) fn no_effect_lines(s: &Snapshot) -> Vec<String> {
    let threads = s.info.threads_note.iter();
    let notes = s.info.no_effect.iter().map(|n| &n.text).chain(threads);
    notes
        .map(|text| format!("Note: {}.", text.trim_end_matches('.')))
        .collect()
}

/// "Counters: counted per thread: …; not counted: cycles, … — this VM exposes no hardware
/// counters …": said once, so a `–` in a counter column has its reason.
pub(crate) fn counters_line(s: &Snapshot) -> Option<String> {
    let c = s.info.counters.as_ref()?;
    let names = |v: &[String]| v.join(", ");
    let mut parts = Vec::new();
    if !c.counted.is_empty() {
        parts.push(format!(
            "counted per thread, just outside each timed span: {}",
            names(&c.counted)
        ));
    }
    for m in &c.missing {
        parts.push(format!(
            "not counted: {} — {}",
            names(&m.counters),
            m.reason
        ));
    }
    let source = if s
        .cells
        .iter()
        .any(|c| c.figures.bytes_per_cycle_from == Some(CycleSource::Counted))
    {
        "bytes/cycle is bytes ÷ the cycles counted on the workers"
    } else {
        "bytes/cycle uses the clock estimate"
    };
    Some(format!("Counters: {}; {source}.", parts.join("; ")))
}

/// A rerun that differs from its first run by more than this (relative) says the machine
/// changed during the run.
pub(crate) const DRIFT: f64 = 0.05;

/// "Drift: …" when the configuration run again last differs from its first run by more than
/// `DRIFT`, with the rank test's verdict on the two; None otherwise.
pub(crate) fn drift_line(s: &Snapshot) -> Option<String> {
    let again = s.cells.iter().find(|c| c.rerun)?;
    let first = s
        .cells
        .iter()
        .find(|c| !c.rerun && c.set == again.set && c.threads == again.threads)?;
    let (a, b) = (first.figures.median_gbs, again.figures.median_gbs);
    if !(a > 0.0 && b.is_finite()) || (b / a - 1.0).abs() <= DRIFT {
        return None;
    }
    let verdict = crate::judge::inference::judge(&first.rates(), &again.rates()).verdict;
    Some(format!(
        "Drift: {} run again last is {:+.1} % against its first run (over {:.0} %; rank test: \
         {}): the machine changed during the run, so cells measured at different times \
         compare with care.",
        cell_name(&first.label, first.threads),
        (b / a - 1.0) * 100.0,
        DRIFT * 100.0,
        verdict.word()
    ))
}

/// The cells whose figure cannot be trusted, with why; None when there are none.
pub(crate) fn noisy_line(s: &Snapshot) -> Option<String> {
    let noisy: Vec<String> = s
        .cells_in_table_order()
        .into_iter()
        .filter(|c| !c.figures.noisy.is_empty())
        .map(|c| {
            format!(
                "{}: {}",
                cell_name(&c.label, c.threads),
                c.figures.noisy.join(", ")
            )
        })
        .collect();
    (!noisy.is_empty()).then(|| format!("Noisy: {}.", noisy.join("; ")))
}

fn pinning_line(s: &Snapshot) -> String {
    let cpus: BTreeSet<i32> = s
        .cells
        .iter()
        .flat_map(|c| c.cpus.iter().copied())
        .collect();
    let migrations: u64 = s.cells.iter().map(|c| c.migrations).sum();
    let mut line = format!("Pinning: {}", pin_line(s.info.pin));
    if let Some(placement) = &s.info.placement {
        // No CPU could be chosen or read: nothing to say about CPUs or migrations.
        let _ = write!(line, "; placement is {placement}.");
        return line;
    }
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
         {} ms, duty {}), after warm-up rounds covering at least 100 ms and numbering at least \
         3; the best round is what STREAM would report. Fastest and slowest thread are the \
         medians of each round's quickest and slowest partition; scaling is against one thread \
         over the same working set; a round has a late thread when its span exceeds the slowest \
         thread's own time by more than 20 %, and is disturbed when a worker was switched out \
         for over 1 % of its span, the span exceeds 1.5× the cell's median or a thread fell \
         under half its own median rate (neither is left out of the median); the 95 % interval \
         of the median is from order statistics; bytes/cycle is GB/s ÷ GHz ÷ threads. The \
         single-thread cache configuration runs first and again last.",
        s.info.rounds,
        s.info.round_ms,
        duty_percent(s.info.duty)
    )
}

fn sets_line(s: &Snapshot) -> String {
    // A size sweep's sizes are said once, as the sweep; the other sets one by one.
    let sweep = size_sweep(s);
    let in_sweep = |set: &WorkingSet| {
        set.level.is_none() && sweep.is_some_and(|k| SizeKind::of(set.size).0 == k)
    };
    let swept: Vec<&WorkingSet> = s.grid.sets.iter().filter(|w| in_sweep(w)).collect();
    let sweep_item = sweep.map(|kind| {
        let name = |w: Option<&&WorkingSet>| {
            w.map_or(String::new(), |w| {
                w.name.trim_end_matches("/thread").to_string()
            })
        };
        let (first, last) = (
            name(swept.iter().min_by_key(|w| SizeKind::of(w.size).1)),
            name(swept.iter().max_by_key(|w| SizeKind::of(w.size).1)),
        );
        let what = match kind {
            SizeKind::PerThread => {
                "each thread streams its own slice of each size, repeated for the round"
            }
            SizeKind::Split => "arrays of each size split into one contiguous partition per thread",
        };
        let per = match kind {
            SizeKind::PerThread => " per thread",
            SizeKind::Split => "",
        };
        format!(
            "a size sweep of {} sizes from {first} to {last}{per}, spaced evenly on a log \
             scale: {what}; each row says where its three arrays land",
            swept.len()
        )
    });
    let sets: Vec<String> = sweep_item
        .into_iter()
        .chain(s.grid.sets.iter().filter(|w| !in_sweep(w)).map(|set| {
            // An explicit size in the user's own spelling; a level's size as it was computed.
            let size = |b: u64| match set.level {
                None => set.name.trim_end_matches("/thread").to_string(),
                Some(_) => format_bytes(b),
            };
            let what = match set.size {
                ArraySize::PerThread(b) => format!(
                    "each thread streams its own {} of each array, repeated for the round",
                    size(b)
                ),
                ArraySize::Split(b) => format!(
                    "arrays of {} split into one contiguous partition per thread",
                    size(b)
                ),
            };
            let label = set_label_on(set, &s.info.topology);
            match &set.note {
                Some(note) => format!("{label}: {what}; note: {note}"),
                None => format!("{label}: {what}"),
            }
        }))
        .collect();
    if sets.is_empty() {
        return "Working sets: none.".to_string();
    }
    let mut line = format!("Working sets: {}.", sets.join("; "));
    if s.grid.sets.iter().any(|set| set.level.is_none()) {
        line.push_str(
            " An explicit size lands in the first cache level that holds its three arrays: a \
             SIZE/thread set against the level's share per CPU, a SIZE set against all of the \
             level's caches (every CPU running a thread).",
        );
    }
    line
}

fn huge_pages_line(s: &Snapshot) -> String {
    let cells: Vec<&CellSnapshot> = s.cells.iter().filter(|c| c.array_bytes > 0).collect();
    if let Some(why) = &s.info.huge_pages {
        return format!("Huge pages: {why}.");
    }
    if cells.is_empty() {
        return "Huge pages: not reported.".to_string();
    }
    // A figure that could not be read stays unknown: it is never summed as 0.
    let known: Vec<(u64, u64)> = cells
        .iter()
        .filter_map(|c| c.huge_bytes.map(|h| (h.min(c.array_bytes), c.array_bytes)))
        .collect();
    let unknown = cells.len() - known.len();
    if known.is_empty() {
        return "Huge pages: unknown (/proc/self/smaps could not be read).".to_string();
    }
    let total: u64 = known.iter().map(|k| k.1).sum();
    let huge: u64 = known.iter().map(|k| k.0).sum();
    let mut line = format!(
        "Huge pages: {} of the arrays' {} ({:.0} %, summed over the configurations) sat on \
         transparent huge pages",
        format_bytes(huge),
        format_bytes(total),
        huge as f64 * 100.0 / total as f64
    );
    if unknown > 0 {
        let _ = write!(
            line,
            "; unknown for {} (/proc/self/smaps could not be read)",
            plural_cfg(unknown)
        );
    }
    line.push('.');
    line
}

/// Where the arrays' pages came from and where a sample of each cell's sat: "Pages bound to
/// node 0 (--membind 0); every sampled page … on the node meant for it in every cell", or the
/// cells where not, by name. None when nothing was chosen or sampled (macOS, older files).
fn pages_line(s: &Snapshot) -> Option<String> {
    let mut parts: Vec<String> = s.info.numa.iter().cloned().collect();
    let sampled: Vec<(&CellSnapshot, &Pages)> = s
        .cells
        .iter()
        .filter_map(|c| c.pages.as_ref().map(|p| (c, p)))
        .collect();
    let off: Vec<String> = sampled
        .iter()
        .filter(|(_, p)| p.share_on_meant().is_some_and(|x| x < 1.0))
        .map(|(c, p)| format!("{}: {}", cell_name(&c.label, c.threads), pages_words(p)))
        .collect();
    let finding = if !off.is_empty() {
        Some(format!(
            "sampled pages off the node meant for them in {}",
            off.join("; ")
        ))
    } else if sampled.iter().any(|(_, p)| p.meant > 0) {
        Some(
            "every sampled page (move_pages on a sample of each partition) on the node meant \
             for it in every cell"
                .to_string(),
        )
    } else {
        sampled
            .first()
            .map(|(c, p)| format!("{}: {}", cell_name(&c.label, c.threads), pages_words(p)))
    };
    match (parts.is_empty(), finding) {
        (true, None) => return None,
        (true, Some(f)) => parts.push(format!("pages: {f}")),
        (false, Some(f)) => parts.push(f),
        (false, None) => {}
    }
    let mut line = format!("{}.", parts.join("; "));
    line[..1].make_ascii_uppercase();
    Some(line)
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

/// "checksums: every configuration produced the reference sum of a", or the failures by name.
pub(crate) fn checksum_line(s: &Snapshot) -> String {
    let failed: Vec<&CellSnapshot> = s
        .cells
        .iter()
        .filter(|c| c.checksum_failures > 0 || c.checksum.as_ref().is_some_and(|k| !k.ok))
        .collect();
    let unchecked = s.cells.iter().filter(|c| c.checksum.is_none()).count();
    let ok = s.cells.len() - failed.len() - unchecked;
    if s.cells.is_empty() && s.failed.is_empty() {
        return "checksums: no configuration has finished yet".to_string();
    }
    let mut line = if s.cells.is_empty() {
        "checksums: no configuration ran".to_string()
    } else if failed.is_empty() {
        if unchecked == 0 && s.failed.is_empty() {
            "checksums: every configuration produced the reference sum of a".to_string()
        } else if unchecked == 0 {
            format!(
                "checksums: every configuration that ran ({}) produced the reference sum of a",
                plural_cfg(ok)
            )
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
                    cell_name(&c.label, c.threads),
                    k.actual,
                    k.expected
                ),
                _ => format!(
                    "{} (failed in an earlier visit)",
                    cell_name(&c.label, c.threads)
                ),
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
    if !s.failed.is_empty() {
        let names: Vec<String> = s
            .failed
            .iter()
            .map(|f| cell_name(&f.label, f.threads))
            .collect();
        let _ = write!(
            line,
            "; {} could not run: {}",
            plural_cfg(s.failed.len()),
            names.join(", ")
        );
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

/// The columns the compact table keeps: working set, threads, median, best, cv and the
/// fraction of the vendor figure (the first six of the full table).
const COMPACT_COLUMNS: usize = 6;

/// The Markdown snapshot: header lines, the per-cell table, the derived table.
pub fn to_markdown(s: &Snapshot) -> String {
    let mut out = String::new();
    for line in header_lines(s) {
        out.push_str(&line);
        out.push_str("\n\n");
    }
    push_cell_table(&mut out, s, usize::MAX);
    push_cliffs(&mut out, s);
    push_judgement_lines(&mut out, s);
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
        let mut row = vec![
            escape(&row_label(s, c.set, c.rerun, &c.label)),
            c.threads.to_string(),
        ];
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
        for l in &s.log {
            let count = if l.count > 1 {
                format!(" (×{})", l.count)
            } else {
                String::new()
            };
            out.push_str(&format!("- {} {}{count}\n", l.time, l.text));
        }
    }
}

/// The short form for a README (`--readme-style compact`): the first line, the machine and
/// kernel, the notes, and the table's first six columns; no derived table.
pub fn to_markdown_compact(s: &Snapshot) -> String {
    let lines = header_lines(s);
    let keep = |l: &&String| l.starts_with("Machine: ") || l.starts_with("Kernel: ");
    let mut out = String::new();
    let firsts = lines.first().into_iter().chain(lines.iter().filter(keep));
    for line in firsts.chain(no_effect_lines(s).iter()) {
        out.push_str(line);
        out.push_str("\n\n");
    }
    push_cell_table(&mut out, s, COMPACT_COLUMNS);
    push_cliffs(&mut out, s);
    push_judgement_lines(&mut out, s);
    out
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
