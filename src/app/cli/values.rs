//! The values of the flags that clap takes as text: thread lists, working sets, the kernel's
//! name, the run's label; and the default thread counts. Each error is the text after
//! "--flag VALUE: ", without the flag, which `cli` puts in front.

use crate::engine::kernel::{Isa, Stores, Variant};
use crate::engine::plan::SetSpec;

/// `--kernel` as given: checked against the table here, against the CPU in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    Auto,
    Isa(Isa),
    /// A loop of the table, by its name there (for the run's stores).
    Loop(&'static str),
}

impl KernelArg {
    pub(super) fn parse(text: &str, stores: Stores) -> Result<KernelArg, String> {
        if text == "auto" {
            return Ok(KernelArg::Auto);
        }
        if let Ok(isa) = text.parse::<Isa>() {
            return Ok(KernelArg::Isa(isa));
        }
        if let Some(v) = Variant::named(text, stores) {
            return Ok(KernelArg::Loop(v.name));
        }
        let loops: Vec<String> = Variant::all()
            .filter(|v| v.stores == stores)
            .map(|v| format!("'{}'", v.name))
            .collect();
        Err(format!(
            "--kernel {text}: not auto, an instruction set (avx512, avx2, sse2, neon, portable) \
             or a loop for {stores} stores ({})",
            loops.join(", ")
        ))
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
pub(super) fn parse_threads(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err("an empty item in the list".into());
        }
        // "-1" is a negative count, not a range with no start.
        if item.starts_with('-') {
            return Err(format!("'{item}' is not a thread count (at least 1)"));
        }
        let num = |s: &str| -> Result<usize, String> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| format!("'{s}' is not a thread count"))?;
            if n == 0 {
                return Err("0 is not a thread count (at least 1)".into());
            }
            if n > 4096 {
                return Err(format!("{n} threads is absurd (at most 4096)"));
            }
            Ok(n)
        };
        match item.split_once('-') {
            Some((a, b)) => {
                if a.trim().is_empty() || b.trim().is_empty() {
                    return Err(format!(
                        "'{item}' is not a range of thread counts (A-B, e.g. 1-4)"
                    ));
                }
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("'{item}' is an empty range"));
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
pub(super) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a label needs at least one character".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!("at most {MAX_NAME} characters"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
    {
        return Err(format!(
            "{bad:?} is not allowed: a label is letters, digits, '-', '_' and '.'"
        ));
    }
    if name.starts_with('.') {
        return Err("a label cannot start with '.'".into());
    }
    Ok(())
}

/// The least an explicit size can be: arrays are cut into 128-byte lines, so a smaller size
/// would run arrays of one line under its own label. Refused rather than rounded up, so that a
/// label is always what ran.
const MIN_SET_BYTES: u64 = 128;

/// Parses a comma-separated list of working sets; a range in it (`16KiB..1MiB`) is measured at
/// `per_octave` sizes per doubling. A size below `MIN_SET_BYTES` is refused.
pub(super) fn parse_sets(text: &str, per_octave: u32) -> Result<Vec<SetSpec>, String> {
    text.split(',')
        .map(|s| {
            if s.trim().is_empty() {
                return Err("an empty item in the list".to_string());
            }
            let set = SetSpec::parse_with(s, per_octave).map_err(|e| e.to_string())?;
            match set {
                SetSpec::Split { bytes, .. } | SetSpec::PerThread { bytes, .. }
                    if bytes < MIN_SET_BYTES =>
                {
                    Err(format!(
                        "'{}' is below {MIN_SET_BYTES} B, the least an array can be (one cache \
                         line)",
                        s.trim()
                    ))
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
        // The item as given, quoted: "-1" said "'' is not a thread count" (issue 21, item 10).
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
