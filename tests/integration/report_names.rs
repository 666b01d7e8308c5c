//! Names a script can use: `--name LABEL` in the snapshot and the exported file names,
//! `compare DIR` taking the directory's newest snapshot by the time written in it, and
//! `--readme-style compact`.

use crate::support::report_fixtures::*;
use std::fs::{self, File};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};
use stream_top::show::report::{self, compare, export, to_json, to_markdown, to_markdown_compact};

fn file_names(paths: &[std::path::PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_named_run_puts_its_label_into_the_file_names_and_the_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let mut snap = snapshot_a();
    snap.info.name = Some("before".into());
    let names = file_names(&export(tmp.path(), &snap).unwrap());
    let stem = "stream-top-before-bench-a-20260102-030405";
    assert_eq!(
        names,
        ["md", "csv", "json", "svg"].map(|x| format!("{stem}.{x}"))
    );
    let json: serde_json::Value = serde_json::from_str(&to_json(&snap)).unwrap();
    assert_eq!(json["info"]["name"], "before");
    assert!(to_markdown(&snap).starts_with("stream-top 0.1.0 on bench-a, run `before`, "));
    // An unnamed run keeps the plain names.
    let names = file_names(&export(tmp.path(), &snapshot_a()).unwrap());
    assert_eq!(names[0], "stream-top-bench-a-20260102-030405.md");
}

fn stream_top(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn headless_name_and_export_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let run = |name| {
        let out = stream_top(&[
            "--headless",
            "--threads",
            "1",
            "--sets",
            "16KiB/thread",
            "--rounds",
            "2",
            "--round-ms",
            "1",
            "--name",
            name,
            "--export",
            dir,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run("before");
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("stream-top-before-")),
        "{names:?}"
    );
    // A label that cannot be a file name is refused before anything runs.
    let out = stream_top(&["--headless", "--name", "a/b", "--export", dir]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--name \"a/b\": '/' is not allowed"), "{err}");
}

/// Writes `snap` as JSON into `dir/name` with a modification time `age` seconds ago.
fn write_aged(dir: &Path, name: &str, snap: &report::Snapshot, age: u64) {
    let path = dir.join(name);
    fs::write(&path, to_json(snap)).unwrap();
    let when = SystemTime::now() - Duration::from_secs(age);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn compare_takes_a_directorys_newest_snapshot_by_its_time_not_mtime() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // b was taken a day after a, but its file is the older one on disk.
    write_aged(dir, "z-old-file.json", &snapshot_b(), 3600);
    write_aged(dir, "a-new-file.json", &snapshot_a(), 0);
    fs::write(dir.join("notes.json"), "{\"not\": \"a snapshot\"}").unwrap();
    fs::write(dir.join("readme.txt"), "hello").unwrap();
    let a = fixture_path("a.json");
    let text = compare(&a, dir, None).unwrap().text;
    let b_line = text.lines().nth(1).unwrap();
    assert!(b_line.starts_with("B: "), "{text}");
    assert!(
        b_line.contains("z-old-file.json (the newest snapshot in "),
        "{b_line}"
    );
    assert!(b_line.contains("bench-b"), "{b_line}");
    // The same through the binary.
    let out = stream_top(&["compare", a.to_str().unwrap(), dir.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("z-old-file.json"));
}

#[test]
fn in_a_tie_the_later_export_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let first = export(tmp.path(), &snapshot_a()).unwrap();
    let second = export(tmp.path(), &snapshot_a()).unwrap();
    assert_ne!(first, second);
    let newest = report::compare::newest_snapshot(tmp.path()).unwrap();
    assert_eq!(newest, second[2]);
}

#[test]
fn a_directory_without_snapshots_is_refused_with_what_it_holds() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("x.json"), "[]").unwrap();
    let e = compare(&fixture_path("a.json"), tmp.path(), None).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let e = e.to_string();
    assert!(
        e.contains("no stream-top snapshot in this directory (1 .json file"),
        "{e}"
    );
}

#[test]
fn the_compact_readme_has_six_columns_and_no_derived_table() {
    let snap = snapshot_a();
    let md = to_markdown_compact(&snap);
    let header = md.lines().find(|l| l.starts_with("| per array")).unwrap();
    assert_eq!(
        header,
        "| per array | threads | median GB/s | best GB/s | cv | % of 40 GB/s |"
    );
    let rows = md.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(rows, 1 + snap.cells.len());
    assert!(!md.contains("| derived"));
    assert!(md.starts_with("stream-top 0.1.0 on bench-a"));
    assert!(md.contains("\n\nMachine: ") && md.contains("\n\nKernel: "));
    assert!(md.lines().count() < to_markdown(&snap).lines().count() / 2);
}
