//! A size sweep in the live monitor: a row of the grid per size, 33 of them for 16KiB..1GiB,
//! on screens too short to show them all. The grid shows what fits, says which rows those are,
//! and scrolls to the selection; every other panel keeps its place at 80×24.

use crate::support::report_fixtures::{GIB, topology};
use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use stream_top::engine::plan::{CellId, Grid, MemoryBudget, SetSpec, size_sets};
use stream_top::show::tui::app::App;
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

/// The live monitor over `--sets 16KiB..1GiB` at 1 and 2 threads, a few cells measured.
fn sweep_app() -> App {
    let specs = [SetSpec::parse("16KiB..1GiB").unwrap()];
    let sets = size_sets(&specs, &topology(), &MemoryBudget::new(64 * GIB, None), 2).unwrap();
    assert_eq!(sets.len(), 33);
    let mut a = app_with(Grid {
        sets,
        threads: vec![1, 2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    });
    for _ in 0..5 {
        for set in [0, 1, 12, 20] {
            a.on_event(&round(CellId::new(set, 1), 30.0));
        }
    }
    a
}

fn render_with(app: &App, w: u16, h: u16, view: &mut ViewState) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, view)).unwrap();
    t.backend().buffer().clone()
}

fn lines(b: &Buffer) -> Vec<String> {
    (0..b.area.height)
        .map(|y| (0..b.area.width).map(|x| b[(x, y)].symbol()).collect())
        .collect()
}

/// The grid's row labels on screen, in order.
fn row_labels(screen: &[String]) -> Vec<String> {
    screen
        .iter()
        .filter_map(|l| l.strip_prefix("│"))
        .map(|l| l.split("  ").next().unwrap_or("").trim().to_string())
        .filter(|l| l.ends_with("iB") || l.ends_with("iB†"))
        .collect()
}

#[test]
fn a_sweep_fits_80_by_24_and_scrolls_its_rows_to_the_selection() {
    let mut a = sweep_app();
    let mut view = ViewState::default();
    let screen = lines(&render_with(&a, 80, 24, &mut view));
    let all = screen.join("\n");
    assert!(!all.contains("needs a larger terminal"), "{all}");
    assert!(all.contains("rows 1–4 of 33"), "{all}");
    assert_eq!(
        row_labels(&screen),
        ["16 KiB", "22.6 KiB", "32 KiB", "45.2 KiB"],
        "{all}"
    );
    // The detail of the selected cell and the footer stay.
    assert!(all.contains("16 KiB × 1 thread"), "{all}");
    assert!(screen[23].contains("quit"), "{all}");

    for _ in 0..12 {
        a.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    }
    let screen = lines(&render_with(&a, 80, 24, &mut view));
    let all = screen.join("\n");
    assert!(all.contains("rows 10–13 of 33"), "{all}");
    assert_eq!(
        row_labels(&screen),
        ["362 KiB", "512 KiB", "724 KiB", "1 MiB"],
        "{all}"
    );
    // One step back up stays within the rows shown.
    a.on_key(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE));
    let screen = lines(&render_with(&a, 80, 24, &mut view));
    assert!(screen.join("\n").contains("rows 10–13 of 33"));
}

/// A tall screen shows every row and no row count.
#[test]
fn a_tall_screen_shows_the_whole_sweep() {
    let a = sweep_app();
    let screen = lines(&render_with(&a, 120, 60, &mut ViewState::default()));
    let all = screen.join("\n");
    assert!(!all.contains("rows 1–"), "{all}");
    let labels = row_labels(&screen);
    assert_eq!(labels.len(), 33, "{all}");
    assert_eq!(labels.last().map(String::as_str), Some("1 GiB"));
}

/// The screen at 80×24, for a look: `cargo test --test integration tui_sweep -- --nocapture --ignored`.
#[test]
#[ignore = "prints the sweep's screen at 80×24"]
fn print_the_sweep_at_80_by_24() {
    let a = sweep_app();
    for line in lines(&render_with(&a, 80, 24, &mut ViewState::default())) {
        println!("{line}");
    }
}
