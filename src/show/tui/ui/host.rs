//! The host beside the measurement. First the processes: while the cell in view is contended,
//! its suspects, one a line, with the evidence against them; otherwise the busiest processes
//! with their PIDs and users. Then load, steal, memory, swap, pressure, the throttling of a
//! cgroup's CPU quota, and the CPU all other processes used.

use super::text::{fig, flow, opt, pack, percent, wrap};
use super::theme;
use crate::base::units::format_bytes;
use crate::judge::watch::narrative;
use crate::machine::cgroup::quota_text;
use crate::machine::host::HostSource;
use crate::machine::procs::OUR_COMM;
use crate::show::tui::app::App;
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
        let Some(h) = &app.live.host else {
            lines.push(Line::from(Span::styled("sampling…", theme::HINT)));
            Paragraph::new(lines).render(inner, buf);
            return;
        };
        let pct = percent;
        let rate = |v: Option<f64>| opt(v, |v| format!("{v:.0}/s"));
        let of =
            |used: u64, total: u64| format!("{} of {}", format_bytes(used), format_bytes(total));
        let w = inner.width;
        let mac = h.source == HostSource::Mac;
        // What macOS does not have is a dash with its reason, never 0.
        let steal = if mac {
            "- (none on macOS)".to_string()
        } else {
            pct(h.steal_pct)
        };
        lines.extend(flow(
            vec![
                fig(
                    "load",
                    format!("{:.2} {:.2} {:.2}", h.load[0], h.load[1], h.load[2]),
                ),
                fig("steal", steal),
            ],
            w,
        ));
        let available = if mac { "available" } else { "MemAvailable" };
        lines.extend(flow(
            vec![fig(available, of(h.mem_available, h.mem_total))],
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
            if mac {
                vec![
                    fig(
                        "memory pressure",
                        h.mem_pressure.map_or("-", |p| p.name()).to_string(),
                    ),
                    fig("PSI", "- (Linux only)".to_string()),
                ]
            } else {
                vec![
                    fig("pressure cpu", pct(h.cpu_some_avg10)),
                    fig("mem", pct(h.mem_some_avg10)),
                ]
            },
            w,
        ));
        if let Some(q) = h.cpu_quota {
            lines.extend(flow(
                vec![
                    fig("quota", quota_text(q)),
                    fig(
                        "throttled",
                        opt(h.throttled_ratio, |r| format!("{:.0} %", r * 100.0)),
                    ),
                ],
                w,
            ));
        }
        let mut others = format!("{} of a CPU", pct(h.others_cpu_pct));
        if h.unreadable_processes > 0 {
            others.push_str(&format!(" ({} unreadable)", h.unreadable_processes));
        }
        lines.push(Line::from(fig("other processes", others)));
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
            let why = if app.narration.suspects.has_evidence(cell) {
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
    let busiest = busiest(app);
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
            .enumerate()
            .map(|(i, p)| {
                let user = match p.user {
                    Some(u) if users => format!(" ({u})"),
                    _ => String::new(),
                };
                let name = if p.stream_top {
                    "another stream-top"
                } else {
                    p.comm
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

/// A busy process as the panel names it.
struct Busy<'a> {
    pid: u32,
    comm: &'a str,
    user: Option<&'a str>,
    cpu_pct: f64,
    stream_top: bool,
}

/// The three busiest other processes: from the process sample, or on macOS (no /proc to
/// sample) from the host sample's process table, which knows no users.
fn busiest(app: &App) -> Vec<Busy<'_>> {
    let sampled = app.busiest();
    if !sampled.is_empty() {
        return sampled
            .iter()
            .take(3)
            .map(|p| Busy {
                pid: p.pid,
                comm: &p.comm,
                user: p.user.as_deref(),
                cpu_pct: p.cpu_pct,
                stream_top: p.stream_top,
            })
            .collect();
    }
    app.live
        .host
        .iter()
        .filter(|h| h.source == HostSource::Mac)
        .flat_map(|h| h.top_others.iter().take(3))
        .map(|p| Busy {
            pid: p.pid,
            comm: &p.comm,
            user: None,
            cpu_pct: p.cpu_pct,
            stream_top: p.comm == OUR_COMM,
        })
        .collect()
}
