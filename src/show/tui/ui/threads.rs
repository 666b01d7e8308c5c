//! The selected cell's last round, a bar per thread: its rate against the fastest thread, the
//! CPU it ran on (and moved to), how late it started, and where counted how often it was
//! switched out and the clock it ran at. When the threads do not fit (hundreds of them), a
//! summary instead: min, median and max, a histogram of the rates and the five slowest threads
//! with their CPUs; `t` brings the full list, which PgUp/PgDn/Home/End scroll.

use super::text::{bar, flow};
use super::theme::{self, Pace};
use crate::base::median::median;
use crate::engine::events::{RoundRecord, ThreadTiming};
use crate::judge::watch::narrative::gbs;
use crate::show::tui::app::App;
use crate::show::tui::view::ViewState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, StatefulWidget, Widget};

/// A thread that started more than this fraction of its own time late held the round back.
const HELD: f64 = 0.2;
/// A thread under this fraction of the fastest thread's rate is slow.
const SLOW: f64 = 0.8;
/// The slowest threads the summary names.
const SLOWEST: usize = 5;
/// Rows under which the summary packs its histogram into one line and the slowest threads
/// into a few: below the line of figures, three histogram rows, a heading and five threads,
/// a hint.
const FULL_SUMMARY_ROWS: usize = 3 + 3 + SLOWEST;
/// The histogram's bins at most, one a row.
const MAX_BINS: usize = 12;

pub(super) struct ThreadsPanel<'a>(pub &'a App);

/// " 2× 3.1GHz": the thread's involuntary switches and its counted clock, where counted.
fn counts(t: &ThreadTiming) -> String {
    let c = &t.counters;
    let mut out = String::new();
    if let Some(n) = c.switches {
        out.push_str(&format!(" {n}×"));
    }
    if let Some(g) = c.ghz(t.ns()) {
        out.push_str(&format!(" {g:.1}GHz"));
    }
    out
}

/// The CPU a thread ran on, `3→5` when it moved, `-` where the OS does not say (macOS).
fn cpu(t: &ThreadTiming) -> String {
    if t.cpu_start < 0 {
        "-".to_string()
    } else if t.migrated() {
        format!("{}→{}", t.cpu_start, t.cpu_end)
    } else {
        t.cpu_start.to_string()
    }
}

/// How the threads of one round are drawn as bars.
struct Bars<'r> {
    round: &'r RoundRecord,
    fastest: f64,
    start0: u64,
    /// Width of the thread's number and the space after it: `t7  `, `t200 `.
    index_w: usize,
    bar_w: usize,
}

impl<'r> Bars<'r> {
    fn new(round: &'r RoundRecord, width: u16) -> Bars<'r> {
        let digits = round.threads.len().saturating_sub(1).to_string().len();
        let index_w = (digits + 1).max(3);
        // "t12 cpu 12→13 " + bar + " 123.4 +1234µs" + " 2× 3.1GHz" where counted
        let counted = round.threads.iter().any(|t| t.counters.switches.is_some());
        let fixed = 1 + index_w + 11 + 16 + if counted { 11 } else { 0 };
        Bars {
            round,
            fastest: round.fastest_thread_gbs().max(f64::MIN_POSITIVE),
            start0: round.threads.iter().map(|t| t.start_ns).min().unwrap_or(0),
            index_w,
            bar_w: (width as usize).saturating_sub(fixed).max(4),
        }
    }

    /// Thread `i`'s line.
    fn line(&self, i: usize) -> Line<'static> {
        let t = &self.round.threads[i];
        let rate = t.gbs();
        let offset_ns = t.start_ns.saturating_sub(self.start0);
        let pace = if offset_ns as f64 > HELD * t.ns() as f64 {
            Pace::Held
        } else if rate < SLOW * self.fastest {
            Pace::Slow
        } else {
            Pace::Even
        };
        let filled = rate / self.fastest * self.bar_w as f64;
        Line::from(vec![
            Span::styled(format!("t{i:<w$}", w = self.index_w), theme::LABEL),
            Span::raw(format!("cpu {:<6} ", cpu(t))),
            Span::styled(bar(filled, self.bar_w), theme::pace_bar(pace)),
            Span::styled(format!(" {:>6}", gbs(rate)), theme::VALUE),
            Span::styled(
                format!(" +{:.0}µs", offset_ns as f64 / 1e3),
                theme::start_offset(pace),
            ),
            Span::styled(
                counts(t),
                theme::switched(t.counters.switches.unwrap_or(0) > 0),
            ),
        ])
    }
}

/// How many threads fall in each of `bins` equal bins from the slowest rate to the fastest.
pub(crate) fn histogram(rates: &[f64], bins: usize) -> Vec<usize> {
    let bins = bins.max(1);
    let mut out = vec![0; bins];
    let (lo, hi) = bounds(rates);
    for &r in rates {
        let i = if hi > lo {
            ((r - lo) / (hi - lo) * bins as f64) as usize
        } else {
            0
        };
        out[i.min(bins - 1)] += 1;
    }
    out
}

/// The slowest and the fastest rate.
fn bounds(rates: &[f64]) -> (f64, f64) {
    let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// The summary of a round whose threads do not fit: `rows` lines of `width`.
fn summary(r: &RoundRecord, bars: &Bars, rows: usize, width: u16) -> Vec<Line<'static>> {
    let rates: Vec<f64> = r.threads.iter().map(ThreadTiming::gbs).collect();
    let mut slowest: Vec<usize> = (0..rates.len()).collect();
    slowest.sort_by(|&a, &b| rates[a].total_cmp(&rates[b]).then(a.cmp(&b)));
    slowest.truncate(SLOWEST);
    let mut lines = if rows >= FULL_SUMMARY_ROWS {
        tall(&rates, &slowest, bars, rows, width)
    } else {
        short(r, &rates, &slowest, width)
    };
    lines.truncate(rows);
    lines
}

/// Room enough: min, median and max; the histogram a row per bin; the slowest threads as
/// bars; the key to the full list.
fn tall(
    rates: &[f64],
    slowest: &[usize],
    bars: &Bars,
    rows: usize,
    width: u16,
) -> Vec<Line<'static>> {
    let (lo, hi) = bounds(rates);
    let mut lines = vec![Line::from(vec![
        Span::styled("min ", theme::LABEL),
        Span::styled(gbs(lo), theme::VALUE),
        Span::styled("  median ", theme::LABEL),
        Span::styled(gbs(median(rates)), theme::VALUE),
        Span::styled("  max ", theme::LABEL),
        Span::styled(gbs(hi), theme::VALUE),
        Span::styled(" GB/s", theme::LABEL),
    ])];
    let bins = rows.saturating_sub(3 + SLOWEST).clamp(1, MAX_BINS);
    let counts = histogram(rates, bins);
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let step = (hi - lo) / bins as f64;
    // "  1.02–1.07 " + bar + "  123"
    let bar_w = (width as usize).saturating_sub(13 + 5).max(4);
    for (i, &n) in counts.iter().enumerate() {
        let from = lo + step * i as f64;
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:>6}–{:<6}", gbs(from), gbs(from + step)),
                theme::LABEL,
            ),
            Span::styled(
                bar(n as f64 / most as f64 * bar_w as f64, bar_w),
                theme::HISTOGRAM,
            ),
            Span::styled(format!(" {n:>4}"), theme::VALUE),
        ]));
    }
    lines.push(Line::styled(
        format!("slowest {}", slowest.len()),
        theme::TITLE,
    ));
    lines.extend(slowest.iter().map(|&i| bars.line(i)));
    lines.push(Line::styled(
        format!("t lists all {} threads; PgUp/PgDn scroll", rates.len()),
        theme::HINT,
    ));
    lines
}

/// Few rows: the histogram as one line between the slowest and the fastest rate, the median
/// after it; then as many of the slowest threads as the rows left hold.
fn short(r: &RoundRecord, rates: &[f64], slowest: &[usize], width: u16) -> Vec<Line<'static>> {
    let (lo, hi) = bounds(rates);
    let (lo, hi, med) = (gbs(lo), gbs(hi), gbs(median(rates)));
    let fixed = lo.len() + hi.len() + 2 + " GB/s  median ".len() + med.len();
    let counts = histogram(rates, (width as usize).saturating_sub(fixed).max(4));
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let spark: String = counts.iter().map(|&n| spark(n, most)).collect();
    let mut lines = vec![Line::from(vec![
        Span::styled(lo, theme::VALUE),
        Span::raw(" "),
        Span::styled(spark, theme::HISTOGRAM),
        Span::raw(" "),
        Span::styled(hi, theme::VALUE),
        Span::styled(" GB/s  median ", theme::LABEL),
        Span::styled(med, theme::VALUE),
    ])];
    let items: Vec<Vec<Span<'static>>> = slowest
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let mut item = Vec::new();
            if k == 0 {
                item.push(Span::styled("slowest ", theme::TITLE));
            }
            item.push(Span::styled(format!("t{i}"), theme::LABEL));
            item.push(Span::raw(format!(" cpu {} ", cpu(&r.threads[i]))));
            item.push(Span::styled(gbs(rates[i]), theme::VALUE));
            item
        })
        .collect();
    lines.extend(flow(items, width));
    lines
}

/// A column of the one-line histogram: blank for no thread, else an eighth-block as tall as
/// its share of the fullest bin (at least the lowest).
fn spark(n: usize, most: usize) -> char {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if n == 0 {
        ' '
    } else {
        LEVELS[((n * 8).div_ceil(most)).clamp(1, 8) - 1]
    }
}

impl StatefulWidget for ThreadsPanel<'_> {
    type State = ViewState;

    fn render(self, area: Rect, buf: &mut Buffer, view: &mut ViewState) {
        let app = self.0;
        let last = app.board.cell(app.selected()).and_then(|c| c.last.as_ref());
        let rows = area.height.saturating_sub(2) as usize;
        let n = last.map_or(0, |r| r.threads.len());
        let fits = n <= rows;
        let top = if app.view.threads_list && !fits {
            app.view.threads_top.min(n - rows)
        } else {
            0
        };
        view.threads_page = rows;
        let title = match last {
            Some(r) => {
                let which = if fits {
                    "threads".to_string()
                } else if app.view.threads_list {
                    format!("threads t{top}–t{} of {n}", top + rows - 1)
                } else {
                    format!("{n} threads")
                };
                format!(
                    " {which}, last round: {:.2} ms{}{} ",
                    r.span_ns as f64 / 1e6,
                    if r.warmup { ", warm-up" } else { "" },
                    if r.late { ", LATE" } else { "" }
                )
            }
            None => " threads, last round ".into(),
        };
        let block = Block::bordered().title(Span::styled(title, theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        let Some(r) = last else {
            Paragraph::new(Span::styled("no round yet", theme::HINT)).render(inner, buf);
            return;
        };
        let bars = Bars::new(r, inner.width);
        let lines = if fits || app.view.threads_list {
            (top..n).take(rows).map(|i| bars.line(i)).collect()
        } else {
            summary(r, &bars, rows, inner.width)
        };
        Paragraph::new(lines).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_bins_from_the_slowest_to_the_fastest() {
        assert_eq!(histogram(&[1.0, 2.0, 3.0, 4.0], 3), vec![1, 1, 2]);
        assert_eq!(histogram(&[5.0, 5.0], 4), vec![2, 0, 0, 0]);
        assert_eq!(histogram(&[], 2), vec![0, 0]);
        let h = histogram(&[1.0, 1.1, 1.2, 9.0], 8);
        assert_eq!((h[0], h[7], h.iter().sum::<usize>()), (3, 1, 4));
    }

    #[test]
    fn spark_levels_scale_to_the_fullest_bin() {
        assert_eq!(spark(0, 10), ' ');
        assert_eq!(spark(1, 100), '▁');
        assert_eq!(spark(10, 10), '█');
        assert_eq!(spark(5, 10), '▄');
    }
}
