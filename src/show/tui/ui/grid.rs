//! The grid: a row per working set, a column per thread count, each cell its median GB/s,
//! coloured by how close it is to what the hardware gives, with marks for the cell being
//! measured, the focused one, a contended one, a noisy one (`~`), late rounds, a failed
//! checksum, and (`ᴸ`, not a unit as `k` was read) a row whose kernel loop is not the first
//! row's; while a working set's trial runs, the cell of its thread count says so and how far
//! along it is. The columns scroll
//! sideways and the rows (a size sweep has dozens) up and down when they do not all fit, as far
//! as the selection needs. On a hybrid machine `E›` marks the head of the first thread count
//! with threads on E-cores. Each cell's rectangle goes into the click map as it is drawn.

use super::status::StatusLine;
use super::text::truncate;
use super::theme;
use crate::engine::plan::CellId;
use crate::judge::inference::Verdict;
use crate::judge::stats::Figures;
use crate::judge::watch::contention::State;
use crate::judge::watch::narrative::gbs;
use crate::show::tui::app::{App, Mode};
use crate::show::tui::click_map::Target;
use crate::show::tui::view::ViewState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, StatefulWidget, Widget};

/// After the cells of a row whose loop is not the first row's: a mark no one reads as a unit
/// (`121.1 k` read as thousands), in common terminal fonts (DejaVu, Menlo, Noto, Cascadia).
pub(super) const LOOP_MARK: &str = "ᴸ";

/// Width of the row labels.
const LABEL_WIDTH: u16 = 24;

pub(super) struct GridPanel<'a>(pub &'a App);

impl StatefulWidget for GridPanel<'_> {
    type State = ViewState;

    fn render(self, area: Rect, buf: &mut Buffer, view: &mut ViewState) {
        let app = self.0;
        if app.probe.alone {
            // No triad runs: an empty grid, and why.
            let block =
                Block::bordered().title(Span::styled(" median GB/s · --probe-only ", theme::TITLE));
            let inner = block.inner(area);
            block.render(area, buf);
            let why = "no triad runs (--probe-only): no workers, no arrays, no bandwidth figures; \
                       the probe alone watches, its latency in the header and below";
            let lines: Vec<Line> = super::text::wrap(why, inner.width as usize)
                .into_iter()
                .map(|l| Line::from(Span::styled(l, theme::HINT)))
                .collect();
            Paragraph::new(lines).render(inner, buf);
            return;
        }
        // Within the border, the heads and the status line take a row each.
        let sets = app.grid.sets.len();
        let fit_rows = (area.height.saturating_sub(4) as usize).max(1);
        view.grid_row_offset = scroll(view.grid_row_offset, app.view.sel_set, fit_rows, sets);
        let rows = view.grid_row_offset..(view.grid_row_offset + fit_rows).min(sets);
        let block = block(app, (rows.len() < sets).then(|| rows.clone()));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let cw = col_width(app);
        let cols = app.grid.threads.len();
        let fit = (inner.width.saturating_sub(LABEL_WIDTH) / cw).max(1) as usize;
        view.grid_offset = scroll(view.grid_offset, app.view.sel_col, fit, cols);
        let offset = view.grid_offset;
        let visible = fit.min(cols.saturating_sub(offset));

        Paragraph::new(lines(app, offset, visible, rows.clone())).render(inner, buf);
        for (row, set) in rows.enumerate() {
            let y = inner.y + 1 + row as u16;
            if y >= inner.bottom() {
                break;
            }
            for i in 0..visible {
                let x = inner.x + LABEL_WIDTH + i as u16 * cw;
                let target = Target::Cell {
                    set,
                    col: offset + i,
                };
                view.clicks.add(Rect::new(x, y, cw, 1), target);
            }
        }
        let status = Rect::new(inner.x, inner.bottom() - 1, inner.width, 1);
        StatusLine(app).render(status, buf);
    }
}

/// The first column (or row) shown: the previous one, moved just enough to bring the selected
/// one into the `fit` that fit, and no further than the last ones need.
fn scroll(offset: usize, selected: usize, fit: usize, columns: usize) -> usize {
    let fit = fit.max(1);
    let offset = if selected < offset {
        selected
    } else if selected >= offset + fit {
        selected + 1 - fit
    } else {
        offset
    };
    offset.min(columns.saturating_sub(fit))
}

/// Width of one thread column: wider when it also shows the change against a baseline.
fn col_width(app: &App) -> u16 {
    if app.baseline.medians.is_empty() {
        12
    } else {
        19
    }
}

/// The grid's border and title (the matrix view's too); `rows` are the working-set rows shown
/// when not all fit.
pub(super) fn block(app: &App, rows: Option<std::ops::Range<usize>>) -> Block<'static> {
    let mut title = vec![Span::styled(
        if app.setup.matrix.is_some() {
            " NUMA matrix · median GB/s "
        } else {
            " median GB/s "
        },
        theme::TITLE,
    )];
    if app.setup.not_a_measurement.is_some() {
        title.push(Span::styled(
            "· NOT A MEASUREMENT (--oversubscribe) ",
            theme::ALARM,
        ));
    }
    if app.grid.ops.len() > 1 {
        title.push(Span::styled(format!("· op {} ", app.view.op), theme::TITLE));
    }
    title.push(Span::raw(match app.view.mode {
        Mode::Sweep => "· sweep ".to_string(),
        Mode::Focus(c) => format!("· focus on {} ", app.cell_name(c)),
    }));
    if app.live.paused {
        title.push(Span::styled("· PAUSED ", theme::PAUSED_TITLE));
    }
    title.push(Span::raw(format!("· duty {} % ", app.view.duty)));
    if let Some(r) = rows {
        title.push(Span::styled(
            format!(
                "· rows {}–{} of {} ↑↓ ",
                r.start + 1,
                r.end,
                app.grid.sets.len()
            ),
            theme::HINT,
        ));
    }
    if let Some(b) = &app.baseline.name {
        title.push(Span::raw(format!("· vs {b} ")));
    }
    Block::new().borders(Borders::ALL).title(Line::from(title))
}

/// The column heads and a line per working set in `rows`, for columns
/// `offset..offset + visible`.
fn lines(
    app: &App,
    offset: usize,
    visible: usize,
    rows: std::ops::Range<usize>,
) -> Vec<Line<'static>> {
    let cw = col_width(app) as usize;
    let mut head = vec![Span::styled(
        format!("{:<w$}", "per array \\ threads", w = LABEL_WIDTH as usize),
        theme::HINT,
    )];
    // Heads end where the values end (before the late mark and the baseline change).
    let tail = if app.baseline.medians.is_empty() {
        2
    } else {
        9
    };
    for ci in offset..offset + visible {
        let t = app.grid.threads[ci];
        let text = format!("{t} thr");
        if e_cores_begin(app, ci) {
            let pad = (cw - tail).saturating_sub(text.chars().count() + 2);
            head.push(Span::styled(" ".repeat(pad), theme::TITLE));
            head.push(Span::styled("E›", theme::E_CORES));
            head.push(Span::styled(format!("{text}{:tail$}", ""), theme::TITLE));
        } else {
            head.push(Span::styled(
                format!("{text:>w$}{:tail$}", "", w = cw - tail),
                theme::TITLE,
            ));
        }
    }
    if offset + visible < app.grid.threads.len() {
        head.push(Span::styled(" ▸", theme::HINT));
    }
    let mut lines = vec![Line::from(head)];
    for (si, set) in app
        .grid
        .sets
        .iter()
        .enumerate()
        .skip(rows.start)
        .take(rows.len())
    {
        let mut label = set.label();
        if set.note.is_some() {
            label.push('†');
        }
        let mut spans = vec![Span::raw(format!(
            "{:<w$}",
            truncate(&label, LABEL_WIDTH as usize - 1),
            w = LABEL_WIDTH as usize
        ))];
        for ci in offset..offset + visible {
            let t = app.grid.threads[ci];
            spans.extend(cell(app, CellId::of(app.view.op, si, t), (si, ci), cw));
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// Whether column `ci` is the first whose threads run on E-cores too (hybrid machines).
fn e_cores_begin(app: &App, ci: usize) -> bool {
    let Some(from) = app.setup.e_cores_from else {
        return false;
    };
    let t = &app.grid.threads;
    t[ci] >= from && (ci == 0 || t[ci - 1] < from)
}

/// One cell, `width` wide: mark, median, contention or late mark, change against the baseline.
pub(super) fn cell(
    app: &App,
    cell: CellId,
    pos: (usize, usize),
    width: usize,
) -> Vec<Span<'static>> {
    let selected = pos == (app.view.sel_set, app.view.sel_col);
    let trial = app
        .live
        .trial
        .filter(|t| (t.set, t.threads) == (cell.set, cell.threads));
    let now = (app.live.current == Some(cell) || trial.is_some())
        && !app.live.paused
        && !app.live.finished;
    let failed = app
        .board
        .cell(cell)
        .is_some_and(|s| s.checksum_failures > 0);
    let figures = app.figures(cell);
    let mark = if now {
        "▶"
    } else if app.view.mode == Mode::Focus(cell) {
        "◆"
    } else {
        " "
    };
    let mut spans = Vec::new();
    let body_w = width - 1;
    if failed {
        spans.push(Span::styled(
            format!("{:>body_w$}", format!("{mark}✗ CHECKSUM ")),
            theme::ALARM,
        ));
    } else {
        let (value, late) = match &figures {
            Some(f) => (gbs(f.median_gbs), f.late_rounds > 0 && f.noisy.is_empty()),
            // Could not run (its arrays could not be mapped): the log says why.
            None if app.board.cell(cell).is_some_and(|s| s.failure.is_some()) => {
                ("failed".to_string(), false)
            }
            None if now => ("…".to_string(), false),
            None => ("·".to_string(), false),
        };
        // The trial's progress in the cell it runs at (the status line says the rest).
        let value = match trial {
            Some(t) => format!("trial {:.0}%", (t.done * 100.0).min(99.0)),
            None => value,
        };
        let grade = figures.as_ref().and_then(|f| grade(app, cell, f));
        let change = app.baseline.change(&app.board, cell);
        let delta = if app.baseline.medians.is_empty() {
            String::new()
        } else {
            match change {
                Some(d) => format!(" {:>+5.1}%", d * 100.0),
                None => "       ".to_string(),
            }
        };
        let pad = body_w.saturating_sub(2 + delta.chars().count() + value.chars().count());
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(mark.to_string(), theme::MARK));
        let measured = figures.is_some() && !app.view.is_greyed(cell);
        spans.push(Span::styled(value, theme::cell_value(grade, measured)));
        let noisy = figures.as_ref().is_some_and(|f| !f.noisy.is_empty());
        // One mark: contention now, else a disturbance, else a figure not to trust, else
        // late rounds.
        spans.push(if app.narration.watch.is_contended(cell) {
            Span::styled("▼", theme::CONTENDED)
        } else if matches!(app.narration.watch.state(cell), State::Disturbed(_)) {
            Span::styled("!", theme::CONTENDED)
        } else if noisy {
            Span::styled("~", theme::NOISY)
        } else {
            Span::styled(if late { "*" } else { " " }, theme::LATE_MARK)
        });
        if !delta.is_empty() {
            // Coloured only when the rank test says the difference is real.
            let verdict = app.baseline.verdict(&app.board, cell).map(|j| j.verdict);
            spans.push(Span::styled(delta, theme::change(versus_baseline(verdict))));
        }
        if other_loop(app, cell.set) {
            spans.push(Span::styled(LOOP_MARK, theme::LOOP_MARK));
        } else {
            spans.push(Span::raw(" "));
        }
    }
    if selected {
        for s in &mut spans {
            s.style = s.style.patch(theme::SELECTED);
        }
    }
    spans
}

/// Whether set `set` runs another kernel loop than the first row ([`LOOP_MARK`] after its
/// cells).
fn other_loop(app: &App, set: usize) -> bool {
    let op = app.view.op;
    match (app.board.choice(op, 0), app.board.choice(op, set)) {
        (Some(first), Some(this)) => first.kept.variant.name != this.kept.variant.name,
        _ => false,
    }
}

/// How good a figure is: by fraction of the vendor figure for DRAM-sized sets, by scaling per
/// thread for per-thread (cache) sets.
fn grade(app: &App, cell: CellId, f: &Figures) -> Option<theme::Grade> {
    let per_thread = app.grid.sets.get(cell.set)?.is_per_thread();
    let x = if per_thread {
        f.scaling? / cell.threads as f64
    } else {
        f.vendor_fraction?
    };
    let (good, fair) = if per_thread { (0.9, 0.7) } else { (0.6, 0.3) };
    Some(if x >= good {
        theme::Grade::Good
    } else if x >= fair {
        theme::Grade::Fair
    } else {
        theme::Grade::Poor
    })
}

/// A change of 5 % or more either way is worth a colour.
/// The colour of the change: the verdict of the window's rounds against the baseline's.
fn versus_baseline(v: Option<Verdict>) -> theme::Change {
    match v {
        Some(Verdict::Slower) => theme::Change::Slower,
        Some(Verdict::Faster) => theme::Change::Faster,
        _ => theme::Change::Same,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_scrolls_only_as_far_as_the_selection_needs() {
        // 16 columns, 6 fit.
        assert_eq!(scroll(0, 5, 6, 16), 0, "in view: no scroll");
        assert_eq!(scroll(0, 6, 6, 16), 1, "one past the right edge");
        assert_eq!(scroll(0, 12, 6, 16), 7, "the selection at the right edge");
        assert_eq!(
            scroll(7, 11, 6, 16),
            7,
            "back left within the view: it stays"
        );
        assert_eq!(scroll(7, 3, 6, 16), 3, "past the left edge");
        assert_eq!(scroll(12, 12, 6, 16), 10, "never past the last columns");
        assert_eq!(scroll(3, 0, 20, 16), 0, "everything fits");
        assert_eq!(scroll(0, 0, 0, 0), 0);
    }
}
