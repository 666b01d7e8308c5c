//! The limits the process's cgroups put on it: memory room, CPU quota and CPU throttling.
//!
//! In a container or a systemd unit the host's MemAvailable and online CPUs say nothing about
//! what this process may use: arrays sized to MemAvailable get the process OOM-killed, and
//! threads past a CPU quota are throttled in the middle of rounds. The cgroups are found the
//! way the kernel tells them, `proc/self/cgroup` (which group, per hierarchy) and
//! `proc/self/mountinfo` (where each hierarchy is mounted), under a root path like every other
//! host reader, so fixture trees test them. v1 (one hierarchy per controller, e.g. `memory`,
//! `cpu,cpuacct`) and v2 (one unified hierarchy) are both read; where a controller is mounted
//! in v1 (hybrid hosts), v1 is what governs it.
//!
//! Limits nest: a group is held to the tightest of its own and every ancestor's limit, so each
//! reader walks from the process's group up to the top of the mount (the highest group this
//! process can see). A value that cannot be read is no limit at that level.

use crate::base::units::format_bytes;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// v1 writes "no limit" as the largest page-aligned count (`PAGE_COUNTER_MAX` pages); anything
/// at least this large is no limit.
const V1_UNLIMITED: u64 = 1 << 62;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// One controller's hierarchy as this process sees it: its group's directory first, then each
/// ancestor up to the top of the mount.
#[derive(Debug, Clone, PartialEq)]
struct Hierarchy {
    version: Version,
    dirs: Vec<PathBuf>,
}

/// The process's cgroups for memory and CPU, where they are mounted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cgroup {
    memory: Option<Hierarchy>,
    cpu: Option<Hierarchy>,
}

/// The room a memory limit leaves: at the level of the hierarchy that leaves the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryRoom {
    /// The limit, bytes (`memory.max`; v1 `memory.limit_in_bytes` or the hierarchical limit).
    pub limit: u64,
    /// What the group holding that limit uses now, bytes (`memory.current`;
    /// v1 `memory.usage_in_bytes`), page cache included: so the room is a lower bound.
    pub usage: u64,
    /// Of `usage`, file pages the kernel drops before it calls the OOM killer: the group's
    /// inactive page cache (`memory.stat` `inactive_file`; v1 `total_inactive_file`), 0 where
    /// it cannot be read.
    pub reclaimable: u64,
}

impl MemoryRoom {
    /// Bytes the group may still take before the limit, counting all its usage as taken: the
    /// figure sizing plans with, before anything is mapped.
    pub fn room(&self) -> u64 {
        self.limit.saturating_sub(self.usage)
    }

    /// Bytes the group may still take before the OOM killer is called: the room plus the page
    /// cache the kernel would drop first. What a first touch under way is checked against, so
    /// a container full of page cache does not stop a run that fits.
    pub fn room_before_oom(&self) -> u64 {
        let taken = self.usage.saturating_sub(self.reclaimable);
        self.limit.saturating_sub(taken)
    }
}

/// A CPU bandwidth limit: `quota_us` of CPU time every `period_us`, at the tightest level.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuQuota {
    pub quota_us: u64,
    pub period_us: u64,
    /// The group that sets it: its `cpu.stat` counts the throttling.
    dir: PathBuf,
}

impl CpuQuota {
    /// The quota in CPUs, e.g. 1.5.
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }

    /// The most threads that can all run at once without being throttled: the whole CPUs of
    /// the quota, at least one.
    pub fn whole_cpus(&self) -> usize {
        (self.cpus().floor() as usize).max(1)
    }
}

/// Throttling counters of the group that sets the CPU quota, cumulative since it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Throttling {
    /// Enforcement periods that had runnable tasks (`nr_periods`).
    pub periods: u64,
    /// Periods in which the group ran out of quota (`nr_throttled`).
    pub throttled_periods: u64,
    /// Time the group's tasks were held back, ns (`throttled_usec` × 1000; v1 `throttled_time`).
    pub throttled_ns: u64,
}

/// The limits that apply, for the header and the reports.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Limits {
    /// The tightest memory limit, bytes.
    pub memory_limit: Option<u64>,
    /// The tightest CPU quota, CPUs.
    pub cpu_quota: Option<f64>,
}

impl Limits {
    /// Whether any limit applies.
    pub fn any(&self) -> bool {
        self.memory_limit.is_some() || self.cpu_quota.is_some()
    }

    /// "in a container: memory limit 400 MiB, CPU quota 1.5 CPUs"; None when no limit applies.
    pub fn line(&self) -> Option<String> {
        if !self.any() {
            return None;
        }
        let memory = self.memory_limit.map_or("no memory limit".into(), |b| {
            format!("memory limit {}", format_bytes(b))
        });
        let cpu = self.cpu_quota.map_or("no CPU quota".into(), |q| {
            format!("CPU quota {}", quota_text(q))
        });
        Some(format!("in a container: {memory}, {cpu}"))
    }
}

/// "1.5 CPUs", "1 CPU".
pub(crate) fn quota_text(cpus: f64) -> String {
    let n = format!("{:.2}", cpus);
    let n = n.trim_end_matches('0').trim_end_matches('.');
    format!("{n} CPU{}", if n == "1" { "" } else { "s" })
}

impl Cgroup {
    /// Finds the memory and CPU cgroups of this process under `root`. Without cgroups (no
    /// `proc/self/cgroup`, nothing mounted, another OS) both are absent: no limits apply.
    pub fn find(root: &Path) -> Cgroup {
        let read = |p: &str| fs::read_to_string(root.join(p)).unwrap_or_default();
        let groups = parse_proc_cgroup(&read("proc/self/cgroup"));
        let mounts = parse_mountinfo(&read("proc/self/mountinfo"));
        Cgroup {
            memory: hierarchy(root, &groups, &mounts, "memory"),
            cpu: hierarchy(root, &groups, &mounts, "cpu"),
        }
    }

    /// The room the memory limits leave now (the tightest level); None without a limit.
    pub fn memory(&self) -> Option<MemoryRoom> {
        let h = self.memory.as_ref()?;
        let (limit_file, usage_file, inactive) = match h.version {
            Version::V2 => ("memory.max", "memory.current", "inactive_file"),
            Version::V1 => (
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            ),
        };
        let reclaimable = |d: &Path| {
            fs::read_to_string(d.join("memory.stat"))
                .ok()
                .and_then(|s| stat_value(&s, inactive))
                .unwrap_or(0)
        };
        let mut levels: Vec<MemoryRoom> = h
            .dirs
            .iter()
            .filter_map(|d| {
                let limit = parse_limit(&fs::read_to_string(d.join(limit_file)).ok()?)?;
                let usage = parse_u64(&fs::read_to_string(d.join(usage_file)).ok()?)?;
                Some(MemoryRoom {
                    limit,
                    usage,
                    reclaimable: reclaimable(d),
                })
            })
            .collect();
        if h.version == Version::V1 {
            // v1 sums up the limits of ancestors above the mount too (a container sees only
            // its own group): measured against our own group's usage, the best we can know.
            let leaf = &h.dirs[0];
            let hier = fs::read_to_string(leaf.join("memory.stat"))
                .ok()
                .and_then(|s| stat_value(&s, "hierarchical_memory_limit"))
                .filter(|&l| l < V1_UNLIMITED);
            let usage = fs::read_to_string(leaf.join(usage_file))
                .ok()
                .and_then(|s| parse_u64(&s));
            if let (Some(limit), Some(usage)) = (hier, usage) {
                levels.push(MemoryRoom {
                    limit,
                    usage,
                    reclaimable: reclaimable(leaf),
                });
            }
        }
        levels.into_iter().min_by_key(|m| (m.room(), m.limit))
    }

    /// The directory of this process's own memory cgroup; None where none was found.
    pub fn memory_group(&self) -> Option<&Path> {
        self.memory.as_ref()?.dirs.first().map(PathBuf::as_path)
    }

    /// The tightest CPU quota of the hierarchy; None without one.
    pub fn cpu_quota(&self) -> Option<CpuQuota> {
        let h = self.cpu.as_ref()?;
        h.dirs
            .iter()
            .filter_map(|d| {
                let (quota_us, period_us) = match h.version {
                    Version::V2 => parse_cpu_max(&fs::read_to_string(d.join("cpu.max")).ok()?)?,
                    Version::V1 => {
                        let q = fs::read_to_string(d.join("cpu.cfs_quota_us")).ok()?;
                        let p = fs::read_to_string(d.join("cpu.cfs_period_us")).ok()?;
                        parse_cfs(&q, &p)?
                    }
                };
                Some(CpuQuota {
                    quota_us,
                    period_us,
                    dir: d.clone(),
                })
            })
            .min_by(|a, b| a.cpus().total_cmp(&b.cpus()))
    }

    /// The throttling counters of the group that sets `quota` (from [`Cgroup::cpu_quota`]):
    /// a child without a quota of its own counts none of the throttling its parent's quota
    /// causes. None when `cpu.stat` cannot be read.
    pub fn throttling(&self, quota: &CpuQuota) -> Option<Throttling> {
        let v = self.cpu.as_ref()?.version;
        parse_cpu_stat(&fs::read_to_string(quota.dir.join("cpu.stat")).ok()?, v)
    }

    /// The limits that apply now, for the header and reports.
    pub fn limits(&self) -> Limits {
        Limits {
            memory_limit: self.memory().map(|m| m.limit),
            cpu_quota: self.cpu_quota().map(|q| q.cpus()),
        }
    }
}

/// One line of `/proc/self/cgroup`: `ID:CONTROLLERS:PATH` (v2: `0::PATH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupLine {
    /// Empty for v2; `memory`, `cpu,cpuacct`, `name=systemd` for v1.
    pub controllers: Vec<String>,
    pub path: String,
}

/// Parses `/proc/self/cgroup`; lines that do not have three fields are skipped.
pub fn parse_proc_cgroup(text: &str) -> Vec<GroupLine> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?.trim_end();
            Some(GroupLine {
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// A cgroup mount from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMount {
    pub version: Version,
    /// The group of the hierarchy that is mounted (`/` unless a container sees only its own).
    pub root: String,
    pub mount_point: String,
    /// v1: the controllers in the super options (`memory`; `cpu`, `cpuacct`); v2: empty.
    pub controllers: Vec<String>,
}

/// Parses the cgroup and cgroup2 mounts out of `/proc/self/mountinfo`:
/// `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPER_OPTIONS`.
pub fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (root, mount_point) = (*left.get(3)?, *left.get(4)?);
            let version = match *right.first()? {
                "cgroup" => Version::V1,
                "cgroup2" => Version::V2,
                _ => return None,
            };
            let controllers = match version {
                Version::V2 => Vec::new(),
                Version::V1 => right
                    .get(2)
                    .map(|opts| opts.split(',').map(str::to_string).collect())
                    .unwrap_or_default(),
            };
            Some(CgroupMount {
                version,
                root: unescape(root),
                mount_point: unescape(mount_point),
                controllers,
            })
        })
        .collect()
}

/// mountinfo writes space, tab, newline and backslash as `\040`-style octal escapes.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The directories of `controller`'s hierarchy for this process, its group first: v1 where a
/// v1 hierarchy carries the controller, else the v2 one.
fn hierarchy(
    root: &Path,
    groups: &[GroupLine],
    mounts: &[CgroupMount],
    controller: &str,
) -> Option<Hierarchy> {
    let has = |list: &[String]| list.iter().any(|c| c == controller);
    let v1 = groups.iter().find(|g| has(&g.controllers)).and_then(|g| {
        mounts
            .iter()
            .filter(|m| m.version == Version::V1 && has(&m.controllers))
            .find_map(|m| group_dirs(root, m, &g.path))
            .map(|dirs| Hierarchy {
                version: Version::V1,
                dirs,
            })
    });
    v1.or_else(|| {
        let g = groups.iter().find(|g| g.controllers.is_empty())?;
        mounts
            .iter()
            .filter(|m| m.version == Version::V2)
            .find_map(|m| group_dirs(root, m, &g.path))
            .map(|dirs| Hierarchy {
                version: Version::V2,
                dirs,
            })
    })
}

/// The group's directory under the mount and each parent up to the mount point. None when
/// the group lies outside what the mount shows.
fn group_dirs(root: &Path, mount: &CgroupMount, group: &str) -> Option<Vec<PathBuf>> {
    let rel = if mount.root == "/" {
        group
    } else {
        // A mount of a sub-tree (a container's own group): the path must lie inside it.
        group
            .strip_prefix(mount.root.as_str())
            .filter(|r| r.is_empty() || r.starts_with('/'))?
    };
    let top = root.join(mount.mount_point.trim_start_matches('/'));
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        // Outside our cgroup namespace: nothing of it is visible to us.
        return None;
    }
    let mut dirs: Vec<PathBuf> = (0..=parts.len())
        .map(|n| parts[..n].iter().fold(top.clone(), |p, part| p.join(part)))
        .collect();
    dirs.reverse();
    Some(dirs)
}

fn parse_u64(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// A memory limit: a byte count, `max` (v2) or v1's "unlimited" count are no limit (None).
fn parse_limit(text: &str) -> Option<u64> {
    let t = text.trim();
    if t == "max" {
        return None;
    }
    parse_u64(t).filter(|&v| v < V1_UNLIMITED)
}

/// v2 `cpu.max`: `QUOTA PERIOD` in µs, or `max PERIOD` for none.
fn parse_cpu_max(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    let quota = f.next()?.parse::<u64>().ok()?;
    let period = f.next().map_or(Some(100_000), |p| p.parse::<u64>().ok())?;
    (quota > 0 && period > 0).then_some((quota, period))
}

/// v1 `cpu.cfs_quota_us` (`-1` for none) and `cpu.cfs_period_us`.
fn parse_cfs(quota: &str, period: &str) -> Option<(u64, u64)> {
    let quota = quota.trim().parse::<i64>().ok().filter(|&q| q > 0)? as u64;
    let period = parse_u64(period).filter(|&p| p > 0)?;
    Some((quota, period))
}

/// `cpu.stat`: v2 `nr_periods`, `nr_throttled`, `throttled_usec`; v1 `throttled_time` in ns.
fn parse_cpu_stat(text: &str, version: Version) -> Option<Throttling> {
    let throttled_ns = match version {
        Version::V2 => stat_value(text, "throttled_usec")?.saturating_mul(1000),
        Version::V1 => stat_value(text, "throttled_time")?,
    };
    Some(Throttling {
        periods: stat_value(text, "nr_periods")?,
        throttled_periods: stat_value(text, "nr_throttled")?,
        throttled_ns,
    })
}

/// The value of `key` in a flat-keyed file (`key value` per line).
fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| parse_u64(v)).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_self_cgroup_lines() {
        let g = parse_proc_cgroup("4:memory:/a/b\n2:cpu,cpuacct:/\n0::/user.slice/x.scope\nbad\n");
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].controllers, ["memory"]);
        assert_eq!(g[0].path, "/a/b");
        assert_eq!(g[1].controllers, ["cpu", "cpuacct"]);
        assert!(g[2].controllers.is_empty());
        assert_eq!(g[2].path, "/user.slice/x.scope");
    }

    #[test]
    fn mountinfo_cgroup_mounts() {
        let text = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 /docker/ab /sys/fs/cgroup/my\\040memory rw - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate
";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].controllers, ["rw", "cpu", "cpuacct"]);
        assert_eq!(m[1].root, "/docker/ab");
        assert_eq!(m[1].mount_point, "/sys/fs/cgroup/my memory");
        assert_eq!(m[2].version, Version::V2);
    }

    #[test]
    fn limits_max_and_v1_unlimited() {
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("419430400\n"), Some(419430400));
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("150000 100000\n"), Some((150000, 100000)));
        assert_eq!(parse_cfs("-1\n", "100000\n"), None);
        assert_eq!(parse_cfs("50000\n", "100000\n"), Some((50000, 100000)));
    }

    #[test]
    fn cpu_stat_in_both_versions() {
        let v2 = "usage_usec 10\nnr_periods 40\nnr_throttled 7\nthrottled_usec 2500\n";
        assert_eq!(
            parse_cpu_stat(v2, Version::V2),
            Some(Throttling {
                periods: 40,
                throttled_periods: 7,
                throttled_ns: 2_500_000
            })
        );
        let v1 = "nr_periods 3\nnr_throttled 1\nthrottled_time 999\n";
        assert_eq!(parse_cpu_stat(v1, Version::V1).unwrap().throttled_ns, 999);
        assert_eq!(parse_cpu_stat("usage_usec 10\n", Version::V2), None);
    }

    #[test]
    fn the_container_line() {
        assert_eq!(Limits::default().line(), None);
        let l = Limits {
            memory_limit: Some(400 << 20),
            cpu_quota: Some(1.5),
        };
        assert_eq!(
            l.line().unwrap(),
            "in a container: memory limit 400 MiB, CPU quota 1.5 CPUs"
        );
        let l = Limits {
            memory_limit: None,
            cpu_quota: Some(1.0),
        };
        assert_eq!(
            l.line().unwrap(),
            "in a container: no memory limit, CPU quota 1 CPU"
        );
    }
}
