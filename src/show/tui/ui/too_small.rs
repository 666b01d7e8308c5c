//! What a screen too small for the layout shows instead: the size it needs.

use super::layout::min_size;
use super::theme;
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

pub(super) struct TooSmall<'a>(pub &'a App);

impl Widget for TooSmall<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (w, h) = min_size(self.0);
        let text = vec![
            Line::from(Span::styled(
                "stream-top needs a larger terminal",
                theme::TITLE,
            )),
            Line::from(format!(
                "at least {w}×{h}; this one is {}×{}",
                area.width, area.height
            )),
            Line::from(Span::styled("(q quits)", theme::HINT)),
        ];
        let y = area.height.saturating_sub(3) / 2;
        let r = Rect::new(area.x, area.y + y, area.width, 3.min(area.height));
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true })
            .render(r, buf);
    }
}
