//! Output files, through the binary: every output path is checked before
//! anything is measured and never replaces a device, FIFO or read-only file; a failed write
//! (a closed stdout, a full disk under `--prom-file`) is exit 1 with one line; temporary files
//! of killed runs are removed and said; `--readme` skips markers in fenced code blocks and
//! rewrites a writable file in a read-only directory in place.

use crate::support::fail_common::*;
use crate::support::report_fixtures::fixture_path;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

const NOBODY: u32 = 65534;

/// Whether the tests run as root: a file just created is owned by the effective user.
fn is_root(dir: &Path) -> bool {
    let probe = dir.join(".root-probe");
    fs::write(&probe, "").unwrap();
    let root = fs::metadata(&probe).unwrap().uid() == 0;
    fs::remove_file(&probe).unwrap();
    root
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(ok.success(), "mkfifo {}", path.display());
}

/// A node that is not a regular file, made in `dir` (never under /dev): a character device
/// with /dev/null's numbers where we may (root), else a FIFO. Returns it and what it is.
fn special_node(dir: &Path) -> (PathBuf, &'static str) {
    let node = dir.join("null");
    if is_root(dir) {
        let ok = Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(ok.success(), "mknod");
        (node, "a character device")
    } else {
        eprintln!("not root: a FIFO stands in for the device node");
        mkfifo(&node);
        (node, "a FIFO")
    }
}

fn readme_text(middle: &str) -> String {
    format!("# Bench\n\nIntro.\n{middle}\nAfter.\n")
}

const PAIR: &str = "<!-- stream-top:begin -->\nold table\n<!-- stream-top:end -->";

// Output paths: devices, FIFOs, read-only files ----------------------------------------

#[test]
fn no_output_path_replaces_a_device_a_fifo_or_a_read_only_file() {
    let dir = tempfile::tempdir().unwrap();
    let (node, node_kind) = special_node(dir.path());
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let ro = dir.path().join("ro.prom");
    fs::write(&ro, "# kept\n").unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o444)).unwrap();
    let says_node = format!("{node_kind}, not a regular file");
    let cases: [(&str, &Path, &str); 6] = [
        ("--prom-file", &node, &says_node),
        ("--prom-file", &fifo, "a FIFO, not a regular file"),
        ("--prom-file", &ro, "read-only (mode 444)"),
        ("--readme", &node, &says_node),
        ("--readme", &fifo, "a FIFO, not a regular file"),
        ("--export", &node, "is not a directory"),
    ];
    for (flag, path, says) in cases {
        assert_refused_early(
            &strs(&with(SMALL, &[flag, path.to_str().unwrap()])),
            flag,
            says,
        );
    }
    let kind = fs::symlink_metadata(&node).unwrap().file_type();
    assert!(kind.is_char_device() || kind.is_fifo(), "{kind:?}");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(fs::read_to_string(&ro).unwrap(), "# kept\n");
    assert_eq!(names_in(dir.path()), ["fifo", "null", "ro.prom"]);
}

#[test]
fn a_symlink_to_a_device_is_refused_as_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let (node, node_kind) = special_node(dir.path());
    let link = dir.path().join("x.prom");
    std::os::unix::fs::symlink(&node, &link).unwrap();
    assert_refused_early(
        &strs(&with(SMALL, &["--prom-file", link.to_str().unwrap()])),
        "--prom-file",
        &format!("{node_kind}, not a regular file"),
    );
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
}

// Failed writes: a closed stdout, a full disk ------------------------------------------

/// Runs the binary with `args` and its stdout closed (`>&-`), as a shell would.
fn with_stdout_closed(args: &[&str]) -> Outcome {
    let mut sh = Command::new("sh");
    sh.args(["-c", "exec \"$0\" \"$@\" >&-", BIN]).args(args);
    run(sh, &format!("{args:?} >&-"))
}

#[test]
fn a_closed_stdout_fails_every_command_with_one_line() {
    let a = fixture_path("a.json");
    let b = fixture_path("b.json");
    for args in [
        SMALL.to_vec(),
        vec!["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        vec!["--help"],
        vec!["--version"],
    ] {
        let o = with_stdout_closed(&args);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        let last = o.stderr.trim_end().lines().last().unwrap_or_default();
        assert!(
            last.starts_with("stream-top: cannot write to stdout: Bad file descriptor"),
            "{args:?}: {}",
            o.stderr
        );
        assert_eq!(o.stderr.matches("cannot write").count(), 1, "{}", o.stderr);
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    }
}

#[test]
fn a_closed_stdout_still_writes_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    let o = with_stdout_closed(&strs(&with(SMALL, &["--export", export.to_str().unwrap()])));
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(has_full_export(&export), "{:?}", names_in(&export));
}

/// A tiny tmpfs mounted in a temporary directory, unmounted when dropped (also when the test
/// fails).
struct TinyMount {
    dir: tempfile::TempDir,
}

impl TinyMount {
    fn new() -> Option<TinyMount> {
        let dir = tempfile::tempdir().unwrap();
        if !is_root(dir.path()) {
            eprintln!("skipped: mounting a full tmpfs needs root");
            return None;
        }
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        if !ok.success() {
            eprintln!("skipped: mount -t tmpfs failed (no CAP_SYS_ADMIN here)");
            return None;
        }
        Some(TinyMount { dir })
    }

    /// Fills the filesystem: a file written until the disk is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = fs::File::create(self.dir.path().join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
}

impl Drop for TinyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_prom_file_on_a_full_disk_is_exit_1_with_the_reason() {
    let Some(mount) = TinyMount::new() else {
        return;
    };
    mount.fill();
    let prom = mount.dir.path().join("stream-top.prom");
    let o = run(
        stream_top(&strs(&with(
            SMALL,
            &["--prom-file", prom.to_str().unwrap()],
        ))),
        "--prom-file on a full disk",
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let said: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("--prom-file"))
        .collect();
    assert_eq!(
        said,
        [format!(
            "stream-top: cannot write {} (--prom-file): No space left on device (os error 28)",
            prom.display()
        )],
        "one line: {}",
        o.stderr
    );
    assert!(o.stdout.contains("| per array |"), "the table is printed");
    assert!(!prom.exists());
    assert_eq!(
        names_in(mount.dir.path()),
        ["filler"],
        "no temporary file left"
    );
}

// Temporary files of killed runs --------------------------------------------------------

/// A PID that no process has now: a child that has been waited for.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A temporary file named as a run of `pid` names them, last changed `age` ago.
fn temp_of(dir: &Path, pid: u32, n: u32, age: Duration) -> String {
    let name = format!(".stream-top-{pid}-{n}-000000123.tmp");
    let f = fs::File::create(dir.join(&name)).unwrap();
    f.set_len(1000).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
    name
}

#[test]
fn temp_files_of_dead_runs_are_removed_and_said_those_of_live_ones_stay() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    let textfiles = dir.path().join("textfile");
    fs::create_dir(&export).unwrap();
    fs::create_dir(&textfiles).unwrap();
    let hour = Duration::from_secs(3600);
    let dead = dead_pid();
    temp_of(&export, dead, 0, hour);
    temp_of(&export, dead, 1, hour);
    temp_of(&textfiles, dead, 2, hour);
    // A live run's (this test's own process), however old, and a dead PID's just written
    // (it may be a live run in another PID namespace): both stay.
    let live = temp_of(&export, std::process::id(), 3, hour);
    let fresh = temp_of(&export, dead, 4, Duration::ZERO);
    // Not ours by name.
    fs::write(export.join(".stream-top-notes.tmp"), "mine").unwrap();
    let prom = textfiles.join("stream-top.prom");
    let o = run(
        stream_top(&strs(&with(
            SMALL,
            &[
                "--export",
                export.to_str().unwrap(),
                "--prom-file",
                prom.to_str().unwrap(),
            ],
        ))),
        "stale temp files",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "stream-top: removed 2 stale temp files of dead runs in {}",
            export.display()
        )),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(&format!(
            "stream-top: removed 1 stale temp file of dead runs in {}",
            textfiles.display()
        )),
        "{}",
        o.stderr
    );
    let left: Vec<String> = names_in(&export)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    let mut want = vec![".stream-top-notes.tmp".to_string(), live, fresh];
    want.sort();
    assert_eq!(left, want);
    assert!(has_full_export(&export), "{:?}", names_in(&export));
    assert_eq!(names_in(&textfiles), ["stream-top.prom"]);
}

// README markers in fenced code blocks -------------------------------------------------

#[test]
fn readme_markers_in_a_fenced_block_are_examples_not_markers() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    let example = "```markdown\n<!-- stream-top:begin -->\nexample\n<!-- stream-top:end -->\n```";
    fs::write(&readme, readme_text(&format!("{example}\n\n{PAIR}"))).unwrap();
    let o = run(
        stream_top(&strs(&with(SMALL, &["--readme", readme.to_str().unwrap()]))),
        "--readme with a fenced example",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let text = fs::read_to_string(&readme).unwrap();
    assert!(text.contains(example), "the example is kept: {text}");
    assert!(
        text.contains("| per array |") && !text.contains("old table"),
        "{text}"
    );
}

#[test]
fn readme_markers_only_in_fenced_blocks_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    let text = readme_text(&format!("~~~\n{PAIR}\n~~~"));
    fs::write(&readme, &text).unwrap();
    assert_refused_early(
        &strs(&with(SMALL, &["--readme", readme.to_str().unwrap()])),
        "--readme",
        "only inside fenced code blocks",
    );
    assert_eq!(fs::read_to_string(&readme).unwrap(), text);
}

/// Root may write into any directory whatever its mode, so as root the run is made as nobody,
/// for whom a directory of mode 555 that nobody owns is read-only indeed (checked first).
#[test]
fn a_writable_readme_in_a_read_only_directory_is_rewritten_in_place() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("docs");
    fs::create_dir(&dir).unwrap();
    let readme = dir.join("README.md");
    fs::write(&readme, readme_text(PAIR)).unwrap();
    let root = is_root(top.path());
    if root {
        for p in [top.path(), &dir, &readme] {
            std::os::unix::fs::chown(p, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    }
    fs::set_permissions(&readme, fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let as_user = |mut c: Command| {
        if root {
            c.uid(NOBODY).gid(NOBODY);
        }
        c
    };
    let mut touch = as_user(Command::new("touch"));
    touch.arg(dir.join("probe"));
    let touched = touch.stderr(std::process::Stdio::null()).status().unwrap();
    assert!(
        !touched.success(),
        "the directory must be read-only to the run"
    );
    // Nobody may not reach the build's own binary (a checkout under a directory of mode 700):
    // run a copy inside the scratch directory nobody owns.
    let bin = top.path().join("stream-top");
    fs::copy(BIN, &bin).unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new(&bin);
    cmd.args(strs(&with(SMALL, &["--readme", readme.to_str().unwrap()])))
        .stdin(std::process::Stdio::null());
    let inode = fs::metadata(&readme).unwrap().ino();
    let o = run(as_user(cmd), "--readme in a read-only directory");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let text = fs::read_to_string(&readme).unwrap();
    assert!(
        text.contains("| per array |") && !text.contains("old table"),
        "{text}"
    );
    assert_eq!(
        fs::metadata(&readme).unwrap().ino(),
        inode,
        "rewritten in place"
    );
    assert_eq!(names_in(&dir), ["README.md"]);
}

#[test]
fn a_prom_file_that_is_a_symbolic_link_is_refused_and_its_target_kept() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious.txt");
    fs::write(&target, "keep me\n").unwrap();
    let link = dir.path().join("x.prom");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_refused_early(
        &strs(&with(SMALL, &["--prom-file", link.to_str().unwrap()])),
        "--prom-file",
        "a symbolic link",
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn an_export_directory_whose_parent_is_missing_is_refused_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("missing/results");
    assert_refused_early(
        &strs(&with(SMALL, &["--export", export.to_str().unwrap()])),
        "--export",
        "only the last component is created",
    );
    assert!(!dir.path().join("missing").exists());
}

#[test]
fn an_export_directory_whose_parent_exists_is_created_like_mkdir() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("results");
    let o = run(
        stream_top(&strs(&with(SMALL, &["--export", export.to_str().unwrap()]))),
        "--export into a new directory",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(has_full_export(&export), "{:?}", names_in(&export));
}
