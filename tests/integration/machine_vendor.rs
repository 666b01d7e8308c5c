//! The vendor figure from SMBIOS type-17 fixtures, `--vendor-gbs`, and machines without SMBIOS.

use crate::support::machine_fixtures::*;
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

mod apple {
    use super::*;
    use stream_top::machine::vendor_apple::{AppleFigure, published_gbs};

    fn gbs(brand: &str, p_cores: usize) -> Option<f64> {
        match published_gbs(brand, Some(p_cores)) {
            AppleFigure::Published(g) => Some(g),
            AppleFigure::None(_) => None,
        }
    }

    // One test per chip, each against the figure Apple published for it.
    #[test]
    fn m1_has_no_published_figure_and_says_so() {
        let AppleFigure::None(why) = published_gbs("Apple M1", Some(4)) else {
            panic!("M1 has no figure")
        };
        assert!(why.contains("no bandwidth figure"), "{why}");
    }
    #[test]
    fn m1_pro() {
        assert_eq!(gbs("Apple M1 Pro", 8), Some(200.0));
        assert_eq!(gbs("Apple M1 Pro", 6), Some(200.0));
    }
    #[test]
    fn m1_max() {
        assert_eq!(gbs("Apple M1 Max", 8), Some(400.0));
    }
    #[test]
    fn m1_ultra() {
        assert_eq!(gbs("Apple M1 Ultra", 16), Some(800.0));
    }
    #[test]
    fn m2() {
        assert_eq!(gbs("Apple M2", 4), Some(100.0));
    }
    #[test]
    fn m2_pro() {
        assert_eq!(gbs("Apple M2 Pro", 8), Some(200.0));
    }
    #[test]
    fn m2_max() {
        assert_eq!(gbs("Apple M2 Max", 8), Some(400.0));
    }
    #[test]
    fn m2_ultra() {
        assert_eq!(gbs("Apple M2 Ultra", 16), Some(800.0));
    }
    #[test]
    fn m3() {
        assert_eq!(gbs("Apple M3", 4), Some(100.0));
    }
    #[test]
    fn m3_pro() {
        assert_eq!(gbs("Apple M3 Pro", 6), Some(150.0));
        assert_eq!(gbs("Apple M3 Pro", 5), Some(150.0));
    }
    #[test]
    fn m3_max_by_binning() {
        assert_eq!(gbs("Apple M3 Max", 10), Some(300.0));
        assert_eq!(gbs("Apple M3 Max", 12), Some(400.0));
        let AppleFigure::None(why) = published_gbs("Apple M3 Max", None) else {
            panic!("binning unknown")
        };
        assert!(why.contains("10 P-cores or 12 P-cores"), "{why}");
    }
    #[test]
    fn m3_ultra() {
        assert_eq!(gbs("Apple M3 Ultra", 24), Some(819.0));
    }
    #[test]
    fn m4() {
        assert_eq!(gbs("Apple M4", 4), Some(120.0));
    }
    #[test]
    fn m4_pro_is_the_seeds_273() {
        assert_eq!(gbs("Apple M4 Pro", 10), Some(273.0));
        assert_eq!(gbs("Apple M4 Pro", 8), Some(273.0));
    }
    #[test]
    fn m4_max_by_binning() {
        assert_eq!(gbs("Apple M4 Max", 10), Some(410.0));
        assert_eq!(gbs("Apple M4 Max", 12), Some(546.0));
    }
    #[test]
    fn other_brands_have_none() {
        assert_eq!(gbs("Apple M9 Hyper", 4), None);
        assert_eq!(gbs("Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz", 6), None);
    }

    #[test]
    fn fixture_macs_get_apples_figure_with_no_flags_and_the_flag_still_wins() {
        let f = VendorFigure::find(&fixture("mac-m4-pro"), None);
        assert_eq!(f.gbs, Some(273.0));
        assert_eq!(f.source, "Apple's published figure for the Apple M4 Pro");
        assert_eq!(
            VendorFigure::find(&fixture("mac-m3-max"), None).gbs,
            Some(400.0)
        );
        assert_eq!(
            VendorFigure::find(&fixture("mac-m2-pro"), None).gbs,
            Some(200.0)
        );
        let m1 = VendorFigure::find(&fixture("mac-m1"), None);
        assert_eq!(m1.gbs, None);
        assert!(
            m1.source.starts_with("pass --vendor-gbs N; "),
            "{}",
            m1.source
        );
        let given = VendorFigure::find(&fixture("mac-m4-pro"), Some(250.0));
        assert_eq!(
            (given.gbs, given.source.as_str()),
            (Some(250.0), "--vendor-gbs")
        );
    }
}
