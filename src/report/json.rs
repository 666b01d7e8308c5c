//! The JSON snapshot: everything, pretty-printed, with a schema version, and the reader that
//! refuses what it cannot read with one line naming the file and the problem.

use super::model::{SCHEMA_VERSION, Snapshot};
use crate::error::{Error, Result};
use serde_json::Value;
use serde_json::error::Category;
use std::path::Path;

/// Everything in the snapshot, pretty-printed, ending with a newline.
pub fn to_json(s: &Snapshot) -> String {
    // Serialising plain structs with string keys cannot fail; say so if it ever does.
    let mut text = serde_json::to_string_pretty(s)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise the snapshot: {e}\"}}"));
    text.push('\n');
    text
}

/// Reads a snapshot written by `to_json`. `path` only names the file in messages.
///
/// A file that is not a snapshot this build reads is the person's to fix (they named it), so
/// errors are `Error::Usage`, each one line: `FILE: truncated JSON …`, `FILE: not JSON …`,
/// `FILE: not a stream-top snapshot …`, `FILE: snapshot schema version N, this stream-top reads
/// version M`.
pub fn from_json(text: &str, path: &Path) -> Result<Snapshot> {
    parse(text, path).map_err(Error::Usage)
}

fn parse(text: &str, path: &Path) -> std::result::Result<Snapshot, String> {
    let name = path.display();
    let value: Value = serde_json::from_str(text).map_err(|e| match e.classify() {
        Category::Eof => format!(
            "{name}: truncated JSON: the text ends at line {} column {} before the snapshot does",
            e.line(),
            e.column()
        ),
        Category::Io => format!("{name}: cannot read: {e}"),
        Category::Syntax | Category::Data => {
            format!("{name}: not a stream-top snapshot (not JSON: {e})")
        }
    })?;
    let Some(object) = value.as_object() else {
        return Err(format!(
            "{name}: not a stream-top snapshot (the JSON is not an object)"
        ));
    };
    let version = match object.get("schema_version") {
        None => {
            return Err(format!(
                "{name}: not a stream-top snapshot (no schema_version field)"
            ));
        }
        Some(v) => v.as_u64().ok_or_else(|| {
            format!("{name}: not a stream-top snapshot (schema_version is {v}, not a number)")
        })?,
    };
    if version != u64::from(SCHEMA_VERSION) {
        return Err(format!(
            "{name}: snapshot schema version {version}, but this stream-top reads version \
             {SCHEMA_VERSION}; export it again with a matching stream-top"
        ));
    }
    serde_json::from_value(value).map_err(|e| {
        format!("{name}: not a valid stream-top snapshot of schema version {SCHEMA_VERSION}: {e}")
    })
}

/// Reads and parses a JSON snapshot file the person named (`compare`, `--baseline`): a file
/// that cannot be read is theirs to fix too, so every error is `Error::Usage`.
pub fn load_snapshot(path: &Path) -> Result<Snapshot> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!(
            "{}: not a stream-top snapshot (not UTF-8 text)",
            path.display()
        ))
    })?;
    from_json(&text, path)
}
