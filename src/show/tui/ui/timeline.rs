//! A cell's history as a timeline: a bar per column (the mean GB/s of the seconds it covers),
//! a y-scale, the reference as a line, contended seconds shaded, time marks, and where the room
//! allows a legend and the top suspect's CPU share on the same time axis. It covers the whole
//! history kept (up to 15 minutes): the more there is, the more seconds a column holds.

use super::theme;
use crate::engine::plan::CellId;
use crate::judge::watch::contention::Episode;
use crate::judge::watch::narrative::{self, gbs};
use crate::judge::watch::probe::PROBE_CELL;
use crate::judge::watch::suspects::Suspect;
use crate::show::tui::app::App;
use crate::show::tui::history::{CellHistory, SPAN};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// Width of the y labels, ` 12.3 ` and the axis.
const LABEL_W: u16 = 7;
/// Seconds a column may cover: the smallest that fits the history is taken.
const STEPS: [u64; 11] = [1, 2, 3, 5, 10, 15, 20, 30, 60, 120, 300];
/// Time marks, seconds apart: the smallest that leaves a dozen columns between them.
const MARKS: [u64; 8] = [10, 30, 60, 120, 300, 600, 900, 1800];
/// Bar heights in eighths of a row.
const EIGHTHS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The least height worth drawing: two rows of bars and the time axis.
pub(super) const MIN_HEIGHT: u16 = 3;

pub(super) struct Timeline<'a> {
    app: &'a App,
    cell: CellId,
    /// The probe's latency (ns, its reference and episodes) instead of the cell's rates.
    probe: bool,
}

impl<'a> Timeline<'a> {
    pub(super) fn of_cell(app: &'a App, cell: CellId) -> Timeline<'a> {
        Timeline {
            app,
            cell,
            probe: false,
        }
    }

    /// The probe's latency on the same axes: higher is worse, the reference its calm level.
    pub(super) fn of_probe(app: &'a App) -> Timeline<'a> {
        Timeline {
            app,
            cell: PROBE_CELL,
            probe: true,
        }
    }

    fn history(&self) -> Option<&'a CellHistory> {
        if self.probe {
            Some(&self.app.probe.history)
        } else {
            self.app.live.history.cell(self.cell)
        }
    }

    fn episodes(&self) -> Box<dyn DoubleEndedIterator<Item = &'a Episode> + 'a> {
        if self.probe {
            Box::new(self.app.probe.watch.episodes())
        } else {
            let cell = self.cell;
            Box::new(
                self.app
                    .narration
                    .watch
                    .episodes()
                    .filter(move |e| e.cell == cell),
            )
        }
    }

    fn reference(&self) -> Option<f64> {
        if self.probe {
            self.app.probe.watch.reference_ns()
        } else {
            self.app.narration.watch.reference(self.cell).map(|r| r.gbs)
        }
    }

    fn open(&self) -> Option<&'a Episode> {
        if self.probe {
            self.app.probe.watch.open()
        } else {
            self.app.open_episode(self.cell)
        }
    }
}

/// One column: the mean rate of its seconds, and whether any of them was contended.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Column {
    gbs: Option<f64>,
    contended: bool,
}

impl Widget for Timeline<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let Some(hist) = self.history().filter(|h| !h.is_empty()) else {
            let text = if self.probe {
                "probe: no sample yet"
            } else {
                "timeline: no timed round yet"
            };
            Paragraph::new(Span::styled(text, theme::HINT)).render(area, buf);
            return;
        };
        if area.height < MIN_HEIGHT || area.width <= LABEL_W + 10 {
            return;
        }
        let now = app.clock.second(app.clock.now);
        let width = area.width - LABEL_W;
        let first = hist.buckets().next().map_or(now, |b| b.second);
        let step = column_seconds(now.saturating_sub(first) + 1, width);
        let spans: Vec<(u64, u64)> = self
            .episodes()
            .map(|e| {
                (
                    app.clock.second(e.started),
                    app.clock.second(e.ended.unwrap_or(app.clock.now)),
                )
            })
            .collect();
        let columns = columns(hist, &spans, now, step, width);
        let reference = self.reference();
        let suspect = self.open().map_or_else(
            || last_suspect(self.episodes()),
            |e| e.suspects.iter().find(|s| s.score > 0.0).cloned(),
        );
        let unit = if self.probe { "probe ns" } else { "GB/s" };

        let legend = area.height >= 6;
        let cpu_row = suspect.is_some() && area.height >= 7;
        let plot_h = area.height - 1 - u16::from(legend) - u16::from(cpu_row);
        let mut y = area.y;
        if legend {
            let cpu_of = suspect.as_ref().filter(|_| cpu_row);
            let what = format!("{unit}, {}", per_column(step));
            legend_line(what, reference, cpu_of, area.width)
                .render(Rect::new(area.x, y, area.width, 1), buf);
            y += 1;
        }
        let plot = Rect::new(area.x + LABEL_W, y, width, plot_h);
        let top = nice_ceiling(
            columns
                .iter()
                .filter_map(|c| c.gbs)
                .chain(reference)
                .fold(0.0, f64::max)
                * 1.05,
        );
        draw_bars(&columns, plot, top, reference, buf);
        draw_scale(area.x, plot, top, reference, buf);
        y = plot.bottom();
        if let Some(s) = suspect.as_ref().filter(|_| cpu_row) {
            let shares = cpu_columns(app, s.pid, now, step, width);
            draw_cpu_row(&shares, area.x, Rect::new(plot.x, y, width, 1), buf);
            y += 1;
        }
        draw_axis(Rect::new(area.x, y, area.width, 1), step, width, buf);
    }
}

/// The seconds a column covers so that `width` columns hold `age` seconds (at most `SPAN`).
fn column_seconds(age: u64, width: u16) -> u64 {
    let need = age.min(SPAN);
    STEPS
        .into_iter()
        .find(|s| s * width as u64 >= need)
        .unwrap_or(STEPS[STEPS.len() - 1])
}

fn per_column(step: u64) -> String {
    if step < 60 {
        format!("{step} s a column")
    } else {
        format!("{} min a column", step / 60)
    }
}

/// `width` columns ending at second `now`, `step` seconds each; contended where they meet one
/// of the `episodes` (first and last second).
fn columns(
    hist: &CellHistory,
    episodes: &[(u64, u64)],
    now: u64,
    step: u64,
    width: u16,
) -> Vec<Column> {
    let w = width as u64;
    let mut sums = vec![(0.0, 0u32); width as usize];
    for b in hist.buckets() {
        let back = (now.saturating_sub(b.second)) / step;
        if back >= w {
            continue;
        }
        let i = (w - 1 - back) as usize;
        sums[i].0 += b.sum_gbs;
        sums[i].1 += b.rounds;
    }
    sums.into_iter()
        .enumerate()
        .map(|(i, (sum, n))| {
            // Column i covers the seconds (last - step, last].
            let last = now.saturating_sub((w - 1 - i as u64) * step);
            let first = (last + 1).saturating_sub(step);
            Column {
                gbs: (n > 0).then(|| sum / n as f64),
                contended: episodes.iter().any(|&(a, b)| a <= last && b >= first),
            }
        })
        .collect()
}

/// A process's CPU share per column (mean of its samples there).
fn cpu_columns(app: &App, pid: u32, now: u64, step: u64, width: u16) -> Vec<Option<f64>> {
    let w = width as u64;
    let mut sums = vec![(0.0, 0u32); width as usize];
    for (second, pct) in app.live.history.cpu_of(pid) {
        let back = now.saturating_sub(second) / step;
        if back < w {
            let i = (w - 1 - back) as usize;
            sums[i].0 += pct;
            sums[i].1 += 1;
        }
    }
    sums.into_iter()
        .map(|(s, n)| (n > 0).then(|| s / n as f64))
        .collect()
}

/// The legend over the plot: what a column is, the reference, the suspect's CPU row where it
/// is drawn, the contended shade; as many of its items as fit in `width`, whole.
fn legend_line(
    what: String,
    reference: Option<f64>,
    cpu_of: Option<&Suspect>,
    width: u16,
) -> Line<'static> {
    let mut items: Vec<Vec<Span>> = vec![
        vec![Span::styled(what, theme::HINT)],
        vec![
            Span::styled("┄ ", theme::REFERENCE_LINE),
            Span::styled(
                match reference {
                    Some(r) => format!("reference {}", gbs(r)),
                    None => "reference: learning".into(),
                },
                theme::HINT,
            ),
        ],
    ];
    if let Some(s) = cpu_of {
        items.push(vec![
            Span::styled("▆ ", theme::SUSPECT_CPU),
            Span::styled(format!("CPU of {}", narrative::who(s)), theme::HINT),
        ]);
    }
    items.push(vec![
        Span::styled("  ", theme::CONTENDED_SPAN),
        Span::styled(" contended", theme::HINT),
    ]);
    let mut spans: Vec<Span> = Vec::new();
    let mut used = 0;
    for item in items {
        let w: usize = item.iter().map(|s| s.width()).sum::<usize>() + 3;
        if used + w > width as usize {
            break;
        }
        if used > 0 {
            spans.push(Span::raw("   "));
        }
        used += w;
        spans.extend(item);
    }
    Line::from(spans)
}

/// The y-scale left of the plot, from column `x`: the top, the reference, zero.
fn draw_scale(x: u16, plot: Rect, top: f64, reference: Option<f64>, buf: &mut Buffer) {
    let label = |v: f64| format!("{:>5} ┤", gbs(v));
    buf.set_string(x, plot.y, label(top), theme::AXIS);
    if let Some(r) = reference
        && let Some(row) = level_row(r, top, plot.height)
        && row > 0
        && row + 1 < plot.height
    {
        buf.set_string(x, plot.y + row, label(r), theme::REFERENCE_LINE);
    }
    buf.set_string(x, plot.bottom() - 1, format!("{:>5} ┤", 0), theme::AXIS);
}

/// The suspect's CPU share per column, in eighths of the highest (at least 100 %), on the
/// row `row`, labelled from column `x`.
fn draw_cpu_row(shares: &[Option<f64>], x: u16, row: Rect, buf: &mut Buffer) {
    let peak = shares.iter().flatten().fold(100.0, |m: f64, v| m.max(*v));
    buf.set_string(x, row.y, format!("{:>5} ┤", "cpu"), theme::AXIS);
    for (i, v) in shares.iter().enumerate() {
        if let Some(v) = v {
            let e = ((v / peak) * 8.0).round().clamp(0.0, 8.0) as usize;
            let ch = if e == 0 && *v > 0.0 {
                '▁'
            } else {
                EIGHTHS[e]
            };
            buf[(row.x + i as u16, row.y)]
                .set_char(ch)
                .set_style(theme::SUSPECT_CPU);
        }
    }
}

/// The top suspect of the most recent of these episodes.
fn last_suspect<'a>(mut episodes: impl DoubleEndedIterator<Item = &'a Episode>) -> Option<Suspect> {
    episodes
        .next_back()?
        .suspects
        .iter()
        .find(|s| s.score > 0.0)
        .cloned()
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|x| *x >= v * 0.999_999)
        .unwrap_or(10.0 * p)
}

/// The row (from the top of a plot `rows` high) a level falls in; None above the top.
fn level_row(v: f64, top: f64, rows: u16) -> Option<u16> {
    let from_bottom = (v / top * rows as f64).floor();
    if from_bottom < 0.0 || from_bottom >= rows as f64 {
        return None;
    }
    Some(rows - 1 - from_bottom as u16)
}

fn draw_bars(columns: &[Column], plot: Rect, top: f64, reference: Option<f64>, buf: &mut Buffer) {
    let rows = plot.height;
    let ref_row = reference.and_then(|r| level_row(r, top, rows));
    for (i, c) in columns.iter().enumerate() {
        let x = plot.x + i as u16;
        let eighths = c
            .gbs
            .map_or(0, |v| ((v / top) * rows as f64 * 8.0).round() as u32);
        for row in 0..rows {
            let from_bottom = (rows - 1 - row) as u32;
            let fill = eighths.saturating_sub(from_bottom * 8).min(8) as usize;
            let mut style = if c.contended {
                theme::CONTENDED_SPAN
            } else {
                Style::new()
            };
            let ch = if fill > 0 {
                style = style.patch(theme::TIMELINE_BAR);
                EIGHTHS[fill]
            } else if Some(row) == ref_row {
                style = style.patch(theme::REFERENCE_LINE);
                '┄'
            } else {
                ' '
            };
            buf[(x, plot.y + row)].set_char(ch).set_style(style);
        }
    }
}

/// `└──┴───…` with marks at round times before now, labelled `-10m`, `-30s`, `now`.
fn draw_axis(area: Rect, step: u64, width: u16, buf: &mut Buffer) {
    let y = area.y;
    let x0 = area.x + LABEL_W;
    buf.set_string(area.x, y, format!("{:>7}", "└"), theme::AXIS);
    for i in 0..width {
        buf[(x0 + i, y)].set_char('─').set_style(theme::AXIS);
    }
    let every = MARKS
        .into_iter()
        .find(|m| m / step >= 12)
        .unwrap_or(MARKS[MARKS.len() - 1]);
    let now_label = "now";
    let now_x = x0 + width - now_label.len() as u16;
    let mut k = 1;
    loop {
        let back = k * every / step;
        if back >= width as u64 {
            break;
        }
        let x = x0 + width - 1 - back as u16;
        let label = if every * k >= 60 && (every * k) % 60 == 0 {
            format!("-{}m", every * k / 60)
        } else {
            format!("-{}s", every * k)
        };
        let lx = x.saturating_sub(label.len() as u16 / 2).max(x0);
        if lx + label.len() as u16 + 1 < now_x {
            buf[(x, y)].set_char('┴');
            buf.set_string(lx, y, &label, theme::AXIS);
        }
        k += 1;
    }
    buf.set_string(now_x, y, now_label, theme::AXIS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_covers_as_few_seconds_as_the_width_allows() {
        assert_eq!(column_seconds(50, 80), 1);
        assert_eq!(column_seconds(600, 80), 10);
        assert_eq!(column_seconds(5000, 80), 15, "the span kept is 15 min");
        assert_eq!(column_seconds(900, 10), 120);
    }

    #[test]
    fn nice_scales() {
        assert_eq!(nice_ceiling(6.9), 8.0);
        assert_eq!(nice_ceiling(10.5), 12.0);
        assert_eq!(nice_ceiling(21.0), 25.0);
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(level_row(5.0, 10.0, 4), Some(1));
        assert_eq!(level_row(10.0, 10.0, 4), None);
        assert_eq!(level_row(0.0, 10.0, 4), Some(3));
    }
}
