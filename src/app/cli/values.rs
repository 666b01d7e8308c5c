//! The values of the flags that clap takes as text: thread lists, working sets, the kernel's
//! name, the run's label; and the default thread counts. Each error is the text after
//! "--flag VALUE: ", without the flag, which `cli` puts in front.

use crate::base::error::{Error, Result};
use crate::base::quote::quote;
use crate::base::units::parse_size;
use crate::engine::kernel::{Isa, Op, Stores, Variant};
use crate::engine::plan::SetSpec;

/// What is wrong with a flag's value: the text after "--flag VALUE: ", which `on` puts the
/// flag in front of.
#[derive(Debug)]
pub(super) struct ValueError(String);

impl ValueError {
    /// The usage error (exit 2) for `flag` as given (`--threads 0`), its value quoted as
    /// `quote` cuts it: a flag's value can be anything a person pasted.
    pub(super) fn on(self, flag: &str) -> Error {
        Error::usage(format!("{}: {}", quote(flag), self.0))
    }
}

impl From<String> for ValueError {
    fn from(text: String) -> ValueError {
        ValueError(text)
    }
}

impl From<&str> for ValueError {
    fn from(text: &str) -> ValueError {
        ValueError(text.to_string())
    }
}

impl std::ops::Deref for ValueError {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<T: AsRef<str>> PartialEq<T> for ValueError {
    fn eq(&self, other: &T) -> bool {
        self.0 == other.as_ref()
    }
}

/// The parser of a flag of free text (a list: `--op triad,copy`) whose words a shell can
/// complete: it takes any text, read later by the flag's own parser, and names its words as
/// clap's possible values, which `--generate complete-*` offers (help does not list them).
#[derive(Clone)]
pub(super) struct Words(pub(super) fn() -> Vec<&'static str>);

impl clap::builder::TypedValueParser for Words {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        value
            .to_str()
            .map(str::to_string)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.0)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `--op`'s words: each op, and the groups.
pub(super) fn op_words() -> Vec<&'static str> {
    Op::ALL
        .iter()
        .map(|op| op.name())
        .chain(["stream", "all"])
        .collect()
}

/// `--sets`' words: the cache levels and memory (sizes are typed).
pub(super) fn set_words() -> Vec<&'static str> {
    vec!["l1", "l2", "l3", "dram"]
}

/// `--kernel`'s words: auto and the instruction sets (a loop's name is typed).
pub(super) fn kernel_words() -> Vec<&'static str> {
    vec!["auto", "avx512", "avx2", "sse2", "neon", "portable"]
}

/// What each flag that reads a count, a number, a size or a time takes: a negative value given
/// to one is refused with it ("--threads takes counts of 1 or more, not -1").
const NOT_NEGATIVE: &[(&str, &str)] = &[
    ("threads", "counts of 1 or more"),
    ("rounds", "a count of 1 or more"),
    ("round-ms", "milliseconds, 1 or more"),
    ("repeat", "a count of 1 or more"),
    ("contention-rounds", "a count of 1 or more"),
    ("points-per-octave", "a count of 1 or more"),
    ("probe-cpu", "a CPU number, 0 or more"),
    ("membind", "a NUMA node number, 0 or more"),
    ("delays", "delays of 0 or more (e.g. 0,500ns,2us)"),
    ("span", "a time of 0 or more (e.g. 90s, 5m)"),
    (
        "at",
        "a time from the recording's start (e.g. 90s, 4m) or an RFC 3339 time",
    ),
    (
        "from",
        "a time from the recording's start (e.g. 90s, 4m) or an RFC 3339 time",
    ),
    (
        "to",
        "a time from the recording's start (e.g. 90s, 4m) or an RFC 3339 time",
    ),
    ("max-memory", "a size of more than 0 (e.g. 2GiB)"),
    ("record-max", "a size of at least 64KiB (e.g. 256MiB)"),
];

/// Refuses a negative `value` for `--long` when the flag takes no negative value.
pub(super) fn refuse_negative(long: &str, value: &str) -> Result<()> {
    match NOT_NEGATIVE.iter().find(|(flag, _)| *flag == long) {
        Some((_, takes)) if value.trim_start().starts_with('-') => Err(Error::usage(format!(
            "--{long} takes {takes}, not {}",
            value.trim()
        ))),
        _ => Ok(()),
    }
}

/// `--kernel` as given: checked against the table here, against the CPU in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    Auto,
    Isa(Isa),
    /// A loop of the table, by its name there (for the run's stores).
    Loop(&'static str),
}

impl KernelArg {
    pub(super) fn parse(text: &str, stores: Stores) -> Result<KernelArg> {
        if text == "auto" {
            return Ok(KernelArg::Auto);
        }
        if let Ok(isa) = text.parse::<Isa>() {
            return Ok(KernelArg::Isa(isa));
        }
        if let Some(v) = Variant::named(text, stores) {
            return Ok(KernelArg::Loop(v.name));
        }
        // A loop is named by the triad's table (`Variant::named`); the other ops run the
        // default loop of that loop's instruction set.
        let loops: Vec<String> = Variant::all()
            .filter(|v| v.op == Op::Triad && v.stores == stores)
            .map(|v| format!("'{}'", v.name))
            .collect();
        Err(Error::usage(format!(
            "--kernel {}: not auto, an instruction set (avx512, avx2, sse2, neon, portable) \
             or a triad loop for {stores} stores ({})",
            quote(text),
            loops.join(", ")
        )))
    }
}

/// The default thread counts up to `all`: 1, 2, 4, … below it, the counts that fill one node
/// or one socket (`domains`, from `Topology::domain_counts`) below it, and `all` itself;
/// sorted and distinct. Doubling keeps the columns few on hundreds of threads (1 to 256 is
/// nine), and the domain counts are where bandwidth changes its nature.
pub fn default_threads(all: usize, domains: &[usize]) -> Vec<usize> {
    let all = all.max(1);
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|&n| n < all)
        .chain(domains.iter().copied().filter(|&n| n >= 1 && n < all))
        .collect();
    v.push(all);
    v.sort_unstable();
    v.dedup();
    v
}

/// Parses `1,2,4`, `1-4` or a mix; sorted, deduplicated, each at least 1.
pub(super) fn parse_threads(text: &str) -> Result<Vec<usize>, ValueError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err("an empty item in the list".into());
        }
        // "-1" is a negative count, not a range with no start.
        if item.starts_with('-') {
            return Err(format!("'{}' is not a thread count (at least 1)", quote(item)).into());
        }
        let num = |s: &str| -> Result<usize, ValueError> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| format!("'{}' is not a thread count", quote(s)))?;
            if n == 0 {
                return Err("0 is not a thread count (at least 1)".into());
            }
            if n > 4096 {
                return Err(format!("{n} threads is absurd (at most 4096)").into());
            }
            Ok(n)
        };
        match item.split_once('-') {
            Some((a, b)) => {
                if a.trim().is_empty() || b.trim().is_empty() {
                    return Err(format!(
                        "'{item}' is not a range of thread counts (A-B, e.g. 1-4)"
                    )
                    .into());
                }
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("'{item}' is an empty range").into());
                }
                out.extend(a..=b);
            }
            None => out.push(num(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The longest `--name`.
const MAX_NAME: usize = 64;

/// A run's label goes into file names: ASCII letters, digits, `-`, `_` and `.`, not starting
/// with a dot (a hidden file) and at most `MAX_NAME` long.
pub(super) fn check_name(name: &str) -> Result<(), ValueError> {
    if name.is_empty() {
        return Err("a label needs at least one character".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!("at most {MAX_NAME} characters").into());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
    {
        return Err(format!(
            "{bad:?} is not allowed: a label is letters, digits, '-', '_' and '.'"
        )
        .into());
    }
    if name.starts_with('.') {
        return Err("a label cannot start with '.'".into());
    }
    Ok(())
}

/// The longest `--node` name, in bytes: a DNS name's limit, which every host name fits.
pub(super) const MAX_NODE: usize = 253;

/// A node's name reaches tables, metrics, charts and a scheduler's drain reason: at least one
/// character, at most `MAX_NODE` bytes, and no control character (an escape sequence or a
/// newline there would act in each of them rather than show).
pub(super) fn check_node(name: &str) -> Result<(), ValueError> {
    if name.is_empty() {
        return Err("a node's name needs at least one character".into());
    }
    if name.len() > MAX_NODE {
        return Err(format!("{} bytes: at most {MAX_NODE}", name.len()).into());
    }
    if let Some(bad) = name.chars().find(|c| c.is_control()) {
        return Err(format!("{bad:?} is a control character, not allowed in a node's name").into());
    }
    Ok(())
}

/// Parses a percentage as people type it: `5`, `5%`, `2.5 %` (one `%` at most, spaces
/// around it allowed). The flag's own range is checked where the flag is.
pub(super) fn parse_percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    number
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite())
        .ok_or_else(|| {
            format!(
                "'{}' is not a percentage (a number, e.g. 5 or 5%)",
                quote(text)
            )
        })
}

/// Parses `check --min-gbs`: a floor of GB/s, a finite number above zero (a floor of zero or
/// below would pass every node, whatever it measured).
pub(super) fn parse_floor_gbs(text: &str) -> Result<f64, String> {
    let gbs = text
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("'{}' is not a number of GB/s", quote(text)))?;
    if gbs.is_finite() && gbs > 0.0 {
        Ok(gbs)
    } else {
        Err(format!(
            "a floor must be a positive number of GB/s (e.g. 10), not {}",
            text.trim()
        ))
    }
}

/// Parses `--delays`: durations separated by commas, each a whole number of ns or a number
/// with `ns`, `us` (`µs`) or `ms` (`0,500ns,2us,1.5ms`), rising, at most `max_count`, each at
/// most `max_ns`. The error names the item at fault.
pub(super) fn parse_delays(
    text: &str,
    max_count: usize,
    max_ns: u64,
) -> Result<Vec<u64>, ValueError> {
    let mut out: Vec<u64> = Vec::new();
    for item in text.split(',') {
        let t = item.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let scale = match unit.trim() {
            "" | "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            _ => {
                return Err(format!(
                    "'{}' is not a delay (ns, or a number with ns, us or ms, e.g. 2us)",
                    quote(t)
                )
                .into());
            }
        };
        let ns = number
            .parse::<f64>()
            .ok()
            .map(|n| n * scale)
            .filter(|n| n.is_finite() && n.fract() == 0.0)
            .ok_or_else(|| format!("'{}' is not a whole number of ns", quote(t)))?;
        if ns > max_ns as f64 {
            return Err(format!("'{}' is over {} ms", quote(t), max_ns / 1_000_000).into());
        }
        let ns = ns as u64;
        if let Some(&last) = out.last()
            && ns <= last
        {
            return Err(format!(
                "'{}' is not above the delay before it: give them rising",
                quote(t)
            )
            .into());
        }
        out.push(ns);
    }
    if out.len() > max_count {
        return Err(format!("{} delays: at most {max_count}", out.len()).into());
    }
    Ok(out)
}

/// The units a size in `--sets` may be written in, exactly so: binary (K, M, G, T and KiB,
/// MiB, GiB, TiB), decimal (kB, KB, MB, GB, TB), bytes (B or no unit).
const SET_UNITS: &str = "K, M, G, KiB, MiB, GiB, TiB (1024s); kB, KB, MB, GB, TB (1000s); B";

/// Whether a unit is spelled as `SET_UNITS` lists it (a single letter in either case).
fn plain_unit(unit: &str) -> bool {
    matches!(
        unit,
        "" | "B"
            | "k"
            | "K"
            | "m"
            | "M"
            | "g"
            | "G"
            | "t"
            | "T"
            | "KiB"
            | "MiB"
            | "GiB"
            | "TiB"
            | "kB"
            | "KB"
            | "MB"
            | "GB"
            | "TB"
    )
}

/// Refuses a size in a `--sets` item whose unit is spelled ambiguously: `64Mib` (a mebibit?),
/// `64mb` (millibits? MB or MiB?), `64b`. Read as they were, they would size arrays by a guess
/// the person never sees; the error lists the spellings that work.
fn check_unit_spelling(item: &str) -> Result<(), ValueError> {
    let t = item.trim();
    let t = t
        .strip_suffix("/thread")
        .or_else(|| t.strip_suffix("/t"))
        .unwrap_or(t);
    for size in t.split("..") {
        let size = size.trim().trim_end_matches("/thread");
        let at = size
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(size.len());
        let (number, unit) = size.split_at(at);
        let unit = unit.trim();
        if !number.is_empty() && !plain_unit(unit) {
            return Err(format!(
                "'{}': the unit '{unit}' is ambiguous or unknown; write sizes as {SET_UNITS}",
                item.trim()
            )
            .into());
        }
    }
    Ok(())
}

/// A size flag's value (`--max-memory`, `--record-max`): spelled as `--sets` spells sizes
/// (`check_unit_spelling`), read by the one size parser, at least `least` bytes (else `short`).
pub(super) fn parse_size_flag(text: &str, least: u64, short: &str) -> Result<u64, ValueError> {
    check_unit_spelling(text)?;
    let number = text
        .trim()
        .trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if number.trim().parse::<f64>().is_ok_and(|n| n == 0.0) {
        return Err(short.into());
    }
    match parse_size(text) {
        Ok(bytes) if bytes >= least => Ok(bytes),
        Ok(_) => Err(short.into()),
        Err(e) => Err(e.to_string().into()),
    }
}

/// The least an explicit size can be: arrays are cut into 128-byte lines, so a smaller size
/// would run arrays of one line under its own label. Refused rather than rounded up, so that a
/// label is always what ran.
const MIN_SET_BYTES: u64 = 128;

/// Parses a comma-separated list of working sets; a range in it (`16KiB..1MiB`) is measured at
/// `per_octave` sizes per doubling. A size below `MIN_SET_BYTES` is refused.
pub(super) fn parse_sets(text: &str, per_octave: u32) -> Result<Vec<SetSpec>, ValueError> {
    text.split(',')
        .map(|s| {
            if s.trim().is_empty() {
                return Err("an empty item in the list".to_string().into());
            }
            check_unit_spelling(s)?;
            let set = SetSpec::parse_with(s, per_octave).map_err(|e| e.to_string())?;
            match set {
                SetSpec::Split { bytes, .. } | SetSpec::PerThread { bytes, .. }
                    if bytes < MIN_SET_BYTES =>
                {
                    Err(format!(
                        "'{}' is below {MIN_SET_BYTES} B, the least an array can be (one cache \
                         line)",
                        s.trim()
                    )
                    .into())
                }
                _ => Ok(set),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists_and_ranges() {
        assert_eq!(parse_threads("1,2,4").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_threads("4,1-3,2").unwrap(), vec![1, 2, 3, 4]);
        assert!(parse_threads("0").unwrap_err().contains("at least 1"));
        assert!(parse_threads("1,,2").is_err());
        assert!(parse_threads("x").is_err());
        assert!(parse_threads("3-1").is_err());
        assert!(parse_threads("100000").unwrap_err().contains("absurd"));
        // The item as given, quoted: "-1" once said "'' is not a thread count".
        assert_eq!(
            parse_threads("-1").unwrap_err(),
            "'-1' is not a thread count (at least 1)"
        );
        assert_eq!(
            parse_threads("1,2-").unwrap_err(),
            "'2-' is not a range of thread counts (A-B, e.g. 1-4)"
        );
    }

    #[test]
    fn delays_are_ns_or_have_a_unit_and_rise() {
        assert_eq!(
            parse_delays("0, 500ns,2us,1.5ms,3µs0", 32, 10_000_000).unwrap_err(),
            "'3µs0' is not a delay (ns, or a number with ns, us or ms, e.g. 2us)"
        );
        assert_eq!(
            parse_delays("0, 500ns,2us,1.5ms", 32, 10_000_000).unwrap(),
            vec![0, 500, 2_000, 1_500_000]
        );
        for (text, says) in [
            ("", "'' is not a whole number of ns"),
            ("0,,5", "'' is not a whole number of ns"),
            ("1.5", "'1.5' is not a whole number of ns"),
            ("-5", "'-5' is not a delay"),
            ("5,5", "'5' is not above the delay before it"),
            ("10,5", "'5' is not above the delay before it"),
            ("11ms", "'11ms' is over 10 ms"),
        ] {
            let e = parse_delays(text, 32, 10_000_000).unwrap_err();
            assert!(e.starts_with(says), "{text:?}: {e}");
        }
        assert_eq!(
            parse_delays("1,2,3", 2, 10_000_000).unwrap_err(),
            "3 delays: at most 2"
        );
    }

    #[test]
    fn percentages_with_or_without_the_sign() {
        for (text, want) in [("5", 5.0), ("5%", 5.0), (" 2.5 % ", 2.5), ("-3%", -3.0)] {
            assert_eq!(parse_percent(text), Ok(want), "{text:?}");
        }
        for text in ["", "%", "5%%", "five", "5 percent", "inf", "NaN%"] {
            assert!(parse_percent(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn ambiguous_units_in_sets_are_refused_with_the_spellings_that_work() {
        for ok in [
            "64MiB",
            "64MB",
            "64M",
            "512k",
            "1.5GiB",
            "64 MiB",
            "4096",
            "16KiB/thread",
            "16KiB..1MiB",
            "16KiB/thread..1MiB/thread",
            "l2",
            "dram",
            "10kB",
            "128B",
        ] {
            assert!(parse_sets(ok, 2).is_ok(), "{ok}: {:?}", parse_sets(ok, 2));
        }
        for bad in [
            "64Mib",
            "64mb",
            "64mib",
            "64MIB",
            "1Gb",
            "16kib/thread",
            "16KiB..1mb",
            "64b",
        ] {
            let e = parse_sets(bad, 2).unwrap_err();
            assert!(
                e.contains("ambiguous") && e.contains("KiB, MiB"),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            parse_sets("l1,64Mib", 2).unwrap_err(),
            format!("'64Mib': the unit 'Mib' is ambiguous or unknown; write sizes as {SET_UNITS}")
        );
    }

    #[test]
    fn default_thread_counts() {
        assert_eq!(default_threads(1, &[]), vec![1]);
        assert_eq!(default_threads(2, &[]), vec![1, 2]);
        assert_eq!(default_threads(6, &[]), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(8, &[]), vec![1, 2, 4, 8]);
        // Nodes of 12 and sockets of 24 CPUs among 48; counts above `all` left out.
        assert_eq!(
            default_threads(48, &[12, 24]),
            vec![1, 2, 4, 8, 12, 16, 24, 32, 48]
        );
        assert_eq!(default_threads(20, &[12, 24]), vec![1, 2, 4, 8, 12, 16, 20]);
        assert_eq!(default_threads(0, &[0]), vec![1]);
    }
}
