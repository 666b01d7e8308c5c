//! What the screen remembers from one frame to the next. The event loop owns it; the panels
//! write it as they draw; `App` reads the click map.

use crate::show::tui::click_map::ClickMap;

#[derive(Debug, Default)]
pub struct ViewState {
    /// Where the frame on screen drew each cell of the grid, for the mouse.
    pub clicks: ClickMap,
    /// Draw without colour (`NO_COLOR`, `TERM=dumb`): set once, before the first frame.
    pub monochrome: bool,
    /// The first thread column the grid shows: it scrolls only as far as the selection needs.
    pub(super) grid_offset: usize,
    /// The first working-set row the grid shows, likewise.
    pub(super) grid_row_offset: usize,
    /// Thread lines the per-thread list had room for: a page for PgUp/PgDn.
    pub threads_page: usize,
}
