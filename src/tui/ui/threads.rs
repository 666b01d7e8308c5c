//! The selected cell's last round, a bar per thread: its rate against the fastest thread, the
//! CPU it ran on (and moved to), how late it started, and where counted how often it was
//! switched out and the clock it ran at.

use super::text::bar;
use super::theme::{self, Pace};
use crate::engine::events::ThreadTiming;
use crate::tui::app::App;
use crate::watch::narrative::gbs;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

/// A thread that started more than this fraction of its own time late held the round back.
const HELD: f64 = 0.2;
/// A thread under this fraction of the fastest thread's rate is slow.
const SLOW: f64 = 0.8;

pub(super) struct ThreadsPanel<'a>(pub &'a App);

/// " 2× 3.1GHz": the thread's involuntary switches and its counted clock, where counted.
fn counts(t: &ThreadTiming) -> String {
    let c = &t.counters;
    let mut out = String::new();
    if let Some(n) = c.switches {
        out.push_str(&format!(" {n}×"));
    }
    if let Some(g) = c.ghz(t.ns()) {
        out.push_str(&format!(" {g:.1}GHz"));
    }
    out
}

impl Widget for ThreadsPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        let last = app.board.cell(app.selected()).and_then(|c| c.last.as_ref());
        let title = match last {
            Some(r) => format!(
                " threads, last round: {:.2} ms{}{} ",
                r.span_ns as f64 / 1e6,
                if r.warmup { ", warm-up" } else { "" },
                if r.late { ", LATE" } else { "" }
            ),
            None => " threads, last round ".into(),
        };
        let block = Block::bordered().title(Span::styled(title, theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        let Some(r) = last else {
            Paragraph::new(Span::styled("no round yet", theme::HINT)).render(inner, buf);
            return;
        };
        let fastest = r.fastest_thread_gbs().max(f64::MIN_POSITIVE);
        let start0 = r.threads.iter().map(|t| t.start_ns).min().unwrap_or(0);
        let rows = inner.height as usize;
        let n = r.threads.len();
        let shown = if n > rows { rows.saturating_sub(1) } else { n };
        // "t12 cpu 12→13 " + bar + " 123.4 +1234µs" + " 2× 3.1GHz" where counted
        let counted = r.threads.iter().any(|t| t.counters.switches.is_some());
        let fixed = 15 + 16 + if counted { 11 } else { 0 };
        let bar_w = (inner.width as usize).saturating_sub(fixed).max(4);
        let mut lines = Vec::new();
        for (i, t) in r.threads.iter().enumerate().take(shown) {
            let rate = t.gbs();
            let offset_ns = t.start_ns.saturating_sub(start0);
            let pace = if offset_ns as f64 > HELD * t.ns() as f64 {
                Pace::Held
            } else if rate < SLOW * fastest {
                Pace::Slow
            } else {
                Pace::Even
            };
            // -1: the OS does not say (macOS).
            let cpu = if t.cpu_start < 0 {
                "-".to_string()
            } else if t.migrated() {
                format!("{}→{}", t.cpu_start, t.cpu_end)
            } else {
                t.cpu_start.to_string()
            };
            let filled = rate / fastest * bar_w as f64;
            lines.push(Line::from(vec![
                Span::styled(format!("t{i:<3}"), theme::LABEL),
                Span::raw(format!("cpu {cpu:<6} ")),
                Span::styled(bar(filled, bar_w), theme::pace_bar(pace)),
                Span::styled(format!(" {:>6}", gbs(rate)), theme::VALUE),
                Span::styled(
                    format!(" +{:.0}µs", offset_ns as f64 / 1e3),
                    theme::start_offset(pace),
                ),
                Span::styled(
                    counts(t),
                    theme::switched(t.counters.switches.unwrap_or(0) > 0),
                ),
            ]));
        }
        if shown < n {
            lines.push(Line::styled(
                format!(
                    "+{} more; slowest {} GB/s",
                    n - shown,
                    gbs(r.slowest_thread_gbs())
                ),
                theme::HINT,
            ));
        }
        Paragraph::new(lines).render(inner, buf);
    }
}
