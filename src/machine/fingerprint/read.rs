//! Reading a fingerprint under a root: each field from its own file, `Missing` with the path
//! and the reason where the file is absent or unreadable. A Mac (a root with `sysctl` values)
//! is read from what macOS gives instead (`mac`).

use super::mac::read_mac;
use super::{Bios, Dimm, Edac, Fingerprint, Known};
use crate::machine::sysctl::Sysctl;
use crate::machine::thp::ThpMode;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

/// The fingerprint of the host under `root`; the CPU model and sockets come from the topology
/// the run already read.
pub fn read(root: &Path, node: &str, cpu_model: &str, sockets: usize) -> Fingerprint {
    if let Some(s) = Sysctl::under(root) {
        return read_mac(root, &s, node, cpu_model, sockets);
    }
    Fingerprint {
        node: node.to_string(),
        machine_id: text(root, "etc/machine-id"),
        cpu_model: cpu_model.to_string(),
        sockets,
        dimms: dimms(root),
        bios: bios(root),
        microcode: microcode(root),
        kernel_release: text(root, "proc/sys/kernel/osrelease"),
        thp: thp(root),
        governor: text(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        boost: boost(root),
        zone_reclaim_mode: number(root, "proc/sys/vm/zone_reclaim_mode"),
        numa_balancing: number(root, "proc/sys/kernel/numa_balancing"),
        edac: edac(root),
    }
}

/// A file's trimmed text, or why there is none.
fn text(root: &Path, rel: &str) -> Known<String> {
    match fs::read_to_string(root.join(rel)) {
        Ok(t) if !t.trim().is_empty() => Known::Value(t.trim().to_string()),
        Ok(_) => Known::Missing(format!("/{rel} is empty")),
        Err(e) => Known::Missing(why(rel, &e)),
    }
}

fn why(rel: &str, e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::NotFound => format!("no /{rel}"),
        ErrorKind::PermissionDenied => format!("/{rel} is readable by root only"),
        _ => format!("/{rel}: {e}"),
    }
}

fn number(root: &Path, rel: &str) -> Known<u64> {
    match text(root, rel) {
        Known::Value(t) => t.parse().map_or_else(
            |_| Known::Missing(format!("/{rel} holds {t:?}")),
            Known::Value,
        ),
        Known::Missing(w) => Known::Missing(w),
    }
}

fn bios(root: &Path) -> Known<Bios> {
    let field = |name: &str| text(root, &format!("sys/class/dmi/id/bios_{name}"));
    match (field("vendor"), field("version"), field("date")) {
        (Known::Value(vendor), Known::Value(version), Known::Value(date)) => Known::Value(Bios {
            vendor,
            version,
            date,
        }),
        (Known::Missing(w), _, _) | (_, Known::Missing(w), _) | (_, _, Known::Missing(w)) => {
            Known::Missing(w)
        }
    }
}

fn microcode(root: &Path) -> Known<String> {
    match text(root, "proc/cpuinfo") {
        Known::Value(t) => t
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "microcode").then(|| v.trim().to_string())
            })
            .map_or_else(
                || Known::Missing("/proc/cpuinfo names no microcode".into()),
                Known::Value,
            ),
        Known::Missing(w) => Known::Missing(w),
    }
}

fn thp(root: &Path) -> Known<String> {
    ThpMode::read(root).map_or_else(
        || Known::Missing("no transparent huge page mode".into()),
        |m| Known::Value(m.name().to_string()),
    )
}

/// Boost: `cpufreq/boost` (1 on), else intel_pstate's `no_turbo` (1 off).
fn boost(root: &Path) -> Known<bool> {
    if let Known::Value(b) = number(root, "sys/devices/system/cpu/cpufreq/boost") {
        return Known::Value(b == 1);
    }
    match number(root, "sys/devices/system/cpu/intel_pstate/no_turbo") {
        Known::Value(n) => Known::Value(n == 0),
        Known::Missing(_) => Known::Missing("no cpufreq boost or intel_pstate no_turbo".into()),
    }
}

/// The names under a directory that start with `prefix`, sorted.
fn entries(root: &Path, rel: &str, prefix: &str) -> Result<Vec<String>, std::io::Error> {
    let mut names: Vec<String> = fs::read_dir(root.join(rel))?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort_by_key(|n| (n.len(), n.clone()));
    Ok(names)
}

fn dimms(root: &Path) -> Known<Vec<Dimm>> {
    let rel = "sys/firmware/dmi/entries";
    let names = match entries(root, rel, "17-") {
        Ok(n) if n.is_empty() => return Known::Missing(format!("no type-17 entries in /{rel}")),
        Ok(n) => n,
        Err(e) => return Known::Missing(why(rel, &e)),
    };
    let mut dimms = Vec::new();
    for name in names {
        let raw_rel = format!("{rel}/{name}/raw");
        match fs::read(root.join(&raw_rel)) {
            Ok(raw) => dimms.extend(Dimm::parse(&raw)),
            Err(e) => return Known::Missing(why(&raw_rel, &e)),
        }
    }
    Known::Value(dimms)
}

fn edac(root: &Path) -> Known<Vec<Edac>> {
    let rel = "sys/devices/system/edac/mc";
    let names = match entries(root, rel, "mc") {
        Ok(n) if n.is_empty() => return Known::Missing(format!("no memory controller in /{rel}")),
        Ok(n) => n,
        Err(e) => return Known::Missing(format!("{} (no EDAC driver)", why(rel, &e))),
    };
    let mut out = Vec::new();
    for mc in names {
        let count = |f: &str| number(root, &format!("{rel}/{mc}/{f}"));
        match (count("ce_count"), count("ue_count")) {
            (Known::Value(corrected), Known::Value(uncorrected)) => out.push(Edac {
                controller: mc,
                corrected,
                uncorrected,
            }),
            (Known::Missing(w), _) | (_, Known::Missing(w)) => return Known::Missing(w),
        }
    }
    Known::Value(out)
}
