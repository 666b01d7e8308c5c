//! What the live screen says, in words a newcomer reads once: one key described one way in the
//! footer and the help, the working sets' sizes said to be per array, shares that are never
//! below zero. Drawn on ratatui's TestBackend.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use stream_top::machine::host::HostSample;
use stream_top::show::tui::app::App;
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

/// The screen's rows as text, `w` × `h`.
fn screen(app: &App, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, &mut ViewState::default()))
        .unwrap();
    let buf = t.backend().buffer().clone();
    let cells: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
    cells.chunks(w as usize).map(|row| row.concat()).collect()
}

/// With no cell failed, `R` asks and a second `R` wipes: the footer says `R R  reset all`,
/// and the help names that and the retry `R` does when a cell failed, in the same words.
#[test]
fn the_footer_and_the_help_describe_capital_r_alike() {
    let mut a = app_with_figures();
    let rows = screen(&a, 160, 40);
    let footer = rows.last().unwrap();
    assert!(footer.contains(" R R  reset all "), "{footer}");
    a.on_key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE));
    let help = screen(&a, 160, 40).join("\n");
    assert!(help.contains("R retry failed   R R reset all"), "{help}");
}

/// A row's size is each array's: the grid's head says so, as the detail's title does, beside
/// the header's total of every array held.
#[test]
fn the_grid_says_its_sizes_are_per_array() {
    let a = app_with_figures();
    let rows = screen(&a, 120, 40);
    let text = rows.join("\n");
    assert!(text.contains("│per array \\ threads"), "{text}");
    assert!(text.contains(" per array "), "{text}");
}

/// Other processes' CPU, a difference of counters, can come out a hair below zero: it shows as
/// 0.0 %, never -0.0 %; a share too small to show at a tenth is `< 0.1 %`.
#[test]
fn other_processes_cpu_is_never_below_zero() {
    let mut a = app_with_figures();
    let others = |a: &mut App, pct: f64| {
        a.on_host(HostSample {
            others_cpu_pct: Some(pct),
            load: [0.5, 0.4, 0.3],
            mem_total: 16 << 30,
            mem_available: 12 << 30,
            ..Default::default()
        });
        let text = screen(a, 120, 40).join("\n");
        text.lines()
            .find(|l| l.contains("other processes"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    let line = others(&mut a, -0.01);
    assert!(line.contains("other processes 0.0 % of a CPU"), "{line}");
    let line = others(&mut a, 0.02);
    assert!(line.contains("other processes < 0.1 % of a CPU"), "{line}");
    let line = others(&mut a, 37.26);
    assert!(line.contains("other processes 37.3 % of a CPU"), "{line}");
}
