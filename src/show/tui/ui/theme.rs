//! Every colour and style of the monitor, named for what it marks. The panels pick a role
//! (a title, a label, an alarm, a grade); only this file says what the role looks like, and
//! what it looks like on a screen without colour (`monochrome`).

use crate::judge::watch::log::Kind;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};
use std::ffi::OsStr;

/// Whether the screen goes without colour: `NO_COLOR` is set (any value; no-color.org), or the
/// terminal has none (`TERM` unset, empty or `dumb`).
pub fn monochrome_wanted(term: Option<&OsStr>, no_color: Option<&OsStr>) -> bool {
    no_color.is_some() || term.is_none_or(|t| t.is_empty() || t == "dumb")
}

/// Takes every colour off a drawn frame and keeps bold, dim and reverse. A coloured background
/// marks what must not be missed (a failed checksum, a gauge's filled part), so it becomes
/// reverse video; black, the gauge's empty part, is no mark and goes with the rest.
pub(crate) fn monochrome(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let marked = !matches!(cell.bg, Color::Reset | Color::Black);
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
        if marked {
            cell.modifier.insert(Modifier::REVERSED);
        }
    }
}

const BOLD: Modifier = Modifier::BOLD;

/// The program's name at the top left.
pub(crate) const BRAND: Style = Style::new().fg(Color::Cyan).add_modifier(BOLD);
/// Panel titles, column heads and whatever else is read first.
pub(crate) const TITLE: Style = Style::new().add_modifier(BOLD);
/// A figure's value.
pub(crate) const VALUE: Style = Style::new().add_modifier(BOLD);
/// A figure's label.
pub(crate) const LABEL: Style = Style::new().add_modifier(Modifier::DIM);
/// Legends, placeholders and other text read once.
pub(crate) const HINT: Style = Style::new().add_modifier(Modifier::DIM);
/// A failed checksum: the figures are wrong.
pub(crate) const ALARM: Style = Style::new()
    .fg(Color::White)
    .bg(Color::Red)
    .add_modifier(BOLD);
/// The failed-checksum banner in the header, which must not be missed.
pub(crate) const ALARM_BANNER: Style = ALARM.add_modifier(Modifier::SLOW_BLINK);
/// `PAUSED` in the grid's title.
pub(crate) const PAUSED_TITLE: Style = Style::new().fg(Color::Yellow).add_modifier(BOLD);
/// The status line while the workers are parked.
pub const PAUSED: Style = Style::new().fg(Color::Yellow);
/// The status line once the engine has ended.
pub(crate) const ENDED: Style = Style::new().fg(Color::Red).add_modifier(BOLD);
/// ▶ (being measured) and ◆ (focused).
pub(crate) const MARK: Style = Style::new().fg(Color::Cyan);
/// `*` after a cell with late rounds.
pub(crate) const LATE_MARK: Style = Style::new().fg(Color::Yellow).add_modifier(BOLD);
/// A figure that cannot be trusted (`~` in the grid, its reasons in the detail panel).
pub(crate) const NOISY: Style = Style::new().fg(Color::Magenta);
/// `k`: the row runs another kernel loop than the first row.
pub(crate) const LOOP_MARK: Style = Style::new().fg(Color::Blue);
/// A working set's sizing note.
pub(crate) const NOTE: Style = Style::new().fg(Color::Yellow);
/// Added to every part of the selected grid cell.
pub(crate) const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);
/// Allocation and first-touch progress.
pub(crate) const GAUGE: Style = Style::new().fg(Color::Blue).bg(Color::Black);
/// A contended cell: its mark in the grid, its state in the detail.
pub(crate) const CONTENDED: Style = Style::new().fg(Color::Magenta).add_modifier(BOLD);
/// A calm cell's state in the detail.
pub(crate) const CALM: Style = Style::new().fg(Color::Green);
/// The timeline: its bars, the reference line, the shading of contended seconds, the top
/// suspect's CPU share, and the axes.
pub(crate) const TIMELINE_BAR: Style = Style::new().fg(Color::Cyan);
pub(crate) const REFERENCE_LINE: Style = Style::new().fg(Color::Yellow);
pub(crate) const CONTENDED_SPAN: Style = Style::new().bg(Color::Indexed(53));
pub(crate) const SUSPECT_CPU: Style = Style::new().fg(Color::Magenta);
pub(crate) const AXIS: Style = Style::new().add_modifier(Modifier::DIM);
/// The suspect line of the host panel while the cell is contended.
pub(crate) const SUSPECT: Style = Style::new().fg(Color::Magenta).add_modifier(BOLD);
/// The histogram of per-thread rates in the threads panel's summary.
pub(crate) const HISTOGRAM: Style = Style::new().fg(Color::Cyan);
/// `E›` on the head of the thread count from which threads run on E-cores too.
pub(crate) const E_CORES: Style = Style::new().fg(Color::Yellow).add_modifier(BOLD);
/// A key in the footer.
/// The replay's mark in the header.
pub(crate) const REPLAY: Style = Style::new()
    .fg(Color::Black)
    .bg(Color::Yellow)
    .add_modifier(BOLD);
pub(crate) const KEY: Style = Style::new().add_modifier(Modifier::REVERSED);
/// The key lines of the help.
pub(crate) const HELP_KEYS: Style = Style::new().fg(Color::Cyan);

/// How close a figure is to what the hardware can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grade {
    Good,
    Fair,
    Poor,
}

/// A grid cell's median: coloured by its grade, dim until measured.
pub(crate) fn cell_value(grade: Option<Grade>, measured: bool) -> Style {
    let mut style = Style::new();
    if let Some(g) = grade {
        style = style.fg(match g {
            Grade::Good => Color::Green,
            Grade::Fair => Color::Yellow,
            Grade::Poor => Color::Red,
        });
    }
    if !measured {
        style = style.add_modifier(Modifier::DIM);
    }
    style.add_modifier(BOLD)
}

/// A cell's median against the baseline run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Faster,
    Same,
    Slower,
}

/// A thread's switch count: loud when it was switched out.
pub(crate) fn switched(yes: bool) -> Style {
    if yes {
        Style::new().fg(Color::Red)
    } else {
        Style::new().fg(Color::DarkGray)
    }
}

pub fn change(c: Change) -> Style {
    Style::new().fg(match c {
        Change::Faster => Color::Green,
        Change::Same => Color::Gray,
        Change::Slower => Color::Red,
    })
}

/// How a thread kept up in the last round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pace {
    /// Started with the others and ran about as fast as the fastest.
    Even,
    /// Ran well under the fastest thread's rate.
    Slow,
    /// Started late: held back before its first byte.
    Held,
}

/// A thread's bar in the threads panel.
pub(crate) fn pace_bar(p: Pace) -> Style {
    Style::new().fg(match p {
        Pace::Even => Color::Green,
        Pace::Slow => Color::Red,
        Pace::Held => Color::Yellow,
    })
}

/// A thread's start offset: loud when it held the round back.
pub(crate) fn start_offset(p: Pace) -> Style {
    match p {
        Pace::Held => Style::new().fg(Color::Yellow),
        Pace::Even | Pace::Slow => HINT,
    }
}

/// An entry of the event log.
pub(crate) fn log_entry(kind: Kind) -> Style {
    match kind {
        Kind::Info => Style::new(),
        // Many a minute, though folded: quieter than the entries that must be seen.
        Kind::Late => Style::new().fg(Color::Yellow).add_modifier(Modifier::DIM),
        Kind::Contention => Style::new().fg(Color::Magenta).add_modifier(BOLD),
        Kind::Choice => Style::new().fg(Color::Cyan).add_modifier(BOLD),
        Kind::Checksum => ALARM,
        Kind::Export => Style::new().fg(Color::Green),
        Kind::Error => Style::new().fg(Color::Red).add_modifier(BOLD),
    }
}
