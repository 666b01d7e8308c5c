//! What every chart shares: the canvas and its parts' sizes, the palette, a panel's view of
//! the whole snapshot, and the document with its one error.

use crate::show::report::model::Snapshot;

pub(super) const WIDTH: u32 = 960;
pub(super) const HEIGHT: u32 = 600;
/// The title's two lines.
pub(super) const HEADER: u32 = 64;
/// The legend, right of the plot.
pub(super) const LEGEND: u32 = 230;
/// One line of notes under the plot.
pub(super) const FOOT_LINE: u32 = 16;
/// The most cliffs named under a size chart (the Markdown and the JSON have them all).
pub(super) const FOOT_CLIFFS: usize = 6;

/// Every colour of the chart. The levels keep their colour in every chart, whatever order
/// the sets ran in: l1 blue, l2 bluish green, l3 orange, dram vermillion, explicit sizes
/// reddish purple (Okabe & Ito, "Color Universal Design").
pub mod palette {
    use crate::show::report::model::Level;
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

/// A chart drawn as a panel of a chart of several ops holds the whole snapshot, whose cells
/// its axes span.
pub(super) type Whole<'a> = Option<&'a Snapshot>;

/// A chart's document, or one that says why it could not be drawn.
pub(super) fn document(draw: impl FnOnce(&mut String) -> Drawn) -> String {
    let mut out = String::new();
    match draw(&mut out) {
        Ok(()) => out,
        // Drawing into a String has no I/O to fail; keep the writer total anyway.
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\">\
             <text x=\"20\" y=\"40\">cannot draw the chart: {}</text></svg>\n",
            e.0.replace('&', "&amp;").replace('<', "&lt;")
        ),
    }
}

/// Why plotters could not draw a chart (drawing into a String, in practice never).
#[derive(Debug)]
pub(super) struct DrawError(String);

/// What a drawing step gives: done, or why not.
pub(super) type Drawn<T = ()> = Result<T, DrawError>;

/// plotters' error, kept as its text.
pub(super) fn err(e: impl std::fmt::Display) -> DrawError {
    DrawError(e.to_string())
}
