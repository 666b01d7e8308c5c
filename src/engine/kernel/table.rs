//! What a loop of the kernel tables is: the instruction set and store kind it is built for
//! (`Isa`, `Stores`, together a `Kernel`), the table entry (`Variant`), and where the arrays
//! it suits live (`Residence`). The tables themselves are the architectures' modules; what
//! this CPU runs of them is `mod.rs`.

use super::op::{Op, OpFn, UnknownName};
use std::fmt;
use std::str::FromStr;

/// Instruction sets stream-top has a triad for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    Avx512,
    Avx2,
    Sse2,
    Neon,
    Portable,
}

/// How the kernel writes `a`: through the caches, or with non-temporal (streaming) stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Stores {
    #[default]
    Normal,
    Nt,
}

/// The variant that runs: instruction set and store kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kernel {
    pub isa: Isa,
    pub stores: Stores,
}

/// One pass of the triad over `n` elements. The pointers must be valid for `n` elements and
/// must not overlap. They need no alignment beyond `f64`'s own 8 bytes (the kernels align their
/// stores themselves; for non-temporal stores an `a` that is not even 8-byte aligned falls back
/// to normal stores). `n` may be anything, 0 included.
pub type TriadFn = OpFn;

/// One loop of the table: an instruction set, a store kind and a loop body, with the functions
/// that run one pass of it. All of a [`Kernel`]'s loops compute the same thing; they differ in
/// speed, by CPU and by where the arrays live.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// Unique in the table for its op: the kernel's short name and the loop, e.g.
    /// `avx2-nt ymm fma`.
    pub name: &'static str,
    /// The traffic pattern the loop runs.
    pub op: Op,
    pub(crate) isa: Isa,
    pub stores: Stores,
    /// Whether this CPU can run it.
    pub available: fn() -> bool,
    /// Whether [`Kernel::pass_function`] picks this loop on this CPU for arrays that live
    /// there: exactly one of a kernel's loops says so for each [`Residence`].
    pub(crate) default_for: fn(Residence) -> bool,
    /// One pass, non-temporal stores not fenced (call [`Kernel::fence`] after the last).
    pub pass: TriadFn,
    /// One pass, non-temporal stores fenced at its end; the same function as `pass` for
    /// normal stores.
    pub(crate) fenced: TriadFn,
}

/// A `default_for` for a kernel with one loop: it, wherever the arrays live.
pub(super) fn always(_: Residence) -> bool {
    true
}

/// Where the arrays of a pass live, as far as the caller knows (the engine: `dram` and explicit
/// sets beyond the last-level cache are `Memory`, the rest `Cache`). Only picks among loops
/// that compute the same thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Residence {
    #[default]
    Cache,
    Memory,
}

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
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Isa::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                UnknownName(format!(
                    "unknown kernel '{s}' (one of avx512, avx2, sse2, neon, portable)"
                ))
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

impl FromStr for Stores {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" => Ok(Stores::Normal),
            "nt" => Ok(Stores::Nt),
            _ => Err(UnknownName(format!(
                "unknown stores '{s}' (one of normal, nt)"
            ))),
        }
    }
}
