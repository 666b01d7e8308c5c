use super::*;
use crate::engine::plan::{ArraySize, Level, WorkingSet};

/// Short runs: the tests check what the chase computes, never how fast (shared machine).
fn quick() -> ChaseOptions {
    ChaseOptions {
        runs: 3,
        run_ns: 200_000,
        ..ChaseOptions::default()
    }
}

/// Where `hops` hops from line 0 land, following `next`.
fn land(next: &[usize], hops: u64) -> usize {
    let mut l = 0;
    for _ in 0..hops % next.len() as u64 {
        l = next[l];
    }
    l
}

#[test]
fn splitmix64_gives_the_reference_stream() {
    // The first outputs for seed 0 in Vigna's reference splitmix64.c.
    let mut r = SplitMix64::new(0);
    assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    let mut r = SplitMix64::new(7);
    for n in [1, 2, 3, 1000, usize::MAX] {
        assert!((0..100).all(|_| r.below(n) < n));
    }
}

#[test]
fn a_chain_is_one_cycle_through_every_line() {
    for lines in [1usize, 2, 3, 5, 64, 257, 4096] {
        let chain = Chain::build((lines * LINE) as u64, Pages::Small, 42).unwrap();
        assert_eq!(chain.lines(), lines);
        let next = chain.successors();
        let mut seen = vec![false; lines];
        let mut l = 0;
        for step in 0..lines {
            assert!(
                !seen[l],
                "{lines} lines: line {l} visited twice by step {step}"
            );
            seen[l] = true;
            l = next[l];
        }
        assert_eq!(l, 0, "{lines} lines: back at the start after {lines} hops");
        assert!(seen.iter().all(|&s| s));
        chain.validate(0, 0, &|| Ok(())).unwrap();
    }
}

#[test]
fn a_size_is_whole_lines_and_at_least_one() {
    assert_eq!(Chain::build(0, Pages::Small, 1).unwrap().lines(), 1);
    assert_eq!(Chain::build(200, Pages::Small, 1).unwrap().lines(), 3);
    assert_eq!(Chain::build(200, Pages::Small, 1).unwrap().bytes(), 192);
}

#[test]
fn a_seed_gives_the_same_chain_and_other_seeds_differ() {
    let bytes = (1000 * LINE) as u64;
    let a = Chain::build(bytes, Pages::Small, 1).unwrap().successors();
    let b = Chain::build(bytes, Pages::Huge, 1).unwrap().successors();
    let c = Chain::build(bytes, Pages::Small, 2).unwrap().successors();
    assert_eq!(a, b, "same seed, same order, whatever the pages");
    assert_ne!(a, c);
    // Not a stride: successive lines are not neighbours (a sequential or fixed-stride chain
    // would have one delta everywhere).
    let deltas: std::collections::BTreeSet<isize> =
        (0..1000).map(|l| a[l] as isize - l as isize).collect();
    assert!(deltas.len() > 500, "{} distinct deltas", deltas.len());
}

#[test]
fn the_walkers_land_where_the_hop_count_says_and_agree() {
    let chain = Chain::build((777 * LINE) as u64, Pages::Huge, 9).unwrap();
    let next = chain.successors();
    for blocks in [0u64, 1, 2, 3, 24, 25, 100] {
        let want = land(&next, Chain::hops(blocks));
        let asm = chain.walk(Walker::Asm, 0, blocks).unwrap();
        let portable = chain.walk(Walker::Portable, 0, blocks).unwrap();
        assert_eq!(asm, want, "asm, {blocks} blocks");
        assert_eq!(portable, want, "portable, {blocks} blocks");
        chain
            .validate(Chain::hops(blocks), asm, &|| Ok(()))
            .unwrap();
    }
    // Continuing from where a walk ended is the same as one longer walk.
    let mid = chain.walk(Walker::Asm, 0, 5).unwrap();
    let end = chain.walk(Walker::Portable, mid, 7).unwrap();
    assert_eq!(end, chain.walk(Walker::Asm, 0, 12).unwrap());
    // From any line: the hop count lands on the line that many successors on.
    let from = next[next[3]];
    let mut want = from;
    for _ in 0..Chain::hops(2) {
        want = next[want];
    }
    assert_eq!(chain.walk(Walker::Asm, from, 2), Some(want));
    assert_eq!(chain.walk(Walker::Portable, from, 2), Some(want));
}

#[test]
fn the_native_walker_is_asm_on_x86_64_and_aarch64() {
    let native = Walker::native();
    if cfg!(target_arch = "x86_64") {
        assert_eq!((native, native.name()), (Walker::Asm, "x86-64 asm"));
    } else if cfg!(target_arch = "aarch64") {
        assert_eq!((native, native.name()), (Walker::Asm, "aarch64 asm"));
    } else {
        assert_eq!(native.name(), "portable");
    }
    assert_eq!(Walker::Portable.name(), "portable");
}

#[test]
fn a_walk_from_past_the_end_is_refused() {
    let chain = Chain::build((16 * LINE) as u64, Pages::Small, 3).unwrap();
    assert!(chain.walk(Walker::Asm, 15, 1).is_some());
    assert_eq!(chain.walk(Walker::Asm, 16, 1), None);
    assert_eq!(chain.walk(Walker::Portable, usize::MAX, 1), None);
}

#[test]
fn validation_catches_a_short_cycle() {
    let mut chain = Chain::build((100 * LINE) as u64, Pages::Small, 5).unwrap();
    let next = chain.successors();
    // Line 0 → a → b → … : point b back at 0, a cycle of 2 lines.
    let b = next[next[0]];
    chain.point(next[0], 0);
    let _ = b;
    let e = chain.validate(0, 0, &|| Ok(())).unwrap_err().to_string();
    assert!(e.contains("after 2 of 100 lines"), "{e}");
}

#[test]
fn validation_catches_a_line_that_no_longer_returns_to_the_start() {
    let mut chain = Chain::build((50 * LINE) as u64, Pages::Small, 5).unwrap();
    let next = chain.successors();
    // The third line points at the second: a loop that never comes back to line 0.
    let (second, third) = (next[0], next[next[0]]);
    chain.point(third, second);
    let e = chain.validate(0, 0, &|| Ok(())).unwrap_err().to_string();
    assert!(e.contains("do not return"), "{e}");
}

#[test]
fn validation_catches_pointers_outside_the_buffer_and_refuses_to_walk_them() {
    for bad in [8usize, 64 * 50, usize::MAX - 7] {
        let mut chain = Chain::build((50 * LINE) as u64, Pages::Small, 5).unwrap();
        let last = land(&chain.successors(), 49);
        chain.point_raw(last, bad);
        let e = chain.validate(0, 0, &|| Ok(())).unwrap_err().to_string();
        assert!(e.contains("not to a line"), "{bad}: {e}");
        assert_eq!(chain.walk(Walker::Asm, 0, 1), None);
    }
}

#[test]
fn validation_catches_a_miscounted_chase() {
    let chain = Chain::build((300 * LINE) as u64, Pages::Small, 11).unwrap();
    let end = chain.walk(Walker::Asm, 0, 4).unwrap();
    chain.validate(Chain::hops(4), end, &|| Ok(())).unwrap();
    let e = chain
        .validate(Chain::hops(4) + 1, end, &|| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("miscounted"), "{e}");
    let e = chain
        .validate(Chain::hops(4), 300, &|| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("ended on line 300"), "{e}");
}

#[test]
fn a_measurement_is_validated_and_reports_its_cycles_source() {
    for walker in [Walker::Asm, Walker::Portable] {
        let opts = ChaseOptions { walker, ..quick() };
        let clock = ClockEstimate::fixed(2.0);
        let m = measure(64 << 10, Pages::Huge, None, &clock, &opts).unwrap();
        assert_eq!(m.bytes, 64 << 10);
        assert_eq!(m.runs_ns.len(), 3);
        assert!(m.ns.is_finite() && m.ns > 0.0, "{m:?}");
        assert_eq!(m.hops_per_run % UNROLL, 0);
        match m.cycles_source {
            CyclesSource::ClockEstimate { ghz } => {
                assert_eq!(ghz, 2.0);
                assert_eq!(m.cycles, m.ns * 2.0);
            }
            CyclesSource::Counted => assert!(m.cycles > 0.0),
        }
        if let Some(s) = m.huge_share {
            assert!((0.0..=1.0).contains(&s), "{s}");
        }
    }
}

#[test]
fn without_counters_the_cycles_come_from_the_clock_estimate() {
    let opts = ChaseOptions {
        counters: false,
        ..quick()
    };
    let m = measure(
        8 << 10,
        Pages::Huge,
        None,
        &ClockEstimate::fixed(2.5),
        &opts,
    )
    .unwrap();
    assert_eq!(m.cycles_source, CyclesSource::ClockEstimate { ghz: 2.5 });
    assert_eq!(m.cycles, m.ns * 2.5);
    assert_eq!(m.cycles_source.words(), "from the 2.50 GHz clock estimate");
}

#[test]
fn a_measurement_pinned_to_a_cpu_runs_there() {
    let cpu = crate::platform::allowed_cpus().map(|c| c[0]);
    let m = measure(
        8 << 10,
        Pages::Small,
        cpu,
        &ClockEstimate::fixed(3.0),
        &quick(),
    )
    .unwrap();
    assert_eq!(m.pages, Pages::Small);
    assert_eq!(
        measure(
            8 << 10,
            Pages::Small,
            Some(1 << 20),
            &ClockEstimate::fixed(3.0),
            &quick()
        )
        .unwrap_err()
        .exit_code(),
        1,
        "a CPU that does not exist is a machine error"
    );
}

fn set(name: &str, level: Option<Level>, size: ArraySize) -> WorkingSet {
    WorkingSet {
        name: name.into(),
        level,
        size,
        note: None,
    }
}

#[test]
fn a_levels_chase_is_the_triads_footprint_at_one_thread_and_an_explicit_size_is_itself() {
    let l1 = set("l1", Some(Level::L1), ArraySize::PerThread(5376));
    assert_eq!(chase_bytes(&l1), 3 * 5376);
    let dram = set("dram", Some(Level::Dram), ArraySize::Split(128 << 20));
    assert_eq!(chase_bytes(&dram), 384 << 20);
    assert_eq!(
        chase_bytes(&set("1 MiB", None, ArraySize::Split(1 << 20))),
        1 << 20
    );
    assert_eq!(
        chase_bytes(&set("4 KiB/thread", None, ArraySize::PerThread(4096))),
        4096
    );
    assert_eq!(chase_bytes(&set("1", None, ArraySize::Split(1))), 64);
}

#[test]
fn idle_latency_gives_a_row_per_set_with_the_tlb_cost_only_beside_both_figures() {
    let sets = [
        set("l1", Some(Level::L1), ArraySize::PerThread(5376)),
        set("96 KiB", None, ArraySize::Split(96 << 10)),
    ];
    let rows = idle_latency(&sets, None, &ClockEstimate::fixed(2.5), &quick()).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].label, format!("{} (l1)", format_bytes(3 * 5376)));
    assert_eq!(rows[0].level, Some(Level::L1));
    assert_eq!(rows[1].label, "96 KiB");
    assert_eq!(rows[1].bytes, 96 << 10);
    for r in &rows {
        assert!(r.ns > 0.0);
        match (r.ns_small_pages, r.tlb_ns) {
            (Some(s), Some(t)) => {
                assert_eq!(t, s - r.ns);
                assert!(r.huge_share.is_some_and(|h| h >= HUGE_TOOK));
            }
            (None, None) => assert!(r.huge_share.is_none_or(|h| h < HUGE_TOOK)),
            other => panic!("{other:?}"),
        }
    }
    let no_tlb = ChaseOptions {
        tlb: false,
        ..quick()
    };
    let rows = idle_latency(&sets[..1], None, &ClockEstimate::fixed(2.5), &no_tlb).unwrap();
    assert_eq!((rows[0].ns_small_pages, rows[0].tlb_ns), (None, None));
}

#[test]
fn a_stop_asked_during_the_build_or_the_check_ends_it() {
    let lines = 4 * super::chain::CHECK_LINES;
    let asked = std::cell::Cell::new(0);
    let stop_at_third = || {
        asked.set(asked.get() + 1);
        if asked.get() >= 3 {
            Err(crate::base::error::Error::engine(STOPPED))
        } else {
            Ok(())
        }
    };
    let e = Chain::build_on((lines * LINE) as u64, Pages::Small, 1, None, &stop_at_third)
        .err()
        .expect("the build stops");
    assert!(e.to_string().contains(STOPPED), "{e}");
    assert_eq!(asked.get(), 3, "asked as it went, and not after it stopped");
    let chain = Chain::build((lines * LINE) as u64, Pages::Small, 1).unwrap();
    asked.set(0);
    let e = chain.validate(0, 0, &stop_at_third).unwrap_err();
    assert!(e.to_string().contains(STOPPED), "{e}");
}
