//! The fleet: hardware fingerprints read from fixture trees (SMBIOS type-17 raw structures,
//! DMI ids, EDAC counters, kernel settings; `tests/fixtures/fingerprint/make.py` writes them),
//! and `stream-top fleet` judging many nodes' snapshots.

use std::path::{Path, PathBuf};
use stream_top::machine::fingerprint::{self, Fingerprint, Known};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fingerprint")
        .join(name)
}

fn read(name: &str) -> Fingerprint {
    fingerprint::read(&fixture(name), name, "Fixture CPU", 2)
}

#[test]
fn a_server_with_one_empty_slot_lists_sixteen_slots_and_fifteen_dimms() {
    let f = read("server-16-one-empty");
    let dimms = f.dimms.value().unwrap();
    assert_eq!(dimms.len(), 16);
    assert_eq!(f.populated().unwrap().len(), 15);
    assert!(!dimms[11].populated());
    assert_eq!(dimms[0].locator, "P0_DIMM_A1");
    assert_eq!((dimms[0].size_mib, dimms[0].rank), (Some(32768), Some(2)));
    assert_eq!(dimms[0].memory_type, "DDR5");
    assert_eq!(f.channels(), Some(15));
    // 15 channels × 4800 MT/s × 8 B.
    assert_eq!(f.peak_gbs(), Some(576.0));
    assert_eq!(f.memory_errors(), Some((0, 0)));
}

#[test]
fn firmware_and_kernel_settings_are_read() {
    let f = read("server-16-one-empty");
    let bios = f.bios.value().unwrap();
    assert_eq!(
        (bios.vendor.as_str(), bios.version.as_str()),
        ("Fixture Inc.", "2.1.0")
    );
    assert_eq!(bios.date, "03/14/2025");
    assert_eq!(f.microcode, Known::Value("0x2b000603".into()));
    assert_eq!(f.kernel_release, Known::Value("6.8.0-45-generic".into()));
    assert_eq!(f.thp, Known::Value("madvise".into()));
    assert_eq!(f.governor, Known::Value("performance".into()));
    assert_eq!(f.boost, Known::Value(true));
    assert_eq!(f.zone_reclaim_mode, Known::Value(0));
    assert_eq!(f.numa_balancing, Known::Value(1));
    assert_eq!(
        f.machine_id,
        Known::Value("server-16-one-empty-0123456789abcdef".into())
    );
}

#[test]
fn a_slow_dimm_and_corrected_errors_are_seen_and_keep_the_class() {
    let slow = read("server-slow-dimm");
    let dimms = slow.dimms.value().unwrap();
    assert_eq!(dimms[5].configured_mts, Some(4400));
    assert_eq!(dimms[5].rated_mts, Some(4800));
    assert_eq!(slow.memory_errors(), Some((412, 0)));
    // Both servers are built to be the same machine: a missing or slowed module does not
    // make a node a class of its own, or it would never be judged against its peers.
    assert_eq!(slow.class(), read("server-16-one-empty").class());
    assert_eq!(slow.class().len(), 8);
}

#[test]
fn a_desktop_is_a_class_of_its_own() {
    let d = read("desktop");
    assert_eq!(d.populated().unwrap().len(), 2);
    assert_eq!(d.peak_gbs(), Some(51.2));
    assert_eq!(d.governor, Known::Value("powersave".into()));
    assert_ne!(d.class(), read("server-16-one-empty").class());
}

#[test]
fn a_vm_without_smbios_says_why_for_every_missing_field() {
    let f = read("vm");
    assert!(matches!(&f.dimms, Known::Missing(w) if w.contains("/sys/firmware/dmi/entries")));
    assert!(matches!(&f.bios, Known::Missing(w) if w.contains("bios_vendor")));
    assert!(matches!(&f.microcode, Known::Missing(w) if w.contains("microcode")));
    assert!(matches!(&f.edac, Known::Missing(w) if w.contains("EDAC")));
    assert_eq!(f.thp, Known::Value("never".into()));
    assert_eq!(
        (f.channels(), f.peak_gbs(), f.memory_errors()),
        (None, None, None)
    );
    assert!(f.dimms.text(|_| String::new()).starts_with("– ("));
}

#[test]
fn a_fingerprint_survives_json() {
    let f = read("server-slow-dimm");
    let text = serde_json::to_string(&f).unwrap();
    assert_eq!(serde_json::from_str::<Fingerprint>(&text).unwrap(), f);
}
