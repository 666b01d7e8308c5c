//! The other processes one by one, from /proc under a root: what each did between two samples
//! (CPU, page faults, resident memory, the CPUs its threads ran on), who runs it, and, where the
//! kernel monitors memory bandwidth per group (resctrl `mbm_total_bytes`), how many bytes each
//! group moved.
//!
//! This is the evidence for naming the culprit of contention: a process that started burning
//! CPU, faulting pages in or growing its memory while our rounds slowed down. All of it is
//! readable without privileges except the resctrl files, which are used when present. The
//! parsers are pure functions; `ProcSampler` ties them to a root and to time, so tests run it
//! on fixture trees.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The command name of stream-top's main thread: other instances are marked as such.
pub(crate) const OUR_COMM: &str = "stream-top";
/// Processes whose threads are looked at for the CPUs they ran on: the busiest, per sample.
const PLACEMENT_OF: usize = 8;

/// The fields of /proc/[pid]/stat this module uses.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ProcStat {
    pid: u32,
    /// At most 15 bytes, as the kernel keeps it.
    comm: String,
    minflt: u64,
    majflt: u64,
    /// utime + stime, clock ticks.
    cpu_ticks: u64,
    /// Clock ticks after boot when it started: tells a reused PID from the old process.
    starttime: u64,
    /// The CPU it (its main thread) last ran on.
    processor: Option<u32>,
}

/// Parses a /proc/[pid]/stat (or task/[tid]/stat) line. The command name sits in parentheses
/// and may itself hold spaces and parentheses, so the fields start after the last ')'.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_string();
    // Field n of proc(5) is rest[n - 3]: state is field 3.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { rest.get(n - 3)?.parse().ok() };
    Some(ProcStat {
        pid,
        comm,
        minflt: field(10)?,
        majflt: field(12)?,
        cpu_ticks: field(14)? + field(15)?,
        starttime: field(22)?,
        processor: field(39).map(|p| p as u32),
    })
}

/// The fields of /proc/[pid]/status this module uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ProcStatus {
    /// The real user id.
    uid: Option<u32>,
    /// VmRSS, bytes (absent for kernel threads).
    rss_bytes: Option<u64>,
}

fn parse_status(text: &str) -> ProcStatus {
    let mut s = ProcStatus::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let mut parts = value.split_whitespace();
        match key {
            "Uid" => s.uid = parts.next().and_then(|v| v.parse().ok()),
            "VmRSS" => {
                let kib: Option<u64> = parts.next().and_then(|v| v.parse().ok());
                s.rss_bytes = kib.map(|k| k * 1024);
            }
            _ => {}
        }
    }
    s
}

/// User names by uid, from an /etc/passwd text.
fn parse_passwd(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(':');
            let name = f.next()?;
            let uid = f.nth(1)?.parse().ok()?;
            (!name.is_empty() && !name.starts_with('#')).then(|| (uid, name.to_string()))
        })
        .collect()
}

/// One process and what it did over the interval between two samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    pub pid: u32,
    pub comm: String,
    /// Who runs it: the name from /etc/passwd, or the uid when the name is unknown.
    pub user: Option<String>,
    /// Percent of one core.
    pub cpu_pct: f64,
    /// Minor and major page faults per second.
    pub faults_per_s: f64,
    pub major_faults_per_s: f64,
    pub rss_bytes: Option<u64>,
    /// Change of the resident set per second, bytes (None until it was read twice).
    pub rss_growth_per_s: Option<f64>,
    /// CPUs its threads last ran on (only for the busiest few; empty otherwise).
    pub cpus: BTreeSet<u32>,
    /// Another stream-top (its command name is ours).
    pub stream_top: bool,
}

#[cfg(test)]
impl Process {
    /// A process for tests: `pid` and `comm` at `cpu_pct` on `cpus`, with no faults, no
    /// resident set, no user, and not another stream-top.
    pub(crate) fn busy(pid: u32, comm: &str, cpu_pct: f64, cpus: &[u32]) -> Process {
        Process {
            pid,
            comm: comm.into(),
            user: None,
            cpu_pct,
            faults_per_s: 0.0,
            major_faults_per_s: 0.0,
            rss_bytes: None,
            rss_growth_per_s: None,
            cpus: cpus.iter().copied().collect(),
            stream_top: false,
        }
    }
}

/// A resctrl monitoring group: the bytes its tasks moved to and from memory, per second.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupBandwidth {
    /// `default` for the root group, else its directory (`batch`, `batch/mon_groups/x`).
    pub name: String,
    pub bytes_per_s: f64,
    /// The thread ids in the group's `tasks` file.
    pub tasks: BTreeSet<u32>,
}

/// stream-top's own CPU between two samples, percent of one CPU: every thread's utime + stime
/// (/proc/PID/stat sums its threads); or why it is not known.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum OwnCpu {
    /// Before the second sample: no interval yet.
    #[default]
    NotYet,
    Pct(f64),
    Unknown(String),
}

/// One reading of the other processes. Rates need two: in the first, `elapsed_s` is 0 and
/// `processes` is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcSample {
    pub elapsed_s: f64,
    /// The processes that used CPU or faulted pages in the interval, busiest first; stream-top's
    /// own process is never among them.
    pub processes: Vec<Process>,
    /// Per-group memory bandwidth where resctrl monitors it (`None`: it does not, and any
    /// ranking is inferred from the processes alone).
    pub bandwidth: Option<Vec<GroupBandwidth>>,
}

/// Samples the other processes of the machine under `root`.
#[derive(Debug)]
pub struct ProcSampler {
    root: PathBuf,
    own_pid: u32,
    ticks_per_s: f64,
    users: HashMap<u32, String>,
    prev: Option<Previous>,
    /// Our own process over the last interval.
    own_cpu: OwnCpu,
}

#[derive(Debug, Default)]
struct Previous {
    at: Option<Instant>,
    stats: HashMap<u32, ProcStat>,
    rss: HashMap<u32, u64>,
    mbm: HashMap<String, u64>,
    /// Our own CPU ticks.
    own: Option<u64>,
}

impl ProcSampler {
    /// A sampler of the processes under `root` that leaves out `own_pid` (ours).
    pub fn new(root: &Path, own_pid: u32) -> ProcSampler {
        ProcSampler {
            root: root.to_path_buf(),
            own_pid,
            ticks_per_s: crate::platform::clock_ticks_per_second().map_or(100.0, |hz| hz as f64),
            users: HashMap::new(),
            prev: None,
            own_cpu: OwnCpu::default(),
        }
    }

    /// Sets `USER_HZ` for the fixture's tick counts (the default is the running kernel's).
    pub fn with_clock_ticks(mut self, ticks_per_s: u64) -> ProcSampler {
        self.ticks_per_s = ticks_per_s.max(1) as f64;
        self
    }

    pub fn sample(&mut self) -> ProcSample {
        self.sample_at(Instant::now())
    }

    /// Samples as if the time were `now`; rates are per second since the previous sample.
    pub fn sample_at(&mut self, now: Instant) -> ProcSample {
        let proc_dir = self.root.join("proc");
        let stats = read_stats(&proc_dir, self.own_pid);
        let own_stat = proc_dir.join(self.own_pid.to_string()).join("stat");
        let own = fs::read_to_string(&own_stat)
            .ok()
            .and_then(|t| parse_stat(&t))
            .map(|s| s.cpu_ticks);
        let mbm = read_resctrl(&self.root.join("sys/fs/resctrl"));
        let prev = self.prev.take().unwrap_or_default();
        let elapsed = prev
            .at
            .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
        let mut sample = ProcSample::default();
        let mut rss_now = HashMap::new();
        self.own_cpu = match (own, prev.own) {
            (None, _) => OwnCpu::Unknown(format!("{} unreadable", own_stat.display())),
            (Some(now_ticks), Some(was)) if elapsed > 0.0 => OwnCpu::Pct(
                100.0 * now_ticks.saturating_sub(was) as f64 / self.ticks_per_s / elapsed,
            ),
            (Some(_), _) => OwnCpu::default(),
        };
        if elapsed > 0.0 {
            sample.elapsed_s = elapsed;
            for (pid, s) in &stats {
                // A process new since the last pass (or a reused pid) did all of its work in
                // this interval.
                let before = prev.stats.get(pid).filter(|b| b.starttime == s.starttime);
                let (ticks0, min0, maj0) =
                    before.map_or((0, 0, 0), |b| (b.cpu_ticks, b.minflt, b.majflt));
                let ticks = s.cpu_ticks.saturating_sub(ticks0);
                let minflt = s.minflt.saturating_sub(min0);
                let majflt = s.majflt.saturating_sub(maj0);
                if ticks == 0 && minflt + majflt == 0 {
                    continue;
                }
                sample.processes.push(Process {
                    pid: *pid,
                    comm: s.comm.clone(),
                    user: None,
                    cpu_pct: 100.0 * ticks as f64 / self.ticks_per_s / elapsed,
                    faults_per_s: (minflt + majflt) as f64 / elapsed,
                    major_faults_per_s: majflt as f64 / elapsed,
                    rss_bytes: None,
                    rss_growth_per_s: None,
                    cpus: BTreeSet::new(),
                    stream_top: s.comm == OUR_COMM,
                });
            }
            sample
                .processes
                .sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
            for (i, p) in sample.processes.iter_mut().enumerate() {
                let dir = proc_dir.join(p.pid.to_string());
                let status = fs::read_to_string(dir.join("status"))
                    .map(|t| parse_status(&t))
                    .unwrap_or_default();
                p.user = status.uid.map(|uid| self.user_name(uid));
                p.rss_bytes = status.rss_bytes;
                if let Some(now_rss) = status.rss_bytes {
                    rss_now.insert(p.pid, now_rss);
                    p.rss_growth_per_s = prev
                        .rss
                        .get(&p.pid)
                        .map(|&was| (now_rss as f64 - was as f64) / elapsed);
                }
                if i < PLACEMENT_OF {
                    p.cpus = thread_cpus(&dir);
                }
            }
            sample.bandwidth = mbm.as_ref().map(|groups| {
                groups
                    .iter()
                    .filter_map(|g| {
                        let was = *prev.mbm.get(&g.name)?;
                        Some(GroupBandwidth {
                            name: g.name.clone(),
                            bytes_per_s: g.bytes.saturating_sub(was) as f64 / elapsed,
                            tasks: g.tasks.clone(),
                        })
                    })
                    .collect()
            });
        }
        self.prev = Some(Previous {
            at: Some(now),
            stats,
            rss: rss_now,
            mbm: mbm
                .unwrap_or_default()
                .into_iter()
                .map(|g| (g.name, g.bytes))
                .collect(),
            own,
        });
        sample
    }

    /// Our own process's CPU over the interval before the last sample.
    pub fn own_cpu(&self) -> &OwnCpu {
        &self.own_cpu
    }

    /// The name of `uid`, read from `etc/passwd` the first time an unknown uid is seen; the
    /// number itself when the file does not name it.
    fn user_name(&mut self, uid: u32) -> String {
        if !self.users.contains_key(&uid) {
            if let Ok(text) = fs::read_to_string(self.root.join("etc/passwd")) {
                self.users = parse_passwd(&text);
            }
            self.users.entry(uid).or_insert_with(|| uid.to_string());
        }
        self.users[&uid].clone()
    }
}

/// Every process but `exclude`, by pid. Processes that vanish while we read are skipped.
fn read_stats(proc_dir: &Path, exclude: u32) -> HashMap<u32, ProcStat> {
    let Ok(entries) = fs::read_dir(proc_dir) else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            if pid == exclude {
                return None;
            }
            parse_stat(&fs::read_to_string(e.path().join("stat")).ok()?)
        })
        .map(|s| (s.pid, s))
        .collect()
}

/// The CPUs a process's threads last ran on.
fn thread_cpus(pid_dir: &Path) -> BTreeSet<u32> {
    let Ok(tasks) = fs::read_dir(pid_dir.join("task")) else {
        return BTreeSet::new();
    };
    tasks
        .flatten()
        .filter_map(|t| parse_stat(&fs::read_to_string(t.path().join("stat")).ok()?)?.processor)
        .collect()
}

/// A resctrl group's byte counter now.
#[derive(Debug, Clone, PartialEq)]
struct GroupCounter {
    name: String,
    bytes: u64,
    tasks: BTreeSet<u32>,
}

/// Every monitoring group under a mounted resctrl with its `mbm_total_bytes` summed over the
/// cache domains; None where resctrl is not mounted or monitors no memory bandwidth.
fn read_resctrl(base: &Path) -> Option<Vec<GroupCounter>> {
    if !base.join("mon_data").is_dir() {
        return None;
    }
    let mut dirs = vec![("default".to_string(), base.to_path_buf())];
    let subdirs = |dir: &Path| -> Vec<(String, PathBuf)> {
        let mut v: Vec<(String, PathBuf)> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("tasks").is_file())
            .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
            .collect();
        v.sort();
        v
    };
    for (name, path) in subdirs(base) {
        dirs.push((name, path));
    }
    let controls = dirs.clone();
    for (parent, path) in controls {
        for (name, mon) in subdirs(&path.join("mon_groups")) {
            let full = if parent == "default" {
                format!("mon_groups/{name}")
            } else {
                format!("{parent}/mon_groups/{name}")
            };
            dirs.push((full, mon));
        }
    }
    let groups: Vec<GroupCounter> = dirs
        .into_iter()
        .filter_map(|(name, dir)| {
            let domains = fs::read_dir(dir.join("mon_data")).ok()?;
            let counts: Vec<u64> = domains
                .flatten()
                .filter_map(|d| {
                    let text = fs::read_to_string(d.path().join("mbm_total_bytes")).ok()?;
                    // "Unavailable" while the counter cannot be read.
                    text.trim().parse().ok()
                })
                .collect();
            if counts.is_empty() {
                return None;
            }
            let tasks = fs::read_to_string(dir.join("tasks"))
                .map(|t| {
                    t.split_whitespace()
                        .filter_map(|v| v.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            Some(GroupCounter {
                name,
                bytes: counts.iter().sum(),
                tasks,
            })
        })
        .collect();
    (!groups.is_empty()).then_some(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_spaces_and_parentheses() {
        // Fields 3..=24, then 25..=37 as zeros, exit_signal (38) and processor (39).
        let line = "77 (a (b) c) S 1 77 77 0 -1 4194304 11 0 3 0 12 30 0 0 20 0 1 0 5000 \
                    1000 25 0 0 0 0 0 0 0 0 0 0 0 0 0 17 6 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.pid, 77);
        assert_eq!(s.comm, "a (b) c");
        assert_eq!((s.minflt, s.majflt, s.cpu_ticks), (11, 3, 42));
        assert_eq!(s.starttime, 5000);
        assert_eq!(s.processor, Some(6));
        assert_eq!(parse_stat("77 (short) S 1 2").map(|s| s.pid), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn our_own_cpu_is_every_thread_of_our_process_between_two_samples() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("proc/4242");
        fs::create_dir_all(&dir).unwrap();
        // utime 12 + stime 30 ticks, then 62 + 30: 50 ticks at 100 a second over 2 s is 25 %.
        let stat = |utime: u64| {
            format!(
                "4242 (stream-top) S 1 77 77 0 -1 4194304 11 0 3 0 {utime} 30 0 0 20 0 3 0 \
                 5000 1000 25 0 0 0 0 0 0 0 0 0 0 0 0 0 17 6 0 0"
            )
        };
        let mut p = ProcSampler::new(root.path(), 4242).with_clock_ticks(100);
        let t0 = Instant::now();
        fs::write(dir.join("stat"), stat(12)).unwrap();
        p.sample_at(t0);
        assert_eq!(p.own_cpu(), &OwnCpu::NotYet);
        fs::write(dir.join("stat"), stat(62)).unwrap();
        let sample = p.sample_at(t0 + std::time::Duration::from_secs(2));
        assert_eq!(p.own_cpu(), &OwnCpu::Pct(25.0));
        assert!(
            sample.processes.is_empty(),
            "ours is never among the others"
        );
        fs::remove_file(dir.join("stat")).unwrap();
        p.sample_at(t0 + std::time::Duration::from_secs(3));
        assert!(
            matches!(p.own_cpu(), OwnCpu::Unknown(why) if why.ends_with("4242/stat unreadable")),
            "{:?}",
            p.own_cpu()
        );
    }

    #[test]
    fn status_and_passwd() {
        let s = parse_status("Name:\thog\nUid:\t1001\t1001\t1001\t1001\nVmRSS:\t  2048 kB\n");
        assert_eq!(s.uid, Some(1001));
        assert_eq!(s.rss_bytes, Some(2 << 20));
        assert_eq!(parse_status("Name:\tkthreadd\n").rss_bytes, None);
        let users = parse_passwd("root:x:0:0::/root:/bin/sh\n# comment\nalice:x:1001:1001::/:\n");
        assert_eq!(users.get(&1001).map(String::as_str), Some("alice"));
        assert_eq!(users.len(), 2);
    }
}
