//! The size chart of a size sweep: GB/s against bytes per array, a line per thread count,
//! each cache level's edge dashed and the cliffs named under the plot. A noisy cell's point is
//! hollow, and the notes say which and why.

use super::axes::{BytesChart, bytes_axis, bytes_chart, draw_edge, draw_markers, log_ticks};
use super::canvas::{Drawn, HEIGHT, LEGEND, WIDTH, Whole, document, err, palette};
use super::frame::{LegendEntry, Sample, cliff_notes, finish, foot_lines, frame};
use crate::base::units::format_bytes;
use crate::show::report::cliffs::cliff_line;
use crate::show::report::model::{CellSnapshot, Snapshot};
use crate::show::report::sweep::{CacheEdge, Curve, SizeKind, cache_edges, curves};
use crate::show::report::text::threads_phrase;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

/// GB/s against bytes per array, both on log axes: one line per thread count over the sets of
/// `kind` (explicit sizes and levels alike), each cache level dashed where three arrays fill it
/// (per thread for a per-thread sweep), and the cliffs found named under the plot.
pub fn size_chart(s: &Snapshot, kind: SizeKind) -> String {
    document(|out| draw_sizes(s, kind, None, out))
}

/// The chart of `s`; as a panel of a chart of several ops (`whole`), its GB/s axis spans every
/// op's cells, so the panels share it (their sizes are the grid's, the same for every op).
pub(super) fn draw_sizes(s: &Snapshot, kind: SizeKind, whole: Whole, out: &mut String) -> Drawn {
    let lines = curves(s, kind);
    let x = bytes_axis(
        lines
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.bytes as f64)),
    );
    let medians: Vec<f64> = match whole {
        Some(w) => w.cells.iter().map(|c| c.figures.median_gbs).collect(),
        None => lines
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.gbs))
            .collect(),
    };
    let y = log_ticks(medians.into_iter().chain(s.vendor_gbs()));

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let cliffs = s.cliffs.iter().map(cliff_line).collect();
    let mut notes = cliff_notes(cliffs, "the Markdown and JSON list them all");
    notes.extend(hollow_note(s, &lines, kind));
    notes.extend(foot_lines(s));
    let (body, foot) = frame(&root, s, notes.len(), whole.is_some())?;
    let (plot, legend) = body.split_horizontally(WIDTH - LEGEND);
    let x_desc = match kind {
        SizeKind::PerThread => "bytes per array per thread (log scale)",
        SizeKind::Split => "bytes per array, split across the threads (log scale)",
    };
    let mut chart = bytes_chart(&plot, &x, &y, x_desc, "median GB/s (decimal, log scale)")?;
    let ((x_lo, x_hi, _), (lo, hi, _)) = (x, y);
    draw_cache_edges(&mut chart, s, kind, &lines, (x_lo, x_hi), (lo, hi))?;
    if let Some(v) = s.vendor_gbs() {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x_lo, v), (x_hi, v)],
                10,
                6,
                palette::VENDOR.stroke_width(2),
            ))
            .map_err(err)?;
    }
    let entries = draw_curves(&mut chart, s, &lines)?;
    finish(s, &root, &legend, &foot, entries, &notes)
}

/// Where three arrays fill each cache level, for each curve's threads and CPUs, dashed; an
/// edge that differs between thread counts says which count it is for.
fn draw_cache_edges(
    chart: &mut BytesChart<'_, '_>,
    s: &Snapshot,
    kind: SizeKind,
    lines: &[Curve],
    (x_lo, x_hi): (f64, f64),
    (lo, hi): (f64, f64),
) -> Drawn {
    let mut edges: Vec<(CacheEdge, Vec<usize>)> = Vec::new();
    for curve in lines {
        for e in cache_edges(&s.info.topology, kind, curve.threads, &curve.cpus) {
            match edges.iter_mut().find(|(k, _)| k.bytes == e.bytes) {
                Some((_, threads)) => threads.push(curve.threads),
                None => edges.push((e, vec![curve.threads])),
            }
        }
    }
    for (k, (edge, threads)) in edges.iter().enumerate() {
        let x = edge.bytes as f64;
        if !(x_lo..x_hi).contains(&x) {
            continue;
        }
        let mut text = format!("{} full ({})", edge.name(), format_bytes(edge.capacity));
        if threads.len() < lines.len() {
            let counts: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
            text.push_str(&format!(" at {} thr", counts.join(", ")));
        }
        // Labels of edges that share a level step down, so they do not overprint; near the
        // right edge a label goes left of its line, clear of the legend.
        let row = edges[..k]
            .iter()
            .filter(|(e, _)| e.level == edge.level)
            .count() as i32;
        let near_right = (x / x_lo).ln() / (x_hi / x_lo).ln() > 0.85;
        let (dx, side) = if near_right {
            (-4, HPos::Right)
        } else {
            (4, HPos::Left)
        };
        draw_edge(chart, (x, lo, hi), text, (dx, 4 + 15 * row), side)?;
    }
    Ok(())
}

/// A line per thread count, its noisy points hollow; the legend's entries.
fn draw_curves(
    chart: &mut BytesChart<'_, '_>,
    s: &Snapshot,
    lines: &[Curve],
) -> Drawn<Vec<LegendEntry>> {
    let mut entries = Vec::new();
    for (i, curve) in lines.iter().enumerate() {
        let colour = palette::THREADS[i % palette::THREADS.len()];
        let pts: Vec<(f64, f64)> = curve
            .points
            .iter()
            .map(|p| (p.bytes as f64, p.gbs))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(3)))
            .map_err(err)?;
        let hollow: Vec<bool> = curve
            .points
            .iter()
            .map(|p| point_cell(s, curve, p.set).is_some_and(|c| !c.figures.noisy.is_empty()))
            .collect();
        draw_markers(chart, &pts, &hollow, 0, colour)?;
        entries.push(LegendEntry {
            label: threads_phrase(curve.threads),
            colour,
            sample: Sample::Line(0),
        });
    }
    Ok(entries)
}

/// The cell a curve's point at set `set` is the median of (the rerun row is not on a curve).
fn point_cell<'a>(s: &'a Snapshot, curve: &Curve, set: usize) -> Option<&'a CellSnapshot> {
    s.cells
        .iter()
        .find(|c| !c.rerun && c.set == set && c.threads == curve.threads)
}

/// Noisy points named, at most this many, in the note under the plot.
const NOISY_NAMED: usize = 3;

/// The note on hollow markers: "Hollow markers: 15 of 25 points noisy, their medians less
/// sure: 22.6 KiB × 1 thread (cv 26.4 % over 5 %); …; and 12 more (the table says why for
/// each)". None when every point is quiet.
fn hollow_note(s: &Snapshot, lines: &[Curve], kind: SizeKind) -> Option<(String, RGBColor)> {
    let per = match kind {
        SizeKind::PerThread => "/thread",
        SizeKind::Split => "",
    };
    let all: usize = lines.iter().map(|c| c.points.len()).sum();
    let noisy: Vec<String> = lines
        .iter()
        .flat_map(|curve| {
            curve.points.iter().filter_map(move |p| {
                let c = point_cell(s, curve, p.set)?;
                let why = c.figures.noisy.first()?;
                Some(format!(
                    "{}{per} × {} ({why})",
                    format_bytes(p.bytes),
                    threads_phrase(curve.threads)
                ))
            })
        })
        .collect();
    if noisy.is_empty() {
        return None;
    }
    let mut text = format!(
        "Hollow markers: {} of {all} points noisy, their medians less sure: {}",
        noisy.len(),
        noisy[..noisy.len().min(NOISY_NAMED)].join("; ")
    );
    if noisy.len() > NOISY_NAMED {
        text.push_str(&format!(
            "; and {} more (the table says why for each)",
            noisy.len() - NOISY_NAMED
        ));
    }
    Some((text, palette::MUTED))
}
