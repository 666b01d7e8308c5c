//! The host beside the measurement. First the processes: while the cell in view is contended,
//! its suspects, one a line, with the evidence against them; otherwise the busiest processes
//! with their PIDs and users. Then load, steal, memory, swap, pressure, and the CPU all other
//! processes used.

use super::text::{fig, flow, opt, pack, wrap};
use super::theme;
use crate::tui::app::App;
use crate::tui::narrative;
use crate::units::format_bytes;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

pub(super) struct HostPanel<'a>(pub &'a App);

impl Widget for HostPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::bordered().title(Span::styled(" host ", theme::TITLE));
        let inner = block.inner(area);
        block.render(area, buf);
        let app = self.0;
        let mut lines = process_lines(app, inner.width, inner.height);
        let Some(h) = &app.host else {
            lines.push(Line::from(Span::styled("sampling…", theme::HINT)));
            Paragraph::new(lines).render(inner, buf);
            return;
        };
        let pct = |v: Option<f64>| opt(v, |v| format!("{v:.1} %"));
        let rate = |v: Option<f64>| opt(v, |v| format!("{v:.0}/s"));
        let of =
            |used: u64, total: u64| format!("{} of {}", format_bytes(used), format_bytes(total));
        let w = inner.width;
        lines.extend(flow(
            vec![
                fig(
                    "load",
                    format!("{:.2} {:.2} {:.2}", h.load[0], h.load[1], h.load[2]),
                ),
                fig("steal", pct(h.steal_pct)),
            ],
            w,
        ));
        lines.extend(flow(
            vec![fig("MemAvailable", of(h.mem_available, h.mem_total))],
            w,
        ));
        lines.extend(flow(
            vec![
                fig("swap", of(h.swap_used, h.swap_total)),
                fig("in", rate(h.swap_in_per_s)),
                fig("out", rate(h.swap_out_per_s)),
            ],
            w,
        ));
        lines.extend(flow(
            vec![
                fig("pressure cpu", pct(h.cpu_some_avg10)),
                fig("mem", pct(h.mem_some_avg10)),
            ],
            w,
        ));
        lines.push(Line::from(fig(
            "other processes",
            format!("{} of a CPU", pct(h.others_cpu_pct)),
        )));
        Paragraph::new(lines).render(inner, buf);
    }
}

/// The suspects of the cell in view while it is contended, else the busiest processes: at
/// most half the panel's rows (at least one).
fn process_lines(app: &App, width: u16, rows: u16) -> Vec<Line<'static>> {
    let room = (rows as usize / 2).max(1);
    let cell = app.target();
    let w = width as usize;
    if let Some(ep) = app.open_episode(cell) {
        let named: Vec<_> = ep.suspects.iter().filter(|s| s.score > 0.0).collect();
        if named.is_empty() {
            let why = if app.suspects.has_evidence(cell) {
                "suspects: no process used more CPU than before"
            } else {
                "suspects: waiting for a process sample"
            };
            return vec![Line::from(Span::styled(why, theme::SUSPECT))];
        }
        let basis = narrative::basis(&ep.suspects);
        let mut lines: Vec<Line<'static>> = Vec::new();
        for (i, s) in named.iter().enumerate() {
            // Who, on a line of its own (`suspect` before the first when it fits), then the
            // evidence as far as there is room.
            let who = narrative::who(s);
            let mut head = wrap(
                &format!("{} {who}", if i == 0 { "suspect" } else { "and" }),
                w,
            );
            if head.len() > 1 {
                head = wrap(&who, w);
            }
            for l in head {
                if lines.len() >= room {
                    return lines;
                }
                let style = if i == 0 { theme::SUSPECT } else { theme::VALUE };
                lines.push(Line::from(Span::styled(l, style)));
            }
            let evidence = format!("{} ({basis})", narrative::evidence(s));
            for l in wrap(&evidence, w) {
                if lines.len() >= room {
                    return lines;
                }
                lines.push(Line::from(Span::styled(l, theme::VALUE)));
            }
        }
        return lines;
    }
    let busiest = app.busiest();
    if busiest.is_empty() {
        return vec![Line::from(vec![
            Span::styled("busiest ", theme::LABEL),
            Span::styled("-", theme::VALUE),
        ])];
    }
    // With the users where they fit, else without.
    let items = |users: bool| -> Vec<String> {
        busiest
            .iter()
            .take(3)
            .enumerate()
            .map(|(i, p)| {
                let user = match &p.user {
                    Some(u) if users => format!(" ({u})"),
                    _ => String::new(),
                };
                let name = if p.stream_top {
                    "another stream-top".to_string()
                } else {
                    p.comm.clone()
                };
                let label = if i == 0 { "busiest " } else { "" };
                format!("{label}PID {} {name}{user} {:.0} %", p.pid, p.cpu_pct)
            })
            .collect()
    };
    let mut lines = pack(&items(true), "   ", w);
    if lines.len() > room {
        lines = pack(&items(false), "   ", w);
    }
    lines
        .into_iter()
        .take(room)
        .map(|l| match l.strip_prefix("busiest ") {
            Some(rest) => Line::from(vec![
                Span::styled("busiest ", theme::LABEL),
                Span::styled(rest.to_string(), theme::VALUE),
            ]),
            None => Line::from(Span::styled(l, theme::VALUE)),
        })
        .collect()
}
