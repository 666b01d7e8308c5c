//! The last line: the keys, and what each does now; or, after a key that asks or was merged
//! (`R`, `e`), what it did instead.

use super::theme;
use crate::show::tui::app::{App, Mode};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub(super) struct Footer<'a>(pub &'a App);

impl Widget for Footer<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        if let Some(text) = app.view.notice(app.clock.now) {
            let line = Line::from(Span::styled(format!(" {text} "), theme::NOTE));
            Paragraph::new(line).render(area, buf);
            return;
        }
        let enter = match app.view.mode {
            Mode::Focus(c) if c == app.selected() => "sweep",
            _ => "focus",
        };
        let space = if app.view.pause_requested {
            "resume"
        } else {
            "pause"
        };
        let duty = format!("duty {} %", app.view.duty);
        // (key, what, rank): on a narrow screen the highest ranks go first, so that quitting,
        // help and resetting stay in view.
        let keys = [
            ("q", "quit", 0),
            ("?", "help", 0),
            ("hjkl", "move", 6),
            ("⏎", enter, 2),
            ("space", space, 3),
            ("d", duty.as_str(), 7),
            ("e", "export", 4),
            ("r", "reset cell", 1),
            ("R", "reset all", 1),
            ("p", "pin ref", 5),
        ];
        let width = |keys: &[(&str, &str, u8)]| -> usize {
            keys.iter()
                .map(|(k, what, _)| k.chars().count() + what.chars().count() + 4)
                .sum()
        };
        let mut shown: Vec<(&str, &str, u8)> = keys.to_vec();
        while width(&shown) > area.width as usize {
            let Some(worst) = shown.iter().map(|k| k.2).max().filter(|r| *r > 0) else {
                break;
            };
            let i = shown.iter().rposition(|k| k.2 == worst).unwrap_or(0);
            shown.remove(i);
        }
        let spans: Vec<Span> = shown
            .into_iter()
            .flat_map(|(k, what, _)| {
                [
                    Span::styled(format!(" {k} "), theme::KEY),
                    Span::raw(format!(" {what} ")),
                ]
            })
            .collect();
        Paragraph::new(Line::from(spans)).render(area, buf);
    }
}
