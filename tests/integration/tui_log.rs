//! The event log on a made-up clock: a cell's disturbed rounds fold into a line a minute, the
//! entries that must be seen keep their marker, and the full-screen log view (`L`) scrolls,
//! searches and filters, and leaves on `q` without quitting. A person's case: the
//! view scrolled back to a contention entry after five minutes of disturbed rounds.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::cell::Cell;
use std::time::{Duration, Instant, SystemTime};
use stream_top::engine::events::{Event, RoundRecord, ThreadTiming};
use stream_top::engine::plan::CellId;
use stream_top::judge::watch::log::{Filter, Kind};
use stream_top::machine::counters::Counts;
use stream_top::machine::procs::{ProcSample, Process};
use stream_top::show::tui::app::{Action, App};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

const DRAM1: CellId = CellId {
    op: stream_top::engine::kernel::Op::Triad,
    set: 1,
    threads: 1,
    rerun: false,
};

thread_local! {
    /// The made-up clock's second now, and the wall-clock time it started at: the log's times
    /// read 12:00:00 plus the seconds since.
    static SECOND: Cell<u64> = const { Cell::new(0) };
    static WALL0: Cell<Option<SystemTime>> = const { Cell::new(None) };
}

fn hms(s: u64) -> String {
    let s = 12 * 3600 + s;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn process(pid: u32, comm: &str, cpu_pct: f64, faults_per_s: f64) -> Process {
    Process {
        pid,
        comm: comm.into(),
        user: Some("alice".into()),
        cpu_pct,
        faults_per_s,
        major_faults_per_s: 0.0,
        rss_bytes: Some(1 << 30),
        rss_growth_per_s: None,
        cpus: [0].into_iter().collect(),
        stream_top: false,
    }
}

/// A second of the other processes: firefox, and memhog while `hog`.
fn processes(hog: bool) -> ProcSample {
    let mut processes = vec![process(700, "firefox", 10.0, 20.0)];
    if hog {
        processes.insert(0, process(4242, "memhog", 95.0, 50_000.0));
    }
    ProcSample {
        elapsed_s: 1.0,
        processes,
        bandwidth: None,
    }
}

/// A round of `cell` at `gbs` per thread whose first worker was switched out and spent
/// `off_pct` % of its span off its CPU: disturbed by the counters, its rate as usual.
fn switched_out_round(cell: CellId, gbs: f64, off_pct: u64) -> Event {
    let own = 1_000_000u64;
    let threads = (0..cell.threads)
        .map(|t| ThreadTiming {
            start_ns: 1_000,
            end_ns: 1_000 + own,
            cpu_start: t as i32,
            cpu_end: t as i32,
            bytes: (gbs * own as f64) as u64,
            counters: Counts {
                switches: Some(if t == 0 { 3 } else { 0 }),
                task_clock_ns: Some(if t == 0 {
                    own * (100 - off_pct) / 100
                } else {
                    own
                }),
                ..Counts::default()
            },
        })
        .collect();
    Event::Round(Box::new(RoundRecord::from_threads(
        cell, false, 10, threads,
    )))
}

/// The four cells of the sweep, in the order it visits them.
const CELLS: [CellId; 4] = [cell(0, 1), cell(0, 2), DRAM1, cell(1, 2)];

const fn cell(set: usize, threads: usize) -> CellId {
    CellId {
        op: stream_top::engine::kernel::Op::Triad,
        set,
        threads,
        rerun: false,
    }
}

/// Whether the round of the `i`th cell in second `s` is disturbed: two seconds in five
/// (never five in a row: no disturbance episode), after a calm start that teaches references.
fn disturbed_at(s: u64, i: usize) -> bool {
    s > 5 && (s + i as u64) % 5 < 2
}

/// The trial's choice for dram: the first loop this CPU runs.
fn choice() -> Event {
    use stream_top::engine::events::{By, Choice, Pick};
    use stream_top::engine::kernel::Variant;
    let variant = Variant::all().find(|v| (v.available)()).unwrap();
    Event::Choice(Box::new(Choice {
        op: stream_top::engine::kernel::Op::Triad,
        set: 1,
        kept: Pick {
            variant,
            huge_pages: false,
        },
        kernel_by: By::Trial,
        layout_by: By::Trial,
        runner_up: None,
        trial: None,
    }))
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// The monitor sweeping the four cells, its clock made up.
struct Run {
    app: App,
    t0: Instant,
}

impl Run {
    fn new() -> Run {
        let mut app = app();
        WALL0.with(|w| w.set(Some(app.clock.wall_at(app.clock.started))));
        SECOND.with(|s| s.set(0));
        app.clock.stamp = || hms(SECOND.with(Cell::get));
        app.clock.time_of = |t| {
            let wall0 = WALL0.with(Cell::get).expect("set at the start");
            hms(t.duration_since(wall0).map_or(0, |d| d.as_secs()))
        };
        let t0 = app.clock.started;
        Run { app, t0 }
    }

    /// Second `s`: a process sample, then a round of each cell, disturbed as `disturbed_at`
    /// says; dram × 1 at 6 GB/s instead of 10 while `hog`.
    fn second(&mut self, s: u64, hog: bool) {
        SECOND.with(|c| c.set(s));
        let at = self.t0 + Duration::from_secs(s);
        self.app.on_procs_at(processes(hog), at);
        for (i, cell) in CELLS.into_iter().enumerate() {
            let gbs = if hog && cell == DRAM1 { 6.0 } else { 10.0 };
            let round = if disturbed_at(s, i) {
                // 20 to 50 % off CPU.
                switched_out_round(cell, gbs, 20 + s % 7 * 5)
            } else {
                round(cell, gbs)
            };
            self.app.on_event_at(&round, at);
        }
    }

    /// Five minutes of the sweep, with disturbed rounds throughout and a hog that takes 40 %
    /// of dram × 1 for half a minute from second 120.
    fn five_minutes() -> Run {
        let mut r = Run::new();
        for s in 1..=300 {
            r.second(s, (120..150).contains(&s));
        }
        r
    }

    fn press(&mut self, code: KeyCode) -> Action {
        self.app.on_key(key(code))
    }

    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    fn screen(&self, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| ui::draw(f, &self.app, &mut ViewState::default()))
            .unwrap();
        let b = t.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| b[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Five minutes of disturbed rounds are five lines, one a minute, each with its count and the
/// worst share off CPU; the contention entries stay among them.
#[test]
fn five_minutes_of_disturbed_rounds_fold_into_a_line_a_minute() {
    let r = Run::five_minutes();
    let log = &r.app.narration.log;
    for (i, cell) in CELLS.into_iter().enumerate() {
        let late: Vec<_> = log
            .iter()
            .filter(|e| e.kind == Kind::Late && e.cell == Some(cell))
            .collect();
        assert_eq!(late.len(), 5, "{late:#?}");
        let disturbed = (1..=300).filter(|&s| disturbed_at(s, i)).count();
        assert_eq!(
            late.iter().map(|e| e.count as usize).sum::<usize>(),
            disturbed
        );
    }
    let late: Vec<_> = log
        .iter()
        .filter(|e| e.kind == Kind::Late && e.cell == Some(DRAM1))
        .collect();
    assert_eq!(late[0].time, "12:00:08");
    assert!(
        late[0].text.starts_with(
            "disturbed rounds on dram ×1: 24 in 56 s, t0 off CPU up to 50 %; last: t0 switched out 3×"
        ),
        "{}",
        late[0].text
    );
    let contention: Vec<_> = log.iter().filter(|e| e.kind == Kind::Contention).collect();
    assert_eq!(contention.len(), 2, "{contention:#?}");
    assert!(
        contention[0]
            .text
            .starts_with("contention on dram ×1 since 12:02:00"),
        "{}",
        contention[0].text
    );
    assert!(contention[1].text.contains("over after 30 s"));
}

/// After five minutes, `L`, a search for the contention's start, and the
/// view shows it, marked, among the minute lines of disturbed rounds.
#[test]
fn the_log_view_scrolls_back_to_a_contention_entry_after_five_minutes_of_disturbed_rounds() {
    let mut r = Run::five_minutes();
    assert_eq!(r.press(KeyCode::Char('L')), Action::Redraw);
    r.press(KeyCode::Char('/'));
    r.type_text("contention on dram");
    r.press(KeyCode::Enter);
    // The newest hit first: the end of the episode; `n`: its start.
    let found = |r: &Run| {
        let seq = r.app.view.log.found.expect("a hit");
        let log = &r.app.narration.log;
        log.iter().find(|e| e.seq == seq).unwrap().text.clone()
    };
    assert!(found(&r).contains("over after 30 s"), "{}", found(&r));
    r.press(KeyCode::Char('n'));
    assert!(found(&r).contains("since 12:02:00"), "{}", found(&r));
    // At 80 × 24, where the log panel has two lines.
    let screen = r.screen(80, 24);
    assert!(
        screen.contains("▼ contention on dram ×1 since 12:02:00"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
    // Nothing older holds it: said on the last line, the view stays.
    r.press(KeyCode::Char('n'));
    assert!(
        r.screen(100, 30)
            .contains("no older entry holds “contention on dram”")
    );
    assert!(found(&r).contains("since 12:02:00"));
}

/// The view's keys: it scrolls entry by entry and by the page, Home and End; `f` shows one
/// kind at a time; `q` and Esc leave the view, not the monitor.
#[test]
fn the_log_view_scrolls_filters_and_leaves_on_q() {
    let mut r = Run::five_minutes();
    r.press(KeyCode::Char('L'));
    assert!(r.app.view.log.open);
    let newest = r.app.narration.log.last().unwrap().seq;
    assert_eq!(r.app.view.log.bottom, None, "the newest, following");
    r.press(KeyCode::Up);
    assert_eq!(r.app.view.log.bottom, Some(newest - 1));
    r.press(KeyCode::Down);
    assert_eq!(
        r.app.view.log.bottom, None,
        "back at the newest: following again"
    );
    r.press(KeyCode::Home);
    let oldest = r.app.narration.log.iter().next().unwrap();
    assert_eq!(r.app.view.log.bottom, Some(oldest.seq));
    let top = r.screen(100, 30);
    let first_entry = top.lines().nth(1).unwrap();
    let start: String = oldest.text.chars().take(12).collect();
    assert!(first_entry.contains(&start), "{top}");
    r.press(KeyCode::End);
    assert_eq!(r.app.view.log.bottom, None);
    r.press(KeyCode::PageUp);
    assert_eq!(
        r.app.view.log.bottom,
        Some(newest - 10),
        "a page of 10 before a frame"
    );
    // f: contention only.
    r.press(KeyCode::Char('f'));
    assert_eq!(r.app.view.log.filter, Filter::Contention);
    let s = r.screen(100, 30);
    assert!(s.contains(" log: contention "), "{s}");
    assert!(!s.contains("disturbed rounds on"), "{s}");
    assert!(s.contains("▼ contention on dram ×1 since 12:02:00"), "{s}");
    for _ in 0..4 {
        r.press(KeyCode::Char('f'));
    }
    assert_eq!(r.app.view.log.filter, Filter::All);
    // q leaves the view and is not a quit; a second q quits.
    assert_eq!(r.press(KeyCode::Char('q')), Action::Redraw);
    assert!(!r.app.view.log.open);
    assert!(r.screen(100, 30).contains(" events · L: full log "));
    r.press(KeyCode::Char('L'));
    assert_eq!(r.press(KeyCode::Esc), Action::Redraw);
    assert!(!r.app.view.log.open);
    assert_eq!(r.press(KeyCode::Char('q')), Action::Quit);
}

/// While a search is typed, every key is text: `q`, `f` and `L` too; Esc cancels it.
#[test]
fn a_search_being_typed_takes_every_key() {
    let mut r = Run::five_minutes();
    r.press(KeyCode::Char('L'));
    r.press(KeyCode::Char('/'));
    r.type_text("qfL");
    assert!(r.app.view.log.open);
    assert_eq!(r.app.view.log.query, "qfL");
    assert!(r.screen(100, 30).contains("search: /qfL"));
    r.press(KeyCode::Backspace);
    assert_eq!(r.app.view.log.query, "qf");
    r.press(KeyCode::Esc);
    assert!(!r.app.view.log.typing && r.app.view.log.query.is_empty());
    assert!(r.app.view.log.open, "Esc ends the search, not the view");
}

/// The log panel and the view mark what must be seen: contention, the trial's choices,
/// errors.
#[test]
fn contention_choices_and_errors_carry_a_marker() {
    let mut r = Run::five_minutes();
    r.app
        .log_line(Kind::Error, "export failed: disk full".into());
    let s = r.screen(160, 50);
    assert!(s.contains("12:05:00 ✗ export failed: disk full"), "{s}");
    r.press(KeyCode::Char('L'));
    let s = r.screen(160, 50);
    assert!(
        s.contains("12:02:04 ▼ contention on dram ×1 since 12:02:00"),
        "{s}"
    );
    assert!(
        s.contains("12:00:08   disturbed rounds on dram ×1: 24 in 56 s"),
        "{s}"
    );
}

/// A live export carries the log as the screen shows it: the folded lines with their counts,
/// the contention entries, and a choice of the trial as a kind of its own.
#[test]
fn a_live_export_carries_the_folded_log() {
    use stream_top::show::report::{Snapshot, to_markdown};
    let mut r = Run::five_minutes();
    r.app.on_event(&choice());
    let app = &r.app;
    let snap = Snapshot::build(
        &crate::support::report_fixtures::run_info("box", None),
        &app.grid,
        &app.board,
        &crate::support::report_fixtures::host(0.5),
        "2026-01-02 03:04:05".into(),
    )
    .with_events(
        &app.grid,
        app.narration.watch.episodes(),
        app.narration.log.iter(),
        |t| app.clock.wall_at(t),
        app.clock.now,
    );
    assert_eq!(snap.log.len(), app.narration.log.len());
    let folded = snap
        .log
        .iter()
        .find(|l| l.kind == "late" && l.text.starts_with("disturbed rounds on dram ×1"))
        .expect("a folded line");
    assert_eq!((folded.time.as_str(), folded.count), ("12:00:08", 24));
    assert_eq!(
        snap.log.iter().filter(|l| l.kind == "contention").count(),
        2
    );
    assert_eq!(snap.log.last().unwrap().kind, "choice");
    let md = to_markdown(&snap);
    assert!(
        md.contains("- 12:00:08 disturbed rounds on dram ×1: 24 in 56 s, t0 off CPU up to 50 %"),
        "{md}"
    );
    assert!(!md.contains("(×24)"), "the count is said once: {md}");
}
