//! The real binary inside a 400 MiB memory cgroup of this machine: a child of the test's own
//! memory cgroup (v1 `memory.limit_in_bytes`, or v2 `memory.max` where the controller can be
//! given to a child). An explicit set over the limit is refused naming it, and the default
//! `dram` set shrinks to fit instead of being OOM-killed. Two runs started together in one
//! 400 MB cgroup, each sized on the same free room, are not OOM-killed either: each completes
//! or stops its cell short of the limit and says so. A service whose cell failed for want of
//! memory measures it again once the room is back. Skipped, with the reason printed, where no
//! such cgroup can be made (not root, no memory controller, a read-only cgroupfs).

#[cfg(feature = "test-hooks")]
use crate::support::serve::{PATIENCE, Service};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child as Process, Command, Output, Stdio};
use std::time::Duration;
#[cfg(feature = "test-hooks")]
use std::time::Instant;
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

/// The figure of `series` (name and labels) in an exposition.
#[cfg(feature = "test-hooks")]
fn metric(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Scrapes `svc` until `until` holds of the exposition (every `PATIENCE` at most); the
/// exposition then.
#[cfg(feature = "test-hooks")]
fn scrape_until(svc: &mut Service, what: &str, until: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (_, body) = svc.get("/metrics");
        if until(&body) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{what}:\n{body}\n{}",
            svc.state()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A service whose 64 MiB cell runs out of room when the limit is lowered under it (as when
/// other instances take the cgroup's memory) goes on sweeping without it, says it failed,
/// tries it again with backoff (shortened by the test hook), and measures it again once the
/// room is back. Before, such a cell stayed failed for good and no sweep ever completed. Only
/// where a v1 memory controller can be given to a child: lowering a v2 `memory.max` under a
/// process's usage calls the OOM killer instead of refusing.
// A test hook (`STREAM_TOP_…`): only in a build with the `test-hooks` feature.
#[cfg(feature = "test-hooks")]
#[test]
fn a_service_measures_a_cell_that_failed_for_want_of_memory_again_once_the_room_is_back() {
    let cgroup = match make_child("retry", LIMIT) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: cannot make a memory cgroup here: {why}");
            return;
        }
    };
    let limit_file = cgroup.dir.join("memory.limit_in_bytes");
    if !limit_file.exists() {
        eprintln!("skipped: no v1 memory controller (memory.limit_in_bytes) here");
        return;
    }
    let mut command = command_in(
        &cgroup,
        &[
            "--headless",
            "--serve",
            "127.0.0.1:0",
            "--no-probe",
            "--threads",
            "1",
            "--sets",
            "16KiB/thread,64MiB",
            "--round-ms",
            "3",
            "--duty",
            "50",
        ],
    );
    command.env("STREAM_TOP_RETRY_FIRST_MS", "300");
    let mut svc = Service::spawn(command);
    let big = r#"{level="none",op="triad",set="64 MiB",threads="1"}"#;
    let rounds = |body: &str| metric(body, &format!("stream_top_rounds_total{big}"));
    scrape_until(&mut svc, "the 64 MiB cell measured", |b| {
        rounds(b).is_some_and(|n| n >= 1.0)
    });
    // 150 MiB: too little for its three arrays of 64 MiB. The kernel refuses a limit under
    // what the group uses now (the cell's arrays in place): then again until it takes.
    let deadline = Instant::now() + PATIENCE;
    while fs::write(&limit_file, (150u64 << 20).to_string()).is_err() {
        assert!(Instant::now() < deadline, "the lower limit was never taken");
        std::thread::sleep(Duration::from_millis(50));
    }
    let failed = scrape_until(&mut svc, "the cell failed and was tried again", |b| {
        metric(b, "stream_top_cells_failed") == Some(1.0)
            && metric(b, "stream_top_cell_retries_total").is_some_and(|n| n >= 1.0)
    });
    let swept = metric(&failed, "stream_top_last_sweep_timestamp_seconds");
    // Sweeps go on without it: the small cell's visits complete them.
    scrape_until(&mut svc, "a sweep completed with the cell failed", |b| {
        metric(b, "stream_top_last_sweep_timestamp_seconds").is_some_and(|t| Some(t) != swept)
            && metric(b, "stream_top_cells_failed") == Some(1.0)
    });
    let before = rounds(&failed).unwrap_or(0.0);
    fs::write(&limit_file, LIMIT.to_string()).expect("raise the limit again");
    let back = scrape_until(&mut svc, "the cell measured again", |b| {
        rounds(b).is_some_and(|n| n > before) && metric(b, "stream_top_cells_failed") == Some(0.0)
    });
    assert!(metric(&back, "stream_top_cell_retries_total").is_some_and(|n| n >= 1.0));
    assert!(metric(&back, "stream_top_last_sweep_timestamp_seconds").is_some());
    let (code, _, err) = svc.terminate();
    assert_eq!(code, Some(143), "{err}");
    assert!(
        err.contains("64 MiB × 1: FAILED: stopped before the container's memory limit"),
        "{err}"
    );
    assert!(err.contains("64 MiB × 1: tried again (try 1)"), "{err}");
}
