//! The probe in the live monitor, on TestBackend: its latency and reference in the header, its
//! timeline beside the focused cell's, its episode in the log, and `--probe-only`'s screen. The
//! samples are fed by hand (no probe thread runs): what is drawn is what the watch made of them.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::{Duration, Instant};
use stream_top::engine::latency::probe::{
    CpuChoice, ProbeConfig, ProbeCpu, ProbeEvent, ProbeSample,
};
use stream_top::show::tui::app::App;
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn render(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, &mut ViewState::default()))
        .unwrap();
    t.backend().buffer().clone()
}

fn screen(b: &Buffer) -> String {
    (0..b.area.height)
        .map(|y| {
            (0..b.area.width)
                .map(|x| b[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The probe placed on CPU 1, which no worker uses (not started: the samples come by hand).
fn with_probe(app: &mut App) {
    app.probe.config = Some(ProbeConfig::new(
        ProbeCpu {
            cpu: 1,
            choice: CpuChoice::Free,
            shared: false,
        },
        128 << 20,
    ));
}

/// Samples of `ns`, ten a second from `from` samples after `t0`.
fn feed(app: &mut App, t0: Instant, from: u64, n: u64, ns: f64) {
    for i in from..from + n {
        let at = t0 + Duration::from_millis(100 * i);
        app.on_probe_at(ProbeEvent::Sample(ProbeSample { at, ns }), at);
    }
}

#[test]
fn the_header_shows_the_probes_latency_and_reference_and_its_timeline_sits_beside_the_cells() {
    let mut app = app_with_figures();
    with_probe(&mut app);
    let t0 = app.clock.started;
    // Nothing of the probe before it has a sample.
    let before = screen(&render(&app, 160, 50));
    assert!(!before.contains("probe CPU"), "{before}");
    // Five seconds of calm samples teach the reference; then it is calm.
    feed(&mut app, t0, 1, 60, 100.0);
    let b = render(&app, 160, 50);
    let s = screen(&b);
    assert!(s.contains("probe CPU 1 100 ns, ref 100 ns, calm"), "{s}");
    // Its timeline beside the cell's: a legend of its own, its reference.
    let legend = (0..50)
        .map(|y| (0..160).map(|x| b[(x, y)].symbol()).collect::<String>())
        .find(|l| l.contains("probe ns, "))
        .unwrap_or_else(|| panic!("no probe timeline: {s}"));
    assert!(legend.contains("GB/s, "), "beside the cell's: {legend}");
    assert!(s.contains("reference 100"), "{s}");
    let logged = app
        .narration
        .log
        .iter()
        .any(|e| e.text == "probe reference: 100 ns, the median of its first 50 calm samples");
    assert!(logged);
    // +50 % for three seconds: contended, in the header and the log.
    feed(&mut app, t0, 61, 30, 150.0);
    let s = screen(&render(&app, 160, 50));
    assert!(
        s.contains("probe CPU 1 150 ns, ref 100 ns, CONTENDED"),
        "{s}"
    );
    let began = app
        .narration
        .log
        .iter()
        .find(|e| e.text.starts_with("probe latency contended since"))
        .map(|e| e.text.clone())
        .unwrap();
    assert!(
        began.contains("150 ns, +50 % over its calm 100 ns"),
        "{began}"
    );
    // Back to calm: the episode ends in the log.
    feed(&mut app, t0, 91, 30, 100.0);
    assert!(!app.probe.watch.is_contended());
    assert!(
        app.narration
            .log
            .iter()
            .any(|e| e.text.starts_with("probe latency contention ")),
        "no end in the log"
    );
    // On a narrow screen the header keeps the probe's state (no parentheses to drop).
    let s = screen(&render(&app, 80, 24));
    assert!(s.contains("calm"), "{s}");
}

#[test]
fn probe_only_shows_an_empty_grid_with_why_and_the_probe_in_the_detail() {
    let mut app = app();
    with_probe(&mut app);
    app.probe.alone = true;
    let s = screen(&render(&app, 100, 30));
    assert!(s.contains("median GB/s · --probe-only"), "{s}");
    assert!(s.contains("no triad runs (--probe-only)"), "{s}");
    assert!(s.contains("the probe · CPU 1 (no worker uses it)"), "{s}");
    assert!(s.contains("probe off: P starts it"), "{s}");
    let t0 = app.clock.started;
    feed(&mut app, t0, 1, 20, 120.0);
    let s = screen(&render(&app, 100, 30));
    assert!(
        s.contains("latency 120 ns · no calm reference yet · learning 20/50"),
        "{s}"
    );
    assert!(s.contains("probe ns, "), "its timeline: {s}");
}

#[test]
fn p_without_a_probe_says_why_and_the_footer_offers_it() {
    let mut app = app_with_figures();
    let s = screen(&render(&app, 160, 50));
    assert!(s.contains(" P  probe on"), "{s}");
    app.on_key(KeyEvent::new(KeyCode::Char('P'), KeyModifiers::NONE));
    let s = screen(&render(&app, 160, 50));
    assert!(s.contains("no probe here: it needs a CPU to run on"), "{s}");
}
