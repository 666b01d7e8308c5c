//! The hardware fingerprint: what decides a node's memory bandwidth, read where the host
//! exposes it, so that `fleet` can say *why* a node is slower than its peers (a DIMM missing,
//! a channel at a lower speed, another BIOS, THP off, corrected memory errors).
//!
//! Every field the platform cannot give is `Missing` with the reason, never 0 and never a
//! guess. The hardware class is a short hash of what a node is built to be (CPU model,
//! sockets, DIMM slots, the usual module size and rated speed), so that a node with a DIMM
//! missing or one module slowed is still judged against the peers it should match.
//! Everything is read under a root path (`/` in production, a fixture tree in tests): on
//! Linux from sysfs, /proc and SMBIOS (`read`), on a Mac from `sysctl` and `system_profiler`
//! (`mac`).

mod mac;
mod read;
pub mod smbios;

pub use mac::parse_memory_profile;
pub use read::read;
pub use smbios::Dimm;

use serde::{Deserialize, Serialize};

/// A value the host gave, or why it gave none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Known<T> {
    Value(T),
    Missing(String),
}

impl<T> Known<T> {
    /// The value, when there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Known::Value(v) => Some(v),
            Known::Missing(_) => None,
        }
    }

    /// The value in words, or `–` with the reason.
    pub fn text(&self, show: impl Fn(&T) -> String) -> String {
        match self {
            Known::Value(v) => show(v),
            Known::Missing(why) => format!("– ({why})"),
        }
    }
}

/// BIOS vendor, version and release date as `/sys/class/dmi/id` gives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bios {
    pub vendor: String,
    pub version: String,
    pub date: String,
}

/// One memory controller's EDAC error counts since boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edac {
    /// `mc0`, `mc1`, …
    controller: String,
    corrected: u64,
    uncorrected: u64,
}

/// What a node is, for judging it against its peers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The node's name (`--node`, else the hostname).
    pub node: String,
    /// What tells two machines apart when they claim one name (`/etc/machine-id`).
    pub machine_id: Known<String>,
    pub(crate) cpu_model: String,
    pub(crate) sockets: usize,
    /// Every SMBIOS type-17 slot, populated or empty, in entry order.
    pub dimms: Known<Vec<Dimm>>,
    pub bios: Known<Bios>,
    pub microcode: Known<String>,
    pub kernel_release: Known<String>,
    /// The transparent huge page mode in force.
    pub thp: Known<String>,
    /// cpu0's frequency governor.
    pub governor: Known<String>,
    pub boost: Known<bool>,
    pub zone_reclaim_mode: Known<u64>,
    pub numa_balancing: Known<u64>,
    /// EDAC counts per memory controller.
    pub edac: Known<Vec<Edac>>,
}

impl Fingerprint {
    /// The populated DIMMs, when the table was read.
    pub fn populated(&self) -> Option<Vec<&Dimm>> {
        let dimms = self.dimms.value()?;
        Some(dimms.iter().filter(|d| d.populated()).collect())
    }

    /// Channels: one per populated DIMM, the assumption the vendor figure states too.
    pub fn channels(&self) -> Option<usize> {
        self.populated().map(|p| p.len()).filter(|&n| n > 0)
    }

    /// The theoretical peak in GB/s: Σ over populated DIMMs of MT/s × 8 B (channels × MT/s ×
    /// 8 B when every module runs at one speed).
    pub fn peak_gbs(&self) -> Option<f64> {
        let p = self.populated()?;
        let speeds: Option<Vec<u32>> = p.iter().map(|d| d.speed()).collect();
        let total: u64 = speeds?.iter().map(|&s| u64::from(s) * 8).sum();
        (total > 0).then(|| total as f64 / 1000.0)
    }

    /// Corrected and uncorrected errors over every controller.
    pub fn memory_errors(&self) -> Option<(u64, u64)> {
        let e = self.edac.value()?;
        Some(
            e.iter()
                .fold((0, 0), |(c, u), m| (c + m.corrected, u + m.uncorrected)),
        )
    }

    /// The labels of the Prometheus info series: the class, the node and the readable fields
    /// (`–` where the host gives none).
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let dimms = match (self.dimms.value(), self.populated()) {
            (Some(slots), Some(p)) => format!("{} of {}", p.len(), slots.len()),
            _ => "–".to_string(),
        };
        let speed = self
            .populated()
            .and_then(|p| mode(p.iter().filter_map(|d| d.speed())))
            .map_or("–".to_string(), |s| s.to_string());
        let text = |k: &Known<String>| k.value().cloned().unwrap_or_else(|| "–".into());
        vec![
            ("class", self.class()),
            ("node", self.node.clone()),
            ("cpu", self.cpu_model.clone()),
            ("sockets", self.sockets.to_string()),
            ("dimms", dimms),
            ("dimm_mts", speed),
            (
                "bios",
                self.bios.value().map_or("–".into(), |b| b.version.clone()),
            ),
            ("microcode", text(&self.microcode)),
            ("kernel", text(&self.kernel_release)),
            ("thp", text(&self.thp)),
            ("governor", text(&self.governor)),
        ]
    }

    /// The hardware class: 8 hex digits of a stable hash of what peers must share.
    pub fn class(&self) -> String {
        let dimm_part = match self.dimms.value() {
            Some(d) => {
                let p: Vec<&Dimm> = d.iter().filter(|d| d.populated()).collect();
                let size = mode(p.iter().filter_map(|d| d.size_mib));
                let speed = mode(p.iter().filter_map(|d| d.rated_mts.or(d.configured_mts)));
                format!("{} slots {size:?} MiB {speed:?} MT/s", d.len())
            }
            None => "no DIMM table".to_string(),
        };
        let key = format!("{}|{}|{dimm_part}", self.cpu_model, self.sockets);
        format!("{:08x}", fnv1a(key.as_bytes()) >> 32)
    }
}

/// The most common value (the smallest of equals), None when there is none.
fn mode<T: Ord + Copy>(values: impl Iterator<Item = T>) -> Option<T> {
    let mut v: Vec<T> = values.collect();
    v.sort();
    let mut best: Option<(T, usize)> = None;
    for chunk in v.chunk_by(|a, b| a == b) {
        if best.is_none_or(|(_, n)| chunk.len() > n) {
            best = Some((chunk[0], chunk.len()));
        }
    }
    best.map(|(t, _)| t)
}

/// FNV-1a, 64 bits: the same class on every build and platform (std's hasher promises not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_published_fnv1a() {
        // The reference value of FNV-1a 64 for "a".
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn mode_takes_the_most_common_value() {
        assert_eq!(mode([4800u32, 4400, 4800].into_iter()), Some(4800));
        assert_eq!(mode(std::iter::empty::<u32>()), None);
    }
}
