//! The SVG chart: median GB/s against the measured thread counts, one line per working set in a
//! fixed colour per level, on a log-scaled GB/s axis (L1 and DRAM differ by two orders of
//! magnitude: on a linear axis the DRAM line lies flat on the floor), with the vendor figure as
//! a dashed line. A snapshot that sweeps many sizes of one kind is drawn as GB/s against size
//! instead (`size_chart`, one line per thread count, both axes log-scaled, each cache level
//! dashed where three arrays fill it, and the cliffs found named under the plot).
//!
//! A snapshot of several ops (`--op stream`, `--op all`) is drawn as a chart per op, stacked
//! in one document on shared axes, each titled with its op and formula (`ops_chart` says why).
//!
//! The title says what the chart is of: host, CPU, kernel, stores, pinning and when. The
//! background is opaque white, so the chart reads the same on a light or a dark page, and the
//! colours are the Okabe–Ito palette, told apart with red–green colour blindness.
//!
//! plotters' SVG backend writes text as `<text>` elements and leaves the glyphs to whatever
//! shows the file; without its `ttf`/`ab_glyph` features it lays text out with a built-in
//! estimate, so no font files or fontconfig are needed where the chart is drawn.
//!
//! mod.rs holds what both charts share at the top (the canvas, the palette, the document);
//! threads.rs and sizes.rs draw the two charts; axes.rs and frame.rs their common parts (log
//! axes and markers; the title, legend, notes under the plot and the ending).

mod axes;
mod frame;
mod latency;
mod loaded;
mod sizes;
mod threads;

use super::model::{Level, Snapshot};
use super::sweep::size_sweep;

pub use loaded::loaded_chart;
pub use sizes::size_chart;
pub use threads::threads_chart;

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
    pub(crate) const BACKGROUND: RGBColor = RGBColor(0xFF, 0xFF, 0xFF);
    pub(crate) const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
    pub(crate) const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
    pub(crate) const GRID: RGBColor = RGBColor(0xE0, 0xE0, 0xE0);
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
/// threads otherwise; ns per load against buffer size for a latency run.
pub fn to_svg(s: &Snapshot) -> String {
    if s.is_latency_run() {
        return latency::latency_chart(s);
    }
    // A loaded-latency run has its curve and no cells.
    if s.cells.is_empty() && !s.loaded_latency.is_empty() {
        return loaded_chart(s);
    }
    let ops = s.ops();
    if ops.len() > 1 {
        return ops_chart(s, &ops);
    }
    chart_of(s, None)
}

/// One op's chart: against size for a size sweep, against threads otherwise.
fn chart_of(s: &Snapshot, whole: Whole) -> String {
    match size_sweep(s) {
        Some(kind) => document(|out| sizes::draw_sizes(s, kind, whole, out)),
        None => document(|out| threads::draw_threads(s, whole, out)),
    }
}

/// A chart drawn as a panel of a chart of several ops holds the whole snapshot, whose cells
/// its axes span.
type Whole<'a> = Option<&'a Snapshot>;

/// Several ops: a chart per op (its name and formula in its title), stacked in the run's order
/// in one document, on the same axes. Small multiples rather than one chart with the op as the
/// series: every chart already spends its colours on the sets (or thread counts), and 4 to 10
/// ops times those lines would be 20 to 50 lines over one plot, the ops' curves lying close
/// (copy, scale, add and triad differ by a few per cent) and overprinting; stacked, each op
/// reads as its single-op chart does, and the shared axes let the eye compare them.
fn ops_chart(s: &Snapshot, ops: &[String]) -> String {
    let height = HEIGHT * ops.len() as u32;
    let mut out = format!(
        "<svg width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n"
    );
    let primary = s.primary_op();
    for (k, op) in ops.iter().enumerate() {
        let mut view = s.of_op(op);
        // The cliffs found are the primary op's (see `primary_op`): named under its panel only.
        if *op != primary {
            view.cliffs.clear();
        }
        let panel = chart_of(&view, Some(s));
        // Each panel is a whole chart, nested at its offset (`<svg y=…>` places it).
        let y = HEIGHT * k as u32;
        out.push_str(&panel.replacen("<svg ", &format!("<svg y=\"{y}\" "), 1));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("</svg>\n");
    out
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
