//! `sysctl` values, the way macOS says what the machine is: one map of name → text, filled
//! from the running system (macOS) or from `sysctl.txt` under a fixture root, which holds what
//! `sysctl NAME…` prints (`name: value` lines). The builders in `topology`, `host` and `vendor`
//! read only this map, so they run and are tested on any OS against listings of real Macs.

use crate::base::error::{Error, Result};
use crate::platform;
use std::collections::BTreeMap;
use std::path::Path;

/// The fixture file under a root.
const FIXTURE_FILE: &str = "sysctl.txt";

/// Most performance levels read from a live system (Apple ships two today).
const MAX_LEVELS: u64 = 8;

/// Names that hold text; every other name read live holds an integer (or, for
/// `vm.swapusage`, an `xsw_usage`).
const STRINGS: &[&str] = &["machdep.cpu.brand_string", "hw.model", "kern.osrelease"];

/// Integers (and `hw.cacheconfig`, an array of them) the readers use, read once for the machine.
const MACHINE_INTS: &[&str] = &[
    "hw.nperflevels",
    "hw.physicalcpu",
    "hw.logicalcpu",
    "hw.memsize",
    "hw.pagesize",
    "hw.packages",
    "hw.l1dcachesize",
    "hw.l2cachesize",
    "hw.l3cachesize",
    "hw.cacheconfig",
    // Intel Macs only; the fingerprint's microcode.
    "machdep.cpu.microcode_version",
    // The core design, which `uarch` looks the load and store ports up by.
    "hw.cpufamily",
];

/// Per performance level `hw.perflevelN.*` names.
const LEVEL_KEYS: &[&str] = &[
    "physicalcpu",
    "logicalcpu",
    "l1dcachesize",
    "l2cachesize",
    "cpusperl2",
    "l3cachesize",
    "cpusperl3",
    "name",
];

/// What the host sampler reads each time.
pub(crate) const HOST_NAMES: &[&str] = &[
    "vm.swapusage",
    "kern.memorystatus_vm_pressure_level",
    "hw.memsize",
];

/// `sysctl` values by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sysctl {
    values: BTreeMap<String, String>,
    /// Where they came from, for messages: a fixture path or "sysctl".
    source: String,
}

impl Sysctl {
    /// Parses what `sysctl NAME…` prints: `name: value` per line (`name = value` is taken too).
    /// Lines without a name, and `sysctl: unknown oid …` complaints, are skipped.
    pub fn parse(text: &str, source: &str) -> Sysctl {
        let values = text
            .lines()
            .filter(|l| !l.starts_with("sysctl:"))
            .filter_map(|line| {
                let (name, value) = line.split_once(": ").or_else(|| line.split_once(" = "))?;
                let name = name.trim();
                (!name.is_empty() && !name.contains(' '))
                    .then(|| (name.to_string(), value.trim().to_string()))
            })
            .collect();
        Sysctl {
            values,
            source: source.to_string(),
        }
    }

    /// The values for the machine under `root`: `root/sysctl.txt` when it exists, else the
    /// running system's when `root` is `/` and the OS has `sysctl` (macOS). `None` means the
    /// machine is described by sysfs and /proc instead.
    pub fn under(root: &Path) -> Option<Sysctl> {
        match Sysctl::fixture(root) {
            Some(s) => Some(s),
            None if is_live_mac(root) => Sysctl::live(),
            None => None,
        }
    }

    /// `root/sysctl.txt`, when there is one.
    pub(crate) fn fixture(root: &Path) -> Option<Sysctl> {
        let file = root.join(FIXTURE_FILE);
        let text = std::fs::read_to_string(&file).ok()?;
        Some(Sysctl::parse(&text, &file.display().to_string()))
    }

    /// The machine's values from the running system, or `None` where there is no `sysctl`.
    pub(crate) fn live() -> Option<Sysctl> {
        platform::sysctl_bytes("hw.memsize")?;
        let mut names: Vec<String> = STRINGS
            .iter()
            .chain(MACHINE_INTS)
            .chain(HOST_NAMES)
            .map(|n| n.to_string())
            .collect();
        let levels = read_live("hw.nperflevels")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            .min(MAX_LEVELS);
        for n in 0..levels {
            names.extend(LEVEL_KEYS.iter().map(|k| format!("hw.perflevel{n}.{k}")));
        }
        Some(Sysctl::read_live_names(&names))
    }

    /// Reads `names` from the running system (those that exist).
    pub(crate) fn read_live_names(names: &[String]) -> Sysctl {
        Sysctl {
            values: names
                .iter()
                .filter_map(|n| Some((n.clone(), read_live(n)?)))
                .collect(),
            source: "sysctl".to_string(),
        }
    }

    /// The text of `name`, when listed.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// `name` as a non-negative integer: `Ok(None)` when not listed, an error naming it when
    /// listed but not an integer.
    pub(crate) fn int(&self, name: &str) -> Result<Option<u64>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                Error::machine(format!(
                    "{}: {name} is '{v}', not a whole number",
                    self.source
                ))
            }),
        }
    }

    /// Like [`Sysctl::int`], but required.
    pub(crate) fn required_int(&self, name: &str) -> Result<u64> {
        self.int(name)?
            .ok_or_else(|| Error::machine(format!("{}: no {name}", self.source)))
    }

    pub fn source(&self) -> &str {
        &self.source
    }
}

/// Whether `root` is the running system and it has `sysctl` values (macOS).
pub(crate) fn is_live_mac(root: &Path) -> bool {
    root == Path::new("/") && platform::sysctl_bytes("hw.memsize").is_some()
}

/// One live value as `sysctl` prints it.
fn read_live(name: &str) -> Option<String> {
    decode(name, &platform::sysctl_bytes(name)?)
}

/// A raw value as text: strings up to their NUL, `vm.swapusage` as `sysctl` prints it, other
/// names as native-endian integers of 4 or 8 bytes.
pub(crate) fn decode(name: &str, raw: &[u8]) -> Option<String> {
    if STRINGS.contains(&name) || name.ends_with(".name") {
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        return Some(String::from_utf8_lossy(&raw[..end]).trim().to_string());
    }
    if name == "vm.swapusage" {
        return decode_swapusage(raw);
    }
    if name == "hw.cacheconfig" {
        // An array of u64: CPUs sharing memory, L1, L2, L3, …
        let words: Option<Vec<String>> = raw
            .chunks(8)
            .map(|w| Some(u64::from_ne_bytes(w.try_into().ok()?).to_string()))
            .collect();
        return words.map(|w| w.join(" "));
    }
    match raw.len() {
        4 => Some(i32::from_ne_bytes(raw.try_into().ok()?).to_string()),
        8 => Some(i64::from_ne_bytes(raw.try_into().ok()?).to_string()),
        _ => None,
    }
}

/// `struct xsw_usage { u64 total, avail, used; u32 pagesize; boolean_t encrypted; }` as
/// `sysctl vm.swapusage` prints it: `total = 2048.00M  used = 1079.50M  free = 968.50M
/// (encrypted)`.
fn decode_swapusage(raw: &[u8]) -> Option<String> {
    let u64_at = |i: usize| Some(u64::from_ne_bytes(raw.get(i..i + 8)?.try_into().ok()?));
    let (total, avail, used) = (u64_at(0)?, u64_at(8)?, u64_at(16)?);
    let encrypted = raw.get(28..32)?.iter().any(|&b| b != 0);
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    Some(format!(
        "total = {:.2}M  used = {:.2}M  free = {:.2}M  {}",
        mib(total),
        mib(used),
        mib(avail),
        if encrypted { "(encrypted)" } else { "" }
    ))
}

/// Swap total and used bytes from `vm.swapusage` text (`total = 13312.00M  used = 12138.06M
/// free = 1173.94M  (encrypted)`; sizes in M or G).
pub fn parse_swapusage(text: &str) -> Option<(u64, u64)> {
    let field = |key: &str| -> Option<u64> {
        let rest = text.split(&format!("{key} = ")).nth(1)?;
        let word = rest.split_whitespace().next()?;
        let (num, unit) = word.split_at(word.len().checked_sub(1)?);
        let scale = match unit {
            "K" => 1u64 << 10,
            "M" => 1 << 20,
            "G" => 1 << 30,
            _ => return None,
        };
        let v: f64 = num.parse().ok()?;
        (v.is_finite() && v >= 0.0).then(|| (v * scale as f64).round() as u64)
    };
    Some((field("total")?, field("used")?))
}

/// The three load averages from `vm.loadavg` text: `{ 1.83 1.74 1.72 }`.
pub(crate) fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split_whitespace()
        .map(|v| v.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0));
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_parse_and_complaints_are_skipped() {
        let s = Sysctl::parse(
            "hw.ncpu: 14\nmachdep.cpu.brand_string: Apple M4 Pro\nhw.osenvironment: \n\
             sysctl: unknown oid 'hw.cpufrequency_max'\nvm.swapusage: total = 1.00M  used = 0.50M  free = 0.50M  \n",
            "test",
        );
        assert_eq!(s.int("hw.ncpu").unwrap(), Some(14));
        assert_eq!(s.get("machdep.cpu.brand_string"), Some("Apple M4 Pro"));
        assert_eq!(s.int("hw.nperflevels").unwrap(), None);
        assert!(s.get("sysctl").is_none());
        assert!(
            s.int("machdep.cpu.brand_string")
                .unwrap_err()
                .to_string()
                .contains("not a whole")
        );
        assert!(
            s.required_int("hw.memsize")
                .unwrap_err()
                .to_string()
                .contains("no hw.memsize")
        );
    }

    #[test]
    fn raw_values_decode_as_sysctl_prints_them() {
        assert_eq!(
            decode("hw.nperflevels", &2i32.to_ne_bytes()),
            Some("2".into())
        );
        assert_eq!(
            decode("hw.memsize", &68719476736i64.to_ne_bytes()),
            Some("68719476736".into())
        );
        assert_eq!(
            decode("machdep.cpu.brand_string", b"Apple M4 Pro\0"),
            Some("Apple M4 Pro".into())
        );
        assert_eq!(
            decode("hw.perflevel1.name", b"Efficiency\0"),
            Some("Efficiency".into())
        );
        assert_eq!(decode("hw.ncpu", &[1, 2, 3]), None);
        let config: Vec<u8> = [12u64, 2, 2, 12]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(decode("hw.cacheconfig", &config), Some("12 2 2 12".into()));
        let mut xsw = Vec::new();
        for v in [13312u64 << 20, 1_230_965_309, 12_727_678_403] {
            xsw.extend_from_slice(&v.to_ne_bytes());
        }
        xsw.extend_from_slice(&16384u32.to_ne_bytes());
        xsw.extend_from_slice(&1i32.to_ne_bytes());
        let text = decode("vm.swapusage", &xsw).unwrap();
        assert_eq!(
            text,
            "total = 13312.00M  used = 12138.06M  free = 1173.94M  (encrypted)"
        );
        assert_eq!(
            parse_swapusage(&text),
            Some((13312 << 20, (12138.06f64 * 1048576.0).round() as u64))
        );
    }

    #[test]
    fn swap_and_load_texts() {
        assert_eq!(
            parse_swapusage("total = 2.00G  used = 0.00M  free = 2048.00M  (encrypted)"),
            Some((2 << 30, 0))
        );
        assert_eq!(parse_swapusage("total = lots"), None);
        assert_eq!(
            parse_loadavg("{ 11.55 8.77 8.24 }"),
            Some([11.55, 8.77, 8.24])
        );
        assert_eq!(parse_loadavg("{ 1.0 x 2 }"), None);
    }

    #[test]
    fn a_root_without_a_listing_is_not_a_mac_here() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Sysctl::under(dir.path()).is_none());
        std::fs::write(dir.path().join(FIXTURE_FILE), "hw.memsize: 1024\n").unwrap();
        let s = Sysctl::under(dir.path()).unwrap();
        assert_eq!(s.int("hw.memsize").unwrap(), Some(1024));
        assert!(s.source().ends_with(FIXTURE_FILE));
    }
}
