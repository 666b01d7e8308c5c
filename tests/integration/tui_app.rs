//! The monitor's state without a terminal: keys become actions and engine commands, engine
//! events become figures, marks and log lines.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::time::Duration;
use stream_top::engine::events::{Command, Event, Stage};
use stream_top::engine::plan::CellId;
use stream_top::judge::watch::log::Kind;
use stream_top::machine::host::HostSample;
use stream_top::show::tui::app::App;
use stream_top::show::tui::app::{Action, Mode};
use stream_top::show::tui::input::next_duty;
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

#[test]
fn quit_keys() {
    let mut a = app();
    assert_eq!(a.on_key(ch('q')), Action::Quit);
    assert_eq!(a.on_key(key(KeyCode::Esc)), Action::Quit);
    assert_eq!(
        a.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Action::Quit
    );
    // Key releases (kitty protocol) do nothing.
    let mut release = ch('q');
    release.kind = KeyEventKind::Release;
    assert_eq!(a.on_key(release), Action::None);
}

#[test]
fn arrows_and_hjkl_move_within_the_grid() {
    let mut a = app();
    assert_eq!(a.selected(), CellId::new(0, 1));
    assert_eq!(a.on_key(ch('l')), Action::Redraw);
    assert_eq!(a.selected(), CellId::new(0, 2));
    assert_eq!(a.on_key(key(KeyCode::Right)), Action::None, "clamped");
    assert_eq!(a.on_key(ch('j')), Action::Redraw);
    assert_eq!(a.selected(), CellId::new(1, 2));
    assert_eq!(a.on_key(key(KeyCode::Down)), Action::None);
    a.on_key(key(KeyCode::Left));
    a.on_key(key(KeyCode::Up));
    assert_eq!(a.selected(), CellId::new(0, 1));
    a.on_key(ch('k'));
    a.on_key(ch('h'));
    assert_eq!(a.selected(), CellId::new(0, 1));
}

#[test]
fn enter_focuses_the_selected_cell_and_again_sweeps() {
    let mut a = app();
    a.on_key(ch('j'));
    let cell = CellId::new(1, 1);
    assert_eq!(
        a.on_key(key(KeyCode::Enter)),
        Action::Send(Command::Focus(cell))
    );
    assert_eq!(a.view.mode, Mode::Focus(cell));
    // Enter on another cell moves the focus there.
    a.on_key(ch('l'));
    assert_eq!(
        a.on_key(key(KeyCode::Enter)),
        Action::Send(Command::Focus(CellId::new(1, 2)))
    );
    // Enter on the focused cell goes back to the sweep.
    assert_eq!(a.on_key(key(KeyCode::Enter)), Action::Send(Command::Sweep));
    assert_eq!(a.view.mode, Mode::Sweep);
}

#[test]
fn space_pauses_and_resumes_and_the_engine_confirms() {
    let mut a = app();
    assert_eq!(a.on_key(ch(' ')), Action::Send(Command::Pause));
    assert!(a.view.pause_requested && !a.live.paused);
    a.on_event(&Event::Paused);
    assert!(a.live.paused);
    assert_eq!(a.on_key(ch(' ')), Action::Send(Command::Resume));
    a.on_event(&Event::Resumed);
    assert!(!a.live.paused);
}

#[test]
fn d_cycles_the_duty() {
    let mut a = app();
    assert_eq!(a.on_key(ch('d')), Action::Send(Command::SetDuty(50)));
    assert_eq!(a.on_key(ch('d')), Action::Send(Command::SetDuty(10)));
    assert_eq!(a.on_key(ch('d')), Action::Send(Command::SetDuty(100)));
    assert_eq!(next_duty(30), 10);
    assert_eq!(next_duty(5), 100);
    assert_eq!(next_duty(75), 50);
}

#[test]
fn e_exports_and_the_log_says_where() {
    let mut a = app();
    assert_eq!(a.on_key(ch('e')), Action::Export);
    a.exported(&["results/x.md".into(), "results/x.json".into()]);
    let last = a.narration.log.last().unwrap();
    assert_eq!(last.kind, Kind::Export);
    assert_eq!(last.text, "exported results/x.{md,json}");
    a.exported(&["a/x.md".into(), "b/y.md".into()]);
    assert_eq!(
        a.narration.log.last().unwrap().text,
        "exported a/x.md, b/y.md"
    );
    a.export_failed("disk full");
    let last = a.narration.log.last().unwrap();
    assert_eq!(last.kind, Kind::Error);
    assert_eq!(last.text, "export failed: disk full");
}

#[test]
fn r_resets_the_selected_cell_and_shift_r_every_cell() {
    let mut a = app_with_figures();
    assert!(a.figures(CellId::new(0, 1)).is_some());
    assert_eq!(a.on_key(ch('r')), Action::Redraw);
    assert!(a.figures(CellId::new(0, 1)).is_none());
    assert!(
        a.figures(CellId::new(1, 1)).is_some(),
        "only the selected cell"
    );
    // While focused, `r` resets the focused cell even when another is selected.
    a.on_key(ch('j'));
    a.on_key(key(KeyCode::Enter));
    a.on_key(ch('k'));
    a.on_key(ch('r'));
    assert!(a.figures(CellId::new(1, 1)).is_none());
    assert!(a.figures(CellId::new(0, 2)).is_some());
    assert!(a.narration.log.last().unwrap().text.contains("dram ×1"));
    let shift_r = KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT);
    assert_eq!(a.on_key(shift_r), Action::Redraw);
    assert_eq!(a.on_key(shift_r), Action::Redraw);
    assert!(a.board.cells().all(|(_, c)| c.window.is_empty()));
    assert!(a.narration.log.last().unwrap().text.contains("every cell"));
}

/// Cells that still hold rounds.
fn measured(a: &App) -> usize {
    a.board
        .cells()
        .filter(|(_, c)| !c.window.is_empty())
        .count()
}

/// The footer, the screen's last line, at 120×40.
fn footer(a: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ui::draw(f, a, &mut ViewState::default()))
        .unwrap();
    let b = t.backend().buffer();
    (0..120).map(|x| b[(x, 39)].symbol()).collect()
}

/// One `R` asks and wipes nothing; the footer says how to go on. The old monitor wiped every
/// cell at the first `R`.
#[test]
fn one_shift_r_asks_and_wipes_nothing() {
    let mut a = app_with_figures();
    let t0 = a.clock.now;
    let lines = a.narration.log.len();
    assert_eq!(a.on_key_at(ch('R'), t0), Action::Redraw);
    assert_eq!(measured(&a), 4, "every cell keeps its rounds");
    assert_eq!(
        a.narration.log.len(),
        lines,
        "nothing reset, nothing logged"
    );
    assert!(
        footer(&a).contains("press R again within 3 s to wipe every cell's statistics"),
        "{}",
        footer(&a)
    );
}

#[test]
fn shift_r_twice_wipes_every_cell() {
    let mut a = app_with_figures();
    let t0 = a.clock.now;
    a.on_key_at(ch('R'), t0);
    assert_eq!(
        a.on_key_at(ch('R'), t0 + Duration::from_secs(2)),
        Action::Redraw
    );
    assert_eq!(measured(&a), 0);
    assert!(a.narration.log.last().unwrap().text.contains("every cell"));
    assert!(footer(&a).contains(" q  quit"), "the keys are back");
}

/// Any other key between the two `R`s cancels, and does nothing else; so does waiting longer
/// than the question allows (the late `R` asks again).
#[test]
fn shift_r_then_another_key_cancels() {
    let mut a = app_with_figures();
    let t0 = a.clock.now;
    a.on_key_at(ch('R'), t0);
    assert_eq!(a.on_key_at(ch('x'), t0), Action::Redraw);
    assert!(footer(&a).contains("wipe of every cell cancelled"));
    assert_eq!(a.on_key_at(ch('R'), t0), Action::Redraw);
    assert_eq!(measured(&a), 4, "the R after the cancel asks again");
    // The answer to the question is not a command: `j` does not move the selection.
    assert_eq!(a.on_key_at(ch('j'), t0), Action::Redraw);
    assert_eq!(a.selected(), CellId::new(0, 1));
    // Too late: the second R is a first one again.
    a.on_key_at(ch('R'), t0);
    a.on_key_at(ch('R'), t0 + Duration::from_secs(4));
    assert_eq!(measured(&a), 4);
    a.on_key_at(ch('R'), t0 + Duration::from_secs(5));
    assert_eq!(measured(&a), 0);
}

/// The grid's cell text at 120×40 (the screen as one string).
fn screen(a: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ui::draw(f, a, &mut ViewState::default()))
        .unwrap();
    let b = t.backend().buffer();
    b.content.iter().map(|c| c.symbol()).collect()
}

/// A cell that could not run: `R` asks the engine to try it again (and still asks before a
/// wipe); its "failed" mark goes when the engine tries it and comes back if it fails again.
/// The live monitor used to keep "failed" whatever was pressed.
#[test]
fn shift_r_tries_failed_cells_again_and_their_mark_follows_the_engine() {
    let mut a = app();
    for _ in 0..5 {
        for cell in [CellId::new(0, 1), CellId::new(0, 2), CellId::new(1, 1)] {
            a.on_event(&round(cell, 10.0));
        }
    }
    let dram = CellId::new(1, 2);
    let failed = Event::CellFailed {
        cell: dram,
        reason: "stopped before the container's memory limit".into(),
    };
    a.on_event(&failed);
    assert!(screen(&a).contains("failed"));
    assert!(footer(&a).contains(" R  retry failed "), "{}", footer(&a));
    let t0 = a.clock.now;
    assert_eq!(a.on_key_at(ch('R'), t0), Action::Send(Command::RetryFailed));
    assert_eq!(measured(&a), 3, "nothing wiped");
    assert!(footer(&a).contains("press R again within 3 s"));
    a.on_event(&Event::CellRetry {
        cell: dram,
        tries: 1,
    });
    assert!(!screen(&a).contains("failed"), "{}", screen(&a));
    let said = &a.narration.log.last().unwrap().text;
    assert_eq!(said, "dram ×2 tried again (try 1)");
    a.on_event(&failed);
    assert!(screen(&a).contains("failed"), "it failed again");
}

/// With no failed cell, `R` sends nothing: it only asks before the wipe.
#[test]
fn shift_r_sends_nothing_without_a_failed_cell() {
    let mut a = app_with_figures();
    assert_eq!(a.on_key(ch('R')), Action::Redraw);
}

/// The export the event loop makes of `Action::Export`: a file in `dir` (as `report::export`
/// writes one per format), then the log line.
fn export_into(a: &mut App, dir: &std::path::Path, action: Action) {
    if action == Action::Export {
        let n = std::fs::read_dir(dir).unwrap().count();
        let path = dir.join(format!("snapshot-{n}.md"));
        std::fs::write(&path, "snapshot").unwrap();
        a.exported(&[path]);
    }
}

/// An unbracketed paste of 738 `e`s (it once wrote 2,952 files): one export, the other
/// presses merged into it and the footer says where it wrote; an `e` a second later writes a
/// second export. The time is the keys', not the machine's: nothing here sleeps.
#[test]
fn a_burst_of_e_writes_one_export_and_a_later_e_another() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = app();
    let t0 = a.clock.now;
    for i in 0..738 {
        let at = t0 + Duration::from_micros(100 * i);
        let action = a.on_key_at(ch('e'), at);
        export_into(&mut a, dir.path(), action);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let first = dir.path().join("snapshot-0.md");
    assert_eq!(
        footer(&a).trim(),
        format!("export already written: {}", first.display())
    );
    let exports = |a: &App| {
        a.narration
            .log
            .iter()
            .filter(|e| e.kind == Kind::Export)
            .count()
    };
    assert_eq!(exports(&a), 1, "one log line, not 738");
    let action = a.on_key_at(ch('e'), t0 + Duration::from_secs(1));
    assert_eq!(action, Action::Export);
    export_into(&mut a, dir.path(), action);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    assert_eq!(exports(&a), 2);
}

#[test]
fn help_opens_and_any_key_but_quit_closes_it() {
    let mut a = app();
    assert_eq!(a.on_key(ch('?')), Action::Redraw);
    assert!(a.view.help);
    assert_eq!(
        a.on_key(key(KeyCode::Esc)),
        Action::Redraw,
        "Esc closes help"
    );
    assert!(!a.view.help);
    a.on_key(ch('?'));
    assert_eq!(a.on_key(ch('l')), Action::Redraw);
    assert!(!a.view.help);
    assert_eq!(
        a.selected(),
        CellId::new(0, 1),
        "the key only closed the help"
    );
    a.on_key(ch('?'));
    assert_eq!(a.on_key(ch('q')), Action::Quit);
}

fn left_click(column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

/// Draws a 120×40 frame and returns where it put the cells.
fn drawn(a: &App) -> ViewState {
    let mut view = ViewState::default();
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ui::draw(f, a, &mut view)).unwrap();
    view
}

#[test]
fn a_click_selects_the_cell_under_it() {
    let mut a = app();
    let view = drawn(&a);
    // At 120×40 the grid's rows are 6 (l2) and 7 (dram); its columns start at x 25 and 37,
    // 12 wide (see the tui_render snapshots). Row 7, x 40: dram × 2.
    assert_eq!(a.on_mouse(left_click(40, 7), &view.clicks), Action::Redraw);
    assert_eq!((a.view.sel_set, a.view.sel_col), (1, 1));
    assert_eq!(a.selected(), CellId::new(1, 2));
    // The same cell again changes nothing; so does a click outside the grid.
    assert_eq!(a.on_mouse(left_click(48, 7), &view.clicks), Action::None);
    assert_eq!(a.on_mouse(left_click(40, 39), &view.clicks), Action::None);
    assert_eq!(
        a.on_mouse(left_click(10, 6), &view.clicks),
        Action::None,
        "a label"
    );
    // The first column's left edge: l2 × 1.
    assert_eq!(a.on_mouse(left_click(25, 6), &view.clicks), Action::Redraw);
    assert_eq!(a.selected(), CellId::new(0, 1));
    // Only a left press selects.
    let right = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Right),
        ..left_click(40, 7)
    };
    assert_eq!(a.on_mouse(right, &view.clicks), Action::None);
    assert_eq!(a.selected(), CellId::new(0, 1));
}

#[test]
fn clicks_need_a_drawn_frame_and_do_nothing_under_the_help() {
    let mut a = app();
    // Nothing drawn yet: nowhere to click.
    let none = ViewState::default();
    assert_eq!(a.on_mouse(left_click(40, 7), &none.clicks), Action::None);
    let view = drawn(&a);
    a.on_key(ch('?'));
    assert_eq!(a.on_mouse(left_click(40, 7), &view.clicks), Action::None);
    assert_eq!(a.selected(), CellId::new(0, 1));
}

#[test]
fn clicks_follow_the_grid_when_it_scrolls() {
    let mut a = app();
    a.grid.threads = (1..=16).collect();
    for _ in 0..12 {
        a.on_key(key(KeyCode::Right));
    }
    // At 120 wide 7 columns fit: 7..13 thr, the first at x 25.
    let view = drawn(&a);
    assert_eq!(a.on_mouse(left_click(25, 7), &view.clicks), Action::Redraw);
    assert_eq!(a.selected(), CellId::new(1, 7));
}

#[test]
fn rounds_fill_cells_and_warmup_is_not_counted() {
    let mut a = app();
    let c = CellId::new(0, 1);
    a.on_event(&round_at(c, 10.0, 0, true));
    assert!(a.figures(c).is_none(), "warm-up only");
    assert_eq!(a.live.current, Some(c));
    for _ in 0..3 {
        a.on_event(&round(c, 10.0));
    }
    let f = a.figures(c).unwrap();
    assert_eq!(f.rounds, 3);
    assert!((f.median_gbs - 10.0).abs() < 1e-9);
}

#[test]
fn visit_marks_the_cell_being_measured_and_progress_clears() {
    let mut a = app();
    let c = CellId::new(1, 2);
    a.on_event(&Event::Progress {
        cell: c,
        stage: Stage::FirstTouch,
        done_bytes: 1 << 20,
        total_bytes: 4 << 20,
    });
    let p = a.live.progress.unwrap();
    assert_eq!(p.ratio(), 0.25);
    a.on_event(&Event::Allocated {
        cell: c,
        bytes: 192 << 20,
        huge_bytes: Some(0),
    });
    assert!(a.live.progress.is_none());
    a.on_event(&Event::Visit { cell: c, passes: 1 });
    assert_eq!(a.live.current, Some(c));
}

#[test]
fn late_rounds_fold_into_one_log_line() {
    let mut a = app();
    let c = CellId::new(0, 2);
    for _ in 0..4 {
        // Thread 1 starts 0.5 ms late: span 1.5 ms against 1 ms of its own.
        a.on_event(&round_at(c, 10.0, 500_000, false));
    }
    let late: Vec<_> = a
        .narration
        .log
        .iter()
        .filter(|e| e.kind == Kind::Late)
        .collect();
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].count, 4);
    assert!(late[0].text.contains("l2 ×2"), "{}", late[0].text);
    assert_eq!(a.figures(c).unwrap().late_rounds, 4);
}

#[test]
fn a_checksum_failure_is_logged_and_stays() {
    let mut a = app();
    let c = CellId::new(1, 1);
    a.on_event(&checksum(c, false));
    a.on_event(&checksum(c, true));
    let e = a
        .narration
        .log
        .iter()
        .find(|e| e.kind == Kind::Checksum)
        .unwrap();
    assert!(e.text.contains("CHECKSUM FAILED on dram ×1"), "{}", e.text);
    assert!(a.board.any_checksum_failed());
}

#[test]
fn errors_and_the_end_of_the_engine() {
    let mut a = app();
    a.on_event(&Event::Error("worker 1 panicked: boom".into()));
    a.on_event(&Event::Finished);
    assert!(a.live.finished);
    assert_eq!(
        a.live.last_error.as_deref(),
        Some("worker 1 panicked: boom")
    );
    assert!(a.narration.log.iter().any(|e| e.kind == Kind::Error));
}

#[test]
fn baseline_change_per_cell() {
    let mut a = app_with_figures();
    a.baseline.medians.insert(CellId::new(1, 1), 10.0);
    let d = a.baseline.change(&a.board, CellId::new(1, 1)).unwrap();
    assert!((d + 0.2).abs() < 1e-9, "{d}");
    assert!(a.baseline.change(&a.board, CellId::new(0, 1)).is_none());
}

#[test]
fn memory_stays_flat() {
    let mut a = app();
    let c = CellId::new(0, 2);
    for i in 0..20_000 {
        a.on_event(&round_at(
            c,
            10.0,
            if i % 2 == 0 { 500_000 } else { 0 },
            false,
        ));
        a.on_event(&Event::Allocated {
            cell: c,
            bytes: 1,
            huge_bytes: Some(0),
        });
    }
    assert!(a.narration.log.len() <= stream_top::judge::watch::log::LOG_CAP);
    let s = a.board.cell(c).unwrap();
    assert!(s.window.len() <= 5);
    assert!(a.live.history.cell(c).unwrap().len() as u64 <= stream_top::show::tui::history::SPAN);
}

#[test]
fn cpu_quota_throttling_is_named_in_late_rounds_and_contention() {
    let mut a = app();
    a.on_host(HostSample {
        cpu_quota: Some(1.5),
        throttled_ratio: Some(0.4),
        ..Default::default()
    });
    // Two threads, the second starting late.
    a.on_event(&round_at(CellId::new(1, 2), 10.0, 5_000_000, false));
    let e = a
        .narration
        .log
        .iter()
        .find(|e| e.kind == Kind::Late)
        .expect("late");
    assert!(
        e.text
            .contains("CPU quota 1.5 CPUs throttled in 40 % of its periods"),
        "{}",
        e.text
    );
    // A reference of 10 GB/s, then rounds at half of it, a second apart: contention, said
    // once the wait for a process sample is over.
    let c = CellId::new(1, 1);
    let at = |s: u64| a.clock.started + std::time::Duration::from_secs(s);
    let times: Vec<_> = (0..15).map(at).collect();
    for (s, t) in times.into_iter().enumerate() {
        a.on_event_at(&round(c, if s < 5 { 10.0 } else { 5.0 }), t);
    }
    let e = a
        .narration
        .log
        .iter()
        .find(|e| e.kind == Kind::Contention)
        .expect("contention");
    assert!(e.text.contains("throttled in 40 %"), "{}", e.text);
}
