//! The SVG chart: median GB/s against the measured thread counts, one line per working set in a
//! fixed colour per level, on a log-scaled GB/s axis (L1 and DRAM differ by two orders of
//! magnitude: on a linear axis the DRAM line lies flat on the floor), with the vendor figure as
//! a dashed line. A snapshot that sweeps many sizes of one kind is drawn as GB/s against size
//! instead (`size_chart`, one line per thread count, both axes log-scaled, each cache level
//! dashed where three arrays fill it, and the cliffs found named under the plot).
//!
//! The title says what the chart is of: host, CPU, kernel, stores, pinning and when. The
//! background is opaque white, so the chart reads the same on a light or a dark page, and the
//! colours are the Okabe–Ito palette, told apart with red–green colour blindness.
//!
//! plotters' SVG backend writes text as `<text>` elements and leaves the glyphs to whatever
//! shows the file; without its `ttf`/`ab_glyph` features it lays text out with a built-in
//! estimate, so no font files or fontconfig are needed where the chart is drawn.

use super::cliffs::cliff_line;
use super::lands::landing;
use super::lines::choice_kept;
use super::lines::{isa_name, level_name, machine_topology, set_label, stores_name};
use super::model::{Level, Snapshot, WorkingSet};
use super::sweep::{CacheEdge, SizeKind, cache_edges, curves, size_sweep};
use super::text::{cell_name, gbs_plain, threads_phrase};
use crate::base::time::display;
use crate::base::units::format_bytes;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;
/// The title's two lines.
const HEADER: u32 = 64;
/// The legend, right of the plot.
const LEGEND: u32 = 230;
/// One line of notes under the plot.
const FOOT_LINE: u32 = 16;
/// The most cliffs named under a size chart (the Markdown and the JSON have them all).
const FOOT_CLIFFS: usize = 6;

/// Every colour of the chart. The levels keep their colour in every chart, whatever order
/// the sets ran in: l1 blue, l2 bluish green, l3 orange, dram vermillion, explicit sizes
/// reddish purple (Okabe & Ito, "Color Universal Design").
pub mod palette {
    use super::Level;
    use plotters::style::RGBColor;

    pub const L1: RGBColor = RGBColor(0x00, 0x72, 0xB2);
    pub const L2: RGBColor = RGBColor(0x00, 0x9E, 0x73);
    pub const L3: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
    pub const DRAM: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
    pub const EXPLICIT: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
    /// Lines of a size chart, one per thread count, in this order.
    pub const THREADS: [RGBColor; 6] = [L1, DRAM, L2, EXPLICIT, L3, RGBColor(0x56, 0xB4, 0xE9)];
    pub const BACKGROUND: RGBColor = RGBColor(0xFF, 0xFF, 0xFF);
    pub const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
    pub const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
    pub const GRID: RGBColor = RGBColor(0xE0, 0xE0, 0xE0);
    pub const VENDOR: RGBColor = RGBColor(0x44, 0x44, 0x44);
    pub const FAILED: RGBColor = RGBColor(0xB0, 0x00, 0x20);

    /// A working set's colour: its level's, or the one of explicit sizes.
    pub fn of_level(level: Option<Level>) -> RGBColor {
        match level {
            Some(Level::L1) => L1,
            Some(Level::L2) => L2,
            Some(Level::L3) => L3,
            Some(Level::Dram) => DRAM,
            None => EXPLICIT,
        }
    }
}

/// The chart of a snapshot: GB/s against size for a size sweep (`size_sweep`), against
/// threads otherwise.
pub fn to_svg(s: &Snapshot) -> String {
    match size_sweep(s) {
        Some(kind) => size_chart(s, kind),
        None => threads_chart(s),
    }
}

/// A chart's document, or one that says why it could not be drawn.
fn document(draw: impl FnOnce(&mut String) -> Result<(), String>) -> String {
    let mut out = String::new();
    match draw(&mut out) {
        Ok(()) => out,
        // Drawing into a String has no I/O to fail; keep the writer total anyway.
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\">\
             <text x=\"20\" y=\"40\">cannot draw the chart: {}</text></svg>\n",
            e.replace('&', "&amp;").replace('<', "&lt;")
        ),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// GB/s against the measured thread counts, evenly spaced: a line per working set in its
/// level's colour, a cross for the rerun, the vendor figure dashed.
pub fn threads_chart(s: &Snapshot) -> String {
    document(|out| draw_threads(s, out))
}

/// A line of the threads chart.
struct Series<'a> {
    set: &'a WorkingSet,
    label: String,
    points: Vec<(usize, f64)>,
    /// The rerun's thread count and median, when it ran.
    rerun: Option<(usize, f64)>,
    /// Among explicit sizes, which one this is: they share a colour, so the marker differs.
    marker: usize,
}

fn draw_threads(s: &Snapshot, out: &mut String) -> Result<(), String> {
    let mut threads: Vec<usize> = s.cells.iter().map(|c| c.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    if threads.is_empty() {
        threads = s.grid.threads.clone();
    }
    // Thread count i sits at 2i + 1 on an axis of 0..2n: evenly spaced, half a step from
    // either end, whatever the counts are (1, 2, 4, 64).
    let position = |t: usize| 2 * threads.iter().position(|&x| x == t).unwrap_or(0) as i32 + 1;
    let series = threads_series(s);

    let medians = s.cells.iter().map(|c| c.figures.median_gbs);
    let (lo, hi, ticks) = log_ticks(medians.chain(s.vendor_gbs()));

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let notes = foot_lines(s);
    let (body, foot) = frame(&root, s, notes.len())?;
    let (plot, legend) = body.split_horizontally(WIDTH - LEGEND);

    let n = threads.len().max(1);
    let x_keys: Vec<i32> = (0..n as i32).map(|i| 2 * i + 1).collect();
    let x_end = 2 * n as i32;
    let mut chart = ChartBuilder::on(&plot)
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (0..x_end).with_key_points(x_keys),
            (lo..hi).log_scale().with_key_points(ticks.clone()),
        )
        .map_err(err)?;
    let thread_label = |x: &i32| {
        threads
            .get((x / 2).max(0) as usize)
            .map(|t| t.to_string())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("threads")
        .y_desc("median GB/s (decimal, log scale)")
        .x_labels(n)
        .y_labels(ticks.len())
        .x_label_formatter(&thread_label)
        .y_label_formatter(&|y| tick_label(*y))
        .bold_line_style(palette::GRID)
        .light_line_style(palette::BACKGROUND)
        .axis_style(palette::MUTED)
        .label_style(("sans-serif", 14).into_font().color(&palette::TEXT))
        .axis_desc_style(("sans-serif", 15).into_font().color(&palette::TEXT))
        .draw()
        .map_err(err)?;

    if let Some(v) = s.vendor_gbs() {
        let style = palette::VENDOR.stroke_width(2);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0, v), (x_end, v)],
                10,
                6,
                style,
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x_end, v))
                    + Text::new(
                        format!("vendor figure {}", gbs_plain(v)),
                        (-8, -6),
                        font(13, palette::VENDOR).pos(Pos::new(HPos::Right, VPos::Bottom)),
                    ),
            ))
            .map_err(err)?;
    }

    for line in &series {
        let colour = palette::of_level(line.set.level);
        let pts: Vec<(i32, f64)> = line.points.iter().map(|&(t, v)| (position(t), v)).collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(3)))
            .map_err(err)?;
        draw_markers(&mut chart, &pts, line.marker, colour)?;
        if let Some((t, v)) = line.rerun {
            chart
                .draw_series(std::iter::once(Cross::new(
                    (position(t), v),
                    7,
                    colour.stroke_width(2),
                )))
                .map_err(err)?;
        }
    }

    let mut entries: Vec<LegendEntry> = Vec::new();
    for line in &series {
        let colour = palette::of_level(line.set.level);
        entries.push(LegendEntry {
            label: line.label.clone(),
            colour,
            sample: Sample::Line(line.marker),
        });
        if line.rerun.is_some() {
            entries.push(LegendEntry {
                label: format!("{}, run again last", short_label(line.set)),
                colour,
                sample: Sample::Cross,
            });
        }
    }
    finish(s, &root, &legend, &foot, entries, &notes)
}

/// The threads chart's lines: a working set per line, in the grid's order.
fn threads_series(s: &Snapshot) -> Vec<Series<'_>> {
    let mut out: Vec<Series<'_>> = Vec::new();
    let mut explicit = 0;
    for (index, set) in s.grid.sets.iter().enumerate() {
        let mut points: Vec<(usize, f64)> = s
            .cells
            .iter()
            .filter(|c| c.set == index && !c.rerun)
            .map(|c| (c.threads, c.figures.median_gbs))
            .collect();
        points.sort_by_key(|p| p.0);
        let rerun = s
            .cells
            .iter()
            .find(|c| c.set == index && c.rerun)
            .map(|c| (c.threads, c.figures.median_gbs));
        if points.is_empty() && rerun.is_none() {
            continue;
        }
        let marker = if set.level.is_none() {
            explicit += 1;
            explicit - 1
        } else {
            0
        };
        out.push(Series {
            set,
            label: legend_label(s, index, set),
            points,
            rerun,
            marker,
        });
    }
    out
}

/// The set's label as the legend shows it, with the loop and pages its working set ran where
/// they were chosen: `5.2 KiB/thread (l1) — avx2 ymm fma, huge pages`, `64 MB → dram`.
fn legend_label(s: &Snapshot, index: usize, set: &WorkingSet) -> String {
    let short = short_label(set);
    let label = match set.level {
        Some(_) => short,
        None => match landing(set.size, &machine_topology(&s.info.topology)) {
            Some(l) => format!("{short} → {}", level_name(l.level)),
            None => short,
        },
    };
    match s
        .cells
        .iter()
        .find(|c| c.set == index)
        .and_then(|c| c.choice.as_ref())
    {
        Some(ch) => format!("{label} — {}", choice_kept(ch)),
        None => label,
    }
}

fn short_label(set: &WorkingSet) -> String {
    set_label(set)
}

/// GB/s against bytes per array, both on log axes: one line per thread count over the sets of
/// `kind` (explicit sizes and levels alike), each cache level dashed where three arrays fill it
/// (per thread for a per-thread sweep), and the cliffs found named under the plot.
pub fn size_chart(s: &Snapshot, kind: SizeKind) -> String {
    document(|out| draw_sizes(s, kind, out))
}

fn draw_sizes(s: &Snapshot, kind: SizeKind, out: &mut String) -> Result<(), String> {
    let lines = curves(s, kind);
    let sizes = lines
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.bytes as f64));
    let (x_lo, x_hi) = sizes
        .clone()
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
    let medians = lines.iter().flat_map(|c| c.points.iter().map(|p| p.gbs));
    let (lo, hi, ticks) = log_ticks(medians.chain(s.vendor_gbs()));

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let mut notes: Vec<(String, RGBColor)> = s
        .cliffs
        .iter()
        .take(FOOT_CLIFFS)
        .map(|c| (format!("Cliff: {}", cliff_line(c)), palette::TEXT))
        .collect();
    if s.cliffs.len() > FOOT_CLIFFS {
        notes.push((
            format!(
                "… and {} more cliffs (the Markdown and JSON list them all)",
                s.cliffs.len() - FOOT_CLIFFS
            ),
            palette::MUTED,
        ));
    }
    notes.extend(foot_lines(s));
    let (body, foot) = frame(&root, s, notes.len())?;
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
    let x_desc = match kind {
        SizeKind::PerThread => "bytes per array per thread (log scale)",
        SizeKind::Split => "bytes per array, split across the threads (log scale)",
    };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("median GB/s (decimal, log scale)")
        .x_labels(x_ticks.len())
        .y_labels(ticks.len())
        .x_label_formatter(&|x| format_bytes(x.round() as u64))
        .y_label_formatter(&|y| tick_label(*y))
        .bold_line_style(palette::GRID)
        .light_line_style(palette::BACKGROUND)
        .axis_style(palette::MUTED)
        .label_style(("sans-serif", 13).into_font().color(&palette::TEXT))
        .axis_desc_style(("sans-serif", 15).into_font().color(&palette::TEXT))
        .draw()
        .map_err(err)?;

    // Where three arrays fill each cache level, for each curve's threads and CPUs; an edge
    // that differs between thread counts says which count it is for.
    let mut edges: Vec<(CacheEdge, Vec<usize>)> = Vec::new();
    for curve in &lines {
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
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x, lo), (x, hi)],
                4,
                4,
                palette::MUTED.stroke_width(1),
            ))
            .map_err(err)?;
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
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, hi))
                    + Text::new(
                        text,
                        (dx, 4 + 15 * row),
                        font(12, palette::MUTED).pos(Pos::new(side, VPos::Top)),
                    ),
            ))
            .map_err(err)?;
    }
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
        draw_markers(&mut chart, &pts, 0, colour)?;
        entries.push(LegendEntry {
            label: threads_phrase(curve.threads),
            colour,
            sample: Sample::Line(0),
        });
    }
    finish(s, &root, &legend, &foot, entries, &notes)
}

/// At most `most` ticks, every other one dropped until they fit.
fn thin(mut ticks: Vec<f64>, most: usize) -> Vec<f64> {
    while ticks.len() > most {
        ticks = ticks.into_iter().step_by(2).collect();
    }
    ticks
}

/// The range and ticks of a log GB/s axis for these values: from a tick below the least to a
/// tick above the most, ticks at 1, 2 and 5 times a power of ten; at powers of ten alone when
/// that gives more than eight, and at 1, 1.5, 2, 3, 5 and 7 times them when fewer than three.
fn log_ticks(values: impl Iterator<Item = f64>) -> (f64, f64, Vec<f64>) {
    let (min, max) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |r: Option<(f64, f64)>, v| match r {
            None => Some((v, v)),
            Some((a, b)) => Some((a.min(v), b.max(v))),
        })
        .unwrap_or((1.0, 100.0));
    let on = |mantissas: &[f64]| {
        let candidates: Vec<f64> = (-3..=7)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .collect();
        let lo = candidates
            .iter()
            .copied()
            .filter(|&t| t <= min / 1.1)
            .fold(min / 1.1, |_, t| t);
        let hi = candidates
            .iter()
            .copied()
            .find(|&t| t >= max * 1.1)
            .unwrap_or(max * 1.1);
        let ticks: Vec<f64> = candidates
            .into_iter()
            .filter(|&t| t >= lo && t <= hi)
            .collect();
        (lo, hi, ticks)
    };
    let usual = on(&[1.0, 2.0, 5.0]);
    if usual.2.len() > 8 {
        on(&[1.0])
    } else if usual.2.len() < 3 {
        on(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0])
    } else {
        usual
    }
}

/// `500`, `20`, `1.5`, `0.2`: a tick's value without trailing zeros.
fn tick_label(v: f64) -> String {
    if v >= 10.0 || (v - v.round()).abs() < 1e-9 {
        format!("{:.0}", v)
    } else {
        let text = format!("{v:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn font(size: u32, colour: RGBColor) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&colour)
}

/// Points' markers: explicit sizes share a colour, so the n-th one gets the n-th shape
/// (circle, triangle, square).
fn draw_markers<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pts: &[(X::ValueType, Y::ValueType)],
    n: usize,
    colour: RGBColor,
) -> Result<(), String>
where
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    let pts = pts.iter().cloned();
    match n % 3 {
        0 => chart.draw_series(pts.map(|p| Circle::new(p, 5, colour.filled()))),
        1 => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 7, colour.filled()))),
        _ => chart.draw_series(
            pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], colour.filled())),
        ),
    }
    .map_err(err)?;
    Ok(())
}

/// A part of the chart's canvas.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Title lines on top, `foot` lines of notes at the bottom: the body between is returned with
/// the footer area.
fn frame<'a>(root: &Area<'a>, s: &Snapshot, foot: usize) -> Result<(Area<'a>, Area<'a>), String> {
    let (head, rest) = root.split_vertically(HEADER);
    let info = &s.info;
    let model = info.topology.model.trim();
    let mut title = format!("stream-top on {}", info.hostname);
    if !model.is_empty() {
        title.push_str(&format!(" — {model}"));
    }
    if info.not_a_measurement.is_some() {
        title = format!("NOT A MEASUREMENT (--oversubscribe) — {title}");
    }
    let mut sub = format!(
        "{} triad, {} · pin {} · {}",
        isa_name(info.kernel.isa),
        stores_name(info.kernel.stores),
        pin_word(info.pin),
        display(&s.taken)
    );
    if let Some(name) = &info.name {
        sub.push_str(&format!(" · run {name}"));
    }
    head.draw(&Text::new(
        title,
        (20, 12),
        ("sans-serif", 20)
            .into_font()
            .style(FontStyle::Bold)
            .color(&palette::TEXT),
    ))
    .map_err(err)?;
    head.draw(&Text::new(sub, (20, 40), font(15, palette::MUTED)))
        .map_err(err)?;
    let lines = foot as u32;
    let body_height = HEIGHT - HEADER - FOOT_LINE * lines - if lines > 0 { 8 } else { 0 };
    Ok(rest.split_vertically(body_height))
}

fn pin_word(p: super::model::PinPolicy) -> &'static str {
    match p {
        super::model::PinPolicy::Spread => "spread",
        super::model::PinPolicy::Compact => "compact",
        super::model::PinPolicy::None => "none",
    }
}

/// The notes under the chart: settings that changed nothing here, how many cells are noisy,
/// then cells that could not run.
fn foot_lines(s: &Snapshot) -> Vec<(String, RGBColor)> {
    let notes = s.info.no_effect.iter().map(|n| {
        (
            format!("Note: {}.", n.text.trim_end_matches('.')),
            palette::MUTED,
        )
    });
    let noisy = s
        .cells
        .iter()
        .filter(|c| !c.figures.noisy.is_empty())
        .count();
    let noisy = (noisy > 0).then(|| {
        (
            format!(
                "Noisy: {noisy} of {} cells (cv, late or disturbed rounds, steal or throttling, \
                 more threads than CPUs): the table says why for each.",
                s.cells.len()
            ),
            palette::MUTED,
        )
    });
    let failed = s.table_rows().into_iter().filter_map(|r| match r {
        super::model::TableRow::Failed(f) => Some((
            format!("FAILED: {}: {}", cell_name(&f.label, f.threads), f.reason),
            palette::FAILED,
        )),
        super::model::TableRow::Cell(_) => None,
    });
    notes.chain(noisy).chain(failed).collect()
}

/// What every chart ends with: the vendor figure's entry in the legend where it is known, the
/// legend, the notes under the plot, and the document written out.
fn finish(
    s: &Snapshot,
    root: &Area<'_>,
    legend: &Area<'_>,
    foot: &Area<'_>,
    mut entries: Vec<LegendEntry>,
    notes: &[(String, RGBColor)],
) -> Result<(), String> {
    if let Some(v) = s.vendor_gbs() {
        entries.push(LegendEntry {
            label: format!("vendor figure {}", gbs_plain(v)),
            colour: palette::VENDOR,
            sample: Sample::Dashed,
        });
    }
    draw_legend(legend, &entries)?;
    draw_foot(foot, notes)?;
    root.present().map_err(err)
}

fn draw_foot(foot: &Area<'_>, lines: &[(String, RGBColor)]) -> Result<(), String> {
    for (k, (text, colour)) in lines.iter().enumerate() {
        foot.draw(&Text::new(
            text.as_str(),
            (20, 4 + (FOOT_LINE * k as u32) as i32),
            font(13, *colour),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// How a legend entry's sample is drawn.
enum Sample {
    /// A line with the n-th marker.
    Line(usize),
    Cross,
    Dashed,
}

struct LegendEntry {
    label: String,
    colour: RGBColor,
    sample: Sample,
}

/// The legend, in its own panel right of the plot: a sample and the label, which wraps after
/// `, ` when it is long.
fn draw_legend(area: &Area<'_>, entries: &[LegendEntry]) -> Result<(), String> {
    let mut y = 24;
    for e in entries {
        let (x0, x1) = (8, 36);
        match e.sample {
            Sample::Line(n) => {
                area.draw(&PathElement::new(
                    vec![(x0, y), (x1, y)],
                    e.colour.stroke_width(3),
                ))
                .map_err(err)?;
                let p = ((x0 + x1) / 2, y);
                match n % 3 {
                    0 => area.draw(&Circle::new(p, 5, e.colour.filled())),
                    1 => area.draw(&TriangleMarker::new(p, 7, e.colour.filled())),
                    _ => area.draw(&Rectangle::new(
                        [(p.0 - 4, p.1 - 4), (p.0 + 4, p.1 + 4)],
                        e.colour.filled(),
                    )),
                }
                .map_err(err)?;
            }
            Sample::Cross => {
                area.draw(&Cross::new(((x0 + x1) / 2, y), 6, e.colour.stroke_width(2)))
                    .map_err(err)?;
            }
            Sample::Dashed => {
                for k in 0..3 {
                    let a = x0 + k * 10;
                    area.draw(&PathElement::new(
                        vec![(a, y), (a + 6, y)],
                        e.colour.stroke_width(2),
                    ))
                    .map_err(err)?;
                }
            }
        }
        for (k, line) in wrap(&e.label, 26).iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (x1 + 8, y - 8 + 17 * k as i32),
                font(14, palette::TEXT),
            ))
            .map_err(err)?;
            if k > 0 {
                y += 17;
            }
        }
        y += 26;
    }
    Ok(())
}

/// A label cut after `, ` or a space into lines of about `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_inclusive(' ') {
        if !current.is_empty() && current.chars().count() + word.chars().count() > width {
            lines.push(current.trim_end().to_string());
            current.clear();
        }
        current.push_str(word);
    }
    if !current.trim().is_empty() {
        lines.push(current.trim_end().to_string());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_cover_the_values() {
        let (lo, hi, ticks) = log_ticks([27.8, 491.1].into_iter());
        assert_eq!((lo, hi), (20.0, 1000.0));
        assert_eq!(ticks, vec![20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]);
        let (_, _, wide) = log_ticks([0.5, 4000.0].into_iter());
        assert_eq!(wide, vec![0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]);
        let (_, _, narrow) = log_ticks([30.0, 32.0].into_iter());
        assert_eq!(narrow, vec![20.0, 30.0, 50.0]);
        assert_eq!(tick_label(1.5), "1.5");
        assert_eq!(tick_label(200.0), "200");
    }

    #[test]
    fn labels_wrap_at_spaces() {
        assert_eq!(
            wrap("64 MB, past L3 (48 MiB): dram, run again last", 26),
            vec!["64 MB, past L3 (48 MiB):", "dram, run again last"]
        );
        assert_eq!(wrap("l1", 26), vec!["l1"]);
    }
}
