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
//! mod.rs picks the chart; canvas.rs holds what every chart shares (the canvas, the palette,
//! the document); threads.rs, sizes.rs, latency.rs and loaded.rs draw the charts; axes.rs and
//! frame.rs their common parts (log axes and markers; the title, legend, notes under the plot
//! and the ending). fleet.rs draws `stream-top fleet`'s chart of a class, from its judgement
//! rather than from a snapshot.

mod axes;
mod canvas;
mod fleet;
mod frame;
mod latency;
mod loaded;
mod sizes;
mod threads;

use super::model::Snapshot;
use super::sweep::size_sweep;
use canvas::{HEIGHT, WIDTH, Whole, document};

pub use canvas::palette;
pub use fleet::fleet_chart;
pub use loaded::loaded_chart;
pub use sizes::size_chart;
pub use threads::threads_chart;

/// The chart of a snapshot: GB/s against size for a size sweep (`size_sweep`), against
/// threads otherwise; ns per load against buffer size for a latency run.
pub fn to_svg(s: &Snapshot) -> String {
    let s = &*s.printable();
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
