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
    let find = |set: usize, threads: usize, rerun: bool| {
        cells
            .iter()
            .find(|c| c.set == set && c.threads == threads && c.rerun == rerun)
    };
    // The cell with the highest median of a set (the fewest threads on a tie).
    let highest = |set: usize| {
        cells
            .iter()
            .filter(|c| c.set == set && !c.rerun)
            .fold(None::<&CellSnapshot>, |best, c| match best {
                Some(b) if b.figures.median_gbs >= c.figures.median_gbs => Some(b),
                _ => Some(c),
            })
    };
    let most_threads = |set: usize| {
        cells
            .iter()
            .filter(|c| c.set == set && !c.rerun)
            .max_by_key(|c| c.threads)
    };
    let name = |set: usize| {
        cells
            .iter()
            .find(|c| c.set == set)
            .map_or_else(String::new, |c| c.set_label.clone())
    };

    let mut rows = Vec::new();
    let mut push = |name: String, value: f64, unit: Unit| {
        if value.is_finite() {
            rows.push(DerivedRow { name, value, unit });
        }
    };

    let cache = cache_set(sets);
    let dram = dram_set(sets);
    let cache_top = cache.and_then(highest);
    let dram_top = dram.and_then(highest);
    let dram_one = dram.and_then(|d| find(d, 1, false));

    if let (Some(c), Some(top), Some(v)) = (cache, cache_top, vendor) {
        push(
            format!(
                "highest {} median ({}) / vendor figure",
                name(c),
                threads_phrase(top.threads)
            ),
            top.figures.median_gbs / v,
            Unit::Ratio,
        );
    }
    if let (Some(c), Some(ct), Some(d), Some(dt)) = (cache, cache_top, dram, dram_top) {
        push(
            format!(
                "highest {} median ({}) / highest {} median ({})",
                name(c),
                threads_phrase(ct.threads),
                name(d),
                threads_phrase(dt.threads)
            ),
            ct.figures.median_gbs / dt.figures.median_gbs,
            Unit::Ratio,
        );
    }
    if let Some(c) = cache
        && let (Some(first), Some(again)) = (find(c, 1, false), find(c, 1, true))
    {
        push(
            format!("{}, 1 thread, run again last / run first", name(c)),
            again.figures.median_gbs / first.figures.median_gbs,
            Unit::Ratio,
        );
    }
    if let (Some(d), Some(one), Some(v)) = (dram, dram_one, vendor) {
        push(
            format!("vendor figure / {} single thread", name(d)),
            v / one.figures.median_gbs,
            Unit::Ratio,
        );
    }
    if let (Some(d), Some(one), Some(most)) = (dram, dram_one, dram.and_then(most_threads))
        && most.threads > 1
    {
        push(
            format!("{} {} / 1 thread", name(d), threads_phrase(most.threads)),
            most.figures.median_gbs / one.figures.median_gbs,
            Unit::Ratio,
        );
    }
    if let (Some(d), Some(most)) = (dram, dram.and_then(most_threads)) {
        // The seed's look at the top of the sweep: did the last step still add bandwidth, and
        // did the threads share it evenly?
        let below = cells
            .iter()
            .filter(|c| c.set == d && !c.rerun && c.threads < most.threads && c.threads > 1)
            .max_by_key(|c| c.threads);
        if let Some(b) = below {
            push(
                format!(
                    "{} {} / {}",
                    name(d),
                    threads_phrase(most.threads),
                    threads_phrase(b.threads)
                ),
                most.figures.median_gbs / b.figures.median_gbs,
                Unit::Ratio,
            );
        }
        if most.threads > 1 && most.figures.slowest_thread_gbs > 0.0 {
            push(
                format!(
                    "{} {}, fastest thread / slowest thread",
                    name(d),
                    threads_phrase(most.threads)
                ),
                most.figures.fastest_thread_gbs / most.figures.slowest_thread_gbs,
                Unit::Ratio,
            );
        }
    }
    if let (Some(d), Some(top)) = (dram, dram_top) {
        let highest = format!(
            "highest {} median ({})",
            name(d),
            threads_phrase(top.threads)
        );
        if let Some(v) = vendor {
            push(
                format!("{highest} / vendor figure"),
                top.figures.median_gbs / v,
                Unit::Fraction,
            );
        }
        if let Some(one) = dram_one {
            push(
                format!("{highest} / single thread"),
                top.figures.median_gbs / one.figures.median_gbs,
                Unit::Ratio,
            );
        }
        push(
            format!(
                "{highest} x 32/24, the interface traffic if the store read a before writing it"
            ),
            top.figures.median_gbs * 32.0 / 24.0,
            Unit::Gbs,
        );
    }
    rows
}
