//! The vendor figure from SMBIOS type-17 fixtures, `--vendor-gbs`, and machines without SMBIOS.

use crate::machine_fixtures::*;
use std::fs;
use std::path::Path;
use stream_top::machine::vendor::{MemoryDevice, VendorFigure};

#[test]
fn server_2s_sums_sixteen_populated_channels_at_configured_speed() {
    let f = VendorFigure::find(&fixture("server-2s"), None);
    // 16 × 4400 MT/s × 8 bytes; the 16 empty slots and the rated 4800 do not count.
    assert_eq!(f.gbs, Some(563.2));
    assert_eq!(
        f.source,
        "SMBIOS: 16 × DDR5-4400 × 64 bit, assumes one DIMM per channel"
    );
}

#[test]
fn laptop_two_dimms() {
    let f = VendorFigure::find(&fixture("laptop-hybrid"), None);
    assert_eq!(f.gbs, Some(76.8));
    assert!(f.source.contains("2 × DDR5-4800 × 64 bit"), "{}", f.source);
}

#[test]
fn raw_fixture_entry_parses() {
    let raw = fs::read(fixture("server-2s/sys/firmware/dmi/entries/17-0/raw")).unwrap();
    let d = MemoryDevice::parse(&raw).unwrap();
    assert!(d.populated);
    assert_eq!(d.data_width, Some(64));
    assert_eq!(d.speed_mts, Some(4400));
    assert_eq!(d.memory_type, 0x22);
    let raw = fs::read(fixture("server-2s/sys/firmware/dmi/entries/17-1/raw")).unwrap();
    assert!(!MemoryDevice::parse(&raw).unwrap().populated);
}

#[test]
fn given_figure_wins() {
    let f = VendorFigure::find(&fixture("server-2s"), Some(307.2));
    assert_eq!(f.gbs, Some(307.2));
    assert_eq!(f.source, "--vendor-gbs");
    let f = VendorFigure::find(&fixture("server-2s"), Some(-1.0));
    assert_eq!(f.gbs, None);
}

#[test]
fn no_smbios_explains_and_hints() {
    let f = VendorFigure::find(&fixture("vm-2core"), None);
    assert_eq!(f.gbs, None);
    assert!(
        f.source.contains("sys/firmware/dmi/entries"),
        "{}",
        f.source
    );
    assert!(f.source.starts_with("pass --vendor-gbs N"), "{}", f.source);
    let f = VendorFigure::find(Path::new("/nonexistent/root"), None);
    assert_eq!(f.gbs, None);
}

#[test]
fn only_empty_slots_give_no_figure() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("server-2s/sys/firmware/dmi/entries/17-1/raw");
    let dst = dir.path().join("sys/firmware/dmi/entries/17-0");
    fs::create_dir_all(&dst).unwrap();
    fs::copy(src, dst.join("raw")).unwrap();
    let f = VendorFigure::find(dir.path(), None);
    assert_eq!(f.gbs, None);
    assert!(f.source.contains("none populated"), "{}", f.source);
}
