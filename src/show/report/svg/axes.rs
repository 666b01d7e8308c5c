//! What both charts' plots share: log-scaled axes with their ticks and labels, the text style,
//! and the points' markers.

use super::canvas::{Drawn, err};
use crate::base::units::format_bytes;
use plotters::chart::MeshStyle;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// At most `most` ticks, every other one dropped until they fit.
pub(super) fn thin(mut ticks: Vec<f64>, most: usize) -> Vec<f64> {
    while ticks.len() > most {
        ticks = ticks.into_iter().step_by(2).collect();
    }
    ticks
}

/// The range and ticks of a log GB/s axis for these values: from a tick below the least to a
/// tick above the most, ticks at 1, 2 and 5 times a power of ten; at powers of ten alone when
/// that gives more than eight, and at 1, 1.5, 2, 3, 5 and 7 times them when fewer than three.
pub(super) fn log_ticks(values: impl Iterator<Item = f64>) -> (f64, f64, Vec<f64>) {
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
pub(super) fn tick_label(v: f64) -> String {
    if v >= 10.0 || (v - v.round()).abs() < 1e-9 {
        format!("{:.0}", v)
    } else {
        let text = format!("{v:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

pub(super) fn font(size: u32, colour: RGBColor) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&colour)
}

/// Every chart's mesh in the house style: grid lines, muted axes, tick labels at `label_px`
/// and axis descriptions at 15 px.
pub(super) fn house_style<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    label_px: u32,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.bold_line_style(super::palette::GRID)
        .light_line_style(super::palette::BACKGROUND)
        .axis_style(super::palette::MUTED)
        .label_style(font(label_px, super::palette::TEXT))
        .axis_desc_style(font(15, super::palette::TEXT))
}

/// Points' markers: explicit sizes share a colour, so the n-th one gets the n-th shape
/// (circle, triangle, square). A point whose `hollow` is true (a noisy cell: its median is less
/// sure) is drawn as the shape's outline, so that a sweep of noisy points does not look as
/// solid as a quiet one; `hollow` shorter than `pts` leaves the rest filled.
pub(super) fn draw_markers<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pts: &[(X::ValueType, Y::ValueType)],
    hollow: &[bool],
    n: usize,
    colour: RGBColor,
) -> Drawn
where
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    let style = |i: usize| {
        if hollow.get(i).copied().unwrap_or(false) {
            colour.stroke_width(2)
        } else {
            colour.filled()
        }
    };
    let pts = pts.iter().cloned().enumerate();
    match n % 3 {
        0 => chart.draw_series(pts.map(|(i, p)| Circle::new(p, 5, style(i)))),
        1 => chart.draw_series(pts.map(|(i, p)| TriangleMarker::new(p, 7, style(i)))),
        _ => chart.draw_series(
            pts.map(|(i, p)| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style(i))),
        ),
    }
    .map_err(err)?;
    Ok(())
}

/// A log axis of bytes: from 1.5 × below the least size to 1.5 × above the most (4 KiB to
/// 1 GiB when there is none), with ticks at powers of two, at most nine.
pub(super) fn bytes_axis(sizes: impl Iterator<Item = f64>) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = sizes
        .fold(None, |r: Option<(f64, f64)>, x| match r {
            None => Some((x, x)),
            Some((a, b)) => Some((a.min(x), b.max(x))),
        })
        .unwrap_or((4096.0, (1u64 << 30) as f64));
    let (lo, hi) = (lo / 1.5, hi * 1.5);
    let ticks: Vec<f64> = (0..64)
        .map(|p| (1u64 << p) as f64)
        .filter(|&b| b >= lo && b <= hi)
        .collect();
    (lo, hi, thin(ticks, 9))
}

/// A chart of bytes (x) against a log axis (y), both log-scaled with their ticks.
pub(super) type BytesChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<WithKeyPoints<LogCoord<f64>>, WithKeyPoints<LogCoord<f64>>>,
>;

/// The plot of a chart of bytes against a log axis (sizes and latency alike): the axes from
/// `bytes_axis` and `log_ticks`, described, their ticks labelled, in the house style.
pub(super) fn bytes_chart<'a, 'b>(
    plot: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    (x_lo, x_hi, x_ticks): &(f64, f64, Vec<f64>),
    (lo, hi, ticks): &(f64, f64, Vec<f64>),
    x_desc: &str,
    y_desc: &str,
) -> Drawn<BytesChart<'a, 'b>> {
    let mut chart = ChartBuilder::on(plot)
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (*x_lo..*x_hi).log_scale().with_key_points(x_ticks.clone()),
            (*lo..*hi).log_scale().with_key_points(ticks.clone()),
        )
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(x_ticks.len())
        .y_labels(ticks.len())
        .x_label_formatter(&|x| format_bytes(x.round() as u64))
        .y_label_formatter(&|y| tick_label(*y));
    house_style(&mut mesh, 13).draw().map_err(err)?;
    Ok(chart)
}

/// A cache level's edge on a chart of bytes: a dashed line at `x` from `lo` to `hi`, and its
/// `text` at the top, offset by `offset` and anchored on `side`.
pub(super) fn draw_edge(
    chart: &mut BytesChart<'_, '_>,
    (x, lo, hi): (f64, f64, f64),
    text: String,
    offset: (i32, i32),
    side: HPos,
) -> Drawn {
    chart
        .draw_series(DashedLineSeries::new(
            vec![(x, lo), (x, hi)],
            4,
            4,
            super::palette::MUTED.stroke_width(1),
        ))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((x, hi))
                + Text::new(
                    text,
                    offset,
                    font(12, super::palette::MUTED).pos(Pos::new(side, VPos::Top)),
                ),
        ))
        .map_err(err)?;
    Ok(())
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
}
