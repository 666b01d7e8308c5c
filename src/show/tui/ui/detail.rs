//! The selected cell in detail: its contention state (against its reference: how deep, how
//! long, since when), its timeline, and every figure with its label and the sizing note; on a
//! machine with several NUMA nodes or core types, its threads per node and per core type.
//! While its working set's trial runs (before its first round), the trial and its progress.

use super::status::trial_words;
use super::text::{cpu_list, fig, flow, opt, wrap};
use super::theme;
use super::timeline::{self, Timeline};
use crate::base::units::format_bytes;
use crate::engine::events::Placement;
use crate::engine::plan::CellId;
use crate::judge::stats::{CellStats, Figures};
use crate::judge::watch::contention::State;
use crate::judge::watch::narrative::{self, gbs};
use crate::platform;
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Gauge, Paragraph, Widget};

pub(super) struct DetailPanel<'a>(pub &'a App);

/// The least width of each of two timelines side by side (the cell's and the probe's).
const PROBE_TIMELINE_W: u16 = 30;

impl Widget for DetailPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        if app.probe.alone {
            probe_alone(app, area, buf);
            return;
        }
        let cell = app.selected();
        let set = app.grid.sets.get(cell.set);
        let block = Block::bordered().title(Span::styled(title(app, cell), theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        let state = state_lines(app, cell, inner.width);
        let (Some(f), Some(stats)) = (app.figures(cell), app.board.cell(cell)) else {
            render_before_rounds(app, cell, state, inner, buf);
            return;
        };
        let mut items = run_items(app, cell, &f, stats);
        items.extend(counter_items(&f));
        items.extend(memory_items(app, cell, &f, stats));
        items.extend(baseline_items(app, cell));
        let mut lines = flow(items, inner.width);
        lines.extend(notes(&f, stats, set.and_then(|s| s.note.as_deref())));
        render_parts(app, cell, state, lines, inner, buf);
    }
}

/// The panel's title: the working set, the threads and the array size, or the cell's name.
fn title(app: &App, cell: CellId) -> String {
    match app.grid.sets.get(cell.set) {
        Some(s) => format!(
            " {} × {} · {} per array ",
            s.label(),
            crate::base::units::threads_phrase(cell.threads),
            format_bytes(s.array_bytes(cell.threads))
        ),
        None => format!(" {} ", app.cell_name(cell)),
    }
}

/// A cell without a timed round: its working set's trial and its progress while that runs,
/// else that it is warming up or waiting; its state below either.
fn render_before_rounds(app: &App, cell: CellId, state: Vec<Line>, inner: Rect, buf: &mut Buffer) {
    if let Some(t) = app.live.trial.filter(|t| t.set == cell.set) {
        let [bar, rest] =
            Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
        Gauge::default()
            .ratio(t.done.clamp(0.0, 1.0))
            .label(trial_words(app, &t, bar.width as usize))
            .gauge_style(theme::GAUGE)
            .use_unicode(true)
            .render(bar, buf);
        let why = "choosing the loop and page layout this working set runs; no round \
                   counts until then";
        let mut lines: Vec<Line> = wrap(why, rest.width as usize)
            .into_iter()
            .map(|l| Line::from(Span::styled(l, theme::HINT)))
            .collect();
        lines.extend(state);
        Paragraph::new(lines).render(rest, buf);
        return;
    }
    let msg = if app.live.current == Some(cell) {
        "warming up: no timed round yet"
    } else {
        "no timed round yet"
    };
    let mut lines = vec![Line::from(Span::styled(msg, theme::HINT))];
    lines.extend(state);
    Paragraph::new(lines).render(inner, buf);
}

/// The rates, their spread and where they came from: median, best, cv, threads, groups, late
/// and disturbed rounds, the interval, scaling, the vendor's share, rounds, CPUs.
fn run_items(app: &App, cell: CellId, f: &Figures, stats: &CellStats) -> Vec<Vec<Span<'static>>> {
    let mut items = vec![
        fig("median", format!("{} GB/s", gbs(f.median_gbs))),
        fig("best", gbs(f.best_gbs)),
        fig("cv", format!("{:.1} %", f.cv * 100.0)),
        fig("fastest thread", gbs(f.fastest_thread_gbs)),
        fig("slowest thread", gbs(f.slowest_thread_gbs)),
    ];
    // Per node and per core type, where the threads ran in more than one: the sum of their
    // rates (threads × one thread's median).
    items.extend(app.group_figures(cell).iter().map(|g| {
        fig(
            &g.group.name(),
            format!(
                "{} GB/s ({}×{})",
                gbs(g.gbs),
                g.threads,
                gbs(g.per_thread_gbs)
            ),
        )
    }));
    items.extend([
        fig("late", format!("{} of {}", f.late_rounds, f.rounds)),
        fig(
            "disturbed",
            format!("{} of {}", f.disturbed_rounds, f.rounds),
        ),
        fig(
            "95 % CI",
            f.median_ci
                .map_or("–".into(), |(l, h)| format!("{}–{}", gbs(l), gbs(h))),
        ),
        fig("scaling", opt(f.scaling, |s| format!("{s:.2}×"))),
        fig(
            "of vendor",
            opt(f.vendor_fraction, |v| format!("{:.1} %", v * 100.0)),
        ),
        fig("B/cycle", opt(f.bytes_per_cycle, |v| format!("{v:.2}"))),
        fig(
            "rounds",
            format!("{} ({} in all)", f.rounds, stats.total_rounds),
        ),
        fig("CPUs", cpu_list(stats.cpus.iter().copied())),
        fig("migrations", stats.migrations.to_string()),
    ]);
    items
}

/// Counters: what this machine counts (the log says once why the rest is not).
fn counter_items(f: &Figures) -> Vec<Vec<Span<'static>>> {
    let k = &f.counters;
    [
        ("GHz", k.ghz.map(|g| format!("{g:.2}"))),
        ("IPC", k.ipc.map(|v| format!("{v:.2}"))),
        (
            "switches/round",
            k.switches_per_round.map(|v| format!("{v:.1}")),
        ),
        (
            "LLC miss/KiB",
            k.llc_misses_per_kib.map(|v| format!("{v:.2}")),
        ),
    ]
    .into_iter()
    .filter_map(|(name, v)| v.map(|v| fig(name, v)))
    .collect()
}

/// The loop the trial kept, the pages (huge pages, where they sit) and the checksum.
fn memory_items(
    app: &App,
    cell: CellId,
    f: &Figures,
    stats: &CellStats,
) -> Vec<Vec<Span<'static>>> {
    let mut items = Vec::new();
    if let Some(c) = app.board.choice(cell.op, cell.set) {
        items.push(fig("loop", c.kept.to_string()));
        if let Some((p, ratio)) = &c.runner_up {
            items.push(fig("vs", format!("{ratio:.2} × {p}")));
        }
    }
    if stats.array_bytes > 0 {
        items.push(fig(
            "huge pages",
            format!(
                "{} of {}",
                stats.huge_bytes.map_or_else(
                    || platform::HUGE_PAGES_NOTE.unwrap_or("–").to_string(),
                    format_bytes
                ),
                format_bytes(stats.array_bytes)
            ),
        ));
    }
    match &stats.pages {
        Some(Placement::Sampled(p)) => items.push(fig("pages", p.brief())),
        Some(Placement::Unknown(why)) => items.push(fig("pages", format!("– ({why})"))),
        None => {}
    }
    items.push(match f.checksum_ok {
        Some(true) => fig("checksum", "ok".into()),
        Some(false) => vec![Span::styled(" CHECKSUM FAILED ", theme::ALARM)],
        None => fig("checksum", "pending".into()),
    });
    items
}

/// Against `--baseline`: the baseline's median, the change, and the verdict with its ratio.
fn baseline_items(app: &App, cell: CellId) -> Vec<Vec<Span<'static>>> {
    let Some(a) = app.baseline.medians.get(&cell) else {
        return Vec::new();
    };
    let d = app
        .baseline
        .change(&app.board, cell)
        .map(|d| format!(" ({:+.1} %)", d * 100.0))
        .unwrap_or_default();
    let mut items = vec![fig("baseline", format!("{}{d}", gbs(*a)))];
    if let Some(j) = app.baseline.verdict(&app.board, cell) {
        let ratio = j
            .ratio
            .map(|r| format!(", ×{:.3} ({:.3}–{:.3})", r.ratio, r.low, r.high))
            .unwrap_or_default();
        let p = j
            .test
            .map(|t| format!(", p {:.3}", t.p))
            .unwrap_or_default();
        items.push(fig("verdict", format!("{}{ratio}{p}", j.verdict.word())));
    }
    items
}

/// The lines under the figures: the noisy ones, the last round's cause, the set's note.
fn notes(f: &Figures, stats: &CellStats, set_note: Option<&str>) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if !f.noisy.is_empty() {
        lines.push(Line::from(Span::styled(
            format!("~ noisy: {}", f.noisy.join(", ")),
            theme::NOISY,
        )));
    }
    if let Some(cause) = stats.window.iter().rev().find_map(|r| r.cause.as_ref()) {
        lines.push(Line::from(Span::styled(
            format!("last cause: {cause}"),
            theme::NOTE,
        )));
    }
    if let Some(note) = set_note {
        lines.push(Line::from(Span::styled(format!("† {note}"), theme::NOTE)));
    }
    lines
}

/// The state first, the figures last, the timeline between them with what is left (the
/// probe's beside the cell's where it runs and there is room).
fn render_parts(
    app: &App,
    cell: CellId,
    state: Vec<Line>,
    lines: Vec<Line>,
    inner: Rect,
    buf: &mut Buffer,
) {
    let left = inner
        .height
        .saturating_sub(state.len() as u16 + lines.len() as u16);
    let timeline_h = if left >= timeline::MIN_HEIGHT {
        left
    } else {
        0
    };
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(state.len() as u16),
        Constraint::Length(timeline_h),
        Constraint::Min(0),
    ])
    .areas(inner);
    Paragraph::new(state).render(top, buf);
    if timeline_h > 0 && app.probe.shown() && middle.width >= 2 * PROBE_TIMELINE_W {
        // The probe's latency beside the cell's rates, on the same time axis.
        let [left, right] =
            Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(middle);
        Timeline::of_cell(app, cell).render(left, buf);
        Timeline::of_probe(app).render(right, buf);
    } else if timeline_h > 0 {
        Timeline::of_cell(app, cell).render(middle, buf);
    }
    Paragraph::new(lines).render(bottom, buf);
}

/// `--probe-only`: the probe's state and its timeline fill the panel.
fn probe_alone(app: &App, area: Rect, buf: &mut Buffer) {
    let title = match &app.probe.config {
        Some(c) => format!(" the probe · {} ", c.cpu.describe()),
        None => " the probe ".into(),
    };
    let block = Block::bordered().title(Span::styled(title, theme::TITLE));
    let inner = block.inner(area);
    block.render(area, buf);
    let w = &app.probe.watch;
    let state = match (w.latency_ns(), app.probe.running()) {
        (None, false) => "probe off: P starts it".to_string(),
        (None, true) => "probe starting: no sample yet".to_string(),
        (Some(ns), _) => format!(
            "latency {ns:.0} ns · {} · {}",
            w.reference_ns()
                .map_or("no calm reference yet".into(), |r| format!(
                    "reference {r:.0} ns ({:+.0} %)",
                    (ns / r - 1.0) * 100.0
                )),
            w.state().word()
        ),
    };
    let [top, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    Paragraph::new(Span::raw(state)).render(top, buf);
    if rest.height >= timeline::MIN_HEIGHT {
        Timeline::of_probe(app).render(rest, buf);
    }
}

/// The cell's state against its reference, wrapped to `width`.
fn state_lines(app: &App, cell: CellId, width: u16) -> Vec<Line<'static>> {
    let w = &app.narration.watch;
    let (text, style) = match w.state(cell) {
        State::Learning {
            have,
            need,
            disturbed: 0,
            ..
        } => (
            format!("reference: learning, {have} of {need} rounds"),
            theme::HINT,
        ),
        State::Learning { .. } => (unsettled(app, cell, None), theme::NOISY),
        State::Calm(r) => (
            format!(
                "calm: reference {} GB/s ({}){}",
                gbs(r.gbs),
                r.source.name(),
                median_against(app, cell, r.gbs)
            ),
            theme::CALM,
        ),
        State::Recovering(r) => (
            format!(
                "recovering after contention: median {:+.0} % against reference {} GB/s ({}); calm once within {:.0} %",
                (w.window_level(cell).unwrap_or(r.gbs) / r.gbs - 1.0) * 100.0,
                gbs(r.gbs),
                r.source.name(),
                -w.thresholds.drop / 2.0 * 100.0
            ),
            theme::NOTE,
        ),
        State::Contended(id) => match w.episode(id) {
            Some(ep) => {
                // Where the last rounds are now, then the whole spell.
                let now = w.level(cell).unwrap_or(ep.mean_gbs());
                let r = ep.reference.map_or(f64::NAN, |r| r.gbs);
                (
                    format!(
                        "CONTENDED {:.0} % below reference {} GB/s now, for {} since {} ({:.0} % on average, {:.0} % at worst)",
                        (1.0 - now / r) * 100.0,
                        gbs(r),
                        narrative::duration(ep.duration(app.clock.now)),
                        (app.clock.time_of)(app.clock.wall_at(ep.started)),
                        ep.depth() * 100.0,
                        ep.worst_depth() * 100.0
                    ),
                    theme::CONTENDED,
                )
            }
            None => ("CONTENDED".into(), theme::CONTENDED),
        },
        State::Disturbed(id) => {
            let since = w.episode(id).map(|ep| {
                format!(
                    "DISTURBED for {} since {}",
                    narrative::duration(ep.duration(app.clock.now)),
                    (app.clock.time_of)(app.clock.wall_at(ep.started)),
                )
            });
            let since = since.unwrap_or_else(|| "DISTURBED".into());
            let what = match w.reference(cell) {
                None => unsettled(app, cell, Some(id)),
                Some(r) => {
                    let (k, n) = w.disturbed_of_last(cell);
                    format!(
                        "{k} of the last {n} rounds disturbed{}; reference {} GB/s ({}){}",
                        why(app, cell, Some(id)),
                        gbs(r.gbs),
                        r.source.name(),
                        median_against(app, cell, r.gbs)
                    )
                }
            };
            (format!("{since} — {what}"), theme::CONTENDED)
        }
    };
    wrap(&text, width as usize)
        .into_iter()
        .map(|l| Line::from(Span::styled(l, style)))
        .collect()
}

/// `, median −3 %`: the cell's median against `reference`.
fn median_against(app: &App, cell: CellId, reference: f64) -> String {
    app.board
        .cell(cell)
        .and_then(|c| c.median_gbs())
        .map(|m| format!(", median {:+.0} %", (m / reference - 1.0) * 100.0))
        .unwrap_or_default()
}

/// `no calm reference yet: 11 of the 21 calm rounds it needs (10 to go); 6 of 17 rounds so far
/// disturbed (t0 off CPU 52 % — PID 2408 memhog on CPU 0)`: the calm rounds counted against
/// those needed, then the disturbed ones against all seen, so neither count reads as the
/// other's.
fn unsettled(app: &App, cell: CellId, episode: Option<u64>) -> String {
    let State::Learning {
        have,
        need,
        disturbed,
        seen,
    } = app.narration.watch.learning(cell)
    else {
        return "no calm reference yet".into();
    };
    format!(
        "no calm reference yet: {have} of the {need} calm rounds it needs ({} to go); \
         {disturbed} of {seen} rounds so far disturbed{}",
        need.saturating_sub(have),
        why(app, cell, episode)
    )
}

/// ` (t0 off CPU 52 % — PID 2408 memhog on CPU 0)`: the worker most off its CPU in the last
/// disturbed round, and the top suspect of the open episode, as far as each is known.
fn why(app: &App, cell: CellId, episode: Option<u64>) -> String {
    let off = app.narration.watch.off_cpu(cell).map(|o| o.describe());
    let who = episode
        .and_then(|id| app.narration.watch.episode(id))
        .and_then(|ep| ep.suspects.iter().find(|s| s.score > 0.0))
        .map(|s| {
            let ours = app.placement(cell).our_cpus;
            let on: Vec<u32> = app
                .busiest()
                .iter()
                .find(|p| p.pid == s.pid)
                .map(|p| p.cpus.intersection(&ours).copied().collect())
                .unwrap_or_default();
            let place = match on.as_slice() {
                [] if s.on_our_cpus => " on our CPUs".to_string(),
                [] => String::new(),
                [c] => format!(" on CPU {c}"),
                cs => format!(" on CPUs {}", cpu_list(cs.iter().map(|&c| c as i32))),
            };
            format!("{}{place}", narrative::who(s))
        });
    match (off, who) {
        (Some(o), Some(w)) => format!(" ({o} — {w})"),
        (Some(x), None) | (None, Some(x)) => format!(" ({x})"),
        (None, None) => String::new(),
    }
}
