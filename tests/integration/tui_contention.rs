//! Contention in the monitor's state, driven by synthetic streams of rounds and process samples
//! on a made-up clock: a reference that does not drift, episodes that begin, last and end with
//! hysteresis, suspects named by the evidence, and the keys that reset and pin references; a
//! hog that was there first (no calm reference, a disturbance), and recovery after an episode.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::{Duration, Instant};
use stream_top::engine::events::{Event, RoundRecord, ThreadTiming};
use stream_top::engine::plan::CellId;
use stream_top::judge::watch::contention::{EpisodeKind, Reference, Source, State, Thresholds};
use stream_top::judge::watch::log::Kind;
use stream_top::machine::counters::Counts;
use stream_top::machine::host::HostSample;
use stream_top::machine::procs::{ProcSample, Process};
use stream_top::show::tui::app::App;
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

const DRAM1: CellId = CellId {
    op: stream_top::engine::kernel::Op::Triad,
    set: 1,
    threads: 1,
    rerun: false,
};

fn process(pid: u32, comm: &str, user: &str, cpu_pct: f64, faults_per_s: f64) -> Process {
    Process {
        pid,
        comm: comm.into(),
        user: Some(user.into()),
        cpu_pct,
        faults_per_s,
        major_faults_per_s: 0.0,
        rss_bytes: Some(1 << 30),
        rss_growth_per_s: None,
        // Where the cell's thread runs (CPU 0 in `round`).
        cpus: [0].into_iter().collect(),
        stream_top: comm == "stream-top",
    }
}

/// A second of the other processes: another stream-top at 48 % throughout, firefox at 10 %,
/// and, once `hog` is on, memhog at 95 % with 50,000 faults/s.
fn second_of_processes(hog: bool) -> ProcSample {
    let mut processes = vec![
        process(600, "stream-top", "bob", 48.0, 0.0),
        process(700, "firefox", "alice", 10.0, 20.0),
    ];
    if hog {
        processes.insert(0, process(4242, "memhog", "alice", 95.0, 50_000.0));
    }
    ProcSample {
        elapsed_s: 1.0,
        processes,
        bandwidth: None,
    }
}

/// The app focused on dram × 1, on a made-up clock: `at(s)` is `s` seconds after it started.
struct Run {
    app: App,
    t0: Instant,
}

impl Run {
    fn new() -> Run {
        let mut app = app();
        app.clock.time_of = |_| "12:00:00".to_string();
        // Focus on dram × 1, as one watches for contention.
        app.on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE));
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        app.on_host(HostSample {
            steal_pct: Some(3.5),
            ..Default::default()
        });
        let t0 = app.clock.started;
        Run { app, t0 }
    }

    fn at(&self, s: f64) -> Instant {
        self.t0 + Duration::from_secs_f64(s)
    }

    /// Second `s`: a process sample (with the hog or not), then a round at `gbs`.
    fn second(&mut self, s: u64, gbs: f64, hog: bool) {
        let at = self.at(s as f64);
        self.app.on_procs_at(second_of_processes(hog), at);
        self.app.on_event_at(&round(DRAM1, gbs), at);
    }

    fn contention_lines(&self) -> Vec<String> {
        self.app
            .narration
            .log
            .iter()
            .filter(|e| e.kind == Kind::Contention)
            .map(|e| e.text.clone())
            .collect()
    }
}

/// A hog starts beside a calm cell and runs for minutes. The reference stays
/// the calm level; one entry when contention starts (naming the hog by PID, not the other
/// stream-top), a line a minute while it lasts, one when it ends, with its duration.
#[test]
fn a_lasting_hog_is_one_episode_against_a_reference_that_does_not_drift() {
    let mut r = Run::new();
    // The first window (5 rounds): the reference, 10 GB/s.
    for s in 1..=5 {
        r.second(s, 10.0, false);
    }
    let learned = Reference {
        gbs: 10.0,
        source: Source::Learned,
    };
    assert_eq!(r.app.narration.watch.state(DRAM1), State::Calm(learned));
    assert!(
        r.app
            .narration
            .log
            .last()
            .unwrap()
            .text
            .contains("reference for dram ×1: 10.0 GB/s")
    );
    // Calm, a little below: nothing said.
    for s in 6..=30 {
        r.second(s, 9.0, false);
    }
    // The hog: 6 GB/s. Four slow rounds are not yet contention (5 make it).
    for s in 31..=34 {
        r.second(s, 6.0, true);
    }
    assert!(r.contention_lines().is_empty());
    r.second(35, 6.0, true);
    assert!(matches!(
        r.app.narration.watch.state(DRAM1),
        State::Contended(_)
    ));
    let lines = r.contention_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let start = &lines[0];
    assert!(
        start.contains("contention on dram ×1 since 12:00:00"),
        "{start}"
    );
    assert!(
        start.contains("40 % below its learned reference 10.0 GB/s"),
        "{start}"
    );
    assert!(
        start.contains("suspects (inferred): PID 4242 memhog (alice)"),
        "{start}"
    );
    assert!(
        start.contains("CPU 0→95 %, faults 50k/s, on our CPUs"),
        "{start}"
    );
    assert!(start.contains("steal 3.5 %"), "{start}");
    let ep = r.app.open_episode(DRAM1).unwrap();
    assert_eq!(ep.started, r.at(31.0), "from the first slow round");
    assert_eq!(ep.suspects[0].pid, 4242);
    // The other stream-top is marked, and ranked below the hog: it was as busy before.
    let other = ep.suspects.iter().find(|s| s.pid == 600).unwrap();
    assert!(other.stream_top);
    assert_eq!(other.score, 0.0);
    // 8.8 GB/s is above the entry line (8.5) but under the recovery line (9.25): still
    // contended for two more minutes (hysteresis), with a line each minute.
    for s in 36..=160 {
        r.second(s, 8.8, true);
    }
    assert!(matches!(
        r.app.narration.watch.state(DRAM1),
        State::Contended(_)
    ));
    let lines = r.contention_lines();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[1].contains("contention on dram ×1 lasts: 1 min 04 s so far"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("top suspect PID 4242 memhog (alice)"),
        "{}",
        lines[2]
    );
    // The hog ends: five rounds back at speed end it, as of the first of them.
    for s in 161..=165 {
        r.second(s, 10.0, false);
    }
    assert_eq!(
        r.app.narration.watch.state(DRAM1),
        State::Calm(learned),
        "the same reference"
    );
    let lines = r.contention_lines();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let end = &lines[3];
    assert!(
        end.contains("contention on dram ×1 over after 2 min 10 s"),
        "{end}"
    );
    assert!(end.contains("(12:00:00–12:00:00)"), "{end}");
    assert!(end.contains("at worst"), "{end}");
    assert!(end.contains("PID 4242 memhog"), "{end}");
    let ep = r.app.narration.watch.episodes().last().unwrap();
    assert_eq!(ep.ended, Some(r.at(161.0)));
}

/// Slow rounds that never make a streak of five, or a level just under the threshold, are not
/// contention.
#[test]
fn short_dips_and_mild_slowdowns_are_not_contention() {
    let mut r = Run::new();
    for s in 1..=5 {
        r.second(s, 10.0, false);
    }
    let mut s = 6;
    for _ in 0..20 {
        for _ in 0..4 {
            r.second(s, 5.0, false);
            s += 1;
        }
        r.second(s, 10.0, false);
        s += 1;
    }
    // 14 % below: under the 15 % threshold.
    for _ in 0..100 {
        r.second(s, 8.6, false);
        s += 1;
    }
    assert!(r.contention_lines().is_empty());
    assert!(matches!(r.app.narration.watch.state(DRAM1), State::Calm(_)));
}

/// The start waits for the first process sample after it, to name suspects; without one for
/// a few seconds it is logged anyway, saying so.
#[test]
fn without_a_process_sample_the_start_is_logged_anyway() {
    let mut r = Run::new();
    for s in 1..=5 {
        r.app.on_event_at(&round(DRAM1, 10.0), r.at(s as f64));
    }
    for s in 6..=10 {
        r.app.on_event_at(&round(DRAM1, 4.0), r.at(s as f64));
    }
    assert!(r.contention_lines().is_empty(), "waiting for a sample");
    r.app.on_event_at(&round(DRAM1, 4.0), r.at(14.0));
    let lines = r.contention_lines();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("suspects: no process sample yet"),
        "{}",
        lines[0]
    );
}

/// `p` pins the median as the reference; focus keeps a pin, `r` forgets it and learns anew;
/// the baseline's median is a cell's reference from the start.
#[test]
fn pinning_focus_reset_and_baseline_references() {
    let mut a = app_with_figures();
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    // dram × 1 selected; its median is 8.
    a.on_key(key('j'));
    a.on_key(key('p'));
    assert_eq!(
        a.narration.watch.reference(DRAM1),
        Some(Reference {
            gbs: 8.0,
            source: Source::Pinned
        })
    );
    assert!(
        a.narration
            .log
            .last()
            .unwrap()
            .text
            .contains("pinned at 8.00 GB/s")
    );
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(
        a.narration.watch.reference(DRAM1).map(|r| r.source),
        Some(Source::Pinned)
    );
    a.on_key(key('r'));
    assert!(matches!(
        a.narration.watch.state(DRAM1),
        State::Learning { have: 0, .. }
    ));
    // Focus on a cell with a learned reference learns it again.
    let l2 = CellId::new(0, 1);
    assert_eq!(
        a.narration.watch.reference(l2).map(|r| r.source),
        Some(Source::Learned)
    );
    a.on_key(key('k'));
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(matches!(
        a.narration.watch.state(l2),
        State::Learning { .. }
    ));
    // A baseline is the reference at once, and comes back after `r`.
    let mut b = app();
    b.set_baseline(DRAM1, 12.0);
    let base = Reference {
        gbs: 12.0,
        source: Source::Baseline,
    };
    assert_eq!(b.narration.watch.state(DRAM1), State::Calm(base));
    b.on_key(key('j'));
    b.on_key(key('r'));
    assert_eq!(b.narration.watch.reference(DRAM1), Some(base));
}

/// A reset during an episode ends it, cut short, and says so.
#[test]
fn a_reset_ends_an_episode_cut_short() {
    let mut r = Run::new();
    for s in 1..=5 {
        r.second(s, 10.0, false);
    }
    for s in 6..=12 {
        r.second(s, 5.0, true);
    }
    assert!(r.app.narration.watch.is_contended(DRAM1));
    r.app
        .on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE));
    r.app
        .on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    assert!(!r.app.narration.watch.is_contended(DRAM1));
    let lines = r.contention_lines();
    assert!(lines.last().unwrap().contains("cut short"), "{lines:?}");
    assert!(r.app.narration.watch.episodes().last().unwrap().cut_short);
}

/// The episodes reach a snapshot of the live monitor: JSON and Markdown, with the suspects.
#[test]
fn episodes_and_the_log_reach_the_exports() {
    use stream_top::show::report::{Snapshot, to_json, to_markdown};
    let mut r = Run::new();
    for s in 1..=5 {
        r.second(s, 10.0, false);
    }
    for s in 6..=20 {
        r.second(s, 5.0, true);
    }
    for s in 21..=25 {
        r.second(s, 10.0, false);
    }
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
    assert_eq!(snap.contention.len(), 1);
    let e = &snap.contention[0];
    assert_eq!((e.threads, e.rounds), (1, 15));
    assert!(e.end.is_some());
    assert_eq!(e.duration_s, 15.0);
    assert!((e.depth - 0.5).abs() < 1e-9);
    assert_eq!(e.basis, "inferred");
    assert_eq!(e.suspects[0].pid, 4242);
    let json = to_json(&snap);
    assert!(json.contains("\"contention\""), "{json}");
    assert!(json.contains("\"memhog\""));
    let back =
        stream_top::show::report::from_json(&json, std::path::Path::new("live.json")).unwrap();
    assert_eq!(back.contention, snap.contention);
    let md = to_markdown(&snap);
    assert!(md.contains("## Contention"), "{md}");
    assert!(md.contains("PID 4242 memhog (alice), CPU 0→"), "{md}");
    assert!(md.contains(" % (inferred) |"), "{md}");
    assert!(md.contains("## Event log"), "{md}");
    assert!(md.contains("over after 15 s"), "{md}");
}

/// A round of dram × 1 at `gbs` whose worker was switched out 98 times and spent 52 % of its
/// span off its CPU: disturbed by the counters alone, as beside a hog on its CPU.
fn switched_out_round(gbs: f64) -> Event {
    let own = 1_000_000u64;
    let t = ThreadTiming {
        start_ns: 1_000,
        end_ns: 1_000 + own,
        cpu_start: 0,
        cpu_end: 0,
        bytes: (gbs * own as f64) as u64,
        counters: Counts {
            switches: Some(98),
            task_clock_ns: Some(own * 48 / 100),
            ..Counts::default()
        },
    };
    Event::Round(Box::new(RoundRecord::from_threads(
        DRAM1,
        false,
        10,
        vec![t],
    )))
}

impl Run {
    /// Second `s`: a process sample with the hog, then a round its worker was kept off CPU in.
    fn hogged_second(&mut self, s: u64, gbs: f64) {
        let at = self.at(s as f64);
        self.app.on_procs_at(second_of_processes(true), at);
        self.app.on_event_at(&switched_out_round(gbs), at);
    }

    /// The screen's text, rows joined by newlines.
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

/// The words of the panels on the left (grid, detail), row after row, one space apart: a
/// wrapped sentence reads whole.
fn left_panels(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|l| l.strip_prefix('│'))
        .map(|l| l.split('│').next().unwrap_or("").trim())
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A hog on the worker's CPU from before the focus. Every round is
/// disturbed and half as fast; the cell learns no reference from them and is never calm: it
/// says "no calm reference yet" with the worker's time off CPU, turns disturbed after 5 rounds
/// in a row, and names the hog. Once the hog is gone, calm rounds teach the true reference.
#[test]
fn a_hog_there_first_is_no_calm_reference_but_a_disturbance_naming_it() {
    let mut r = Run::new();
    for s in 1..=4 {
        r.hogged_second(s, 8.24);
    }
    assert_eq!(
        r.app.narration.watch.state(DRAM1),
        State::Learning {
            have: 0,
            need: 5,
            disturbed: 4,
            seen: 4
        }
    );
    let screen = r.screen(100, 30);
    assert!(
        left_panels(&screen)
            .contains("no calm reference yet: 0 of the 5 calm rounds it needs (5 to go); 4 of 4 rounds so far disturbed (t0 off CPU 52 %)"),
        "{screen}"
    );
    for s in 5..=21 {
        r.hogged_second(s, 8.24);
        assert!(
            !matches!(
                r.app.narration.watch.state(DRAM1),
                State::Calm(_) | State::Recovering(_)
            ),
            "second {s}: {:?}",
            r.app.narration.watch.state(DRAM1)
        );
    }
    assert_eq!(r.app.narration.watch.reference(DRAM1), None);
    let State::Disturbed(id) = r.app.narration.watch.state(DRAM1) else {
        panic!("{:?}", r.app.narration.watch.state(DRAM1));
    };
    let ep = r.app.narration.watch.episode(id).unwrap();
    assert_eq!(ep.kind, EpisodeKind::Disturbance);
    assert_eq!(ep.started, r.at(1.0), "from the first disturbed round");
    assert_eq!(ep.suspects[0].pid, 4242, "{:?}", ep.suspects);
    let lines = r.contention_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains(
            "disturbance on dram ×1 since 12:00:00: 5 of 5 rounds disturbed, t0 off CPU 52 % \
             at worst; no calm reference yet; suspects (inferred): PID 4242 memhog (alice)"
        ),
        "{}",
        lines[0]
    );
    // The detail says it in words (wrapped over its rows), the grid marks it.
    let screen = r.screen(100, 30);
    let text = left_panels(&screen);
    for part in [
        "DISTURBED for 20 s since 12:00:00 — no calm reference yet: 0 of the 5 calm rounds it \
         needs (5 to go); 21 of 21 rounds so far disturbed (t0 off CPU 52 % — PID 4242 memhog \
         (alice) on CPU 0)",
        "64 MiB (dram) ▶8.24!",
    ] {
        assert!(text.contains(part), "{part}\n{screen}");
    }
    assert!(!screen.contains("calm: reference"), "{screen}");
    insta::assert_snapshot!(screen);
    // The hog is gone: calm rounds end the disturbance (3 of the last 5, as of the first) and
    // teach the true reference, 15.5, not the hog's 8.24.
    for s in 22..=24 {
        r.second(s, 15.5, false);
    }
    assert!(matches!(
        r.app.narration.watch.state(DRAM1),
        State::Learning {
            have: 3,
            disturbed: 21,
            seen: 24,
            ..
        }
    ));
    let lines = r.contention_lines();
    assert!(
        lines[1].contains("disturbance on dram ×1 over after 21 s"),
        "{lines:?}"
    );
    for s in 25..=26 {
        r.second(s, 15.5, false);
    }
    assert_eq!(
        r.app.narration.watch.state(DRAM1),
        State::Calm(Reference {
            gbs: 15.5,
            source: Source::Learned
        })
    );
}

/// A hog after a calm reference, on the worker's CPU: its rounds are disturbed and slow, and it
/// is contention as before (not a disturbance). After the episode the cell is recovering until
/// the median of its window is back within the band, then calm.
#[test]
fn a_hog_after_the_reference_is_contention_then_the_cell_recovers() {
    let mut r = Run::new();
    // Contention in 3 rounds, the window 5: the window's median lags the episode's end.
    r.app.set_thresholds(Thresholds {
        drop: 0.15,
        rounds: 3,
    });
    for s in 1..=5 {
        r.second(s, 15.5, false);
    }
    for s in 6..=15 {
        r.hogged_second(s, 8.0);
    }
    assert!(matches!(
        r.app.narration.watch.state(DRAM1),
        State::Contended(_)
    ));
    let lines = r.contention_lines();
    assert!(
        lines[0].contains("contention on dram ×1 since"),
        "{lines:?}"
    );
    assert!(
        lines.iter().all(|l| !l.contains("disturbance")),
        "{lines:?}"
    );
    r.second(16, 15.5, false);
    r.second(17, 15.5, false);
    let learned = Reference {
        gbs: 15.5,
        source: Source::Learned,
    };
    assert_eq!(
        r.app.narration.watch.state(DRAM1),
        State::Recovering(learned)
    );
    let screen = r.screen(100, 30);
    assert!(
        left_panels(&screen).contains(
            "recovering after contention: median -48 % against reference 15.5 GB/s (learned); \
             calm once within -8 %"
        ),
        "{screen}"
    );
    assert!(!screen.contains("calm: reference"), "{screen}");
    r.second(18, 15.5, false);
    assert_eq!(r.app.narration.watch.state(DRAM1), State::Calm(learned));
}
