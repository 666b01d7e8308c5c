//! `?`: the keys and what every figure means, over the middle of the screen.

use super::theme;
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

/// The keys, in five lines.
const KEYS: [&str; 5] = [
    "←↓↑→/hjkl move (or click)   Enter focus ⇄ sweep   space pause ⇄ resume",
    "d duty 100→50→10 %   e export (1 a second)   r reset cell   R R reset all",
    "p pin reference   t threads: summary ⇄ full list   PgUp/PgDn/Home/End scroll",
    "L log: ↑↓ PgUp/PgDn Home/End, / search, n N older/newer, f kind, q Esc L back",
    "? help   Ctrl-Z suspend (fg resumes)   q, Esc, Ctrl-C quit",
];

/// What every figure means, one line each (at most 60 characters: the smallest screen); the
/// contention lines say the thresholds in force.
fn figures(app: &App) -> Vec<(&'static str, String)> {
    let t = app.narration.watch.thresholds;
    let drop = t.drop * 100.0;
    let n = t.rounds;
    let fixed: &[(&str, &str)] = &[
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
            "loop/layout by trial (k: not row 1's); huge bytes; checksum",
        ),
        (
            "colour",
            "dram: vendor fraction; cache: scaling per thread; green high",
        ),
        (
            "marks",
            "▶ now ◆ focus ▼ contended ~ noisy * late † note ✗ sum k loop",
        ),
        (
            "baseline",
            "change vs --baseline, coloured if significant; its reference",
        ),
    ];
    let mut out: Vec<(&'static str, String)> =
        fixed.iter().map(|(k, v)| (*k, v.to_string())).collect();
    out.extend([
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
        (
            "suspects",
            "CPU rise vs the calm minute; more if memory-heavy/our CPUs".into(),
        ),
        (
            "timeline",
            "15 min GB/s; ┄ reference; shaded contended; suspect CPU".into(),
        ),
        (
            "threads",
            "last round; too many: histogram, min/median/max, 5 slowest".into(),
        ),
        (
            "nodes, P/E, E›",
            "Σ of their threads' rates (n × median); E›: E-cores from".into(),
        ),
    ]);
    out
}

/// `7.5 %`, `10 %`.
fn pct(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0} %")
    } else {
        format!("{v:.1} %")
    }
}

pub(super) struct HelpOverlay<'a>(pub &'a App);

impl Widget for HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let figures = figures(self.0);
        let w = area.width.min(84);
        let h = (figures.len() as u16 + KEYS.len() as u16 + 2).min(area.height);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        let mut lines: Vec<Line> = KEYS
            .iter()
            .map(|k| Line::from(Span::styled(*k, theme::HELP_KEYS)))
            .collect();
        lines.extend(figures.into_iter().map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>16}  "), theme::TITLE),
                Span::raw(v),
            ])
        }));
        Clear.render(r, buf);
        Paragraph::new(lines)
            .block(Block::bordered().title(Span::styled(" help: any key closes ", theme::TITLE)))
            .render(r, buf);
    }
}
