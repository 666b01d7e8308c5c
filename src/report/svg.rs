//! The SVG chart: median GB/s against thread count, one line per working set, the vendor figure
//! as a dashed horizontal line.
//!
//! plotters' SVG backend writes text as `<text>` elements and leaves the glyphs to whatever
//! shows the file; without its `ttf`/`ab_glyph` features it lays text out with a built-in
//! estimate, so no font files or fontconfig are needed where the chart is drawn.

use super::model::Snapshot;
use super::text::{cell_name, gbs_plain};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;

/// The chart as an SVG document.
pub fn to_svg(s: &Snapshot) -> String {
    let mut out = String::new();
    match draw(s, &mut out) {
        Ok(()) => out,
        // Drawing into a String has no I/O to fail; keep the writer total anyway.
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\">\
             <text x=\"20\" y=\"40\">cannot draw the chart: {}</text></svg>\n",
            e.replace('&', "&amp;").replace('<', "&lt;")
        ),
    }
}

/// A line per working set: (set index, legend label, points sorted by thread count).
type Series = (usize, String, Vec<(usize, f64)>);

fn draw(s: &Snapshot, out: &mut String) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let vendor = s.vendor_gbs();

    let mut lines: Vec<Series> = Vec::new();
    for c in s.cells.iter().filter(|c| !c.rerun) {
        match lines.iter_mut().find(|(set, _, _)| *set == c.set) {
            Some((_, _, pts)) => pts.push((c.threads, c.figures.median_gbs)),
            None => lines.push((
                c.set,
                c.set_label.clone(),
                vec![(c.threads, c.figures.median_gbs)],
            )),
        }
    }
    for (_, _, pts) in &mut lines {
        pts.sort_by_key(|p| p.0);
    }
    let reruns: Vec<_> = s.cells.iter().filter(|c| c.rerun).collect();

    let max_threads = s
        .cells
        .iter()
        .map(|c| c.threads)
        .chain(s.grid.threads.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1);
    let top = s
        .cells
        .iter()
        .map(|c| c.figures.median_gbs)
        .chain(vendor)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let y_max = if top > 0.0 { top * 1.15 } else { 1.0 };
    let x_max = max_threads + 1;

    let model = s.info.topology.model.trim();
    let title = if model.is_empty() {
        format!("stream-top on {} — {} UTC", s.info.hostname, s.taken)
    } else {
        format!(
            "stream-top on {} — {model} — {} UTC",
            s.info.hostname, s.taken
        )
    };

    let title = if s.info.not_a_measurement.is_some() {
        format!("NOT A MEASUREMENT (--oversubscribe) — {title}")
    } else {
        title
    };
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0usize..x_max, 0f64..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc("median GB/s (decimal)")
        .x_labels(x_max.min(24))
        .x_label_formatter(&|x| x.to_string())
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(&e))?;

    for (i, (set, label, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(|e| err(&e))?;
        for r in reruns.iter().filter(|r| r.set == *set) {
            chart
                .draw_series(std::iter::once(Cross::new(
                    (r.threads, r.figures.median_gbs),
                    6,
                    color.stroke_width(2),
                )))
                .map_err(|e| err(&e))?
                .label(r.label.clone())
                .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
        }
    }

    if let Some(v) = vendor {
        let style = ShapeStyle::from(&BLACK).stroke_width(2);
        let label = format!("vendor figure {}", gbs_plain(v));
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0usize, v), (x_max, v)],
                10,
                6,
                style,
            ))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x_max, v))
                    + Text::new(
                        label,
                        (-8, -6),
                        ("sans-serif", 14)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Right, VPos::Bottom)),
                    ),
            ))
            .map_err(|e| err(&e))?;
    }

    if !lines.is_empty() || vendor.is_some() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    }
    // Cells that could not run have no point: say so in the chart's lower right corner.
    for (k, f) in s.failed.iter().rev().enumerate() {
        let text = format!("FAILED: {}: {}", cell_name(&f.label, f.threads), f.reason);
        root.draw(&Text::new(
            text,
            (WIDTH as i32 - 20, HEIGHT as i32 - 6 - 16 * k as i32),
            ("sans-serif", 13)
                .into_font()
                .color(&RED)
                .pos(Pos::new(HPos::Right, VPos::Bottom)),
        ))
        .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
