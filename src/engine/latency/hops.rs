//! The hops of the chase: `p = *p`, [`UNROLL`] times per loop turn, in `asm!` on x86-64 and
//! aarch64 and in plain Rust (`read_volatile`) elsewhere. Each load's address is the value the
//! previous load returned, so no two loads overlap: the time per hop is the load-to-use
//! latency of wherever the line sits. The loop's counter and branch run beside the chain and
//! cost nothing on an out-of-order core.

/// Hops per loop turn.
pub const UNROLL: u64 = 32;

/// Which implementation of the hops runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walker {
    /// Unrolled `mov r, [r]` (x86-64) or `ldr x, [x]` (aarch64); the portable loop elsewhere.
    Asm,
    /// A `read_volatile` chain in Rust, on every architecture.
    Portable,
}

impl Walker {
    /// The asm walker where this architecture has one, else the portable one.
    pub fn native() -> Walker {
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            Walker::Asm
        } else {
            Walker::Portable
        }
    }

    /// For reports: `x86-64 asm`, `aarch64 asm`, `portable`.
    pub fn name(self) -> &'static str {
        match self {
            Walker::Asm if cfg!(target_arch = "x86_64") => "x86-64 asm",
            Walker::Asm if cfg!(target_arch = "aarch64") => "aarch64 asm",
            _ => "portable",
        }
    }

    /// Follows the chain `blocks × UNROLL` hops from `p` and returns where it ends (`p` itself
    /// when `blocks` is 0).
    ///
    /// # Safety
    ///
    /// Every address reached from `p` within that many hops, `p` included, must be an aligned
    /// `usize` in memory that stays mapped and unwritten for the call, holding the next
    /// address.
    pub unsafe fn run(self, p: *const usize, blocks: u64) -> *const usize {
        if blocks == 0 {
            return p;
        }
        match self {
            // SAFETY: the caller's contract, passed on unchanged; blocks ≥ 1.
            Walker::Asm => unsafe { native::hops(p, blocks) },
            // SAFETY: as above.
            Walker::Portable => unsafe { portable(p, blocks) },
        }
    }
}

/// The portable chain: each address comes from a volatile load of the one before, which the
/// compiler may neither drop, merge nor reorder.
///
/// # Safety
///
/// As [`Walker::run`].
unsafe fn portable(mut p: *const usize, blocks: u64) -> *const usize {
    for _ in 0..blocks {
        for _ in 0..UNROLL {
            // SAFETY: the caller guarantees every address on the chain is a readable usize.
            p = unsafe { std::ptr::read_volatile(p) } as *const usize;
        }
    }
    p
}

#[cfg(target_arch = "x86_64")]
mod native {
    use std::arch::asm;

    /// `blocks × 32` dependent `mov p, [p]`.
    ///
    /// # Safety
    ///
    /// As [`super::Walker::run`], and `blocks` ≥ 1.
    pub(super) unsafe fn hops(p: *const usize, blocks: u64) -> *const usize {
        let mut p = p;
        // SAFETY: the caller guarantees every address the chain reaches is a readable,
        // aligned usize; the block only reads memory, uses no stack, and `n` counts down to 0
        // from at least 1 (the `.rept` count is UNROLL).
        unsafe {
            asm!(
                "2:",
                ".rept 32",
                "mov {p}, qword ptr [{p}]",
                ".endr",
                "dec {n}",
                "jnz 2b",
                p = inout(reg) p,
                n = inout(reg) blocks => _,
                options(readonly, nostack),
            );
        }
        p
    }
}

#[cfg(target_arch = "aarch64")]
mod native {
    use std::arch::asm;

    /// `blocks × 32` dependent `ldr p, [p]`.
    ///
    /// # Safety
    ///
    /// As [`super::Walker::run`], and `blocks` ≥ 1.
    pub(super) unsafe fn hops(p: *const usize, blocks: u64) -> *const usize {
        let mut p = p;
        // SAFETY: the caller guarantees every address the chain reaches is a readable,
        // aligned usize; the block only reads memory, uses no stack, and `n` counts down to 0
        // from at least 1 (the `.rept` count is UNROLL).
        unsafe {
            asm!(
                "2:",
                ".rept 32",
                "ldr {p}, [{p}]",
                ".endr",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                p = inout(reg) p,
                n = inout(reg) blocks => _,
                options(readonly, nostack),
            );
        }
        p
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod native {
    /// No asm here: the portable chain.
    ///
    /// # Safety
    ///
    /// As [`super::Walker::run`].
    pub(super) unsafe fn hops(p: *const usize, blocks: u64) -> *const usize {
        // SAFETY: the caller's contract, passed on.
        unsafe { super::portable(p, blocks) }
    }
}
