//! The live monitor of several ops (`--op`): the grid shows one op at a time, `o` cycles them
//! and tells the engine, the header names the op shown, and each cell keeps its figures per op.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
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
fn one_op_keeps_the_header_and_o_does_nothing() {
    let mut a = app_with_figures();
    assert!(!screen(&a, 160, 50).contains("op triad"));
    let act = a.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::NONE));
    assert!(matches!(act, Action::None));
    assert_eq!(a.selected().op, Op::Triad);
}
