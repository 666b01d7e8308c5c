//! The latency chart of `--measure latency`, as lmbench's `lat_mem_rd` draws it: ns per load
//! against the chase's buffer size, both axes log-scaled, on huge pages (solid) and on 4 KiB
//! pages (where measured), each cache level dashed where the buffer fills it, the cliffs named
//! under the plot.

use super::axes::{draw_markers, font, house_style, log_ticks, thin, tick_label};
use super::canvas::{Drawn, FOOT_CLIFFS, HEIGHT, LEGEND, WIDTH, document, err, palette};
use super::frame::{LegendEntry, Sample, finish, frame};
use crate::base::units::format_bytes;
use crate::show::report::latency::{LatencyPoint, latency_cliffs, latency_edges};
use crate::show::report::model::Snapshot;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// ns per load against buffer bytes, log-log.
pub(super) fn latency_chart(s: &Snapshot) -> String {
    document(|out| draw_latency(s, out))
}

/// The chart's points: the cells outside the matrix (every cell when there are only pairs),
/// smallest buffer first.
fn points(s: &Snapshot) -> Vec<LatencyPoint> {
    let outside: Vec<_> = s.latency.iter().filter(|c| c.mem_node.is_none()).collect();
    let cells = if outside.is_empty() {
        s.latency.iter().collect()
    } else {
        outside
    };
    let mut pts: Vec<LatencyPoint> = cells
        .into_iter()
        .map(|c| LatencyPoint {
            bytes: c.bytes,
            ns: c.median_ns,
            small_pages_ns: c.small_pages_ns,
        })
        .collect();
    pts.sort_by_key(|p| p.bytes);
    pts
}

fn draw_latency(s: &Snapshot, out: &mut String) -> Drawn {
    let pts = points(s);
    let (x_lo, x_hi) = pts
        .iter()
        .map(|p| p.bytes as f64)
        .fold(None, |r: Option<(f64, f64)>, x| match r {
            None => Some((x, x)),
            Some((a, b)) => Some((a.min(x), b.max(x))),
        })
        .unwrap_or((4096.0, (1u64 << 30) as f64));
    let (x_lo, x_hi) = (x_lo / 1.5, x_hi * 1.5);
    let x_ticks: Vec<f64> = (0..64)
        .map(|p| (1u64 << p) as f64)
        .filter(|&b| b >= x_lo && b <= x_hi)
        .collect();
    let x_ticks = thin(x_ticks, 9);
    let values = pts
        .iter()
        .flat_map(|p| std::iter::once(p.ns).chain(p.small_pages_ns));
    let (lo, hi, ticks) = log_ticks(values);

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let cliffs = latency_cliffs(s);
    let mut notes: Vec<(String, RGBColor)> = cliffs
        .iter()
        .take(FOOT_CLIFFS)
        .map(|c| (format!("Cliff: {}", c.line()), palette::TEXT))
        .collect();
    if cliffs.len() > FOOT_CLIFFS {
        notes.push((
            format!(
                "… and {} more cliffs (the Markdown lists them all)",
                cliffs.len() - FOOT_CLIFFS
            ),
            palette::MUTED,
        ));
    }
    notes.push((
        "Prefetchers on (no MSR changed); each chain validated after its runs.".to_string(),
        palette::MUTED,
    ));
    let (body, foot) = frame(&root, s, notes.len(), false)?;
    let (plot, legend) = body.split_horizontally(WIDTH - LEGEND);
    let mut chart = ChartBuilder::on(&plot)
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (x_lo..x_hi).log_scale().with_key_points(x_ticks.clone()),
            (lo..hi).log_scale().with_key_points(ticks.clone()),
        )
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("bytes of the chased buffer (log scale)")
        .y_desc("median ns per load (log scale)")
        .x_labels(x_ticks.len())
        .y_labels(ticks.len())
        .x_label_formatter(&|x| format_bytes(x.round() as u64))
        .y_label_formatter(&|y| tick_label(*y));
    house_style(&mut mesh, 13).draw().map_err(err)?;
    for edge in latency_edges(s) {
        let x = edge.bytes as f64;
        if !(x_lo..x_hi).contains(&x) {
            continue;
        }
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x, lo), (x, hi)],
                4,
                4,
                palette::MUTED.stroke_width(1),
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, hi))
                    + Text::new(
                        format!("{} ({})", edge.name(), format_bytes(edge.capacity)),
                        (-4, 4),
                        font(12, palette::MUTED).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))
            .map_err(err)?;
    }
    let mut entries = Vec::new();
    let huge: Vec<(f64, f64)> = pts.iter().map(|p| (p.bytes as f64, p.ns)).collect();
    let small: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((p.bytes as f64, p.small_pages_ns?)))
        .collect();
    for (i, (line, label, colour)) in [
        (huge, "huge pages", palette::L1),
        (small, "4 KiB pages", palette::DRAM),
    ]
    .into_iter()
    .enumerate()
    {
        if line.is_empty() {
            continue;
        }
        chart
            .draw_series(LineSeries::new(
                line.iter().copied(),
                colour.stroke_width(3),
            ))
            .map_err(err)?;
        draw_markers(&mut chart, &line, &[], i, colour)?;
        entries.push(LegendEntry {
            label: label.to_string(),
            colour,
            sample: Sample::Line(i),
        });
    }
    finish(s, &root, &legend, &foot, entries, &notes)
}
