//! The stream-top binary as the tests run it: one place for the command and its outcome.

use std::process::Command;

/// The binary under test, built by cargo for this test crate.
pub const BIN: &str = env!("CARGO_BIN_EXE_stream-top");

/// A headless run that measures almost nothing: one thread, one small set, short rounds.
pub const SMALL: &[&str] = &[
    "--headless",
    "--threads",
    "1",
    "--sets",
    "16KiB/thread",
    "--rounds",
    "3",
    "--round-ms",
    "2",
];

/// Runs the binary with `args` to the end: its exit code (-1 for a signal), stdout and stderr.
pub fn run_binary(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("run stream-top");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A `check` whose reading is far above its floor is ok, unless the host's other work disturbed
/// its rounds (the test suite's own tests run beside it): then it is UNSURE, exit 3, and says
/// so. Any other outcome fails.
pub fn assert_ok_unless_contended(code: i32, out: &str, err: &str) {
    if code == 3 {
        assert!(
            out.starts_with("UNSURE: ") && out.contains("; measured through contention: "),
            "{out}{err}"
        );
    } else {
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.starts_with("ok: "), "{out}");
    }
}
