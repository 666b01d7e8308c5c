//! SMBIOS type 17 (Memory Device): every DIMM slot the firmware lists, populated or empty,
//! with its size, type, rated and configured speed, rank and locator, parsed from the raw
//! structures in `/sys/firmware/dmi/entries/17-*/raw` (readable by root only). The one reader of
//! those structures: the vendor figure (`machine::vendor`) takes its modules from here too.

use serde::{Deserialize, Serialize};

/// One memory slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimm {
    /// Where the slot is on the board (`DIMM_A1`, `P0 CHANNEL A`).
    pub locator: String,
    /// The module's size in MiB; None for an empty slot (or a size the table calls unknown).
    pub size_mib: Option<u64>,
    /// `DDR4`, `DDR5`, … or the type byte in hex.
    pub memory_type: String,
    /// The module's rated speed in MT/s.
    pub rated_mts: Option<u32>,
    /// The speed the firmware configured, MT/s: what the channel runs at.
    pub configured_mts: Option<u32>,
    pub rank: Option<u8>,
}

impl Dimm {
    /// Whether a module sits in the slot.
    pub fn populated(&self) -> bool {
        self.size_mib.is_some()
    }

    /// The speed the module runs at: the configured speed, else the rated one.
    pub fn speed(&self) -> Option<u32> {
        self.configured_mts.or(self.rated_mts)
    }

    /// Parses one raw structure. None when it is not type 17 or too short for the size.
    pub fn parse(raw: &[u8]) -> Option<Dimm> {
        if raw.len() < 0x0E || raw[0] != 17 {
            return None;
        }
        let len = usize::from(raw[1]).min(raw.len());
        let t = Table { raw, len };
        Some(Dimm {
            locator: t.string(0x10).unwrap_or_default(),
            size_mib: t.size_mib(),
            memory_type: type_name(t.u8_at(0x12).unwrap_or(0)),
            rated_mts: t.speed(0x15, 0x54),
            configured_mts: t.speed(0x20, 0x58),
            rank: t.u8_at(0x1B).map(|a| a & 0x0F).filter(|&r| r != 0),
        })
    }
}

/// What the vendor figure needs of a type-17 structure besides its `Dimm`: the data width in
/// bits (None when unknown) and the memory type byte.
pub(crate) fn width_and_type(raw: &[u8]) -> (Option<u16>, u8) {
    let len = raw.get(1).map_or(0, |&l| usize::from(l).min(raw.len()));
    let t = Table { raw, len };
    (
        t.u16_at(0x0A).filter(|&w| w != 0 && w != 0xFFFF),
        t.u8_at(0x12).unwrap_or(0),
    )
}

/// One structure: its formatted area (`len` bytes) and the strings after it.
struct Table<'a> {
    raw: &'a [u8],
    len: usize,
}

impl Table<'_> {
    fn u8_at(&self, off: usize) -> Option<u8> {
        (off < self.len).then(|| self.raw[off])
    }

    fn u16_at(&self, off: usize) -> Option<u16> {
        (off + 2 <= self.len).then(|| u16::from_le_bytes([self.raw[off], self.raw[off + 1]]))
    }

    fn u32_at(&self, off: usize) -> Option<u32> {
        let b = self.raw.get(off..off + 4).filter(|_| off + 4 <= self.len)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Size: 0 is an empty slot, 0xFFFF unknown, 0x7FFF defers to the extended size (MiB);
    /// bit 15 set counts KiB.
    fn size_mib(&self) -> Option<u64> {
        match self.u16_at(0x0C)? {
            0 | 0xFFFF => None,
            0x7FFF => self
                .u32_at(0x1C)
                .map(|s| u64::from(s & 0x7FFF_FFFF))
                .filter(|&s| s != 0),
            s if s & 0x8000 != 0 => Some(u64::from(s & 0x7FFF) / 1024).filter(|&m| m != 0),
            s => Some(u64::from(s)),
        }
    }

    /// A speed word: 0 unknown, 0xFFFF defers to the 32-bit extended field.
    fn speed(&self, off: usize, ext: usize) -> Option<u32> {
        match self.u16_at(off)? {
            0 => None,
            0xFFFF => self
                .u32_at(ext)
                .map(|s| s & 0x7FFF_FFFF)
                .filter(|&s| s != 0),
            s => Some(u32::from(s)),
        }
    }

    /// The string a byte at `off` numbers (1-based; 0 is none).
    fn string(&self, off: usize) -> Option<String> {
        let n = usize::from(self.u8_at(off)?).checked_sub(1)?;
        let strings = self.raw.get(self.len..)?;
        let s = strings.split(|&b| b == 0).nth(n)?;
        Some(String::from_utf8_lossy(s).trim().to_string()).filter(|s| !s.is_empty())
    }
}

/// The name of a memory type byte (SMBIOS 3.x, table 76), for the types that hold DRAM.
pub(crate) fn known_type(byte: u8) -> Option<&'static str> {
    Some(match byte {
        0x18 => "DDR3",
        0x1A => "DDR4",
        0x1B => "LPDDR",
        0x1C => "LPDDR2",
        0x1D => "LPDDR3",
        0x1E => "LPDDR4",
        0x20 => "HBM",
        0x21 => "HBM2",
        0x22 => "DDR5",
        0x23 => "LPDDR5",
        0x24 => "HBM3",
        _ => return None,
    })
}

/// A type byte as a fingerprint shows it: its name, `Unknown`, or the byte in hex.
fn type_name(byte: u8) -> String {
    match (known_type(byte), byte) {
        (Some(name), _) => name.to_string(),
        (None, 0x02) => "Unknown".to_string(),
        (None, _) => format!("type 0x{byte:02x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type-17 structure of 0x5C bytes with a locator string.
    fn entry(size: u16, rated: u16, configured: u16, rank: u8) -> Vec<u8> {
        let mut b = vec![0u8; 0x5C];
        b[0] = 17;
        b[1] = 0x5C;
        b[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
        b[0x10] = 1;
        b[0x12] = 0x22;
        b[0x15..0x17].copy_from_slice(&rated.to_le_bytes());
        b[0x1B] = rank;
        b[0x20..0x22].copy_from_slice(&configured.to_le_bytes());
        b.extend_from_slice(b"DIMM_A1\0\0");
        b
    }

    #[test]
    fn a_populated_slot_gives_every_field() {
        let d = Dimm::parse(&entry(16384, 4800, 4400, 2)).unwrap();
        assert_eq!(d.locator, "DIMM_A1");
        assert_eq!(d.size_mib, Some(16384));
        assert_eq!(d.memory_type, "DDR5");
        assert_eq!(
            (d.rated_mts, d.configured_mts, d.rank),
            (Some(4800), Some(4400), Some(2))
        );
        assert_eq!(d.speed(), Some(4400));
    }

    #[test]
    fn an_empty_slot_has_no_size() {
        let d = Dimm::parse(&entry(0, 0, 0, 0)).unwrap();
        assert!(!d.populated());
        assert_eq!((d.speed(), d.rank), (None, None));
    }

    #[test]
    fn sizes_in_kib_and_the_extended_size_are_read() {
        assert_eq!(
            Dimm::parse(&entry(0x8000 | 2048, 0, 0, 0))
                .unwrap()
                .size_mib,
            Some(2)
        );
        let mut raw = entry(0x7FFF, 4800, 4800, 1);
        raw[0x1C..0x20].copy_from_slice(&65536u32.to_le_bytes());
        assert_eq!(Dimm::parse(&raw).unwrap().size_mib, Some(65536));
    }

    #[test]
    fn type_bytes_are_named_as_the_vendor_figure_names_them() {
        assert_eq!(type_name(0x24), "HBM3");
        assert_eq!(type_name(0x1D), "LPDDR3");
        assert_eq!(type_name(0x02), "Unknown");
        assert_eq!(type_name(0x99), "type 0x99");
        let raw = entry(16384, 4800, 4800, 2);
        // The fixture's width bytes are 0: unknown, as SMBIOS reads them.
        assert_eq!(width_and_type(&raw), (None, 0x22));
        assert_eq!(width_and_type(&[17]), (None, 0));
    }

    #[test]
    fn other_types_and_short_structures_are_not_dimms() {
        let mut raw = entry(1024, 0, 0, 0);
        raw[0] = 16;
        assert_eq!(Dimm::parse(&raw), None);
        assert_eq!(Dimm::parse(&[17, 4, 0, 0]), None);
    }
}
