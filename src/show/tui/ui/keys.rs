//! The live monitor's keys that the footer and the help both name, each with its words in one
//! place: the footer draws its entries from here and the help its line of them, so the two
//! cannot say different things about one key.

/// A key (or the keys to press in turn), what it does in the footer's words and in short, and
/// its rank on a narrow footer (the highest go first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Binding {
    pub(super) keys: &'static str,
    pub(super) what: &'static str,
    pub(super) brief: &'static str,
    pub(super) rank: u8,
}

impl Binding {
    /// The footer's entry: (keys, words, short words, rank).
    pub(super) fn entry(self) -> (&'static str, &'static str, &'static str, u8) {
        (self.keys, self.what, self.brief, self.rank)
    }

    /// The help's words: `r reset cell`.
    fn help(self) -> String {
        format!("{} {}", self.keys, self.what)
    }
}

pub(super) const EXPORT: Binding = Binding {
    keys: "e",
    what: "export",
    brief: "export",
    rank: 4,
};

pub(super) const RESET_CELL: Binding = Binding {
    keys: "r",
    what: "reset cell",
    brief: "reset",
    rank: 5,
};

/// `R` once: the failed cells are tried again at once (nothing is lost by that), and a second
/// `R` is asked for before anything is wiped.
pub(super) const RETRY_FAILED: Binding = Binding {
    keys: "R",
    what: "retry failed",
    brief: "retry",
    rank: 6,
};

/// `R` twice within a few seconds: every cell's figures and reference forgotten.
pub(super) const RESET_ALL: Binding = Binding {
    keys: "R R",
    what: "reset all",
    brief: "all",
    rank: 6,
};

/// What the footer offers for `R` now: the retry while a cell has failed, else the wipe.
pub(super) fn capital_r(any_failed: bool) -> Binding {
    if any_failed { RETRY_FAILED } else { RESET_ALL }
}

/// The help's line of the keys that change what is measured, after `duty` (the duty key's own
/// words, which cycle).
pub(super) fn help_line(duty: &str) -> String {
    let keys = [EXPORT, RESET_CELL, RETRY_FAILED, RESET_ALL].map(Binding::help);
    format!("{duty}   {}", keys.join("   "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_every_form_of_capital_r_the_footer_can_show() {
        let line = help_line("d duty");
        for b in [capital_r(true), capital_r(false)] {
            assert!(line.contains(&b.help()), "{line} lacks {b:?}");
        }
        assert_eq!(
            line,
            "d duty   e export   r reset cell   R retry failed   R R reset all"
        );
    }
}
