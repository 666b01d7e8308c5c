//! Writing snapshots to disk without ever leaving half a file or replacing someone's file.
//!
//! A new snapshot is written to a temporary file in the same directory, flushed to disk, and
//! put in place by `hard_link` (which fails rather than replace an existing name, so a race
//! cannot overwrite). When the four names of an export are taken, the next free suffix is used:
//! `stream-top-HOST-STAMP-2.md`, `-3`, …; an export never overwrites and never fails because a
//! snapshot was taken twice in one second.
//!
//! A README is the person's own file, so it is rewritten in place rather than replaced: the
//! same inode keeps its owner, group, mode and every hard link (`rewrite_in_place` says how it
//! is never left half-written). `check_export_dir` and `check_readme` find, before anything is
//! measured, what would make these writes fail, through the one check of every output path
//! (`base::files`), which also names and places the temporary files.

use super::csv::to_csv;
use super::input::{check_regular, read_text};
use super::json::to_json;
use super::markdown::to_markdown;
use super::model::Snapshot;
use super::svg::to_svg;
use crate::base::error::{Error, Result};
use crate::base::files::{self, How, Temp, directory_of, sync_dir};
use crate::base::time::{file_stamp, stamp_of};
use std::fs::{self, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The README markers between which `update_readme` puts the Markdown snapshot.
pub const BEGIN_MARKER: &str = "<!-- stream-top:begin -->";
pub const END_MARKER: &str = "<!-- stream-top:end -->";

/// A snapshot's text in one format.
type Writer = fn(&Snapshot) -> String;

/// What `export` writes, in order: each file's extension and its writer.
const WRITERS: [(&str, Writer); 4] = [
    ("md", to_markdown),
    ("csv", to_csv),
    ("json", to_json),
    ("svg", to_svg),
];

/// How many suffixes `export` tries before giving up.
const MAX_SUFFIX: u32 = 99;

/// A host name (or a run's label) made safe for a file name: letters, digits, `.`, `_` and `-`
/// kept, anything else `_`, at most 64 characters, never empty and never starting with a dot.
fn sanitize_host(host: &str) -> String {
    let mut s: String = host
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.starts_with('.') {
        s.replace_range(0..1, "_");
    }
    if s.is_empty() { "host".to_string() } else { s }
}

/// `stream-top-HOST-STAMP`, or `stream-top-LABEL-HOST-STAMP` for a run with a `--name`: the
/// name of an export's four files without their suffix and extension.
fn export_stem(snap: &Snapshot, stamp: &str) -> String {
    let host = sanitize_host(&snap.info.hostname);
    match snap.info.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => {
            format!("stream-top-{}-{host}-{stamp}", sanitize_host(name))
        }
        _ => format!("stream-top-{host}-{stamp}"),
    }
}

/// Makes an output directory that `check_export_dir` passed, when it is missing. Only the last
/// component is made, as `mkdir` makes it: a mistyped parent is refused by the check before
/// the run rather than created here.
pub fn make_output_dir(dir: &Path) -> Result<()> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
            return Err(Error::io("create directory", dir, e));
        }
        _ => {}
    }
    if !dir.is_dir() {
        return Err(Error::io(
            "write into",
            dir,
            io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        ));
    }
    Ok(())
}

/// Puts `temp` at `dest` unless `dest` exists: `AlreadyExists` then, and nothing changes.
fn place_new(temp: &mut Temp, dest: &Path) -> io::Result<()> {
    match fs::hard_link(&temp.path, dest) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        Err(e) => {
            // A filesystem without hard links (FAT, some network mounts): check, then rename.
            // The check and the rename are two steps, so only here could a racing writer lose.
            if fs::symlink_metadata(dest).is_ok() {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, e));
            }
            fs::rename(&temp.path, dest)?;
            temp.keep();
            Ok(())
        }
    }
}

fn exists(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

/// Writes the snapshot as `stream-top-HOST-YYYYmmdd-HHMMSS.{md,csv,json,svg}` (with the run's
/// `--name` after `stream-top-` when it has one) into `dir` (created when missing) and returns
/// the four paths. The stamp is the snapshot's `taken` time.
/// When any of the four names exists, the next suffix (`-2`, `-3`, …) is used for all four.
/// Nothing that exists is changed; on an error, no file of this export is left behind.
pub fn export(dir: &Path, snap: &Snapshot) -> Result<Vec<PathBuf>> {
    let write_into = |e| Error::io("write into", dir, e);
    make_output_dir(dir)?;
    let stamp = stamp_of(&snap.taken).unwrap_or_else(|| file_stamp(SystemTime::now()));
    let stem = export_stem(snap, &stamp);
    let mut temps = Vec::with_capacity(WRITERS.len());
    for text in WRITERS.iter().map(|(_, write)| write(snap)) {
        let t = Temp::write(dir, text.as_bytes()).map_err(write_into)?;
        temps.push(t);
    }
    for n in 1..=MAX_SUFFIX {
        let base = if n == 1 {
            stem.clone()
        } else {
            format!("{stem}-{n}")
        };
        let finals: Vec<PathBuf> = WRITERS
            .iter()
            .map(|(ext, _)| dir.join(format!("{base}.{ext}")))
            .collect();
        if finals.iter().any(|p| exists(p)) {
            continue;
        }
        let mut placed = 0;
        let mut outcome = Ok(());
        for (temp, dest) in temps.iter_mut().zip(&finals) {
            match place_new(temp, dest) {
                Ok(()) => placed += 1,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        match outcome {
            Ok(()) => {
                drop(temps);
                sync_dir(dir);
                return Ok(finals);
            }
            Err(e) => {
                // Take back only what this export just created: a link goes, a file that was
                // renamed into place goes back to its temporary name for the next attempt.
                for (temp, dest) in temps.iter_mut().zip(&finals).take(placed) {
                    if temp.armed() {
                        let _ = fs::remove_file(dest);
                    } else if fs::rename(dest, &temp.path).is_ok() {
                        temp.rearm();
                    }
                }
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(write_into(e));
                }
            }
        }
    }
    Err(write_into(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{stem} and its suffixes up to -{MAX_SUFFIX} are all taken"),
    )))
}

/// Where the safety copy of a README's new text is written: beside it, or, in a directory
/// that takes no new file (a README the person may edit in a directory they may not), in the
/// system's temporary directory. Probed with an empty file; an error when neither takes one.
fn safety_dir(path: &Path) -> io::Result<PathBuf> {
    let (_, dir) = directory_of(path);
    match files::probe_writable(&dir) {
        Ok(()) => Ok(dir),
        Err(e) => {
            let tmp = std::env::temp_dir();
            files::probe_writable(&tmp).map(|()| tmp).map_err(|_| e)
        }
    }
}

/// Rewrites the file at `path`, which holds `old`, to hold `new`, in place: the same inode, so
/// its owner, group, mode and hard links stay as they are (a rename over it would give it ours
/// and cut it from its other links), and its directory need not take a new file.
///
/// Never half-written: the new text is first written to a temporary file beside it (or in the
/// system's temporary directory, `safety_dir`) and synced (the safety copy). Then the file
/// grows first, by appending what the new text has past the old length; a full disk fails
/// there, and the file is cut back to the old text. Only then are the old bytes overwritten, in
/// blocks the file already owns, and the file cut to the new length and synced. Should that
/// overwrite still fail (an I/O error), the safety copy is kept and the error names it; on
/// success it is removed. The file opened is checked again to be a writable regular file.
fn rewrite_in_place(path: &Path, old: &[u8], new: &[u8]) -> Result<()> {
    let (real, _) = directory_of(path);
    let copy = |e| Error::io("write a temporary copy of", path, e);
    let mut safety = Temp::write(&safety_dir(path).map_err(copy)?, new).map_err(copy)?;
    files::recheck(&real).map_err(|e| Error::io("rewrite", path, e))?;
    let mut file = OpenOptions::new()
        .write(true)
        .open(&real)
        .map_err(|e| Error::io("open for writing", path, e))?;
    // What was opened, not what the name led to a moment before.
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(m) => {
            return Err(Error::io(
                "rewrite",
                path,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}, not a regular file", files::kind_of(m.file_type())),
                ),
            ));
        }
        Err(e) => return Err(Error::io("rewrite", path, e)),
    }
    let old_len = old.len() as u64;
    if new.len() > old.len() {
        let grow = file
            .seek(SeekFrom::Start(old_len))
            .and_then(|_| file.write_all(&new[old.len()..]))
            .and_then(|_| file.sync_data());
        if let Err(e) = grow {
            let _ = file.set_len(old_len);
            let _ = file.sync_all();
            return Err(Error::io("write", path, e));
        }
    }
    let head = new.len().min(old.len());
    let overwrite = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.write_all(&new[..head]))
        .and_then(|_| file.set_len(new.len() as u64))
        .and_then(|_| file.sync_all());
    if let Err(e) = overwrite {
        // Kept under a name that is no temporary file's, so no later run removes it as a
        // leftover (`files::remove_stale_temps`).
        let kept = safety.path.with_extension("md");
        let kept = match fs::rename(&safety.path, &kept) {
            Ok(()) => kept,
            Err(_) => safety.path.clone(),
        };
        safety.keep();
        return Err(Error::Io {
            what: format!(
                "rewrite {} (its new text is in {})",
                path.display(),
                kept.display()
            ),
            source: e,
        });
    }
    Ok(())
}

fn times(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// The text with what stands between the markers replaced by `markdown`; the markers stay.
/// Missing, repeated or out-of-order markers are the person's to fix (`Error::Usage`).
fn splice_between_markers(text: &str, markdown: &str) -> Result<String> {
    splice(text, markdown)
}

/// The byte ranges of the text's fenced code blocks (CommonMark: a line of at least three
/// backticks or tildes, indented by at most three spaces, up to a line of at least as many of
/// the same character and nothing else, or the end of the text). A marker there is an example
/// in the README, not a marker.
fn fenced_blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut blocks = Vec::new();
    // The open fence: where it starts, its character and its length.
    let mut open: Option<(usize, char, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let body = &body[indent..];
        let Some(c) = body.chars().next().filter(|c| matches!(c, '`' | '~')) else {
            continue;
        };
        let run = body.len() - body.trim_start_matches(c).len();
        if run < 3 {
            continue;
        }
        match open {
            None => open = Some((start, c, run)),
            Some((from, fc, flen)) if c == fc && run >= flen && body[run..].trim().is_empty() => {
                blocks.push(from..at);
                open = None;
            }
            Some(_) => {}
        }
    }
    if let Some((from, _, _)) = open {
        blocks.push(from..text.len());
    }
    blocks
}

fn splice(text: &str, markdown: &str) -> Result<String> {
    let fenced = fenced_blocks(text);
    let outside = |i: &usize| !fenced.iter().any(|r| r.contains(i));
    let all_begins: Vec<usize> = text.match_indices(BEGIN_MARKER).map(|(i, _)| i).collect();
    let all_ends: Vec<usize> = text.match_indices(END_MARKER).map(|(i, _)| i).collect();
    let begins: Vec<usize> = all_begins.iter().copied().filter(outside).collect();
    let ends: Vec<usize> = all_ends.iter().copied().filter(outside).collect();
    let (begin, end) = match (begins.as_slice(), ends.as_slice()) {
        ([], []) if !all_begins.is_empty() || !all_ends.is_empty() => {
            return Err(Error::usage(format!(
                "the {BEGIN_MARKER} and {END_MARKER} markers are only inside fenced code \
                 blocks (``` or ~~~), where they are examples; add them outside one"
            )));
        }
        ([], []) => {
            return Err(Error::usage(format!(
                "no {BEGIN_MARKER} and {END_MARKER} markers; add them where the snapshot goes"
            )));
        }
        ([], _) => {
            return Err(Error::usage(format!(
                "no {BEGIN_MARKER} marker (the end marker is there)"
            )));
        }
        (_, []) => {
            return Err(Error::usage(format!(
                "no {END_MARKER} marker (the begin marker is there)"
            )));
        }
        ([b], [e]) => (*b, *e),
        (b, e) => {
            return Err(Error::usage(format!(
                "the markers must appear once each, but {BEGIN_MARKER} appears {} and \
                 {END_MARKER} {}",
                times(b.len()),
                times(e.len())
            )));
        }
    };
    if end < begin {
        return Err(Error::usage(format!(
            "{END_MARKER} comes before {BEGIN_MARKER}"
        )));
    }
    let head = &text[..begin + BEGIN_MARKER.len()];
    let tail = &text[end..];
    let inserted = format!("\n\n{}\n\n", markdown.trim_matches('\n'));
    let inserted = if uses_crlf(text) {
        inserted.replace('\n', "\r\n")
    } else {
        inserted
    };
    Ok(format!("{head}{inserted}{tail}"))
}

/// Whether most of the text's lines end in CR LF: the snapshot is then written with them too.
fn uses_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= text.matches('\n').count()
}

/// The README's text and the text with `markdown` between its markers, after every check that
/// needs no write: a regular file of bounded size, not read-only, UTF-8, one pair of markers.
fn prepare_readme(file: &Path, markdown: &str) -> Result<(String, String)> {
    check_regular(file)?;
    let (real, _) = directory_of(file);
    files::recheck(&real).map_err(|e| Error::usage(format!("{}: {e}", file.display())))?;
    let text = read_text(file)?;
    let new = splice_between_markers(&text, markdown)
        .map_err(|e| e.context(&file.display().to_string()))?;
    Ok((text, new))
}

/// Checks, before anything is measured, that `update_readme` can rewrite `file`: the check of
/// every output file (`files::check_output_file`: a writable regular file), everything
/// `prepare_readme` checks, and that a safety copy can be written (`safety_dir`). Every failure
/// is `Error::Usage`.
pub fn check_readme(file: &Path) -> Result<()> {
    let usage = |e: Error| match e {
        Error::Io { what, source } => Error::usage(format!("cannot {what}: {source}")),
        other => other,
    };
    files::check_output_file(file, How::InPlace)?;
    prepare_readme(file, "").map_err(usage)?;
    safety_dir(file)
        .map(drop)
        .map_err(|e| usage(Error::io("write a temporary copy of", file, e)))
}

/// Checks, before anything is measured, that `export` can write into `dir`
/// (`files::check_output_dir`): a directory that exists, or one whose parent exists, as only
/// the last component is created (like `mkdir`). Failures are `Error::Usage`.
pub fn check_export_dir(dir: &Path) -> Result<()> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if fs::symlink_metadata(dir).is_err() && fs::metadata(parent).is_err() {
        return Err(Error::usage(format!(
            "no directory {} to create {} in (only the last component is created)",
            parent.display(),
            dir.display()
        )));
    }
    files::check_output_dir(dir)
}

/// Replaces what stands between `<!-- stream-top:begin -->` and `<!-- stream-top:end -->` in
/// `file` with `markdown`, in the file's own line endings. Missing, repeated or out-of-order
/// markers, a read-only file, or one that is not a regular file are refused and the file is
/// left as it was (`Error::Usage`, naming the file); the file is rewritten in place, keeping
/// its owner, mode and links, and never left half-written (`rewrite_in_place`).
pub fn update_readme(file: &Path, markdown: &str) -> Result<()> {
    let (text, new) = prepare_readme(file, markdown)?;
    if new == text {
        return Ok(());
    }
    rewrite_in_place(file, text.as_bytes(), new.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_become_file_names() {
        assert_eq!(sanitize_host("box-1.example.org"), "box-1.example.org");
        assert_eq!(sanitize_host("a/b c:d"), "a_b_c_d");
        assert_eq!(sanitize_host(""), "host");
        assert_eq!(sanitize_host(".."), "_.");
        assert_eq!(sanitize_host(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn splices_between_markers_and_is_idempotent() {
        let text = format!("# T\n\nbefore\n{BEGIN_MARKER}\nold\n{END_MARKER}\nafter\n");
        let once = splice_between_markers(&text, "| new |\n").unwrap();
        assert_eq!(
            once,
            format!("# T\n\nbefore\n{BEGIN_MARKER}\n\n| new |\n\n{END_MARKER}\nafter\n")
        );
        assert_eq!(splice_between_markers(&once, "| new |").unwrap(), once);
    }

    #[test]
    fn keeps_crlf_line_endings() {
        let text = format!("# T\r\n{BEGIN_MARKER}\r\nold\r\n{END_MARKER}\r\nafter\r\n");
        let once = splice_between_markers(&text, "| a |\n| b |\n").unwrap();
        assert_eq!(
            once.matches('\n').count(),
            once.matches("\r\n").count(),
            "{once:?}"
        );
        assert!(once.contains("\r\n| a |\r\n| b |\r\n"), "{once:?}");
        assert_eq!(splice_between_markers(&once, "| a |\n| b |").unwrap(), once);
    }

    #[test]
    fn markers_in_fenced_code_blocks_are_not_markers() {
        let (b, e) = (BEGIN_MARKER, END_MARKER);
        let text = format!(
            "# T\n```markdown\n{b}\nexample\n{e}\n```\n\n{b}\nold\n{e}\n\n  ~~~~\n{e}\n~~~\n{b}\n~~~~\n"
        );
        let once = splice_between_markers(&text, "new").unwrap();
        assert!(once.starts_with(&format!("# T\n```markdown\n{b}\nexample\n{e}\n```\n")));
        assert!(once.contains(&format!("\n{b}\n\nnew\n\n{e}\n")), "{once}");
        assert!(!once.contains("old"), "{once}");
        assert!(
            once.ends_with(&format!("  ~~~~\n{e}\n~~~\n{b}\n~~~~\n")),
            "{once}"
        );
        // A fence left open runs to the end of the text.
        let open = format!("{b}\nold\n{e}\n````\n{b}\n");
        assert!(
            splice_between_markers(&open, "x")
                .unwrap()
                .ends_with(&format!("````\n{b}\n"))
        );
        for only_fenced in [
            format!("```\n{b}\n{e}\n```\n"),
            format!("~~~\n{b}\n~~~\n```\n{e}\n```"),
        ] {
            let err = splice_between_markers(&only_fenced, "x")
                .unwrap_err()
                .to_string();
            assert!(err.contains("only inside fenced code blocks"), "{err}");
        }
        // Indented by four spaces or fewer than three characters: no fence.
        let not_fences = format!("    ```\n{b}\n``\n{e}\n");
        assert!(splice_between_markers(&not_fences, "x").is_ok());
    }

    #[test]
    fn refuses_bad_markers() {
        let b = BEGIN_MARKER;
        let e = END_MARKER;
        for (text, says) in [
            ("nothing".to_string(), "no "),
            (format!("{b} only"), "no <!-- stream-top:end"),
            (format!("{e} only"), "no <!-- stream-top:begin"),
            (format!("{e} x {b}"), "comes before"),
            (
                format!("{b} {b} {e}"),
                "appears twice and <!-- stream-top:end --> once",
            ),
            (
                format!("{b} {e} {e} {e}"),
                "appears once and <!-- stream-top:end --> 3 times",
            ),
        ] {
            let err = splice_between_markers(&text, "x").unwrap_err().to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }
}
