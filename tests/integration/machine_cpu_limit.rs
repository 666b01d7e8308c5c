//! The CPU design read from fixture machines (/proc/cpuinfo, the MIDR in sysfs, `sysctl`
//! listings), the core each one is in the table of load and store ports, and the bytes per
//! cycle those ports allow the triad, copy, read and write at a loop's vector width.

use std::path::Path;
use stream_top::machine::cpu_id::{self, CpuId};
use stream_top::machine::uarch::{Core, vector_width};

fn cpu(fixture: &str) -> Option<CpuId> {
    cpu_id::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture),
    )
}

/// The core's limit for (triad, copy, read, write) at `width` bytes per load and store.
fn limits(fixture: &str, width: u32) -> (String, [Option<f64>; 4]) {
    let core = Core::of(cpu(fixture).as_ref()).unwrap();
    let at = |r, w| core.bytes_per_cycle(width, r, w);
    (
        core.name.to_string(),
        [at(2, 1), at(1, 1), at(1, 0), at(0, 1)],
    )
}

#[test]
fn each_fixture_cpu_is_the_design_it_reports() {
    assert_eq!(
        cpu("cpu-zen3"),
        Some(CpuId::X86 {
            vendor: "AuthenticAMD".into(),
            family: 25,
            model: 1,
            stepping: Some(1),
        })
    );
    let named = |f: &str| Core::of(cpu(f).as_ref()).map(|c| c.name);
    assert_eq!(named("cpu-zen4"), Ok("AMD Zen 4"));
    assert_eq!(
        named("cpu-icelake-sp"),
        Ok("Intel Ice Lake/Tiger Lake (Sunny/Willow Cove)")
    );
    assert_eq!(named("cpu-emerald-rapids"), named("cpu-sapphire-rapids"));
    assert_eq!(named("cpu-skylake-client"), Ok("Intel Skylake (client)"));
    assert_eq!(named("cpu-neoverse-n1"), Ok("Arm Neoverse N1"));
    assert_eq!(named("cpu-neoverse-v1"), Ok("Arm Neoverse V1"));
}

#[test]
fn avx2_on_zen_3_is_bound_by_one_vector_store_and_two_loads() {
    let (name, l) = limits("cpu-zen3", vector_width("avx2 ymm mul+add").unwrap());
    assert_eq!(name, "AMD Zen 3");
    assert_eq!(l, [Some(96.0), Some(64.0), Some(64.0), Some(32.0)]);
}

#[test]
fn avx512_on_sapphire_rapids_moves_two_loads_and_a_store_of_64_bytes() {
    let (_, l) = limits(
        "cpu-sapphire-rapids",
        vector_width("avx512 zmm fma").unwrap(),
    );
    assert_eq!(l, [Some(192.0), Some(128.0), Some(128.0), Some(64.0)]);
}

#[test]
fn neon_on_an_apple_m1_is_bound_by_its_four_memory_pipes() {
    let (_, l) = limits("cpu-apple-m1", vector_width("neon q").unwrap());
    assert_eq!(l, [Some(64.0), Some(64.0), Some(48.0), Some(32.0)]);
}

#[test]
fn unknown_designs_and_widths_say_why() {
    let mac = Core::of(cpu("cpu-apple-nofamily").as_ref()).unwrap_err().0;
    assert!(mac.contains("hw.cpufamily"), "{mac}");
    let zen3 = Core::of(cpu("cpu-zen3").as_ref()).unwrap();
    assert_eq!(zen3.bytes_per_cycle(64, 2, 1), None);
    assert!(vector_width("portable").is_err());
    // The development VM's trimmed /proc/cpuinfo still names its design.
    assert_eq!(
        Core::of(cpu("vm-2core").as_ref()).map(|c| c.name),
        Ok("AMD Zen 3")
    );
}
