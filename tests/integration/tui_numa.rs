//! The monitor on big machines' questions: the NUMA matrix as a view of its own (on the 2-node
//! fixture's pairs), where a cell's pages sit in the detail panel, and an `--oversubscribe` run
//! marked as no measurement.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::collections::BTreeMap;
use std::path::Path;
use stream_top::engine::events::{Command, Event, PagePlacement, Placement};
use stream_top::engine::matrix::MatrixPlan;
use stream_top::engine::plan::{ArraySize, CellId, Level, WorkingSet};
use stream_top::judge::stats::Context;
use stream_top::machine::topology::Topology;
use stream_top::show::tui::app::{Action, App};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn text(b: &Buffer) -> String {
    let area = b.area;
    let mut out = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            out.push_str(b[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn screen(app: &App, w: u16, h: u16, view: &mut ViewState) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, view)).unwrap();
    text(t.backend().buffer())
}

fn press(app: &mut App, code: KeyCode) -> Action {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The monitor of `--matrix` over every CPU of `fixture`, for a `dram` set of `bytes` per
/// array, and its plan.
fn matrix_monitor(fixture: &str, bytes: u64) -> (App, MatrixPlan) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let t = Topology::read(&root).unwrap();
    let all: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
    let m = MatrixPlan::new(&t, &all);
    let dram = WorkingSet {
        name: "dram".into(),
        level: Some(Level::Dram),
        size: ArraySize::Split(bytes),
        note: None,
    };
    let mut a = App::new(m.grid(&dram), 5, Context::default(), header(), 100);
    a.setup.matrix = Some(m.clone());
    (a, m)
}

/// The monitor of `--matrix` on the 2-socket fixture: 2 CPU nodes × 2 memory nodes, the
/// local pairs at 10 GB/s per thread, the remote ones at 6.
fn matrix_app() -> (App, MatrixPlan) {
    let (mut a, m) = matrix_monitor("server-2s", 1 << 30);
    a.clock.stamp = || "12:34:56".to_string();
    for (set, p) in m.pairs.iter().enumerate() {
        let gbs = if p.cpu_node == p.mem_node { 10.0 } else { 6.0 };
        for _ in 0..5 {
            a.on_event(&round(CellId::new(set, m.threads), gbs));
        }
    }
    (a, m)
}

#[test]
fn the_matrix_is_a_grid_of_cpu_nodes_by_memory_nodes() {
    let (mut a, m) = matrix_app();
    assert_eq!(m.threads, 16);
    let mut view = ViewState::default();
    let s = screen(&a, 120, 40, &mut view);
    assert!(s.contains("NUMA matrix · median GB/s"), "{s}");
    assert!(s.contains("CPU node \\ memory node"), "{s}");
    let row = |node: usize| {
        s.lines()
            .find(|l| l.contains(&format!("node {node} (16 thr)")))
            .unwrap_or_else(|| panic!("no row for CPU node {node}:\n{s}"))
            .to_string()
    };
    // Local pairs on the diagonal: 16 threads × 10 GB/s; remote ones 16 × 6.
    let (r0, r1) = (row(0), row(1));
    assert!(r0.find("160").unwrap() < r0.find("96.0").unwrap(), "{r0}");
    assert!(r1.find("96.0").unwrap() < r1.find("160").unwrap(), "{r1}");
    // The detail panel names the selected pair.
    assert!(s.contains("CPU node 0 → memory node 0 × 16 threads"), "{s}");

    // Right goes to the next memory node, down to the next CPU node; Enter focuses the pair.
    assert_eq!(press(&mut a, KeyCode::Right), Action::Redraw);
    assert_eq!(a.selected(), CellId::new(1, 16));
    assert_eq!(
        press(&mut a, KeyCode::Right),
        Action::None,
        "no third memory node"
    );
    press(&mut a, KeyCode::Down);
    assert_eq!(a.selected(), CellId::new(3, 16));
    let s = screen(&a, 120, 40, &mut view);
    assert!(s.contains("CPU node 1 → memory node 1 × 16 threads"), "{s}");
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        Action::Send(Command::Focus(CellId::new(3, 16)))
    );
    // A click on a pair selects it: CPU node 0, memory node 1, on the first row of pairs.
    let row = s
        .lines()
        .position(|l| l.contains("node 0 (16 thr)"))
        .unwrap() as u16;
    let clicked = (0..120u16).any(|x| {
        let click = MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row,
            modifiers: KeyModifiers::NONE,
        };
        a.on_mouse(click, &view.clicks);
        a.selected() == CellId::new(1, 16)
    });
    assert!(clicked, "the pairs are in the click map");
}

#[test]
fn the_matrix_fits_the_smallest_screen_with_its_note() {
    let (a, _) = matrix_monitor("vm-2core", 128 << 20);
    let s = screen(&a, 80, 23, &mut ViewState::default());
    assert!(s.contains("the matrix is 1×1"), "{s}");
    assert!(s.contains("node 0 (2 thr)"), "{s}");
}

#[test]
fn the_detail_says_where_the_cells_pages_sit() {
    let mut a = app_with_figures();
    let cell = a.selected();
    a.on_event(&Event::Placement {
        cell,
        pages: Placement::Sampled(PagePlacement {
            sampled: 48,
            meant: 48,
            on_meant: 36,
            by_node: BTreeMap::from([(0, 36), (1, 12)]),
            absent: 0,
        }),
    });
    let s = screen(&a, 120, 40, &mut ViewState::default());
    assert!(
        s.contains("pages 75 % of 48 sampled on the node meant"),
        "{s}"
    );
}

#[test]
fn an_oversubscribed_run_marks_the_grid_and_every_cell() {
    let mut a = App::new(
        grid(),
        5,
        Context::default().not_a_measurement(true),
        header(),
        100,
    );
    a.setup.not_a_measurement = Some("--oversubscribe: up to 8 threads share 2 usable CPUs".into());
    for _ in 0..5 {
        a.on_event(&round(CellId::new(0, 1), 10.0));
    }
    let s = screen(&a, 120, 40, &mut ViewState::default());
    assert!(s.contains("NOT A MEASUREMENT (--oversubscribe)"), "{s}");
    let f = a.figures(CellId::new(0, 1)).unwrap();
    assert_eq!(f.noisy[0], stream_top::judge::stats::NOT_A_MEASUREMENT);
    // The cell carries the noisy mark.
    let row = s.lines().find(|l| l.contains("(l2)")).unwrap();
    assert!(row.contains("10.0~"), "{row}");
}
