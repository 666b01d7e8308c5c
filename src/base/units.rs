//! Quantities as people write them and as stream-top prints them: byte sizes (`64MiB`,
//! `1.5 GB`), lists of CPUs (`0-3`, `8`) and counts with their nouns (`3 classes`).

use crate::base::error::{Error, Result};
use crate::base::quote::quote;

/// Parses a size: a number with an optional unit. Binary units (KiB, MiB, GiB, K, M, G) and
/// decimal ones (KB, MB, GB) are both accepted; a bare number is bytes. Zero is refused.
pub fn parse_size(text: &str) -> Result<u64> {
    parse_size_text(text)
}

/// A size's number and unit as written: `("64", "MB")` from `64MB`.
fn split_size(text: &str) -> (&str, &str) {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    (num, unit.trim())
}

/// A unit's multiplier and its spelling in labels, from any case of it (`k`, `KiB`, `mb`).
fn unit_of(unit: &str) -> Option<(f64, &'static str)> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" | "b" => (1.0, "B"),
        "k" | "kib" => (1024.0, "KiB"),
        "m" | "mib" => (1024.0 * 1024.0, "MiB"),
        "g" | "gib" => (1024.0 * 1024.0 * 1024.0, "GiB"),
        "t" | "tib" => (1024.0f64.powi(4), "TiB"),
        "kb" => (1e3, "KB"),
        "mb" => (1e6, "MB"),
        "gb" => (1e9, "GB"),
        "tb" => (1e12, "TB"),
        _ => return None,
    })
}

/// `1 thread`, `8 threads`: the one place a count of threads is put in words.
pub(crate) fn threads_phrase(n: usize) -> String {
    if n == 1 {
        "1 thread".to_string()
    } else {
        format!("{n} threads")
    }
}

/// A size as the user wrote it, in the label's spelling: the same number and unit, a space
/// between them, the unit's case made regular (`64MB` → `64 MB`, `1.5gib` → `1.5 GiB`,
/// `512k` → `512 KiB`). For text `parse_size` accepts; anything else comes back trimmed.
pub(crate) fn spelled_size(text: &str) -> String {
    let (num, unit) = split_size(text);
    match unit_of(unit) {
        Some((_, spelled)) if !num.is_empty() => format!("{num} {spelled}"),
        _ => text.trim().to_string(),
    }
}

fn parse_size_text(text: &str) -> Result<u64> {
    let (num, unit) = split_size(text);
    if num.is_empty() {
        return Err(Error::usage(format!(
            "'{}' is not a size (expected e.g. 64MiB, 512KiB, 1GB)",
            quote(text)
        )));
    }
    let value: f64 = num.parse().map_err(|_| {
        Error::usage(format!(
            "'{}' is not a size (expected e.g. 64MiB, 512KiB, 1GB)",
            quote(text)
        ))
    })?;
    let Some((mult, _)) = unit_of(unit) else {
        return Err(Error::usage(format!(
            "'{text}': unknown unit '{}' (use KiB, MiB, GiB, KB, MB or GB)",
            unit.to_ascii_lowercase()
        )));
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes >= 2f64.powi(60) {
        return Err(Error::usage(format!("'{text}' is too large")));
    }
    let bytes = bytes.round() as u64;
    if bytes == 0 {
        return Err(Error::usage(format!(
            "'{text}' is zero; a working set needs at least one element"
        )));
    }
    Ok(bytes)
}

/// Whether a size was written in binary units (KiB, MiB: 1024s) or decimal ones (KB, MB: 1000s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitFamily {
    Binary,
    Decimal,
}

impl UnitFamily {
    /// The family of a size as written: decimal for KB, MB, GB and TB; binary otherwise (a
    /// bare number of bytes too).
    pub fn of(text: &str) -> UnitFamily {
        match unit_of(split_size(text).1) {
            Some((_, "KB" | "MB" | "GB" | "TB")) => UnitFamily::Decimal,
            _ => UnitFamily::Binary,
        }
    }
}

/// Formats bytes in a unit family to `significant` digits (whole numbers keep all theirs),
/// trailing zeros dropped: `22.6 KiB`, `724 KiB`, `1.04 MiB`, `16 KiB`; `22.7 KB` in the
/// decimal family.
pub(crate) fn format_size(bytes: u64, family: UnitFamily, significant: usize) -> String {
    let (step, units) = match family {
        UnitFamily::Binary => (1024.0, ["B", "KiB", "MiB", "GiB", "TiB"]),
        UnitFamily::Decimal => (1000.0, ["B", "KB", "MB", "GB", "TB"]),
    };
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= step && unit + 1 < units.len() {
        value /= step;
        unit += 1;
    }
    let whole_digits = if value >= 1.0 {
        value.log10().floor() as usize + 1
    } else {
        1
    };
    let decimals = significant.saturating_sub(whole_digits);
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text} {}", units[unit])
}

/// Formats bytes with a binary unit: `32 KiB`, `1.5 MiB`, `128 MiB`, `1.2 GiB`.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || (value - value.round()).abs() < 0.05 {
        format!("{} {}", value.round() as u64, UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// CPU ids as ranges of consecutive ids, `["0-3", "8", "10-11"]`; unknown ids (negative) are
/// left out.
pub(crate) fn cpu_ranges(cpus: impl IntoIterator<Item = i32>) -> Vec<String> {
    let mut ids: Vec<i32> = cpus.into_iter().filter(|c| *c >= 0).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ids[i], ids[j])
        } else {
            ids[i].to_string()
        });
        i = j + 1;
    }
    out
}

/// A count with its noun, plural where it is not one: "1 node", "2 nodes", "3 classes".
pub fn count(n: usize, noun: &str) -> String {
    match (n, noun.ends_with('s')) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{n} {noun}es"),
        _ => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_threads_in_words() {
        assert_eq!(threads_phrase(1), "1 thread");
        assert_eq!(threads_phrase(2), "2 threads");
    }

    #[test]
    fn parses_binary_and_decimal_units() {
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("64 MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size("4096").unwrap(), 4096);
    }

    #[test]
    fn spells_sizes_as_the_user_wrote_them() {
        assert_eq!(spelled_size("64MB"), "64 MB");
        assert_eq!(spelled_size(" 64 mib "), "64 MiB");
        assert_eq!(spelled_size("1.5gib"), "1.5 GiB");
        assert_eq!(spelled_size("512k"), "512 KiB");
        assert_eq!(spelled_size("4096"), "4096 B");
    }

    #[test]
    fn refuses_zero_garbage_and_unknown_units() {
        assert!(parse_size("0").unwrap_err().to_string().contains("zero"));
        assert!(parse_size("0MiB").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(
            parse_size("12XB")
                .unwrap_err()
                .to_string()
                .contains("unknown unit")
        );
        assert!(parse_size("-5M").is_err());
        assert!(parse_size("1e30").is_err());
    }

    #[test]
    fn cpu_ranges_join_consecutive_ids() {
        assert_eq!(
            cpu_ranges([8, 0, 1, 2, 3, 10, 11, -1, 3]),
            ["0-3", "8", "10-11"]
        );
        assert!(cpu_ranges([-1]).is_empty());
    }

    #[test]
    fn formats_sizes_in_the_users_family_with_a_chosen_precision() {
        assert_eq!(UnitFamily::of("16KiB"), UnitFamily::Binary);
        assert_eq!(UnitFamily::of("16k"), UnitFamily::Binary);
        assert_eq!(UnitFamily::of("4096"), UnitFamily::Binary);
        assert_eq!(UnitFamily::of("10MB"), UnitFamily::Decimal);
        assert_eq!(UnitFamily::of("1 gb"), UnitFamily::Decimal);
        assert_eq!(format_size(23168, UnitFamily::Binary, 3), "22.6 KiB");
        assert_eq!(format_size(741504, UnitFamily::Binary, 3), "724 KiB");
        assert_eq!(format_size(16384, UnitFamily::Binary, 3), "16 KiB");
        assert_eq!(format_size(1_090_000, UnitFamily::Binary, 3), "1.04 MiB");
        assert_eq!(format_size(22_656, UnitFamily::Decimal, 3), "22.7 KB");
        assert_eq!(format_size(1 << 30, UnitFamily::Binary, 3), "1 GiB");
        assert_eq!(format_size(100, UnitFamily::Decimal, 3), "100 B");
        assert_eq!(format_size(1_048_000, UnitFamily::Binary, 4), "1023 KiB");
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_bytes(32 << 10), "32 KiB");
        assert_eq!(format_bytes(3 << 19), "1.5 MiB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_bytes(128 << 20), "128 MiB");
    }

    #[test]
    fn a_count_takes_its_plural() {
        assert_eq!(count(1, "outlier"), "1 outlier");
        assert_eq!(count(0, "outlier"), "0 outliers");
        assert_eq!(count(3, "class"), "3 classes");
    }
}
