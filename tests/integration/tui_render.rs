//! Whole screens drawn on ratatui's TestBackend and compared cell by cell, styles included, with
//! insta snapshots (`tests/integration/snapshots/`) or `Buffer::with_lines`. A snapshot is the
//! screen as a person sees it: read it when it changes.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use stream_top::engine::events::{Event, Stage};
use stream_top::engine::plan::CellId;
use stream_top::judge::watch::log::Kind;
use stream_top::machine::host::{HostSample, ProcessCpu};
use stream_top::machine::procs::{ProcSample, Process};
use stream_top::show::tui::app::{App, Header};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn render(app: &App, w: u16, h: u16) -> Buffer {
    render_with(app, w, h, &mut ViewState::default())
}

/// Draws with what the screen kept from earlier frames.
fn render_with(app: &App, w: u16, h: u16, view: &mut ViewState) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app, view)).unwrap();
    t.backend().buffer().clone()
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
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

/// Header (machine, caches, run, vendor); the grid with both rows and columns, the cell being
/// measured marked ▶ and the selection reversed; the detail of l2 × 1 with every figure; the
/// threads of its last round; the host panel; the footer on the last row.
#[test]
fn main_layout_shows_header_grid_detail_threads_host_log_and_footer() {
    let mut a = app_with_figures();
    a.on_host(host());
    a.on_event(&Event::Visit {
        cell: CellId::new(1, 2),
        passes: 1,
    });
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// A long entry wraps under its text, its time alone in the margin, and its end is in view.
#[test]
fn long_log_lines_wrap_under_their_text() {
    let mut a = app_with_figures();
    a.log_line(
        Kind::Contention,
        "contention on dram ×1: 41 % below median for 3 rounds (10.7 vs 18.2 GB/s); steal 0.0 %; top likwid-bench 115 %".into(),
    );
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// l2 × 2 shows `20.0*` (late), dram × 1 `✗ CHECKSUM`, the header the failed checksum banner;
/// the selection moved right, so the detail is l2 × 2 (late 1 of 5) and the threads panel says
/// LATE; the log has the checksum failure.
#[test]
fn late_and_checksum_marks_and_selection_moves_the_detail() {
    let mut a = app_with_figures();
    a.on_event(&round_at(CellId::new(0, 2), 10.0, 500_000, false));
    a.on_event(&checksum(CellId::new(1, 1), false));
    press(&mut a, KeyCode::Char('l'));
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// `vs A.json` in the grid's title and `-20.0%` in dram × 1.
#[test]
fn baseline_changes_show_in_cells() {
    let mut a = app_with_figures();
    a.baseline.medians.insert(CellId::new(1, 1), 10.0);
    a.baseline.name = Some("A.json".into());
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// The status line is a gauge: `first touch of arrays for dram ×2: 48 MiB of 192 MiB`.
#[test]
fn progress_gauge_while_arrays_are_first_touched() {
    let mut a = app();
    a.on_event(&Event::Progress {
        cell: CellId::new(1, 2),
        stage: Stage::FirstTouch,
        done_bytes: 48 << 20,
        total_bytes: 192 << 20,
    });
    insta::assert_debug_snapshot!(render(&a, 100, 30));
}

/// `lines`, each padded with spaces to `width`: a screen for `Buffer::with_lines`.
fn padded<const N: usize>(lines: [&str; N], width: usize) -> [String; N] {
    lines.map(|l| format!("{l:<width$}"))
}

#[test]
fn too_small_terminal_says_the_size_it_needs() {
    let a = app_with_figures();
    let mut want = Buffer::with_lines(padded(
        [
            "",
            "",
            "",
            "",
            "",
            "",
            "             stream-top needs a larger terminal",
            "              at least 80×22; this one is 60×15",
            "                          (q quits)",
            "",
            "",
            "",
            "",
            "",
            "",
        ],
        60,
    ));
    want.set_style(Rect::new(13, 6, 34, 1), Modifier::BOLD);
    want.set_style(Rect::new(26, 8, 9, 1), Modifier::DIM);
    assert_eq!(render(&a, 60, 15), want);
}

/// Exactly the minimum (80×22) draws the monitor: every row of the grid, every figure of the
/// detail (which takes the whole row), the host, the events and the footer.
#[test]
fn the_smallest_screen_keeps_every_figure() {
    let a = app_with_figures();
    insta::assert_debug_snapshot!(render(&a, 80, 22));
}

/// A few rows more (80×26) and the per-thread bars have their panel; the checksum stays.
#[test]
fn a_few_rows_more_bring_the_thread_panel() {
    let a = app_with_figures();
    insta::assert_debug_snapshot!(render(&a, 80, 26));
}

/// The help names every figure and key, with `24 bytes per element`.
#[test]
fn help_overlay_explains_every_figure() {
    let mut a = app_with_figures();
    press(&mut a, KeyCode::Char('?'));
    insta::assert_debug_snapshot!(render(&a, 120, 40));
}

/// The help fits the smallest layout, from its first key line to `baseline`.
#[test]
fn help_overlay_fits_the_smallest_screen() {
    let mut a = app_with_figures();
    press(&mut a, KeyCode::Char('?'));
    insta::assert_debug_snapshot!(render(&a, 80, 22));
}

/// 16 thread columns at 100 wide: after 12 steps right the grid shows 13 thr, no longer 1 thr,
/// and ▸ says there are more to the right.
#[test]
fn many_thread_columns_scroll_to_the_selection() {
    let mut a = app();
    a.grid.threads = (1..=16).collect();
    for _ in 0..12 {
        press(&mut a, KeyCode::Right);
    }
    insta::assert_debug_snapshot!(render(&a, 100, 30));
}

/// The grid remembers how far it scrolled: after 12 steps right (8–13 thr shown) one step back
/// left moves the selection to 12 thr within the same columns, not the columns under it.
#[test]
fn moving_back_within_the_view_does_not_scroll() {
    let mut a = app();
    a.grid.threads = (1..=16).collect();
    for _ in 0..12 {
        press(&mut a, KeyCode::Right);
    }
    let mut view = ViewState::default();
    render_with(&a, 100, 30, &mut view);
    press(&mut a, KeyCode::Left);
    insta::assert_debug_snapshot!(render_with(&a, 100, 30, &mut view));
}

/// The header of a real machine, with the long clock and vendor lines that used to be cut.
fn long_header() -> Header {
    Header {
        machine: "stream-top-ci-runner-7 · AMD EPYC 7763 64-Core Processor · 2 cores, 2 threads, 1 package, 1 NUMA node".into(),
        caches: "caches L1d 32 KiB ×2, L2 512 KiB ×2, L3 32 MiB ×1".into(),
        run: "kernel avx2 · normal stores · pin spread · clock 3.24 GHz (dependent add chain, min of 7 runs, on CPU 0)".into(),
        vendor: "vendor figure unknown (pass --vendor-gbs N; no SMBIOS memory table (/sys/firmware/dmi/entries is missing))".into(),
    }
}

fn hog_sample(hog: bool) -> ProcSample {
    let p = |pid: u32, comm: &str, user: &str, cpu: f64, faults: f64, cpus: &[u32]| Process {
        pid,
        comm: comm.into(),
        user: Some(user.into()),
        cpu_pct: cpu,
        faults_per_s: faults,
        major_faults_per_s: 0.0,
        rss_bytes: Some(2 << 30),
        rss_growth_per_s: None,
        cpus: cpus.iter().copied().collect(),
        stream_top: comm == "stream-top",
    };
    let mut processes = vec![
        p(6012, "stream-top", "bob", 48.0, 0.0, &[1]),
        p(700, "firefox", "alice", 9.0, 15.0, &[0]),
    ];
    if hog {
        processes.insert(0, p(4242, "stress-ng-vm", "alice", 97.0, 61_000.0, &[0, 1]));
    }
    ProcSample {
        elapsed_s: 1.0,
        processes,
        bandwidth: None,
    }
}

/// Focused on dram × 2 with a real machine's header: a calm minute at 10 GB/s (5 per thread),
/// then a hog for three minutes at 6.2 GB/s, still on.
fn contended_app() -> App {
    let mut a = App::new(
        grid(),
        5,
        stream_top::judge::stats::Context {
            vendor_gbs: Some(40.0),
            ghz: Some(3.0),
            cpus: None,
            not_a_measurement: false,
        },
        long_header(),
        100,
    );
    a.clock.stamp = || "12:34:56".to_string();
    a.clock.time_of = |_| "12:00:31".to_string();
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('l'));
    press(&mut a, KeyCode::Enter);
    let cell = CellId::new(1, 2);
    let t0 = a.clock.started;
    for s in 1..=240u64 {
        let at = t0 + std::time::Duration::from_secs(s);
        let hog = s > 60;
        a.on_procs_at(hog_sample(hog), at);
        let gbs = if hog { 3.1 } else { 5.0 };
        a.on_event_at(&round(cell, gbs), at);
    }
    a.on_host(host());
    a.on_event(&Event::Visit { cell, passes: 1 });
    a
}

/// The text of the rows `y0..y1` between columns `x0..x1` of a buffer.
fn text(b: &Buffer, x0: u16, x1: u16, y0: u16, y1: u16) -> Vec<String> {
    (y0..y1)
        .map(|y| (x0..x1).map(|x| b[(x, y)].symbol()).collect::<String>())
        .collect()
}

/// The row whose text contains `what`.
fn row_of(b: &Buffer, what: &str) -> Option<u16> {
    let w = b.area.width;
    (0..b.area.height).find(|&y| text(b, 0, w, y, y + 1)[0].contains(what))
}

/// Every layout rule at one size: the header wraps or abbreviates between whole
/// words, the host panel's first line names the suspect by PID, no log line begins with a
/// unit, the footer keeps `r`, the threads panel is as tall as its threads.
fn layout_rules(b: &Buffer, w: u16) {
    let all = long_header();
    let words: Vec<&str> = [&all.machine, &all.caches, &all.run, &all.vendor]
        .into_iter()
        .flat_map(|s| s.split([' ', '·']))
        .collect();
    for line in text(b, 0, w, 0, 4) {
        for word in line
            .split([' ', '·'])
            .filter(|w| !w.is_empty() && *w != "stream-top")
        {
            assert!(
                words.contains(&word),
                "`{word}` is a cut word in the header: {line}"
            );
        }
    }
    // The state: contended, how deep, how long, since when.
    let detail = row_of(b, "CONTENDED").expect("the detail says CONTENDED");
    let state = text(b, 0, w, detail, detail + 2).join(" ");
    assert!(state.contains("38 % below reference 10.0 GB/s"), "{state}");
    assert!(state.contains("2 min 59 s"), "{state}");
    assert!(state.contains("since 12:00:31"), "{state}");
    // The grid marks the cell.
    let dram = row_of(b, "64 MiB (dram)").unwrap();
    assert!(text(b, 0, w, dram, dram + 1)[0].contains("6.20▼"));
    // The host panel: the suspect first, by PID.
    let host = row_of(b, "┌ host").expect("a host panel");
    let x = text(b, 0, w, host, host + 1)[0]
        .find("┌ host")
        .map(|i| text(b, 0, w, host, host + 1)[0][..i].chars().count() as u16)
        .unwrap();
    let first = &text(b, x + 1, w, host + 1, host + 2)[0];
    assert!(
        first.starts_with("suspect PID 4242 stress-ng-vm")
            || first.starts_with("PID 4242 stress-ng-vm"),
        "{first}"
    );
    // The log: no line starts with a unit.
    let log = row_of(b, "┌ events").expect("a log");
    for line in text(b, 0, w, log + 1, b.area.height - 2) {
        if let Some(i) = line.find("│") {
            let inner: String = line.chars().skip(line[..i].chars().count() + 1).collect();
            let inner = inner
                .split('│')
                .next()
                .unwrap_or("")
                .trim_start()
                .to_string();
            for unit in ["%", "GB/s", "s ", "min"] {
                assert!(!inner.starts_with(unit), "an orphaned unit: {line}");
            }
        }
    }
    // The footer keeps `r`, and `R` where there is room beside the keys that come first
    // (q, ?, ⏎, space, d, e, r: 80 columns hold only those).
    let footer = &text(b, 0, w, b.area.height - 1, b.area.height)[0];
    assert!(footer.contains(" r  reset"), "{footer}");
    if w >= 100 {
        assert!(footer.contains(" R  reset all"), "{footer}");
    }
}

#[test]
fn contended_at_160_by_50_with_timeline_and_suspect_line() {
    let a = contended_app();
    let b = render(&a, 160, 50);
    layout_rules(&b, 160);
    // The threads panel holds its two threads and no blank rows.
    let top = row_of(&b, "threads, last round").unwrap();
    let rows = text(&b, 96, 160, top, top + 5);
    assert!(
        rows[1].contains("t0 ") && rows[2].contains("t1 "),
        "{rows:?}"
    );
    assert!(rows[3].starts_with("└"), "{rows:?}");
    assert!(rows[4].starts_with("┌ host"), "{rows:?}");
    // The timeline: a scale, the reference, time marks, the suspect's CPU.
    let screen = text(&b, 0, 160, 0, 50).join("\n");
    assert!(screen.contains("reference 10.0"), "{screen}");
    assert!(
        screen.contains("CPU of PID 4242 stress-ng-vm (alice)"),
        "{screen}"
    );
    assert!(screen.contains("-3m") && screen.contains("now"), "{screen}");
    assert!(screen.contains("  cpu ┤"), "{screen}");
    insta::assert_debug_snapshot!(b);
}

#[test]
fn contended_at_100_by_30() {
    let a = contended_app();
    let b = render(&a, 100, 30);
    layout_rules(&b, 100);
    insta::assert_debug_snapshot!(b);
}

#[test]
fn contended_at_80_by_24() {
    let a = contended_app();
    let b = render(&a, 80, 24);
    layout_rules(&b, 80);
    insta::assert_debug_snapshot!(b);
}

/// Calm, the host panel's first line is the busiest processes with PIDs and users, another
/// stream-top marked as such.
#[test]
fn calm_the_host_panel_names_the_busiest_by_pid() {
    let mut a = app_with_figures();
    a.on_host(host());
    a.on_procs(hog_sample(true));
    let b = render(&a, 120, 40);
    let host = row_of(&b, "┌ host").unwrap();
    let x = text(&b, 0, 120, host, host + 1)[0].find("┌ host").unwrap();
    let x = text(&b, 0, 120, host, host + 1)[0][..x].chars().count() as u16 + 1;
    let lines = text(&b, x, x + 44, host + 1, host + 3);
    assert_eq!(
        lines[0].trim_end(),
        "busiest PID 4242 stress-ng-vm (alice) 97 %"
    );
    assert_eq!(
        lines[1].trim_end(),
        "PID 6012 another stream-top (bob) 48 %"
    );
    // Narrow and short: the users go, PID, name and share stay.
    let b = render(&a, 80, 26);
    let host = row_of(&b, "┌ host").unwrap();
    let line = text(&b, 1, 35, host + 1, host + 2).remove(0);
    assert_eq!(line.trim_end(), "busiest PID 4242 stress-ng-vm 97 %");
}

#[test]
fn no_color_draws_without_colours_and_keeps_the_alarm_visible() {
    use ratatui::style::Color;
    use std::ffi::OsStr;
    let mut app = app_with_figures();
    app.on_event(&checksum(CellId::new(1, 2), false));
    let coloured = |b: &Buffer| {
        b.content
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    // The same screen in colour has colours: the check below can fail.
    assert!(coloured(&render(&app, 120, 40)) > 0);
    let mut view = ViewState::default();
    view.monochrome = true;
    let mono = render_with(&app, 120, 40, &mut view);
    assert_eq!(coloured(&mono), 0, "no colour on a monochrome screen");
    let text: String = mono.content.iter().map(|c| c.symbol()).collect();
    assert!(text.contains("CHECKSUM"), "{text}");
    // The failed checksum (white on red in colour) is in reverse video.
    assert!(
        mono.content
            .iter()
            .any(|c| c.symbol() == "✗" && c.modifier.contains(Modifier::REVERSED))
    );

    let want = |term: Option<&str>, no_color: Option<&str>| {
        ui::monochrome_wanted(term.map(OsStr::new), no_color.map(OsStr::new))
    };
    assert!(
        want(Some("xterm-256color"), Some("")),
        "NO_COLOR of any value"
    );
    assert!(want(Some("xterm-256color"), Some("1")));
    assert!(want(Some("dumb"), None));
    assert!(want(Some(""), None));
    assert!(want(None, None));
    assert!(!want(Some("xterm-256color"), None));
}

#[test]
fn the_host_panel_shows_a_cpu_quota_and_its_throttling() {
    let mut a = app_with_figures();
    a.on_host(HostSample {
        cpu_quota: Some(1.5),
        throttled_ratio: Some(0.25),
        ..host()
    });
    let s = screen_text(&render(&a, 120, 40));
    assert!(s.contains("quota 1.5 CPUs"), "{s}");
    assert!(s.contains("throttled 25 %"), "{s}");
    a.on_host(host());
    assert!(!screen_text(&render(&a, 120, 40)).contains("quota"));
}

/// The screen's rows as text.
fn screen_text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    let cells: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
    cells
        .chunks(w)
        .map(|row| row.concat())
        .collect::<Vec<_>>()
        .join("\n")
}

/// On a Mac the host panel names what macOS lacks (steal, PSI) with its reason instead of a
/// number, shows the memory-pressure level, and says how many processes could not be read.
#[test]
fn a_macs_host_panel_says_what_it_lacks() {
    use stream_top::machine::host::{HostSource, MemPressure};
    let mut a = app_with_figures();
    a.on_host(HostSample {
        source: HostSource::Mac,
        mem_pressure: Some(MemPressure::Warning),
        cpu_some_avg10: None,
        mem_some_avg10: None,
        steal_pct: None,
        unreadable_processes: 3,
        ..host()
    });
    let screen: String = render(&a, 120, 40)
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    for needle in [
        "steal - (none on macOS)",
        "available 12 GiB of 16 GiB",
        "memory pressure warning",
        "PSI - (Linux only)",
        "12.5 % of a CPU (3 unreadable)",
        // No /proc to sample: the busiest by PID come from the process table, without users.
        "busiest PID 1 firefox 8 %",
    ] {
        assert!(screen.contains(needle), "missing {needle:?}");
    }
    assert!(!screen.contains("MemAvailable"));
}

/// The choice for set `set`: the `n`-th loop of the table this CPU runs, by trial.
fn choice_event(set: usize, n: usize) -> Event {
    use stream_top::engine::events::{By, Choice, Pick};
    use stream_top::engine::kernel::Variant;
    let v = Variant::all().filter(|v| (v.available)()).nth(n).unwrap();
    let other = Variant::all().find(|o| o.name != v.name).unwrap();
    Event::Choice(Box::new(Choice {
        op: stream_top::engine::kernel::Op::Triad,
        set,
        kept: Pick {
            variant: v,
            huge_pages: true,
        },
        kernel_by: By::Trial,
        layout_by: By::Trial,
        runner_up: Some((
            Pick {
                variant: other,
                huge_pages: false,
            },
            1.5,
        )),
        trial: None,
    }))
}

/// A row whose loop is not the first row's carries `ᴸ` after each figure (not `k`, read as
/// thousands); the detail panel names
/// the loop and the runner-up; the log says what each set runs.
#[test]
fn a_row_with_another_loop_is_marked_and_the_detail_names_the_loops() {
    let mut a = app_with_figures();
    a.on_event(&choice_event(0, 0));
    a.on_event(&choice_event(1, 1));
    let screen_of = |a: &App| text(&render(a, 120, 40), 0, 120, 0, 40).join("\n");
    let screen = screen_of(&a);
    let row = |s: &str, label: &str| s.lines().find(|r| r.contains(label)).unwrap().to_string();
    let l2 = row(&screen, "16 KiB/thread (l2)");
    let dram = row(&screen, "64 MiB (dram)");
    assert!(!l2.contains('ᴸ'), "the first row is the reference: {l2}");
    assert_eq!(dram.matches("ᴸ").count(), 2, "both dram cells: {dram}");
    assert!(!dram.contains(" k"), "{dram}");
    assert!(screen.contains("loop "), "{screen}");
    assert!(screen.contains("1.50 × "), "{screen}");
    assert!(
        screen.contains("runs "),
        "the log names the choice: {screen}"
    );
    // Same loop in every row: no mark.
    let mut same = app_with_figures();
    same.on_event(&choice_event(0, 0));
    same.on_event(&choice_event(1, 0));
    let dram = row(&screen_of(&same), "64 MiB (dram)");
    assert!(!dram.contains('ᴸ'), "{dram}");
}

/// A trial of dram at 2 threads: the first touch of its arrays, 30 % along, 12 s left; then its
/// second candidate of three.
fn trial_event(candidate: Option<usize>) -> Event {
    use stream_top::engine::events::{Pick, TrialProgress};
    use stream_top::engine::kernel::Variant;
    Event::Trial(TrialProgress {
        set: 1,
        threads: 2,
        candidate: candidate.map(|i| {
            let variant = Variant::all().next().unwrap();
            (
                i,
                Pick {
                    variant,
                    huge_pages: true,
                },
            )
        }),
        candidates: 3,
        done: 0.3,
        left_ns: 12_400_000_000,
    })
}

/// While dram's trial runs, its cell at 2 threads says `▶trial 30%` (no other cell is `▶`), the
/// status line is a gauge that names the trial, what it does and the time left, and the detail
/// of the selected dram cell shows the same bar and why no round counts yet.
#[test]
fn a_cell_in_trial_shows_the_trial_and_its_progress() {
    // l2 × 2 was measured; dram has no figure yet (the trial is its set's first visit).
    let mut a = app();
    a.on_event(&round(CellId::new(0, 2), 10.0));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('l'));
    a.on_event(&trial_event(None));
    let b = render(&a, 100, 30);
    let s = screen_text(&b);
    assert!(
        s.contains("trial of 64 MiB (dram): first touch of its arrays ×2 · 30 % · 12 s left"),
        "{s}"
    );
    assert!(s.contains("▶trial 30%"), "{s}");
    assert_eq!(s.matches('▶').count(), 1, "only the trial's cell is ▶: {s}");
    assert!(!s.contains("measuring"), "{s}");
    assert!(s.contains("no round counts until then"), "{s}");
    insta::assert_debug_snapshot!(b);

    // Its rounds: which candidate, by name where it fits.
    a.on_event(&trial_event(Some(1)));
    let s = screen_text(&render(&a, 160, 50));
    let name = stream_top::engine::kernel::Variant::all()
        .next()
        .unwrap()
        .name;
    let want = format!("trial of 64 MiB (dram): candidate 2 of 3 ({name}, huge pages) ×2");
    assert!(s.contains(&want), "{want}\n{s}");
    let s = screen_text(&render(&a, 80, 24));
    assert!(s.contains("candidate 2 of 3 ×2 · 30 % · 12 s left"), "{s}");

    // Its choice ends it: the status line goes back to the cell measured.
    a.on_event(&choice_event(1, 0));
    a.on_event(&Event::Visit {
        cell: CellId::new(1, 2),
        passes: 1,
    });
    let s = screen_text(&render(&a, 100, 30));
    assert!(!s.contains("trial of"), "{s}");
    assert!(s.contains("measuring dram ×2 now"), "{s}");
}

/// The keys a person needs, in the footer at the two common small sizes, in this order.
const FOOTER_KEYS: [&str; 7] = [" q ", " ? ", " ⏎ ", " space ", " d ", " e ", " r "];

/// At 80×24 and 100×30 the footer keeps q, ?, ⏎, space, d, e and r, in that order.
#[test]
fn the_footer_keeps_the_keys_that_matter_at_80_by_24_and_100_by_30() {
    let a = app_with_figures();
    for (w, h) in [(80, 24), (100, 30)] {
        let b = render(&a, w, h);
        let footer = text(&b, 0, w, h - 1, h).remove(0);
        let mut at = 0;
        for k in FOOTER_KEYS {
            let i = footer[at..]
                .find(k)
                .unwrap_or_else(|| panic!("{w}×{h}: {k:?} missing or out of order: {footer}"));
            at += i + k.len();
        }
        assert!(footer.contains(" duty"), "{w}×{h}: {footer}");
    }
}

/// At 80×24 the help is cut: its border says `more ↓`; ↓ and PgDn scroll it to its last line
/// (`more ↑` then, and no `more ↓`), PgUp back; any other key closes it.
#[test]
fn the_help_says_more_when_cut_and_scrolls() {
    let mut a = app_with_figures();
    press(&mut a, KeyCode::Char('?'));
    let s = screen_text(&render(&a, 80, 24));
    assert!(s.contains("more ↓"), "{s}");
    assert!(s.contains("↑↓ PgUp PgDn scroll"), "{s}");
    assert!(!s.contains("E› heads E-core cols"), "{s}");
    press(&mut a, KeyCode::Down);
    let s = screen_text(&render(&a, 80, 24));
    assert!(s.contains("more ↑"), "{s}");
    press(&mut a, KeyCode::PageDown);
    let s = screen_text(&render(&a, 80, 24));
    assert!(
        s.contains("E› heads E-core cols"),
        "the last line, whole: {s}"
    );
    assert!(!s.contains("more ↓"), "{s}");
    insta::assert_debug_snapshot!(render(&a, 80, 24));
    press(&mut a, KeyCode::PageUp);
    press(&mut a, KeyCode::PageUp);
    let s = screen_text(&render(&a, 80, 24));
    assert!(s.contains("more ↓") && !s.contains("more ↑"), "{s}");
    press(&mut a, KeyCode::Char('x'));
    assert!(!a.view.help);
    // At 100×40 it fits: its last line in view, no more, nothing to scroll.
    press(&mut a, KeyCode::Char('?'));
    let s = screen_text(&render(&a, 100, 40));
    assert!(s.contains("help: any key closes"), "{s}");
    assert!(s.contains("E› heads E-core cols"), "{s}");
    assert!(!s.contains("more ↓") && !s.contains("more ↑"), "{s}");
}

/// Whether `c` is part of a word for [`cut_words`].
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of a screen: runs of word characters.
fn words_of(screen: &str) -> std::collections::HashSet<String> {
    screen
        .split(|c: char| !word_char(c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The words cut at a right edge: a run of word characters that ends at a panel's right
/// border (a box-drawing character follows) or at the screen's last column, and that is not a
/// whole word of the same screen drawn wide (`whole`), where nothing is cut. `tail, 40` of
/// `the tail, 4` is not caught (a number cut to a number); `E-cor│` of `E-cores` is.
fn cut_words(screen: &str, whole: &std::collections::HashSet<String>) -> Vec<String> {
    let border = |c: char| ('\u{2500}'..='\u{257f}').contains(&c);
    let mut cut = Vec::new();
    for line in screen.lines() {
        let chars: Vec<char> = line.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let at_edge = match chars.get(i + 1) {
                None => true,
                Some(&n) => border(n),
            };
            if !word_char(c) || !at_edge {
                continue;
            }
            let start = chars[..i]
                .iter()
                .rposition(|&p| !word_char(p))
                .map_or(0, |p| p + 1);
            let word: String = chars[start..=i].iter().collect();
            if !whole.contains(&word) {
                cut.push(format!("{word:?} in {line:?}"));
            }
        }
    }
    cut
}

/// The help overlay's columns of a screen: what it covers of the panels beneath is not cut,
/// only hidden.
fn overlay_only(screen: &str) -> String {
    // The too-small screen draws no help.
    let Some(top) = screen.lines().find(|l| l.contains("help:")) else {
        return screen.to_string();
    };
    let chars: Vec<char> = top.chars().collect();
    let left = chars.iter().position(|&c| c == '┌').unwrap();
    let right = chars.iter().rposition(|&c| c == '┐').unwrap();
    screen
        .lines()
        .map(|l| {
            l.chars()
                .skip(left)
                .take(right + 1 - left)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_cut_word_rule_finds_a_cut_word_and_passes_whole_ones() {
    let whole = words_of("E-cores from here · 12.5 GB/s");
    assert!(cut_words("│E-cores from here│\n│12.5 GB/s│", &whole).is_empty());
    assert_eq!(cut_words("│E-cores fro│", &whole).len(), 1);
    assert_eq!(cut_words("x E-cor", &whole).len(), 1);
}

/// Every screen (sweep, focus, contended, trial, help at its top and scrolled to its end, the
/// full list of threads, too small) at 80×24 and 100×30: no word is cut at a panel's right
/// border or the screen's edge. The words that may stand there are those of the same screen
/// drawn at 250×80.
#[test]
fn no_screen_cuts_a_word_at_80_by_24_and_100_by_30() {
    let sweep = app_with_figures();
    let mut focus = app_with_figures();
    press(&mut focus, KeyCode::Char('j'));
    press(&mut focus, KeyCode::Enter);
    let mut help = app_with_figures();
    press(&mut help, KeyCode::Char('?'));
    let mut help_end = app_with_figures();
    press(&mut help_end, KeyCode::Char('?'));
    press(&mut help_end, KeyCode::End);
    let mut threads = app_with_figures();
    press(&mut threads, KeyCode::Char('t'));
    let mut trial = app();
    press(&mut trial, KeyCode::Char('j'));
    trial.on_event(&trial_event(Some(1)));
    let mut touch = app();
    touch.on_event(&trial_event(None));
    let mut looped = app_with_figures();
    looped.on_event(&choice_event(0, 0));
    looped.on_event(&choice_event(1, 1));
    let screens: Vec<(&str, App)> = vec![
        ("sweep", sweep),
        ("focus", focus),
        ("contended", contended_app()),
        ("help", help),
        ("help scrolled", help_end),
        ("threads list", threads),
        ("trial", trial),
        ("trial touching", touch),
        ("another loop", looped),
    ];
    let mut cut = Vec::new();
    for (name, a) in &screens {
        let whole = words_of(&screen_text(&render(a, 250, 80)));
        for (w, h) in [(80, 24), (100, 30), (60, 15)] {
            let mut s = screen_text(&render(a, w, h));
            if a.view.help {
                s = overlay_only(&s);
            }
            cut.extend(
                cut_words(&s, &whole)
                    .into_iter()
                    .map(|c| format!("{name} at {w}×{h}: {c}")),
            );
        }
    }
    assert!(cut.is_empty(), "cut mid-word:\n{}", cut.join("\n"));
}

/// The legend under the grid explains the disturbed mark `!`, and the colour's two meanings
/// (DRAM rows, cache rows) stand together as one entry, not split by the loop mark.
#[test]
fn the_legend_explains_the_disturbed_mark_and_keeps_the_colour_whole() {
    let mut a = app_with_figures();
    a.on_event(&Event::Visit {
        cell: CellId::new(1, 2),
        passes: 1,
    });
    let s = screen_text(&render(&a, 240, 40));
    let legend = s
        .lines()
        .find(|l| l.contains("measuring"))
        .expect("the status line");
    assert!(legend.contains("! disturbed"), "{legend}");
    let colour = "colour: dram vendor fraction, cache scaling/thread  ᴸ another loop";
    assert!(legend.contains(colour), "{legend}");
}

/// The help's marks line explains `!` beside the other marks of the grid.
#[test]
fn the_help_marks_line_explains_the_disturbed_mark() {
    let mut a = app_with_figures();
    press(&mut a, KeyCode::Char('?'));
    let s = screen_text(&render(&a, 120, 60));
    let marks = s
        .lines()
        .find(|l| l.contains("marks") && l.contains("contended"))
        .expect("the marks line");
    assert!(marks.contains("! disturbed"), "{marks}");
}

/// At 80×24 an entry too long for the events box keeps its head (its time and the cell it
/// is about) and loses its tail, marked `…`; before, only the tail of the wrapped entry
/// showed, without the time or the cell.
#[test]
fn a_long_event_at_80_by_24_keeps_its_time_and_cell_and_cuts_its_tail() {
    let mut a = app_with_figures();
    let words = "the worker's CPU was busy with another process for most of the round; ";
    a.log_line(
        Kind::Contention,
        format!("HEADCELL dram ×2: {}TAILWORD", words.repeat(8)),
    );
    let b = render(&a, 80, 24);
    let log = row_of(&b, "┌ events").expect("the events box");
    let boxed = text(&b, 0, 80, log + 1, b.area.height - 1).join("\n");
    assert!(boxed.contains("HEADCELL dram ×2"), "{boxed}");
    assert!(!boxed.contains("TAILWORD"), "{boxed}");
    assert!(boxed.contains('…'), "{boxed}");
    let time = a.narration.log.iter().last().map(|e| e.time.clone());
    assert!(boxed.contains(&time.unwrap_or_default()), "{boxed}");
}
