//! `--choices-from A.json`, through the binary: B runs each op × working set with the loop and
//! page layout A's snapshot holds, with no trial, and says so on stderr and in its snapshot;
//! a file that is not a snapshot, a cell A holds no choice for, a loop this build or CPU cannot
//! run and a `--kernel` or `--huge-pages` that contradicts the file are each refused in one
//! line, exit 2, before anything is measured.

use crate::support::fail_common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use stream_top::engine::kernel::{Op, Stores, Variant};

/// A's snapshot: a short headless run of `args` with `--format json`, written to `path`.
fn measure_a(args: &[&str], path: &Path) -> Value {
    let o = run(stream_top(&strs(&with(args, &["--format", "json"]))), "A");
    assert_eq!(o.code, Some(0), "A: {}", o.stderr);
    fs::write(path, &o.stdout).unwrap();
    serde_json::from_str(&o.stdout).unwrap()
}

/// Each (op, set label)'s choice in a snapshot: loop, huge pages, how the loop and the layout
/// were settled.
fn choices(snapshot: &Value) -> BTreeMap<(String, String), (String, bool, String, String)> {
    snapshot["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ch = &c["choice"];
            let text = |v: &Value| v.as_str().unwrap().to_string();
            (
                (text(&c["op"]), text(&c["set_label"])),
                (
                    text(&ch["variant"]),
                    ch["huge_pages"].as_bool().unwrap(),
                    text(&ch["kernel_by"]),
                    text(&ch["layout_by"]),
                ),
            )
        })
        .collect()
}

/// A grid of one thread and one small set, its loop and layout pinned: no trial, so A takes
/// a moment.
const PINNED: &[&str] = &["--kernel", "portable", "--huge-pages", "off"];

#[test]
fn b_runs_each_set_with_the_loop_and_layout_a_settled_and_says_where_they_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let a_path = dir.path().join("a.json");
    // Two ops, each settled by its own trial in A.
    let grid = with(SMALL, &["--op", "triad,copy"]);
    let a = measure_a(&strs(&grid), &a_path);
    let a_choices = choices(&a);
    assert_eq!(a_choices.len(), 2, "{a_choices:?}");
    // An explicit `--kernel auto` contradicts nothing.
    let b_args = with(
        &strs(&grid),
        &[
            "--format",
            "json",
            "--kernel",
            "auto",
            "--choices-from",
            a_path.to_str().unwrap(),
        ],
    );
    let o = run(stream_top(&strs(&b_args)), "B");
    assert_eq!(o.code, Some(0), "B: {}", o.stderr);
    let b: Value = serde_json::from_str(&o.stdout).unwrap();
    let b_choices = choices(&b);
    assert_eq!(b_choices.len(), a_choices.len());
    for (cell, (variant, huge, kernel_by, layout_by)) in &b_choices {
        let (a_variant, a_huge, _, _) = &a_choices[cell];
        assert_eq!((variant, huge), (a_variant, a_huge), "{cell:?}");
        assert_eq!(
            (kernel_by.as_str(), layout_by.as_str()),
            ("reused", "reused")
        );
        // The progress line of each op × set says so too, not "trial".
        let pages = if *huge { "huge pages" } else { "no huge pages" };
        let line = format!("runs {variant}, {pages} (loop and pages reused from --choices-from)");
        let (op, set) = cell;
        let prefix = format!("{op}: {set} ");
        assert!(
            o.stderr
                .lines()
                .any(|l| l.contains(&line) && l.contains(&prefix)),
            "{cell:?}: {}",
            o.stderr
        );
    }
    assert_eq!(b["info"]["choices_from"], a_path.to_str().unwrap());
    assert!(
        o.stderr.contains(&format!(
            "loops and page layouts reused from {} (--choices-from), no trial",
            a_path.display()
        )),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("trial "), "B ran a trial: {}", o.stderr);
    // A's own snapshot has no `choices_from`: it settled its own.
    assert!(a["info"].get("choices_from").is_none());
}

#[test]
fn a_file_that_is_not_a_snapshot_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    fs::write(&text, "not a snapshot\n").unwrap();
    let array = dir.path().join("array.json");
    fs::write(&array, "[1, 2]\n").unwrap();
    let missing = dir.path().join("missing.json");
    for (file, says) in [
        (missing.as_path(), "cannot read"),
        (dir.path(), "a directory, not a regular file"),
        (text.as_path(), "not a stream-top snapshot"),
        (array.as_path(), "not a stream-top snapshot"),
    ] {
        let args = with(SMALL, &["--choices-from", file.to_str().unwrap()]);
        assert_refused_early(&strs(&args), "--choices-from", says);
    }
    // calibrate reads it before its first child runs.
    let args = [
        "calibrate",
        "--threads",
        "1",
        "--sets",
        "16KiB/thread",
        "--choices-from",
        missing.to_str().unwrap(),
    ];
    assert_refused_early(&args, "--choices-from", "cannot read");
}

#[test]
fn a_cell_a_holds_no_choice_for_is_refused_naming_it_and_what_a_holds() {
    let dir = tempfile::tempdir().unwrap();
    let a_path = dir.path().join("a.json");
    measure_a(&strs(&with(SMALL, PINNED)), &a_path);
    let a = a_path.to_str().unwrap();
    let another_set = [
        "--headless",
        "--threads",
        "1",
        "--sets",
        "16KiB/thread,32KiB/thread",
        "--choices-from",
        a,
    ];
    assert_refused_early(
        &another_set,
        &format!("--choices-from {a}"),
        "it holds no loop for triad on 32 KiB/thread; it holds triad on 16 KiB/thread",
    );
    let another_op = with(SMALL, &["--op", "copy", "--choices-from", a]);
    assert_refused_early(
        &strs(&another_op),
        "--choices-from",
        "it holds no loop for copy on 16 KiB/thread; it holds triad on 16 KiB/thread",
    );
}

#[test]
fn a_loop_this_build_or_this_cpu_cannot_run_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let a_path = dir.path().join("a.json");
    measure_a(&strs(&with(SMALL, PINNED)), &a_path);
    let text = fs::read_to_string(&a_path).unwrap();
    let edited = |name: &str| {
        let path = dir.path().join("edited.json");
        let loop_of = "\"variant\": \"portable\"";
        assert!(text.contains(loop_of));
        fs::write(
            &path,
            text.replace(loop_of, &format!("\"variant\": \"{name}\"")),
        )
        .unwrap();
        path
    };
    let refused = |name: &str, says: &str| {
        let file = edited(name);
        let args = with(SMALL, &["--choices-from", file.to_str().unwrap()]);
        assert_refused_early(
            &strs(&args),
            &format!("triad on 16 KiB/thread ran '{name}'"),
            says,
        );
    };
    refused("avx9 zmm fma", "a loop this stream-top does not have");
    // A loop of the table this CPU lacks, where there is one (none on a CPU that has them all).
    if let Some(v) = Variant::all().find(|v| v.op == Op::Triad && !(v.available)()) {
        refused(v.name, "which this CPU cannot run");
    }
    // A loop of other stores than B's.
    if let Some(v) =
        Variant::all().find(|v| v.op == Op::Triad && v.stores == Stores::Nt && (v.available)())
    {
        refused(v.name, "give --stores nt");
    }
}

#[test]
fn a_kernel_or_huge_pages_that_contradicts_the_file_is_refused() {
    // Checked with the command line, before the file is read.
    for flags in [
        &["--kernel", "portable"][..],
        &["--huge-pages", "on"],
        &["--huge-pages", "off"],
    ] {
        let args = with(&strs(&with(SMALL, flags)), &["--choices-from", "a.json"]);
        assert_refused_early(
            &strs(&args),
            "--choices-from a.json",
            &format!("so {} contradicts it; drop one of them", flags.join(" ")),
        );
    }
    assert_refused_early(
        &strs(&with(
            &["compare", "a.json", "b.json"],
            &["--choices-from", "a.json"],
        )),
        "--choices-from",
        "not with compare",
    );
}
