//! The last line: the keys, and what each does now; or, after a key that asks or was merged
//! (`R`, `e`), what it did instead.

use super::keys;
use super::theme;
use crate::show::tui::app::{App, Mode, speed_after};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// The keys of this rank and better are worth their short words before any is dropped.
const PRIORITY: u8 = 5;

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
        let probe = if app.probe.running() {
            "probe off"
        } else {
            "probe on"
        };
        let duty = format!("duty {} %", app.view.duty);
        let duty_short = format!("duty{}%", app.view.duty);
        // (key, what, in short, rank): on a narrow screen the highest ranks go first, so that
        // the keys a person needs most stay in view, in this order: q, ?, ⏎, space, d, e, r.
        // Where even those do not fit with their words (80 columns), the short words.
        let (play, speed) = replay_words(app);
        let replay_keys = [
            ("q", "quit", "quit", 0),
            ("?", "help", "help", 0),
            ("[ ]", "step 1 s", "step", 1),
            ("{ }", "episode", "ep", 2),
            ("g", "go to", "go", 3),
            ("space", play, play, 4),
            (">", speed.as_str(), speed.as_str(), 5),
            ("hjkl", "move", "move", 9),
            ("L", "log", "log", 8),
        ];
        let live_keys = [
            ("q", "quit", "quit", 0),
            ("?", "help", "help", 0),
            ("hjkl", "move", "move", 9),
            ("⏎", enter, enter, 1),
            ("space", space, space, 2),
            ("d", duty.as_str(), duty_short.as_str(), 3),
            keys::EXPORT.entry(),
            keys::RESET_CELL.entry(),
            keys::capital_r(app.any_failed()).entry(),
            ("p", "pin ref", "pin", 7),
            ("P", probe, "probe", 10),
        ];
        let width = |keys: &[(&str, &str, &str, u8)], short: bool| -> usize {
            keys.iter()
                .map(|(k, what, brief, _)| {
                    let what = if short { brief } else { what };
                    k.chars().count() + what.chars().count() + 4
                })
                .sum()
        };
        let mut shown: Vec<(&str, &str, &str, u8)> = if app.replay.is_some() {
            replay_keys.to_vec()
        } else {
            live_keys.to_vec()
        };
        let mut short = false;
        while width(&shown, short) > area.width as usize {
            let Some(worst) = shown.iter().map(|k| k.3).max().filter(|r| *r > 0) else {
                break;
            };
            if !short && worst <= PRIORITY {
                short = true;
                continue;
            }
            let i = shown.iter().rposition(|k| k.3 == worst).unwrap_or(0);
            shown.remove(i);
        }
        let spans: Vec<Span> = shown
            .into_iter()
            .flat_map(|(k, what, brief, _)| {
                let what = if short { brief } else { what };
                [
                    Span::styled(format!(" {k} "), theme::KEY),
                    Span::raw(format!(" {what} ")),
                ]
            })
            .collect();
        Paragraph::new(Line::from(spans)).render(area, buf);
    }
}

/// In a replay, what space does now and the speed `>` goes to next.
fn replay_words(app: &App) -> (&'static str, String) {
    let Some(r) = &app.replay else {
        return ("", String::new());
    };
    let next = speed_after(r.speed);
    let play = if r.playing { "pause" } else { "play" };
    (play, format!("{next}×"))
}
