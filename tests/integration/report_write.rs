//! Writing files: export writes four new files atomically and never replaces one; an unwritable
//! directory is an error that names it; the README is changed only between good markers.

use crate::support::report_fixtures::*;
use std::fs;
use std::path::{Path, PathBuf};
use stream_top::base::error::Error;
use stream_top::show::report::{BEGIN_MARKER, END_MARKER, export, from_json, update_readme};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn export_writes_four_files_named_by_host_and_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    let snap = snapshot_a();
    let paths = export(&dir, &snap).unwrap();
    let want: Vec<PathBuf> = ["md", "csv", "json", "svg"]
        .iter()
        .map(|e| dir.join(format!("stream-top-bench-a-20260102-030405.{e}")))
        .collect();
    assert_eq!(paths, want);
    // Nothing else: no temporary files left behind.
    assert_eq!(names(&dir).len(), 4, "{:?}", names(&dir));
    let json = fs::read_to_string(&paths[2]).unwrap();
    assert_eq!(from_json(&json, &paths[2]).unwrap(), snap);
    assert!(
        fs::read_to_string(&paths[0])
            .unwrap()
            .contains("| per array |")
    );
    assert!(fs::read_to_string(&paths[3]).unwrap().starts_with("<svg"));
}

#[test]
fn export_never_overwrites_it_takes_the_next_suffix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Someone's file already holds one of the names.
    let taken = dir.join("stream-top-bench-a-20260102-030405.csv");
    fs::write(&taken, "mine, do not touch\n").unwrap();
    let first = export(dir, &snapshot_a()).unwrap();
    assert_eq!(
        first[1],
        dir.join("stream-top-bench-a-20260102-030405-2.csv")
    );
    assert_eq!(fs::read_to_string(&taken).unwrap(), "mine, do not touch\n");
    // The same snapshot again: -3, and -2's files are as they were.
    let before: Vec<Vec<u8>> = first.iter().map(|p| fs::read(p).unwrap()).collect();
    let second = export(dir, &snapshot_a()).unwrap();
    assert!(second[0].ends_with("stream-top-bench-a-20260102-030405-3.md"));
    for (p, b) in first.iter().zip(&before) {
        assert_eq!(&fs::read(p).unwrap(), b);
    }
    assert_eq!(names(dir).len(), 9, "{:?}", names(dir));
}

#[test]
fn export_into_an_unwritable_directory_is_an_error_that_names_it() {
    // Tests run as root, so permissions would not stop a write: a path under a regular file
    // cannot be a directory for anyone.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file.txt");
    fs::write(&file, "a file\n").unwrap();
    let dir = file.join("sub");
    let e = export(&dir, &snapshot_a()).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains(&dir.display().to_string()), "{e}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "a file\n");
    assert_eq!(names(tmp.path()), ["file.txt"]);
    // A regular file given as the directory.
    let e = export(&file, &snapshot_a()).unwrap_err().to_string();
    assert!(e.contains(&file.display().to_string()), "{e}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "a file\n");
}

#[test]
fn host_names_are_sanitised_for_file_names() {
    let tmp = tempfile::tempdir().unwrap();
    let mut snap = snapshot_a();
    snap.info.hostname = "../evil host/x".into();
    let paths = export(tmp.path(), &snap).unwrap();
    for p in &paths {
        assert_eq!(p.parent().unwrap(), tmp.path());
    }
    assert!(
        paths[0].ends_with("stream-top-_._evil_host_x-20260102-030405.md"),
        "{paths:?}"
    );
}

const README: &str = "# Bench\n\nIntro.\n\n<!-- stream-top:begin -->\nold table\n<!-- stream-top:end -->\n\nAfter.\n";

#[test]
fn update_readme_replaces_between_markers_only() {
    let tmp = tempfile::tempdir().unwrap();
    let readme = tmp.path().join("README.md");
    fs::write(&readme, README).unwrap();
    update_readme(&readme, "| new | table |\n").unwrap();
    let text = fs::read_to_string(&readme).unwrap();
    assert_eq!(
        text,
        "# Bench\n\nIntro.\n\n<!-- stream-top:begin -->\n\n| new | table |\n\n<!-- stream-top:end -->\n\nAfter.\n"
    );
    // Again with other text: the markers stay, one pair.
    update_readme(&readme, "second").unwrap();
    let text = fs::read_to_string(&readme).unwrap();
    assert_eq!(text.matches(BEGIN_MARKER).count(), 1);
    assert_eq!(text.matches(END_MARKER).count(), 1);
    assert!(text.contains("\nsecond\n") && !text.contains("new | table"));
    assert_eq!(names(tmp.path()), ["README.md"], "no temporary file left");
}

#[test]
fn bad_markers_leave_the_readme_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let readme = tmp.path().join("README.md");
    let b = BEGIN_MARKER;
    let e = END_MARKER;
    for (text, says) in [
        (
            "# No markers\n".to_string(),
            "no <!-- stream-top:begin --> and",
        ),
        (format!("{b}\nx\n"), "no <!-- stream-top:end --> marker"),
        (format!("x\n{e}\n"), "no <!-- stream-top:begin --> marker"),
        (format!("{e}\nx\n{b}\n"), "comes before"),
        (format!("{b}\n{e}\n{b}\n{e}\n"), "appears twice"),
        (format!("{b}\nx\n{b}\n{e}\n"), "must appear once each"),
    ] {
        fs::write(&readme, &text).unwrap();
        let err = update_readme(&readme, "| new |").unwrap_err();
        assert_eq!(err.exit_code(), 2, "the person's to fix: {err}");
        let err = err.to_string();
        assert!(err.starts_with(&readme.display().to_string()), "{err}");
        assert!(err.contains(says), "{text:?}: {err}");
        assert_eq!(fs::read_to_string(&readme).unwrap(), text);
        assert_eq!(names(tmp.path()), ["README.md"]);
    }
    let missing = tmp.path().join("NOPE.md");
    let err = update_readme(&missing, "x").unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    let err = err.to_string();
    assert!(
        err.starts_with("cannot read ") && err.contains("NOPE.md: "),
        "{err}"
    );
    assert!(!missing.exists());
}

#[test]
fn export_creates_only_the_last_component_of_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("missing/results");
    assert!(export(&dir, &snapshot_a()).is_err());
    assert!(!tmp.path().join("missing").exists());
}
