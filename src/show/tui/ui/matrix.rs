//! The NUMA matrix (`--matrix`) in place of the grid: a row per CPU node, a column per memory
//! node, each cell the median GB/s of all the CPU node's cores streaming arrays bound to the
//! memory node, with the grid's marks (measuring now, focused, noisy, contended, checksum).
//! The pairs are the grid's working sets, so selection, focus and the detail panel work on
//! them as on any cell.

use super::grid::{block, cell};
use super::status::StatusLine;
use super::theme;
use crate::engine::plan::CellId;
use crate::show::tui::app::App;
use crate::show::tui::click_map::Target;
use crate::show::tui::view::ViewState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, StatefulWidget, Widget};

/// Width of the row labels and of each memory node's column.
const LABEL_WIDTH: u16 = 24;
const COL_WIDTH: u16 = 12;

pub(super) struct MatrixPanel<'a>(pub &'a App);

impl StatefulWidget for MatrixPanel<'_> {
    type State = ViewState;

    fn render(self, area: Rect, buf: &mut Buffer, view: &mut ViewState) {
        let app = self.0;
        let (Some(m), Some(cols)) = (&app.setup.matrix, app.setup.matrix_columns()) else {
            return;
        };
        let block = block(app, None);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let threads = app.grid.threads.first().copied().unwrap_or(1);
        let mut head = vec![Span::styled(
            format!(
                "{:<w$}",
                "CPU node \\ memory node",
                w = LABEL_WIDTH as usize
            ),
            theme::HINT,
        )];
        for p in m.pairs.iter().take(cols) {
            head.push(Span::styled(
                format!(
                    "{:>w$}  ",
                    format!("node {}", p.mem_node),
                    w = COL_WIDTH as usize - 2
                ),
                theme::TITLE,
            ));
        }
        let mut lines = vec![Line::from(head)];
        for (row, pairs) in m.pairs.chunks(cols).enumerate() {
            let label = format!("node {} ({threads} thr)", pairs[0].cpu_node);
            let mut spans = vec![Span::raw(format!("{label:<w$}", w = LABEL_WIDTH as usize))];
            for col in 0..pairs.len() {
                let set = row * cols + col;
                spans.extend(cell(
                    app,
                    CellId::new(set, threads),
                    (set, 0),
                    COL_WIDTH as usize,
                ));
                let (x, y) = (
                    inner.x + LABEL_WIDTH + col as u16 * COL_WIDTH,
                    inner.y + 1 + row as u16,
                );
                if y < inner.bottom() && x + COL_WIDTH <= inner.right() {
                    view.clicks
                        .add(Rect::new(x, y, COL_WIDTH, 1), Target::Cell { set, col: 0 });
                }
            }
            lines.push(Line::from(spans));
        }
        if let Some(note) = &m.note {
            lines.push(Line::from(Span::styled(note.clone(), theme::HINT)));
        }
        Paragraph::new(lines).render(inner, buf);
        let status = Rect::new(inner.x, inner.bottom() - 1, inner.width, 1);
        StatusLine(app).render(status, buf);
    }
}
