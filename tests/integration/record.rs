//! `--record FILE` and `stream-top replay FILE --headless`: a recording replays to the table
//! the run printed, survives `kill -9`, and a file that is not a recording is never written.

use crate::support::binary::{BIN, SMALL, run_binary};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The table's rows: what a replay must give back as the run printed it.
fn rows(table: &str) -> Vec<&str> {
    table.lines().filter(|l| l.starts_with('|')).collect()
}

/// A small run with no trials: its choices are rules, so the run is short in a debug build.
fn small_args(record: &str) -> Vec<&str> {
    let mut a = SMALL.to_vec();
    a.extend([
        "--kernel",
        "portable",
        "--huge-pages",
        "off",
        "--record",
        record,
    ]);
    a
}

/// A run of `args` (given its recording's name) recorded in a directory of its own, which
/// lasts as long as the test holds it: the directory, the recording's name, the table the run
/// printed and its stderr. The run must succeed.
fn recorded(args: impl Fn(&str) -> Vec<&str>) -> (tempfile::TempDir, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.rec").to_str().unwrap().to_string();
    let (code, table, err) = run_binary(&args(&rec));
    assert_eq!(code, 0, "{err}");
    (dir, rec, table, err)
}

#[test]
fn a_headless_run_replays_to_the_table_it_printed() {
    let (_dir, rec, table, err) = recorded(small_args);
    let rec = rec.as_str();
    assert!(err.contains("recording to"), "{err}");
    let (code, replayed, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    assert!(!rows(&table).is_empty());
    assert_eq!(rows(&replayed), rows(&table));
}

#[test]
fn a_run_of_several_ops_replays_each_ops_table() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("ops.rec");
    let rec = rec.to_str().unwrap();
    let mut args = small_args(rec);
    args.extend(["--op", "copy,read"]);
    let (code, table, err) = run_binary(&args);
    assert_eq!(code, 0, "{err}");
    let (code, replayed, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    // Each op's heading and its rows, as the run printed them (before ops were recorded, every
    // round replayed as a triad round, and these tables were empty).
    let ops_and_rows = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("### ") || l.starts_with('|'))
            .map(String::from)
            .collect()
    };
    assert!(
        table.contains("### copy") && table.contains("### read"),
        "{table}"
    );
    assert_eq!(ops_and_rows(&replayed), ops_and_rows(&table));
    assert!(
        !replayed.contains("No cell has a timed round yet"),
        "{replayed}"
    );
}

#[test]
fn a_window_with_no_rounds_and_a_bad_time_are_one_line_and_exit_2() {
    let (_dir, rec, _, _) = recorded(small_args);
    let rec = rec.as_str();
    let (code, _, err) = run_binary(&["replay", rec, "--headless", "--from", "10h", "--to", "11h"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("no rounds recorded"), "{err}");
    let (code, _, err) = run_binary(&["replay", rec, "--headless", "--at", "soon"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--at soon: not a time"), "{err}");
}

#[test]
fn a_file_that_is_not_a_recording_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let (code, _, err) = run_binary(&small_args(notes.to_str().unwrap()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a stream-top recording"), "{err}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    let (code, _, err) = run_binary(&["replay", notes.to_str().unwrap(), "--headless"]);
    assert_eq!(code, 2, "{err}");
}

/// A recording that is not there is the error to hear of, whatever stdout is (here a pipe,
/// which the screens cannot use either).
#[test]
fn replay_of_a_missing_file_names_the_file_before_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nosuch.rec");
    let (code, out, err) = run_binary(&["replay", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "stream-top: replay: cannot read {}",
            missing.display()
        )),
        "{err}"
    );
    // A recording that is there still needs the terminal.
    let rec = dir.path().join("a.rec");
    let (code, _, err) = run_binary(&small_args(rec.to_str().unwrap()));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run_binary(&["replay", rec.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("stdout is not a terminal"), "{err}");
}

/// The rounds a replay of the recording counts for its one cell, or None while it has none.
fn replayed_rounds(rec: &str) -> Option<usize> {
    let (code, out, _) = run_binary(&["replay", rec, "--headless", "--from", "0", "--to", "24h"]);
    (code == 0).then(|| rows(&out).len())
}

#[test]
fn a_service_killed_with_sigkill_replays_what_it_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("svc.rec");
    let rec = rec.to_str().unwrap();
    let mut args = small_args(rec);
    args.retain(|a| *a != "--rounds" && *a != "3");
    args.extend(["--serve", "127.0.0.1:0", "--duty", "100"]);
    let mut child = Command::new(BIN)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the writer has put rounds on disk (it writes at least once a second); the bound
    // only keeps a broken build from hanging the suite.
    let until = Instant::now() + Duration::from_secs(300);
    while replayed_rounds(rec).is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(500));
    }
    // SIGKILL: no handler runs, nothing is flushed on the way out.
    child.kill().unwrap();
    child.wait().unwrap();
    let (code, out, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    assert!(rows(&out).len() >= 3, "{out}");
}

#[test]
fn two_windows_of_one_recording_compare() {
    let (dir, rec, _, _) = recorded(small_args);
    let rec = rec.as_str();
    let window = |name: &str| {
        let path = dir.path().join(name);
        let (code, json, err) = run_binary(&[
            "replay",
            rec,
            "--headless",
            "--from",
            "0",
            "--to",
            "1h",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::write(&path, json).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (window("a.json"), window("b.json"));
    let (code, text, err) = run_binary(&["compare", &a, &b]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("B/A"), "{text}");
}

#[test]
fn the_interactive_replay_needs_a_terminal_and_a_window_needs_headless() {
    let (_dir, rec, _, _) = recorded(small_args);
    let rec = rec.as_str();
    let (code, _, err) = run_binary(&["replay", rec]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("not a terminal"), "{err}");
    let (code, _, err) = run_binary(&["replay", rec, "--from", "0", "--to", "1m"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("add --headless"), "{err}");
}

/// The whole frames of a recording's bytes, as its lengths chain them: (start, length with its
/// head, kind).
fn frames_in(bytes: &[u8]) -> Vec<(usize, usize, u8)> {
    let mut out = Vec::new();
    let mut at = 8;
    while at + 9 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        if at + 8 + len > bytes.len() {
            break;
        }
        out.push((at, 8 + len, bytes[at + 8]));
        at += 8 + len;
    }
    out
}

/// A frame as the recorder writes it: length, checksum, kind, time and body.
fn frame(kind: u8, t_ms: u64, body: &[u8]) -> Vec<u8> {
    let mut payload = vec![kind];
    payload.extend_from_slice(&t_ms.to_le_bytes());
    payload.extend_from_slice(body);
    let mut out = (payload.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// The first two columns of each row (op or set, threads): which cells the table shows,
/// whatever their figures.
fn cells(table: &str) -> Vec<String> {
    let mut derived = false;
    rows(table)
        .iter()
        .map(|r| {
            // A derived row's value is a ratio of medians, which moves when a round is lost:
            // only its label names the cell.
            derived |= r.starts_with("| derived");
            let columns = if derived { 2 } else { 3 };
            r.split('|').take(columns).collect::<Vec<_>>().join("|")
        })
        .collect()
}

/// Two thread counts over one set: two cells.
fn two_cells(record: &str) -> Vec<&str> {
    let mut a = small_args(record);
    let threads = a.iter().position(|x| *x == "--threads").unwrap();
    a[threads + 1] = "1,2";
    a
}

/// Runs the binary until it ends or `limit` passes (then kills it: a replay that reads a
/// device or waits on a FIFO must not hang the suite); exit code (None when killed), stderr
/// and the child's peak resident memory in KiB, its own `VmHWM` read while it runs (wait4's
/// `ru_maxrss` would count the test process's memory too: the child is spawned by vfork, and
/// shares its parent's pages until it execs).
#[allow(clippy::zombie_processes)] // reaped by wait4
fn run_bounded(args: &[&str], limit: Duration) -> (Option<i32>, String, u64) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // Read as it comes, so that a full pipe never holds the child.
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut err).map(|_| err)
    });
    let until = Instant::now() + limit;
    let mut killed = false;
    let mut status = 0;
    let mut peak_kib = 0;
    // SAFETY: an all-zero rusage is valid plain data for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        peak_kib = peak_kib.max(high_water_kib(pid).unwrap_or(0));
        // SAFETY: pid is our child, not yet reaped (std never waited on it); status and usage
        // are valid for the call.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break;
        }
        if Instant::now() > until && !killed {
            child.kill().unwrap();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let err = reader.join().unwrap().unwrap();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code.filter(|_| !killed), err, peak_kib)
}

/// A running process's peak resident memory so far (`VmHWM`), KiB.
fn high_water_kib(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn replay_refuses_a_fifo_a_device_and_a_directory_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.rec");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // A copy of /dev/zero: only root may make one.
    let zero = dir.path().join("zero.rec");
    let device = Command::new("mknod")
        .arg(&zero)
        .args(["c", "1", "5"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !device {
        println!("skipped the character device: mknod needs root here");
    }
    let mut named = vec![(fifo, "a FIFO"), (dir.path().to_path_buf(), "a directory")];
    if device {
        named.push((zero.clone(), "a character device"));
    }
    for (path, kind) in named {
        let (code, err, _) = run_bounded(
            &["replay", path.to_str().unwrap(), "--headless"],
            Duration::from_secs(60),
        );
        assert_eq!((code, err.lines().count()), (Some(2), 1), "{kind}: {err}");
        assert!(
            err.contains(&format!("{kind}, not a regular file")),
            "{err}"
        );
    }
    if device {
        std::fs::remove_file(&zero).unwrap();
    }
}

#[test]
fn a_sparse_file_behind_the_magic_is_read_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let sparse = dir.path().join("sparse.rec");
    let file = std::fs::File::create(&sparse).unwrap();
    std::io::Write::write_all(&mut &file, b"STOPREC\x01").unwrap();
    // 1 GiB of holes: a reader that holds the file holds a gigabyte.
    file.set_len(1 << 30).unwrap();
    let (code, err, peak_kib) = run_bounded(
        &["replay", sparse.to_str().unwrap(), "--headless"],
        Duration::from_secs(600),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no frames"), "{err}");
    assert!(peak_kib < 200 << 10, "peak RSS {peak_kib} KiB");
}

#[test]
fn a_damaged_middle_frame_loses_only_itself_and_is_said() {
    let (_dir, rec, table, _) = recorded(two_cells);
    let rec = rec.as_str();
    // Headings and rules, then one thread, two threads, and one thread again last.
    assert!(cells(&table).len() >= 5, "{table}");
    let whole = std::fs::read(rec).unwrap();
    let rounds: Vec<_> = frames_in(&whole).into_iter().filter(|f| f.2 == 2).collect();
    let (at, len, _) = rounds[rounds.len() / 2];
    // A bit of the length (which once hid every frame after it as a torn tail), and a bit of
    // the payload.
    for (place, bit) in [(at + 2, 0x01u8), (at + len - 3, 0x40)] {
        let mut bytes = whole.clone();
        bytes[place] ^= bit;
        std::fs::write(rec, &bytes).unwrap();
        let (code, replayed, err) = run_binary(&["replay", rec, "--headless"]);
        assert_eq!(code, 1, "frames were lost in the middle: {err}");
        let said = format!("damaged bytes at byte {at}");
        assert!(err.contains(&said), "{err}");
        assert!(!err.contains("torn tail"), "{err}");
        assert_eq!(cells(&replayed), cells(&table), "{replayed}");
    }
}

#[test]
fn a_run_appended_onto_a_torn_recording_reads_with_the_one_before() {
    let (_dir, rec, _, _) = recorded(small_args);
    let rec = rec.as_str();
    // The last frame cut short, as a crash leaves it.
    let bytes = std::fs::read(rec).unwrap();
    let (at, len, _) = *frames_in(&bytes).last().unwrap();
    std::fs::write(rec, &bytes[..at + len / 2]).unwrap();
    let (code, table, err) = run_binary(&two_cells(rec));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("cut a torn tail"), "{err}");
    let (code, replayed, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("skipped") && !err.contains("torn"), "{err}");
    assert_eq!(cells(&replayed), cells(&table), "{replayed}");
    // Both sessions' headers read back.
    let headers = frames_in(&std::fs::read(rec).unwrap())
        .iter()
        .filter(|f| f.2 == 1)
        .count();
    assert_eq!(headers, 2);
}

#[test]
fn a_crafted_count_or_time_is_refused_with_the_reason() {
    let (_dir, rec, _, _) = recorded(small_args);
    let rec = rec.as_str();
    let mut bytes = std::fs::read(rec).unwrap();
    let last = frames_in(&bytes).last().unwrap().0;
    let t = u64::from_le_bytes(bytes[last + 9..last + 17].try_into().unwrap());
    // A gap of 10^18 dropped frames, and a frame in the year 584556019.
    bytes.extend(frame(5, t, &1_423_688_023_841_367_807u64.to_le_bytes()));
    bytes.extend(frame(5, u64::MAX / 1000, &1u64.to_le_bytes()));
    std::fs::write(rec, &bytes).unwrap();
    let (code, out, err) = run_binary(&["replay", rec, "--headless"]);
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("1423688023841367807 frames (a"), "{err}");
    assert_eq!(err.matches("skipped the frame at byte").count(), 2, "{err}");
    assert!(!out.contains("584556019"), "{out}");
    assert!(!rows(&out).is_empty(), "{out}");
}

#[test]
fn a_record_max_past_the_free_room_is_capped_and_said() {
    let (_dir, _, _, err) = recorded(|rec| {
        let mut args = small_args(rec);
        args.extend(["--record-max", "1000TiB"]);
        args
    });
    assert!(
        err.contains("--record-max 1000 TiB is more than the"),
        "{err}"
    );
    assert!(err.contains("recording at most"), "{err}");
    assert!(!err.contains("(at most 1000 TiB"), "{err}");
}
