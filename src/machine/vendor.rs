//! The vendor's peak bandwidth figure: given on the command line, Apple's published figure on
//! a Mac (`vendor_apple`), or estimated from SMBIOS.
//!
//! "Fraction of peak" is how a bandwidth figure is judged, and the peak is a property of the
//! memory that is installed: channels × transfer rate × bus width. SMBIOS type 17 (Memory
//! Device) lists every slot with its width and configured speed; summing the populated ones
//! gives the peak when each DIMM sits on its own channel (two DIMMs on one channel share it,
//! so the figure says what it assumes). The entries are readable by root only; without them
//! the figure is whatever `--vendor-gbs` says.

use super::fingerprint::Dimm;
use super::fingerprint::smbios::{known_type, width_and_type};
use super::sysctl::Sysctl;
use super::vendor_apple::{AppleFigure, published_gbs};
use crate::base::error::{Error, Result};
use std::fs;
use std::path::Path;

/// Whether a bandwidth figure can divide another: finite and positive.
pub(crate) fn usable_gbs(gbs: f64) -> bool {
    gbs.is_finite() && gbs > 0.0
}

#[derive(Debug, Clone, PartialEq)]
pub struct VendorFigure {
    /// GB/s (decimal), when known.
    pub gbs: Option<f64>,
    /// Where it came from, as `source` says in words.
    pub kind: VendorSource,
    /// Where it came from: "--vendor-gbs", "SMBIOS: 4 × DDR4-3200 × 64 bit, assumes one DIMM per channel", or why none.
    pub source: String,
}

/// Where a vendor figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VendorSource {
    /// `--vendor-gbs`.
    Flag,
    /// Estimated from the SMBIOS memory devices.
    Smbios,
    /// A published figure for the CPU model (Apple's, on a Mac).
    Table,
    /// No figure.
    None,
}

/// One SMBIOS type-17 structure, the fields the figure needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryDevice {
    /// Whether a module is installed (Size is neither 0 nor unknown).
    pub populated: bool,
    /// Data width in bits, when known.
    pub data_width: Option<u16>,
    /// Configured speed in MT/s when the table has it, else the module's rated speed.
    pub speed_mts: Option<u32>,
    /// Memory Type byte (0x1A DDR4, 0x22 DDR5, ...).
    pub memory_type: u8,
}

impl MemoryDevice {
    /// Parses one raw SMBIOS structure (as in /sys/firmware/dmi/entries/17-*/raw) through the
    /// one reader of them (`fingerprint::smbios`). `None` when it is not a type-17 structure or
    /// too short to hold the size field.
    pub fn parse(raw: &[u8]) -> Option<MemoryDevice> {
        let dimm = Dimm::parse(raw)?;
        let (data_width, memory_type) = width_and_type(raw);
        Some(MemoryDevice {
            populated: dimm.populated(),
            data_width,
            speed_mts: dimm.speed(),
            memory_type,
        })
    }

    fn type_name(&self) -> Option<&'static str> {
        known_type(self.memory_type)
    }
}

impl VendorFigure {
    /// `given` (from `--vendor-gbs`) wins; otherwise Apple's published figure on a Mac (from
    /// its `sysctl` values), the SMBIOS estimate under `root` elsewhere, or no figure with the
    /// reason and a hint.
    pub fn find(root: &Path, given: Option<f64>) -> VendorFigure {
        if let Some(g) = given {
            return if usable_gbs(g) {
                VendorFigure {
                    gbs: Some(g),
                    kind: VendorSource::Flag,
                    source: "--vendor-gbs".to_string(),
                }
            } else {
                VendorFigure {
                    gbs: None,
                    kind: VendorSource::None,
                    source: format!("--vendor-gbs {g} is not a positive figure"),
                }
            };
        }
        if let Some(values) = Sysctl::under(root) {
            return Self::from_sysctl(&values);
        }
        match read_devices(root) {
            Ok(devices) => Self::from_devices(&devices),
            Err(why) => VendorFigure {
                gbs: None,
                kind: VendorSource::None,
                source: format!("pass --vendor-gbs N; {why}"),
            },
        }
    }

    /// Apple's published figure for the chip the values name (`machdep.cpu.brand_string`, and
    /// `hw.perflevel0.physicalcpu` where the binning decides).
    pub(crate) fn from_sysctl(values: &Sysctl) -> VendorFigure {
        let brand = values.get("machdep.cpu.brand_string").unwrap_or("").trim();
        let p_cores = values
            .int("hw.perflevel0.physicalcpu")
            .ok()
            .flatten()
            .map(|p| p as usize);
        match published_gbs(brand, p_cores) {
            AppleFigure::Published(gbs) => VendorFigure {
                gbs: Some(gbs),
                kind: VendorSource::Table,
                source: format!("Apple's published figure for the {brand}"),
            },
            AppleFigure::None(why) => VendorFigure {
                gbs: None,
                kind: VendorSource::None,
                source: format!("pass --vendor-gbs N; {why}"),
            },
        }
    }

    /// The figure from parsed type-17 devices: Σ speed (MT/s) × width / 8 bytes, in GB/s.
    fn from_devices(devices: &[MemoryDevice]) -> VendorFigure {
        let populated: Vec<&MemoryDevice> = devices.iter().filter(|d| d.populated).collect();
        if populated.is_empty() {
            return VendorFigure {
                gbs: None,
                kind: VendorSource::None,
                source: format!(
                    "SMBIOS lists {} memory device(s), none populated; pass --vendor-gbs N",
                    devices.len()
                ),
            };
        }
        // Groups of identical modules: (type, speed, width) → count.
        let mut groups: Vec<(Option<&str>, u32, u16, usize)> = Vec::new();
        let mut unknown = 0;
        let mut mb_per_s = 0u64;
        for d in &populated {
            let (Some(speed), Some(width)) = (d.speed_mts, d.data_width) else {
                unknown += 1;
                continue;
            };
            mb_per_s += speed as u64 * width as u64 / 8;
            let name = d.type_name();
            match groups
                .iter_mut()
                .find(|g| g.0 == name && g.1 == speed && g.2 == width)
            {
                Some(g) => g.3 += 1,
                None => groups.push((name, speed, width, 1)),
            }
        }
        if groups.is_empty() {
            return VendorFigure {
                gbs: None,
                kind: VendorSource::None,
                source: format!(
                    "SMBIOS lists {} populated memory device(s) without speed or width; pass --vendor-gbs N",
                    populated.len()
                ),
            };
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|&(name, speed, width, n)| match name {
                Some(t) => format!("{n} × {t}-{speed} × {width} bit"),
                None => format!("{n} × {speed} MT/s × {width} bit"),
            })
            .collect();
        let mut source = format!(
            "SMBIOS: {}, assumes one DIMM per channel",
            parts.join(" + ")
        );
        if unknown > 0 {
            source.push_str(&format!(
                "; {unknown} populated device(s) without speed or width left out"
            ));
        }
        VendorFigure {
            gbs: Some(mb_per_s as f64 / 1000.0),
            kind: VendorSource::Smbios,
            source,
        }
    }
}

/// Every type-17 entry under `root`, sorted by entry name. Errors say why none could be read.
fn read_devices(root: &Path) -> Result<Vec<MemoryDevice>> {
    let dir = root.join("sys/firmware/dmi/entries");
    let entries = fs::read_dir(&dir).map_err(|e| {
        Error::machine(match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("no SMBIOS memory table ({} is missing)", dir.display())
            }
            _ => format!("no SMBIOS memory table ({}: {e})", dir.display()),
        })
    })?;
    let mut paths: Vec<_> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("17-")))
        .map(|e| e.path().join("raw"))
        .collect();
    if paths.is_empty() {
        return Err(Error::machine(format!(
            "no SMBIOS memory devices (no 17-* entries in {})",
            dir.display()
        )));
    }
    paths.sort();
    let mut devices = Vec::new();
    for path in paths {
        let raw = fs::read(&path).map_err(|e| {
            Error::machine(format!(
                "cannot read {}: {e} (SMBIOS entries are readable by root only)",
                path.display()
            ))
        })?;
        if let Some(d) = MemoryDevice::parse(&raw) {
            devices.push(d);
        }
    }
    Ok(devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type-17 structure of `len` bytes with the given fields (little-endian).
    fn entry(len: u8, size: u16, width: u16, speed: u16, configured: u16) -> Vec<u8> {
        let mut b = vec![0u8; len as usize];
        b[0] = 17;
        b[1] = len;
        let mut put16 = |off: usize, v: u16| {
            if off + 2 <= b.len() {
                b[off..off + 2].copy_from_slice(&v.to_le_bytes());
            }
        };
        put16(0x08, width.saturating_add(8));
        put16(0x0A, width);
        put16(0x0C, size);
        put16(0x15, speed);
        put16(0x20, configured);
        b[0x12] = 0x1A;
        b.extend_from_slice(b"DIMM0\0\0");
        b
    }

    #[test]
    fn configured_speed_wins_over_rated() {
        let d = MemoryDevice::parse(&entry(0x28, 16384, 64, 3200, 2933)).unwrap();
        assert_eq!(d.speed_mts, Some(2933));
        assert_eq!(d.data_width, Some(64));
        assert!(d.populated);
    }

    #[test]
    fn old_tables_without_configured_speed_use_rated_speed() {
        // SMBIOS 2.6: 0x1C bytes, no Configured Memory Speed.
        let d = MemoryDevice::parse(&entry(0x1C, 8192, 64, 1600, 0)).unwrap();
        assert_eq!(d.speed_mts, Some(1600));
    }

    #[test]
    fn extended_speeds_are_read_when_the_word_is_ffff() {
        let mut raw = entry(0x5C, 0x7FFF, 64, 0xFFFF, 0xFFFF);
        raw[0x1C..0x20].copy_from_slice(&65536u32.to_le_bytes());
        raw[0x54..0x58].copy_from_slice(&70000u32.to_le_bytes());
        raw[0x58..0x5C].copy_from_slice(&68000u32.to_le_bytes());
        let d = MemoryDevice::parse(&raw).unwrap();
        assert!(d.populated);
        assert_eq!(d.speed_mts, Some(68000));
    }

    #[test]
    fn empty_slots_and_other_types_are_not_devices() {
        assert!(
            !MemoryDevice::parse(&entry(0x28, 0, 64, 3200, 3200))
                .unwrap()
                .populated
        );
        let mut other = entry(0x28, 16384, 64, 3200, 3200);
        other[0] = 16;
        assert_eq!(MemoryDevice::parse(&other), None);
        assert_eq!(MemoryDevice::parse(&[17]), None);
        assert_eq!(MemoryDevice::parse(&[17, 0x28, 0]), None);
    }

    #[test]
    fn figure_sums_populated_devices_and_names_them() {
        let devs: Vec<MemoryDevice> = [
            entry(0x28, 16384, 64, 3200, 3200),
            entry(0x28, 0, 64, 0, 0),
            entry(0x28, 16384, 64, 3200, 3200),
            entry(0x28, 16384, 0xFFFF, 3200, 3200),
        ]
        .iter()
        .filter_map(|r| MemoryDevice::parse(r))
        .collect();
        let f = VendorFigure::from_devices(&devs);
        assert_eq!(f.gbs, Some(51.2));
        assert!(
            f.source.starts_with("SMBIOS: 2 × DDR4-3200 × 64 bit"),
            "{}",
            f.source
        );
        assert!(
            f.source
                .contains("1 populated device(s) without speed or width")
        );
    }
}
