//! How big each working set is on this machine: cache levels from the topology, `dram` by
//! STREAM's rule, all held to the memory budget (MemAvailable, or a cgroup's room) so a run is
//! refused or shrunk before anything is mapped rather than killed while it maps.

use super::sets::{ArraySize, Level, SetSpec, WorkingSet};
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::machine::cgroup::MemoryRoom;
use crate::machine::topology::Topology;

/// Arrays for `dram` are at least this many times all last-level cache (STREAM's rule).
const DRAM_LLC_FACTOR: u64 = 4;

/// Where the last-level cache is not listed (Apple Silicon's system-level cache), `dram`
/// arrays are also at least this large: 512 MiB per array, as the M4 Pro reference run of the
/// tests used, 14 × all L2 of an M4 Pro and many times any system-level cache Apple has
/// shipped.
pub const DRAM_HIDDEN_LLC_FLOOR: u64 = 512 << 20;

/// Memory kept free when sizing: explicit sets larger than MemAvailable minus this are refused.
fn memory_margin(mem_available: u64) -> u64 {
    (mem_available / 8).max(512 << 20)
}

/// The least memory kept free under a cgroup's limit ([`cgroup_margin`]).
pub(crate) const CGROUP_MARGIN_MIN: u64 = 32 << 20;

/// Memory kept free under a cgroup's limit: the process's own heap, stacks and page tables
/// are charged to the group too, and going over the limit means the OOM killer.
pub fn cgroup_margin(room: u64) -> u64 {
    (room / 8).max(CGROUP_MARGIN_MIN)
}

/// The most the arrays may hold at once, and what sets it: MemAvailable less its margin, or,
/// in a cgroup whose limit leaves less, that room less its margin. Computed once, before
/// anything is allocated; the live monitor's kept arrays obey it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    pub bytes: u64,
    mem_available: u64,
    /// The cgroup's limit and usage when it, not the host, sets the budget.
    cgroup: Option<MemoryRoom>,
    /// `--max-memory` when it, below the host's and the cgroup's budget, sets the budget.
    pub(crate) cap: Option<u64>,
}

impl MemoryBudget {
    /// The least of MemAvailable's budget and the cgroup room's (when there is a limit).
    pub fn new(mem_available: u64, cgroup: Option<MemoryRoom>) -> MemoryBudget {
        let host = mem_available.saturating_sub(memory_margin(mem_available));
        let cg = cgroup.map(|m| m.room().saturating_sub(cgroup_margin(m.room())));
        match cg {
            Some(b) if b < host => MemoryBudget {
                bytes: b,
                mem_available,
                cgroup,
                cap: None,
            },
            _ => MemoryBudget {
                bytes: host,
                mem_available,
                cgroup: None,
                cap: None,
            },
        }
    }

    /// The budget held to `--max-memory` when that is less: the cap then sets it.
    pub fn capped(self, cap: Option<u64>) -> MemoryBudget {
        match cap {
            Some(c) if c < self.bytes => MemoryBudget {
                bytes: c,
                cgroup: None,
                cap: Some(c),
                ..self
            },
            _ => self,
        }
    }

    /// Where the budget comes from, e.g. "MemAvailable 23 GiB less a 2.9 GiB margin" or
    /// "the container's memory limit 400 MiB, 10 MiB in use, less a 49 MiB margin".
    pub fn source(&self) -> String {
        if let Some(c) = self.cap {
            return format!("--max-memory {}", format_bytes(c));
        }
        match self.cgroup {
            Some(m) => format!(
                "the container's memory limit {}, {} in use, less a {} margin",
                format_bytes(m.limit),
                format_bytes(m.usage),
                format_bytes(cgroup_margin(m.room()))
            ),
            None => format!(
                "MemAvailable {} less a {} margin",
                format_bytes(self.mem_available),
                format_bytes(memory_margin(self.mem_available))
            ),
        }
    }
}

/// Sizes working sets from the machine's caches and memory.
///
/// A cache level gives each thread a slice per array such that its three slices fill half of
/// its share of that cache (and more than the level below holds). `dram` splits arrays of
/// 4 × all last-level cache, shrunk (with a note) when the memory budget does not allow it.
/// Explicit sets larger than the budget allows at `max_threads` are refused, and a range whose
/// largest size is (before any of its sizes is measured). A range gives a set per size.
pub fn size_sets(
    specs: &[SetSpec],
    topo: &Topology,
    memory: &MemoryBudget,
    max_threads: usize,
) -> Result<Vec<WorkingSet>> {
    let mut out: Vec<WorkingSet> = Vec::new();
    let mut add = |set: WorkingSet| {
        if !out.iter().any(|s| s.size == set.size) {
            out.push(set);
        }
    };
    for spec in specs {
        let set = match *spec {
            SetSpec::Level(Level::Dram) => dram_set(topo, memory),
            SetSpec::Level(level) => cache_set(level, topo)?,
            SetSpec::Split { bytes, ref text } => explicit_set(text, false, bytes),
            SetSpec::PerThread { bytes, ref text } => explicit_set(text, true, bytes),
            SetSpec::Range(ref range) => {
                let top = range.largest();
                let top = explicit_set(&top.label, range.per_thread, top.bytes);
                if let Some(why) = shortfall(&top, memory, max_threads) {
                    return Err(Error::usage(format!(
                        "--sets {}: its largest size, {}, {why}",
                        range.text, top.name
                    )));
                }
                for p in &range.points {
                    add(explicit_set(&p.label, range.per_thread, p.bytes));
                }
                continue;
            }
        };
        if let Some(why) = shortfall(&set, memory, max_threads) {
            return Err(Error::usage(format!("--sets {}: {why}", set.name)));
        }
        add(set);
    }
    Ok(out)
}

/// A set of an explicit size, named as the user wrote it (`64 MB`, `1 MiB/thread`).
fn explicit_set(text: &str, per_thread: bool, bytes: u64) -> WorkingSet {
    let (name, size) = if per_thread {
        (format!("{text}/thread"), ArraySize::PerThread(bytes))
    } else {
        (text.to_string(), ArraySize::Split(bytes))
    };
    WorkingSet {
        name,
        level: None,
        size,
        note: None,
    }
}

/// Why three arrays of `set` do not fit the budget at `max_threads` ("needs 192 GiB for three
/// arrays at 2 threads, but only … is available (…)"); None when they fit.
fn shortfall(set: &WorkingSet, memory: &MemoryBudget, max_threads: usize) -> Option<String> {
    let need = 3 * set.array_bytes(max_threads);
    (need > memory.bytes).then(|| {
        format!(
            "needs {} for three arrays at {}, but only {} is available ({})",
            format_bytes(need),
            crate::base::units::threads_phrase(max_threads),
            format_bytes(memory.bytes),
            memory.source(),
        )
    })
}

fn cache_set(level: Level, topo: &Topology) -> Result<WorkingSet> {
    let n = level.cache_level().expect("cache level");
    let last = topo.last_level().unwrap_or(0);
    // `l3` means the last level, whatever its number.
    let n = if level == Level::L3 && last > 0 && last != 3 {
        last
    } else {
        n
    };
    let share = topo.cache_share_per_cpu(n).ok_or_else(|| {
        Error::usage(format!(
            "--sets {}: this machine has no level-{n} data cache",
            level.name()
        ))
    })?;
    // Three slices fill half the share; round down to whole lines.
    let per_array = (share / 2 / 3 / 128).max(1) * 128;
    let below = if n > 1 {
        topo.cache_share_per_cpu(n - 1).unwrap_or(0)
    } else {
        0
    };
    let note = (3 * per_array <= below).then(|| {
        format!(
            "three slices of {} fit the level below ({} per CPU)",
            format_bytes(per_array),
            format_bytes(below)
        )
    });
    Ok(WorkingSet {
        name: level.name().to_string(),
        level: Some(level),
        size: ArraySize::PerThread(per_array),
        note,
    })
}

/// The `dram` arrays: 4 × all last-level cache (at least 8 MiB of it); where the last level
/// is not listed, 4 × the highest level listed and at least [`DRAM_HIDDEN_LLC_FLOOR`]; shrunk
/// to what memory allows, with a note.
fn dram_set(topo: &Topology, memory: &MemoryBudget) -> WorkingSet {
    let listed = topo.last_level();
    let llc = listed
        .map(|l| topo.cache_total(l))
        .unwrap_or(0)
        .max(8 << 20);
    let (rule, why) = if topo.llc_hidden {
        let level = listed.map_or("cache".to_string(), |l| format!("L{l}"));
        (
            (DRAM_LLC_FACTOR * llc).max(DRAM_HIDDEN_LLC_FLOOR),
            format!(
                "4 × {} of {level}, at least {}: the system-level cache is not listed",
                format_bytes(llc),
                format_bytes(DRAM_HIDDEN_LLC_FLOOR)
            ),
        )
    } else {
        (
            DRAM_LLC_FACTOR * llc,
            format!("4 × {} of last-level cache", format_bytes(llc)),
        )
    };
    let fits = memory.bytes / 3 / (2 << 20) * (2 << 20);
    let (bytes, note) = if rule <= fits {
        (rule, None)
    } else {
        // In a container the limit is not what is left of it: others (another instance, page
        // cache) may hold most of it, and the note says how much.
        let allows = match memory.cgroup {
            _ if memory.cap.is_some() => {
                format!("{} allows {}", memory.source(), format_bytes(fits))
            }
            Some(m) => format!(
                "the container's memory limit {}, with {} of it already in use, allows {}",
                format_bytes(m.limit),
                format_bytes(m.usage),
                format_bytes(fits)
            ),
            None => format!("memory allows {}", format_bytes(fits)),
        };
        (
            fits.max(2 << 20),
            Some(format!(
                "below STREAM's rule: arrays should be {} ({why}), {allows}",
                format_bytes(rule)
            )),
        )
    };
    let level = landing_level(topo, bytes);
    let note = match (note, level) {
        (Some(n), Level::L3) => Some(format!(
            "{n}: its three arrays fit in the last-level cache, so it measures that cache"
        )),
        (note, _) => note,
    };
    WorkingSet {
        name: "dram".into(),
        level: Some(level),
        size: ArraySize::Split(bytes),
        note,
    }
}

/// Where three split arrays of `bytes` each land: the last-level cache when they fit in all
/// of it (a `dram` set shrunk by a small memory budget measures that cache, not memory),
/// else memory.
fn landing_level(topo: &Topology, bytes: u64) -> Level {
    match topo.last_level() {
        Some(last) if 3 * bytes <= topo.cache_total(last) => Level::L3,
        _ => Level::Dram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(mem_available: u64) -> MemoryBudget {
        MemoryBudget::new(mem_available, None)
    }

    fn topo(name: &str) -> Topology {
        Topology::fixture(name)
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn cache_levels_fill_half_of_each_threads_share() {
        let t = topo("vm-2core");
        let sets = size_sets(
            &[
                SetSpec::Level(Level::L1),
                SetSpec::Level(Level::L2),
                SetSpec::Level(Level::L3),
            ],
            &t,
            &host(20 * GIB),
            2,
        )
        .unwrap();
        // 32 KiB L1d: three slices of 5376 B = 15.75 KiB, half of it.
        assert_eq!(sets[0].size, ArraySize::PerThread(5376));
        // 512 KiB L2: 85.25 KiB per array.
        assert_eq!(sets[1].size, ArraySize::PerThread(87296));
        // 32 MiB L3 shared by 2 CPUs: 16 MiB share, 8 MiB for the three slices.
        assert_eq!(sets[2].size, ArraySize::PerThread(2796160));
        assert!(sets.iter().all(|s| s.note.is_none()));
        assert_eq!(sets[1].label(), "85.2 KiB/thread (l2)");
    }

    /// `--max-memory 10MiB` leaves arrays of 2 MiB: 6 MiB fit in the 32 MiB last-level
    /// cache, so the row is labelled by the cache it lands in, not as memory.
    #[test]
    fn a_dram_set_shrunk_into_the_last_level_cache_is_labelled_by_that_cache() {
        let t = topo("vm-2core");
        let capped = host(20 * GIB).capped(Some(10 << 20));
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &capped, 2).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(2 << 20));
        assert_eq!(sets[0].level, Some(Level::L3));
        assert_eq!(sets[0].label(), "2 MiB (l3)");
        let note = sets[0].note.as_deref().unwrap();
        assert!(note.ends_with("so it measures that cache"), "{note}");
        let full = size_sets(&[SetSpec::Level(Level::Dram)], &t, &host(20 * GIB), 2).unwrap();
        assert_eq!(full[0].level, Some(Level::Dram));
    }

    #[test]
    fn dram_is_four_times_all_last_level_cache() {
        let t = topo("vm-2core");
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &host(20 * GIB), 2).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(128 << 20));
        let server = topo("server-2s");
        let llc = server.cache_total(server.last_level().unwrap());
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &server, &host(64 * GIB), 64).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(4 * llc));
    }

    #[test]
    fn dram_shrinks_to_memory_and_says_so() {
        let t = topo("server-2s");
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &host(GIB), 4).unwrap();
        let ArraySize::Split(bytes) = sets[0].size else {
            panic!()
        };
        assert!(3 * bytes <= GIB - memory_margin(GIB));
        assert!(
            sets[0]
                .note
                .as_ref()
                .unwrap()
                .contains("below STREAM's rule")
        );
    }

    #[test]
    fn explicit_sets_larger_than_memory_are_refused_with_sizes() {
        let t = topo("vm-2core");
        let spec = |text: &str| SetSpec::parse(text).unwrap();
        let err = size_sets(&[spec("8GiB")], &t, &host(16 * GIB), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("24 GiB") && err.contains("available"), "{err}");
        let err = size_sets(&[spec("1GiB/thread")], &t, &host(4 * GIB), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("6 GiB"), "{err}");
        assert!(size_sets(&[spec("1GiB/thread")], &t, &host(16 * GIB), 2).is_ok());
    }

    #[test]
    fn a_cgroup_limit_below_memavailable_sets_the_budget() {
        let room = |limit: u64, usage: u64| {
            Some(MemoryRoom {
                limit,
                usage,
                reclaimable: 0,
            })
        };
        // 400 MiB limit, 10 MiB in use: 390 MiB room less its eighth.
        let b = MemoryBudget::new(20 * GIB, room(400 << 20, 10 << 20));
        assert_eq!(b.bytes, (390 << 20) - (390 << 20) / 8);
        assert_eq!(
            b.source(),
            "the container's memory limit 400 MiB, 10 MiB in use, less a 48.8 MiB margin"
        );
        // A limit above what the host has left changes nothing.
        let b = MemoryBudget::new(GIB, room(64 * GIB, 0));
        assert_eq!((b.bytes, b.cgroup), (GIB - memory_margin(GIB), None));
        assert!(b.source().starts_with("MemAvailable 1 GiB"));
    }

    #[test]
    fn max_memory_shrinks_dram_with_a_note_and_only_when_it_is_less() {
        let t = topo("vm-2core");
        let host = MemoryBudget::new(20 * GIB, None);
        let rule = size_sets(&[SetSpec::Level(Level::Dram)], &t, &host, 2).unwrap();
        assert_eq!(rule[0].note, None, "20 GiB allow STREAM's rule here");
        // 300 MiB for three arrays: 100 MiB each, in whole 2 MiB steps.
        let capped = host.capped(Some(300 << 20));
        assert_eq!((capped.bytes, capped.cap), (300 << 20, Some(300 << 20)));
        assert_eq!(capped.source(), "--max-memory 300 MiB");
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &capped, 2).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(100 << 20));
        let note = sets[0].note.as_deref().unwrap();
        assert!(note.starts_with("below STREAM's rule"), "{note}");
        assert!(
            note.ends_with("--max-memory 300 MiB allows 100 MiB"),
            "{note}"
        );
        // An explicit set over the cap is refused, naming it.
        let err = size_sets(&[SetSpec::parse("1GiB").unwrap()], &t, &capped, 2).unwrap_err();
        assert!(err.to_string().contains("(--max-memory 300 MiB)"), "{err}");
        // A cap above the budget changes nothing.
        assert_eq!(host.capped(Some(64 * GIB)), host);
        assert_eq!(host.capped(None), host);
    }

    #[test]
    fn dram_shrinks_to_the_container_and_explicit_sets_are_refused_naming_it() {
        let t = topo("vm-2core");
        let budget = MemoryBudget::new(
            20 * GIB,
            Some(MemoryRoom {
                limit: 400 << 20,
                usage: 10 << 20,
                reclaimable: 0,
            }),
        );
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &budget, 2).unwrap();
        assert_eq!(sets[0].size, ArraySize::Split(112 << 20));
        let note = sets[0].note.as_deref().unwrap();
        assert!(
            note.ends_with(
                "the container's memory limit 400 MiB, with 10 MiB of it already in use, \
                 allows 112 MiB"
            ),
            "{note}"
        );
        // A second instance sizing while the first holds most of a 400 MB limit: the note
        // names the limit and what is taken, not only the little left.
        let crowded = MemoryBudget::new(
            20 * GIB,
            Some(MemoryRoom {
                limit: 400_000_000,
                usage: 335 << 20,
                reclaimable: 0,
            }),
        );
        let sets = size_sets(&[SetSpec::Level(Level::Dram)], &t, &crowded, 2).unwrap();
        assert_eq!(
            sets[0].note.as_deref().unwrap(),
            "below STREAM's rule: arrays should be 128 MiB (4 × 32 MiB of last-level cache), \
             the container's memory limit 381.5 MiB, with 335 MiB of it already in use, allows \
             4 MiB: its three arrays fit in the last-level cache, so it measures that cache"
        );
        let err = size_sets(&[SetSpec::parse("1GiB").unwrap()], &t, &budget, 2)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--sets 1 GiB") && err.contains("memory limit 400 MiB"),
            "{err}"
        );
    }

    #[test]
    fn a_range_gives_a_set_per_size_and_is_refused_by_its_largest() {
        let t = topo("vm-2core");
        let specs = [
            SetSpec::Level(Level::L1),
            SetSpec::parse("16KiB..256KiB").unwrap(),
        ];
        let sets = size_sets(&specs, &t, &host(20 * GIB), 2).unwrap();
        let names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "l1", "16 KiB", "22.6 KiB", "32 KiB", "45.2 KiB", "64 KiB", "90.5 KiB", "128 KiB",
                "181 KiB", "256 KiB"
            ]
        );
        assert_eq!(sets[2].size, ArraySize::Split(23168));
        assert!(sets[1..].iter().all(|s| s.level.is_none()));
        let per = size_sets(
            &[SetSpec::parse("4KiB/thread..16KiB/thread").unwrap()],
            &t,
            &host(20 * GIB),
            2,
        )
        .unwrap();
        assert_eq!(per[1].name, "5.62 KiB/thread");
        assert_eq!(per[1].size, ArraySize::PerThread(5760));
        let err = size_sets(
            &[SetSpec::parse("16KiB..64GiB").unwrap()],
            &t,
            &host(16 * GIB),
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("--sets 16KiB..64GiB: its largest size, 64 GiB, needs 192 GiB"),
            "{err}"
        );
    }

    #[test]
    fn duplicate_sets_collapse() {
        let t = topo("vm-2core");
        let sets = size_sets(
            &[SetSpec::Level(Level::L2), SetSpec::Level(Level::L2)],
            &t,
            &host(20 * GIB),
            2,
        )
        .unwrap();
        assert_eq!(sets.len(), 1);
    }
}
