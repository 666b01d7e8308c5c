//! Confirming a slow node before the fleet accuses it, and sizing the rule to the class.
//!
//! On a shared host a neighbour's burst takes bandwidth for minutes, and while it lasts every
//! run of the node it lands on is slow: one run, or several within one burst, cannot tell a
//! burst from a missing DIMM. A node's runs are therefore grouped into *occasions*: runs
//! whose time spans (start to snapshot) lie at least [`APART_S`] apart are separate
//! occasions, runs closer than that are one. Only a node slow on every one of at least
//! [`MIN_OCCASIONS`] occasions is an outlier; a slow node seen on fewer is a suspect, to
//! measure again.
//!
//! The class's run-to-run spread (how far one run of a node strays from that node's median,
//! relative, the median over the class) sets the least gap: [`SPREAD_K`] times it, never under
//! the `--min-gap` floor. A quiet class keeps the floor; a noisy one widens the gap rather than
//! accuse a node of its neighbours' noise, and the report says how large a slowdown it still
//! detects.

use crate::base::median::median;

/// Runs of one node whose spans are at least this far apart (the later one starting 10
/// minutes or more after the earlier one ended) were taken at different times. A neighbour's
/// burst on a shared host (a build, a backup, a batch step) lasts seconds to minutes, and
/// runs started back to back by one script or one job array land in the same one.
pub const APART_S: i64 = 600;

/// How many occasions a node must be slow on, every one of them, to be accused. With two, a
/// class of identical nodes drawn from the spread measured on a shared VM accused a healthy
/// node in 3.3 % of fleets; with three, in 0.2 % (the fleet rule's tests print both).
pub const MIN_OCCASIONS: usize = 3;

/// The least gap is this many times the class's run-to-run spread (a median absolute
/// deviation of one run, relative): about 2.7 standard deviations of a normal spread, so a
/// healthy run falls below it about once in 300, while a heavy tail, as on a shared VM, still
/// has to strike on every occasion to accuse a node (the fleet rule's tests print the error
/// rates it gives at the spread measured on a shared VM).
pub const SPREAD_K: f64 = 4.0;

/// When a run was taken: from its start to its snapshot, seconds since the epoch.
pub type Span = (i64, i64);

/// One run's figure in a cell, and when it was taken (None where the snapshot's times do not
/// parse: such a run cannot show it was taken at another time).
pub type Timed = (Option<Span>, f64);

/// Each occasion's figure (the median of its runs'), in time order. Runs without a time join
/// the first occasion: they cannot count as one of their own.
pub fn occasions(runs: &[Timed]) -> Vec<f64> {
    let mut timed: Vec<(Span, f64)> = runs.iter().filter_map(|&(s, g)| Some((s?, g))).collect();
    timed.sort_by_key(|&((start, _), _)| start);
    let mut groups: Vec<(i64, Vec<f64>)> = Vec::new();
    for ((start, end), g) in timed {
        match groups.last_mut() {
            Some((last_end, figures)) if start - *last_end < APART_S => {
                *last_end = (*last_end).max(end);
                figures.push(g);
            }
            _ => groups.push((end, vec![g])),
        }
    }
    let untimed = runs.iter().filter(|(s, _)| s.is_none()).map(|&(_, g)| g);
    match groups.first_mut() {
        Some((_, first)) => first.extend(untimed),
        None => groups.push((0, untimed.collect())),
    }
    groups
        .into_iter()
        .filter(|(_, f)| !f.is_empty())
        .map(|(_, f)| median(&f))
        .collect()
}

/// The class's run-to-run spread in one cell, relative, and how many nodes gave it: over
/// every pair of runs of one node, the median of |a − b| / the node's median, over √2 (which
/// makes it the median absolute deviation of one run for a normal spread, whatever the number
/// of runs a node has: the deviations from a node's own median of two or three runs would
/// understate it). None where no node has two runs (the between-node spread stands in then).
pub fn run_to_run(nodes: &[&[Timed]]) -> Option<(f64, usize)> {
    let mut differences = Vec::new();
    let mut count = 0;
    for runs in nodes.iter().filter(|r| r.len() >= 2) {
        let figures: Vec<f64> = runs.iter().map(|&(_, g)| g).collect();
        let m = median(&figures);
        if m > 0.0 {
            count += 1;
            for (i, a) in figures.iter().enumerate() {
                differences.extend(figures[i + 1..].iter().map(|b| (a - b).abs() / m));
            }
        }
    }
    (count > 0).then(|| (median(&differences) / std::f64::consts::SQRT_2, count))
}

/// The least gap in percent: `SPREAD_K` times the spread (relative), never under the floor.
pub fn least_gap(spread: f64, floor_percent: f64) -> f64 {
    (SPREAD_K * spread * 100.0).max(floor_percent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3600;

    #[test]
    fn runs_an_hour_apart_are_two_occasions_and_a_burst_is_one() {
        let apart = [(Some((0, 60)), 80.0), (Some((HOUR, HOUR + 60)), 82.0)];
        assert_eq!(occasions(&apart), [80.0, 82.0]);
        let burst = [(Some((0, 60)), 80.0), (Some((90, 150)), 82.0)];
        assert_eq!(occasions(&burst), [81.0]);
        // Nine minutes after the first ended is still its burst; ten is another time.
        let nine = [(Some((0, 60)), 80.0), (Some((600, 660)), 82.0)];
        assert_eq!(occasions(&nine).len(), 1);
        let ten = [(Some((0, 60)), 80.0), (Some((660, 720)), 82.0)];
        assert_eq!(occasions(&ten).len(), 2);
    }

    #[test]
    fn a_long_run_overlapping_a_later_start_keeps_them_together() {
        let runs = [
            (Some((HOUR, HOUR + 10)), 3.0),
            (Some((0, 2 * HOUR)), 1.0),
            (Some((2 * HOUR + 60, 2 * HOUR + 70)), 2.0),
        ];
        // Sorted by start: the two-hour run spans the one an hour in and the one after it.
        assert_eq!(occasions(&runs), [2.0]);
    }

    #[test]
    fn runs_without_a_time_never_make_an_occasion_of_their_own() {
        assert_eq!(occasions(&[(None, 1.0), (None, 3.0)]), [2.0]);
        let mixed = [(None, 1.0), (Some((0, 10)), 3.0)];
        assert_eq!(occasions(&mixed), [2.0]);
    }

    #[test]
    fn the_spread_is_the_median_difference_between_a_nodes_runs() {
        let a = [(None, 99.0), (None, 101.0)];
        let b = [(None, 96.0), (None, 104.0)];
        let alone = [(None, 50.0)];
        let (spread, nodes) = run_to_run(&[&a, &b, &alone]).unwrap();
        assert_eq!(nodes, 2);
        // Differences of 2 % and 8 %: their median 5 %, over √2.
        assert!((spread - 0.05 / 2f64.sqrt()).abs() < 1e-12, "{spread}");
        assert_eq!(run_to_run(&[&alone]), None);
        assert_eq!(least_gap(0.001, 5.0), 5.0);
        assert!((least_gap(0.04, 5.0) - 16.0).abs() < 1e-9);
    }
}
