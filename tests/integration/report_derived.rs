//! The derived table: the M4 Pro reference run's rows recomputed from its own per-cell figures, and rows
//! left out when their inputs are missing.

use crate::support::report_fixtures::*;
use stream_top::engine::plan::{ArraySize, WorkingSet};
use stream_top::show::report::derived::{cache_set, derive, dram_set};
use stream_top::show::report::model as wire;

fn table(rows: &[stream_top::show::report::DerivedRow]) -> Vec<(String, String, &'static str)> {
    rows.iter()
        .map(|r| (r.name.clone(), r.unit.format(r.value), r.unit.name()))
        .collect()
}

#[test]
fn reproduces_the_reference_runs_derived_table() {
    let snap = m4_pro_reference_snapshot();
    let got = table(&snap.derived);
    let want: Vec<(&str, &str, &str)> = vec![
        (
            "highest 1 MiB/thread (l2) median (10 threads) / vendor figure",
            "2.85",
            "ratio",
        ),
        (
            "highest 1 MiB/thread (l2) median (10 threads) / highest 512 MiB median (8 threads)",
            "3.44",
            "ratio",
        ),
        (
            "1 MiB/thread (l2), 1 thread, run again last / run first",
            "0.98",
            "ratio",
        ),
        ("vendor figure / 512 MiB single thread", "2.29", "ratio"),
        // The reference run quotes 10 threads here by choice; stream-top takes the most threads.
        ("512 MiB 14 threads / 1 thread", "1.25", "ratio"),
        ("512 MiB 14 threads / 10 threads", "0.66", "ratio"),
        (
            "512 MiB 14 threads, fastest thread / slowest thread",
            "1.93",
            "ratio",
        ),
        (
            "highest 512 MiB median (8 threads) / vendor figure",
            "82.7 %",
            "percent",
        ),
        (
            "highest 512 MiB median (8 threads) / single thread",
            "1.89",
            "ratio",
        ),
        (
            "highest 512 MiB median (8 threads) x 32/24, the interface traffic if the store read a before writing it",
            "301.1",
            "GB/s",
        ),
    ];
    let want: Vec<(String, String, &str)> = want
        .into_iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn values_are_the_ratios_of_the_cells() {
    let a = snapshot_a();
    let med =
        |label: &str, t: usize, rerun: bool| a.cell(label, t, rerun).unwrap().figures.median_gbs;
    let (l2, dram) = ("85 KiB/thread (l2)", "128 MiB (dram)");
    let value = |name: &str| {
        a.derived
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name:?} in {:?}", a.derived))
            .value
    };
    let close = |x: f64, y: f64| assert!((x - y).abs() < 1e-9 * y.abs().max(1.0), "{x} vs {y}");
    close(
        value("highest 85 KiB/thread (l2) median (4 threads) / vendor figure"),
        med(l2, 4, false) / 40.0,
    );
    close(
        value("85 KiB/thread (l2), 1 thread, run again last / run first"),
        med(l2, 1, true) / med(l2, 1, false),
    );
    close(
        value("vendor figure / 128 MiB (dram) single thread"),
        40.0 / med(dram, 1, false),
    );
    close(
        value("128 MiB (dram) 4 threads / 1 thread"),
        med(dram, 4, false) / med(dram, 1, false),
    );
    close(
        value("128 MiB (dram) 4 threads / 2 threads"),
        med(dram, 4, false) / med(dram, 2, false),
    );
    close(
        value("highest 128 MiB (dram) median (4 threads) / vendor figure"),
        med(dram, 4, false) / 40.0,
    );
    close(
        value(
            "highest 128 MiB (dram) median (4 threads) x 32/24, the interface traffic if the store read a before writing it",
        ),
        med(dram, 4, false) * 32.0 / 24.0,
    );
    // The synthetic rounds: medians are the middle rates (dram × 4 has late rounds, which
    // stretch their spans), the slow thread is 10 % slower.
    // (Spans are whole nanoseconds, hence the looser tolerance.)
    let near = |x: f64, y: f64| assert!((x / y - 1.0).abs() < 1e-6, "{x} vs {y}");
    near(med(dram, 2, false), 19.0);
    near(med(dram, 4, false), 19.6);
    near(
        value("128 MiB (dram) 4 threads, fastest thread / slowest thread"),
        1.1,
    );
}

#[test]
fn rows_whose_inputs_are_missing_are_left_out() {
    let a = snapshot_a();
    // No dram cells: only the cache rows that need no dram remain.
    let cache_only: Vec<_> = a.cells.iter().filter(|c| c.set == 0).cloned().collect();
    let names: Vec<String> = derive(&cache_only, &a.grid.sets, Some(40.0))
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(
        names,
        [
            "highest 85 KiB/thread (l2) median (4 threads) / vendor figure",
            "85 KiB/thread (l2), 1 thread, run again last / run first",
        ]
    );
    // No cache cells and no vendor figure: dram rows that need neither.
    let dram_only: Vec<_> = a.cells.iter().filter(|c| c.set == 1).cloned().collect();
    let rows = derive(&dram_only, &a.grid.sets, None);
    assert!(
        rows.iter()
            .all(|r| !r.name.contains("vendor") && !r.name.contains("KiB")),
        "{rows:?}"
    );
    assert_eq!(rows.len(), 5, "{rows:?}");
    assert!(derive(&[], &a.grid.sets, Some(40.0)).is_empty());
}

#[test]
fn dram_is_the_dram_level_else_the_largest_split_set() {
    // The sets as a snapshot holds them.
    let split = |name: &str, b: u64| {
        wire::WorkingSet::from(&WorkingSet {
            name: name.into(),
            level: None,
            size: ArraySize::Split(b),
            note: None,
        })
    };
    let l2 = || wire::WorkingSet::from(&l2());
    let dram = || wire::WorkingSet::from(&dram());
    assert_eq!(dram_set(&[l2(), dram(), split("1 GiB", 1 << 30)]), Some(1));
    assert_eq!(
        dram_set(&[l2(), split("64 MiB", 64 << 20), split("1 GiB", 1 << 30)]),
        Some(2)
    );
    assert_eq!(dram_set(&[l2()]), None);
    assert_eq!(cache_set(&[dram(), l2()]), Some(1));
    assert_eq!(cache_set(&[dram()]), None);
}
