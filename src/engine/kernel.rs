//! The triad `a[i] = b[i] + s*c[i]`, one variant per instruction set, chosen at run time.
//!
//! Each variant is reached through a function pointer, so every pass is an opaque call that the
//! compiler can neither merge with the next pass nor drop.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Instruction sets stream-top has a triad for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    Avx512,
    Avx2,
    Sse2,
    Neon,
    Portable,
}

/// How the kernel writes `a`: through the caches, or with non-temporal (streaming) stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stores {
    #[default]
    Normal,
    Nt,
}

/// The variant that runs: instruction set and store kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Kernel {
    pub isa: Isa,
    pub stores: Stores,
}

/// One pass of the triad over `n` elements. The pointers must be valid for `n` elements and
/// must not overlap; they need no particular alignment.
pub type TriadFn = unsafe fn(a: *mut f64, b: *const f64, c: *const f64, n: usize, s: f64);

impl Isa {
    pub const ALL: [Isa; 5] = [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Neon, Isa::Portable];

    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Sse2 => "sse2",
            Isa::Neon => "neon",
            Isa::Portable => "portable",
        }
    }

    /// Whether this CPU can run the variant.
    pub fn available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => true,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => true,
            Isa::Portable => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The fastest variant this CPU has.
    pub fn best() -> Isa {
        Isa::ALL
            .into_iter()
            .find(|i| i.available())
            .unwrap_or(Isa::Portable)
    }

    /// Whether the variant has non-temporal stores.
    pub fn has_nt(self) -> bool {
        !matches!(self, Isa::Portable)
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Isa::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown kernel '{s}' (one of avx512, avx2, sse2, neon, portable)")
            })
    }
}

impl fmt::Display for Stores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stores::Normal => "normal",
            Stores::Nt => "nt",
        })
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stores {
            Stores::Normal => write!(f, "{}", self.isa),
            Stores::Nt => write!(f, "{} (non-temporal stores)", self.isa),
        }
    }
}

impl Kernel {
    /// The kernel to run: the one asked for (refused when the CPU lacks it or it has no
    /// non-temporal stores and they were asked for), or the best the CPU has.
    pub fn resolve(isa: Option<Isa>, stores: Stores) -> Result<Kernel, String> {
        let isa = match isa {
            Some(i) if !i.available() => {
                return Err(format!("--kernel {i}: this CPU does not support it"));
            }
            Some(i) => i,
            None => Isa::best(),
        };
        if stores == Stores::Nt && !isa.has_nt() {
            return Err(format!(
                "--stores nt: the {isa} kernel has no non-temporal stores"
            ));
        }
        Ok(Kernel { isa, stores })
    }

    /// The function that runs one pass of this variant.
    pub fn function(self) -> TriadFn {
        triad_portable
    }
}

/// Portable fallback: a plain loop the compiler may vectorise for the baseline target.
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, `a` not overlapping `b` or `c`.
unsafe fn triad_portable(a: *mut f64, b: *const f64, c: *const f64, n: usize, s: f64) {
    // SAFETY: the caller guarantees validity and no overlap for n elements.
    let (a, b, c) = unsafe {
        (
            std::slice::from_raw_parts_mut(a, n),
            std::slice::from_raw_parts(b, n),
            std::slice::from_raw_parts(c, n),
        )
    };
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}
