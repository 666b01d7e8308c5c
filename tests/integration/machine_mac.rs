//! Macs from listings of real `sysctl` values (tests/fixtures/mac-*, sources in the fixtures'
//! README): core types, caches, the `dram` rule where the system-level cache is not listed,
//! and the swap text.

use crate::support::machine_fixtures::*;
use stream_top::engine::plan::{ArraySize, Level, MemoryBudget, SetSpec, size_sets};
use stream_top::machine::sysctl::{Sysctl, parse_swapusage};
use stream_top::machine::topology::{CacheKind, CoreKind, PinPolicy, Topology};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The memory budget of a host with this much available and no cgroup limit.
fn budget(mem_available: u64) -> MemoryBudget {
    MemoryBudget::new(mem_available, None)
}

fn read(name: &str) -> Topology {
    Topology::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (level, size, CPUs) of every data or unified cache, in order.
fn caches(t: &Topology, level: u8) -> Vec<(u64, Vec<usize>)> {
    t.caches
        .iter()
        .filter(|c| c.level == level && c.kind != CacheKind::Instruction)
        .map(|c| (c.size, c.cpus.clone()))
        .collect()
}

fn kinds(t: &Topology) -> (usize, usize) {
    let n = |k| t.cpus.iter().filter(|c| c.kind == k).count();
    (n(CoreKind::Performance), n(CoreKind::Efficiency))
}

#[test]
fn m4_pro_is_ten_p_cores_in_two_clusters_and_four_e_cores() {
    let t = read("mac-m4-pro");
    assert_eq!(t.model, "Apple M4 Pro");
    assert_eq!(kinds(&t), (10, 4));
    assert_eq!(t.physical_cores(), 14);
    assert_eq!(t.nodes.len(), 1);
    assert!(t.llc_hidden);
    assert_eq!(t.last_level(), Some(2));
    assert_eq!(
        caches(&t, 2),
        vec![
            (16 * MIB, (0..5).collect()),
            (16 * MIB, (5..10).collect()),
            (4 * MIB, (10..14).collect()),
        ]
    );
    // The M4 Pro reference run's figure: 37748736 bytes, the sum of every L2 on the part.
    assert_eq!(t.cache_total(2), 37_748_736);
    assert_eq!(caches(&t, 1)[0], (128 << 10, vec![0]));
    assert_eq!(caches(&t, 1)[13], (64 << 10, vec![13]));
    assert_eq!(
        t.summary(),
        "14 cores (10 P + 4 E), 14 threads, 1 package, 1 NUMA node"
    );
    // Spread: P-cores first, alternating the two P clusters; E-cores last.
    assert_eq!(
        t.cpu_order(PinPolicy::Spread),
        vec![0, 5, 1, 6, 2, 7, 3, 8, 4, 9, 10, 11, 12, 13]
    );
}

#[test]
fn m1_lists_no_level_names_and_is_typed_by_rank() {
    let t = read("mac-m1");
    assert_eq!(t.model, "Apple M1");
    assert_eq!(kinds(&t), (4, 4));
    assert_eq!(
        caches(&t, 2),
        vec![(12 * MIB, (0..4).collect()), (4 * MIB, (4..8).collect())]
    );
    assert_eq!(t.cache_share_per_cpu(1), Some(64 << 10));
}

#[test]
fn m3_max_is_twelve_p_cores_in_two_clusters_of_six() {
    let t = read("mac-m3-max");
    assert_eq!(t.model, "Apple M3 Max");
    assert_eq!(kinds(&t), (12, 4));
    assert_eq!(
        caches(&t, 2),
        vec![
            (16 * MIB, (0..6).collect()),
            (16 * MIB, (6..12).collect()),
            (4 * MIB, (12..16).collect()),
        ]
    );
}

#[test]
fn m2_pro_partial_listing_keeps_what_it_says_and_invents_nothing() {
    // Core counts per level, and only the machine-wide cache names, which describe the
    // least performant level: the P-cores' caches are not listed, so none are made up.
    let t = read("mac-m2-pro");
    assert_eq!(t.model, "Apple M2 Pro");
    assert_eq!(kinds(&t), (8, 4));
    assert_eq!(caches(&t, 2), vec![(4 * MIB, (8..12).collect())]);
    assert_eq!(caches(&t, 1).len(), 4);
    assert!(t.cpus.iter().all(|c| c.smt_siblings == vec![c.id]));
}

#[test]
fn dram_on_apple_silicon_is_at_least_the_reference_runs_512_mib_per_array() {
    let spec = [SetSpec::Level(Level::Dram)];
    // M4 Pro: 4 × 36 MiB of L2 is 144 MiB, below the floor.
    let sets = size_sets(&spec, &read("mac-m4-pro"), &budget(48 * GIB), 14).unwrap();
    assert_eq!(sets[0].size, ArraySize::Split(512 * MIB));
    assert!(sets[0].note.is_none());
    // Where memory does not allow it, the note names the rule.
    let sets = size_sets(&spec, &read("mac-m1"), &budget(GIB), 8).unwrap();
    let note = sets[0].note.as_deref().unwrap();
    assert!(note.contains("512 MiB"), "{note}");
    assert!(note.contains("system-level cache is not listed"), "{note}");
}

#[test]
fn the_reference_runs_cache_case_fits_the_p_cluster_l2() {
    // `1MiB/thread` is the reference run's cache case; l2 gives a slice that fills half a P-core's share.
    let t = read("mac-m4-pro");
    let sets = size_sets(&[SetSpec::Level(Level::L2)], &t, &budget(48 * GIB), 14).unwrap();
    // The tighter share: 4 MiB / 4 E-cores = 1 MiB per CPU, three slices in half of it.
    assert_eq!(sets[0].size, ArraySize::PerThread(174720));
}

#[test]
fn swap_texts_of_real_macs_parse() {
    // The M4 Pro reference run.
    assert_eq!(
        parse_swapusage("total = 13312.00M  used = 12138.06M  free = 1173.94M  (encrypted)"),
        Some((13312 * MIB, (12138.06 * MIB as f64).round() as u64))
    );
    let s = Sysctl::under(&fixture("mac-m2-pro")).unwrap();
    assert_eq!(
        parse_swapusage(s.get("vm.swapusage").unwrap()),
        Some((23552 * MIB, (23181.62 * MIB as f64).round() as u64))
    );
}

mod host {
    use super::*;
    use std::fs;
    use std::time::{Duration, Instant};
    use stream_top::machine::host::{HostSampler, HostState, MemPressure, VM_STAT_FILE};

    /// A made-up `vm_stat` (the arithmetic is the test, not the machine).
    fn vm_stat(swapins: u64) -> String {
        format!(
            "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n\
             Pages free:                               27875.\n\
             Pages active:                            600000.\n\
             Pages inactive:                          100000.\n\
             Pages speculative:                         1000.\n\
             Pages throttled:                              0.\n\
             Pages wired down:                        200000.\n\
             Pages purgeable:                           3000.\n\
             \"Translation faults\":                 123456789.\n\
             Pages occupied by compressor:            745088.\n\
             Swapins:                                {swapins}.\n\
             Swapouts:                                 50000.\n"
        )
    }

    /// The M4 Pro listing plus the reference run's load and swap at its start, a pressure level and
    /// made-up VM counters.
    fn m4_pro_root() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut listing = fs::read_to_string(fixture("mac-m4-pro/sysctl.txt")).unwrap();
        listing.push_str(
            "vm.loadavg: { 11.55 8.77 8.24 }\n\
             vm.swapusage: total = 13312.00M  used = 12138.06M  free = 1173.94M  (encrypted)\n\
             kern.memorystatus_vm_pressure_level: 1\n",
        );
        fs::write(dir.path().join("sysctl.txt"), listing).unwrap();
        fs::write(dir.path().join(VM_STAT_FILE), vm_stat(1000)).unwrap();
        dir
    }

    #[test]
    fn state_of_a_mac_says_which_counters_make_available_memory() {
        let dir = m4_pro_root();
        let h = HostState::read(dir.path()).unwrap();
        assert_eq!(h.load, [11.55, 8.77, 8.24]);
        assert_eq!(h.mem_total, 64 * GIB);
        // free 27875 + speculative 1000 + inactive 100000 + purgeable 3000 pages of 16 KiB.
        assert_eq!(h.mem_available, 131875 * 16384);
        assert_eq!(h.swap_total, 13312 * MIB);
        assert_eq!(h.anon_huge, None);
        assert_eq!(h.compressor, Some(745088 * 16384));
        assert_eq!(h.mem_pressure, Some(MemPressure::Normal));
        assert_eq!(
            h.line(),
            "load average 11.55 8.77 8.24; swap 11.9 GiB of 13 GiB used; available 2 GiB of \
             64 GiB, compressor 11.4 GiB, memory pressure normal"
        );
    }

    #[test]
    fn a_mac_listing_without_vm_counters_is_an_error_naming_them() {
        let e = HostState::read(&fixture("mac-m4-pro"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("load average") || e.contains("VM counters"),
            "{e}"
        );
    }

    #[test]
    fn the_sampler_has_swap_rates_and_no_psi_or_steal_on_a_mac() {
        let dir = m4_pro_root();
        let mut sampler = HostSampler::new(dir.path(), 1);
        let t0 = Instant::now();
        let first = sampler.sample_at(t0);
        assert!(first.problems.is_empty(), "{:?}", first.problems);
        assert_eq!(first.mem_pressure, Some(MemPressure::Normal));
        fs::write(dir.path().join(VM_STAT_FILE), vm_stat(1400)).unwrap();
        let s = sampler.sample_at(t0 + Duration::from_secs(2));
        assert_eq!(s.swap_in_per_s, Some(200.0));
        assert_eq!(s.swap_out_per_s, Some(0.0));
        assert_eq!(s.cpu_some_avg10, None);
        assert_eq!(s.mem_some_avg10, None);
        assert_eq!(s.steal_pct, None);
        assert_eq!(s.load, [11.55, 8.77, 8.24]);
    }
}
