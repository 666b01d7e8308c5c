//! The latency chart of `--measure latency`, as lmbench's `lat_mem_rd` draws it: ns per load
//! against the chase's buffer size, both axes log-scaled, on huge pages (solid) and on 4 KiB
//! pages (where measured), each cache level dashed where the buffer fills it, the cliffs named
//! under the plot.

use super::axes::{bytes_axis, bytes_chart, draw_edge, draw_markers, log_ticks};
use super::canvas::{Drawn, HEIGHT, LEGEND, WIDTH, document, err, palette};
use super::frame::{LegendEntry, Sample, cliff_notes, finish, frame};
use crate::base::units::format_bytes;
use crate::show::report::latency::{LatencyPoint, latency_cliffs, latency_edges};
use crate::show::report::model::Snapshot;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

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
    let mut pts: Vec<LatencyPoint> = cells.into_iter().map(LatencyPoint::of).collect();
    pts.sort_by_key(|p| p.bytes);
    pts
}

fn draw_latency(s: &Snapshot, out: &mut String) -> Drawn {
    let pts = points(s);
    let x = bytes_axis(pts.iter().map(|p| p.bytes as f64));
    let values = pts
        .iter()
        .flat_map(|p| std::iter::once(p.ns).chain(p.small_pages_ns));
    let y = log_ticks(values);

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let cliffs = latency_cliffs(s).iter().map(|c| c.line()).collect();
    let mut notes = cliff_notes(cliffs, "the Markdown lists them all");
    notes.push((
        "Prefetchers on (no MSR changed); each chain validated after its runs.".to_string(),
        palette::MUTED,
    ));
    let (body, foot) = frame(&root, s, notes.len(), false)?;
    let (plot, legend) = body.split_horizontally(WIDTH - LEGEND);
    let mut chart = bytes_chart(
        &plot,
        &x,
        &y,
        "bytes of the chased buffer (log scale)",
        "median ns per load (log scale)",
    )?;
    let ((x_lo, x_hi, _), (lo, hi, _)) = (x, y);
    for edge in latency_edges(s) {
        let at = edge.bytes as f64;
        if (x_lo..x_hi).contains(&at) {
            let text = format!("{} ({})", edge.name(), format_bytes(edge.capacity));
            draw_edge(&mut chart, (at, lo, hi), text, (-4, 4), HPos::Right)?;
        }
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
