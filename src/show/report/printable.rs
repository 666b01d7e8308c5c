//! Strings a snapshot brings from its file (labels, host and model names, reasons, log lines)
//! reach a terminal, a Markdown table, a CSV row, an SVG or a drain reason. Every text renderer
//! shows them through the one escaping function, `base::quote::printable`: here for a whole
//! snapshot at once, and for a single string where a renderer builds its own text. JSON needs
//! no help, as serde escapes them.

use super::model::Snapshot;
pub use crate::base::quote::printable;
use serde_json::Value;
use std::borrow::Cow;

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

/// A Markdown table's cell from outside text: printable, and a `|` escaped, as it would end
/// the cell early and shift every column after it.
pub fn table_cell(s: &str) -> String {
    printable(s).replace('|', "\\|")
}
