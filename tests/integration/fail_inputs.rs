//! Snapshot and README inputs are bounded: regular files only (a FIFO or a
//! device is refused at once, not read), at most `MAX_INPUT_BYTES`, and numbers a snapshot
//! cannot hold are refused with the field's name.

use crate::support::fail_common::*;
use crate::support::report_fixtures::fixture_path;
use std::fs;
use std::path::{Path, PathBuf};
use stream_top::show::report::MAX_INPUT_BYTES;

fn fifo_in(dir: &Path) -> PathBuf {
    let fifo = dir.join("pipe.json");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", fifo.display());
    fifo
}

#[test]
fn a_fifo_is_refused_at_once_wherever_a_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo_in(dir.path());
    let fifo = fifo.to_str().unwrap();
    let a = fixture_path("a.json");
    let a = a.to_str().unwrap();
    // Nobody ever writes to the FIFO: reading it would block for good.
    assert_refused_early(
        &["compare", fifo, a],
        "pipe.json",
        "a FIFO, not a regular file",
    );
    assert_refused_early(
        &["compare", a, fifo],
        "pipe.json",
        "a FIFO, not a regular file",
    );
    assert_refused_early(
        &["--baseline", fifo],
        "--baseline",
        "a FIFO, not a regular file",
    );
    assert_refused_early(
        &strs(&with(SMALL, &["--readme", fifo])),
        "--readme",
        "a FIFO, not a regular file",
    );
}

#[test]
fn a_device_is_refused_at_once() {
    let a = fixture_path("a.json");
    let a = a.to_str().unwrap();
    assert_refused_early(
        &["compare", "/dev/zero", a],
        "/dev/zero",
        "a character device",
    );
    assert_refused_early(
        &["--baseline", "/dev/zero"],
        "--baseline",
        "a character device",
    );
    assert_refused_early(
        &strs(&with(SMALL, &["--readme", "/dev/null"])),
        "--readme",
        "a character device",
    );
}

#[test]
fn a_file_past_the_limit_is_refused_without_being_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    // Sparse: the size is there, the disk blocks are not.
    fs::File::create(&big)
        .unwrap()
        .set_len(MAX_INPUT_BYTES + 1)
        .unwrap();
    let a = fixture_path("a.json");
    assert_refused_early(
        &["compare", big.to_str().unwrap(), a.to_str().unwrap()],
        "big.json",
        "is more than the 256 MiB stream-top reads",
    );
}

/// The fixture snapshot with one edit, written to `dir`.
fn edited(dir: &Path, from: &str, to: &str) -> PathBuf {
    let text = fs::read_to_string(fixture_path("a.json")).unwrap();
    assert!(text.contains(from), "the fixture has {from}");
    let path = dir.join("edited.json");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

#[test]
fn numbers_a_snapshot_cannot_hold_are_refused_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture_path("a.json");
    let a = a.to_str().unwrap();
    let text = fs::read_to_string(a).unwrap();
    // The first cell's median, made negative.
    let at = text.find("\"median_gbs\": ").unwrap() + "\"median_gbs\": ".len();
    let value: String = text[at..].chars().take_while(|c| *c != ',').collect();
    let bad = edited(
        dir.path(),
        &format!("\"median_gbs\": {value}"),
        &format!("\"median_gbs\": -{value}"),
    );
    assert_refused_early(
        &["compare", bad.to_str().unwrap(), a],
        "cells[0].figures.median_gbs",
        "it must be a finite number, 0 or more",
    );
    // JSON has no infinity; a number too large for an f64 is refused by the parser.
    let bad = edited(
        dir.path(),
        &format!("\"median_gbs\": {value}"),
        "\"median_gbs\": 1e999",
    );
    assert_refused_early(
        &["compare", bad.to_str().unwrap(), a],
        "median_gbs at line",
        "is a number out of range",
    );
}

#[test]
fn a_negative_schema_version_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture_path("a.json");
    let bad = edited(
        dir.path(),
        "\"schema_version\": 4",
        "\"schema_version\": -1",
    );
    assert_refused_early(
        &["compare", bad.to_str().unwrap(), a.to_str().unwrap()],
        "edited.json",
        "schema_version is -1: a version is a whole number from 1",
    );
}

#[test]
fn an_unknown_op_is_refused_in_one_line_before_anything_is_measured() {
    assert_refused_early(
        &["--headless", "--op", "stream,trid"],
        "--op",
        "unknown op 'trid' (one of triad, copy",
    );
}
