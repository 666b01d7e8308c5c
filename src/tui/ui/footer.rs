//! The last line: the keys, and what each does now.

use super::theme;
use crate::tui::app::{App, Mode};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub(super) struct Footer<'a>(pub &'a App);

impl Widget for Footer<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        let enter = match app.mode {
            Mode::Focus(c) if c == app.selected() => "sweep",
            _ => "focus",
        };
        let space = if app.pause_requested {
            "resume"
        } else {
            "pause"
        };
        let duty = format!("duty {} %", app.duty);
        let keys = [
            ("q", "quit"),
            ("?", "help"),
            ("hjkl", "move"),
            ("⏎", enter),
            ("space", space),
            ("d", duty.as_str()),
            ("e", "export"),
            ("r", "reset"),
        ];
        let spans: Vec<Span> = keys
            .into_iter()
            .flat_map(|(k, what)| {
                [
                    Span::styled(format!(" {k} "), theme::KEY),
                    Span::raw(format!(" {what} ")),
                ]
            })
            .collect();
        Paragraph::new(Line::from(spans)).render(area, buf);
    }
}
