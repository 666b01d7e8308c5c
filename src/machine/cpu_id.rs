//! Which CPU design the machine runs: the vendor, family, model and stepping an x86 CPU reports,
//! the implementer and part in an Arm core's MIDR, or an Apple chip's `hw.cpufamily`.
//!
//! The model name (`Topology::model`) is for people; this is what a table of cores is looked up
//! by (`uarch`), since one design is sold under many names and one name can hide a VM's guess.
//! Read under a root like everything in `machine`: /proc/cpuinfo (x86, Arm), the MIDR register
//! as sysfs shows it (Arm), or the `sysctl` values (macOS).

use super::sysctl::Sysctl;
use std::fs;
use std::path::Path;

/// The CPU design, as the processor itself reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuId {
    /// An x86-64 CPU: CPUID's vendor string and its display family, model and stepping.
    X86 {
        vendor: String,
        family: u32,
        model: u32,
        stepping: Option<u32>,
    },
    /// An Arm core on Linux: the MIDR's implementer (0x41 Arm, 0x61 Apple, …), primary part
    /// number, variant and revision (`r1p1` is variant 1, revision 1).
    Arm {
        implementer: u32,
        part: u32,
        variant: Option<u32>,
        revision: Option<u32>,
    },
    /// An Apple chip under macOS: `hw.cpufamily` (one value per core design pair, absent from
    /// some listings) and the brand string.
    Apple {
        cpufamily: Option<u32>,
        brand: String,
    },
}

/// Where sysfs shows cpu0's MIDR (arm64 Linux).
const MIDR: &str = "sys/devices/system/cpu/cpu0/regs/identification/midr_el1";

/// The CPU design of the machine under `root` (`/` in production): from `sysctl` values on a
/// Mac (the running one, or a root with a `sysctl.txt` listing), else from /proc/cpuinfo and the
/// MIDR in sysfs. `None` when neither says (another architecture, a trimmed /proc).
pub fn read(root: &Path) -> Option<CpuId> {
    match Sysctl::under(root) {
        Some(values) => from_sysctl(&values),
        None => {
            let cpuinfo = fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
            let midr = fs::read_to_string(root.join(MIDR)).ok();
            from_cpuinfo(&cpuinfo).or_else(|| midr.as_deref().and_then(from_midr))
        }
    }
}

/// The design from a Mac's `sysctl` values: an Apple chip by its brand string. (An Intel Mac's
/// brand string names Intel; its family and model are not in the listing the readers ask for.)
pub(crate) fn from_sysctl(values: &Sysctl) -> Option<CpuId> {
    let brand = values.get("machdep.cpu.brand_string")?;
    if !brand.starts_with("Apple") {
        return None;
    }
    // The kernel holds it as a signed 32-bit integer: a value past 2^31 prints negative.
    let cpufamily = values
        .get("hw.cpufamily")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map(|v| v as u32);
    Some(CpuId::Apple {
        cpufamily,
        brand: brand.to_string(),
    })
}

/// The design from /proc/cpuinfo's first processor: `vendor_id`, `cpu family`, `model`,
/// `stepping` (x86), or `CPU implementer`, `CPU part`, `CPU variant`, `CPU revision` (Arm).
pub(crate) fn from_cpuinfo(text: &str) -> Option<CpuId> {
    // The first processor's block: every core of a uniform machine says the same.
    let block = text.split("\n\n").find(|b| !b.trim().is_empty())?;
    let field = |key: &str| {
        block.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let int = |key: &str| field(key).and_then(|v| parse_int(&v));
    if let (Some(vendor), Some(family), Some(model)) =
        (field("vendor_id"), int("cpu family"), int("model"))
    {
        return Some(CpuId::X86 {
            vendor,
            family,
            model,
            stepping: int("stepping"),
        });
    }
    Some(CpuId::Arm {
        implementer: int("CPU implementer")?,
        part: int("CPU part")?,
        variant: int("CPU variant"),
        revision: int("CPU revision"),
    })
}

/// The design from a MIDR_EL1 value as sysfs prints it (`0x00000000413fd0c1`): implementer in
/// bits 31–24, variant 23–20, part 15–4, revision 3–0.
pub(crate) fn from_midr(text: &str) -> Option<CpuId> {
    let midr = u64::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()?;
    let bits = |shift: u32, width: u32| ((midr >> shift) & ((1 << width) - 1)) as u32;
    (midr != 0).then(|| CpuId::Arm {
        implementer: bits(24, 8),
        part: bits(4, 12),
        variant: Some(bits(20, 4)),
        revision: Some(bits(0, 4)),
    })
}

/// A decimal or `0x` hexadecimal number, as /proc/cpuinfo writes them.
fn parse_int(text: &str) -> Option<u32> {
    match text.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

impl std::fmt::Display for CpuId {
    /// `AuthenticAMD family 25 model 1 stepping 1`, `Arm implementer 0x41 part 0xd0c r3p1`,
    /// `Apple M1 (hw.cpufamily 0x1b588bb3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuId::X86 {
                vendor,
                family,
                model,
                stepping,
            } => {
                write!(f, "{vendor} family {family} model {model}")?;
                match stepping {
                    Some(s) => write!(f, " stepping {s}"),
                    None => Ok(()),
                }
            }
            CpuId::Arm {
                implementer,
                part,
                variant,
                revision,
            } => {
                write!(f, "Arm implementer {implementer:#04x} part {part:#05x}")?;
                match (variant, revision) {
                    (Some(v), Some(r)) => write!(f, " r{v}p{r}"),
                    _ => Ok(()),
                }
            }
            CpuId::Apple { cpufamily, brand } => match cpufamily {
                Some(c) => write!(f, "{brand} (hw.cpufamily {c:#010x})"),
                None => write!(f, "{brand} (no hw.cpufamily)"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_midr_splits_into_its_fields() {
        assert_eq!(
            from_midr("0x00000000413fd0c1\n"),
            Some(CpuId::Arm {
                implementer: 0x41,
                part: 0xd0c,
                variant: Some(3),
                revision: Some(1),
            })
        );
        assert_eq!(from_midr("0x0"), None);
        assert_eq!(from_midr("junk"), None);
    }

    #[test]
    fn cpuinfo_without_the_fields_says_nothing() {
        assert_eq!(
            from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC\n"),
            None
        );
        assert_eq!(from_cpuinfo(""), None);
    }

    #[test]
    fn a_negative_cpufamily_is_the_unsigned_value() {
        let values = Sysctl::parse(
            "machdep.cpu.brand_string: Apple M2\nhw.cpufamily: -634136515\n",
            "test",
        );
        assert_eq!(
            from_sysctl(&values),
            Some(CpuId::Apple {
                cpufamily: Some(0xda33d83d),
                brand: "Apple M2".into()
            })
        );
    }
}
