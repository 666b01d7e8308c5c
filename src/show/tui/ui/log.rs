//! The event log, newest at the bottom: a long entry wraps under its text, its time alone in
//! the margin, and an entry that does not fit whole keeps its newest lines.

use super::text::wrap;
use super::theme;
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

/// Width of the time margin: `HH:MM:SS `.
const MARGIN: usize = 9;

pub(super) struct LogPanel<'a>(pub &'a App);

impl Widget for LogPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::bordered().title(Span::styled(" events ", theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = inner.height as usize;
        let text_w = (inner.width as usize).saturating_sub(MARGIN).max(10);
        // Newest first, then turned over.
        let mut lines: Vec<Line> = Vec::new();
        for e in self.0.narration.log.iter().rev() {
            if lines.len() >= rows {
                break;
            }
            let style = theme::log_entry(e.kind);
            let mut text = e.text.clone();
            if e.count > 1 {
                text.push_str(&format!(" (×{})", e.count));
            }
            let mut entry: Vec<Line> = wrap(&text, text_w)
                .into_iter()
                .enumerate()
                .map(|(i, chunk)| {
                    let margin = if i == 0 {
                        format!("{:<MARGIN$}", e.time)
                    } else {
                        " ".repeat(MARGIN)
                    };
                    Line::from(vec![
                        Span::styled(margin, theme::LABEL),
                        Span::styled(chunk, style),
                    ])
                })
                .collect();
            let room = rows - lines.len();
            if entry.len() > room {
                entry.drain(..entry.len() - room);
            }
            lines.extend(entry.into_iter().rev());
        }
        lines.reverse();
        if lines.is_empty() {
            lines.push(Line::from(Span::styled("nothing yet", theme::HINT)));
        }
        Paragraph::new(lines).render(inner, buf);
    }
}
