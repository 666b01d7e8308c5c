//! The sentences of the Markdown snapshot: the paragraphs above its tables (who ran what, on
//! which machine, how it was measured, the load, pages, counters and checksums) and the
//! judgements below them (noisy cells, drift). Each is one function of the snapshot, so the
//! compact form and `compare` say the same words.

use crate::base::time::display;
use crate::base::units::format_bytes;
use crate::engine::kernel::Op;
use crate::show::report::lines::{
    choice_by_name, choice_line, clock_line, host_line, isa_name, machine_line, pages_words,
    pin_line, set_label_on, stores_name, vendor_line,
};
use crate::show::report::model::{
    ArraySize, CellSnapshot, CycleSource, Pages, Snapshot, WorkingSet,
};
use crate::show::report::sweep::{SizeKind, size_sweep};
use crate::show::report::text::{cell_name, cpu_ranges, threads_phrase};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The duty cycle as `--duty` took it: `100 %`, `50 %`.
pub(crate) fn duty_percent(duty: f64) -> String {
    format!("{:.0} %", duty * 100.0)
}

/// The first line of a snapshot: who ran what, where, when, with which command line.
/// `**Partial run:** stopped by SIGTERM after …`: a latency run a signal ended.
pub(crate) fn partial_line(s: &Snapshot) -> Option<String> {
    s.partial
        .as_ref()
        .map(|why| format!("{PARTIAL_MARK} {why}."))
}

/// How a Markdown page begins the line of a run a signal ended.
pub(crate) const PARTIAL_MARK: &str = "**Partial run:**";

pub(crate) fn run_line(s: &Snapshot) -> String {
    let info = &s.info;
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
    first
}

/// The lines above the tables, one paragraph each.
pub(super) fn header_lines(s: &Snapshot) -> Vec<String> {
    let info = &s.info;
    let mut lines = vec![run_line(s)];
    if let Some(why) = &info.not_a_measurement {
        lines.push(format!(
            "**Not a measurement.** {why}: every figure below is struck through."
        ));
    }
    lines.extend(partial_line(s));

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
    if let Some(file) = &info.choices_from {
        lines.push(format!(
            "Loops and page layouts: reused from {file} (--choices-from), no trial."
        ));
    }
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
/// table, so they stand beside it (and the first notes under the SVG chart).
pub(crate) fn no_effect_lines(s: &Snapshot) -> Vec<String> {
    let threads = s.info.threads_note.iter();
    let notes = s.info.no_effect.iter().map(|n| &n.text).chain(threads);
    notes
        .map(|text| format!("Note: {}.", text.trim_end_matches('.')))
        .collect()
}

/// "Counters: counted per thread: …; not counted: cycles, … — this VM exposes no hardware
/// counters …": said once, so a `–` in a counter column has its reason.
fn counters_line(s: &Snapshot) -> Option<String> {
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
const DRIFT: f64 = 0.05;

/// "Drift: …" when the configuration run again last differs from its first run by more than
/// `DRIFT`, with the rank test's verdict on the two; None otherwise.
pub(super) fn drift_line(s: &Snapshot) -> Option<String> {
    let again = s.cells.iter().find(|c| c.rerun)?;
    let first = s.cells.iter().find(|c| {
        !c.rerun && c.op == again.op && c.set == again.set && c.threads == again.threads
    })?;
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
pub(super) fn noisy_line(s: &Snapshot) -> Option<String> {
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
        "{}, decimal GB/s. Median over {rounds} per cell (--rounds {}, rounds of at least \
         {} ms, duty {}), after warm-up rounds covering at least 100 ms and numbering at least \
         3; the best round is what STREAM would report. Fastest and slowest thread are the \
         medians of each round's quickest and slowest partition; scaling is against one thread \
         over the same working set; a round has a late thread when its span exceeds the slowest \
         thread's own time by more than 20 %, and is disturbed when a worker was switched out \
         for over 1 % of its span, the span exceeds 1.5× the cell's median or a thread fell \
         under half its own median rate (neither is left out of the median); the 95 % interval \
         of the median is from order statistics; bytes/cycle is GB/s ÷ GHz ÷ threads. The \
         single-thread cache configuration runs first and again last.",
        ops_phrase(s),
        s.info.rounds,
        s.info.round_ms,
        duty_percent(s.info.duty)
    )
}

/// What the workers ran: the triad as STREAM's, or each op with its bytes per element.
fn ops_phrase(s: &Snapshot) -> String {
    let ops: Vec<Op> = s.ops().iter().filter_map(|n| n.parse().ok()).collect();
    if ops.is_empty() || ops == [Op::Triad] {
        return "STREAM triad a[i] = b[i] + s*c[i] over three float64 arrays, 24 bytes counted \
                per element"
            .into();
    }
    let each: Vec<String> = ops
        .iter()
        .map(|op| format!("{op} ({}, {} bytes)", op.formula(), op.bytes_per_element()))
        .collect();
    format!(
        "Ops {} over float64 arrays, bytes counted per element the STREAM way (what the loop \
         reads and writes; not the write-allocate reads of normal stores)",
        each.join(", ")
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
             level's caches (every CPU running a thread); a row of the table, against the \
             caches its own threads reach.",
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

/// "checksums: every configuration produced the reference sum of array a", or the failures by name.
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
            "checksums: every configuration produced the reference sum of array a".to_string()
        } else if unchecked == 0 {
            format!(
                "checksums: every configuration that ran ({}) produced the reference sum of array a",
                plural_cfg(ok)
            )
        } else {
            format!(
                "checksums: {} produced the reference sum of array a; {} not checked yet",
                plural_cfg(ok),
                plural_cfg(unchecked)
            )
        }
    } else {
        let names: Vec<String> = failed
            .iter()
            .map(|c| match &c.checksum {
                Some(k) if !k.ok => format!(
                    "{} (sum of array a {} against the reference {})",
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
            "checksums: FAILED for {}; {} produced the reference sum of array a",
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
