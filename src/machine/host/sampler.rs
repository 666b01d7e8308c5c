//! The live host panel's sampler: polled about once a second off the UI thread, it takes one
//! pass over the host's sources (procfs.rs on Linux, mac.rs on macOS) and turns the counters
//! into rates between two samples.

use super::mac::MacReading;
use super::reading::CpuTimes;
use super::{MemPressure, procfs};
use crate::machine::cgroup::{Cgroup, Throttling};
use crate::machine::procs::{OwnCpu, ProcSample, ProcSampler};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Another process and the CPU it used between two samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessCpu {
    pub pid: u32,
    /// The command name (/proc/[pid]/stat keeps at most 15 bytes; macOS `proc_name` more).
    pub comm: String,
    /// Percent of one core over the interval.
    pub cpu_pct: f64,
}

/// Where a host sample comes from, which decides what it can hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HostSource {
    /// /proc: PSI and steal where the kernel has them; no memory-pressure level.
    #[default]
    Procfs,
    /// macOS: a memory-pressure level; no PSI, no steal.
    Mac,
}

/// One reading of the host for the live panel. Rates need two samples: in the first one
/// `has_rates` is false and every rate is `None` (and `top_others` empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostSample {
    pub source: HostSource,
    pub load: [f64; 3],
    /// Bytes.
    pub mem_available: u64,
    pub mem_total: u64,
    pub swap_total: u64,
    pub swap_used: u64,
    /// False on the first sample: there is nothing yet to take a difference from.
    pub has_rates: bool,
    /// Seconds since the previous sample (0 on the first).
    pub elapsed_s: f64,
    /// Pages swapped in per second (`pswpin` in /proc/vmstat; `swapins` on macOS).
    pub swap_in_per_s: Option<f64>,
    /// Pages swapped out per second (`pswpout`; `swapouts` on macOS).
    pub swap_out_per_s: Option<f64>,
    /// `some avg10` of /proc/pressure/cpu, percent; `None` without PSI (and on macOS).
    pub cpu_some_avg10: Option<f64>,
    /// `some avg10` of /proc/pressure/memory, percent.
    pub mem_some_avg10: Option<f64>,
    /// `full avg10` of /proc/pressure/memory, percent.
    pub mem_full_avg10: Option<f64>,
    /// macOS's memory-pressure level; `None` on Linux (PSI stands in).
    pub mem_pressure: Option<MemPressure>,
    /// Time stolen by the hypervisor, percent of all CPU time (the `cpu` line of /proc/stat);
    /// `None` where the OS does not account it (macOS).
    pub steal_pct: Option<f64>,
    /// CPU used by every other process that could be read, percent of one core.
    pub others_cpu_pct: Option<f64>,
    /// The three other processes that used the most CPU, busiest first (only those above 0).
    pub top_others: Vec<ProcessCpu>,
    /// stream-top's own CPU, percent of one CPU (from /proc; macOS: not read).
    pub own_cpu: OwnCpu,
    /// Our cgroup's CPU quota, CPUs; None without one.
    pub cpu_quota: Option<f64>,
    /// The quota's throttling counters, cumulative; None without a quota.
    pub throttling: Option<Throttling>,
    /// Share of the quota's enforcement periods in the interval that ran out of quota, 0..1.
    pub throttled_ratio: Option<f64>,
    /// Time our group was held back by the quota, seconds per second of the interval.
    pub throttled_s_per_s: Option<f64>,
    /// Processes whose CPU time could not be read without privileges (macOS: other users'),
    /// left out of `others_cpu_pct`.
    pub unreadable_processes: usize,
    /// Files that could not be read or parsed this time, one line each (empty when all was
    /// well). The figures they feed are 0 or `None`.
    pub problems: Vec<String>,
}

impl HostSample {
    /// "CPU quota 1.5 CPUs throttled in 25 % of its periods": what explains late or slow
    /// rounds in a cgroup with a CPU quota; None when the last interval was not throttled.
    pub(crate) fn throttling_note(&self) -> Option<String> {
        let ratio = self.throttled_ratio.filter(|r| *r > 0.0)?;
        Some(format!(
            "CPU quota {} throttled in {:.0} % of its periods",
            crate::machine::cgroup::quota_text(self.cpu_quota?),
            ratio * 100.0
        ))
    }
}

/// Samples the host for the live panel. Cheap: one pass over /proc per sample (the few
/// summary files, and the other processes through the process sampler, which is the one
/// reader of `/proc/[pid]`), or on macOS a few `sysctl`s, the VM counters and one
/// `proc_pidinfo` per process.
#[derive(Debug)]
pub struct HostSampler {
    root: PathBuf,
    cgroup: Cgroup,
    exclude_pid: u32,
    /// The other processes under a Linux root; their CPU makes `others_cpu_pct` and
    /// `top_others`, and the whole sample is there for who wants more of them (suspects).
    processes: ProcSampler,
    prev: Option<Previous>,
}

#[derive(Debug)]
struct Previous {
    at: Instant,
    swap_in: Option<u64>,
    swap_out: Option<u64>,
    cpu_line: Option<CpuTimes>,
    /// pid → CPU time, ns (macOS; on Linux the process sampler keeps its own).
    procs: HashMap<u32, u64>,
    throttling: Option<Throttling>,
}

impl HostSampler {
    /// A sampler of the host under `root` that leaves out `exclude_pid` (our own process,
    /// `std::process::id()`) from the other processes.
    pub fn new(root: &Path, exclude_pid: u32) -> HostSampler {
        HostSampler {
            root: root.to_path_buf(),
            cgroup: Cgroup::find(root),
            exclude_pid,
            processes: ProcSampler::new(root, exclude_pid),
            prev: None,
        }
    }

    /// The sampler for this machine and this process: root `/`, excluding our own pid.
    pub fn for_this_process() -> HostSampler {
        HostSampler::new(Path::new("/"), std::process::id())
    }

    /// Sets the kernel's clock tick rate (`USER_HZ`) used for /proc/[pid]/stat times; the
    /// default is the running kernel's (sysconf), so this is for fixtures.
    pub fn with_clock_ticks(mut self, ticks_per_s: u64) -> HostSampler {
        self.processes =
            ProcSampler::new(&self.root, self.exclude_pid).with_clock_ticks(ticks_per_s);
        self
    }

    /// Samples now.
    pub fn sample(&mut self) -> HostSample {
        self.sample_at(Instant::now())
    }

    /// Samples as if the time were `now` (rates are per second of `now` − the previous
    /// sample's `now`). Tests pass made-up instants; production uses [`HostSampler::sample`].
    pub fn sample_at(&mut self, now: Instant) -> HostSample {
        self.sample_with_processes_at(now).0
    }

    /// Samples now, with the other processes in full (the one pass over them that the host
    /// panel's figures come from).
    pub(crate) fn sample_with_processes(&mut self) -> (HostSample, ProcSample) {
        self.sample_with_processes_at(Instant::now())
    }

    /// [`HostSampler::sample_at`] with the process sample it took its CPU figures from: on a
    /// Linux root every other process with what it did since the last sample; empty on macOS,
    /// which has no /proc (its processes' CPU comes from the process table).
    pub fn sample_with_processes_at(&mut self, now: Instant) -> (HostSample, ProcSample) {
        let (source, r, processes) = match MacReading::under(&self.root) {
            Some(mac) => (
                HostSource::Mac,
                mac.reading(self.exclude_pid),
                ProcSample::default(),
            ),
            None => (
                HostSource::Procfs,
                procfs::reading(&self.root),
                self.processes.sample_at(now),
            ),
        };
        let quota = self.cgroup.cpu_quota();
        let throttling = quota.as_ref().and_then(|q| self.cgroup.throttling(q));
        let mut sample = HostSample {
            source,
            load: r.load,
            mem_available: r.mem.available,
            mem_total: r.mem.total,
            swap_total: r.mem.swap_total,
            swap_used: r.mem.swap_used,
            has_rates: false,
            elapsed_s: 0.0,
            swap_in_per_s: None,
            swap_out_per_s: None,
            cpu_some_avg10: r.cpu_psi.some_avg10,
            mem_some_avg10: r.mem_psi.some_avg10,
            mem_full_avg10: r.mem_psi.full_avg10,
            mem_pressure: r.mem_pressure,
            steal_pct: None,
            others_cpu_pct: None,
            top_others: Vec::new(),
            own_cpu: match source {
                HostSource::Procfs => self.processes.own_cpu().clone(),
                HostSource::Mac => OwnCpu::Unknown("not read on macOS".into()),
            },
            cpu_quota: quota.as_ref().map(|q| q.cpus()),
            throttling,
            throttled_ratio: None,
            throttled_s_per_s: None,
            unreadable_processes: r.unreadable,
            problems: r.problems,
        };

        if let Some(prev) = &self.prev {
            let elapsed = now.saturating_duration_since(prev.at).as_secs_f64();
            if elapsed > 0.0 {
                sample.has_rates = true;
                sample.elapsed_s = elapsed;
                let rate = |now: Option<u64>, before: Option<u64>| {
                    Some(now?.saturating_sub(before?) as f64 / elapsed)
                };
                sample.swap_in_per_s = rate(r.swap_in, prev.swap_in);
                sample.swap_out_per_s = rate(r.swap_out, prev.swap_out);
                if let (Some(a), Some(b)) = (prev.cpu_line, r.cpu_line) {
                    let total = b.total.saturating_sub(a.total);
                    if total > 0 {
                        let steal = b.steal.saturating_sub(a.steal);
                        sample.steal_pct = Some(100.0 * steal as f64 / total as f64);
                    }
                }
                let mut used = match source {
                    HostSource::Procfs => processes
                        .processes
                        .iter()
                        .filter(|p| p.cpu_pct > 0.0)
                        .map(|p| ProcessCpu {
                            pid: p.pid,
                            comm: p.comm.clone(),
                            cpu_pct: p.cpu_pct,
                        })
                        .collect(),
                    HostSource::Mac => cpu_between(&prev.procs, &r.procs, elapsed),
                };
                used.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
                sample.others_cpu_pct = Some(used.iter().map(|p| p.cpu_pct).sum());
                used.truncate(3);
                sample.top_others = used;
                if let (Some(a), Some(b)) = (prev.throttling, throttling) {
                    let periods = b.periods.saturating_sub(a.periods);
                    let throttled = b.throttled_periods.saturating_sub(a.throttled_periods);
                    // No period ran: nothing was runnable, so nothing was held back.
                    sample.throttled_ratio = Some(if periods == 0 {
                        0.0
                    } else {
                        throttled as f64 / periods as f64
                    });
                    sample.throttled_s_per_s =
                        Some(b.throttled_ns.saturating_sub(a.throttled_ns) as f64 / 1e9 / elapsed);
                }
            }
        }

        self.prev = Some(Previous {
            at: now,
            swap_in: r.swap_in,
            swap_out: r.swap_out,
            cpu_line: r.cpu_line,
            procs: r.procs.into_iter().map(|(pid, (_, t))| (pid, t)).collect(),
            throttling,
        });
        (sample, processes)
    }
}

/// Each process's CPU between two readings of CPU time by pid (ns), percent of one core over
/// `elapsed` seconds; those that used none are left out. A pid missing from the earlier
/// reading started since then: all of its time falls in the interval.
fn cpu_between(
    before: &HashMap<u32, u64>,
    now: &HashMap<u32, (String, u64)>,
    elapsed: f64,
) -> Vec<ProcessCpu> {
    now.iter()
        .filter_map(|(pid, (comm, ns))| {
            let delta = ns.saturating_sub(before.get(pid).copied().unwrap_or(0));
            (delta > 0).then(|| ProcessCpu {
                pid: *pid,
                comm: comm.clone(),
                cpu_pct: 100.0 * delta as f64 / 1e9 / elapsed,
            })
        })
        .collect()
}
