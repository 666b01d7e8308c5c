//! Strings a snapshot brings from its file (labels, host and model names, reasons, log lines)
//! reach a terminal, a Markdown table or a CSV row. A control character there acts rather than
//! shows: an escape sequence retitles or clears the terminal, a newline forges a table row. So
//! every text renderer shows them escaped, through the one function here; JSON needs no help,
//! as serde escapes them.

use super::model::Snapshot;
use serde_json::Value;
use std::borrow::Cow;

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

impl Snapshot {
    /// The snapshot with every string in it passed through [`printable`], for the text
    /// renderers; borrowed when no string holds a control character (as any snapshot this
    /// program wrote from a plain command line).
    pub fn printable(&self) -> Cow<'_, Snapshot> {
        let Ok(mut value) = serde_json::to_value(self) else {
            return Cow::Borrowed(self);
        };
        if !escape_strings(&mut value) {
            return Cow::Borrowed(self);
        }
        serde_json::from_value(value).map_or(Cow::Borrowed(self), Cow::Owned)
    }
}

/// Escapes every string (and object key) under `value` in place; true when any changed.
fn escape_strings(value: &mut Value) -> bool {
    match value {
        Value::String(s) => match printable(s) {
            Cow::Owned(escaped) => {
                *s = escaped;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(items) => escape_all(items.iter_mut()),
        Value::Object(map) => {
            let keys_clean = map.keys().all(|k| matches!(printable(k), Cow::Borrowed(_)));
            if !keys_clean {
                let entries = std::mem::take(map);
                *map = entries
                    .into_iter()
                    .map(|(k, v)| (printable(&k).into_owned(), v))
                    .collect();
            }
            escape_all(map.values_mut()) || !keys_clean
        }
        _ => false,
    }
}

/// Escapes every value, each of them (no short cut at the first that changed); true when any
/// changed.
fn escape_all<'a>(values: impl Iterator<Item = &'a mut Value>) -> bool {
    let mut any = false;
    for v in values {
        any |= escape_strings(v);
    }
    any
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
}
