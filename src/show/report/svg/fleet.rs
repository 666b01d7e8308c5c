//! A fleet class's chart: a strip plot with a row per cell (op, working set, threads) and a
//! point per node at its figure over the cell's class median, so that cells of 20 and 400 GB/s
//! share one axis and a slow node stands out wherever it is slow. Each row shows the median
//! (1, a solid line through every row), the outlier threshold as the judgement applies it (the
//! stricter of the two rules, dashed, per row: a cell's MAD is its own) and the outliers in
//! another colour with their names beside them; the title names the class and both rules, and
//! the notes under the plot say why each outlier is slow.
//!
//! Text goes through plotters, which escapes it: a node's name is whatever its snapshot says.

use super::axes::{font, house_style};
use super::canvas::{Drawn, FOOT_LINE, HEADER, LEGEND, WIDTH, document, err, palette};
use super::frame::{Area, LegendEntry, Sample, draw_foot, draw_heading, draw_legend};
use crate::base::units::count;
use crate::judge::fleet::{CellJudgement, Class, Rules};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The height of one cell's row.
const ROW: u32 = 30;
/// What the plot needs besides its rows: the x axis, its description and the margins.
const AXIS: u32 = 46 + 28;
/// The least plot height: the legend's four entries fit beside it.
const MIN_PLOT: u32 = 200;
/// The room for the rows' labels (`triad 64 MiB/thread × 64` over `median 412.30 GB/s`).
const ROW_LABELS: u32 = 230;
/// The most outliers whose reasons are noted under the plot (the tables have them all).
const FOOT_OUTLIERS: usize = 6;
/// A node's point, and an outlier's.
const NODE_RADIUS: i32 = 4;
const OUTLIER_RADIUS: i32 = 6;

/// The chart of one judged class.
pub fn fleet_chart(class: &Class, rules: Rules) -> String {
    document(|out| draw_fleet(class, rules, out))
}

/// The strip plot: ratios across, rows (their centres as key points) up.
type Strip<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A point of the strip plot: x, y, the node's name and whether it is an outlier there.
type Point<'a> = (f64, f64, &'a str, bool);

fn draw_fleet(class: &Class, rules: Rules, out: &mut String) -> Drawn {
    let notes = why_notes(class);
    let rows = class.cells.len();
    let plot_height = (ROW * rows as u32 + AXIS).max(MIN_PLOT);
    let foot_height = FOOT_LINE * notes.len() as u32 + 8;
    let height = HEADER + plot_height + foot_height;
    let root = SVGBackend::with_string(out, (WIDTH, height)).into_drawing_area();
    root.fill(&palette::BACKGROUND).map_err(err)?;
    let (head, rest) = root.split_vertically(HEADER);
    draw_title(&head, class, rules)?;
    let (body, foot) = rest.split_vertically(plot_height);
    let (plot, legend) = body.split_horizontally(WIDTH - LEGEND);

    let (lo, hi) = x_range(class);
    let n = rows as f64;
    // Row k (from the top) is centred at n − k − 0.5.
    let centres: Vec<f64> = (0..rows).map(|k| n - k as f64 - 0.5).collect();
    let mut chart = ChartBuilder::on(&plot)
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(ROW_LABELS)
        .build_cartesian_2d(lo..hi, 0.0..n.max(1.0))
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("each node's figure ÷ its cell's class median")
        .x_labels(8)
        .y_labels(0)
        .disable_y_mesh()
        .x_label_formatter(&|x| format!("{x:.2}"));
    house_style(&mut mesh, 13).draw().map_err(err)?;
    draw_rows(&root, &mut chart, class, &centres)?;
    chart
        .draw_series(LineSeries::new(
            [(1.0, 0.0), (1.0, n)],
            palette::TEXT.stroke_width(2),
        ))
        .map_err(err)?;
    for (c, &y) in class.cells.iter().zip(&centres) {
        let t = threshold(c);
        if t.is_finite() {
            chart
                .draw_series(DashedLineSeries::new(
                    [(t, y - 0.42), (t, y + 0.42)],
                    4,
                    3,
                    palette::VENDOR.stroke_width(2),
                ))
                .map_err(err)?;
        }
    }
    let points: Vec<Point> = class
        .cells
        .iter()
        .zip(&centres)
        .flat_map(|(c, &y)| row_points(c, y))
        .collect();
    draw_points(&mut chart, &points)?;
    draw_legend(&legend, &legend_entries())?;
    draw_foot(&foot, &notes)?;
    root.present().map_err(err)
}

/// The title: the class, its CPU, how many nodes and outliers; under it both rules.
fn draw_title(head: &Area<'_>, class: &Class, rules: Rules) -> Drawn {
    let title = format!(
        "Fleet class {} — {} — {}, {}",
        class.class,
        class.cpu_model,
        count(class.nodes.len(), "node"),
        count(class.outliers.len(), "outlier")
    );
    let sub = format!(
        "Outlier: below its cell's class median by more than {} MADs and by more than {} % \
         (dashed: the stricter)",
        rules.mads, rules.min_gap
    );
    draw_heading(head, title, sub)
}

/// Each row's label left of the plot (the cell, and under it its median) and a rule between
/// rows. The labels are placed where the chart puts the row's centre: plotters labels an axis
/// at ticks it picks itself, not at the rows.
fn draw_rows(root: &Area<'_>, chart: &mut Strip<'_, '_>, class: &Class, centres: &[f64]) -> Drawn {
    let (lo, hi) = (chart.x_range().start, chart.x_range().end);
    let separators = centres.iter().skip(1).map(|y| y + 0.5);
    for y in separators {
        chart
            .draw_series(LineSeries::new([(lo, y), (hi, y)], palette::GRID))
            .map_err(err)?;
    }
    for (c, &y) in class.cells.iter().zip(centres) {
        let (px, py) = chart.backend_coord(&(lo, y));
        let right = |size, colour| font(size, colour).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(
            c.cell.to_string(),
            (px - 8, py - 7),
            right(13, palette::TEXT),
        ))
        .map_err(err)?;
        root.draw(&Text::new(
            format!("median {:.2} GB/s", c.median),
            (px - 8, py + 8),
            right(12, palette::MUTED),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// The outlier threshold of a cell as a ratio to its median: below it a node is an outlier.
/// It is the cell's detectable slowdown, which the class's own spread may widen.
fn threshold(c: &CellJudgement) -> f64 {
    1.0 - c.detectable / 100.0
}

/// The x axis: every ratio, threshold and the median, with a margin either side.
fn x_range(class: &Class) -> (f64, f64) {
    let values = class
        .cells
        .iter()
        .flat_map(|c| c.nodes.iter().map(|s| s.ratio).chain([threshold(c), 1.0]));
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((1.0f64, 1.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let pad = (hi - lo).max(0.02) * 0.08;
    (lo - pad, hi + pad)
}

/// A row's points, spread a little up and down (by their order) so that equal figures do not
/// hide each other; a figure that is not a finite ratio (a median of 0) has no place.
fn row_points(c: &CellJudgement, y: f64) -> impl Iterator<Item = Point<'_>> {
    c.nodes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.ratio.is_finite())
        .map(move |(k, s)| {
            let offset = ((k % 5) as f64 - 2.0) * 0.09;
            (s.ratio, y + offset, s.node.as_str(), s.outlier)
        })
}

/// The nodes' points, then the outliers' over them with their names beside.
fn draw_points(chart: &mut Strip<'_, '_>, points: &[Point]) -> Drawn {
    chart
        .draw_series(
            points
                .iter()
                .filter(|p| !p.3)
                .map(|&(x, y, _, _)| Circle::new((x, y), NODE_RADIUS, palette::L1.filled())),
        )
        .map_err(err)?;
    chart
        .draw_series(points.iter().filter(|p| p.3).map(|&(x, y, name, _)| {
            EmptyElement::at((x, y))
                + Circle::new((0, 0), OUTLIER_RADIUS, palette::FAILED.filled())
                + Text::new(name.to_string(), (9, -8), font(12, palette::FAILED))
        }))
        .map_err(err)?;
    Ok(())
}

fn legend_entries() -> Vec<LegendEntry> {
    let entry = |label: &str, colour, sample| LegendEntry {
        label: label.to_string(),
        colour,
        sample,
    };
    vec![
        entry("a node", palette::L1, Sample::Dot(NODE_RADIUS)),
        entry(
            "an outlier, named",
            palette::FAILED,
            Sample::Dot(OUTLIER_RADIUS),
        ),
        entry("the class median", palette::TEXT, Sample::Solid),
        entry("outlier threshold", palette::VENDOR, Sample::Dashed),
    ]
}

/// Under the plot: each outlier and why (the first few; the tables list them all).
fn why_notes(class: &Class) -> Vec<(String, RGBColor)> {
    let mut notes: Vec<(String, RGBColor)> = class
        .outliers
        .iter()
        .take(FOOT_OUTLIERS)
        .map(|(node, why)| (format!("{node}: {}", why.join("; ")), palette::TEXT))
        .collect();
    let more = class.outliers.len().saturating_sub(FOOT_OUTLIERS);
    if more > 0 {
        notes.push((
            format!("… and {more} more outliers (the tables list them all)"),
            palette::MUTED,
        ));
    }
    notes
}
