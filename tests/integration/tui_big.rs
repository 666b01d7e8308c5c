//! The monitor on big machines: 256 threads of the 2-socket EPYC fixture (4 NUMA nodes) at
//! 160×50 and 100×30, where the per-thread panel sums its threads up and scrolls through them
//! on request, the detail shows each node's share, and the hybrid laptop's grid marks the
//! thread count from which E-cores run.

use crate::support::machine_fixtures::fixture;
use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use stream_top::app::cli::default_threads;
use stream_top::engine::events::{Event, RoundRecord, ThreadTiming};
use stream_top::engine::plan::{ArraySize, CellId, Grid, Level, WorkingSet};
use stream_top::judge::groups::CpuGroups;
use stream_top::judge::stats::Context;
use stream_top::machine::topology::{PinPolicy, Topology};
use stream_top::show::tui::app::{Action, App, Header};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn render(app: &App, w: u16, h: u16, view: &mut ViewState) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, view)).unwrap();
    t.backend().buffer().clone()
}

fn press(app: &mut App, code: KeyCode) -> Action {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The screen's text, a line per row.
fn lines(b: &Buffer) -> Vec<String> {
    (0..b.area.height)
        .map(|y| {
            (0..b.area.width)
                .map(|x| b[(x, y)].symbol())
                .collect::<String>()
        })
        .collect()
}

fn set(name: &str, level: Level, size: ArraySize) -> WorkingSet {
    WorkingSet {
        name: name.into(),
        level: Some(level),
        size,
        note: None,
    }
}

/// Thread `i`'s own rate on dram: 1.60 GB/s and a little less for every seventh, node 3's
/// threads (CPUs 96-127 and 224-255) at 1.20, and two stragglers.
fn rate(i: usize, cpu: usize) -> f64 {
    match i {
        17 => 0.62,
        200 => 0.81,
        _ if (96..128).contains(&cpu) || cpu >= 224 => 1.2 - 0.01 * (i % 5) as f64,
        _ => 1.6 - 0.02 * (i % 7) as f64,
    }
}

/// A round of dram × `order.len()` threads pinned in `order`, every thread 1 ms long.
fn round(cell: CellId, order: &[usize]) -> Event {
    let own = 1_000_000u64;
    let threads = order
        .iter()
        .enumerate()
        .map(|(i, &cpu)| ThreadTiming {
            start_ns: 1_000 + (i as u64 % 3) * 2_000,
            end_ns: 1_000 + (i as u64 % 3) * 2_000 + own,
            cpu_start: cpu as i32,
            cpu_end: cpu as i32,
            bytes: (rate(i, cpu) * own as f64) as u64,
            ..Default::default()
        })
        .collect();
    Event::Round(Box::new(RoundRecord::from_threads(cell, false, 1, threads)))
}

/// The live monitor on the EPYC fixture: l1, l2 and dram as sized there × its default thread
/// counts, every dram cell measured five times, the selection on dram × 256.
fn epyc_app() -> App {
    let topo = Topology::read(&fixture("epyc-2s")).unwrap();
    let order = topo.cpu_order(PinPolicy::Spread);
    let threads = default_threads(order.len(), &topo.domain_counts(&order));
    let grid = Grid {
        sets: vec![
            set("l1", Level::L1, ArraySize::PerThread(2688)),
            set("l2", Level::L2, ArraySize::PerThread(43648)),
            set("dram", Level::Dram, ArraySize::Split(2 << 30)),
        ],
        threads: threads.clone(),
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let header = Header {
        machine: format!("epyc · {} · {}", topo.model, topo.summary()),
        caches: format!("caches {}", topo.cache_summary()),
        run: "kernel avx2 · normal stores · pin spread · clock 2.45 GHz".into(),
        vendor: "vendor 409.6 GB/s (SMBIOS: 16 × DDR4-3200 × 64 bit)".into(),
    };
    let ctx = Context::new(Some(409.6), Some(2.45)).with_cpus(256);
    let mut a = App::new(grid, 5, ctx, header, 100);
    a.clock.stamp = || "12:34:56".to_string();
    a.setup.groups = CpuGroups::of(&topo);
    for &t in &threads {
        for _ in 0..5 {
            a.on_event(&round(CellId::new(2, t), &order[..t]));
        }
    }
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('j'));
    for _ in 0..threads.len() {
        press(&mut a, KeyCode::Char('l'));
    }
    assert_eq!(a.selected(), CellId::new(2, 256));
    a
}

/// 160×50: the grid's nine columns (1 to 256 threads: the node's 64 and the socket's 128 are
/// doublings already), the detail with node 3 slower than the others, and the threads panel's
/// summary: min, median, max, a histogram a row per bin, the five slowest threads with their
/// CPUs (t17 on CPU 33, t200 on CPU 148), the hint.
#[test]
fn epyc_at_160_by_50() {
    let a = epyc_app();
    let b = render(&a, 160, 50, &mut ViewState::default());
    let text = lines(&b).join("\n");
    assert!(text.contains("256 threads, last round"), "{text}");
    assert!(
        text.contains("min 0.62  median 1.52  max 1.60 GB/s"),
        "{text}"
    );
    assert!(text.contains("slowest 5"), "{text}");
    assert!(text.contains("t17  cpu 33 "), "{text}");
    assert!(text.contains("t200 cpu 148 "), "{text}");
    assert!(text.contains("t lists all 256 threads"), "{text}");
    assert!(text.contains("node 3 "), "{text}");
    insta::assert_debug_snapshot!(b);
}

/// 100×30 (three working sets leave the threads two rows): the histogram as one line between
/// the slowest and the fastest rate with the median, and the slowest thread with its CPU.
#[test]
fn epyc_at_100_by_30() {
    let a = epyc_app();
    let b = render(&a, 100, 30, &mut ViewState::default());
    let text = lines(&b).join("\n");
    assert!(text.contains("256 threads, last round"), "{text}");
    assert!(text.contains("0.62 ▁"), "{text}");
    assert!(text.contains(" 1.60 GB/s  median 1.52"), "{text}");
    assert!(text.contains("slowest t17 cpu 33 0.62"), "{text}");
    insta::assert_debug_snapshot!(b);
}

/// `t` lists every thread; PgDn turns the page by what the panel showed, End goes to the last
/// page and no further, Home back; `t` again is the summary.
#[test]
fn the_full_list_scrolls_by_pages() {
    let mut a = epyc_app();
    let mut view = ViewState::default();
    assert_eq!(press(&mut a, KeyCode::Char('t')), Action::Redraw);
    let b = render(&a, 160, 50, &mut view);
    let page = view.threads_page;
    assert_eq!(page, 15);
    let text = lines(&b).join("\n");
    assert!(text.contains("threads t0–t14 of 256"), "{text}");
    assert!(text.contains("t14  cpu 88 "), "{text}");
    // The event loop hands the page over before each key.
    a.view.threads_page = view.threads_page;
    press(&mut a, KeyCode::PageDown);
    assert_eq!(a.view.threads_top, 15);
    let text = lines(&render(&a, 160, 50, &mut view)).join("\n");
    assert!(text.contains("threads t15–t29 of 256"), "{text}");
    press(&mut a, KeyCode::End);
    assert_eq!(a.view.threads_top, 241);
    let text = lines(&render(&a, 160, 50, &mut view)).join("\n");
    assert!(text.contains("t255 cpu 255 "), "{text}");
    assert_eq!(
        press(&mut a, KeyCode::PageDown),
        Action::None,
        "the last page"
    );
    press(&mut a, KeyCode::PageUp);
    assert_eq!(a.view.threads_top, 226);
    press(&mut a, KeyCode::Home);
    assert_eq!(a.view.threads_top, 0);
    press(&mut a, KeyCode::Char('t'));
    assert!(!a.view.threads_list);
    let text = lines(&render(&a, 160, 50, &mut view)).join("\n");
    assert!(text.contains("slowest 5"), "{text}");
}

/// The detail names each node's sum and its threads; on this machine (one node, one core
/// type) the same cell shows none.
#[test]
fn the_detail_shows_nodes_only_where_there_are_several() {
    let a = epyc_app();
    let text = lines(&render(&a, 160, 50, &mut ViewState::default())).join("\n");
    // 64 threads a node at a median of 1.56 GB/s (node 3: 1.18).
    for n in 0..4 {
        assert!(text.contains(&format!("node {n} ")), "{text}");
    }
    assert!(text.contains("(64×1.18)"), "{text}");
    let mut one = epyc_app();
    one.setup.groups = CpuGroups::default();
    let text = lines(&render(&one, 160, 50, &mut ViewState::default())).join("\n");
    assert!(!text.contains("node 0 "), "{text}");
}

/// Few threads change nothing: two threads in a tall panel are listed as before, and PgDn
/// has nothing to scroll.
#[test]
fn threads_that_fit_are_listed() {
    let mut a = app_with_figures();
    let text = lines(&render(&a, 120, 40, &mut ViewState::default())).join("\n");
    assert!(text.contains("t0  cpu 0 "), "{text}");
    assert!(!text.contains("slowest 5"), "{text}");
    assert_eq!(press(&mut a, KeyCode::PageDown), Action::None);
    assert_eq!((a.view.threads_top, a.view.threads_list), (0, false));
}

/// The hybrid laptop pinned spread: threads 1-6 on P-cores, the 7th on an E-core, so the head
/// of 8 thr (the first column past 6) carries `E›` and the legend says what it means.
#[test]
fn the_grid_marks_where_e_cores_begin() {
    let topo = Topology::read(&fixture("laptop-hybrid")).unwrap();
    let order = topo.cpu_order(PinPolicy::Spread);
    let mut a = app();
    a.grid.threads = default_threads(order.len(), &topo.domain_counts(&order));
    assert_eq!(a.grid.threads, vec![1, 2, 4, 8, 16, 20]);
    a.setup.e_cores_from = topo.first_efficiency_thread(&order);
    a.on_event(&round_at(CellId::new(0, 1), 10.0, 0, false));
    let b = render(&a, 120, 40, &mut ViewState::default());
    let head = lines(&b)
        .into_iter()
        .find(|l| l.contains("per array"))
        .unwrap();
    assert!(head.contains("4 thr     E›8 thr      16 thr"), "{head}");
    let text = lines(&b).join("\n");
    assert!(text.contains("E› E-cores from here"), "{text}");
    a.setup.e_cores_from = None;
    let head = lines(&render(&a, 120, 40, &mut ViewState::default()))
        .into_iter()
        .find(|l| l.contains("per array"))
        .unwrap();
    assert!(!head.contains("E›"), "{head}");
}
