//! The selected cell in detail: every figure with its label, the sizing note, and the history
//! of its round rates as a sparkline above them.

use super::text::{cpu_list, fig, flow, opt};
use super::theme;
use crate::platform;
use crate::tui::app::{App, gbs};
use crate::tui::contention::SLOW_FRACTION;
use crate::units::format_bytes;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline, SparklineBar, Widget};

pub(super) struct DetailPanel<'a>(pub &'a App);

impl Widget for DetailPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        let cell = app.selected();
        let set = app.grid.sets.get(cell.set);
        let title = match set {
            Some(s) => format!(
                " {} × {} thread{} · {} per array ",
                s.label(),
                cell.threads,
                if cell.threads == 1 { "" } else { "s" },
                format_bytes(s.array_bytes(cell.threads))
            ),
            None => format!(" {} ", app.cell_name(cell)),
        };
        let block = Block::bordered().title(Span::styled(title, theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        let (Some(f), Some(stats)) = (app.figures(cell), app.board.cell(cell)) else {
            let msg = if app.current == Some(cell) {
                "warming up: no timed round yet"
            } else {
                "no timed round yet"
            };
            Paragraph::new(Span::styled(msg, theme::HINT)).render(inner, buf);
            return;
        };
        let mut items = vec![
            fig("median", format!("{} GB/s", gbs(f.median_gbs))),
            fig("best", gbs(f.best_gbs)),
            fig("cv", format!("{:.1} %", f.cv * 100.0)),
            fig("fastest thread", gbs(f.fastest_thread_gbs)),
            fig("slowest thread", gbs(f.slowest_thread_gbs)),
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
            fig("of vendor", opt(f.vendor_fraction, |v| format!("{v:.3}"))),
            fig("B/cycle", opt(f.bytes_per_cycle, |v| format!("{v:.2}"))),
            fig(
                "rounds",
                format!("{} ({} in all)", f.rounds, stats.total_rounds),
            ),
            fig("CPUs", cpu_list(stats.cpus.iter().copied())),
            fig("migrations", stats.migrations.to_string()),
        ];
        // Counters: what this machine counts (the log says once why the rest is not).
        let k = &f.counters;
        for (name, v) in [
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
        ] {
            if let Some(v) = v {
                items.push(fig(name, v));
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
        items.push(match f.checksum_ok {
            Some(true) => fig("checksum", "ok".into()),
            Some(false) => vec![Span::styled(" CHECKSUM FAILED ", theme::ALARM)],
            None => fig("checksum", "pending".into()),
        });
        if let Some(a) = app.baseline.get(&cell) {
            let d = app
                .baseline_change(cell)
                .map(|d| format!(" ({:+.1} %)", d * 100.0))
                .unwrap_or_default();
            items.push(fig("baseline", format!("{}{d}", gbs(*a))));
            if let Some(j) = app.baseline_verdict(cell) {
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
        }
        let mut lines = flow(items, inner.width);
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
        if let Some(note) = set.and_then(|s| s.note.as_ref()) {
            lines.push(Line::from(Span::styled(format!("† {note}"), theme::NOTE)));
        }
        // The sparkline takes what the figures leave, up to 8 rows (none when nothing is left).
        let spark_h = inner.height.saturating_sub(lines.len() as u16).min(8);
        let [spark, text] =
            Layout::vertical([Constraint::Length(spark_h), Constraint::Min(0)]).areas(inner);
        // Newest round at the right; rounds well under the median stand out.
        let take = spark.width as usize;
        let skip = stats.history.len().saturating_sub(take);
        let bars: Vec<SparklineBar> = stats
            .history
            .iter()
            .skip(skip)
            .map(|&v| {
                let b = SparklineBar::from((v * 100.0) as u64);
                if v < SLOW_FRACTION * f.median_gbs {
                    b.style(Some(theme::SPARK_SLOW))
                } else {
                    b
                }
            })
            .collect();
        Sparkline::default()
            .data(bars)
            .style(theme::SPARK)
            .render(spark, buf);
        Paragraph::new(lines).render(text, buf);
    }
}
