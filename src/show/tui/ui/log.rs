//! The event log, newest at the bottom: a long entry wraps under its text, its time and its
//! marker alone in the margin, and an entry that does not fit whole keeps its first lines
//! (its time and what it is about) and ends in `…` where its tail is cut.
//! The full-screen log view (`log_view`) draws its entries the same way.

use super::text::wrap;
use super::theme;
use crate::judge::watch::log::{Entry, Kind};
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

/// Width of the margin: `HH:MM:SS ▼ `.
pub(super) const MARGIN: usize = 11;

/// The mark at the start of an entry a person must not miss, in colour or without:
/// contention (and disturbance) episodes, the trial's choices, errors and failed checksums.
pub(super) fn marker(kind: Kind) -> char {
    match kind {
        Kind::Contention => '▼',
        Kind::Choice => '»',
        Kind::Error | Kind::Checksum => '✗',
        Kind::Info | Kind::Late | Kind::Export => ' ',
    }
}

/// An entry's lines, its text wrapped at `text_w`: the time and the marker in the margin of
/// the first. `found`: the search's hit, marked.
pub(super) fn entry_lines(e: &Entry, text_w: usize, found: bool) -> Vec<Line<'static>> {
    let mut style = theme::log_entry(e.kind);
    if found {
        style = style.patch(theme::SELECTED);
    }
    wrap(&e.text, text_w)
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let margin = if i == 0 {
                vec![
                    Span::styled(format!("{:<8} ", e.time), theme::LABEL),
                    Span::styled(format!("{} ", marker(e.kind)), theme::log_entry(e.kind)),
                ]
            } else {
                vec![Span::raw(" ".repeat(MARGIN))]
            };
            let mut spans = margin;
            spans.push(Span::styled(chunk, style));
            Line::from(spans)
        })
        .collect()
}

pub(super) struct LogPanel<'a>(pub &'a App);

impl Widget for LogPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::bordered().title(Span::styled(" events · L: full log ", theme::TITLE));
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
            let mut entry = entry_lines(e, text_w, false);
            let room = rows - lines.len();
            if entry.len() > room {
                entry.truncate(room);
                mark_cut(&mut entry, text_w);
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

/// Ends the last of an entry's lines in `…`: the entry goes on but is cut here. Over the last
/// character where the line is full.
fn mark_cut(entry: &mut [Line<'static>], text_w: usize) {
    let Some(span) = entry.last_mut().and_then(|l| l.spans.last_mut()) else {
        return;
    };
    let mut text = span.content.trim_end().to_string();
    if text.chars().count() >= text_w {
        text.pop();
    }
    text.push('…');
    span.content = text.into();
}
