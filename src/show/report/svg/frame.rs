//! What frames both charts' plots: the title, the legend panel, the notes under the plot and
//! the ending that writes the document out.

use super::axes::font;
use super::canvas::{Drawn, FOOT_CLIFFS, FOOT_LINE, HEADER, HEIGHT, err, palette};
use crate::base::time::display;
use crate::engine::kernel::Op;
use crate::show::report::lines::{isa_name, stores_name};
use crate::show::report::markdown::no_effect_lines;
use crate::show::report::model::{PinPolicy, Snapshot, TableRow};
use crate::show::report::text::{cell_name, gbs_plain};
use plotters::coord::Shift;
use plotters::prelude::*;

/// A part of the chart's canvas.
pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Title lines on top, `foot` lines of notes at the bottom: the body between is returned with
/// the footer area. A panel of a chart of several ops (`panel`) names its op's formula too.
pub(super) fn frame<'a>(
    root: &Area<'a>,
    s: &Snapshot,
    foot: usize,
    panel: bool,
) -> Drawn<(Area<'a>, Area<'a>)> {
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
    let what = if s.is_latency_run() {
        "pointer chase, idle latency".to_string()
    } else {
        let op = s.primary_op();
        let op = match op.parse::<Op>() {
            Ok(o) if panel => format!("{op} ({})", o.formula()),
            _ => op,
        };
        format!(
            "{} {op}, {}",
            isa_name(info.kernel.isa),
            stores_name(info.kernel.stores)
        )
    };
    let mut sub = format!(
        "{what} · pin {} · {}",
        pin_word(info.pin),
        display(&s.taken)
    );
    if let Some(name) = &info.name {
        sub.push_str(&format!(" · run {name}"));
    }
    draw_heading(&head, title, sub)?;
    let lines = foot as u32;
    let body_height = HEIGHT - HEADER - FOOT_LINE * lines - if lines > 0 { 8 } else { 0 };
    Ok(rest.split_vertically(body_height))
}

/// A chart's two title lines in the header: what it is of (bold), and how it was made.
pub(super) fn draw_heading(head: &Area<'_>, title: String, sub: String) -> Drawn {
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
    Ok(())
}

fn pin_word(p: PinPolicy) -> &'static str {
    match p {
        PinPolicy::Spread => "spread",
        PinPolicy::Compact => "compact",
        PinPolicy::None => "none",
    }
}

/// The first cliffs' lines under the plot (`Cliff: …`), and how many more there are and where
/// they are all listed (`the Markdown lists them all`).
pub(super) fn cliff_notes(lines: Vec<String>, listed: &str) -> Vec<(String, RGBColor)> {
    let more = lines.len().saturating_sub(FOOT_CLIFFS);
    let mut notes: Vec<(String, RGBColor)> = lines
        .into_iter()
        .take(FOOT_CLIFFS)
        .map(|line| (format!("Cliff: {line}"), palette::TEXT))
        .collect();
    if more > 0 {
        notes.push((
            format!("… and {more} more cliffs ({listed})"),
            palette::MUTED,
        ));
    }
    notes
}

/// The notes under the chart: settings that changed nothing here, how many cells are noisy,
/// then cells that could not run.
pub(super) fn foot_lines(s: &Snapshot) -> Vec<(String, RGBColor)> {
    let notes = no_effect_lines(s)
        .into_iter()
        .map(|line| (line, palette::MUTED));
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
        TableRow::Failed(f) => Some((
            format!("FAILED: {}: {}", cell_name(&f.label, f.threads), f.reason),
            palette::FAILED,
        )),
        TableRow::Cell(_) => None,
    });
    notes.chain(noisy).chain(failed).collect()
}

/// What every chart ends with: the vendor figure's entry in the legend where it is known, the
/// legend, the notes under the plot, and the document written out.
pub(super) fn finish(
    s: &Snapshot,
    root: &Area<'_>,
    legend: &Area<'_>,
    foot: &Area<'_>,
    mut entries: Vec<LegendEntry>,
    notes: &[(String, RGBColor)],
) -> Drawn {
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

pub(super) fn draw_foot(foot: &Area<'_>, lines: &[(String, RGBColor)]) -> Drawn {
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
pub(super) enum Sample {
    /// A line with the n-th marker.
    Line(usize),
    /// A line alone.
    Solid,
    /// A marker alone (a point of a strip plot), of this radius.
    Dot(i32),
    Cross,
    Dashed,
}

pub(super) struct LegendEntry {
    pub(super) label: String,
    pub(super) colour: RGBColor,
    pub(super) sample: Sample,
}

/// The legend, in its own panel right of the plot: a sample and the label, which wraps after
/// `, ` when it is long.
pub(super) fn draw_legend(area: &Area<'_>, entries: &[LegendEntry]) -> Drawn {
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
            Sample::Solid => {
                area.draw(&PathElement::new(
                    vec![(x0, y), (x1, y)],
                    e.colour.stroke_width(2),
                ))
                .map_err(err)?;
            }
            Sample::Dot(r) => {
                area.draw(&Circle::new(((x0 + x1) / 2, y), r, e.colour.filled()))
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
    fn labels_wrap_at_spaces() {
        assert_eq!(
            wrap("64 MB, past L3 (48 MiB): dram, run again last", 26),
            vec!["64 MB, past L3 (48 MiB):", "dram, run again last"]
        );
        assert_eq!(wrap("l1", 26), vec!["l1"]);
    }
}
