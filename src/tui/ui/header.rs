//! The lines above the grid: the machine, its caches, the run's settings, the vendor figure;
//! and a banner no one can miss when a checksum failed.

use super::theme;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub(super) struct HeaderBar<'a>(pub &'a App);

impl Widget for HeaderBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        let h = &app.header;
        let mut first = vec![
            Span::styled("stream-top ", theme::BRAND),
            Span::styled(h.machine.clone(), theme::TITLE),
        ];
        if app.board.any_checksum_failed() {
            first.push(Span::raw("  "));
            first.push(Span::styled(
                " CHECKSUM FAILED: figures are wrong ",
                theme::ALARM_BANNER,
            ));
        }
        let lines = vec![
            Line::from(first),
            Line::from(h.caches.clone()),
            Line::from(h.run.clone()),
            Line::from(h.vendor.clone()),
        ];
        Paragraph::new(lines).render(area, buf);
    }
}
