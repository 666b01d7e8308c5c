//! The derived table of the seed README: ratios between cells that say what the per-cell table
//! means (cache against DRAM, one thread against the package, the figure against the vendor's).
//! Computed from whatever the grid holds; a row whose inputs are missing is left out.

use super::model::{ArraySize, CellSnapshot, DerivedRow, Level, Unit, WorkingSet};
use super::text::threads_phrase;

/// The cache set: the first per-thread set.
pub fn cache_set(sets: &[WorkingSet]) -> Option<usize> {
    sets.iter().position(|s| s.is_per_thread())
}

/// The DRAM set: the set whose level is `dram`, else the largest split set.
pub fn dram_set(sets: &[WorkingSet]) -> Option<usize> {
    sets.iter()
        .position(|s| s.level == Some(Level::Dram))
        .or_else(|| {
            sets.iter()
                .enumerate()
                .filter_map(|(i, s)| match s.size {
                    ArraySize::Split(b) => Some((i, b)),
                    ArraySize::PerThread(_) => None,
                })
                .max_by_key(|&(i, b)| (b, std::cmp::Reverse(i)))
                .map(|(i, _)| i)
        })
}

/// The derived rows for these cells (as `Snapshot::build` orders them), against the vendor
/// figure when there is a usable one (as `stats::Context` holds it). Sets are named by the label
/// their cells carry.
pub fn derive(cells: &[CellSnapshot], sets: &[WorkingSet], vendor: Option<f64>) -> Vec<DerivedRow> {
    let cells = Cells(cells);
    let mut rows = Rows(Vec::new());
    let (cache, dram) = (cache_set(sets), dram_set(sets));
    if let Some(c) = cache {
        cache_rows(&cells, c, dram, vendor, &mut rows);
    }
    if let Some(d) = dram {
        dram_rows(&cells, d, vendor, &mut rows);
    }
    rows.0
}

/// The cells of a snapshot, looked up by set and threads.
struct Cells<'a>(&'a [CellSnapshot]);

impl<'a> Cells<'a> {
    fn find(&self, set: usize, threads: usize, rerun: bool) -> Option<&'a CellSnapshot> {
        self.0
            .iter()
            .find(|c| c.set == set && c.threads == threads && c.rerun == rerun)
    }

    /// The cell with the highest median of a set (the fewest threads on a tie).
    fn highest(&self, set: usize) -> Option<&'a CellSnapshot> {
        self.0
            .iter()
            .filter(|c| c.set == set && !c.rerun)
            .fold(None::<&CellSnapshot>, |best, c| match best {
                Some(b) if b.figures.median_gbs >= c.figures.median_gbs => Some(b),
                _ => Some(c),
            })
    }

    fn most_threads(&self, set: usize) -> Option<&'a CellSnapshot> {
        self.0
            .iter()
            .filter(|c| c.set == set && !c.rerun)
            .max_by_key(|c| c.threads)
    }

    /// The next thread count below `most`'s (and above one) of its set.
    fn below(&self, most: &CellSnapshot) -> Option<&'a CellSnapshot> {
        self.0
            .iter()
            .filter(|c| c.set == most.set && !c.rerun && c.threads < most.threads && c.threads > 1)
            .max_by_key(|c| c.threads)
    }

    fn name(&self, set: usize) -> String {
        self.0
            .iter()
            .find(|c| c.set == set)
            .map_or_else(String::new, |c| c.set_label.clone())
    }
}

/// The rows so far; a figure that is not finite (a zero divisor) is left out.
struct Rows(Vec<DerivedRow>);

impl Rows {
    fn push(&mut self, name: String, value: f64, unit: Unit) {
        if value.is_finite() {
            self.0.push(DerivedRow { name, value, unit });
        }
    }
}

/// The cache set's rows: its highest median against the vendor figure and against the DRAM
/// set's, and its single thread run again last against run first.
fn cache_rows(cells: &Cells, c: usize, dram: Option<usize>, vendor: Option<f64>, rows: &mut Rows) {
    let top = cells.highest(c);
    if let (Some(top), Some(v)) = (top, vendor) {
        rows.push(
            format!(
                "highest {} median ({}) / vendor figure",
                cells.name(c),
                threads_phrase(top.threads)
            ),
            top.figures.median_gbs / v,
            Unit::Ratio,
        );
    }
    if let (Some(ct), Some(d)) = (top, dram)
        && let Some(dt) = cells.highest(d)
    {
        rows.push(
            format!(
                "highest {} median ({}) / highest {} median ({})",
                cells.name(c),
                threads_phrase(ct.threads),
                cells.name(d),
                threads_phrase(dt.threads)
            ),
            ct.figures.median_gbs / dt.figures.median_gbs,
            Unit::Ratio,
        );
    }
    if let (Some(first), Some(again)) = (cells.find(c, 1, false), cells.find(c, 1, true)) {
        rows.push(
            format!("{}, 1 thread, run again last / run first", cells.name(c)),
            again.figures.median_gbs / first.figures.median_gbs,
            Unit::Ratio,
        );
    }
}

/// The DRAM set's rows: the vendor figure against one thread, scaling to the most threads and
/// over the last step, the threads' evenness, and its highest median against the vendor figure
/// and one thread.
fn dram_rows(cells: &Cells, d: usize, vendor: Option<f64>, rows: &mut Rows) {
    let name = cells.name(d);
    let one = cells.find(d, 1, false);
    if let (Some(one), Some(v)) = (one, vendor) {
        rows.push(
            format!("vendor figure / {name} single thread"),
            v / one.figures.median_gbs,
            Unit::Ratio,
        );
    }
    if let Some(most) = cells.most_threads(d) {
        if let Some(one) = one
            && most.threads > 1
        {
            rows.push(
                format!("{name} {} / 1 thread", threads_phrase(most.threads)),
                most.figures.median_gbs / one.figures.median_gbs,
                Unit::Ratio,
            );
        }
        // The seed's look at the top of the sweep: did the last step still add bandwidth, and
        // did the threads share it evenly?
        if let Some(b) = cells.below(most) {
            rows.push(
                format!(
                    "{name} {} / {}",
                    threads_phrase(most.threads),
                    threads_phrase(b.threads)
                ),
                most.figures.median_gbs / b.figures.median_gbs,
                Unit::Ratio,
            );
        }
        if most.threads > 1 && most.figures.slowest_thread_gbs > 0.0 {
            rows.push(
                format!(
                    "{name} {}, fastest thread / slowest thread",
                    threads_phrase(most.threads)
                ),
                most.figures.fastest_thread_gbs / most.figures.slowest_thread_gbs,
                Unit::Ratio,
            );
        }
    }
    if let Some(top) = cells.highest(d) {
        top_rows(&name, top, one, vendor, rows);
    }
}

/// The DRAM set's highest median against the vendor figure and one thread, and the interface
/// traffic it would mean if each store read its line first.
fn top_rows(
    name: &str,
    top: &CellSnapshot,
    one: Option<&CellSnapshot>,
    vendor: Option<f64>,
    rows: &mut Rows,
) {
    let highest = format!("highest {name} median ({})", threads_phrase(top.threads));
    if let Some(v) = vendor {
        rows.push(
            format!("{highest} / vendor figure"),
            top.figures.median_gbs / v,
            Unit::Fraction,
        );
    }
    if let Some(one) = one {
        rows.push(
            format!("{highest} / single thread"),
            top.figures.median_gbs / one.figures.median_gbs,
            Unit::Ratio,
        );
    }
    rows.push(
        format!("{highest} x 32/24, the interface traffic if the store read a before writing it"),
        top.figures.median_gbs * 32.0 / 24.0,
        Unit::Gbs,
    );
}
