//! The host beside the measurement: load, steal, memory, swap, pressure, the throttling of a
//! cgroup's CPU quota, and the processes that compete for the CPUs.

use super::text::{fig, flow, opt};
use super::theme;
use crate::machine::cgroup::quota_text;
use crate::machine::host::HostSource;
use crate::tui::app::App;
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
        let Some(h) = &self.0.host else {
            Paragraph::new(Span::styled("sampling…", theme::HINT)).render(inner, buf);
            return;
        };
        let pct = |v: Option<f64>| opt(v, |v| format!("{v:.1} %"));
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
        let mut lines = flow(
            vec![
                fig(
                    "load",
                    format!("{:.2} {:.2} {:.2}", h.load[0], h.load[1], h.load[2]),
                ),
                fig("steal", steal),
            ],
            w,
        );
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
        let mut top = vec![Span::styled("top ", theme::LABEL)];
        if h.top_others.is_empty() {
            top.push(Span::styled("-", theme::VALUE));
        }
        for (i, p) in h.top_others.iter().take(3).enumerate() {
            if i > 0 {
                top.push(Span::raw("  "));
            }
            top.push(Span::styled(
                format!("{} {:.0} %", p.comm, p.cpu_pct),
                theme::VALUE,
            ));
        }
        lines.push(Line::from(top));
        Paragraph::new(lines).render(inner, buf);
    }
}
