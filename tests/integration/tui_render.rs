//! Whole screens drawn on ratatui's TestBackend, checked as text.

use crate::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use stream_top::engine::events::{Event, Stage};
use stream_top::engine::plan::CellId;
use stream_top::machine::host::{HostSample, ProcessCpu};
use stream_top::tui::app::App;
use stream_top::tui::ui;

fn screen(app: &App, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..h)
        .map(|y| {
            let mut s = String::new();
            let mut skip = 0;
            for x in 0..w {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let sym = buf[(x, y)].symbol();
                skip = unicode_width(sym).saturating_sub(1);
                s.push_str(sym);
            }
            s.trim_end().to_string()
        })
        .collect()
}

fn unicode_width(s: &str) -> usize {
    ratatui::text::Span::raw(s).width()
}

fn text(lines: &[String]) -> String {
    lines.join("\n")
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

#[test]
fn main_layout_shows_header_grid_detail_threads_host_log_and_footer() {
    let mut a = app_with_figures();
    a.on_host(host());
    a.on_event(&Event::Visit {
        cell: CellId::new(1, 2),
        passes: 1,
    });
    let lines = screen(&a, 120, 40);
    let s = text(&lines);
    println!("{s}");
    // Header.
    assert!(lines[0].contains("stream-top"));
    assert!(lines[0].contains("Test CPU 9000"));
    assert!(s.contains("L2 512 KiB ×2"));
    assert!(s.contains("kernel avx2"));
    assert!(s.contains("vendor 40.0 GB/s (--vendor-gbs)"));
    // Grid: rows, columns, medians; the cell being measured is marked.
    let l2 = lines
        .iter()
        .find(|l| l.contains("16 KiB/thread (l2)"))
        .unwrap();
    assert!(l2.contains("10.0") && l2.contains("20.0"), "{l2}");
    let dram = lines.iter().find(|l| l.contains("64 MiB (dram)")).unwrap();
    assert!(dram.contains("8.00") && dram.contains("▶12.0"), "{dram}");
    assert!(s.contains("1 thr") && s.contains("2 thr"));
    assert!(s.contains("measuring dram ×2 now"));
    // Detail of the selected cell (l2 × 1).
    assert!(s.contains("16 KiB/thread (l2) × 1 thread"));
    assert!(s.contains("median 10.0 GB/s"));
    assert!(s.contains("scaling 1.00×"));
    assert!(s.contains("late 0 of 5"));
    assert!(s.contains("B/cycle 3.33"));
    assert!(s.contains("CPUs 0"));
    assert!(s.contains("migrations 0"));
    // Threads of the last round.
    assert!(s.contains("threads, last round: 1.00 ms"));
    assert!(s.contains("t0  cpu 0"));
    // Host.
    assert!(s.contains("load 0.52 0.40 0.33"));
    assert!(s.contains("MemAvailable 12 GiB of 16 GiB"));
    assert!(s.contains("pressure cpu 1.2 %"));
    assert!(s.contains("firefox 8 %"));
    // Footer.
    assert!(lines[39].contains("quit") && lines[39].contains("export"));
}

#[test]
fn long_log_lines_wrap_under_their_text() {
    let mut a = app_with_figures();
    a.log_line(
        stream_top::tui::log::Kind::Contention,
        "contention on dram ×1: 41 % below median for 3 rounds (10.7 vs 18.2 GB/s); steal 0.0 %; top likwid-bench 115 %".into(),
    );
    let s = text(&screen(&a, 120, 40));
    println!("{s}");
    assert!(s.contains("12:34:56 contention on dram ×1"));
    assert!(
        s.contains("top likwid-bench 115 %"),
        "the end of the entry is in view"
    );
}

#[test]
fn late_and_checksum_marks_and_selection_moves_the_detail() {
    let mut a = app_with_figures();
    a.on_event(&round_at(CellId::new(0, 2), 10.0, 500_000, false));
    a.on_event(&checksum(CellId::new(1, 1), false));
    a.on_key(KeyEvent::new(KeyCode::Char('l'), KeyModifiers::NONE));
    let lines = screen(&a, 120, 40);
    let s = text(&lines);
    println!("{s}");
    let l2 = lines
        .iter()
        .find(|l| l.contains("16 KiB/thread (l2)"))
        .unwrap();
    assert!(l2.contains("20.0*"), "late mark: {l2}");
    let dram = lines.iter().find(|l| l.contains("64 MiB (dram)")).unwrap();
    assert!(dram.contains("✗ CHECKSUM"), "{dram}");
    assert!(lines[0].contains("CHECKSUM FAILED"));
    assert!(s.contains("16 KiB/thread (l2) × 2 threads"));
    assert!(s.contains("late 1 of 5"));
    assert!(
        s.contains("LATE"),
        "the threads panel says the last round was late"
    );
    assert!(s.contains("CHECKSUM FAILED on dram ×1"));
}

#[test]
fn baseline_changes_show_in_cells() {
    let mut a = app_with_figures();
    a.baseline.insert(CellId::new(1, 1), 10.0);
    a.baseline_name = Some("A.json".into());
    let s = text(&screen(&a, 120, 40));
    println!("{s}");
    assert!(s.contains("vs A.json"));
    assert!(s.contains("-20.0%"));
}

#[test]
fn progress_gauge_while_arrays_are_first_touched() {
    let mut a = app();
    a.on_event(&Event::Progress {
        cell: CellId::new(1, 2),
        stage: Stage::FirstTouch,
        done_bytes: 48 << 20,
        total_bytes: 192 << 20,
    });
    let s = text(&screen(&a, 100, 30));
    println!("{s}");
    assert!(s.contains("first touch of arrays for dram ×2: 48 MiB of 192 MiB"));
}

#[test]
fn too_small_terminal_says_the_size_it_needs() {
    let a = app_with_figures();
    let s = text(&screen(&a, 60, 15));
    println!("{s}");
    assert!(s.contains("needs a larger terminal"));
    assert!(s.contains("at least 80×22; this one is 60×15"));
    // Exactly the minimum draws the monitor.
    let s = text(&screen(&a, 80, 22));
    println!("{s}");
    assert!(s.contains("median GB/s"));
    assert!(!s.contains("larger terminal"));
    // Every row of the grid is there, every figure of the detail, and the other panels.
    assert!(s.contains("16 KiB/thread (l2)") && s.contains("64 MiB (dram)"));
    for item in [
        "median",
        "best",
        "cv",
        "fastest thread",
        "slowest thread",
        "late",
        "scaling",
        "of vendor",
        "B/cycle",
        "rounds",
        "CPUs",
        "migrations",
        "checksum",
        "host",
        "events",
        "quit",
    ] {
        assert!(s.contains(item), "{item} missing");
    }
    // A few rows more and the per-thread bars have their panel.
    let s = text(&screen(&a, 80, 26));
    println!("{s}");
    assert!(s.contains("threads, last round"));
    assert!(s.contains("checksum"));
}

#[test]
fn help_overlay_explains_every_figure() {
    let mut a = app_with_figures();
    a.on_key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE));
    let s = text(&screen(&a, 120, 40));
    println!("{s}");
    for word in [
        "median",
        "best",
        "cv",
        "fastest, slowest",
        "late",
        "scaling",
        "of vendor",
        "B/cycle",
        "rounds",
        "migrations",
        "huge pages",
        "checksum",
        "contention",
        "Enter",
        "space",
    ] {
        assert!(s.contains(word), "help lacks {word}");
    }
    assert!(s.contains("24 bytes per element"));
    // It fits the smallest layout.
    let s = text(&screen(&a, 80, 22));
    println!("{s}");
    assert!(s.contains("baseline") && s.contains("median GB/s of the last --rounds"));
    assert!(s.contains("q, Esc, Ctrl-C quit"));
}

#[test]
fn many_thread_columns_scroll_to_the_selection() {
    let mut a = app();
    a.grid.threads = (1..=16).collect();
    for _ in 0..12 {
        a.on_key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE));
    }
    let s = text(&screen(&a, 100, 30));
    println!("{s}");
    assert!(s.contains("13 thr"));
    assert!(!s.contains(" 1 thr"));
    assert!(s.contains("▸"), "more columns to the right");
}

#[test]
fn the_host_panel_shows_a_cpu_quota_and_its_throttling() {
    let mut a = app_with_figures();
    a.on_host(HostSample {
        cpu_quota: Some(1.5),
        throttled_ratio: Some(0.25),
        ..host()
    });
    let s = text(&screen(&a, 120, 40));
    assert!(s.contains("quota 1.5 CPUs"), "{s}");
    assert!(s.contains("throttled 25 %"), "{s}");
    a.on_host(host());
    assert!(!text(&screen(&a, 120, 40)).contains("quota"));
}
