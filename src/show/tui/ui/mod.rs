//! Drawing: one file per panel, each a widget that reads `App` and nothing else; `theme` holds
//! every colour and style; `layout` places the panels. Nothing here changes the state: what the
//! screen keeps from one frame to the next (where the cells were drawn, how far the grid has
//! scrolled) lives in `ViewState`, which the event loop owns and `App` reads for clicks.

mod detail;
mod footer;
mod grid;
mod header;
mod help;
mod host;
mod keys;
mod layout;
mod log;
mod log_view;
mod matrix;
mod status;
mod text;
pub(crate) mod theme;
mod threads;
mod timeline;
mod too_small;

use super::app::App;
use super::view::ViewState;
pub(crate) use help::max_scroll as help_max_scroll;
use ratatui::Frame;
pub use theme::monochrome_wanted;

/// Draws the whole screen and records what was drawn where; without colour when the view says.
pub fn draw(frame: &mut Frame, app: &App, view: &mut ViewState) {
    draw_panels(frame, app, view);
    if view.monochrome {
        theme::monochrome(frame.buffer_mut());
    }
}

fn draw_panels(frame: &mut Frame, app: &App, view: &mut ViewState) {
    view.clicks.clear();
    let area = frame.area();
    if layout::too_small(area, app) {
        frame.render_widget(too_small::TooSmall(app), area);
        return;
    }
    if app.view.log.open {
        frame.render_stateful_widget(log_view::LogViewPanel(app), area, view);
        if app.view.help {
            frame.render_widget(help::HelpOverlay(app), area);
        }
        return;
    }
    let a = layout::layout(area, app);
    frame.render_widget(header::HeaderBar(app), a.header);
    if app.setup.matrix.is_some() {
        frame.render_stateful_widget(matrix::MatrixPanel(app), a.grid, view);
    } else {
        frame.render_stateful_widget(grid::GridPanel(app), a.grid, view);
    }
    frame.render_widget(detail::DetailPanel(app), a.detail);
    if a.threads.width > 0 {
        frame.render_stateful_widget(threads::ThreadsPanel(app), a.threads, view);
    }
    frame.render_widget(host::HostPanel(app), a.host);
    frame.render_widget(log::LogPanel(app), a.log);
    frame.render_widget(footer::Footer(app), a.footer);
    if app.view.help {
        frame.render_widget(help::HelpOverlay(app), area);
    }
}
