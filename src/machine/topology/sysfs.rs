//! The topology of a Linux machine from sysfs (and the model name from /proc/cpuinfo) under a
//! root: the online CPUs, their packages, cores and SMT siblings, NUMA nodes, hybrid core
//! types and cache instances. Every file but the online list is optional; malformed contents
//! are errors naming the file.

use super::{Cache, CacheKind, CoreKind, Cpu, NumaNode, Topology};
use crate::base::error::{Error, Result};
use crate::machine::cpu_id;
use std::fs;
use std::path::Path;

impl Topology {
    pub(super) fn read_tree(root: &Path) -> Result<Topology> {
        let cpu_dir = root.join("sys/devices/system/cpu");
        let online_path = cpu_dir.join("online");
        let online = parse_cpulist(&read_required(&online_path)?)
            .map_err(|e| Error::machine(format!("{}: {e}", online_path.display())))?;
        if online.is_empty() {
            return Err(Error::machine(format!(
                "{}: no online CPUs listed",
                online_path.display()
            )));
        }
        let is_online = |c: usize| online.binary_search(&c).is_ok();

        let mut nodes = read_nodes(root, &online)?;
        let kinds = read_kinds(root)?;

        let mut cpus = Vec::with_capacity(online.len());
        let mut siblings_known = true;
        for &id in &online {
            let dir = cpu_dir.join(format!("cpu{id}/topology"));
            let package = read_opt_int(&dir.join("physical_package_id"))?
                .map(|v| v.max(0) as usize)
                .unwrap_or(0);
            let core = read_opt_int(&dir.join("core_id"))?
                .map(|v| v.max(0) as usize)
                .unwrap_or(id);
            let listed = match read_opt_list(&dir.join("thread_siblings_list"))? {
                Some(list) => Some(list),
                None => read_opt_list(&dir.join("core_cpus_list"))?,
            };
            let smt_siblings = match listed {
                Some(list) => {
                    let mut list: Vec<usize> = list.into_iter().filter(|&c| is_online(c)).collect();
                    if !list.contains(&id) {
                        list.push(id);
                        list.sort_unstable();
                    }
                    list
                }
                None => {
                    siblings_known = false;
                    vec![id]
                }
            };
            // A CPU that no node lists belongs to the first node.
            let node = nodes
                .iter()
                .find(|n| n.cpus.binary_search(&id).is_ok())
                .or(nodes.first())
                .map(|n| n.id)
                .unwrap_or(0);
            let kind = match &kinds {
                Some((p, _)) if p.binary_search(&id).is_ok() => CoreKind::Performance,
                Some((_, e)) if e.binary_search(&id).is_ok() => CoreKind::Efficiency,
                _ => CoreKind::Uniform,
            };
            cpus.push(Cpu {
                id,
                package,
                core,
                node,
                smt_siblings,
                kind,
            });
        }
        if !siblings_known {
            // Without sibling lists, CPUs that report the same package and core are one core.
            let pairs: Vec<(usize, usize, usize)> =
                cpus.iter().map(|c| (c.id, c.package, c.core)).collect();
            for cpu in &mut cpus {
                cpu.smt_siblings = pairs
                    .iter()
                    .filter(|&&(_, p, c)| p == cpu.package && c == cpu.core)
                    .map(|&(id, _, _)| id)
                    .collect();
            }
        }
        if nodes.is_empty() {
            nodes.push(NumaNode {
                id: 0,
                cpus: online.clone(),
            });
        } else {
            for cpu in &cpus {
                if let Some(n) = nodes.iter_mut().find(|n| n.id == cpu.node)
                    && let Err(at) = n.cpus.binary_search(&cpu.id)
                {
                    n.cpus.insert(at, cpu.id);
                }
            }
        }

        let caches = read_caches(&cpu_dir, &online)?;
        Ok(Topology {
            model: read_model(root),
            cpus,
            caches,
            nodes,
            llc_hidden: false,
            cpu: cpu_id::read(root),
        })
    }
}

/// Parses a kernel cpulist: `0-3,8-11`, `0,2,4`, `0-15:2/4` (groups), or empty (none).
/// The result is sorted and without duplicates.
fn parse_cpulist(text: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    let bad = |part: &str| {
        Error::machine(format!(
            "'{part}' is not a CPU list entry (expected e.g. 0-3,8-11)"
        ))
    };
    for part in text.trim().split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (range, stride) = match part.split_once(':') {
            Some((r, s)) => {
                let (used, group) = s.split_once('/').ok_or_else(|| bad(part))?;
                let used: usize = used.parse().map_err(|_| bad(part))?;
                let group: usize = group.parse().map_err(|_| bad(part))?;
                if group == 0 || used == 0 {
                    return Err(bad(part));
                }
                (r, Some((used, group)))
            }
            None => (part, None),
        };
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().map_err(|_| bad(part))?,
                b.trim().parse::<usize>().map_err(|_| bad(part))?,
            ),
            None => {
                let v = range.trim().parse::<usize>().map_err(|_| bad(part))?;
                (v, v)
            }
        };
        if hi < lo || hi - lo > 1 << 20 {
            return Err(bad(part));
        }
        for c in lo..=hi {
            match stride {
                Some((used, group)) if (c - lo) % group >= used => {}
                _ => out.push(c),
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses a sysfs cache size: `32K`, `32768K`, `1M`, `2G`, or bytes.
fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: u64 = num.parse().ok()?;
    let mult = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    value.checked_mul(mult)
}

fn read_required(path: &Path) -> Result<String> {
    fs::read_to_string(path)
        .map_err(|e| Error::machine(format!("cannot read {}: {e}", path.display())))
}

/// The file's contents, or `None` when it does not exist or cannot be read.
fn read_opt(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn read_opt_int(path: &Path) -> Result<Option<i64>> {
    match read_opt(path) {
        None => Ok(None),
        Some(text) => text.trim().parse().map(Some).map_err(|_| {
            Error::machine(format!(
                "{}: '{}' is not an integer",
                path.display(),
                text.trim()
            ))
        }),
    }
}

fn read_opt_list(path: &Path) -> Result<Option<Vec<usize>>> {
    match read_opt(path) {
        None => Ok(None),
        Some(text) => parse_cpulist(&text)
            .map(Some)
            .map_err(|e| Error::machine(format!("{}: {e}", path.display()))),
    }
}

/// NUMA nodes from `node*/cpulist`, sorted by id, CPUs limited to online ones. Empty when the
/// kernel has no node directory (then the caller makes one node 0).
fn read_nodes(root: &Path, online: &[usize]) -> Result<Vec<NumaNode>> {
    let dir = root.join("sys/devices/system/node");
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut nodes = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("node"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let cpus = read_opt_list(&entry.path().join("cpulist"))?
            .unwrap_or_default()
            .into_iter()
            .filter(|c| online.binary_search(c).is_ok())
            .collect();
        nodes.push(NumaNode { id, cpus });
    }
    nodes.sort_by_key(|n| n.id);
    Ok(nodes)
}

/// P-core and E-core CPU lists.
type KindLists = (Vec<usize>, Vec<usize>);

/// P-core and E-core CPU lists on Intel hybrid parts, when the kernel exposes them.
fn read_kinds(root: &Path) -> Result<Option<KindLists>> {
    let p = read_opt_list(&root.join("sys/devices/cpu_core/cpus"))?;
    let e = read_opt_list(&root.join("sys/devices/cpu_atom/cpus"))?;
    Ok(match (p, e) {
        (None, None) => None,
        (p, e) => Some((p.unwrap_or_default(), e.unwrap_or_default())),
    })
}

/// Every cache instance once: the same level, type and CPU set seen from several CPUs is one.
fn read_caches(cpu_dir: &Path, online: &[usize]) -> Result<Vec<Cache>> {
    let mut caches: Vec<Cache> = Vec::new();
    for &id in online {
        let dir = cpu_dir.join(format!("cpu{id}/cache"));
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut indices: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("index"))
            })
            .collect();
        indices.sort();
        for index in indices {
            let (Some(level), Some(kind), Some(size)) = (
                read_opt(&index.join("level")),
                read_opt(&index.join("type")),
                read_opt(&index.join("size")),
            ) else {
                continue;
            };
            let level: u8 = level.trim().parse().map_err(|_| {
                Error::machine(format!(
                    "{}: '{}' is not a cache level",
                    index.join("level").display(),
                    level.trim()
                ))
            })?;
            let kind = match kind.trim() {
                "Data" => CacheKind::Data,
                "Instruction" => CacheKind::Instruction,
                "Unified" => CacheKind::Unified,
                _ => continue,
            };
            let size = parse_cache_size(&size).ok_or_else(|| {
                Error::machine(format!(
                    "{}: '{}' is not a cache size",
                    index.join("size").display(),
                    size.trim()
                ))
            })?;
            let mut cpus: Vec<usize> = read_opt_list(&index.join("shared_cpu_list"))?
                .unwrap_or_else(|| vec![id])
                .into_iter()
                .filter(|c| online.binary_search(c).is_ok())
                .collect();
            if !cpus.contains(&id) {
                cpus.push(id);
                cpus.sort_unstable();
            }
            let cache = Cache {
                level,
                kind,
                size,
                cpus,
            };
            if !caches.contains(&cache) {
                caches.push(cache);
            }
        }
    }
    caches.sort_by(|a, b| {
        (a.level, kind_order(a.kind), a.cpus.first()).cmp(&(
            b.level,
            kind_order(b.kind),
            b.cpus.first(),
        ))
    });
    Ok(caches)
}

fn kind_order(kind: CacheKind) -> u8 {
    match kind {
        CacheKind::Data => 0,
        CacheKind::Instruction => 1,
        CacheKind::Unified => 2,
    }
}

/// The CPU model from /proc/cpuinfo: `model name` (x86), else `Hardware` or `CPU part`
/// (Arm), else "unknown CPU".
fn read_model(root: &Path) -> String {
    let Some(text) = read_opt(&root.join("proc/cpuinfo")) else {
        return "unknown CPU".to_string();
    };
    let field = |key: &str| {
        text.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
            (k.trim() == key && !v.is_empty()).then_some(v)
        })
    };
    if let Some(model) = field("model name") {
        return model;
    }
    if let Some(hw) = field("Hardware") {
        return hw;
    }
    if let Some(part) = field("CPU part") {
        return match field("CPU implementer") {
            Some(imp) => format!("CPU implementer {imp}, part {part}"),
            None => format!("CPU part {part}"),
        };
    }
    "unknown CPU".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(
            parse_cpulist("0-3,8-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 9, 10, 11]
        );
        assert_eq!(parse_cpulist("5,1,1").unwrap(), vec![1, 5]);
        assert_eq!(parse_cpulist("").unwrap(), Vec::<usize>::new());
        assert_eq!(parse_cpulist("0-7:2/4").unwrap(), vec![0, 1, 4, 5]);
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("a").is_err());
        assert!(parse_cpulist("0-7:2").is_err());
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("4096"), Some(4096));
        assert_eq!(parse_cache_size("big"), None);
        assert_eq!(parse_cache_size("1X"), None);
    }
}
