//! Contention in the monitor's state, driven by synthetic streams of rounds and process samples
//! on a made-up clock: a reference that does not drift, episodes that begin, last and end with
//! hysteresis, suspects named by the evidence, and the keys that reset and pin references.

use crate::support::tui_common::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::{Duration, Instant};
use stream_top::engine::plan::CellId;
use stream_top::judge::watch::contention::{Reference, Source, State};
use stream_top::judge::watch::log::Kind;
use stream_top::machine::host::HostSample;
use stream_top::machine::procs::{ProcSample, Process};
use stream_top::show::tui::app::App;

const DRAM1: CellId = CellId {
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

/// The story: a hog starts beside a calm cell and runs for minutes. The reference stays
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
