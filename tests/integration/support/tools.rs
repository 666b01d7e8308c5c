//! The outside programs some tests drive (prometheus, curl, taskset): whether one is there.
//! Outside CI a missing one skips its test with the reason; in CI it fails, since `.ci/run`
//! installs every one of them and a silent skip there would hide a missing install step.

use std::process::{Command, Stdio};

/// Whether `program --version` runs; false (with `install`, how to get it, printed) only
/// outside CI.
pub fn have(program: &str, install: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is not installed, but CI must have it ({install})"
        );
        eprintln!("skipped: {program} is not installed ({install})");
    }
    found
}
