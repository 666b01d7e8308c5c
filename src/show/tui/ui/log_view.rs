//! `L`: the event log over the whole screen, as far back as it keeps, its entries drawn as in
//! the log panel (`log`). It scrolls (↑↓, PgUp/PgDn, Home/End), searches (`/`, `n`, `N`; the
//! hit is marked) and shows one kind of entry at a time (`f`); its last line says the keys,
//! the search being typed, or that a search found nothing. The state is `LogView`.

use super::log::{MARGIN, entry_lines};
use super::theme;
use crate::show::tui::app::App;
use crate::show::tui::view::ViewState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, StatefulWidget, Widget};

pub(super) struct LogViewPanel<'a>(pub &'a App);

impl StatefulWidget for LogViewPanel<'_> {
    type State = ViewState;

    fn render(self, area: Rect, buf: &mut Buffer, view: &mut ViewState) {
        let app = self.0;
        let lv = &app.view.log;
        let shown = app.narration.log.shown(lv.filter);
        let bottom = lv.bottom_index(&shown);
        let place = match (bottom, lv.bottom) {
            (Some(i), Some(_)) => format!("{} of {}", i + 1, shown.len()),
            _ => format!("newest of {}", shown.len()),
        };
        let search = if lv.query.is_empty() || lv.typing {
            String::new()
        } else {
            format!(" · search “{}”", lv.query)
        };
        let title = format!(" log: {} · {place}{search} ", lv.filter.name());
        let block = Block::bordered().title(Span::styled(title, theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 {
            return;
        }
        let rows = inner.height as usize - 1;
        view.log_page = rows;
        let text_w = (inner.width as usize).saturating_sub(MARGIN).max(10);
        let lines_of = |i: usize| entry_lines(shown[i], text_w, lv.found == Some(shown[i].seq));
        // Up from the bottom entry; the top one keeps its last lines if it does not fit.
        let mut lines: Vec<Line> = Vec::new();
        if let Some(b) = bottom {
            for i in (0..=b).rev() {
                if lines.len() >= rows {
                    break;
                }
                let mut entry = lines_of(i);
                let room = rows - lines.len();
                if entry.len() > room {
                    entry.drain(..entry.len() - room);
                }
                lines.extend(entry.into_iter().rev());
            }
            lines.reverse();
            // Nothing older left to show (Home): newer ones fill the rest.
            for i in b + 1..shown.len() {
                if lines.len() >= rows {
                    break;
                }
                lines.extend(lines_of(i).into_iter().take(rows - lines.len()));
            }
        }
        if lines.is_empty() {
            let none = format!("no {} entries yet", lv.filter.name());
            lines.push(Line::from(Span::styled(none, theme::HINT)));
        }
        let body = Rect::new(inner.x, inner.y, inner.width, rows as u16);
        Paragraph::new(lines).render(body, buf);
        let last = Rect::new(inner.x, inner.y + rows as u16, inner.width, 1);
        Paragraph::new(status_line(app)).render(last, buf);
    }
}

/// The view's last line: the search being typed, what a search did not find, or the keys.
fn status_line(app: &App) -> Line<'static> {
    let lv = &app.view.log;
    if lv.typing {
        return Line::from(vec![
            Span::styled("search: /", theme::TITLE),
            Span::raw(lv.query.clone()),
            Span::styled("▏ Enter finds, Esc cancels", theme::HINT),
        ]);
    }
    if let Some(n) = &lv.notice {
        return Line::from(Span::styled(n.clone(), theme::TITLE));
    }
    Line::from(vec![
        Span::styled("↑↓ PgUp PgDn Home End", theme::KEY),
        Span::raw(" scroll  "),
        Span::styled("/", theme::KEY),
        Span::raw(" search  "),
        Span::styled("n N", theme::KEY),
        Span::raw(" older/newer  "),
        Span::styled("f", theme::KEY),
        Span::raw(format!(" {}  ", lv.filter.name())),
        Span::styled("Esc L q", theme::KEY),
        Span::raw(" back"),
    ])
}
