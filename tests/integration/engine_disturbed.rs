//! A worker preempted in the middle of its rounds: a busy thread pinned to every CPU for the
//! whole run shares each CPU with whichever worker runs there, and the test hook
//! `STREAM_TOP_YIELD_WORKER` makes worker 1 yield its CPU inside every round's span, so the
//! competitor runs there then (a round of a cache set lasts microseconds: left to the
//! scheduler, a preemption inside one is a matter of luck), while a headless run measures. The run must count the switches and mark rounds disturbed, naming
//! the thread that was switched out. (Bursts that move from CPU to CPU can miss the cell that
//! is measured on a loaded machine; SIGSTOP would stop every worker at once and disturb none of
//! them relative to the others.)

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use stream_top::platform::pin_current_thread;

/// A thread pinned to each CPU, busy until `done`: every worker has a competitor for its CPU
/// for the whole run, whatever the scheduler or the machine's other load does.
fn compete_everywhere(done: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..cpus)
        .map(|cpu| {
            let done = Arc::clone(done);
            std::thread::spawn(move || {
                let _ = pin_current_thread(cpu);
                while !done.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect()
}

#[test]
fn a_worker_preempted_mid_round_is_counted_and_marked_disturbed() {
    let child = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .env("STREAM_TOP_YIELD_WORKER", "1")
        .args([
            "--headless",
            "--threads",
            "2",
            "--sets",
            "l2",
            "--rounds",
            "40",
            "--round-ms",
            "20",
            "--format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let competitors = compete_everywhere(&done);
    let out = child.wait_with_output();
    done.store(true, Ordering::Relaxed);
    for c in competitors {
        c.join().unwrap();
    }
    let out = out.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counted = snap["info"]["counters"]["counted"].as_array().unwrap();
    if !counted.iter().any(|c| c == "context switches") {
        // An OS that counts no switches per thread: the median rules still apply, but this
        // test is about the counted ones.
        return;
    }
    let cell = snap["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["threads"] == 2 && c["rerun"] == false)
        .expect("the 2-thread cell");
    assert!(
        cell["figures"]["disturbed_rounds"].as_u64().unwrap_or(0) > 0,
        "{cell:#}"
    );
    let rounds = cell["history"].as_array().unwrap();
    let switched = rounds
        .iter()
        .filter(|r| r["switches"].as_u64().unwrap_or(0) > 0)
        .count();
    assert!(switched > 0, "no switch counted: {cell:#}");
    let attributed = rounds.iter().find(|r| {
        r["disturbed"] == true
            && r["cause"]
                .as_str()
                .is_some_and(|c| c.contains("t0 switched out") || c.contains("t1 switched out"))
    });
    assert!(
        attributed.is_some(),
        "no disturbed round names its switched-out thread: {cell:#}"
    );
    // The per-cell counters say the same.
    assert!(
        cell["figures"]["counters"]["switches_per_round"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // And the run said which counters it had, once.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("counters: counted per thread"), "{stderr}");
}
