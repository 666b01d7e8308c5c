//! Topology read from the fixture trees of three machines: this 2-CPU VM, a 2-socket Xeon
//! with SMT and two NUMA nodes, and an Intel hybrid laptop.

use crate::support::machine_fixtures::*;
use std::fs;
use std::path::Path;
use stream_top::machine::topology::{CacheKind, CoreKind, PinPolicy, Topology};

fn read(name: &str) -> Topology {
    Topology::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every online CPU exactly once, for every policy.
fn assert_permutation(t: &Topology) {
    let mut ids: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    for policy in [PinPolicy::Spread, PinPolicy::Compact, PinPolicy::None] {
        let mut order = t.cpu_order(policy);
        assert_eq!(order.len(), ids.len(), "{policy:?}");
        order.sort_unstable();
        assert_eq!(order, ids, "{policy:?}");
    }
}

#[test]
fn vm_2core_matches_this_machine() {
    let t = read("vm-2core");
    assert_eq!(t.model, "AMD EPYC");
    assert_eq!(t.cpus.len(), 2);
    assert_eq!(t.physical_cores(), 2);
    assert_eq!(t.packages(), 1);
    assert_eq!(t.nodes.len(), 1);
    assert_eq!(t.nodes[0].cpus, vec![0, 1]);
    assert!(t.cpus.iter().all(|c| c.kind == CoreKind::Uniform));
    assert_eq!(t.cpus[1].smt_siblings, vec![1]);
    // L1d, L1i, L2 per core and one L3.
    assert_eq!(t.caches.len(), 7);
    assert_eq!(t.last_level(), Some(3));
    assert_eq!(t.cache_share_per_cpu(1), Some(32 << 10));
    assert_eq!(t.cache_share_per_cpu(2), Some(512 << 10));
    assert_eq!(t.cache_share_per_cpu(3), Some(16 << 20));
    assert_eq!(t.cache_instance_size(3), Some(32 << 20));
    assert_eq!(t.cache_total(3), 32 << 20);
    assert_eq!(t.cache_total(2), 1 << 20);
    assert_eq!(t.cache_share_per_cpu(4), None);
    assert_eq!(t.summary(), "2 cores, 2 threads, 1 package, 1 NUMA node");
    assert_eq!(
        t.cache_summary(),
        "L1d 32 KiB ×2, L2 512 KiB ×2, L3 32 MiB ×1"
    );
    assert_eq!(t.cpu_order(PinPolicy::Spread), vec![0, 1]);
    assert_eq!(t.cpu_order(PinPolicy::Compact), vec![0, 1]);
    assert_permutation(&t);
}

#[test]
fn server_2s_counts_and_caches() {
    let t = read("server-2s");
    assert!(t.model.starts_with("Intel(R) Xeon(R)"), "{}", t.model);
    assert_eq!(t.cpus.len(), 64);
    // Core ids repeat in both packages (and have gaps): 32 distinct (package, core) pairs.
    assert_eq!(t.physical_cores(), 32);
    assert_eq!(t.packages(), 2);
    assert_eq!(t.nodes.len(), 2);
    assert_eq!(t.cpu(17).unwrap().node, 1);
    assert_eq!(t.cpu(40).unwrap().node, 0);
    assert_eq!(t.cpu(40).unwrap().smt_siblings, vec![8, 40]);
    assert_eq!(t.cpu(63).unwrap().package, 1);
    let l3: Vec<_> = t.caches.iter().filter(|c| c.level == 3).collect();
    assert_eq!(l3.len(), 2);
    assert_eq!(l3[1].cpus.len(), 32);
    assert_eq!(
        t.caches
            .iter()
            .filter(|c| c.level == 1 && c.kind == CacheKind::Data)
            .count(),
        32
    );
    assert_eq!(t.cache_share_per_cpu(1), Some(24 << 10));
    assert_eq!(t.cache_share_per_cpu(2), Some(1 << 20));
    assert_eq!(t.cache_share_per_cpu(3), Some((60 << 20) / 32));
    assert_eq!(t.cache_total(3), 120 << 20);
    assert_eq!(
        t.summary(),
        "32 cores, 64 threads, 2 packages, 2 NUMA nodes"
    );
    assert_eq!(
        t.cache_summary(),
        "L1d 48 KiB ×32, L2 2 MiB ×32, L3 60 MiB ×2"
    );
    assert_permutation(&t);
}

#[test]
fn server_2s_spread_alternates_nodes_and_puts_siblings_last() {
    let t = read("server-2s");
    let order = t.cpu_order(PinPolicy::Spread);
    assert_eq!(&order[..6], &[0, 16, 1, 17, 2, 18]);
    // Consecutive CPUs are on different nodes all the way through.
    for pair in order.windows(2) {
        assert_ne!(t.cpu(pair[0]).unwrap().node, t.cpu(pair[1]).unwrap().node);
    }
    // The first 32 use every physical core once; the second SMT threads come after.
    assert!(order[..32].iter().all(|&c| c < 32));
    assert!(order[32..].iter().all(|&c| c >= 32));
    assert_eq!(&order[32..34], &[32, 48]);
    assert_eq!(t.cpu_order(PinPolicy::None), order);
}

#[test]
fn server_2s_compact_fills_cores_then_nodes() {
    let t = read("server-2s");
    let order = t.cpu_order(PinPolicy::Compact);
    assert_eq!(&order[..4], &[0, 32, 1, 33]);
    // The whole of node 0 (32 CPUs) before node 1.
    assert!(order[..32].iter().all(|&c| t.cpu(c).unwrap().node == 0));
    assert_eq!(&order[32..34], &[16, 48]);
}

#[test]
fn laptop_hybrid_core_kinds_and_shared_l2() {
    let t = read("laptop-hybrid");
    assert_eq!(t.model, "12th Gen Intel(R) Core(TM) i7-12700H");
    assert_eq!(t.cpus.len(), 20);
    assert_eq!(t.physical_cores(), 14);
    assert_eq!(t.packages(), 1);
    // No node directory: one node 0 with every CPU.
    assert_eq!(t.nodes.len(), 1);
    assert_eq!(t.nodes[0].cpus.len(), 20);
    assert_eq!(t.cpu(11).unwrap().kind, CoreKind::Performance);
    assert_eq!(t.cpu(12).unwrap().kind, CoreKind::Efficiency);
    assert_eq!(t.cpu(3).unwrap().smt_siblings, vec![2, 3]);
    // L2: six P-core instances and two E-core clusters of four.
    let l2: Vec<_> = t.caches.iter().filter(|c| c.level == 2).collect();
    assert_eq!(l2.len(), 8);
    assert!(l2.iter().any(|c| c.cpus == vec![12, 13, 14, 15]));
    // The tighter share wins: 2 MiB over 4 E-cores beats 1.25 MiB over 2 P-threads.
    assert_eq!(t.cache_share_per_cpu(2), Some(512 << 10));
    assert_eq!(t.cache_share_per_cpu(1), Some(24 << 10));
    assert_eq!(t.cache_instance_size(2), Some(1280 << 10));
    assert_eq!(t.cache_total(2), 6 * (1280 << 10) + 2 * (2 << 20));
    assert_eq!(
        t.summary(),
        "14 cores (6 P + 8 E), 20 threads, 1 package, 1 NUMA node"
    );
    assert_eq!(
        t.cache_summary(),
        "L1d 48 KiB ×6, L1d 32 KiB ×8, L2 2 MiB ×2, L2 1.2 MiB ×6, L3 24 MiB ×1"
    );
    assert_permutation(&t);
}

#[test]
fn laptop_hybrid_spread_p_cores_then_e_cores_then_siblings() {
    let t = read("laptop-hybrid");
    let mut want = vec![0, 2, 4, 6, 8, 10];
    want.extend(12..20);
    want.extend([1, 3, 5, 7, 9, 11]);
    assert_eq!(t.cpu_order(PinPolicy::Spread), want);
    assert_eq!(t.cpu_order(PinPolicy::Compact), (0..20).collect::<Vec<_>>());
}

#[test]
fn missing_files_degrade() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("server-2s"), dir.path());
    let cpu = dir.path().join("sys/devices/system/cpu");
    for c in 0..64 {
        fs::remove_dir_all(cpu.join(format!("cpu{c}/cache"))).unwrap();
        let topo = cpu.join(format!("cpu{c}/topology"));
        fs::remove_file(topo.join("thread_siblings_list")).unwrap();
        fs::remove_file(topo.join("core_cpus_list")).unwrap();
    }
    fs::remove_dir_all(dir.path().join("sys/devices/system/node")).unwrap();
    fs::remove_file(dir.path().join("proc/cpuinfo")).unwrap();
    let t = Topology::read(dir.path()).unwrap();
    assert!(t.caches.is_empty());
    assert_eq!(t.last_level(), None);
    assert_eq!(t.cache_total(3), 0);
    assert_eq!(t.cache_summary(), "no caches listed");
    assert_eq!(t.nodes.len(), 1);
    assert_eq!(t.model, "unknown CPU");
    // Siblings come from equal (package, core id) pairs instead.
    assert_eq!(t.cpu(40).unwrap().smt_siblings, vec![8, 40]);
    assert_eq!(t.physical_cores(), 32);
    assert_permutation(&t);
}

#[test]
fn offline_cpus_are_left_out_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("server-2s"), dir.path());
    // CPUs 32-63 (the second SMT threads) offline.
    fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-31\n").unwrap();
    let t = Topology::read(dir.path()).unwrap();
    assert_eq!(t.cpus.len(), 32);
    assert_eq!(t.cpu(5).unwrap().smt_siblings, vec![5]);
    assert_eq!(t.nodes[1].cpus, (16..32).collect::<Vec<_>>());
    assert!(t.caches.iter().all(|c| c.cpus.iter().all(|&x| x < 32)));
    assert_eq!(t.cache_share_per_cpu(2), Some(2 << 20));
    assert_permutation(&t);
}

#[test]
fn errors_name_the_file() {
    let missing = Path::new("/nonexistent/stream-top-root");
    let err = Topology::read(missing).unwrap_err().to_string();
    assert!(
        err.contains("/nonexistent/stream-top-root/sys/devices/system/cpu/online"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("vm-2core"), dir.path());
    fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-x\n").unwrap();
    let err = Topology::read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("online") && err.contains("0-x"), "{err}");

    fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
    let size = dir
        .path()
        .join("sys/devices/system/cpu/cpu1/cache/index2/size");
    fs::write(&size, "lots\n").unwrap();
    let err = Topology::read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("cpu1/cache/index2/size"), "{err}");
}

#[test]
fn reads_this_machine() {
    // Whatever this host is, it reads, and the orders are permutations of its CPUs.
    let t = Topology::read(Path::new("/")).unwrap();
    assert!(!t.cpus.is_empty());
    assert!(t.physical_cores() >= 1 && t.physical_cores() <= t.cpus.len());
    assert_permutation(&t);
}
