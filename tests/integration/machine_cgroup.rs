//! The cgroup readers on fixture trees: v1 (a container on a hybrid host), v2 (a systemd
//! service), nested limits (a pod tighter than its container), `max`, and no cgroup at all.

use crate::support::machine_fixtures::*;
use std::fs;
use stream_top::machine::cgroup::{Cgroup, Limits, Throttling};

const MIB: u64 = 1 << 20;

#[test]
fn v1_container_sees_the_hierarchical_limit_and_its_quota() {
    let cg = Cgroup::find(&fixture("cgroup-v1"));
    let m = cg.memory().expect("a memory limit");
    assert_eq!(
        (m.limit, m.usage, m.room()),
        (400 * MIB, 10 * MIB, 390 * MIB)
    );
    let q = cg.cpu_quota().expect("a CPU quota");
    assert_eq!((q.quota_us, q.period_us), (150_000, 100_000));
    assert_eq!(q.cpus(), 1.5);
    assert_eq!(q.whole_cpus(), 1);
    assert_eq!(
        cg.throttling(&q),
        Some(Throttling {
            periods: 500,
            throttled_periods: 12,
            throttled_ns: 340_000_000
        })
    );
    assert_eq!(
        cg.limits().line().unwrap(),
        "in a container: memory limit 400 MiB, CPU quota 1.5 CPUs"
    );
}

#[test]
fn v2_service_with_a_memory_max_and_no_quota() {
    let cg = Cgroup::find(&fixture("cgroup-v2"));
    let m = cg.memory().unwrap();
    assert_eq!((m.limit, m.room()), (1 << 30, 1024 * MIB - 50 * MIB));
    // `max 100000` everywhere: no quota, so nothing to throttle.
    assert_eq!(cg.cpu_quota(), None);
    assert_eq!(
        cg.limits(),
        Limits {
            memory_limit: Some(1 << 30),
            cpu_quota: None
        }
    );
    assert_eq!(
        cg.limits().line().unwrap(),
        "in a container: memory limit 1 GiB, no CPU quota"
    );
}

#[test]
fn the_tightest_ancestor_sets_the_room_and_the_quota() {
    let cg = Cgroup::find(&fixture("cgroup-nested"));
    // The pod leaves 112 MiB although the container alone would leave 924 MiB.
    let m = cg.memory().unwrap();
    assert_eq!(
        (m.limit, m.usage, m.room()),
        (512 * MIB, 400 * MIB, 112 * MIB)
    );
    let q = cg.cpu_quota().unwrap();
    assert_eq!(q.cpus(), 0.5);
    assert_eq!(q.whole_cpus(), 1);
    // Throttling is counted where the quota is: the pod, not the container.
    assert_eq!(cg.throttling(&q).unwrap().throttled_periods, 37);
}

#[test]
fn max_everywhere_is_no_limit() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("cgroup-v2"), dir.path());
    let unit = dir
        .path()
        .join("sys/fs/cgroup/system.slice/stream-top.service");
    fs::write(unit.join("memory.max"), "max\n").unwrap();
    let cg = Cgroup::find(dir.path());
    assert_eq!(cg.memory(), None);
    assert_eq!(cg.limits().line(), None);
    // Usage moves: the room is read anew each time.
    fs::write(unit.join("memory.max"), format!("{}\n", 200 * MIB)).unwrap();
    fs::write(unit.join("memory.current"), format!("{}\n", 150 * MIB)).unwrap();
    assert_eq!(cg.memory().unwrap().room(), 50 * MIB);
}

#[test]
fn no_cgroup_at_all() {
    // vm-2core has no proc/self: a kernel without cgroups, or another OS.
    let cg = Cgroup::find(&fixture("vm-2core"));
    assert_eq!((cg.memory(), cg.cpu_quota()), (None, None));
    assert_eq!(cg.limits(), Limits::default());
}

#[test]
fn a_group_outside_the_mount_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("cgroup-v1"), dir.path());
    // Another container's group: our mount shows only /docker/c0ffee.
    fs::write(
        dir.path().join("proc/self/cgroup"),
        "4:memory:/docker/beef\n2:cpu,cpuacct:/docker/beef\n0::/\n",
    )
    .unwrap();
    let cg = Cgroup::find(dir.path());
    assert_eq!((cg.memory(), cg.cpu_quota()), (None, None));
}

#[test]
fn the_host_sampler_turns_throttling_into_rates() {
    use std::time::{Duration, Instant};
    use stream_top::machine::host::HostSampler;
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("vm-2core"), dir.path());
    copy_tree(&fixture("cgroup-v1"), dir.path());
    let mut sampler = HostSampler::new(dir.path(), 1).with_clock_ticks(100);
    let t0 = Instant::now();
    let first = sampler.sample_at(t0);
    assert_eq!(first.cpu_quota, Some(1.5));
    assert_eq!(first.throttling.unwrap().throttled_periods, 12);
    assert_eq!(first.throttled_ratio, None, "no rate from one sample");
    // Ten more periods, four of them throttled for 0.1 s in all, over two seconds.
    fs::write(
        dir.path().join("sys/fs/cgroup/cpu,cpuacct/cpu.stat"),
        "nr_periods 510\nnr_throttled 16\nthrottled_time 440000000\n",
    )
    .unwrap();
    let second = sampler.sample_at(t0 + Duration::from_secs(2));
    assert_eq!(second.throttled_ratio, Some(0.4));
    assert!((second.throttled_s_per_s.unwrap() - 0.05).abs() < 1e-12);
    // Without a quota there is nothing to sample.
    let mut plain = HostSampler::new(&fixture("vm-2core"), 1);
    let s = plain.sample_at(t0);
    assert_eq!((s.cpu_quota, s.throttling), (None, None));
}

#[test]
fn inactive_page_cache_counts_as_room_before_the_oom_killer_in_both_versions() {
    // v2: the service's own group, `inactive_file` in its memory.stat.
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("cgroup-v2"), dir.path());
    let unit = dir
        .path()
        .join("sys/fs/cgroup/system.slice/stream-top.service");
    let cg = Cgroup::find(dir.path());
    assert_eq!(cg.memory_group(), Some(unit.as_path()));
    // No memory.stat: nothing is counted as reclaimable, both rooms agree.
    let m = cg.memory().unwrap();
    assert_eq!((m.reclaimable, m.room_before_oom()), (0, m.room()));
    fs::write(
        unit.join("memory.stat"),
        "anon 31457280\nactive_file 1048576\ninactive_file 20971520\n",
    )
    .unwrap();
    let m = cg.memory().unwrap();
    assert_eq!(m.reclaimable, 20 * MIB);
    // Sizing's room stays the lower bound; the OOM killer waits for the cache to go.
    assert_eq!(m.room(), 1024 * MIB - 50 * MIB);
    assert_eq!(m.room_before_oom(), 1024 * MIB - 30 * MIB);

    // v1: the hierarchical limit, measured against the group's usage, less its
    // `total_inactive_file` (the group and its children).
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("cgroup-v1"), dir.path());
    let group = dir.path().join("sys/fs/cgroup/memory");
    let stat = fs::read_to_string(group.join("memory.stat")).unwrap();
    fs::write(
        group.join("memory.stat"),
        format!("{stat}inactive_file 1\ntotal_inactive_file 4194304\n"),
    )
    .unwrap();
    let cg = Cgroup::find(dir.path());
    assert_eq!(cg.memory_group(), Some(group.as_path()));
    let m = cg.memory().unwrap();
    assert_eq!(
        (m.limit, m.usage, m.reclaimable),
        (400 * MIB, 10 * MIB, 4 * MIB)
    );
    assert_eq!(m.room_before_oom(), 394 * MIB);
}
