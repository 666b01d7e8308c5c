//! The loaded-latency chart: the chase's latency (ns, y) against the bandwidth the load
//! threads pushed (GB/s, x), linear axes from 0 (the curve's shape near the knee is what is
//! read, and its points are within one order of magnitude), the idle latency and 2 × idle
//! dashed, the knee ringed and named. The vendor figure, where known, is a dashed vertical
//! line: how far the load is from the machine's peak.

use super::axes::{font, house_style};
use super::canvas::{Drawn, HEIGHT, LEGEND, WIDTH, document, err, palette};
use super::frame::{LegendEntry, Sample, finish, frame};
use crate::show::report::loaded::{delay_text, idle_point, knee_line};
use crate::show::report::model::{LoadedLatencyPoint, Snapshot};
use crate::show::report::text::gbs_plain;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The chart of a loaded-latency snapshot.
pub fn loaded_chart(s: &Snapshot) -> String {
    document(|out| draw_loaded(s, out))
}

fn draw_loaded(s: &Snapshot, out: &mut String) -> Drawn {
    let points = &s.loaded_latency;
    let idle_ns = idle_point(points).map(|p| p.latency_ns);
    // The curve in order of bandwidth, the idle reference at 0 GB/s included.
    let mut curve: Vec<(f64, f64)> = points.iter().map(|p| (p.load_gbs, p.latency_ns)).collect();
    curve.sort_by(|a, b| a.0.total_cmp(&b.0));
    let x_max = curve
        .iter()
        .map(|p| p.0)
        .chain(s.vendor_gbs())
        .fold(1.0f64, f64::max)
        * 1.08;
    let y_max = curve
        .iter()
        .map(|p| p.1)
        .chain(idle_ns.map(|i| 2.0 * i))
        .fold(1.0f64, f64::max)
        * 1.12;

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let notes = vec![(knee_line(points), palette::MUTED)];
    let (body, foot) = frame(&root, s, notes.len(), false)?;
    let (plot, legend) = body.split_horizontally(WIDTH - LEGEND);
    let mut chart = ChartBuilder::on(&plot)
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("load bandwidth, GB/s (decimal, all load threads)")
        .y_desc("latency, ns per load (median)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"));
    house_style(&mut mesh, 14).draw().map_err(err)?;

    let mut entries = draw_references(&mut chart, idle_ns, s.vendor_gbs(), (x_max, y_max))?;
    let colour = palette::DRAM;
    chart
        .draw_series(LineSeries::new(
            curve.iter().copied(),
            colour.stroke_width(3),
        ))
        .map_err(err)?;
    chart
        .draw_series(curve.iter().map(|&p| Circle::new(p, 5, colour.filled())))
        .map_err(err)?;
    entries.push(LegendEntry {
        label: "latency against load".into(),
        colour,
        sample: Sample::Line(0),
    });
    if let Some(k) = points.iter().find(|p| p.knee) {
        draw_knee(&mut chart, k)?;
    }
    finish(s, &root, &legend, &foot, entries, &notes)
}

/// The chart's plot: load bandwidth against latency, both linear.
type LinearChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The lines the curve is read against: the idle latency and twice it (dashed, in the legend),
/// and the vendor's figure (dashed, labelled); the legend's entries.
fn draw_references(
    chart: &mut LinearChart<'_, '_>,
    idle_ns: Option<f64>,
    vendor: Option<f64>,
    (x_max, y_max): (f64, f64),
) -> Drawn<Vec<LegendEntry>> {
    let mut entries = Vec::new();
    if let Some(idle) = idle_ns {
        for (y, colour, label) in [
            (idle, palette::L2, format!("idle {idle:.1} ns")),
            (
                2.0 * idle,
                palette::L3,
                format!("2 × idle {:.1} ns", 2.0 * idle),
            ),
        ] {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, y), (x_max, y)],
                    10,
                    6,
                    colour.stroke_width(2),
                ))
                .map_err(err)?;
            entries.push(LegendEntry {
                label,
                colour,
                sample: Sample::Dashed,
            });
        }
    }
    if let Some(v) = vendor {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(v, 0.0), (v, y_max)],
                10,
                6,
                palette::VENDOR.stroke_width(2),
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((v, y_max))
                    + Text::new(
                        format!("vendor figure {}", gbs_plain(v)),
                        (-6, 6),
                        font(13, palette::VENDOR).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))
            .map_err(err)?;
    }
    Ok(entries)
}

/// The knee circled and labelled with its bandwidth, latency and delay.
fn draw_knee(chart: &mut LinearChart<'_, '_>, k: &LoadedLatencyPoint) -> Drawn {
    let at = (k.load_gbs, k.latency_ns);
    chart
        .draw_series(std::iter::once(Circle::new(
            at,
            11,
            palette::TEXT.stroke_width(2),
        )))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(
            EmptyElement::at(at)
                + Text::new(
                    format!(
                        "knee: {:.1} GB/s, {:.0} ns (delay {})",
                        k.load_gbs,
                        k.latency_ns,
                        delay_text(k.delay_ns)
                    ),
                    (-14, -14),
                    font(14, palette::TEXT).pos(Pos::new(HPos::Right, VPos::Bottom)),
                ),
        ))
        .map_err(err)?;
    Ok(())
}
