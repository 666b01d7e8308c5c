//! The Linux sources of the host's figures, each a file under a root's /proc: `loadavg`,
//! `meminfo`, `vmstat`, the `cpu` line of `stat` and the PSI files; plain parsers, tested on
//! text, that return a line naming the file when it cannot be read.

use super::reading::{CpuTimes, MemInfo, Pressure, Reading};
use crate::base::error::{Error, Result};
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// One pass over /proc under the root.
pub(super) fn reading(root: &Path) -> Reading {
    let proc_dir = root.join("proc");
    let mut problems = Vec::new();
    let load = read_loadavg(&proc_dir.join("loadavg")).unwrap_or_else(|e| {
        problems.push(e.to_string());
        [0.0; 3]
    });
    let mem = read_meminfo(&proc_dir.join("meminfo")).unwrap_or_else(|e| {
        problems.push(e.to_string());
        MemInfo::default()
    });
    let (swap_in, swap_out) = read_vmstat(&proc_dir.join("vmstat")).unwrap_or_else(|e| {
        problems.push(e.to_string());
        (None, None)
    });
    let cpu_line = read_cpu_line(&proc_dir.join("stat"))
        .map_err(|e| problems.push(e.to_string()))
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

fn read_file(path: &Path) -> Result<String> {
    fs::read_to_string(path)
        .map_err(|e| Error::machine(format!("cannot read {}: {e}", path.display())))
}

pub(super) fn read_loadavg(path: &Path) -> Result<[f64; 3]> {
    let text = read_file(path)?;
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    let mut load = [0.0; 3];
    for slot in &mut load {
        match fields.next() {
            Some(Ok(v)) if v.is_finite() => *slot = v,
            _ => {
                return Err(Error::machine(format!(
                    "{}: '{}' does not start with three load averages",
                    path.display(),
                    text.trim()
                )));
            }
        }
    }
    Ok(load)
}

pub(super) fn read_meminfo(path: &Path) -> Result<MemInfo> {
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
        .ok_or_else(|| Error::machine(format!("{}: no MemTotal line", path.display())))?;
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
fn read_vmstat(path: &Path) -> Result<(Option<u64>, Option<u64>)> {
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
fn read_cpu_line(path: &Path) -> Result<CpuTimes> {
    let text = read_file(path)?;
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))
        .ok_or_else(|| Error::machine(format!("{}: no 'cpu' line", path.display())))?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map_while(|v| v.parse().ok())
        .collect();
    if values.len() < 4 {
        return Err(Error::machine(format!(
            "{}: short 'cpu' line '{line}'",
            path.display()
        )));
    }
    let upto_steal = &values[..values.len().min(8)];
    Ok(CpuTimes {
        total: upto_steal.iter().sum(),
        steal: values.get(7).copied().unwrap_or(0),
    })
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
        assert!(
            read_cpu_line(&path)
                .unwrap_err()
                .to_string()
                .contains("no 'cpu' line")
        );
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
        assert!(
            read_meminfo(&path)
                .unwrap_err()
                .to_string()
                .contains("MemTotal")
        );
    }
}
