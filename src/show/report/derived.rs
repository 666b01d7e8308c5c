//! The derived table: ratios between cells that say what the per-cell table
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
    let mut d = Derivation {
        cells,
        vendor,
        rows: Vec::new(),
    };
    let (cache, dram) = (cache_set(sets), dram_set(sets));
    if let Some(c) = cache {
        d.cache_rows(c, dram);
    }
    if let Some(dram) = dram {
        d.dram_rows(dram);
    }
    d.rows
}

/// The cells a derived table is computed from, and the rows so far.
struct Derivation<'a> {
    cells: &'a [CellSnapshot],
    vendor: Option<f64>,
    rows: Vec<DerivedRow>,
}

impl<'a> Derivation<'a> {
    fn find(&self, set: usize, threads: usize, rerun: bool) -> Option<&'a CellSnapshot> {
        self.cells
            .iter()
            .find(|c| c.set == set && c.threads == threads && c.rerun == rerun)
    }

    /// The cell with the highest median of a set (the fewest threads on a tie).
    fn highest(&self, set: usize) -> Option<&'a CellSnapshot> {
        self.cells.iter().filter(|c| c.set == set && !c.rerun).fold(
            None::<&CellSnapshot>,
            |best, c| match best {
                Some(b) if b.figures.median_gbs >= c.figures.median_gbs => Some(b),
                _ => Some(c),
            },
        )
    }

    fn most_threads(&self, set: usize) -> Option<&'a CellSnapshot> {
        self.cells
            .iter()
            .filter(|c| c.set == set && !c.rerun)
            .max_by_key(|c| c.threads)
    }

    fn name(&self, set: usize) -> String {
        self.cells
            .iter()
            .find(|c| c.set == set)
            .map_or_else(String::new, |c| c.set_label.clone())
    }

    /// A row, when its value is a number.
    fn push(&mut self, name: String, value: f64, unit: Unit) {
        if value.is_finite() {
            self.rows.push(DerivedRow { name, value, unit });
        }
    }

    /// The cache set against the vendor figure and the DRAM set, and its run again last.
    fn cache_rows(&mut self, c: usize, dram: Option<usize>) {
        let cache_top = self.highest(c);
        if let (Some(top), Some(v)) = (cache_top, self.vendor) {
            let name = format!(
                "highest {} median ({}) / vendor figure",
                self.name(c),
                threads_phrase(top.threads)
            );
            self.push(name, top.figures.median_gbs / v, Unit::Ratio);
        }
        if let (Some(ct), Some(d)) = (cache_top, dram)
            && let Some(dt) = self.highest(d)
        {
            let name = format!(
                "highest {} median ({}) / highest {} median ({})",
                self.name(c),
                threads_phrase(ct.threads),
                self.name(d),
                threads_phrase(dt.threads)
            );
            self.push(
                name,
                ct.figures.median_gbs / dt.figures.median_gbs,
                Unit::Ratio,
            );
        }
        if let (Some(first), Some(again)) = (self.find(c, 1, false), self.find(c, 1, true)) {
            let name = format!("{}, 1 thread, run again last / run first", self.name(c));
            self.push(
                name,
                again.figures.median_gbs / first.figures.median_gbs,
                Unit::Ratio,
            );
        }
    }

    /// The DRAM set: one thread against the vendor figure, the scaling, the top of the sweep.
    fn dram_rows(&mut self, d: usize) {
        let one = self.find(d, 1, false);
        if let (Some(one), Some(v)) = (one, self.vendor) {
            let name = format!("vendor figure / {} single thread", self.name(d));
            self.push(name, v / one.figures.median_gbs, Unit::Ratio);
        }
        if let Some(most) = self.most_threads(d) {
            self.scaling_rows(d, one, most);
        }
        if let Some(top) = self.highest(d) {
            self.top_rows(d, one, top);
        }
    }

    /// A look at the top of the sweep: the most threads against one, did the last
    /// step still add bandwidth, and did the threads share it evenly?
    fn scaling_rows(&mut self, d: usize, one: Option<&CellSnapshot>, most: &CellSnapshot) {
        let name = self.name(d);
        let most_phrase = threads_phrase(most.threads);
        if let Some(one) = one
            && most.threads > 1
        {
            let ratio = most.figures.median_gbs / one.figures.median_gbs;
            self.push(
                format!("{name} {most_phrase} / 1 thread"),
                ratio,
                Unit::Ratio,
            );
        }
        let below = self
            .cells
            .iter()
            .filter(|c| c.set == d && !c.rerun && c.threads < most.threads && c.threads > 1)
            .max_by_key(|c| c.threads);
        if let Some(b) = below {
            let row = format!("{name} {most_phrase} / {}", threads_phrase(b.threads));
            self.push(
                row,
                most.figures.median_gbs / b.figures.median_gbs,
                Unit::Ratio,
            );
        }
        if most.threads > 1 && most.figures.slowest_thread_gbs > 0.0 {
            let row = format!("{name} {most_phrase}, fastest thread / slowest thread");
            let ratio = most.figures.fastest_thread_gbs / most.figures.slowest_thread_gbs;
            self.push(row, ratio, Unit::Ratio);
        }
    }

    /// The DRAM set's highest median against the vendor figure, one thread, and the traffic
    /// on the interface if the store read its line first.
    fn top_rows(&mut self, d: usize, one: Option<&CellSnapshot>, top: &CellSnapshot) {
        let highest = format!(
            "highest {} median ({})",
            self.name(d),
            threads_phrase(top.threads)
        );
        if let Some(v) = self.vendor {
            let row = format!("{highest} / vendor figure");
            self.push(row, top.figures.median_gbs / v, Unit::Fraction);
        }
        if let Some(one) = one {
            let row = format!("{highest} / single thread");
            self.push(
                row,
                top.figures.median_gbs / one.figures.median_gbs,
                Unit::Ratio,
            );
        }
        self.push(
            format!(
                "{highest} x 32/24, the interface traffic if the store read a before writing it"
            ),
            top.figures.median_gbs * 32.0 / 24.0,
            Unit::Gbs,
        );
    }
}
