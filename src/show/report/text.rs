//! Number formats and plurals the writers share: plain functions of plain values.

use crate::base::units;
use std::collections::BTreeSet;

pub(crate) use crate::base::units::threads_phrase;

/// `85 KiB/thread (l2) × 2 threads`, `…, run again last × 1 thread`: names a cell in prose.
pub(crate) fn cell_name(label: &str, threads: usize) -> String {
    format!("{label} × {}", threads_phrase(threads))
}

/// A finite value with `decimals`, or `–`.
pub(crate) fn num(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "–".to_string(),
    }
}

/// `273 GB/s`, `51.2 GB/s`: no trailing `.0`.
pub(crate) fn gbs_plain(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{} GB/s", v.round() as i64)
    } else {
        format!("{v:.1} GB/s")
    }
}

/// CPU ids as ranges: "0-3, 8, 10-11".
pub(crate) fn cpu_ranges(cpus: &BTreeSet<i32>) -> String {
    units::cpu_ranges(cpus.iter().copied()).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_plurals() {
        let set: BTreeSet<i32> = [0, 1, 2, 3, 8, 10, 11, -1].into_iter().collect();
        assert_eq!(cpu_ranges(&set), "0-3, 8, 10-11");
        assert_eq!(threads_phrase(1), "1 thread");
        assert_eq!(threads_phrase(14), "14 threads");
        assert_eq!(gbs_plain(273.0), "273 GB/s");
        assert_eq!(gbs_plain(51.2), "51.2 GB/s");
        assert_eq!(num(None, 2), "–");
        assert_eq!(num(Some(f64::NAN), 2), "–");
        assert_eq!(num(Some(1.005), 1), "1.0");
    }
}
