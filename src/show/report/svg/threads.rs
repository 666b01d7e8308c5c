//! The threads chart: median GB/s against the measured thread counts, a line per working set
//! in its level's colour.

use super::axes::{draw_markers, font, house_style, log_ticks, tick_label};
use super::canvas::{Drawn, HEIGHT, LEGEND, WIDTH, Whole, document, err, palette};
use super::frame::{LegendEntry, Sample, finish, foot_lines, frame};
use crate::show::report::lands::landing;
use crate::show::report::lines::{choice_kept, level_name, machine_topology, set_label};
use crate::show::report::model::{Snapshot, WorkingSet};
use crate::show::report::text::gbs_plain;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// GB/s against the measured thread counts, evenly spaced: a line per working set in its
/// level's colour, a cross for the rerun, the vendor figure dashed.
pub fn threads_chart(s: &Snapshot) -> String {
    document(|out| draw_threads(s, None, out))
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

/// The chart of `s`; as a panel of a chart of several ops (`whole`), on the axes of every op's
/// cells, so the panels share them.
pub(super) fn draw_threads(s: &Snapshot, whole: Whole, out: &mut String) -> Drawn {
    let axes = whole.unwrap_or(s);
    let mut threads: Vec<usize> = axes.cells.iter().map(|c| c.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    if threads.is_empty() {
        threads = s.grid.threads.clone();
    }
    // Thread count i sits at 2i + 1 on an axis of 0..2n: evenly spaced, half a step from
    // either end, whatever the counts are (1, 2, 4, 64).
    let position = |t: usize| 2 * threads.iter().position(|&x| x == t).unwrap_or(0) as i32 + 1;
    let series = threads_series(s);

    let medians = axes.cells.iter().map(|c| c.figures.median_gbs);
    let (lo, hi, ticks) = log_ticks(medians.chain(s.vendor_gbs()));

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let notes = foot_lines(s);
    let (body, foot) = frame(&root, s, notes.len(), whole.is_some())?;
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
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_desc("threads")
        .y_desc("median GB/s (decimal, log scale)")
        .x_labels(n)
        .y_labels(ticks.len())
        .x_label_formatter(&thread_label)
        .y_label_formatter(&|y| tick_label(*y));
    house_style(&mut mesh, 14).draw().map_err(err)?;

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
        draw_markers(&mut chart, &pts, &[], line.marker, colour)?;
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
