//! Writing to stdout or stderr never panics. A failed stderr write is
//! ignored and never stops the run or its export; a failed stdout write exits non-zero, except
//! a closed pipe, which is a quiet end. The same for tables, compare, help and version.

use crate::support::fail_common::*;
use crate::support::report_fixtures::fixture_path;
use std::fs::{File, OpenOptions};
use std::process::Stdio;

fn dev_full() -> Stdio {
    Stdio::from(OpenOptions::new().write(true).open("/dev/full").unwrap())
}

/// A pipe whose reader is gone: every write to it fails with EPIPE.
fn closed_pipe_as(child: &mut std::process::Child, stderr: bool) {
    if stderr {
        drop(child.stderr.take());
    } else {
        drop(child.stdout.take());
    }
}

/// The table printed in full: the header lines, the row, the checksum line.
fn assert_full_table(md: &str) {
    assert!(md.contains("| per array |"), "{md}");
    assert!(md.contains("| 16 KiB/thread"), "{md}");
    assert!(
        md.contains("checksums: every configuration produced the reference sum of array a"),
        "{md}"
    );
}

#[test]
fn stderr_to_a_closed_pipe_loses_neither_the_table_nor_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.md");
    let export = dir.path().join("results");
    let mut child = stream_top(&strs(&with(SMALL, &["--export", export.to_str().unwrap()])))
        .stdout(File::create(&table).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    closed_pipe_as(&mut child, true);
    let code = wait_guarded(child, "stderr to a closed pipe");
    assert_eq!(code, Some(0));
    assert_full_table(&std::fs::read_to_string(&table).unwrap());
    assert!(has_full_export(&export), "{:?}", names_in(&export));
}

#[test]
fn stderr_to_a_full_device_loses_neither_the_table_nor_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.md");
    let export = dir.path().join("results");
    let child = stream_top(&strs(&with(SMALL, &["--export", export.to_str().unwrap()])))
        .stdout(File::create(&table).unwrap())
        .stderr(dev_full())
        .spawn()
        .unwrap();
    assert_eq!(wait_guarded(child, "stderr to /dev/full"), Some(0));
    assert_full_table(&std::fs::read_to_string(&table).unwrap());
    assert!(has_full_export(&export), "{:?}", names_in(&export));
}

#[test]
fn stdout_to_a_full_device_fails_every_output_path() {
    let a = fixture_path("a.json");
    let b = fixture_path("b.json");
    for args in [
        SMALL.to_vec(),
        vec!["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        vec!["--help"],
        vec!["--version"],
    ] {
        let child = stream_top(&args)
            .stdout(dev_full())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("cannot write to stdout"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn stdout_to_a_full_device_still_writes_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    let child = stream_top(&strs(&with(SMALL, &["--export", export.to_str().unwrap()])))
        .stdout(dev_full())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(wait_guarded(child, "stdout to /dev/full"), Some(1));
    assert!(has_full_export(&export), "{:?}", names_in(&export));
}

#[test]
fn stdout_to_a_closed_pipe_is_a_quiet_end_and_keeps_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    let mut child = stream_top(&strs(&with(SMALL, &["--export", export.to_str().unwrap()])))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    closed_pipe_as(&mut child, false);
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(err).unwrap());
    assert_eq!(wait_guarded(child, "stdout to a closed pipe"), Some(0));
    let err = reader.join().unwrap();
    assert!(!err.contains("cannot write"), "{err}");
    assert!(has_full_export(&export), "{:?}", names_in(&export));
}
