//! Size sweeps: `--sets 16KiB..1GiB` (per array, split across the threads) or
//! `--sets 4KiB/thread..64MiB/thread` measures sizes spaced evenly on a log scale from one end
//! to the other, `--points-per-octave` of them per doubling, to find where each cache level
//! ends. Every size becomes a row of the grid.
//!
//! Both ends are measured as written. Between them the sizes are the geometric steps rounded to
//! whole lines of the engine's partition boundary (128 bytes, which the plan passes in), so a
//! range of powers of two keeps its powers of two exact (16 KiB, 22.6 KiB, 32 KiB, …). A size is labelled in the user's unit
//! family (KiB or KB) to three significant digits, or more where three would give two sizes one
//! label; the ends keep the user's own spelling.

use crate::base::error::{Error, Result};
use crate::base::units::{UnitFamily, format_size, parse_size, spelled_size};

/// Points per octave when `--points-per-octave` is not given: a size and its √2 multiple, so a
/// cliff is placed within a factor of 1.4.
pub(crate) const DEFAULT_POINTS_PER_OCTAVE: u32 = 2;

/// The most points per octave: at 16 neighbours differ by 4.4 %, about what two medians of the
/// same size differ by on a busy machine, so finer steps show noise rather than the caches.
const MAX_POINTS_PER_OCTAVE: u32 = 16;

/// The most sizes one range gives: 16 KiB to 1 GiB at 4 per octave is 65; a headless run of
/// 128 sizes at a few thread counts already takes the better part of an hour.
const MAX_SWEEP_POINTS: usize = 128;

/// `--points-per-octave N`, checked: 1 to `MAX_POINTS_PER_OCTAVE`.
pub(crate) fn check_points_per_octave(n: u32) -> Result<u32> {
    if (1..=MAX_POINTS_PER_OCTAVE).contains(&n) {
        Ok(n)
    } else {
        Err(Error::usage(format!(
            "--points-per-octave {n}: must be from 1 to {MAX_POINTS_PER_OCTAVE}"
        )))
    }
}

/// One size of a sweep: bytes per array (per thread, or split) and its label without the
/// `/thread` suffix (`22.6 KiB`, `1 GiB`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepPoint {
    pub(crate) bytes: u64,
    pub(crate) label: String,
}

/// A range of sizes from `--sets`, with the points it is measured at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeRange {
    /// As written, trimmed: `16KiB..1GiB`.
    pub(crate) text: String,
    /// `SIZE/thread..SIZE/thread`: each thread streams arrays of each size.
    pub(crate) per_thread: bool,
    pub(crate) per_octave: u32,
    /// Smallest first; at least two.
    pub(crate) points: Vec<SweepPoint>,
}

impl SizeRange {
    /// Whether an item of `--sets` is a range (`A..B`).
    pub(crate) fn is_range(text: &str) -> bool {
        text.contains("..")
    }

    /// Parses `A..B` or `A/thread..B/thread` into its points at `per_octave` (1 to
    /// `MAX_POINTS_PER_OCTAVE`) per doubling, the sizes between the ends whole multiples of
    /// `align` bytes.
    pub fn parse(text: &str, per_octave: u32, align: u64) -> Result<SizeRange> {
        let text = text.trim();
        let bad = |why: String| Error::usage(format!("'{text}' {why}"));
        let per_octave = check_points_per_octave(per_octave)?;
        let Some((from, to)) = text.split_once("..") else {
            return Err(bad("is not a range (e.g. 16KiB..1GiB)".into()));
        };
        let (from, to) = (from.trim(), to.trim());
        if from.is_empty() || to.is_empty() || to.contains("..") {
            return Err(bad(
                "needs two ends: SIZE..SIZE (e.g. 16KiB..1GiB) or SIZE/thread..SIZE/thread".into(),
            ));
        }
        let (from, to, per_thread) = match (per_thread_end(from), per_thread_end(to)) {
            (Some(a), Some(b)) => (a, b, true),
            (None, None) => (from, to, false),
            _ => {
                return Err(bad(
                    "has one end per thread and the other not: write both as SIZE/thread \
                     (per array per thread) or neither (per array, split across the threads)"
                        .into(),
                ));
            }
        };
        let (lo, hi) = (parse_size(from)?, parse_size(to)?);
        if lo == hi {
            return Err(bad(
                "has two equal ends: give one size alone, or two different ends".into(),
            ));
        }
        if lo > hi {
            return Err(bad(format!(
                "runs backwards: the smaller size comes first ({to}..{from})"
            )));
        }
        let sizes = geometric_sizes(lo, hi, per_octave, align);
        if sizes.len() > MAX_SWEEP_POINTS {
            return Err(bad(format!(
                "gives {} sizes at {per_octave} per octave, and a sweep has at most \
                 {MAX_SWEEP_POINTS}: use fewer points per octave or a narrower range",
                sizes.len()
            )));
        }
        if sizes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad(format!(
                "has sizes too close to tell apart on {align}-byte lines at {per_octave} \
                 per octave: start higher or use fewer points per octave"
            )));
        }
        let family = match (UnitFamily::of(from), UnitFamily::of(to)) {
            (UnitFamily::Decimal, UnitFamily::Decimal) => UnitFamily::Decimal,
            _ => UnitFamily::Binary,
        };
        let labels = labels(&sizes, family, spelled_size(from), spelled_size(to));
        Ok(SizeRange {
            text: text.to_string(),
            per_thread,
            per_octave,
            points: sizes
                .into_iter()
                .zip(labels)
                .map(|(bytes, label)| SweepPoint { bytes, label })
                .collect(),
        })
    }

    /// The largest size (the last point).
    pub fn largest(&self) -> &SweepPoint {
        self.points.last().expect("a range has at least two points")
    }
}

/// The size of a per-thread end (`4KiB` of `4KiB/thread`); None for an end that is not.
fn per_thread_end(end: &str) -> Option<&str> {
    end.strip_suffix("/thread")
        .or_else(|| end.strip_suffix("/t"))
        .map(str::trim)
}

/// `lo`, `hi` and the sizes between them: `steps` equal ratios, `steps` the octaves times
/// `per_octave`, rounded (at least 1), so the spacing is as close to `per_octave` per doubling
/// as whole steps allow and both ends are points. Sizes between are rounded to whole multiples
/// of `align` (at least one).
fn geometric_sizes(lo: u64, hi: u64, per_octave: u32, align: u64) -> Vec<u64> {
    let align = align.max(1);
    let octaves = (hi as f64 / lo as f64).log2();
    let steps = ((octaves * per_octave as f64).round() as usize).max(1);
    (0..=steps)
        .map(|k| match k {
            0 => lo,
            k if k == steps => hi,
            k => {
                let exact = lo as f64 * (octaves * k as f64 / steps as f64).exp2();
                ((exact / align as f64).round() as u64).max(1) * align
            }
        })
        .collect()
}

/// Labels for `sizes` in `family`: the ends as the user spelled them, the others to three
/// significant digits, or four or five where three would give two sizes the same label.
fn labels(sizes: &[u64], family: UnitFamily, first: String, last: String) -> Vec<String> {
    let with = |significant: usize| -> Vec<String> {
        let n = sizes.len();
        sizes
            .iter()
            .enumerate()
            .map(|(i, &b)| match i {
                0 => first.clone(),
                i if i + 1 == n => last.clone(),
                _ => format_size(b, family, significant),
            })
            .collect()
    };
    let distinct = |labels: &[String]| {
        let mut sorted = labels.to_vec();
        sorted.sort();
        sorted.dedup();
        sorted.len() == labels.len()
    };
    (3..=5)
        .map(with)
        .find(|l| distinct(l))
        // Sizes on distinct 128-byte lines always differ in bytes.
        .unwrap_or_else(|| sizes.iter().map(|b| format!("{b} B")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    /// The engine's partition line.
    const LINE: u64 = 128;

    fn parse(text: &str, per_octave: u32) -> Result<SizeRange> {
        SizeRange::parse(text, per_octave, LINE)
    }

    #[test]
    fn two_per_octave_from_16kib_to_1mib() {
        let r = parse("16KiB..1MiB", 2).unwrap();
        assert!(!r.per_thread);
        let bytes: Vec<u64> = r.points.iter().map(|p| p.bytes).collect();
        assert_eq!(
            bytes,
            [
                16384, 23168, 32768, 46336, 65536, 92672, 131072, 185344, 262144, 370688, 524288,
                741504, 1048576
            ]
        );
        let labels: Vec<&str> = r.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "16 KiB", "22.6 KiB", "32 KiB", "45.2 KiB", "64 KiB", "90.5 KiB", "128 KiB",
                "181 KiB", "256 KiB", "362 KiB", "512 KiB", "724 KiB", "1 MiB"
            ]
        );
    }

    #[test]
    fn sizes_between_the_ends_sit_on_128_byte_lines() {
        for (lo, hi, n) in [
            (10_000, 1_000_000, 3),
            (4 * KIB, 64 << 20, 16),
            (1000, 5000, 1),
        ] {
            let s = geometric_sizes(lo, hi, n, LINE);
            assert_eq!((s[0], *s.last().unwrap()), (lo, hi));
            assert!(s[1..s.len() - 1].iter().all(|b| b % LINE == 0), "{s:?}");
            assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
        }
        // Not a whole number of octaves: the steps stretch to end on the upper end.
        assert_eq!(geometric_sizes(16 * KIB, 1000 * KIB, 2, LINE).len(), 13);
        // Less than half a step apart: the two ends alone.
        assert_eq!(
            geometric_sizes(16 * KIB, 17 * KIB, 2, LINE),
            [16 * KIB, 17 * KIB]
        );
    }

    #[test]
    fn per_thread_ranges_and_the_users_units() {
        let r = parse("4KiB/thread..64MiB/thread", 1).unwrap();
        assert!(r.per_thread);
        assert_eq!(r.points.len(), 15);
        assert_eq!(r.points[0].label, "4 KiB");
        assert_eq!(r.largest().label, "64 MiB");
        assert_eq!(r.largest().bytes, 64 << 20);
        let d = parse("10KB..1MB", 2).unwrap();
        let labels: Vec<&str> = d.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels[0], "10 KB");
        assert_eq!(labels[1], "14.2 KB");
        assert_eq!(*labels.last().unwrap(), "1 MB");
        assert!(
            labels
                .iter()
                .all(|l| l.ends_with(" KB") || l.ends_with(" MB"))
        );
    }

    #[test]
    fn fine_steps_get_the_decimals_that_tell_them_apart() {
        let r = parse("1MiB..2MiB", 16).unwrap();
        let labels: Vec<&str> = r.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(&labels[..3], ["1 MiB", "1.04 MiB", "1.09 MiB"]);
        let mut distinct = labels.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 17);
    }

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        let err = |t: &str, n: u32| parse(t, n).unwrap_err().to_string();
        assert!(err("1MiB..16KiB", 2).contains("runs backwards"));
        assert!(err("1MiB..16KiB", 2).contains("(16KiB..1MiB)"));
        assert!(err("0..1MiB", 2).contains("zero"));
        assert!(err("4KiB/thread..64MiB", 2).contains("one end per thread"));
        assert!(err("4KiB..64MiB/thread", 2).contains("one end per thread"));
        assert!(err("16KiB..16KiB", 2).contains("two equal ends"));
        assert!(err("..1MiB", 2).contains("needs two ends"));
        assert!(err("1KiB..2KiB..4KiB", 2).contains("needs two ends"));
        assert!(err("16KiB..1XB", 2).contains("unknown unit"));
        let many = err("16KiB..1GiB", 16);
        assert!(
            many.contains("257 sizes") && many.contains("at most 128"),
            "{many}"
        );
        assert!(err("128..1KiB", 16).contains("too close"));
        assert!(err("16KiB..1MiB", 0).starts_with("--points-per-octave 0"));
        assert!(err("16KiB..1MiB", 17).contains("from 1 to 16"));
        assert!(parse("16KiB..1GiB", 4).is_ok());
    }
}
