//! Whole screens drawn on ratatui's TestBackend and compared cell by cell, styles included, with
//! insta snapshots (`tests/integration/snapshots/`) or `Buffer::with_lines`. A snapshot is the
//! screen as a person sees it: read it when it changes.

use crate::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use stream_top::engine::events::{Event, Stage};
use stream_top::engine::plan::CellId;
use stream_top::machine::host::{HostSample, ProcessCpu};
use stream_top::tui::app::App;
use stream_top::tui::log::Kind;
use stream_top::tui::ui::{self, ViewState};

fn render(app: &App, w: u16, h: u16) -> Buffer {
    render_with(app, w, h, &mut ViewState::default())
}

/// Draws with what the screen kept from earlier frames.
fn render_with(app: &App, w: u16, h: u16, view: &mut ViewState) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, view)).unwrap();
    t.backend().buffer().clone()
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn host() -> HostSample {
    HostSample {
        load: [0.52, 0.40, 0.33],
        mem_total: 16 << 30,
        mem_available: 12 << 30,
        swap_total: 2 << 30,
        swap_used: 0,
        swap_in_per_s: Some(0.0),
        swap_out_per_s: Some(0.0),
        cpu_some_avg10: Some(1.2),
        mem_some_avg10: Some(0.0),
        steal_pct: Some(0.0),
        others_cpu_pct: Some(12.5),
        top_others: vec![
            ProcessCpu {
                pid: 1,
                comm: "firefox".into(),
                cpu_pct: 8.1,
            },
            ProcessCpu {
                pid: 2,
                comm: "cc1".into(),
                cpu_pct: 3.0,
            },
        ],
        ..Default::default()
    }
}

/// Header (machine, caches, run, vendor); the grid with both rows and columns, the cell being
/// measured marked ▶ and the selection reversed; the detail of l2 × 1 with every figure; the
/// threads of its last round; the host panel; the footer on the last row.
#[test]
fn main_layout_shows_header_grid_detail_threads_host_log_and_footer() {
    let mut a = app_with_figures();
    a.on_host(host());
    a.on_event(&Event::Visit {
        cell: CellId::new(1, 2),
        passes: 1,
    });
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// A long entry wraps under its text, its time alone in the margin, and its end is in view.
#[test]
fn long_log_lines_wrap_under_their_text() {
    let mut a = app_with_figures();
    a.log_line(
        Kind::Contention,
        "contention on dram ×1: 41 % below median for 3 rounds (10.7 vs 18.2 GB/s); steal 0.0 %; top likwid-bench 115 %".into(),
    );
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// l2 × 2 shows `20.0*` (late), dram × 1 `✗ CHECKSUM`, the header the failed checksum banner;
/// the selection moved right, so the detail is l2 × 2 (late 1 of 5) and the threads panel says
/// LATE; the log has the checksum failure.
#[test]
fn late_and_checksum_marks_and_selection_moves_the_detail() {
    let mut a = app_with_figures();
    a.on_event(&round_at(CellId::new(0, 2), 10.0, 500_000, false));
    a.on_event(&checksum(CellId::new(1, 1), false));
    press(&mut a, KeyCode::Char('l'));
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// `vs A.json` in the grid's title and `-20.0%` in dram × 1.
#[test]
fn baseline_changes_show_in_cells() {
    let mut a = app_with_figures();
    a.baseline.insert(CellId::new(1, 1), 10.0);
    a.baseline_name = Some("A.json".into());
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// The status line is a gauge: `first touch of arrays for dram ×2: 48 MiB of 192 MiB`.
#[test]
fn progress_gauge_while_arrays_are_first_touched() {
    let mut a = app();
    a.on_event(&Event::Progress {
        cell: CellId::new(1, 2),
        stage: Stage::FirstTouch,
        done_bytes: 48 << 20,
        total_bytes: 192 << 20,
    });
    insta::assert_debug_snapshot!(render(&a, 100, 30));
}

/// `lines`, each padded with spaces to `width`: a screen for `Buffer::with_lines`.
fn padded<const N: usize>(lines: [&str; N], width: usize) -> [String; N] {
    lines.map(|l| format!("{l:<width$}"))
}

#[test]
fn too_small_terminal_says_the_size_it_needs() {
    let a = app_with_figures();
    let mut want = Buffer::with_lines(padded(
        [
            "",
            "",
            "",
            "",
            "",
            "",
            "             stream-top needs a larger terminal",
            "              at least 80×22; this one is 60×15",
            "                          (q quits)",
            "",
            "",
            "",
            "",
            "",
            "",
        ],
        60,
    ));
    want.set_style(Rect::new(13, 6, 34, 1), Modifier::BOLD);
    want.set_style(Rect::new(26, 8, 9, 1), Modifier::DIM);
    assert_eq!(render(&a, 60, 15), want);
}

/// Exactly the minimum (80×22) draws the monitor: every row of the grid, every figure of the
/// detail (which takes the whole row), the host, the events and the footer.
#[test]
fn the_smallest_screen_keeps_every_figure() {
    let a = app_with_figures();
    insta::assert_debug_snapshot!(render(&a, 80, 22));
}

/// A few rows more (80×26) and the per-thread bars have their panel; the checksum stays.
#[test]
fn a_few_rows_more_bring_the_thread_panel() {
    let a = app_with_figures();
    insta::assert_debug_snapshot!(render(&a, 80, 26));
}

/// The help names every figure and key, with `24 bytes per element`.
#[test]
fn help_overlay_explains_every_figure() {
    let mut a = app_with_figures();
    press(&mut a, KeyCode::Char('?'));
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// The help fits the smallest layout, from its first key line to `baseline`.
#[test]
fn help_overlay_fits_the_smallest_screen() {
    let mut a = app_with_figures();
    press(&mut a, KeyCode::Char('?'));
    insta::assert_debug_snapshot!(render(&a, 80, 22));
}

/// 16 thread columns at 100 wide: after 12 steps right the grid shows 13 thr, no longer 1 thr,
/// and ▸ says there are more to the right.
#[test]
fn many_thread_columns_scroll_to_the_selection() {
    let mut a = app();
    a.grid.threads = (1..=16).collect();
    for _ in 0..12 {
        press(&mut a, KeyCode::Right);
    }
    insta::assert_debug_snapshot!(render(&a, 100, 30));
}

/// The grid remembers how far it scrolled: after 12 steps right (8–13 thr shown) one step back
/// left moves the selection to 12 thr within the same columns, not the columns under it.
#[test]
fn moving_back_within_the_view_does_not_scroll() {
    let mut a = app();
    a.grid.threads = (1..=16).collect();
    for _ in 0..12 {
        press(&mut a, KeyCode::Right);
    }
    let mut view = ViewState::default();
    render_with(&a, 100, 30, &mut view);
    press(&mut a, KeyCode::Left);
    insta::assert_debug_snapshot!(render_with(&a, 100, 30, &mut view));
}

#[test]
fn no_color_draws_without_colours_and_keeps_the_alarm_visible() {
    use ratatui::style::Color;
    use std::ffi::OsStr;
    let mut app = app_with_figures();
    app.on_event(&checksum(CellId::new(1, 2), false));
    let coloured = |b: &Buffer| {
        b.content
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    // The same screen in colour has colours: the check below can fail.
    assert!(coloured(&render(&app, 120, 40)) > 0);
    let mut view = ViewState::default();
    view.monochrome = true;
    let mono = render_with(&app, 120, 40, &mut view);
    assert_eq!(coloured(&mono), 0, "no colour on a monochrome screen");
    let text: String = mono.content.iter().map(|c| c.symbol()).collect();
    assert!(text.contains("CHECKSUM"), "{text}");
    // The failed checksum (white on red in colour) is in reverse video.
    assert!(
        mono.content
            .iter()
            .any(|c| c.symbol() == "✗" && c.modifier.contains(Modifier::REVERSED))
    );

    let want = |term: Option<&str>, no_color: Option<&str>| {
        ui::monochrome_wanted(term.map(OsStr::new), no_color.map(OsStr::new))
    };
    assert!(
        want(Some("xterm-256color"), Some("")),
        "NO_COLOR of any value"
    );
    assert!(want(Some("xterm-256color"), Some("1")));
    assert!(want(Some("dumb"), None));
    assert!(want(Some(""), None));
    assert!(want(None, None));
    assert!(!want(Some("xterm-256color"), None));
}

#[test]
fn the_host_panel_shows_a_cpu_quota_and_its_throttling() {
    let mut a = app_with_figures();
    a.on_host(HostSample {
        cpu_quota: Some(1.5),
        throttled_ratio: Some(0.25),
        ..host()
    });
    let s = text(&render(&a, 120, 40));
    assert!(s.contains("quota 1.5 CPUs"), "{s}");
    assert!(s.contains("throttled 25 %"), "{s}");
    a.on_host(host());
    assert!(!text(&render(&a, 120, 40)).contains("quota"));
}

/// The screen's rows as text.
fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    let cells: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
    cells
        .chunks(w)
        .map(|row| row.concat())
        .collect::<Vec<_>>()
        .join("\n")
}

/// On a Mac the host panel names what macOS lacks (steal, PSI) with its reason instead of a
/// number, shows the memory-pressure level, and says how many processes could not be read.
#[test]
fn a_macs_host_panel_says_what_it_lacks() {
    use stream_top::machine::host::{HostSource, MemPressure};
    let mut a = app_with_figures();
    a.on_host(HostSample {
        source: HostSource::Mac,
        mem_pressure: Some(MemPressure::Warning),
        cpu_some_avg10: None,
        mem_some_avg10: None,
        steal_pct: None,
        unreadable_processes: 3,
        ..host()
    });
    let screen: String = render(&a, 120, 40)
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    for needle in [
        "steal - (none on macOS)",
        "available 12 GiB of 16 GiB",
        "memory pressure warning",
        "PSI - (Linux only)",
        "12.5 % of a CPU (3 unreadable)",
    ] {
        assert!(screen.contains(needle), "missing {needle:?}");
    }
    assert!(!screen.contains("MemAvailable"));
}
