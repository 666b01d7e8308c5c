//! The other processes from fixture /proc trees of one machine 10 s apart
//! (tests/fixtures/contention, see its generate.py): what each did, who runs it, resctrl's
//! per-group bandwidth, and the suspects ranked from a calm window and a contended one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use stream_top::judge::watch::suspects::{Placement, Tally, rank};
use stream_top::machine::procs::{ProcSample, ProcSampler};

/// The pid the fixture's own stream-top has.
const OWN_PID: u32 = 500;

fn fixture(t: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/contention/t{t}"))
}

/// A root whose `proc`, `sys` and `etc` point into fixture tree `t`; moved to another tree
/// between samples, as time passes on the machine.
struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    fn new() -> Root {
        Root {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn at(&self, t: usize) -> &Path {
        for part in ["proc", "sys", "etc"] {
            let link = self.dir.path().join(part);
            let _ = std::fs::remove_file(&link);
            let target = fixture(t).join(part);
            if target.exists() {
                std::os::unix::fs::symlink(target, link).unwrap();
            }
        }
        self.dir.path()
    }
}

/// The three samples: t0 (no rates yet), t0 → t1 (calm), t1 → t2 (contended).
fn samples() -> Vec<ProcSample> {
    let root = Root::new();
    let mut sampler = ProcSampler::new(root.at(0), OWN_PID).with_clock_ticks(100);
    let t0 = Instant::now();
    let mut out = vec![sampler.sample_at(t0)];
    root.at(1);
    out.push(sampler.sample_at(t0 + Duration::from_secs(10)));
    root.at(2);
    out.push(sampler.sample_at(t0 + Duration::from_secs(20)));
    out
}

#[test]
fn rates_users_and_placement_of_the_other_processes() {
    let s = samples();
    assert_eq!(s[0].elapsed_s, 0.0);
    assert!(s[0].processes.is_empty(), "the first sample has no rates");
    let contended = &s[2];
    assert_eq!(contended.elapsed_s, 10.0);
    let by_pid: HashMap<u32, _> = contended.processes.iter().map(|p| (p.pid, p)).collect();
    assert!(
        !by_pid.contains_key(&OWN_PID),
        "our own process is left out"
    );
    let hog = by_pid[&4242];
    assert_eq!(hog.comm, "memhog");
    assert_eq!(hog.user.as_deref(), Some("alice"));
    assert!((hog.cpu_pct - 95.0).abs() < 1e-9, "{}", hog.cpu_pct);
    assert!((hog.faults_per_s - 50_000.0).abs() < 1e-9);
    // 1 GiB more resident in 10 s.
    assert!((hog.rss_growth_per_s.unwrap() - (1u64 << 30) as f64 / 10.0).abs() < 1.0);
    assert_eq!(hog.cpus.iter().copied().collect::<Vec<_>>(), vec![0, 1]);
    assert!(!hog.stream_top);
    // The busiest first.
    assert_eq!(contended.processes[0].pid, 4242);
    // Another stream-top is marked, with its user.
    let other = by_pid[&600];
    assert!(other.stream_top);
    assert_eq!(other.user.as_deref(), Some("bob"));
    // resctrl: the batch group holding memhog moved 80 GB in 10 s.
    let groups = contended
        .bandwidth
        .as_ref()
        .expect("resctrl is mounted in t1 and t2");
    let batch = groups.iter().find(|g| g.name == "batch").unwrap();
    assert!(
        (batch.bytes_per_s - 8e9).abs() < 1.0,
        "{}",
        batch.bytes_per_s
    );
    assert!(batch.tasks.contains(&4242));
    // t0 → t1: no resctrl reading at t0, so no rate yet.
    assert_eq!(s[1].bandwidth.as_deref().map(<[_]>::len), Some(0));
}

#[test]
fn the_hog_ranks_first_and_another_stream_top_is_marked_below_it() {
    let s = samples();
    let mut calm = Tally::default();
    calm.add(&s[1]);
    let mut contended = Tally::default();
    contended.add(&s[2]);
    // Our cell ran on CPUs 0 and 1.
    let placement = Placement {
        our_cpus: [0, 1].into_iter().collect(),
        nodes: HashMap::new(),
    };
    let ranked = rank(&calm, &contended, &placement, OWN_PID);
    let pids: Vec<u32> = ranked.iter().map(|s| s.pid).collect();
    assert_eq!(pids[..2], [4242, 800], "{ranked:#?}");
    assert!(!pids.contains(&OWN_PID));
    let hog = &ranked[0];
    assert!((hog.cpu_before_pct - 0.1).abs() < 1e-9);
    assert!(hog.memory_heavy() && hog.on_our_cpus);
    // Measured by resctrl: its group has no stream-top in it.
    assert_eq!(hog.group.as_deref(), Some("batch"));
    assert!((hog.measured_bytes_per_s.unwrap() - 8e9).abs() < 1.0);
    // The compile job rose too, without memory signs, away from our CPUs: far behind.
    let cc1 = &ranked[1];
    assert!((cc1.cpu_rise() - 29.0).abs() < 1e-9, "{}", cc1.cpu_rise());
    assert!(!cc1.memory_heavy() && !cc1.on_our_cpus);
    assert!(hog.score > 5.0 * cc1.score);
    // The other stream-top was as busy before: no rise, no score, but listed and marked.
    let other = ranked.iter().find(|s| s.pid == 600).expect("listed");
    assert!(other.stream_top);
    assert_eq!(other.score, 0.0);
    assert!(
        other.measured_bytes_per_s.is_none(),
        "its group holds us too"
    );
}
