//! What the failure-path tests (`fail_*`: refusals, bounded inputs, partial runs, failed
//! writes) share: the binary with a short headless run, its outcome with a guard against a
//! hang, and the shape of an early refusal.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use super::binary::{BIN, SMALL};

/// Not a timing threshold: a run that blocks (on a FIFO, say) is killed after this long so the
/// test fails with a message instead of hanging the suite.
const HANG_GUARD: Duration = Duration::from_secs(120);

pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn stream_top(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).stdin(Stdio::null());
    c
}

/// Waits for a spawned child, killing it (and failing) if it outlives the hang guard.
pub fn wait_guarded(mut child: Child, what: &str) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for stream-top") {
            return status.code();
        }
        if start.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: stream-top still ran after {HANG_GUARD:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the command with stdout and stderr captured, guarded against a hang.
pub fn run(mut cmd: Command, what: &str) -> Outcome {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start stream-top");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let code = wait_guarded(child, what);
    Outcome {
        code,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A refusal before anything is measured: exit 2, nothing on stdout, one line on stderr that
/// names `flag` and says `says`; no session line ("· kernel …"), no progress, no table.
pub fn assert_refused_early(args: &[&str], flag: &str, says: &str) {
    let o = run(stream_top(args), &format!("{args:?}"));
    assert_eq!(o.code, Some(2), "{args:?}: {}", o.stderr);
    assert!(o.stdout.is_empty(), "{args:?}: stdout {}", o.stdout);
    assert_eq!(
        o.stderr.trim_end().lines().count(),
        1,
        "{args:?}: {}",
        o.stderr
    );
    assert!(
        o.stderr.contains(flag),
        "{args:?}: {} lacks {flag}",
        o.stderr
    );
    assert!(
        o.stderr.contains(says),
        "{args:?}: {} lacks {says}",
        o.stderr
    );
    assert!(!o.stderr.contains("· kernel"), "measured: {}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// `args` with `more` after them.
pub fn with(args: &[&str], more: &[&str]) -> Vec<String> {
    args.iter().chain(more).map(|s| s.to_string()).collect()
}

/// `Vec<String>` as the `&[&str]` the helpers take.
pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The names of the files in a directory, sorted.
pub fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether an export of four files (md, csv, json, svg) is in `dir`.
pub fn has_full_export(dir: &std::path::Path) -> bool {
    let names = names_in(dir);
    ["md", "csv", "json", "svg"].iter().all(|ext| {
        names
            .iter()
            .any(|n| n.starts_with("stream-top-") && n.ends_with(&format!(".{ext}")))
    })
}
