//! Where each panel goes: a pure function of the screen's size and the grid's height.

use crate::show::tui::app::App;
use ratatui::layout::{Constraint, Layout, Rect};

const MIN_WIDTH: u16 = 80;
/// Rows every layout needs besides one per working set.
const FIXED_ROWS: u16 = 20;
/// Rows the middle row needs before the per-thread bars get a panel beside it.
const MIDDLE_FOR_THREADS: u16 = 10;
/// Working-set rows the grid shows on the smallest screen; the rest scroll (a size sweep has
/// dozens).
const MIN_GRID_ROWS: usize = 4;
/// Rows the middle row keeps on the smallest screens: the detail's state line and four lines
/// of figures, within its border.
const MIDDLE_MIN: u16 = 7;
/// Rows host and log keep at least: two lines each, within their borders.
const BOTTOM_MIN: u16 = 4;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Areas {
    pub(crate) header: Rect,
    pub(crate) grid: Rect,
    pub(crate) detail: Rect,
    pub(crate) threads: Rect,
    pub(crate) host: Rect,
    pub(crate) log: Rect,
    pub(crate) footer: Rect,
}

/// The smallest screen the layout fits: 80 columns, and 20 rows plus one per row of the grid
/// (at least two; a size sweep's working sets at most `MIN_GRID_ROWS`, past which they
/// scroll): 80×23 for the default l1, l2, dram, 80×24 for a size sweep.
pub(super) fn min_size(app: &App) -> (u16, u16) {
    let rows = app.grid_rows().max(2);
    let rows = if app.setup.matrix.is_some() {
        rows
    } else {
        rows.min(MIN_GRID_ROWS)
    };
    (MIN_WIDTH, FIXED_ROWS + rows as u16)
}

/// Rows the grid shows: all of them when the screen has room, else as many working sets as
/// leave the other panels their least (at least `MIN_GRID_ROWS`); the matrix's rows, which do
/// not scroll, all of them.
fn grid_rows(area: Rect, app: &App) -> u16 {
    let rows = app.grid_rows() as u16;
    if app.setup.matrix.is_some() {
        return rows;
    }
    let room = area.height.saturating_sub(FIXED_ROWS);
    rows.min(room.max(MIN_GRID_ROWS as u16))
}

pub(super) fn too_small(area: Rect, app: &App) -> bool {
    let (w, h) = min_size(app);
    area.width < w || area.height < h
}

/// Rows the host panel needs beside the detail: the suspect line and five lines of the host.
const HOST_ROWS: u16 = 8;

pub(super) fn layout(area: Rect, app: &App) -> Areas {
    let grid_h = grid_rows(area, app) + 4;
    let [header, grid, rest, footer] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(grid_h),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    if rest.height >= 17 {
        roomy(app, header, grid, rest, footer)
    } else {
        compact(header, grid, rest, footer)
    }
}

/// A short screen: host and log share the bottom row; the detail takes the middle row, so that
/// every figure stays in view, and the per-thread bars come beside it with a few more rows.
fn compact(header: Rect, grid: Rect, rest: Rect, footer: Rect) -> Areas {
    let bottom_h = rest
        .height
        .saturating_sub(MIDDLE_FOR_THREADS)
        .clamp(5, 7)
        .min(rest.height.saturating_sub(MIDDLE_MIN))
        .max(BOTTOM_MIN);
    let [middle, bottom] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(bottom_h)]).areas(rest);
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
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(bottom);
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

/// Room enough: the detail (with its timeline) on the left; on the right the per-thread bars,
/// only as tall as the threads need, and the host under them; the log across the bottom.
fn roomy(app: &App, header: Rect, grid: Rect, rest: Rect, footer: Rect) -> Areas {
    let log_h = (6 + (rest.height - 17) / 3).min(14);
    let [middle, log] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(log_h)]).areas(rest);
    let [detail, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(middle);
    // A line per thread, and one more to say how many are left out when they do not all fit.
    let wanted = app.selected().threads as u16 + 2;
    let threads_h = wanted.min(right.height.saturating_sub(HOST_ROWS));
    let threads_h = if threads_h >= 3 { threads_h } else { 0 };
    let [threads, host] =
        Layout::vertical([Constraint::Length(threads_h), Constraint::Fill(1)]).areas(right);
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
