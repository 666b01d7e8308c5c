//! The lines above the grid: the machine, its caches, the run's settings, the vendor figure;
//! and a banner no one can miss when a checksum failed.
//!
//! On a narrow screen the header wraps between its items (`kernel avx2 · normal stores · …`)
//! and between words, never inside one; when that takes more rows than it has, the details in
//! parentheses go first, then the lines are packed together.

use super::text::pack;
use super::theme;
use crate::engine::kernel::Op;
use crate::machine::procs::OwnCpu;
use crate::show::tui::app::{App, Replaying};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// Between the items of a header line.
const SEP: &str = " · ";
const BRAND: &str = "stream-top ";

pub(super) struct HeaderBar<'a>(pub &'a App);

impl Widget for HeaderBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.0;
        // A replay says so first, with its cursor; the run's lines follow in what is left.
        let area = match &app.replay {
            Some(r) if area.height > 0 => {
                let top = Rect { height: 1, ..area };
                Paragraph::new(replay_line(app, r, area.width as usize)).render(top, buf);
                Rect {
                    y: area.y + 1,
                    height: area.height - 1,
                    ..area
                }
            }
            _ => area,
        };
        let h = &app.setup.header;
        let width = area.width as usize;
        let rows = area.height as usize;
        let machine = format!("{BRAND}{}", h.machine);
        // What the monitor costs now: its CPU and the arrays it holds.
        let cost = [own_cpu(app), arrays_held(app), app.probe.header_item()];
        let run = match shown_op(app) {
            Some(op) => format!("{op}{SEP}{}", h.run),
            None => h.run.clone(),
        };
        let run = cost
            .into_iter()
            .flatten()
            .fold(run, |run, item| format!("{run}{SEP}{item}"));
        let rest = [h.caches.as_str(), run.as_str(), h.vendor.as_str()];
        let fits = |lines: &[(String, Style)]| lines.len() <= rows;
        // Each line as it is; then without the details in parentheses; then packed together.
        let mut lines = layout(&machine, &rest, width, false, false);
        if !fits(&lines) {
            lines = layout(&machine, &rest, width, true, false);
        }
        if !fits(&lines) {
            lines = layout(&machine, &rest, width, true, true);
        }
        lines.truncate(rows);
        let mut out: Vec<Line> = lines
            .into_iter()
            .map(|(text, style)| Line::from(Span::styled(text, style)))
            .collect();
        // The name in its own colour.
        if let Some(first) = out.first_mut()
            && let Some(text) = first.spans.first().map(|s| s.content.to_string())
            && let Some(rest) = text.strip_prefix(BRAND)
        {
            *first = Line::from(vec![
                Span::styled(BRAND, theme::BRAND),
                Span::styled(rest.to_string(), theme::TITLE),
            ]);
        }
        if app.board.any_checksum_failed()
            && let Some(first) = out.first_mut()
        {
            first.spans.push(Span::raw("  "));
            first.spans.push(Span::styled(
                " CHECKSUM FAILED: figures are wrong ",
                theme::ALARM_BANNER,
            ));
        }
        Paragraph::new(out).render(area, buf);
    }
}

/// `REPLAY night.rec · 03:12:09 (+4m12s of 10m0s) · paused, 1× · episodes recorded`, as
/// many of its items as fit, the prompt of `g` before the last.
fn replay_line(app: &App, r: &Replaying, width: usize) -> Line<'static> {
    let state = if r.playing {
        format!("playing {}×", r.speed)
    } else {
        format!("paused, {}×", r.speed)
    };
    let mut items = vec![
        r.file.clone(),
        format!(
            "{} (+{} of {})",
            (app.clock.time_of)(r.at),
            span(r.offset),
            span(r.length)
        ),
        state,
    ];
    if let Some(t) = &r.typing {
        items.push(format!("go to: {t}▏"));
    }
    items.push(
        if r.episodes_recorded {
            "episodes recorded"
        } else {
            "episodes judged again"
        }
        .into(),
    );
    let tag = " REPLAY ";
    let room = width.saturating_sub(tag.chars().count() + 1);
    let mut text = String::new();
    for item in items {
        let add = if text.is_empty() {
            item
        } else {
            format!("{SEP}{item}")
        };
        if text.chars().count() + add.chars().count() > room {
            break;
        }
        text.push_str(&add);
    }
    Line::from(vec![
        Span::styled(tag, theme::REPLAY),
        Span::raw(" "),
        Span::styled(text, theme::TITLE),
    ])
}

/// `4m12s`, `1h03m00s`.
fn span(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// The header's lines at `width`: the machine line, then the others each on its own lines or,
/// `packed`, together; `short` leaves out the details in parentheses.
fn layout(
    machine: &str,
    rest: &[&str],
    width: usize,
    short: bool,
    packed: bool,
) -> Vec<(String, Style)> {
    let items = |text: &str| -> Vec<String> {
        text.split(SEP)
            .filter(|i| !i.is_empty())
            .map(|i| if short { abbreviate(i) } else { i.to_string() })
            .collect()
    };
    let mut out: Vec<(String, Style)> = pack(&items(machine), SEP, width)
        .into_iter()
        .map(|l| (l, theme::TITLE))
        .collect();
    if packed {
        let all: Vec<String> = rest.iter().flat_map(|t| items(t)).collect();
        out.extend(
            pack(&all, SEP, width)
                .into_iter()
                .map(|l| (l, Style::new())),
        );
    } else {
        for text in rest {
            out.extend(
                pack(&items(text), SEP, width)
                    .into_iter()
                    .map(|l| (l, Style::new())),
            );
        }
    }
    out
}

/// The op the grid shows, with its loop and what `o` does (`op copy: a = b (o: 2 of 4)`),
/// where the run has another op than the triad alone.
fn shown_op(app: &App) -> Option<String> {
    let op = app.view.op;
    let ops = &app.grid.ops;
    if ops.len() < 2 && op == Op::Triad {
        return None;
    }
    let of = match ops.iter().position(|&o| o == op) {
        Some(i) if ops.len() > 1 => format!(" (o: {} of {})", i + 1, ops.len()),
        _ => String::new(),
    };
    Some(format!("op {op}: {}{of}", op.formula()))
}

/// The monitor's own CPU from the last host sample (`monitor CPU 17 % of one CPU`), or `–`
/// with the reason; nothing before there is an interval to measure it over.
fn own_cpu(app: &App) -> Option<String> {
    Some(match &app.live.host.as_ref()?.own_cpu {
        OwnCpu::NotYet => return None,
        OwnCpu::Pct(p) => format!("monitor CPU {p:.0} % of one CPU"),
        OwnCpu::Unknown(why) => format!("monitor CPU – ({why})"),
    })
}

/// The arrays the engine holds now (`arrays 384 MiB held`), the monitor's memory beyond its
/// few MiB of its own; nothing before the engine has said.
fn arrays_held(app: &App) -> Option<String> {
    app.live
        .arrays_held
        .map(|b| format!("arrays {} held", crate::base::units::format_bytes(b)))
}

/// An item without its details in parentheses: `clock 3.24 GHz (dependent add chain, …)` is
/// `clock 3.24 GHz`.
fn abbreviate(item: &str) -> String {
    match item.find(" (") {
        Some(i) if i > 0 && item.ends_with(')') => item[..i].to_string(),
        _ => item.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::{ArraySize, Grid, WorkingSet};
    use crate::judge::stats::Context;
    use crate::machine::host::HostSample;
    use crate::show::tui::app::Header;

    /// The header of a one-cell monitor, at 120 × 6, as text.
    fn rendered(host: Option<HostSample>) -> String {
        rendered_with(host, &[])
    }

    /// The same after the engine's `events`.
    fn rendered_with(host: Option<HostSample>, events: &[crate::engine::events::Event]) -> String {
        let grid = Grid {
            sets: vec![WorkingSet {
                name: "l1".into(),
                level: None,
                size: ArraySize::PerThread(4 << 10),
                note: None,
            }],
            threads: vec![2],
            ops: vec![crate::engine::kernel::Op::Triad],
        };
        let header = Header {
            machine: "testbox · Test CPU".into(),
            caches: "caches L1d 32 KiB ×2".into(),
            run: "kernel avx2 · normal stores · duty 10 %".into(),
            vendor: "vendor figure unknown".into(),
        };
        let mut app = App::new(grid, 5, Context::default(), header, 10);
        for ev in events {
            app.on_event(ev);
        }
        app.live.host = host;
        let area = Rect::new(0, 0, 120, 6);
        let mut buf = Buffer::empty(area);
        HeaderBar(&app).render(area, &mut buf);
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_header_shows_the_monitors_own_cpu_or_why_not() {
        assert!(
            !rendered(None).contains("monitor CPU"),
            "nothing before a sample"
        );
        let first = rendered(Some(HostSample::default()));
        assert!(!first.contains("monitor CPU"), "nor before an interval");
        let busy = rendered(Some(HostSample {
            own_cpu: OwnCpu::Pct(17.6),
            ..Default::default()
        }));
        assert!(
            busy.contains("duty 10 % · monitor CPU 18 % of one CPU"),
            "{busy}"
        );
        let mac = rendered(Some(HostSample {
            own_cpu: OwnCpu::Unknown("not read on macOS".into()),
            ..Default::default()
        }));
        assert!(mac.contains("monitor CPU – (not read on macOS)"), "{mac}");
    }

    #[test]
    fn abbreviation_drops_the_details_in_parentheses() {
        assert_eq!(
            abbreviate("clock 3.24 GHz (chain, min of 7)"),
            "clock 3.24 GHz"
        );
        assert_eq!(
            abbreviate("vendor figure unknown (pass N; no table (x))"),
            "vendor figure unknown"
        );
        assert_eq!(abbreviate("caches L1d 32 KiB ×2"), "caches L1d 32 KiB ×2");
    }

    #[test]
    fn the_header_shows_the_arrays_the_engine_holds_as_it_last_said() {
        use crate::engine::events::Event;
        assert!(
            !rendered(None).contains("arrays"),
            "nothing before the engine says"
        );
        let held = rendered_with(
            None,
            &[Event::ArraysHeld(3 << 27), Event::ArraysHeld(384 << 20)],
        );
        assert!(held.contains("duty 10 % · arrays 384 MiB held"), "{held}");
    }
}
