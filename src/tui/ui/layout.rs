//! Where each panel goes: a pure function of the screen's size and the grid's height.

use crate::tui::app::App;
use ratatui::layout::{Constraint, Layout, Rect};

const MIN_WIDTH: u16 = 80;
/// Rows every layout needs besides one per working set.
const FIXED_ROWS: u16 = 20;
/// Rows the detail row needs before the per-thread bars get a panel beside it.
const MIDDLE_FOR_THREADS: u16 = 10;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Areas {
    pub header: Rect,
    pub grid: Rect,
    pub detail: Rect,
    pub threads: Rect,
    pub host: Rect,
    pub log: Rect,
    pub footer: Rect,
}

/// The smallest screen the layout fits: 80 columns, and 20 rows plus one per set (at least
/// two): 80×23 for the default l1, l2, dram.
pub(super) fn min_size(app: &App) -> (u16, u16) {
    (MIN_WIDTH, FIXED_ROWS + app.grid.sets.len().max(2) as u16)
}

pub(super) fn too_small(area: Rect, app: &App) -> bool {
    let (w, h) = min_size(app);
    area.width < w || area.height < h
}

pub(super) fn layout(area: Rect, app: &App) -> Areas {
    let grid_h = app.grid.sets.len() as u16 + 4;
    // What is left for the detail and threads row and the host and log row: the first gets
    // room for the per-thread bars before the second grows past its minimum, then the second
    // takes a third of any more.
    let avail = area.height.saturating_sub(4 + grid_h + 1);
    let bottom_h = if avail >= 17 {
        (7 + (avail - 17) / 3).min(16)
    } else {
        avail.saturating_sub(MIDDLE_FOR_THREADS).clamp(5, 7)
    };
    let [header, grid, middle, bottom, footer] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(grid_h),
        Constraint::Length(avail.saturating_sub(bottom_h)),
        Constraint::Length(bottom_h),
        Constraint::Length(1),
    ])
    .areas(area);
    // On a short screen the detail takes the whole row, so that every figure stays in view;
    // the per-thread bars come back with a few more rows.
    let detail_share = if middle.height < MIDDLE_FOR_THREADS {
        100
    } else {
        55
    };
    let [detail, threads] = Layout::horizontal([
        Constraint::Percentage(detail_share),
        Constraint::Percentage(100 - detail_share),
    ])
    .areas(middle);
    let [host, log] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(bottom);
    Areas {
        header,
        grid,
        detail,
        threads,
        host,
        log,
        footer,
    }
}
