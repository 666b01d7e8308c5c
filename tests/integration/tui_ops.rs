//! The live monitor of several ops (`--op`): the grid shows one op at a time, `o` cycles them
//! and tells the engine, the header names the op shown, and each cell keeps its figures per op.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Modifier;
use stream_top::engine::events::Command;
use stream_top::engine::kernel::Op;
use stream_top::engine::plan::CellId;
use stream_top::show::tui::app::{Action, App};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, &mut ViewState::default()))
        .unwrap();
    let b = t.backend().buffer().clone();
    (0..h)
        .map(|y| (0..w).map(|x| b[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Copy cells at 30 and 60 GB/s (per thread 30), triad cells at 10 and 20 (per thread 10).
fn two_ops() -> App {
    let mut g = grid();
    g.ops = vec![Op::Copy, Op::Triad];
    let mut a = app_with(g);
    for _ in 0..5 {
        for set in 0..2 {
            for t in [1, 2] {
                a.on_event(&round(CellId::of(Op::Copy, set, t), 30.0));
                a.on_event(&round(CellId::of(Op::Triad, set, t), 10.0));
            }
        }
    }
    a
}

#[test]
fn o_cycles_the_op_the_grid_and_the_header_show_at_both_sizes() {
    for (w, h) in [(160, 50), (80, 24)] {
        let mut a = two_ops();
        let s = screen(&a, w, h);
        assert!(s.contains("op copy"), "{w}×{h}:\n{s}");
        assert!(
            s.contains("60.0") && !s.contains("20.0"),
            "copy's figures:\n{s}"
        );
        let act = a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
        assert!(matches!(act, Action::Send(Command::ShowOp(Op::Triad))));
        let s = screen(&a, w, h);
        assert!(s.contains("op triad"), "{w}×{h}:\n{s}");
        assert!(
            s.contains("20.0") && !s.contains("60.0"),
            "triad's figures:\n{s}"
        );
        // Round again: back to the first op, its figures kept.
        a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
        assert_eq!(a.view.op, Op::Copy);
        assert!(screen(&a, w, h).contains("60.0"));
    }
    // At 160 columns the header says what the loop is and which op of how many.
    let s = screen(&two_ops(), 160, 50);
    assert!(s.contains("op copy: a = b (o: 1 of 2)"), "{s}");
}

#[test]
fn one_op_keeps_the_header_and_o_says_there_is_only_one() {
    let mut a = app_with_figures();
    assert!(!screen(&a, 160, 50).contains("op triad"));
    let act = a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
    assert!(matches!(act, Action::Redraw));
    assert_eq!(a.selected().op, Op::Triad);
    let s = screen(&a, 80, 24);
    let footer = s.lines().last().unwrap_or_default();
    assert!(footer.contains("one op only (triad)"), "{s}");
}

/// The grid's own title names the op it shows, at the smallest screen too.
#[test]
fn the_grid_title_names_the_op_shown() {
    let mut a = two_ops();
    let title = |a: &App| {
        let s = screen(a, 80, 24);
        let line = s.lines().find(|l| l.contains("median GB/s"));
        line.unwrap_or_default().to_string()
    };
    assert!(title(&a).contains("op copy"), "{}", title(&a));
    a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
    assert!(title(&a).contains("op triad"), "{}", title(&a));
}

/// Whether the figure `text` is drawn dim (greyed) where it first appears.
fn dim_at(app: &App, text: &str) -> Option<bool> {
    let (w, h) = (160, 50);
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, &mut ViewState::default()))
        .unwrap();
    let b = t.backend().buffer().clone();
    let s = screen(app, w, h);
    let (y, line) = s.lines().enumerate().find(|(_, l)| l.contains(text))?;
    let x = line[..line.find(text)?].chars().count() as u16;
    Some(b[(x, y as u16)].modifier.contains(Modifier::DIM))
}

/// After `o`, the op's last known figures stay on the grid, greyed, until a round of theirs
/// arrives; then that cell is drawn as measured again.
#[test]
fn after_o_the_last_figures_of_the_op_show_greyed_until_new_rounds() {
    let mut a = two_ops();
    a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
    assert_eq!(
        dim_at(&a, "20.0"),
        Some(true),
        "triad's last figures, greyed"
    );
    assert_eq!(dim_at(&a, "10.0"), Some(true));
    a.on_event(&round(CellId::of(Op::Triad, 0, 2), 10.0));
    assert_eq!(
        dim_at(&a, "20.0"),
        Some(false),
        "a new round: measured again"
    );
}

/// `o` to an op with no rounds yet: the footer says its figures are coming, rather than a
/// grid of dots without a word.
#[test]
fn o_to_an_op_not_measured_yet_says_its_figures_are_coming() {
    let mut g = grid();
    g.ops = vec![Op::Copy, Op::Triad];
    let mut a = app_with(g);
    a.on_event(&round(CellId::of(Op::Copy, 0, 1), 30.0));
    a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
    let s = screen(&a, 80, 24);
    let footer = s.lines().last().unwrap_or_default();
    assert!(footer.contains("op triad: no rounds of it yet"), "{s}");
}
