//! Host state and the live sampler on fixture /proc trees; the sampler's rates come from two
//! states of a copied tree with made-up instants, so no test depends on timing.

use crate::support::machine_fixtures::*;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};
use stream_top::machine::host::{HostSampler, HostState};

fn pid_stat(pid: u32, comm: &str, utime: u64, stime: u64) -> String {
    format!(
        "{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194304 100 0 0 0 {utime} {stime} 0 0 20 0 1 0 1000 0 0\n"
    )
}

const US: u32 = 4242;

#[test]
fn host_state_of_this_vm() {
    let h = HostState::read(&fixture("vm-2core")).unwrap();
    assert_eq!(h.load, [0.28, 0.35, 0.18]);
    assert_eq!(h.mem_total, 24683656 * 1024);
    assert_eq!(h.mem_available, 24076820 * 1024);
    assert_eq!((h.swap_total, h.swap_used, h.anon_huge), (0, 0, Some(0)));
    assert_eq!(
        h.line(),
        "load average 0.28 0.35 0.18; swap 0 B of 0 B used; MemAvailable 23 GiB of 23.5 GiB"
    );
}

#[test]
fn host_state_with_swap_in_use() {
    let h = HostState::read(&fixture("laptop-hybrid")).unwrap();
    assert_eq!(h.swap_used, 4 << 30);
    assert_eq!(h.anon_huge, Some(2 << 20));
    assert_eq!(
        h.line(),
        "load average 3.10 2.05 1.50; swap 4 GiB of 16 GiB used; MemAvailable 12 GiB of 31 GiB"
    );
    let s = HostState::read(&fixture("server-2s")).unwrap();
    assert_eq!(s.swap_used, (8388604 - 8126460) * 1024);
    assert_eq!(s.load[0], 12.5);
}

#[test]
fn host_state_errors_name_the_file() {
    let err = HostState::read(Path::new("/nonexistent/root"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/root/proc/loadavg"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("vm-2core"), dir.path());
    fs::write(dir.path().join("proc/meminfo"), "nothing here\n").unwrap();
    let err = HostState::read(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("proc/meminfo") && err.contains("MemTotal"),
        "{err}"
    );
}

#[test]
fn first_sample_has_no_rates() {
    let mut sampler = HostSampler::new(&fixture("laptop-hybrid"), US).with_clock_ticks(100);
    let s = sampler.sample_at(Instant::now());
    assert!(!s.has_rates);
    assert_eq!(s.swap_in_per_s, None);
    assert_eq!(s.steal_pct, None);
    assert_eq!(s.others_cpu_pct, None);
    assert!(s.top_others.is_empty());
    assert_eq!(s.load, [3.10, 2.05, 1.50]);
    assert_eq!(s.mem_total, 32505856 * 1024);
    assert_eq!(s.swap_used, 4 << 30);
    assert_eq!(s.cpu_some_avg10, Some(12.5));
    assert_eq!(s.mem_some_avg10, Some(4.2));
    assert_eq!(s.mem_full_avg10, Some(1.3));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
}

#[test]
fn rates_between_two_states() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("laptop-hybrid"), dir.path());
    let proc = dir.path().join("proc");
    let mut sampler = HostSampler::new(dir.path(), US).with_clock_ticks(100);
    let t0 = Instant::now();
    sampler.sample_at(t0);

    // Two seconds later: 400 pages in, 100 out; 1000 ticks of CPU time, 50 of them stolen.
    fs::write(proc.join("vmstat"), "pswpin 1400\npswpout 2100\n").unwrap();
    fs::write(
        proc.join("stat"),
        "cpu  50500 100 20400 800000 500 0 150 2050 300 0\n",
    )
    .unwrap();
    // rustc +150 ticks (75 %), Web Content +40 (20 %), "odd) name" +10 (5 %), our own
    // process +400 (left out), systemd gone, cc1plus new with 60 ticks (30 %).
    fs::write(proc.join("1000/stat"), pid_stat(1000, "rustc", 5100, 550)).unwrap();
    fs::write(
        proc.join("1001/stat"),
        pid_stat(1001, "Web Content", 2030, 310),
    )
    .unwrap();
    fs::write(proc.join("1002/stat"), pid_stat(1002, "odd) name", 105, 55)).unwrap();
    fs::write(
        proc.join("4242/stat"),
        pid_stat(US, "stream-top", 90400, 100),
    )
    .unwrap();
    fs::remove_dir_all(proc.join("1")).unwrap();
    fs::create_dir(proc.join("2000")).unwrap();
    fs::write(proc.join("2000/stat"), pid_stat(2000, "cc1plus", 50, 10)).unwrap();
    fs::write(
        proc.join("pressure/cpu"),
        "some avg10=40.00 avg60=8.00 avg300=3.25 total=1\n",
    )
    .unwrap();

    let s = sampler.sample_at(t0 + Duration::from_secs(2));
    assert!(s.has_rates);
    assert_eq!(s.elapsed_s, 2.0);
    assert_eq!(s.swap_in_per_s, Some(200.0));
    assert_eq!(s.swap_out_per_s, Some(50.0));
    assert_eq!(s.steal_pct, Some(5.0));
    let others = s.others_cpu_pct.unwrap();
    assert!((others - 130.0).abs() < 1e-9, "{others}");
    let top: Vec<(u32, &str, f64)> = s
        .top_others
        .iter()
        .map(|p| (p.pid, p.comm.as_str(), p.cpu_pct))
        .collect();
    assert_eq!(
        top,
        vec![
            (1000, "rustc", 75.0),
            (2000, "cc1plus", 30.0),
            (1001, "Web Content", 20.0)
        ]
    );
    assert_eq!(s.cpu_some_avg10, Some(40.0));

    // Nothing moved in the next second: rates are zero, not missing.
    let s = sampler.sample_at(t0 + Duration::from_secs(3));
    assert_eq!(s.swap_in_per_s, Some(0.0));
    assert_eq!(s.others_cpu_pct, Some(0.0));
    assert!(s.top_others.is_empty());
    assert_eq!(s.steal_pct, None, "no CPU time passed in /proc/stat");
}

#[test]
fn own_pid_is_what_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("laptop-hybrid"), dir.path());
    let proc = dir.path().join("proc");
    // Exclude rustc instead: then stream-top's own 400 ticks count.
    let mut sampler = HostSampler::new(dir.path(), 1000).with_clock_ticks(100);
    let t0 = Instant::now();
    sampler.sample_at(t0);
    fs::write(
        proc.join("4242/stat"),
        pid_stat(US, "stream-top", 90400, 100),
    )
    .unwrap();
    fs::write(proc.join("1000/stat"), pid_stat(1000, "rustc", 9000, 500)).unwrap();
    let s = sampler.sample_at(t0 + Duration::from_secs(4));
    assert_eq!(s.others_cpu_pct, Some(100.0));
    assert_eq!(s.top_others.len(), 1);
    assert_eq!(s.top_others[0].comm, "stream-top");
}

#[test]
fn no_pressure_files_and_missing_root_do_not_panic() {
    let mut sampler = HostSampler::new(&fixture("server-2s"), US);
    let s = sampler.sample_at(Instant::now());
    assert_eq!(s.cpu_some_avg10, None);
    assert_eq!(s.mem_full_avg10, None);
    assert!(s.problems.is_empty(), "{:?}", s.problems);

    let mut sampler = HostSampler::new(Path::new("/nonexistent/root"), US);
    let t0 = Instant::now();
    sampler.sample_at(t0);
    let s = sampler.sample_at(t0 + Duration::from_secs(1));
    assert!(
        s.problems
            .iter()
            .any(|p| p.contains("/nonexistent/root/proc/loadavg"))
    );
    assert_eq!(s.swap_in_per_s, None);
    assert_eq!(s.others_cpu_pct, Some(0.0));
}

#[test]
fn samples_this_machine() {
    // The real /proc: whatever the figures, two samples work and the second has rates.
    let mut sampler = HostSampler::for_this_process();
    let first = sampler.sample();
    assert!(!first.has_rates);
    assert!(first.mem_total > 0);
    std::thread::sleep(Duration::from_millis(20));
    let second = sampler.sample();
    assert!(second.has_rates);
    assert!(second.others_cpu_pct.is_some_and(|p| p >= 0.0));
}

#[test]
fn the_cpu_figures_come_from_the_process_sample_taken_with_them() {
    // One pass over /proc/[pid] serves the host panel and the suspects: the host sample's
    // figures are the process sample's, which has more of each process (faults here).
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("laptop-hybrid"), dir.path());
    let proc = dir.path().join("proc");
    let mut sampler = HostSampler::new(dir.path(), US).with_clock_ticks(100);
    let t0 = Instant::now();
    let (first, none) = sampler.sample_with_processes_at(t0);
    assert!(!first.has_rates && none.processes.is_empty());
    fs::write(proc.join("1000/stat"), pid_stat(1000, "rustc", 5100, 550)).unwrap();
    fs::write(proc.join("1002/stat"), pid_stat(1002, "odd) name", 105, 55)).unwrap();
    let (host, procs) = sampler.sample_with_processes_at(t0 + Duration::from_secs(2));
    let pids: Vec<u32> = procs.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [1000, 1002]);
    let top: Vec<(u32, f64)> = host.top_others.iter().map(|p| (p.pid, p.cpu_pct)).collect();
    assert_eq!(top, [(1000, 75.0), (1002, 5.0)]);
    assert_eq!(host.others_cpu_pct, Some(80.0));
    assert_eq!(procs.elapsed_s, host.elapsed_s);
    assert_eq!(procs.processes[0].faults_per_s, 0.0);
}
