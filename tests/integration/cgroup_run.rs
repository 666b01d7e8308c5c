//! The real binary inside a 400 MiB memory cgroup of this machine: a child of the test's own
//! memory cgroup (v1 `memory.limit_in_bytes`, or v2 `memory.max` where the controller can be
//! given to a child). An explicit set over the limit is refused naming it, and the default
//! `dram` set shrinks to fit instead of being OOM-killed. Skipped, with the reason printed,
//! where no such cgroup can be made (not root, no memory controller, a read-only cgroupfs).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use stream_top::base::units::parse_size;
use stream_top::machine::cgroup::{Version, parse_mountinfo, parse_proc_cgroup};

const LIMIT: u64 = 400 << 20;

/// A memory cgroup made for the test, removed when dropped.
struct Child {
    dir: PathBuf,
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

/// Makes a child of our own memory cgroup with a 400 MiB limit, or says why it cannot.
fn make_child() -> Result<Child, String> {
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
    let dir = own.join(format!("stream-top-test-{}", std::process::id()));
    fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let child = Child { dir };
    let (file, value) = match version {
        Version::V1 => ("memory.limit_in_bytes", LIMIT.to_string()),
        Version::V2 => ("memory.max", LIMIT.to_string()),
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

/// Runs stream-top with `args` as a member of `cgroup`.
fn run_in(cgroup: &Child, args: &[&str]) -> Output {
    let procs = cgroup.dir.join("cgroup.procs");
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > '{}' && exec \"$0\" \"$@\"",
            procs.display()
        ))
        .arg(env!("CARGO_BIN_EXE_stream-top"))
        .args(args)
        .output()
        .expect("run sh")
}

#[test]
fn in_a_400_mib_cgroup_sets_shrink_or_are_refused_instead_of_oom() {
    let cgroup = match make_child() {
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
