//! Text that came from outside (a file, a flag's value) shown back to a person. A control
//! character there acts rather than shows: an escape sequence retitles or clears the terminal,
//! a newline forges a table row or a second line of a drain reason. So every renderer shows
//! such text through [`printable`], and every error line that quotes it through [`quote`],
//! which also keeps the line short: a 100 KB value quoted whole buries the error.

use std::borrow::Cow;

/// The most characters of outside text an error line quotes; the rest is cut to "…".
pub const QUOTE_WIDTH: usize = 120;

/// `s` with each control character (C0, DEL, C1) written out as Rust writes it in a string:
/// `\n`, `\r`, `\t`, `\u{1b}`; anything else as it is. Borrowed when there is none.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` cut to its first `QUOTE_WIDTH` characters and "…" when longer; as it is otherwise.
pub fn cut(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(QUOTE_WIDTH) {
        Some((end, _)) => Cow::Owned(format!("{}…", &s[..end])),
        None => Cow::Borrowed(s),
    }
}

/// Outside text as an error line quotes it: printable, then cut.
pub fn quote(s: &str) -> String {
    cut(&printable(s)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_acted_on() {
        assert_eq!(printable("l2 × 2"), "l2 × 2");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(printable("\u{1b}]0;PWNED\u{7}"), "\\u{1b}]0;PWNED\\u{7}");
        assert_eq!(printable("a\n| b |\r\t"), "a\\n| b |\\r\\t");
        assert_eq!(printable("\u{9b}2J\u{7f}"), "\\u{9b}2J\\u{7f}");
    }

    #[test]
    fn quoted_input_is_cut_at_its_width() {
        assert_eq!(quote("short"), "short");
        let long = "é".repeat(QUOTE_WIDTH + 5);
        let q = quote(&long);
        assert_eq!(q.chars().count(), QUOTE_WIDTH + 1);
        assert!(q.ends_with('…'));
        assert_eq!(quote(&"x".repeat(QUOTE_WIDTH)), "x".repeat(QUOTE_WIDTH));
        assert_eq!(quote("a\u{1b}b"), "a\\u{1b}b");
    }
}
