//! `stream-top check` through the binary: its exit codes (0 ok, 1 SLOW, 2 when it cannot
//! check), the latency beside the triad, and the SLOW line naming how this node's fingerprint
//! differs from the reference's. Every run uses the hidden `--set` with a small per-thread set,
//! so each check takes a fraction of a second; references are doctored far from what any run
//! measures, so that a verdict does not depend on how busy the machine is.

#[cfg(target_os = "linux")] // the watched runs below
use crate::support::binary::BIN;
use crate::support::binary::run_binary;
#[cfg(target_os = "linux")] // /proc
use crate::support::procs::{children_of, ended};
use serde_json::Value;
use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")] // the watched runs below
use std::process::{Child, Command, Stdio};
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

const SET: &str = "16KiB/thread";

/// A directory of its own for one test, removed when it is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("stream-top-check-{name}-"))
        .tempdir()
        .unwrap()
}

/// The online CPUs, as check counts its threads.
fn cpus() -> String {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .to_string()
}

/// `check --set SET` with `more`: (exit code, stdout, stderr).
fn check(more: &[&str]) -> (i32, String, String) {
    run_binary(&[&["check", "--set", SET][..], more].concat())
}

/// A headless run of this machine as `node`, saved in `dir`: the triad on every CPU, or with
/// `latency` the idle latency (one thread chases).
fn snapshot(dir: &Path, node: &str, latency: bool) -> PathBuf {
    let threads = cpus();
    let base = [
        "--headless",
        "--sets",
        SET,
        "--format",
        "json",
        "--node",
        node,
    ];
    let what: &[&str] = if latency {
        &["--measure", "latency"]
    } else {
        &["--threads", &threads, "--rounds", "3", "--round-ms", "2"]
    };
    let (code, json, err) = run_binary(&[&base[..], what].concat());
    assert_eq!(code, 0, "{err}");
    let file = dir.join(format!(
        "{node}{}.json",
        if latency { "-latency" } else { "" }
    ));
    std::fs::write(&file, json).unwrap();
    file
}

/// The class reference that `fleet --export-reference` writes for two runs of this machine,
/// each with a bandwidth and a latency snapshot, as JSON to doctor.
fn class_reference(dir: &Path) -> Value {
    let snaps = dir.join("snapshots");
    std::fs::create_dir(&snaps).unwrap();
    for node in ["r-1", "r-2"] {
        snapshot(&snaps, node, false);
        snapshot(&snaps, node, true);
    }
    let file = dir.join("reference.json");
    let (code, _, err) = run_binary(&[
        "fleet",
        "--export-reference",
        file.to_str().unwrap(),
        snaps.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// Writes `v` as `name` in `dir`; its path as a string for the command line.
fn save(dir: &Path, name: &str, v: &Value) -> String {
    let file = dir.join(name);
    std::fs::write(&file, serde_json::to_string_pretty(v).unwrap()).unwrap();
    file.to_str().unwrap().to_string()
}

/// Every reference cell's GB/s set to `gbs`: far above or below anything a run measures (a
/// share of what the reference runs measured would not do: a 2 ms round on this shared
/// machine can come out at a hundredth of another's).
fn set_bandwidth(class: &mut Value, gbs: f64) {
    for cell in class["cells"].as_array_mut().unwrap() {
        cell[3] = gbs.into();
    }
}

#[test]
fn the_class_reference_carries_the_latency_and_the_common_fingerprint() {
    let tmp = scratch("carries");
    let reference = class_reference(tmp.path());
    let class = &reference[0];
    let latency = class["latency"].as_array().unwrap();
    assert_eq!(latency[0][0], "16 KiB/thread", "{class}");
    assert!(latency[0][1].as_f64().unwrap() > 0.0);
    assert!(class["common"]["fields"].is_object(), "{class}");
    // A node's bandwidth and latency snapshots merge (one name, one machine): two nodes of
    // this machine's class, and its reference is this machine's.
    assert_eq!(class["nodes"], 2, "{class}");
    let (code, out, err) = check(&["--against", &save(tmp.path(), "r.json", &reference)]);
    assert!([0, 1, 3].contains(&code), "{err}");
    assert!(
        out.contains(" × class ")
            && out.contains(" reference, latency ")
            && out.contains(" × reference)"),
        "{out}"
    );
}

#[test]
fn a_reference_far_faster_is_slow_and_the_line_names_the_field_that_differs() {
    let tmp = scratch("differs");
    let mut reference = class_reference(tmp.path());
    set_bandwidth(&mut reference[0], 1e9);
    // The latency passes by far: the bandwidth alone is slow.
    reference[0]["latency"][0][1] = 1e9.into();
    reference[0]["common"]["fields"]["kernel"] = "0.0-doctored".into();
    let (code, out, err) = check(&["--against", &save(tmp.path(), "r.json", &reference)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("SLOW: 16 KiB/thread × "), "{out}");
    assert!(out.contains(" (reference: 0.0-doctored)"), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
}

#[test]
fn a_latency_far_above_the_reference_is_slow_and_says_it_is_the_latency() {
    let tmp = scratch("latency");
    let mut reference = class_reference(tmp.path());
    // The bandwidth passes by far; no chase is as quick as a thousandth of a nanosecond.
    set_bandwidth(&mut reference[0], 1e-9);
    reference[0]["latency"][0][1] = 1e-3.into();
    let (code, out, err) = check(&["--against", &save(tmp.path(), "r.json", &reference)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("SLOW latency: "), "{out}");
    assert!(
        out.trim_end()
            .ends_with("; no difference found in the fingerprint"),
        "{out}"
    );
}

#[test]
fn a_reference_written_before_the_latency_and_fingerprint_still_reads() {
    let tmp = scratch("older");
    let mut reference = class_reference(tmp.path());
    let class = reference[0].as_object_mut().unwrap();
    class.remove("latency");
    class.remove("common");
    set_bandwidth(&mut reference[0], 1e9);
    let (code, out, err) = check(&["--against", &save(tmp.path(), "r.json", &reference)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.trim_end()
            .ends_with("; the reference carries no fingerprint to compare with"),
        "{out}"
    );
}

#[test]
fn a_snapshot_of_this_machine_doctored_faster_is_slow_with_no_difference_found() {
    let tmp = scratch("snapshot");
    let file = snapshot(tmp.path(), "same", false);
    let (code, out, err) = check(&["--against", file.to_str().unwrap()]);
    assert!([0, 1, 3].contains(&code), "{err}");
    let named = format!(" × {} (16 KiB/thread × {})", file.display(), cpus());
    assert!(out.contains(&named), "{out}");
    let mut snap: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for cell in snap["cells"].as_array_mut().unwrap() {
        // Far above any run here, and below the most a snapshot may claim (100 TB/s).
        cell["figures"]["median_gbs"] = 9e4.into();
    }
    let (code, out, err) = check(&["--against", &save(tmp.path(), "fast.json", &snap)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("SLOW: ")
            && out
                .trim_end()
                .ends_with("; no difference found in the fingerprint"),
        "{out}"
    );
}

#[test]
fn check_exits_2_for_what_it_cannot_check_each_in_one_line() {
    let tmp = scratch("errors");
    let dir = tmp.path();
    let not_json = dir.join("notes.txt");
    std::fs::write(&not_json, "not a reference\n").unwrap();
    let mut other_class = class_reference(dir);
    let mut other_set = other_class.clone();
    other_class[0]["class"] = "00000000".into();
    for cell in other_set[0]["cells"].as_array_mut().unwrap() {
        cell[1] = "l3".into();
    }
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--against".into(), "/nonexistent/ref.json".into()],
            "cannot read",
        ),
        (
            vec!["--against".into(), dir.display().to_string()],
            "a directory, not a regular file",
        ),
        (
            vec!["--against".into(), not_json.display().to_string()],
            "not",
        ),
        (
            vec!["--against".into(), save(dir, "c.json", &other_class)],
            "has no reference for this node's class",
        ),
        (
            vec!["--against".into(), save(dir, "s.json", &other_set)],
            "at triad 16 KiB/thread × ",
        ),
        (
            vec!["--min-gbs".into(), "1".into(), "--bogus".into()],
            "--bogus",
        ),
        (vec!["--min-gbs".into(), "fast".into()], "fast"),
        (vec![], "--against"),
    ];
    for (more, says) in cases {
        let more: Vec<&str> = more.iter().map(String::as_str).collect();
        let (code, out, err) = check(&more);
        assert_eq!(code, 2, "{more:?}: {out}{err}");
        assert!(out.is_empty(), "{more:?}: {out}");
        assert!(err.contains(says), "{more:?}: {err}");
        assert!(!err.contains("panicked"), "{more:?}: {err}");
    }
}

#[test]
fn a_floor_far_above_is_slow_and_names_no_reference() {
    let (code, out, err) = check(&["--min-gbs", "1e12"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.starts_with("SLOW: ") && out.contains("< 1000000000000 --min-gbs, latency "),
        "{out}"
    );
    assert!(!out.contains("fingerprint"), "{out}");
    let (code, out, err) = check(&["--min-gbs", "0.001"]);
    crate::support::binary::assert_ok_unless_contended(code, &out, &err);
    assert!(out.contains(" ns"), "{out}");
}

#[test]
fn checks_latency_run_chases_on_huge_pages_only() {
    let run = |more: &[&str]| {
        let base = ["--headless", "--measure", "latency", "--sets", "4MiB"];
        let (code, json, err) = run_binary(&[&base[..], &["--format", "json"], more].concat());
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&json).unwrap();
        v["latency"][0].clone()
    };
    let without = run(&["--no-tlb"]);
    assert!(without["median_ns"].as_f64().unwrap() > 0.0, "{without}");
    assert!(without["small_pages_ns"].is_null(), "{without}");
    // The flag belongs to the latency run: the live monitor refuses it, in one line.
    let (code, _, err) = run_binary(&["--no-tlb"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
}

/// How long a watched check may run before the test kills it and fails: generous, for a
/// loaded machine (a check that reads a device forever would otherwise hang the test).
#[cfg(target_os = "linux")]
const WATCH_LIMIT: Duration = Duration::from_secs(60);

/// The child's pipe read to its end on a thread.
#[cfg(target_os = "linux")]
fn drain(pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(pipe), &mut text);
        text
    })
}

/// Kills `child` and whatever children it started, and reaps it: a failed test leaves
/// nothing running.
#[cfg(target_os = "linux")]
fn kill_all(child: &mut Child) {
    for pid in children_of(child.id()) {
        // SAFETY: kill(2) on a PID read from /proc a moment ago; it touches no memory of ours.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The address space a refused check runs in: ample for refusing, far less than reading a
/// device or an over-large file whole would take (which then fails, instead of filling the
/// shared machine's memory).
#[cfg(target_os = "linux")]
const REFUSAL_ADDRESS_SPACE: u64 = 200 << 20;

/// `stream-top ARGS` watched to its end: (exit code, stdout, stderr, whether it started a
/// process of its own, i.e. measured, at any moment). Killed past `WATCH_LIMIT`, failing. With
/// `small`, it runs in `REFUSAL_ADDRESS_SPACE`.
#[cfg(target_os = "linux")]
fn watched(args: &[&str], small: bool) -> (Option<i32>, String, String, bool) {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(BIN);
    if small {
        let limit = libc::rlimit {
            rlim_cur: REFUSAL_ADDRESS_SPACE,
            rlim_max: REFUSAL_ADDRESS_SPACE,
        };
        // SAFETY: the closure runs in the forked child before exec and calls only setrlimit,
        // which is async-signal-safe, on a value it owns.
        unsafe {
            command.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let start = Instant::now();
    let mut measured = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        measured |= !children_of(child.id()).is_empty();
        if start.elapsed() > WATCH_LIMIT {
            kill_all(&mut child);
            panic!("{args:?} still running after {WATCH_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    (status.code(), out, err, measured)
}

/// `check --against` a device, a FIFO or a file past the size stream-top reads: refused from
/// the file's metadata in one line, exit 2, without reading it and before anything is
/// measured (no child process ever starts).
#[test]
#[cfg(target_os = "linux")]
fn a_reference_that_is_no_regular_file_or_too_large_is_refused_before_measuring() {
    let tmp = scratch("special");
    let fifo = tmp.path().join("ref.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo");
    // Sparse: 300 MiB long, nothing on disk.
    let big = tmp.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let cases = [
        (
            "/dev/zero".to_string(),
            "a character device, not a regular file",
        ),
        (fifo.display().to_string(), "a FIFO, not a regular file"),
        (
            big.display().to_string(),
            "is more than the 256 MiB stream-top reads",
        ),
    ];
    for (file, says) in cases {
        let (code, out, err, measured) = watched(&["check", "--against", &file], true);
        assert_eq!(code, Some(2), "{file}: {out}{err}");
        assert!(out.is_empty(), "{file}: {out}");
        assert_eq!(err.lines().count(), 1, "{file}: {err}");
        assert!(
            err.contains(&format!("check: --against: {file}: ")),
            "{err}"
        );
        assert!(err.contains(says), "{file}: {err}");
        assert!(!measured, "{file}: measured before refusing: {err}");
    }
}

/// A reference without the cell check needs (an l1-only snapshot, a class reference without
/// the triad at the check's set) is refused before anything is measured: the cell follows from
/// the plan, not from the measurement.
#[test]
#[cfg(target_os = "linux")]
fn a_reference_without_the_cell_check_needs_is_refused_before_measuring() {
    let tmp = scratch("lacks");
    let l1 = tmp.path().join("l1.json");
    let base = [
        "--headless",
        "--format",
        "json",
        "--sets",
        "l1",
        "--threads",
        "1",
    ];
    let (code, json, err) =
        run_binary(&[&base[..], &["--rounds", "3", "--round-ms", "2"]].concat());
    assert_eq!(code, 0, "{err}");
    std::fs::write(&l1, json).unwrap();
    let mut class = class_reference(tmp.path());
    for cell in class[0]["cells"].as_array_mut().unwrap() {
        cell[1] = "l1".into();
    }
    let cases = [
        (l1.display().to_string(), " has no triad dram × "),
        (save(tmp.path(), "c.json", &class), " at triad dram × "),
    ];
    for (file, says) in cases {
        // The default set, dram, whose measurement takes seconds: it must not start.
        let (code, out, err, measured) = watched(&["check", "--against", &file], false);
        assert_eq!(code, Some(2), "{file}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{file}: {err}");
        assert!(err.contains(says), "{file}: {err}");
        assert!(!measured, "{file}: measured before refusing: {err}");
    }
}

/// SIGTERM or SIGINT to `check` ends the child that measures with it: none is left running.
#[test]
#[cfg(target_os = "linux")]
fn checks_child_ends_with_it_on_a_signal() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // A triad of a hundred thousand rounds: minutes, unless it ends with its parent.
        let mut child = Command::new(BIN)
            .args([
                "check",
                "--min-gbs",
                "1",
                "--set",
                SET,
                "--rounds",
                "100000",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = drain(child.stderr.take().unwrap());
        let parent = child.id();
        let start = Instant::now();
        let measuring = loop {
            if let Some(&pid) = children_of(parent).first() {
                break pid;
            }
            if start.elapsed() > WATCH_LIMIT || child.try_wait().unwrap().is_some() {
                kill_all(&mut child);
                panic!("check started no child: {}", err.join().unwrap());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
        unsafe { libc::kill(parent as i32, sig) };
        let status = child.wait().unwrap();
        let gone = Instant::now();
        while !ended(measuring) && gone.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left = !ended(measuring);
        if left {
            // SAFETY: kill(2) on the PID of the orphan this test's check left running.
            unsafe { libc::kill(measuring as i32, libc::SIGKILL) };
        }
        let err = err.join().unwrap();
        assert!(
            !left,
            "signal {sig}: check's child {measuring} runs on: {err}"
        );
        use std::os::unix::process::ExitStatusExt;
        let ended_by = status.signal().or(status.code().map(|c| c - 128));
        assert_eq!(ended_by, Some(sig), "{status}: {err}");
    }
}

/// A floor must be a positive number of GB/s: zero or a negative one, in either spelling, is
/// refused in one line naming the flag, before anything is measured.
#[test]
fn a_floor_that_is_not_positive_is_refused_naming_the_flag() {
    for more in [
        &["--min-gbs", "0"][..],
        &["--min-gbs=-5"],
        &["--min-gbs", "-5"],
        &["--min-gbs", "-0.5"],
    ] {
        let (code, out, err) = check(more);
        assert_eq!(code, 2, "{more:?}: {out}{err}");
        assert!(out.is_empty(), "{more:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{more:?}: {err}");
        assert!(
            err.contains("--min-gbs") && err.contains("must be a positive number"),
            "{more:?}: {err}"
        );
    }
}

/// A first slow reading is measured again before check says SLOW: both readings of a
/// reference far faster are slow, and the line gives the second.
#[test]
fn slow_is_said_only_when_a_second_reading_agrees() {
    let (code, out, err) = check(&["--min-gbs", "1e12"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("SLOW: ") && out.contains(", slow again at "),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "{out}");
}

/// Where no time is left for a second reading, a slow first reading is UNSURE, exit 3: the
/// prolog may requeue rather than drain.
#[test]
fn a_slow_reading_that_cannot_be_measured_again_is_unsure() {
    let (code, out, err) = check(&["--min-gbs", "1e12", "--seconds", "0"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.starts_with("UNSURE: "), "{out}");
    assert!(
        out.contains(", not measured again (no time for a second reading within check's 0 s)"),
        "{out}"
    );
    assert!(
        out.trim_end()
            .ends_with("; slow in one reading only: run check again later"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "{out}");
    // A reading that is not slow needs no second one: ok, in any time.
    let (code, out, err) = check(&["--min-gbs", "0.001", "--seconds", "0"]);
    crate::support::binary::assert_ok_unless_contended(code, &out, &err);
    assert!(!out.contains("not measured again"), "{out}");
}
