//! The grid's last line: what the engine is doing now (a working set's trial, allocating, first
//! touch, measuring, paused, ended), with a legend of the marks while it measures.

use super::theme;
use crate::base::units::format_bytes;
use crate::engine::events::{Stage, TrialProgress};
use crate::show::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Widget};

/// What the marks and colours of the grid mean, most needed first; the colour as one entry
/// (what it means for the DRAM rows and for the cache rows).
const LEGEND: [&str; 8] = [
    "▼ contended",
    "! disturbed",
    "~ noisy",
    "* late rounds",
    "† sizing note",
    E_CORES,
    "colour: dram vendor fraction, cache scaling/thread",
    "ᴸ another loop",
];

/// The legend's entry for the E-cores mark, shown only on a machine that has them.
const E_CORES: &str = "E› E-cores from here";

pub(super) struct StatusLine<'a>(pub &'a App);

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        if let Some(t) = &app.live.trial {
            Gauge::default()
                .ratio(t.done.clamp(0.0, 1.0))
                .label(trial_words(app, t, area.width as usize))
                .gauge_style(theme::GAUGE)
                .use_unicode(true)
                .render(area, buf);
            return;
        }
        if let Some(p) = app.live.progress {
            let what = match p.stage {
                Stage::Allocating => "allocating",
                Stage::FirstTouch => "first touch of",
                Stage::Moving => "moving to their threads' nodes the pages of",
            };
            let label = format!(
                "{what} arrays for {}: {} of {}",
                app.cell_name(p.cell),
                format_bytes(p.done_bytes),
                format_bytes(p.total_bytes)
            );
            Gauge::default()
                .ratio(p.ratio())
                .label(label)
                .gauge_style(theme::GAUGE)
                .use_unicode(true)
                .render(area, buf);
            return;
        }
        let line = if app.live.finished {
            let why = app
                .live
                .last_error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            Line::from(Span::styled(format!("the engine ended{why}"), theme::ENDED))
        } else if app.live.paused {
            Line::from(Span::styled(
                "paused: workers parked, CPUs idle (space resumes)",
                theme::PAUSED,
            ))
        } else if app.view.pause_requested {
            Line::from(Span::styled("pausing after this round…", theme::HINT))
        } else {
            match app.live.current {
                Some(c) => {
                    let now = format!("measuring {} now", app.cell_name(c));
                    let mut spans = vec![Span::styled("▶ ", theme::MARK), Span::raw(now)];
                    // The legend, as much of it as fits, a whole item at a time.
                    let mut used: usize = spans.iter().map(|s| s.width()).sum::<usize>() + 1;
                    let e_cores = app.setup.e_cores_from.is_some();
                    let legend = LEGEND.iter().filter(|&&item| e_cores || item != E_CORES);
                    for (i, item) in legend.enumerate() {
                        let gap = if i == 0 { "   " } else { "  " };
                        let w = gap.chars().count() + item.chars().count();
                        if used + w > area.width as usize {
                            break;
                        }
                        used += w;
                        spans.push(Span::styled(format!("{gap}{item}"), theme::HINT));
                    }
                    Line::from(spans)
                }
                None => Line::from(Span::styled("starting…", theme::HINT)),
            }
        };
        Paragraph::new(line).render(area, buf);
    }
}

/// What a trial does now, in at most `width` columns where it can: `trial of dram: candidate
/// 2 of 3 (avx2 ymm fma, huge pages) ×2 · 45 % · 0.8 s left`, without the candidate's name
/// when that does not fit; before its rounds, `trial of dram: first touch of its arrays ×2 ·
/// 12 % · 14 s left`.
pub(super) fn trial_words(app: &App, t: &TrialProgress, width: usize) -> String {
    let set = app
        .grid
        .sets
        .get(t.set)
        .map_or_else(|| format!("set {}", t.set), |s| s.label());
    let left = t.left_ns as f64 / 1e9;
    let left = if left >= 10.0 {
        format!("{left:.0} s")
    } else {
        format!("{left:.1} s")
    };
    let tail = format!("×{} · {:.0} % · {left} left", t.threads, t.done * 100.0);
    let nows = match t.candidate {
        Some((i, pick)) => [
            format!("candidate {} of {} ({pick})", i + 1, t.candidates),
            format!("candidate {} of {}", i + 1, t.candidates),
        ],
        None => [
            "first touch of its arrays".to_string(),
            "first touch".to_string(),
        ],
    };
    let mut words = String::new();
    for now in nows {
        words = format!("trial of {set}: {now} {tail}");
        if words.chars().count() <= width {
            break;
        }
    }
    words
}
