//! `?`: the keys and what every figure means, over the middle of the screen. Where the screen
//! is too short for all of it (80×24), ↑/↓/PgUp/PgDn/Home/End scroll it while it is open and the
//! border says `more ↓` (or `more ↑`) where lines are cut; any other key closes it.

use super::layout::min_size;
use super::theme;
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

/// The keys, in six lines; the second in the words the footer uses (`keys`).
fn live_keys() -> [String; 6] {
    [
        "←↓↑→/hjkl move (or click)   Enter focus ⇄ sweep   space pause ⇄ resume".into(),
        super::keys::help_line("d duty 100→50→10 %"),
        "p pin reference   t threads: summary ⇄ full list   PgUp/PgDn/Home/End scroll".into(),
        "L log: ↑↓ PgUp/PgDn Home/End, / search, n N older/newer, f kind, q Esc L back".into(),
        "P probe on ⇄ off (memory latency on one CPU, beside the triad)".into(),
        "? help   o next op (--op)   Ctrl-Z suspend (fg resumes)   q, Esc, Ctrl-C quit".into(),
    ]
}

/// The keys of a replay (`stream-top replay FILE`), in five lines.
const REPLAY_KEYS: [&str; 5] = [
    "[ ] step 1 s back/on (a count first: 30] = 30 s)   { } previous/next episode",
    "g go to a time (90s, 4m, 1h30m, RFC 3339)   space play ⇄ pause   > 1×→10×→60×",
    "←↓↑→/hjkl move (or click)   t threads   PgUp/PgDn/Home/End   L log (as live)",
    "focus, pause, duty, export, reset and pin are the live monitor's: refused here",
    "? help   q, Esc, Ctrl-C quit",
];

/// What the figures of the grid and the detail mean, one line each (at most 60 characters:
/// the smallest screen).
const FIGURES: &[(&str, &str)] = &[
    (
        "median, rounds",
        "median GB/s (24 B/elt) of the window's rounds (all since r)",
    ),
    (
        "best, cv, CI",
        "fastest round (STREAM's); sd/mean; the median's 95 % CI",
    ),
    (
        "fastest, slowest",
        "medians of each round's quickest and slowest thread",
    ),
    (
        "late, disturbed",
        "held >20 % / switched out or slow; both kept in median",
    ),
    (
        "counters",
        "GHz, IPC, switches/round, LLC misses/KiB where counted",
    ),
    (
        "scaling",
        "median / the 1-thread median of the same working set",
    ),
    (
        "vendor, B/cycle",
        "median / vendor peak; GB/s / GHz (counted or clock) / thr",
    ),
    (
        "CPUs, migrations",
        "CPUs the threads ran on; thread-rounds that changed CPU",
    ),
    (
        "loop, pages, sum",
        "loop/layout by trial (ᴸ: not row 1's); huge bytes; checksum",
    ),
    (
        "colour",
        "dram: vendor fraction; cache: scaling per thread; green high",
    ),
    (
        "marks",
        "▶ now ◆ focus ▼ contended ! disturbed ~ noisy * late rounds",
    ),
    ("more marks", "† sizing note ✗ checksum ᴸ not row 1's loop"),
    (
        "trial n%",
        "a cell's set choosing its loop: candidate, % and time left",
    ),
    (
        "baseline",
        "change vs --baseline, coloured if significant; its reference",
    ),
];

/// What the suspects, the timeline, the threads and the probe show.
const PANELS: &[(&str, &str)] = &[
    (
        "suspects",
        "CPU rise vs the calm minute; more if memory-heavy/our CPUs",
    ),
    (
        "timeline",
        "15 min GB/s; ┄ reference; shaded contended; suspect CPU",
    ),
    (
        "threads",
        "last round; too many: histogram, min/median/max, 5 slowest",
    ),
    (
        "probe",
        "ns/load: 4096-load bursts every 100 ms on one CPU, ~3 MB/s",
    ),
    (
        "probe states",
        "contended: 2 s over its calm ref. +20 %; out within +9 %",
    ),
    (
        "nodes, P/E, E›",
        "Σ of their threads' rates (n × median); E› heads E-core cols",
    ),
];

/// What every figure means, one line each (at most 60 characters: the smallest screen); the
/// contention lines say the thresholds in force.
fn figures(app: &App) -> Vec<(&'static str, String)> {
    let owned = |list: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        list.iter().map(|(k, v)| (*k, v.to_string())).collect()
    };
    let mut out = owned(FIGURES);
    out.extend(contention_figures(app));
    out.extend(owned(PANELS));
    out
}

/// The reference and the contention states, with the thresholds in force.
fn contention_figures(app: &App) -> Vec<(&'static str, String)> {
    let t = app.narration.watch.thresholds;
    let drop = t.drop * 100.0;
    let n = t.rounds;
    vec![
        (
            "reference",
            format!(
                "median of the first {} calm rounds after focus, r; p pins",
                app.board.window
            ),
        ),
        (
            "contention",
            format!(
                "in: {n} rounds >{drop:.0} % below; out: median of last {n} within {}",
                pct(drop / 2.0)
            ),
        ),
        (
            "calm",
            "judged against its reference: not contended, not disturbed".into(),
        ),
        (
            "no calm ref. yet",
            "disturbed rounds only so far: they teach no reference".into(),
        ),
        (
            "disturbed",
            format!("! in: {n} disturbed in a row; out: most of the last {n} calm"),
        ),
        (
            "recovering",
            format!(
                "after contention, until the window's median is within {}",
                pct(drop / 2.0)
            ),
        ),
        (
            "thresholds",
            format!("set with --contention-drop {drop:.0} --contention-rounds {n}"),
        ),
    ]
}

/// `7.5 %`, `10 %`.
fn pct(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0} %")
    } else {
        format!("{v:.1} %")
    }
}

/// The help's lines: the keys, then a line per figure.
fn lines(app: &App) -> Vec<Line<'static>> {
    let keys: Vec<String> = if app.replay.is_some() {
        REPLAY_KEYS.map(String::from).to_vec()
    } else {
        live_keys().to_vec()
    };
    let mut lines: Vec<Line> = keys
        .into_iter()
        .map(|k| Line::from(Span::styled(k, theme::HELP_KEYS)))
        .collect();
    lines.extend(figures(app).into_iter().map(|(k, v)| {
        Line::from(vec![
            Span::styled(format!("{k:>16}  "), theme::TITLE),
            Span::raw(v),
        ])
    }));
    lines
}

/// How far the help scrolls: as far as the smallest screen needs to show its last line (a
/// taller screen shows more at once and stops scrolling sooner, when it draws).
pub(crate) fn max_scroll(app: &App) -> u16 {
    let rows = min_size(app).1.saturating_sub(2);
    (lines(app).len() as u16).saturating_sub(rows)
}

pub(super) struct HelpOverlay<'a>(pub &'a App);

impl Widget for HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        let lines = lines(app);
        let total = lines.len() as u16;
        let w = area.width.min(84);
        let h = (total + 2).min(area.height);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        let rows = h.saturating_sub(2);
        let top = app.view.help_scroll.min(total.saturating_sub(rows));
        let mut block = Block::bordered().title(Span::styled(
            if top > 0 || rows < total {
                " help: ↑↓ PgUp PgDn scroll, any other key closes "
            } else {
                " help: any key closes "
            },
            theme::TITLE,
        ));
        if top > 0 {
            block = block.title_bottom(Line::from(Span::styled(" more ↑ ", theme::HINT)));
        }
        if top + rows < total {
            block = block
                .title_bottom(Line::from(Span::styled(" more ↓ ", theme::HINT)).right_aligned());
        }
        Clear.render(r, buf);
        Paragraph::new(lines)
            .scroll((top, 0))
            .block(block)
            .render(r, buf);
    }
}
