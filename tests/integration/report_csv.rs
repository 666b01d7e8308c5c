//! The CSV snapshot parses (quotes respected) into the header and one row per cell, with plain
//! numbers that read back as the figures.

use crate::support::csv::parse_csv;
use crate::support::report_fixtures::*;
use stream_top::show::report::{CSV_COLUMNS, to_csv};

#[test]
fn parses_into_a_header_and_a_row_per_cell() {
    for snap in [snapshot_a(), snapshot_b(), m4_pro_reference_snapshot()] {
        let records = parse_csv(&to_csv(&snap));
        assert_eq!(records[0], CSV_COLUMNS);
        assert_eq!(records.len(), snap.cells.len() + 1);
        for (row, cell) in records[1..].iter().zip(&snap.cells) {
            assert_eq!(row.len(), CSV_COLUMNS.len());
            let col = |name: &str| &row[CSV_COLUMNS.iter().position(|c| *c == name).unwrap()];
            assert_eq!(col("label"), &cell.label);
            assert_eq!(col("threads").parse::<usize>().unwrap(), cell.threads);
            assert_eq!(col("rerun").parse::<bool>().unwrap(), cell.rerun);
            // Numbers read back exactly: no units, no rounding.
            assert_eq!(
                col("median_gbs").parse::<f64>().unwrap(),
                cell.figures.median_gbs
            );
            assert_eq!(col("cv").parse::<f64>().unwrap(), cell.figures.cv);
            assert_eq!(
                col("late_rounds").parse::<u32>().unwrap(),
                cell.figures.late_rounds
            );
            match cell.figures.scaling {
                Some(s) => assert_eq!(col("scaling").parse::<f64>().unwrap(), s),
                None => assert_eq!(col("scaling"), ""),
            }
        }
    }
}

#[test]
fn the_rerun_label_with_its_comma_is_quoted() {
    let text = to_csv(&snapshot_a());
    assert!(
        text.contains("\"85 KiB/thread (l2), run again last\","),
        "{text}"
    );
    let records = parse_csv(&text);
    let last = records.last().unwrap();
    assert_eq!(last[0], "85 KiB/thread (l2), run again last");
    assert_eq!(
        last[CSV_COLUMNS.iter().position(|c| *c == "cpus").unwrap()],
        "0"
    );
}

#[test]
fn missing_figures_are_empty_fields() {
    let records = parse_csv(&to_csv(&snapshot_b()));
    let idx = |name: &str| CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
    for row in &records[1..] {
        assert_eq!(row[idx("vendor_gbs")], "");
        assert_eq!(row[idx("vendor_fraction")], "");
    }
    let failed: Vec<_> = records[1..]
        .iter()
        .filter(|r| r[idx("checksum_ok")] == "false")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0][idx("label")], "128 MiB (dram)");
    assert_eq!(failed[0][idx("threads")], "2");
    assert_eq!(failed[0][idx("checksum_actual")], "268173311");
}

/// One meaning per field: a share is a fraction in the CSV and the JSON, a percentage in the
/// Markdown; an explicit size says where it lands.
#[test]
fn shares_are_fractions_here_and_percentages_in_markdown() {
    let mut snap = snapshot_a();
    snap.grid.sets[1].level = None;
    snap.grid.sets[1].lands_in = Some(stream_top::show::report::model::Level::Dram);
    let rows = parse_csv(&to_csv(&snap));
    let col = |name: &str| CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
    let cell = &snap.cells[0];
    let row = &rows[1];
    assert_eq!(row[col("cv")].parse::<f64>().unwrap(), cell.figures.cv);
    assert!(cell.figures.cv < 0.1);
    let fraction: f64 = row[col("vendor_fraction")].parse().unwrap();
    assert_eq!(Some(fraction), cell.figures.vendor_fraction);
    let md = stream_top::show::report::to_markdown(&snap);
    assert!(md.contains(&format!("{:.1} %", fraction * 100.0)), "{md}");
    let dram = rows
        .iter()
        .find(|r| r[col("set_label")] == "128 MiB (dram)")
        .unwrap();
    assert_eq!(dram[col("lands_in")], "dram");
    assert_eq!(rows[1][col("lands_in")], "");
}
