//! Every output and input the person names is checked before the
//! first array is allocated, and a flag that would do nothing in the chosen mode is refused
//! with where it applies. Each is one line naming the flag, exit 2, and nothing measured (no
//! session line, no progress, no table).

use crate::support::fail_common::*;
use std::fs;

const MARKED: &str = "# R\n<!-- stream-top:begin -->\nold\n<!-- stream-top:end -->\n";

#[test]
fn a_readme_that_cannot_be_updated_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fs::write(path("plain.md"), "# no markers\n").unwrap();
    fs::write(
        path("twice.md"),
        format!("{MARKED}<!-- stream-top:begin -->\n<!-- stream-top:end -->\n"),
    )
    .unwrap();
    fs::write(
        path("reversed.md"),
        "<!-- stream-top:end -->\n<!-- stream-top:begin -->\n",
    )
    .unwrap();
    fs::create_dir(path("folder.md")).unwrap();
    fs::write(path("binary.md"), [0xff, 0xfe, 0x00]).unwrap();
    for (file, says) in [
        ("missing.md", "No such file"),
        (
            "plain.md",
            "no <!-- stream-top:begin --> and <!-- stream-top:end --> markers",
        ),
        ("twice.md", "must appear once each"),
        ("reversed.md", "comes before"),
        ("folder.md", "a directory, not a regular file"),
        ("binary.md", "not UTF-8"),
    ] {
        assert_refused_early(
            &strs(&with(SMALL, &["--readme", &path(file)])),
            "--readme",
            says,
        );
    }
}

#[test]
fn an_export_directory_that_cannot_be_written_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    let under_file = file.join("sub");
    for (target, says) in [
        (
            "/proc/stream-top-nope",
            "cannot create /proc/stream-top-nope",
        ),
        (file.to_str().unwrap(), "is not a directory"),
        (under_file.to_str().unwrap(), "is not a directory"),
    ] {
        assert_refused_early(&strs(&with(SMALL, &["--export", target])), "--export", says);
    }
    assert!(!dir.path().join("file").is_dir());
}

#[test]
fn an_export_directory_that_can_be_created_is_not_created_before_the_export() {
    // Checked, not made: a refused run elsewhere leaves no empty directory behind.
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    let readme = dir.path().join("plain.md");
    fs::write(&readme, "no markers\n").unwrap();
    let args = with(
        SMALL,
        &[
            "--export",
            export.to_str().unwrap(),
            "--readme",
            readme.to_str().unwrap(),
        ],
    );
    assert_refused_early(&strs(&args), "--readme", "markers");
    assert!(!export.exists());
    assert_eq!(names_in(dir.path()), ["plain.md"]);
}

#[test]
fn a_baseline_that_is_not_a_snapshot_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    fs::write(&bad, "{\"schema_version\": 1}").unwrap();
    // --baseline is for the live monitor; its check comes before the terminal's.
    assert_refused_early(
        &["--baseline", bad.to_str().unwrap()],
        "--baseline",
        "bad.json",
    );
}

#[test]
fn flags_that_do_not_apply_are_refused_with_where_they_apply() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("R.md");
    fs::write(&readme, MARKED).unwrap();
    let readme = readme.to_str().unwrap();
    for (args, flag, says) in [
        (
            with(SMALL, &["--duty", "50"]),
            "--duty",
            "only for the live monitor or --headless --serve, not with --headless",
        ),
        (
            with(SMALL, &["--baseline", "a.json"]),
            "--baseline",
            "only for the live monitor",
        ),
        (
            with(&["--format", "json"], &[]),
            "--format",
            "only with --headless, not for the live monitor",
        ),
        (
            with(&["--readme", readme], &[]),
            "--readme",
            "only with --headless",
        ),
        (
            with(&["--threads", "2", "compare", "a.json", "b.json"], &[]),
            "--threads",
            "not with compare",
        ),
        (
            with(&["--export", "d", "compare", "a.json", "b.json"], &[]),
            "--export",
            "not with compare",
        ),
    ] {
        assert_refused_early(&strs(&args), flag, says);
    }
    assert_eq!(fs::read_to_string(readme).unwrap(), MARKED);
}

#[test]
fn a_missing_compare_argument_is_named() {
    assert_refused_early(
        &["compare", "a.json"],
        "compare: one snapshot named",
        "name two (compare A.json B.json), or several a side",
    );
}

/// A tiny tmpfs of our own, unmounted when dropped; None where mounting is not allowed.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount() -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs { dir })
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Fills every free block with a file of its own.
    fn fill(&self) {
        use std::io::Write;
        let mut f = fs::File::create(self.path().join("filler")).unwrap();
        while f.write_all(&[0u8; 4096]).is_ok() {}
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_disk_that_fills_up_during_the_run_leaves_every_file_intact_with_the_table_printed() {
    let Some(fs_) = Tmpfs::mount() else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let readme = fs_.path().join("README.md");
    fs::write(&readme, MARKED).unwrap();
    let export = fs_.path().join("results");
    // The early checks pass (an empty file still fits); the writes at the end cannot.
    fs_.fill();
    for args in [
        ["--readme", readme.to_str().unwrap()],
        ["--export", export.to_str().unwrap()],
    ] {
        let o = run(stream_top(&strs(&with(SMALL, &args))), "a full disk");
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert!(
            o.stdout.contains("| 16 KiB/thread"),
            "table printed: {}",
            o.stdout
        );
        assert!(o.stderr.contains("No space left"), "{}", o.stderr);
        assert_eq!(
            fs::read_to_string(&readme).unwrap(),
            MARKED,
            "README intact"
        );
        let mut left = names_in(fs_.path());
        left.retain(|n| n != "results");
        assert_eq!(left, ["README.md", "filler"], "no temporary file left");
        assert!(names_in(&export).is_empty(), "no part of an export");
    }
}
