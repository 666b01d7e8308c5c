//! The CSV snapshot: one row per cell, every figure, plain numbers (no units) for scripts.
//! Quoting follows RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.

use super::lines::level_name;
use super::model::{ArraySize, CellSnapshot, Snapshot};

/// The header row's fields, in order.
pub const CSV_COLUMNS: [&str; 27] = [
    "label",
    "set_label",
    "set_name",
    "level",
    "size_kind",
    "size_bytes",
    "threads",
    "rerun",
    "rounds",
    "median_gbs",
    "best_gbs",
    "cv",
    "vendor_gbs",
    "vendor_fraction",
    "scaling",
    "fastest_thread_gbs",
    "slowest_thread_gbs",
    "late_rounds",
    "bytes_per_cycle",
    "checksum_ok",
    "checksum_expected",
    "checksum_actual",
    "checksum_failures",
    "cpus",
    "migrations",
    "array_bytes",
    "huge_bytes",
];

/// A field, quoted when it must be.
pub(crate) fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A number as Rust prints it (shortest form that reads back the same); empty when unknown.
fn number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => String::new(),
    }
}

fn row(c: &CellSnapshot, vendor: Option<f64>) -> Vec<String> {
    let f = &c.figures;
    let (size_kind, size_bytes) = match c.size {
        ArraySize::PerThread(b) => ("per_thread", b),
        ArraySize::Split(b) => ("split", b),
    };
    let cpus: Vec<String> = c.cpus.iter().map(|c| c.to_string()).collect();
    vec![
        c.label.clone(),
        c.set_label.clone(),
        c.set_name.clone(),
        c.level
            .map(|l| level_name(l).to_string())
            .unwrap_or_default(),
        size_kind.to_string(),
        size_bytes.to_string(),
        c.threads.to_string(),
        c.rerun.to_string(),
        f.rounds.to_string(),
        number(Some(f.median_gbs)),
        number(Some(f.best_gbs)),
        number(Some(f.cv)),
        number(vendor),
        number(f.vendor_fraction),
        number(f.scaling),
        number(Some(f.fastest_thread_gbs)),
        number(Some(f.slowest_thread_gbs)),
        f.late_rounds.to_string(),
        number(f.bytes_per_cycle),
        c.checksum
            .as_ref()
            .map(|k| (k.ok && c.checksum_failures == 0).to_string())
            .unwrap_or_default(),
        c.checksum
            .as_ref()
            .map(|k| k.expected.to_string())
            .unwrap_or_default(),
        number(c.checksum.as_ref().map(|k| k.actual)),
        c.checksum_failures.to_string(),
        cpus.join(" "),
        c.migrations.to_string(),
        c.array_bytes.to_string(),
        c.huge_bytes.to_string(),
    ]
}

/// The CSV snapshot: the header row, then one row per cell.
pub fn to_csv(s: &Snapshot) -> String {
    let mut out = String::new();
    let line = |fields: Vec<String>| {
        fields
            .iter()
            .map(|f| field(f))
            .collect::<Vec<_>>()
            .join(",")
            + "\n"
    };
    out.push_str(&line(CSV_COLUMNS.iter().map(|s| s.to_string()).collect()));
    for c in &s.cells {
        out.push_str(&line(row(c, s.vendor_gbs())));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("128 MiB (dram)"), "128 MiB (dram)");
        assert_eq!(field("a, run again last"), "\"a, run again last\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(number(Some(0.1)), "0.1");
        assert_eq!(number(Some(f64::NAN)), "");
        assert_eq!(number(None), "");
    }
}
