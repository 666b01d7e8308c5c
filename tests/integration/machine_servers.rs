//! The two big-server fixtures: a 2-socket AMD EPYC 7763 in NPS2 (256 CPUs, 4 NUMA nodes, an
//! L3 per 8-core CCX) and an Intel Xeon Platinum 8380 with sub-NUMA clustering (80 CPUs, 2
//! nodes sharing one listed L3). What the machine readers make of them, how the working sets
//! are sized, the pinning orders, the default thread counts and the vendor figure.

use crate::support::machine_fixtures::*;
use stream_top::app::cli::default_threads;
use stream_top::engine::plan::{ArraySize, Level, MemoryBudget, SetSpec, WorkingSet, size_sets};
use stream_top::machine::topology::{PinPolicy, Topology};
use stream_top::machine::vendor::VendorFigure;

const GIB: u64 = 1 << 30;

fn read(name: &str) -> Topology {
    Topology::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// l1, l2, l3 and dram sized with plenty of memory, at `threads` threads.
fn sized(t: &Topology, threads: usize) -> Vec<WorkingSet> {
    let specs = [Level::L1, Level::L2, Level::L3, Level::Dram].map(SetSpec::Level);
    size_sets(&specs, t, &MemoryBudget::new(900 * GIB, None), threads).unwrap()
}

/// The default thread counts on `usable` CPUs, with the CPU quota `quota`.
fn defaults(t: &Topology, usable: &[usize], quota: Option<usize>) -> Vec<usize> {
    let all = quota.map_or(usable.len(), |q| q.min(usable.len()));
    default_threads(all, &t.domain_counts(usable))
}

/// The CPUs that share `cpu`'s L3.
fn l3_of(t: &Topology, cpu: usize) -> Vec<usize> {
    let l3 = t
        .caches
        .iter()
        .find(|c| c.level == 3 && c.cpus.contains(&cpu));
    l3.unwrap().cpus.clone()
}

#[test]
fn epyc_counts_nodes_and_one_l3_per_ccx() {
    let t = read("epyc-2s");
    assert_eq!(t.model, "AMD EPYC 7763 64-Core Processor");
    assert_eq!(
        t.summary(),
        "128 cores, 256 threads, 2 packages, 4 NUMA nodes"
    );
    assert_eq!(
        t.cache_summary(),
        "L1d 32 KiB ×128, L2 512 KiB ×128, L3 32 MiB ×16"
    );
    assert!(t.nodes.iter().all(|n| n.cpus.len() == 64));
    assert_eq!(t.cpu(200).unwrap().node, 2);
    assert_eq!(t.cpu(200).unwrap().package, 1);
    assert_eq!(t.cpu(200).unwrap().smt_siblings, vec![72, 200]);
    // CCX 9 (socket 1, cores 8-15): 16 CPUs share its L3.
    assert_eq!(
        l3_of(&t, 200),
        (72..80).chain(200..208).collect::<Vec<usize>>()
    );
    assert_eq!(t.cache_share_per_cpu(3), Some(2 << 20));
    assert_eq!(t.cache_total(3), 512 << 20);
}

#[test]
fn epyc_sizes_each_level_from_a_threads_share() {
    let sets = sized(&read("epyc-2s"), 256);
    let sizes: Vec<ArraySize> = sets.iter().map(|s| s.size).collect();
    assert_eq!(
        sizes,
        vec![
            // Half of 16 KiB (L1d per SMT thread) over three arrays, in 128-byte lines.
            ArraySize::PerThread(2688),
            // Half of 256 KiB of L2 per thread.
            ArraySize::PerThread(43648),
            // Half of the 2 MiB of L3 each of a CCX's 16 CPUs has.
            ArraySize::PerThread(349440),
            // 4 × 16 × 32 MiB of L3, split.
            ArraySize::Split(2 * GIB),
        ]
    );
    let labels: Vec<String> = sets.iter().map(|s| s.label()).collect();
    assert_eq!(
        labels,
        [
            "2.6 KiB/thread (l1)",
            "42.6 KiB/thread (l2)",
            "341.2 KiB/thread (l3)",
            "2 GiB (dram)"
        ]
    );
    assert!(sets.iter().all(|s| s.note.is_none()));
}

#[test]
fn epyc_spread_round_robins_nodes_and_ccxs_and_compact_fills_a_node() {
    let t = read("epyc-2s");
    let spread = t.cpu_order(PinPolicy::Spread);
    // Node 0, 1, 2, 3 in turn; within a node one core of each of its four CCXs in turn.
    assert_eq!(
        &spread[..16],
        &[
            0, 32, 64, 96, 8, 40, 72, 104, 16, 48, 80, 112, 24, 56, 88, 120
        ]
    );
    assert_eq!(&spread[16..20], &[1, 33, 65, 97]);
    // Every core once before any SMT sibling.
    assert!(spread[..128].iter().all(|&c| c < 128));
    assert_eq!(&spread[128..132], &[128, 160, 192, 224]);
    let compact = t.cpu_order(PinPolicy::Compact);
    assert_eq!(&compact[..4], &[0, 128, 1, 129]);
    assert!(compact[..64].iter().all(|&c| t.cpu(c).unwrap().node == 0));
    assert_eq!(&compact[64..66], &[32, 160]);
    assert_eq!(t.first_efficiency_thread(&spread), None);
}

#[test]
fn epyc_default_thread_counts_double_and_add_nodes_and_sockets() {
    let t = read("epyc-2s");
    let all = t.cpu_order(PinPolicy::Spread);
    assert_eq!(t.domain_counts(&all), vec![64, 128]);
    assert_eq!(
        defaults(&t, &all, None),
        vec![1, 2, 4, 8, 16, 32, 64, 128, 256]
    );
    // A CPU quota of 100 CPUs caps them.
    assert_eq!(
        defaults(&t, &all, Some(100)),
        vec![1, 2, 4, 8, 16, 32, 64, 100]
    );
    // Three nodes usable (taskset 0-95,128-223): nodes of 64, sockets of 128 and 64.
    let three: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&c| t.cpu(c).unwrap().node < 3)
        .collect();
    assert_eq!(t.domain_counts(&three), vec![64, 128]);
    assert_eq!(
        defaults(&t, &three, None),
        vec![1, 2, 4, 8, 16, 32, 64, 128, 192]
    );
}

#[test]
fn xeon_snc_lists_one_l3_for_two_nodes() {
    let t = read("xeon-snc2");
    assert_eq!(t.model, "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz");
    assert_eq!(t.summary(), "40 cores, 80 threads, 1 package, 2 NUMA nodes");
    assert_eq!(
        t.cache_summary(),
        "L1d 48 KiB ×40, L2 1.2 MiB ×40, L3 60 MiB ×1"
    );
    assert_eq!(
        t.nodes[1].cpus,
        (20..40).chain(60..80).collect::<Vec<usize>>(),
        "the second cluster"
    );
    // Sub-NUMA clustering splits the memory, not the L3 the kernel lists: one instance over
    // both nodes, so a CPU's share is the same as without it.
    assert_eq!(l3_of(&t, 0).len(), 80);
    assert_eq!(t.cache_share_per_cpu(3), Some(768 << 10));
}

#[test]
fn xeon_snc_sizes_l3_below_its_large_l2_and_says_so() {
    let sets = sized(&read("xeon-snc2"), 80);
    let sizes: Vec<ArraySize> = sets.iter().map(|s| s.size).collect();
    assert_eq!(
        sizes,
        vec![
            ArraySize::PerThread(4096),
            ArraySize::PerThread(109184),
            ArraySize::PerThread(128 << 10),
            ArraySize::Split(240 << 20),
        ]
    );
    // 768 KiB of L3 per CPU is less than the 640 KiB of L2 each SMT thread has plus its
    // half: three 128 KiB slices fit in L2, which the row's note says.
    assert_eq!(
        sets[2].note.as_deref(),
        Some("three slices of 128 KiB fit the level below (640 KiB per CPU)")
    );
    assert!(sets[0].note.is_none() && sets[1].note.is_none() && sets[3].note.is_none());
}

#[test]
fn xeon_snc_orders_and_default_thread_counts() {
    let t = read("xeon-snc2");
    let spread = t.cpu_order(PinPolicy::Spread);
    assert_eq!(&spread[..6], &[0, 20, 1, 21, 2, 22]);
    assert!(spread[..40].iter().all(|&c| c < 40));
    assert_eq!(&spread[40..42], &[40, 60]);
    let compact = t.cpu_order(PinPolicy::Compact);
    assert_eq!(&compact[..4], &[0, 40, 1, 41]);
    assert_eq!(&compact[40..42], &[20, 60]);
    // One socket: only the node count (40) joins the doublings.
    assert_eq!(t.domain_counts(&spread), vec![40]);
    assert_eq!(
        defaults(&t, &spread, None),
        vec![1, 2, 4, 8, 16, 32, 40, 64, 80]
    );
    assert_eq!(
        defaults(&t, &spread, Some(36)),
        vec![1, 2, 4, 8, 16, 32, 36]
    );
}

#[test]
fn the_other_fixtures_keep_their_defaults() {
    // Their nodes and sockets hold a power of two CPUs, or there is one of each.
    for (name, want) in [
        ("vm-2core", vec![1, 2]),
        ("laptop-hybrid", vec![1, 2, 4, 8, 16, 20]),
        ("server-2s", vec![1, 2, 4, 8, 16, 32, 64]),
    ] {
        let t = read(name);
        let order = t.cpu_order(PinPolicy::Spread);
        assert_eq!(defaults(&t, &order, None), want, "{name}");
    }
}

#[test]
fn hybrid_spread_reaches_e_cores_at_the_seventh_thread() {
    let t = read("laptop-hybrid");
    assert_eq!(
        t.first_efficiency_thread(&t.cpu_order(PinPolicy::Spread)),
        Some(7)
    );
    assert_eq!(
        t.first_efficiency_thread(&t.cpu_order(PinPolicy::Compact)),
        Some(13)
    );
}

#[test]
fn vendor_figures_sum_their_channels() {
    let f = VendorFigure::find(&fixture("epyc-2s"), None);
    assert_eq!(f.gbs, Some(409.6));
    assert_eq!(
        f.source,
        "SMBIOS: 16 × DDR4-3200 × 64 bit, assumes one DIMM per channel"
    );
    let f = VendorFigure::find(&fixture("xeon-snc2"), None);
    assert_eq!(f.gbs, Some(204.8));
}
