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

/// A figure beyond any memory (above 100 TB/s), in a figure or in a repetition, is refused
/// as implausible by every reader of snapshots, naming the file and the field; it was once
/// printed as a 300-digit number.
#[test]
fn a_figure_beyond_any_memory_is_refused_as_implausible_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture_path("a.json");
    let a = a.to_str().unwrap();
    let huge = edited(
        dir.path(),
        "\"repetitions\": [\n        30.0",
        "\"repetitions\": [\n        1e308",
    );
    let huge = huge.to_str().unwrap();
    for args in [
        vec!["compare", huge, a],
        vec!["compare", a, huge],
        vec!["fleet", huge, a],
        vec!["check", "--against", huge],
    ] {
        assert_refused_early(
            &args,
            "edited.json",
            "cells[0].repetitions[0] is 1.000e308 GB/s",
        );
        assert_refused_early(&args, "edited.json", "implausible");
    }
}

/// `--generate` prints and runs nothing: a mode or flag beside it, once silently ignored, is
/// refused in one line naming it.
#[test]
fn generate_beside_a_mode_or_another_flag_is_refused() {
    for (args, names) in [
        (vec!["--generate", "man", "--headless"], "--headless"),
        (
            vec!["--generate", "complete-bash", "--threads", "2"],
            "--threads",
        ),
        (vec!["--generate", "man", "fleet", "x.json"], "`fleet`"),
    ] {
        assert_refused_early(&args, "--generate", &format!("not with {names}"));
    }
}

/// An error line that quotes what a person gave quotes at most 120 characters of it, then
/// "…": a pasted 100 KB value once came back whole.
#[test]
fn error_lines_cut_the_input_they_quote() {
    let long = "x".repeat(100_000);
    let cut = format!("{}…", "x".repeat(120));
    for args in [
        vec!["--headless", "--threads", long.as_str()],
        vec!["--headless", "--sets", long.as_str()],
        vec!["--headless", "--kernel", long.as_str()],
        vec!["--headless", "--serve", long.as_str()],
        vec!["--headless", "--node", long.as_str()],
        vec!["--headless", "--format", long.as_str()],
        vec!["fleet", "--min-gap", long.as_str(), "x.json"],
        vec![long.as_str()],
    ] {
        let o = run(stream_top(&args), &args[..args.len() - 1].join(" "));
        assert_eq!(o.code, Some(2), "{}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1);
        assert!(o.stderr.len() < 1000, "{}", &o.stderr[..1000]);
        assert!(
            o.stderr.contains(&cut) || args[1] == "--node",
            "{}",
            o.stderr
        );
    }
}
