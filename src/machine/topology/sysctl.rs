//! The topology of a Mac from its `sysctl` values.
//!
//! Apple Silicon lists its core types as performance levels (`hw.nperflevels`; level 0 is the
//! fastest), each with its core count, L1d, L2 and how many CPUs share one L2. It lists no
//! last-level cache: the system-level cache in front of the memory is not visible to the OS,
//! which [`Topology::llc_hidden`] records so that `dram` is sized by a rule that holds there.
//! Intel Macs have no performance levels and list `hw.l1dcachesize`, `hw.l2cachesize`,
//! `hw.l3cachesize` and their sharing in `hw.cacheconfig`. CPU numbers are positions: level 0
//! first, SMT siblings adjacent; macOS neither lets a thread choose a CPU nor says which one it
//! ran on, so nothing else depends on them.

use super::{Cache, CacheKind, CoreKind, Cpu, NumaNode, Topology};
use crate::base::error::{Error, Result};
use crate::machine::cpu_id;
use crate::machine::sysctl::Sysctl;

/// One performance level: a core type.
#[derive(Debug, Clone, PartialEq)]
struct Level {
    kind: CoreKind,
    physical: usize,
    logical: usize,
    l1d: Option<u64>,
    l2: Option<u64>,
    /// Logical CPUs sharing one L2.
    cpus_per_l2: Option<usize>,
    l3: Option<u64>,
    cpus_per_l3: Option<usize>,
}

impl Topology {
    /// Reads the values and builds the topology; see [`Topology::from_sysctl`].
    pub(crate) fn from_sysctl(values: &Sysctl) -> Result<Topology> {
        build(values)
    }
}

fn build(s: &Sysctl) -> Result<Topology> {
    let levels = levels(s)?;
    let mut cpus = Vec::new();
    let mut caches = Vec::new();
    let mut core = 0;
    let mut hidden = true;
    for level in &levels {
        let first = cpus.len();
        let per_core = (level.logical / level.physical.max(1)).max(1);
        for c in 0..level.physical {
            let ids: Vec<usize> = (first + c * per_core..first + (c + 1) * per_core)
                .filter(|&id| id < first + level.logical)
                .collect();
            for &id in &ids {
                cpus.push(Cpu {
                    id,
                    package: 0,
                    core,
                    node: 0,
                    smt_siblings: ids.clone(),
                    kind: level.kind,
                });
            }
            if let Some(size) = level.l1d {
                caches.push(Cache {
                    level: 1,
                    kind: CacheKind::Data,
                    size,
                    cpus: ids.clone(),
                });
            }
            core += 1;
        }
        let ids: Vec<usize> = (first..first + level.logical).collect();
        for (cache_level, size, share) in [
            (2, level.l2, level.cpus_per_l2),
            (3, level.l3, level.cpus_per_l3),
        ] {
            let Some(size) = size else { continue };
            hidden &= cache_level != 3;
            // Without its sharing, a level's cache is taken as one instance for the level.
            let share = share.unwrap_or(level.logical).max(1);
            for group in ids.chunks(share) {
                caches.push(Cache {
                    level: cache_level,
                    kind: CacheKind::Unified,
                    size,
                    cpus: group.to_vec(),
                });
            }
        }
    }
    if cpus.is_empty() {
        return Err(Error::machine(format!("{}: no CPUs listed", s.source())));
    }
    let all: Vec<usize> = (0..cpus.len()).collect();
    Ok(Topology {
        model: s
            .get("machdep.cpu.brand_string")
            .filter(|m| !m.is_empty())
            .unwrap_or("unknown CPU")
            .to_string(),
        cpus,
        caches,
        nodes: vec![NumaNode { id: 0, cpus: all }],
        llc_hidden: hidden,
        cpu: cpu_id::from_sysctl(s),
    })
}

/// The performance levels, or one level from the machine-wide names where there are none.
fn levels(s: &Sysctl) -> Result<Vec<Level>> {
    let listed = s.int("hw.nperflevels")?;
    // Partial listings leave out hw.nperflevels: count the levels that list their cores.
    let count = listed.unwrap_or_else(|| {
        (0..8)
            .take_while(|n| s.get(&format!("hw.perflevel{n}.physicalcpu")).is_some())
            .count() as u64
    });
    if count == 0 {
        return Ok(vec![machine_wide(s)?]);
    }
    let last = count - 1;
    let mut out = Vec::new();
    for n in 0..count {
        let key = |k: &str| format!("hw.perflevel{n}.{k}");
        let int = |k: &str| s.int(&key(k));
        let physical = int("physicalcpu")?;
        let logical = int("logicalcpu")?;
        let (physical, logical) = match (physical, logical) {
            (Some(p), Some(l)) => (p, l),
            (Some(p), None) => (p, p),
            (None, Some(l)) => (l, l),
            (None, None) => {
                return Err(Error::machine(format!(
                    "{}: no {}",
                    s.source(),
                    key("logicalcpu")
                )));
            }
        };
        // The machine-wide cache names describe the least performant level (Apple's
        // "Determining system capabilities"), so they stand in for its own where missing.
        let or_legacy = |k: &str| -> Result<Option<u64>> {
            match int(k)? {
                Some(v) => Ok(Some(v)),
                None if n == last => s.int(&format!("hw.{k}")),
                None => Ok(None),
            }
        };
        let name = s.get(&key("name")).unwrap_or("");
        let kind = match (name, n, count) {
            (_, _, 1) => CoreKind::Uniform,
            ("Efficiency", _, _) => CoreKind::Efficiency,
            ("Performance" | "Super", _, _) | ("", 0, _) => CoreKind::Performance,
            ("", _, _) => CoreKind::Efficiency,
            // A level named otherwise: ranked by its number.
            (_, 0, _) => CoreKind::Performance,
            _ => CoreKind::Efficiency,
        };
        out.push(Level {
            kind,
            physical: physical as usize,
            logical: logical as usize,
            l1d: or_legacy("l1dcachesize")?,
            l2: or_legacy("l2cachesize")?,
            cpus_per_l2: int("cpusperl2")?.map(|v| v as usize),
            l3: int("l3cachesize")?,
            cpus_per_l3: int("cpusperl3")?.map(|v| v as usize),
        });
    }
    Ok(out)
}

/// Macs without performance levels (Intel): the machine-wide counts and caches, with their
/// sharing from `hw.cacheconfig` (logical CPUs per instance of memory, L1, L2, L3).
fn machine_wide(s: &Sysctl) -> Result<Level> {
    let logical = s.required_int("hw.logicalcpu")? as usize;
    let physical = s.int("hw.physicalcpu")?.map_or(logical, |v| v as usize);
    let sharing: Vec<usize> = s
        .get("hw.cacheconfig")
        .map(|c| {
            c.split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let share = |i: usize| sharing.get(i).copied().filter(|&v| v > 0);
    Ok(Level {
        kind: CoreKind::Uniform,
        physical,
        logical,
        l1d: s.int("hw.l1dcachesize")?,
        l2: s.int("hw.l2cachesize")?,
        cpus_per_l2: share(2),
        l3: s.int("hw.l3cachesize")?,
        cpus_per_l3: share(3),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intel_mac_has_one_level_smt_siblings_and_a_listed_l3() {
        // The names an Intel Mac lists (no performance levels); sharing from hw.cacheconfig.
        let s = Sysctl::parse(
            "machdep.cpu.brand_string: Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz\n\
             hw.physicalcpu: 6\nhw.logicalcpu: 12\nhw.l1dcachesize: 32768\n\
             hw.l2cachesize: 262144\nhw.l3cachesize: 9437184\nhw.cacheconfig: 12 2 2 12 0 0 0 0 0 0\n",
            "test",
        );
        let t = Topology::from_sysctl(&s).unwrap();
        assert_eq!(t.cpus.len(), 12);
        assert_eq!(t.physical_cores(), 6);
        assert_eq!(t.cpus[3].smt_siblings, vec![2, 3]);
        assert!(t.cpus.iter().all(|c| c.kind == CoreKind::Uniform));
        assert!(!t.llc_hidden);
        assert_eq!(t.last_level(), Some(3));
        assert_eq!(t.cache_total(3), 9437184);
        assert_eq!(t.cache_share_per_cpu(2), Some(131072));
    }

    #[test]
    fn missing_and_malformed_values_are_named() {
        let e = build(&Sysctl::parse("hw.nperflevels: 2\n", "listing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("hw.perflevel0.logicalcpu"), "{e}");
        let e = build(&Sysctl::parse("hw.logicalcpu: many\n", "listing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("hw.logicalcpu"), "{e}");
        let e = build(&Sysctl::parse("hw.memsize: 1\n", "listing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no hw.logicalcpu"), "{e}");
    }

    #[test]
    fn levels_named_beyond_p_and_e_are_ranked() {
        // An M5-style listing: levels named Super and Performance, both fast cores.
        let s = Sysctl::parse(
            "hw.nperflevels: 2\nhw.perflevel0.logicalcpu: 2\nhw.perflevel0.name: Super\n\
             hw.perflevel1.logicalcpu: 2\nhw.perflevel1.name: Performance\n",
            "test",
        );
        let t = Topology::from_sysctl(&s).unwrap();
        assert!(t.cpus.iter().all(|c| c.kind == CoreKind::Performance));
        assert_eq!(t.model, "unknown CPU");
    }
}
