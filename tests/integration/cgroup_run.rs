//! The real binary inside a 400 MiB memory cgroup of this machine: a child of the test's own
//! memory cgroup (v1 `memory.limit_in_bytes`, or v2 `memory.max` where the controller can be
//! given to a child). An explicit set over the limit is refused naming it, and the default
//! `dram` set shrinks to fit instead of being OOM-killed. Two runs started together in one
//! 400 MB cgroup, each sized on the same free room, are not OOM-killed either: each completes
//! or stops its cell short of the limit and says so. Skipped, with the reason printed, where
//! no such cgroup can be made (not root, no memory controller, a read-only cgroupfs).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child as Process, Command, Output, Stdio};
use std::time::Duration;
use stream_top::base::units::parse_size;
use stream_top::machine::cgroup::{Version, parse_mountinfo, parse_proc_cgroup};

const LIMIT: u64 = 400 << 20;

/// A memory cgroup made for the test, removed when dropped; with a runtime directory for the
/// lock file its instances take turns on (removed too).
struct Child {
    dir: PathBuf,
    runtime: tempfile::TempDir,
}

impl Drop for Child {
    fn drop(&mut self) {
        // A group is removable once its processes are gone, which the kernel may take a moment
        // to see after they exit (also when a test failed with them still running).
        for _ in 0..100 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("could not remove {}", self.dir.display());
    }
}

/// Makes a child of our own memory cgroup named for this test (`name`) with a memory limit of
/// `limit` bytes, or says why it cannot.
fn make_child(name: &str, limit: u64) -> Result<Child, String> {
    let groups = parse_proc_cgroup(
        &fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("no /proc/self/cgroup: {e}"))?,
    );
    let mounts = parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let is_memory = |c: &[String]| c.iter().any(|c| c == "memory");
    let (version, own) = match (
        groups.iter().find(|g| is_memory(&g.controllers)),
        mounts
            .iter()
            .find(|m| m.version == Version::V1 && is_memory(&m.controllers)),
    ) {
        (Some(g), Some(m)) => (Version::V1, join(m, &g.path)?),
        _ => {
            let g = groups
                .iter()
                .find(|g| g.controllers.is_empty())
                .ok_or("no memory cgroup for this process")?;
            let m = mounts
                .iter()
                .find(|m| m.version == Version::V2)
                .ok_or("no cgroup2 mount and no v1 memory controller")?;
            (Version::V2, join(m, &g.path)?)
        }
    };
    let dir = own.join(format!("stream-top-test-{name}-{}", std::process::id()));
    fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let child = Child {
        dir,
        runtime: tempfile::tempdir().map_err(|e| format!("no temp dir: {e}"))?,
    };
    let (file, value) = match version {
        Version::V1 => ("memory.limit_in_bytes", limit.to_string()),
        Version::V2 => ("memory.max", limit.to_string()),
    };
    // v2 gives a child the memory controller only where its parent has no processes of its
    // own: memory.max is then missing, and the test cannot run here.
    fs::write(child.dir.join(file), &value)
        .map_err(|e| format!("cannot set {file} in {}: {e}", child.dir.display()))?;
    Ok(child)
}

fn join(m: &stream_top::machine::cgroup::CgroupMount, group: &str) -> Result<PathBuf, String> {
    let rel = if m.root == "/" {
        group
    } else {
        group
            .strip_prefix(m.root.as_str())
            .ok_or("our cgroup is outside what is mounted")?
    };
    Ok(Path::new(&m.mount_point).join(rel.trim_start_matches('/')))
}

/// stream-top with `args`, to be run as a member of `cgroup`.
fn command_in(cgroup: &Child, args: &[&str]) -> Command {
    let procs = cgroup.dir.join("cgroup.procs");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "echo $$ > '{}' && exec \"$0\" \"$@\"",
            procs.display()
        ))
        .arg(env!("CARGO_BIN_EXE_stream-top"))
        .args(args)
        .env("XDG_RUNTIME_DIR", cgroup.runtime.path());
    cmd
}

/// Runs stream-top with `args` as a member of `cgroup`.
fn run_in(cgroup: &Child, args: &[&str]) -> Output {
    command_in(cgroup, args).output().expect("run sh")
}

#[test]
fn in_a_400_mib_cgroup_sets_shrink_or_are_refused_instead_of_oom() {
    let cgroup = match make_child("sizing", LIMIT) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: cannot make a memory cgroup here: {why}");
            return;
        }
    };
    let out = run_in(&cgroup, &["--headless", "--sets", "1GiB"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the container's memory limit 400 MiB"),
        "{err}"
    );

    let out = run_in(
        &cgroup,
        &[
            "--headless",
            "--threads",
            "1",
            "--sets",
            "dram",
            "--rounds",
            "3",
            "--round-ms",
            "5",
        ],
    );
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // 137 would be the OOM killer.
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("in a container: memory limit 400 MiB"),
        "{err}"
    );
    // The dram row: three arrays of that size fit under the limit.
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| ") && l.contains(" (dram) |"))
        .unwrap_or_else(|| panic!("a dram row:\n{stdout}"));
    let size = row[2..row.find(" (dram)").unwrap()].replace(' ', "");
    let bytes = parse_size(&size).unwrap();
    assert!(3 * bytes < LIMIT, "{row}");
}

#[test]
fn two_runs_started_together_in_a_400_mb_cgroup_are_not_oom_killed() {
    let cgroup = match make_child("two", 400_000_000) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: cannot make a memory cgroup here: {why}");
            return;
        }
    };
    // Each sizes dram for the whole room (3 × 110 MiB of 381.5 MiB): both cannot hold it.
    let args = [
        "--headless",
        "--threads",
        "1",
        "--sets",
        "l2,dram",
        "--rounds",
        "3",
        "--round-ms",
        "5",
    ];
    let start = || -> Process {
        command_in(&cgroup, &args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sh")
    };
    let runs = [start(), start()];
    let outs: Vec<Output> = runs
        .into_iter()
        .map(|r| r.wait_with_output().expect("wait"))
        .collect();
    let mut completed = 0;
    for out in &outs {
        let (stdout, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        // SIGKILL (the OOM killer; 137 from a shell) gives no exit code.
        match out.status.code() {
            Some(0) => completed += 1,
            Some(1) => {
                // Stopped short of the limit, said so, and kept what it measured.
                assert!(
                    err.contains(
                        "(dram) × 1: FAILED: stopped before the container's memory limit: "
                    ),
                    "{err}"
                );
                let l2 = stdout
                    .lines()
                    .find(|l| l.starts_with("| ") && l.contains(" (l2) |"))
                    .unwrap_or_else(|| panic!("the finished l2 row:\n{stdout}"));
                assert!(l2.contains(" | ok | "), "{l2}");
                let dram = stdout
                    .lines()
                    .find(|l| l.starts_with("| ") && l.contains(" (dram) |"))
                    .unwrap_or_else(|| panic!("the failed dram row:\n{stdout}"));
                assert!(dram.contains("FAILED: stopped before"), "{dram}");
            }
            other => panic!("exit {other:?} ({:?}):\n{err}", out.status),
        }
    }
    // Taking turns to touch, one of them always has the room it sized for.
    assert!(completed >= 1, "neither completed");
}
