//! `--readme` keeps the file the person had: its owner, group and mode, its hard links (the
//! same inode for every name), its line endings; a read-only file is refused, not replaced.
//! Each through the binary, checked on the file afterwards.

use crate::support::fail_common::*;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

const NOBODY: u32 = 65534;

fn readme_text(eol: &str) -> String {
    [
        "# Bench",
        "",
        "Intro.",
        "<!-- stream-top:begin -->",
        "old table",
        "<!-- stream-top:end -->",
        "",
        "After.",
    ]
    .iter()
    .map(|l| format!("{l}{eol}"))
    .collect()
}

/// A headless run that updates `readme`; returns the outcome.
fn update(readme: &Path) -> Outcome {
    run(
        stream_top(&strs(&with(SMALL, &["--readme", readme.to_str().unwrap()]))),
        "--readme",
    )
}

fn assert_updated(readme: &Path) {
    let text = fs::read_to_string(readme).unwrap();
    assert!(
        text.contains("| per array |") && !text.contains("old table"),
        "{text}"
    );
    assert!(
        text.starts_with("# Bench") && text.trim_end().ends_with("After."),
        "{text}"
    );
}

#[test]
fn a_readme_owned_by_another_user_keeps_its_owner_group_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    fs::write(&readme, readme_text("\n")).unwrap();
    if let Err(e) = std::os::unix::fs::chown(&readme, Some(NOBODY), Some(NOBODY)) {
        eprintln!("skipped: giving a file to nobody needs root ({e})");
        return;
    }
    fs::set_permissions(&readme, fs::Permissions::from_mode(0o640)).unwrap();
    let o = update(&readme);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_updated(&readme);
    let meta = fs::metadata(&readme).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid()),
        (NOBODY, NOBODY),
        "owner and group kept"
    );
    assert_eq!(meta.mode() & 0o7777, 0o640, "mode kept");
    assert_eq!(
        names_in(dir.path()),
        ["README.md"],
        "no temporary file left"
    );
}

#[test]
fn a_hard_linked_readme_stays_one_file_for_every_link() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    let link = dir.path().join("docs-README.md");
    fs::write(&readme, readme_text("\n")).unwrap();
    fs::hard_link(&readme, &link).unwrap();
    let inode = fs::metadata(&readme).unwrap().ino();
    let o = update(&readme);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_updated(&readme);
    let (a, b) = (fs::metadata(&readme).unwrap(), fs::metadata(&link).unwrap());
    assert_eq!(a.ino(), inode, "the same file, rewritten in place");
    assert_eq!(b.ino(), inode);
    assert_eq!(a.nlink(), 2, "both links kept");
    assert_eq!(fs::read(&readme).unwrap(), fs::read(&link).unwrap());
}

#[test]
fn a_read_only_readme_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    fs::write(&readme, readme_text("\n")).unwrap();
    fs::set_permissions(&readme, fs::Permissions::from_mode(0o444)).unwrap();
    let inode = fs::metadata(&readme).unwrap().ino();
    assert_refused_early(
        &strs(&with(SMALL, &["--readme", readme.to_str().unwrap()])),
        "--readme",
        "read-only (mode 444)",
    );
    let meta = fs::metadata(&readme).unwrap();
    assert_eq!(meta.ino(), inode);
    assert_eq!(meta.mode() & 0o7777, 0o444);
    assert_eq!(fs::read_to_string(&readme).unwrap(), readme_text("\n"));
}

#[test]
fn a_crlf_readme_keeps_its_line_endings() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    fs::write(&readme, readme_text("\r\n")).unwrap();
    let o = update(&readme);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_updated(&readme);
    let text = fs::read_to_string(&readme).unwrap();
    let lf = text.matches('\n').count();
    assert!(lf > 10, "{text}");
    assert_eq!(
        text.matches("\r\n").count(),
        lf,
        "every line ends in CR LF: {text:?}"
    );
    assert!(!text.contains("\r\r"), "{text:?}");
}

#[test]
fn a_symlinked_readme_updates_its_target_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.md");
    let link = dir.path().join("README.md");
    fs::write(&target, readme_text("\n")).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = update(&link);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_updated(&target);
}
