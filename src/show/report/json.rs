//! The JSON snapshot: everything, pretty-printed, with a schema version, and the reader that
//! refuses what it cannot read with one line naming the file and the problem.

use super::input::read_bytes;
use super::model::{SCHEMA_VERSION, Snapshot};
use super::upgrade::{READABLE, complete, upgrade};
use crate::base::error::{Error, Result};
use serde::Deserialize;
use serde::de::IgnoredAny;
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
/// versions 1 to M`, `FILE: cells[2].figures.median_gbs is -5: …`. An older schema is brought
/// up to the current one as it is read (`upgrade.rs`).
pub fn from_json(text: &str, path: &Path) -> Result<Snapshot> {
    parse(text, path)
}

/// The one field read before the rest: which schema the file claims. Other fields are skipped
/// without being kept, so the text is parsed twice but held once.
#[derive(Deserialize)]
struct Probe {
    schema_version: Option<Value>,
}

fn parse(text: &str, path: &Path) -> Result<Snapshot> {
    let name = path.display();
    let not_json = |e: serde_json::Error| match e.classify() {
        Category::Eof => format!(
            "{name}: truncated JSON: the text ends at line {} column {} before the snapshot does",
            e.line(),
            e.column()
        ),
        Category::Io => format!("{name}: cannot read: {e}"),
        // JSON has no infinity: a number past f64 (1e999) is the nearest a file comes to one.
        Category::Syntax if e.to_string().starts_with("number out of range") => {
            match key_on_line(text, e.line()) {
                Some(key) => format!(
                    "{name}: {key} at line {} is a number out of range: it must be finite",
                    e.line()
                ),
                None => format!("{name}: not a stream-top snapshot ({e})"),
            }
        }
        Category::Syntax | Category::Data => {
            format!("{name}: not a stream-top snapshot (not JSON: {e})")
        }
    };
    // serde would read a struct from an array too: only an object is a snapshot.
    if !text.trim_start().starts_with('{') {
        serde_json::from_str::<IgnoredAny>(text).map_err(|e| Error::usage(not_json(e)))?;
        return Err(Error::usage(format!(
            "{name}: not a stream-top snapshot (the JSON is not an object)"
        )));
    }
    let probe: Probe = serde_json::from_str(text).map_err(|e| Error::usage(not_json(e)))?;
    let version = match probe.schema_version {
        None => {
            return Err(Error::usage(format!(
                "{name}: not a stream-top snapshot (no schema_version field)"
            )));
        }
        Some(v) => match v.as_u64() {
            Some(n) => n,
            None if v.is_number() => {
                return Err(Error::usage(format!(
                    "{name}: not a stream-top snapshot (schema_version is {v}: a version is a \
                     whole number from 1)"
                )));
            }
            None => {
                return Err(Error::usage(format!(
                    "{name}: not a stream-top snapshot (schema_version is {v}, not a number)"
                )));
            }
        },
    };
    if !READABLE.contains(&version) {
        let hint = if version > u64::from(SCHEMA_VERSION) {
            "; read it with a newer stream-top"
        } else {
            ""
        };
        return Err(Error::usage(format!(
            "{name}: snapshot schema version {version}, but this stream-top reads versions \
             {} to {SCHEMA_VERSION}{hint}",
            READABLE[0]
        )));
    }
    let invalid = |e: serde_json::Error| match e.classify() {
        Category::Syntax => not_json(e),
        _ => format!("{name}: not a valid stream-top snapshot of schema version {version}: {e}"),
    };
    let mut snapshot: Snapshot = if version == u64::from(SCHEMA_VERSION) {
        serde_json::from_str(text).map_err(|e| Error::usage(invalid(e)))?
    } else {
        let mut tree: Value = serde_json::from_str(text).map_err(|e| Error::usage(not_json(e)))?;
        upgrade(version, &mut tree);
        serde_json::from_value(tree).map_err(|e| Error::usage(invalid(e)))?
    };
    complete(version, &mut snapshot);
    snapshot
        .check_ranges()
        .map_err(|e| Error::usage(format!("{name}: not a valid stream-top snapshot: {e}")))?;
    Ok(snapshot)
}

/// The key a line of pretty-printed JSON starts with (`"median_gbs": …` → `median_gbs`).
fn key_on_line(text: &str, line: usize) -> Option<&str> {
    let l = text.lines().nth(line.checked_sub(1)?)?.trim_start();
    let rest = l.strip_prefix('"')?;
    rest.split_once("\":").map(|(key, _)| key)
}

/// Reads and parses a JSON snapshot file the person named (`compare`, `--baseline`): a regular
/// file of bounded size (`input::read_bytes`). A file that cannot be read is theirs to fix too,
/// so every error is `Error::Usage`.
pub fn load_snapshot(path: &Path) -> Result<Snapshot> {
    from_json(&read_snapshot_text(path)?, path)
}

/// The text of a file the person named as a snapshot (or another of stream-top's JSON files,
/// such as `fleet --export-reference`'s): refused from its metadata when it is no regular file
/// or larger than stream-top reads, then read bounded (`input::read_bytes`). Every error is
/// `Error::Usage`, naming the file.
pub fn read_snapshot_text(path: &Path) -> Result<String> {
    let bytes = read_bytes(path).map_err(|e| match e {
        Error::Io { source, .. } => {
            Error::usage(format!("{}: cannot read: {source}", path.display()))
        }
        other => other,
    })?;
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!(
            "{}: not a stream-top snapshot (not UTF-8 text)",
            path.display()
        ))
    })
}
