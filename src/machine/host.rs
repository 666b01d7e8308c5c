//! The host's condition: load, memory, swap, pressure, steal, the other processes competing
//! for the machine, and the throttling of our cgroup's CPU quota; from /proc under a root on
//! Linux, from `sysctl` values, the VM counters and the process table on macOS.
//!
//! A bandwidth figure is only worth showing with the load it was measured under: a compile
//! job on a sibling core or a host stealing cycles from a VM moves the figure. `HostState` is
//! read once for the header of a run; `HostSampler` is polled (about once a second, off the UI
//! thread) for the live host panel and turns counters into rates between samples. What a
//! platform lacks (PSI and steal on macOS; the memory-pressure level on Linux) is `None`.

use super::sysctl::{Sysctl, is_live_mac, parse_loadavg, parse_swapusage};
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::machine::cgroup::{Cgroup, Throttling};
use crate::machine::procs::{ProcSample, ProcSampler};
use crate::platform::{self, ProcessTimes, VmCounters};
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The fixture file of a Mac root with its VM counters, as `vm_stat` prints them.
pub const VM_STAT_FILE: &str = "vm_stat.txt";

/// macOS's memory-pressure level (`kern.memorystatus_vm_pressure_level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemPressure {
    Normal,
    Warning,
    Critical,
}

impl MemPressure {
    /// From the sysctl's value: 1 normal, 2 warning, 4 critical.
    pub fn from_level(level: u64) -> Option<MemPressure> {
        match level {
            1 => Some(MemPressure::Normal),
            2 => Some(MemPressure::Warning),
            4 => Some(MemPressure::Critical),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MemPressure::Normal => "normal",
            MemPressure::Warning => "warning",
            MemPressure::Critical => "critical",
        }
    }
}

/// What is printed above the table: read once at the start of a run and at a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct HostState {
    pub load: [f64; 3],
    pub mem_total: u64,
    /// MemAvailable on Linux; on macOS the free, speculative, inactive and purgeable pages of
    /// `host_statistics64` (see [`mac_available`]).
    pub mem_available: u64,
    pub swap_total: u64,
    pub swap_used: u64,
    /// AnonHugePages from /proc/meminfo, bytes; `None` where the OS has no transparent huge
    /// pages (macOS).
    pub anon_huge: Option<u64>,
    /// Bytes the memory compressor occupies (macOS).
    pub compressor: Option<u64>,
    /// The memory-pressure level (macOS).
    pub mem_pressure: Option<MemPressure>,
}

impl HostState {
    /// Reads `proc/loadavg` and `proc/meminfo` under `root`, or on a Mac (the running one, or
    /// a root with `sysctl.txt` and `vm_stat.txt`) its `sysctl` values and VM counters.
    pub fn read(root: &Path) -> Result<HostState> {
        if let Some(mac) = MacReading::under(root) {
            return mac.state();
        }
        let load = read_loadavg(&root.join("proc/loadavg")).map_err(Error::machine)?;
        let mem = read_meminfo(&root.join("proc/meminfo")).map_err(Error::machine)?;
        Ok(HostState {
            load,
            mem_total: mem.total,
            mem_available: mem.available,
            swap_total: mem.swap_total,
            swap_used: mem.swap_used,
            anon_huge: Some(mem.anon_huge),
            compressor: None,
            mem_pressure: None,
        })
    }

    /// "load average 0.18 0.05 0.01; swap 0 B of 0 B used; MemAvailable 23.3 GiB of 23.5 GiB",
    /// on macOS "…; available 2 GiB of 64 GiB, compressor 11.4 GiB, memory pressure normal".
    pub fn line(&self) -> String {
        let mut line = format!(
            "load average {:.2} {:.2} {:.2}; swap {} of {} used; ",
            self.load[0],
            self.load[1],
            self.load[2],
            format_bytes(self.swap_used),
            format_bytes(self.swap_total),
        );
        let mem = format!(
            "{} of {}",
            format_bytes(self.mem_available),
            format_bytes(self.mem_total)
        );
        match self.compressor {
            None => line.push_str(&format!("MemAvailable {mem}")),
            Some(c) => line.push_str(&format!("available {mem}, compressor {}", format_bytes(c))),
        }
        if let Some(p) = self.mem_pressure {
            line.push_str(&format!(", memory pressure {}", p.name()));
        }
        line
    }
}

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
    pub fn throttling_note(&self) -> Option<String> {
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

#[derive(Debug, Clone, Copy)]
struct CpuTimes {
    total: u64,
    steal: u64,
}

/// One pass over the host's sources, before rates: what either OS gives.
#[derive(Debug, Default)]
struct Reading {
    load: [f64; 3],
    mem: MemInfo,
    swap_in: Option<u64>,
    swap_out: Option<u64>,
    cpu_line: Option<CpuTimes>,
    cpu_psi: Pressure,
    mem_psi: Pressure,
    mem_pressure: Option<MemPressure>,
    /// pid → (name, CPU time in ns): macOS's process table. On Linux the process sampler
    /// reads /proc/[pid] instead.
    procs: HashMap<u32, (String, u64)>,
    unreadable: usize,
    problems: Vec<String>,
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
    pub fn sample_with_processes(&mut self) -> (HostSample, ProcSample) {
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
                self.read_procfs(),
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

    /// One pass over /proc under the root.
    fn read_procfs(&self) -> Reading {
        let proc_dir = self.root.join("proc");
        let mut problems = Vec::new();
        let load = read_loadavg(&proc_dir.join("loadavg")).unwrap_or_else(|e| {
            problems.push(e);
            [0.0; 3]
        });
        let mem = read_meminfo(&proc_dir.join("meminfo")).unwrap_or_else(|e| {
            problems.push(e);
            MemInfo::default()
        });
        let (swap_in, swap_out) = read_vmstat(&proc_dir.join("vmstat")).unwrap_or_else(|e| {
            problems.push(e);
            (None, None)
        });
        let cpu_line = read_cpu_line(&proc_dir.join("stat"))
            .map_err(|e| problems.push(e))
            .ok();
        Reading {
            load,
            mem,
            swap_in,
            swap_out,
            cpu_line,
            cpu_psi: read_pressure(&proc_dir.join("pressure/cpu")),
            mem_psi: read_pressure(&proc_dir.join("pressure/memory")),
            mem_pressure: None,
            procs: HashMap::new(),
            unreadable: 0,
            problems,
        }
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

/// What a Mac's host figures are built from: its `sysctl` values, the VM counters, the load
/// average and the other processes' times, from the running system or a fixture root.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MacReading {
    pub sysctl: Sysctl,
    /// `None` when they could not be read (or a fixture root has no `vm_stat.txt`).
    pub vm: Option<VmCounters>,
    pub load: Option<[f64; 3]>,
    /// `None` for fixture roots.
    pub procs: Option<ProcessTimes>,
}

impl MacReading {
    /// The running Mac when `root` is `/` on macOS, a fixture root with `sysctl.txt` (and
    /// `vm_stat.txt`, a `vm.loadavg` line), or `None` for a Linux root.
    pub fn under(root: &Path) -> Option<MacReading> {
        let Some(sysctl) = Sysctl::fixture(root) else {
            if !is_live_mac(root) {
                return None;
            }
            let names: Vec<String> = super::sysctl::HOST_NAMES
                .iter()
                .map(|n| n.to_string())
                .collect();
            return Some(MacReading {
                sysctl: Sysctl::read_live_names(&names),
                vm: platform::vm_counters(),
                load: platform::load_average(),
                procs: platform::process_times(u32::MAX),
            });
        };
        let vm = fs::read_to_string(root.join(VM_STAT_FILE))
            .ok()
            .and_then(|t| parse_vm_stat(&t));
        let load = sysctl.get("vm.loadavg").and_then(parse_loadavg);
        Some(MacReading {
            sysctl,
            vm,
            load,
            procs: None,
        })
    }

    /// The header's state; an error naming what is missing.
    pub(crate) fn state(&self) -> Result<HostState> {
        let src = self.sysctl.source();
        let load = self
            .load
            .ok_or_else(|| Error::machine(format!("{src}: no load average (vm.loadavg)")))?;
        let vm = self.vm.ok_or_else(|| {
            Error::machine(format!(
                "{src}: no VM counters (host_statistics64, or {VM_STAT_FILE} in a fixture)"
            ))
        })?;
        let mem = self.mem_info()?;
        Ok(HostState {
            load,
            mem_total: mem.total,
            mem_available: mac_available(&vm),
            swap_total: mem.swap_total,
            swap_used: mem.swap_used,
            anon_huge: None,
            compressor: Some(vm.compressor * vm.page_size),
            mem_pressure: self.pressure(),
        })
    }

    /// Memory total from `hw.memsize`, available from the VM counters, swap from
    /// `vm.swapusage`.
    fn mem_info(&self) -> Result<MemInfo> {
        let total = self.sysctl.required_int("hw.memsize")?;
        let swap = self.sysctl.get("vm.swapusage");
        let (swap_total, swap_used) = swap.and_then(parse_swapusage).ok_or_else(|| {
            Error::machine(format!(
                "{}: vm.swapusage is {}",
                self.sysctl.source(),
                swap.map_or("missing".to_string(), |s| format!("'{s}'"))
            ))
        })?;
        Ok(MemInfo {
            total,
            available: self.vm.as_ref().map_or(0, mac_available),
            swap_total,
            swap_used,
            anon_huge: 0,
        })
    }

    fn pressure(&self) -> Option<MemPressure> {
        self.sysctl
            .int("kern.memorystatus_vm_pressure_level")
            .ok()
            .flatten()
            .and_then(MemPressure::from_level)
    }

    /// One pass for the sampler: PSI and steal stay `None`, macOS has neither.
    fn reading(&self, exclude: u32) -> Reading {
        let mut problems = Vec::new();
        let load = self.load.unwrap_or_else(|| {
            problems.push(format!("{}: no load average", self.sysctl.source()));
            [0.0; 3]
        });
        let mem = self.mem_info().unwrap_or_else(|e| {
            problems.push(e.to_string());
            MemInfo::default()
        });
        if self.vm.is_none() {
            problems.push(format!("{}: no VM counters", self.sysctl.source()));
        }
        let (procs, unreadable) = match &self.procs {
            Some(p) => (
                p.readable
                    .iter()
                    .filter(|t| t.pid != exclude)
                    .map(|t| (t.pid, (t.name.clone(), t.cpu_ns)))
                    .collect(),
                p.unreadable,
            ),
            None => (HashMap::new(), 0),
        };
        Reading {
            load,
            mem,
            swap_in: self.vm.map(|v| v.swapins),
            swap_out: self.vm.map(|v| v.swapouts),
            mem_pressure: self.pressure(),
            procs,
            unreadable,
            problems,
            ..Reading::default()
        }
    }
}

/// Available memory on macOS: the free, speculative, inactive and purgeable pages of
/// `host_statistics64`, the pages the kernel can hand out without swapping or compressing
/// (the `vm_stat` lines "Pages free", "Pages speculative", "Pages inactive", "Pages
/// purgeable"), times the page size.
pub(crate) fn mac_available(vm: &VmCounters) -> u64 {
    (vm.free + vm.speculative + vm.inactive + vm.purgeable) * vm.page_size
}

/// The counters from what `vm_stat` prints ("Mach Virtual Memory Statistics: (page size of
/// 16384 bytes)", then "Pages free: 3669." and so on); `None` without the page size.
pub(crate) fn parse_vm_stat(text: &str) -> Option<VmCounters> {
    let page_size = text
        .split("page size of ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim().trim_matches('"') == name)
                    .then(|| v.trim().trim_end_matches('.').parse().ok())?
            })
            .unwrap_or(0)
    };
    Some(VmCounters {
        page_size,
        free: field("Pages free"),
        active: field("Pages active"),
        inactive: field("Pages inactive"),
        speculative: field("Pages speculative"),
        purgeable: field("Pages purgeable"),
        wired: field("Pages wired down"),
        compressor: field("Pages occupied by compressor"),
        swapins: field("Swapins"),
        swapouts: field("Swapouts"),
    })
}

fn read_file(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn read_loadavg(path: &Path) -> Result<[f64; 3], String> {
    let text = read_file(path)?;
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    let mut load = [0.0; 3];
    for slot in &mut load {
        match fields.next() {
            Some(Ok(v)) if v.is_finite() => *slot = v,
            _ => {
                return Err(format!(
                    "{}: '{}' does not start with three load averages",
                    path.display(),
                    text.trim()
                ));
            }
        }
    }
    Ok(load)
}

#[derive(Debug, Default, Clone, Copy)]
struct MemInfo {
    total: u64,
    available: u64,
    swap_total: u64,
    swap_used: u64,
    anon_huge: u64,
}

fn read_meminfo(path: &Path) -> Result<MemInfo, String> {
    let text = read_file(path)?;
    let mut fields: HashMap<&str, u64> = HashMap::new();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let Some(Ok(value)) = parts.next().map(str::parse::<u64>) else {
            continue;
        };
        let bytes = match parts.next() {
            Some("kB") => value.saturating_mul(1024),
            _ => value,
        };
        fields.insert(key.trim(), bytes);
    }
    let total = *fields
        .get("MemTotal")
        .ok_or_else(|| format!("{}: no MemTotal line", path.display()))?;
    // Kernels before 3.14 have no MemAvailable; free plus page cache is the old estimate.
    let available = fields.get("MemAvailable").copied().unwrap_or_else(|| {
        fields.get("MemFree").copied().unwrap_or(0) + fields.get("Cached").copied().unwrap_or(0)
    });
    let swap_total = fields.get("SwapTotal").copied().unwrap_or(0);
    let swap_free = fields.get("SwapFree").copied().unwrap_or(swap_total);
    Ok(MemInfo {
        total,
        available,
        swap_total,
        swap_used: swap_total.saturating_sub(swap_free),
        anon_huge: fields.get("AnonHugePages").copied().unwrap_or(0),
    })
}

/// `pswpin` and `pswpout`, pages since boot.
fn read_vmstat(path: &Path) -> Result<(Option<u64>, Option<u64>), String> {
    let text = read_file(path)?;
    let (mut pswpin, mut pswpout) = (None, None);
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next().and_then(|v| v.parse().ok())) {
            (Some("pswpin"), Some(v)) => pswpin = Some(v),
            (Some("pswpout"), Some(v)) => pswpout = Some(v),
            _ => {}
        }
    }
    Ok((pswpin, pswpout))
}

/// The aggregate `cpu` line of /proc/stat: total time (user … steal; guest time is already
/// inside user) and steal.
fn read_cpu_line(path: &Path) -> Result<CpuTimes, String> {
    let text = read_file(path)?;
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))
        .ok_or_else(|| format!("{}: no 'cpu' line", path.display()))?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map_while(|v| v.parse().ok())
        .collect();
    if values.len() < 4 {
        return Err(format!("{}: short 'cpu' line '{line}'", path.display()));
    }
    let upto_steal = &values[..values.len().min(8)];
    Ok(CpuTimes {
        total: upto_steal.iter().sum(),
        steal: values.get(7).copied().unwrap_or(0),
    })
}

#[derive(Debug, Default, Clone, Copy)]
struct Pressure {
    some_avg10: Option<f64>,
    full_avg10: Option<f64>,
}

/// A PSI file; missing (no PSI in this kernel) or malformed gives `None`s.
fn read_pressure(path: &Path) -> Pressure {
    let mut p = Pressure::default();
    let Ok(text) = fs::read_to_string(path) else {
        return p;
    };
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let kind = parts.next();
        let avg10 = parts
            .find_map(|f| f.strip_prefix("avg10="))
            .and_then(|v| v.parse::<f64>().ok());
        match kind {
            Some("some") => p.some_avg10 = avg10,
            Some("full") => p.full_avg10 = avg10,
            _ => {}
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_line_sums_up_to_steal_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stat");
        // user nice system idle iowait irq softirq steal guest guest_nice
        fs::write(&path, "cpu  10 0 5 80 0 0 0 5 7 7\ncpu0 1 2 3 4\n").unwrap();
        let t = read_cpu_line(&path).unwrap();
        assert_eq!((t.total, t.steal), (100, 5));
        fs::write(&path, "intr 1 2 3\n").unwrap();
        assert!(read_cpu_line(&path).unwrap_err().contains("no 'cpu' line"));
    }

    #[test]
    fn meminfo_without_memavailable_falls_back_to_free_plus_cached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meminfo");
        fs::write(&path, "MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 50 kB\n").unwrap();
        let m = read_meminfo(&path).unwrap();
        assert_eq!(m.total, 1000 * 1024);
        assert_eq!(m.available, 150 * 1024);
        assert_eq!((m.swap_total, m.swap_used), (0, 0));
        fs::write(&path, "MemFree: 100 kB\n").unwrap();
        assert!(read_meminfo(&path).unwrap_err().contains("MemTotal"));
    }

    #[test]
    fn vm_stat_text_gives_the_counters_and_available_memory() {
        let text = "Mach Virtual Memory Statistics: (page size of 4096 bytes)\n\
                    Pages free:            10.\nPages speculative:       2.\n\
                    Pages inactive:        20.\nPages purgeable:         3.\n\
                    Pages occupied by compressor: 7.\nSwapins:   5.\nSwapouts:  6.\n";
        let vm = parse_vm_stat(text).unwrap();
        assert_eq!(
            (
                vm.page_size,
                vm.free,
                vm.compressor,
                vm.swapins,
                vm.swapouts
            ),
            (4096, 10, 7, 5, 6)
        );
        assert_eq!(mac_available(&vm), 35 * 4096);
        assert_eq!(parse_vm_stat("Pages free: 10."), None);
        assert_eq!(MemPressure::from_level(4), Some(MemPressure::Critical));
        assert_eq!(MemPressure::from_level(3), None);
    }
}
