//! Whether the kernel gives anonymous memory transparent huge pages at all: the mode in
//! `/sys/kernel/mm/transparent_hugepage/enabled` under a root (`always [madvise] never`, the
//! bracketed word is the one in force).
//!
//! `--huge-pages on` asks for huge pages with `madvise(MADV_HUGEPAGE)`, `off` refuses them with
//! `MADV_NOHUGEPAGE`; under `never` neither changes anything, and a report says so.

use std::fs;
use std::path::Path;

/// The system-wide transparent huge page mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThpMode {
    /// Every large enough anonymous mapping may get huge pages.
    Always,
    /// Only mappings that ask (MADV_HUGEPAGE).
    Madvise,
    /// None, whatever a mapping asks.
    Never,
}

impl ThpMode {
    /// The mode under `root`; None when the file is missing (a kernel without THP, a fixture
    /// without it) or names no mode in brackets.
    pub fn read(root: &Path) -> Option<ThpMode> {
        let text = fs::read_to_string(root.join("sys/kernel/mm/transparent_hugepage/enabled"));
        ThpMode::parse(&text.ok()?)
    }

    /// `always [madvise] never` → Madvise.
    pub fn parse(text: &str) -> Option<ThpMode> {
        let chosen = text.split_once('[')?.1.split_once(']')?.0;
        match chosen.trim() {
            "always" => Some(ThpMode::Always),
            "madvise" => Some(ThpMode::Madvise),
            "never" => Some(ThpMode::Never),
            _ => None,
        }
    }

    /// The word the kernel uses.
    pub fn name(self) -> &'static str {
        match self {
            ThpMode::Always => "always",
            ThpMode::Madvise => "madvise",
            ThpMode::Never => "never",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bracketed_word_is_the_mode() {
        assert_eq!(
            ThpMode::parse("always [madvise] never\n"),
            Some(ThpMode::Madvise)
        );
        assert_eq!(
            ThpMode::parse("[always] madvise never"),
            Some(ThpMode::Always)
        );
        assert_eq!(
            ThpMode::parse("always madvise [never]"),
            Some(ThpMode::Never)
        );
        assert_eq!(ThpMode::parse("always madvise never"), None);
        assert_eq!(ThpMode::parse("[sometimes]"), None);
    }
}
