//! `?`: the keys and what every figure means, over the middle of the screen.

use super::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

/// The keys, in two lines.
const KEYS: [&str; 2] = [
    "←↓↑→/hjkl move (or click)   Enter focus ⇄ sweep   space pause ⇄ resume",
    "d duty 100→50→10 %   e export   r reset   ? help   q, Esc, Ctrl-C quit",
];

/// What every figure means, one line each.
const FIGURES: &[(&str, &str)] = &[
    (
        "median, best",
        "median GB/s of the window's rounds; best: STREAM's figure",
    ),
    (
        "cv, 95 % CI",
        "std dev / mean of rates; the median's interval, 6+ rounds",
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
        "of vendor",
        "median / the vendor's peak figure (means most for dram)",
    ),
    (
        "B/cycle",
        "GB/s / clock GHz / threads: bytes per core per cycle",
    ),
    (
        "rounds",
        "timed rounds in the window (all since reset); no warm-up",
    ),
    (
        "CPUs, migrations",
        "CPUs the threads ran on; thread-rounds that changed CPU",
    ),
    (
        "huge pages",
        "bytes of the arrays on transparent huge pages",
    ),
    (
        "checksum",
        "sum of a against its exact integer reference, each visit",
    ),
    (
        "GB/s",
        "24 bytes per element (2 reads, 1 write), 10^9 bytes/s",
    ),
    (
        "colour",
        "dram: vendor fraction; cache: scaling per thread; green high",
    ),
    (
        "marks",
        "▶ now  ◆ focused  * late  ~ noisy (detail)  † note  ✗ sum",
    ),
    (
        "contention",
        "3 rounds in a row >15 % under median: logged, with steal",
    ),
    (
        "baseline",
        "change vs --baseline; coloured when the rank test says so",
    ),
];

pub(super) struct HelpOverlay;

impl Widget for HelpOverlay {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let w = area.width.min(84);
        let h = (FIGURES.len() as u16 + KEYS.len() as u16 + 3).min(area.height);
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
        lines.push(Line::from(""));
        lines.extend(FIGURES.iter().map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>16}  "), theme::TITLE),
                Span::raw(*v),
            ])
        }));
        Clear.render(r, buf);
        Paragraph::new(lines)
            .block(Block::bordered().title(Span::styled(" help: any key closes ", theme::TITLE)))
            .render(r, buf);
    }
}
