//! x86-64 triads: AVX-512F, AVX2+FMA and SSE2, each with normal and non-temporal stores, and
//! [`VARIANTS`], the table `Kernel` picks from.
//!
//! Each variant runs a head until `a` is aligned to the vector, then a main loop of four
//! vectors per iteration written in `asm!`, then single vectors, then a scalar (or masked) tail.
//! The main loop is `asm!` because the compiler's is not good enough for the non-temporal case:
//! std's `_mm256_stream_pd` and friends are themselves inline asm, so LLVM cannot fold the
//! address into them and spends a `lea` per store plus a pointer increment per array. In asm
//! the loop is likwid-bench's, one instruction shorter: the index runs from `-len` up to 0
//! over pointers to the end of the block, so `add` sets the flag `jnz` needs and there is no
//! `cmp`. The normal-store loop is the same with `vmovapd`.
//!
//! The main loop's stores are aligned (the head made them so, which `vmovntpd` requires and
//! which keeps normal stores from splitting lines); loads are unaligned (`b` and `c` need not
//! share `a`'s alignment; VEX and EVEX memory operands need no alignment, SSE2's do, so SSE2
//! folds the load of `b` only when `b` is aligned too). An `a` that is not 8-byte aligned never
//! reaches a vector boundary: the normal variants then run the unaligned tail code throughout,
//! the non-temporal ones hand over to the normal one.
//!
//! `FENCE` ends a non-temporal pass with `sfence`. A pass over an L1-sized slice is a few
//! hundred nanoseconds, and the fence, which waits for the write-combining buffers to drain,
//! makes it about 30 % slower (672 elements, interleaved medians: 46 GB/s fenced, 65 GB/s
//! not; likwid-bench's `stream_mem_*` do not fence at all), so callers that run many passes
//! take the unfenced variant and fence once after the last ([`super::Kernel::pass_function`],
//! [`super::Kernel::fence`]).

use super::{Residence, Variant, always, head_len, scalar_triad};
use std::arch::asm;
use std::arch::x86_64::*;

/// Every x86-64 triad, one entry per loop and store kind (the portable one is `super`'s).
///
/// `default_for` says which loop `Kernel` runs for an instruction set, store kind and
/// [`Residence`]. AVX2 has four loops per store kind: 256- or 128-bit, FMA or mul+add. On AMD
/// (tuned on Zen 3) it runs mul+add, and for normal stores from DRAM the 128-bit loads; the
/// non-temporal loop stays ymm there. Elsewhere it runs likwid-bench's FMA loop, which nothing
/// here could measure against an alternative (see `docs/kernels.md`). The loops no default
/// picks are there for benchmarks, and for a caller that times them all.
#[rustfmt::skip] // a table: one loop a line
pub(super) const VARIANTS: &[Variant] = &[
    //       name                   isa     stores  available   default    function
    variant!("avx512 zmm fma",      Avx512, Normal, has_avx512, always,    triad_avx512),
    variant!("avx512-nt zmm fma",   Avx512, Nt,     has_avx512, always,    triad_avx512),
    variant!("avx2 ymm mul+add",    Avx2,   Normal, has_avx2,   amd_cache, triad_avx2::<false>),
    variant!("avx2 xmm mul+add",    Avx2,   Normal, has_avx2,   amd_mem,   triad_avx2_mem::<false>),
    variant!("avx2 ymm fma",        Avx2,   Normal, has_avx2,   not_amd,   triad_avx2::<true>),
    variant!("avx2 xmm fma",        Avx2,   Normal, has_avx2,   never,     triad_avx2_mem::<true>),
    variant!("avx2-nt ymm mul+add", Avx2,   Nt,     has_avx2,   on_amd,    triad_avx2::<false>),
    variant!("avx2-nt ymm fma",     Avx2,   Nt,     has_avx2,   not_amd,   triad_avx2::<true>),
    variant!("avx2-nt xmm mul+add", Avx2,   Nt,     has_avx2,   never,     triad_avx2_mem::<false>),
    variant!("avx2-nt xmm fma",     Avx2,   Nt,     has_avx2,   never,     triad_avx2_mem::<true>),
    variant!("sse2 xmm mul+add",    Sse2,   Normal, has_sse2,   always,    triad_sse2),
    variant!("sse2-nt xmm mul+add", Sse2,   Nt,     has_sse2,   always,    triad_sse2),
];

fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Every x86-64 CPU has SSE2.
fn has_sse2() -> bool {
    true
}

// `default_for` of the table's loops (and `super::always`).
fn never(_: Residence) -> bool {
    false
}
fn on_amd(_: Residence) -> bool {
    amd()
}
fn not_amd(_: Residence) -> bool {
    !amd()
}
fn amd_cache(residence: Residence) -> bool {
    amd() && residence == Residence::Cache
}
fn amd_mem(residence: Residence) -> bool {
    amd() && residence == Residence::Memory
}

/// Whether the CPU is AMD's. The AVX2 variant's loops were tuned on Zen 3, where `vmulpd` +
/// `vaddpd` beat `vfmadd213pd` by a fifth in L1 and 128-bit loads beat 256-bit ones from DRAM
/// (see `triad_avx2`); elsewhere it runs likwid-bench's FMA loop, which nothing here could
/// measure against an alternative.
pub(super) fn amd() -> bool {
    // SAFETY: cpuid leaf 0 exists on every x86-64 CPU.
    #[allow(unused_unsafe)]
    let r = unsafe { __cpuid(0) };
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&r.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&r.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&r.ecx.to_le_bytes());
    &vendor == b"AuthenticAMD"
}

/// The main loop, four vectors per iteration, over `len` elements (a multiple of four vectors,
/// at least one iteration) from `a`, `b`, `c`, with `a` aligned to the vector. The body:
///
/// - `fma`: likwid-bench's FMA triad: 4 vectors of `c`, `vfmadd213pd` with `b` from memory
///   (VEX and EVEX memory operands need no alignment), 4 stores;
/// - `muladd`: `vmulpd` of `c` from memory by `s`, `vaddpd` with `b` from memory, 4 stores;
/// - `fma: FMA`: `fma` when the constant `FMA` is true, `muladd` otherwise;
/// - `sse b_aligned: B`: 4 vectors of `c`, `mulpd` by `s`, `addpd` with `b` from memory when
///   `B` says `b` is 16-byte aligned (SSE requires it), else with `b` loaded by `movupd` into a
///   scratch register first; 4 stores.
///
/// `nt: NT` picks the store: `vmovapd` / `movapd`, or `vmovntpd` / `movntpd` when `NT`. Every
/// choice is a separate `asm!` block, so a function whose `FMA` and `NT` are constants keeps
/// exactly one loop. The listings are in `docs/kernels.md`.
///
/// Inside, `{a} {b} {c}` point to the end of the block and `{i}` runs from `-len` up to 0.
macro_rules! main_loop {
    (fma: $fma:expr, nt: $nt:expr, $($args:tt)*) => {
        if $fma {
            main_loop!(fma, nt: $nt, $($args)*)
        } else {
            main_loop!(muladd, nt: $nt, $($args)*)
        }
    };
    (sse b_aligned: $aligned:expr, nt: $nt:expr, $($args:tt)*) => {
        match ($aligned, $nt) {
            (true, true) => main_loop!(@body sse, "movntpd", xmm_reg, 16, 8, $($args)*),
            (false, true) => main_loop!(@body sse_u, "movntpd", xmm_reg, 16, 8, $($args)*),
            (true, false) => main_loop!(@body sse, "movapd", xmm_reg, 16, 8, $($args)*),
            (false, false) => main_loop!(@body sse_u, "movapd", xmm_reg, 16, 8, $($args)*),
        }
    };
    ($body:ident, nt: $nt:expr, $($args:tt)*) => {
        if $nt {
            main_loop!(@body $body, "vmovntpd", $($args)*)
        } else {
            main_loop!(@body $body, "vmovapd", $($args)*)
        }
    };
    (@body fma, $st:literal, $class:ident, $v:literal, $step:literal, $($args:tt)*) => {
        main_loop!(@asm $class, $step, $($args)* [
            "vmovupd {x0}, [{c} + {i}*8]",
            concat!("vmovupd {x1}, [{c} + {i}*8 + ", $v, "]"),
            concat!("vmovupd {x2}, [{c} + {i}*8 + 2*", $v, "]"),
            concat!("vmovupd {x3}, [{c} + {i}*8 + 3*", $v, "]"),
            "vfmadd213pd {x0}, {s}, [{b} + {i}*8]",
            concat!("vfmadd213pd {x1}, {s}, [{b} + {i}*8 + ", $v, "]"),
            concat!("vfmadd213pd {x2}, {s}, [{b} + {i}*8 + 2*", $v, "]"),
            concat!("vfmadd213pd {x3}, {s}, [{b} + {i}*8 + 3*", $v, "]"),
            concat!($st, " [{a} + {i}*8], {x0}"),
            concat!($st, " [{a} + {i}*8 + ", $v, "], {x1}"),
            concat!($st, " [{a} + {i}*8 + 2*", $v, "], {x2}"),
            concat!($st, " [{a} + {i}*8 + 3*", $v, "], {x3}"),
        ])
    };
    (@body muladd, $st:literal, $class:ident, $v:literal, $step:literal, $($args:tt)*) => {
        main_loop!(@asm $class, $step, $($args)* [
            "vmulpd {x0}, {s}, [{c} + {i}*8]",
            concat!("vmulpd {x1}, {s}, [{c} + {i}*8 + ", $v, "]"),
            concat!("vmulpd {x2}, {s}, [{c} + {i}*8 + 2*", $v, "]"),
            concat!("vmulpd {x3}, {s}, [{c} + {i}*8 + 3*", $v, "]"),
            "vaddpd {x0}, {x0}, [{b} + {i}*8]",
            concat!("vaddpd {x1}, {x1}, [{b} + {i}*8 + ", $v, "]"),
            concat!("vaddpd {x2}, {x2}, [{b} + {i}*8 + 2*", $v, "]"),
            concat!("vaddpd {x3}, {x3}, [{b} + {i}*8 + 3*", $v, "]"),
            concat!($st, " [{a} + {i}*8], {x0}"),
            concat!($st, " [{a} + {i}*8 + ", $v, "], {x1}"),
            concat!($st, " [{a} + {i}*8 + 2*", $v, "], {x2}"),
            concat!($st, " [{a} + {i}*8 + 3*", $v, "], {x3}"),
        ])
    };
    (@body sse, $st:literal, $class:ident, $v:literal, $step:literal, $($args:tt)*) => {
        main_loop!(@asm $class, $step, $($args)* [
            "movupd {x0}, [{c} + {i}*8]",
            "movupd {x1}, [{c} + {i}*8 + 16]",
            "movupd {x2}, [{c} + {i}*8 + 32]",
            "movupd {x3}, [{c} + {i}*8 + 48]",
            "mulpd {x0}, {s}",
            "addpd {x0}, [{b} + {i}*8]",
            "mulpd {x1}, {s}",
            "addpd {x1}, [{b} + {i}*8 + 16]",
            "mulpd {x2}, {s}",
            "addpd {x2}, [{b} + {i}*8 + 32]",
            "mulpd {x3}, {s}",
            "addpd {x3}, [{b} + {i}*8 + 48]",
            concat!($st, " [{a} + {i}*8], {x0}"),
            concat!($st, " [{a} + {i}*8 + 16], {x1}"),
            concat!($st, " [{a} + {i}*8 + 32], {x2}"),
            concat!($st, " [{a} + {i}*8 + 48], {x3}"),
        ])
    };
    (@body sse_u, $st:literal, $class:ident, $v:literal, $step:literal, $($args:tt)*) => {
        main_loop!(@asm $class, $step, $($args)* [
            "movupd {x0}, [{c} + {i}*8]",
            "movupd {x1}, [{c} + {i}*8 + 16]",
            "movupd {x2}, [{c} + {i}*8 + 32]",
            "movupd {x3}, [{c} + {i}*8 + 48]",
            "mulpd {x0}, {s}",
            "movupd {t}, [{b} + {i}*8]",
            "addpd {x0}, {t}",
            "mulpd {x1}, {s}",
            "movupd {t}, [{b} + {i}*8 + 16]",
            "addpd {x1}, {t}",
            "mulpd {x2}, {s}",
            "movupd {t}, [{b} + {i}*8 + 32]",
            "addpd {x2}, {t}",
            "mulpd {x3}, {s}",
            "movupd {t}, [{b} + {i}*8 + 48]",
            "addpd {x3}, {t}",
            concat!($st, " [{a} + {i}*8], {x0}"),
            concat!($st, " [{a} + {i}*8 + 16], {x1}"),
            concat!($st, " [{a} + {i}*8 + 32], {x2}"),
            concat!($st, " [{a} + {i}*8 + 48], {x3}"),
        ])
    };
    (@asm $class:ident, $step:literal, $a:expr, $b:expr, $c:expr, $len:expr, $s:expr,
     [$($body:expr),+ $(,)?]) => {{
        let len: usize = $len;
        asm!(
            ".p2align 5",
            "2:",
            $($body,)+
            concat!("add {i}, ", $step),
            "jnz 2b",
            // Named in a comment where the body needs no scratch register.
            "/* {t} */",
            a = in(reg) $a.add(len),
            b = in(reg) $b.add(len),
            c = in(reg) $c.add(len),
            i = inout(reg) len.wrapping_neg() => _,
            s = in($class) $s,
            x0 = out($class) _,
            x1 = out($class) _,
            x2 = out($class) _,
            x3 = out($class) _,
            t = out($class) _,
            options(nostack),
        );
    }};
}

/// AVX-512F: 4 zmm (32 elements) per iteration, as likwid-bench's `stream_avx512_fma`;
/// masked head and tail. Listing: `docs/kernels.md`.
///
/// # Safety
/// The CPU has AVX-512F; `a`, `b`, `c` valid for `n` elements, `a` not overlapping `b`, `c`.
#[target_feature(enable = "avx512f")]
unsafe fn triad_avx512<const NT: bool, const FENCE: bool>(
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    s: f64,
) {
    const STEP: usize = 32;
    // SAFETY: the fast path runs the main loop over exactly n elements (a whole number of
    // iterations, at least one) with `a` 64-byte aligned; the rest is avx512_general's.
    unsafe {
        if (a as usize).is_multiple_of(64) && n.is_multiple_of(STEP) && n > 0 {
            let vs = _mm512_set1_pd(s);
            main_loop!(fma, nt: NT, zmm_reg, 64, 32, a, b, c, n, vs,);
        } else {
            avx512_general::<NT>(a, b, c, n, s);
        }
        if NT && FENCE {
            _mm_sfence();
        }
    }
}

/// [`triad_avx512`] for any alignment and length: masked head to a 64-byte boundary, main
/// loop, single vectors, masked tail.
///
/// # Safety
/// As [`triad_avx512`].
#[cold]
#[inline(never)]
#[target_feature(enable = "avx512f")]
unsafe fn avx512_general<const NT: bool>(a: *mut f64, b: *mut f64, c: *mut f64, n: usize, s: f64) {
    const W: usize = 8;
    const STEP: usize = 4 * W;
    // SAFETY: every access below is at an index < n (masked lanes are not accessed), which the
    // caller guarantees valid; aligned and stream stores are 64-byte aligned (a + head is, and
    // the index advances by whole vectors).
    unsafe {
        if NT && !(a as usize).is_multiple_of(8) {
            avx512_general::<false>(a, b, c, n, s);
            return;
        }
        let vs = _mm512_set1_pd(s);
        let head = head_len(a, 64, n);
        if head > 0 {
            let m: __mmask8 = (1u8 << head) - 1;
            let x = _mm512_fmadd_pd(vs, _mm512_maskz_loadu_pd(m, c), _mm512_maskz_loadu_pd(m, b));
            _mm512_mask_storeu_pd(a, m, x);
        }
        let (a, b, c, n) = (a.add(head), b.add(head), c.add(head), n - head);
        let mut i = 0;
        if (a as usize).is_multiple_of(64) {
            i = n - n % STEP;
            if i > 0 {
                main_loop!(fma, nt: NT, zmm_reg, 64, 32, a, b, c, i, vs,);
            }
        }
        while i + W <= n {
            let x = _mm512_fmadd_pd(vs, _mm512_loadu_pd(c.add(i)), _mm512_loadu_pd(b.add(i)));
            if NT && (a as usize).is_multiple_of(64) {
                _mm512_stream_pd(a.add(i), x);
            } else {
                _mm512_storeu_pd(a.add(i), x);
            }
            i += W;
        }
        let rest = n - i;
        if rest > 0 {
            let m: __mmask8 = (1u8 << rest) - 1;
            let x = _mm512_fmadd_pd(
                vs,
                _mm512_maskz_loadu_pd(m, c.add(i)),
                _mm512_maskz_loadu_pd(m, b.add(i)),
            );
            _mm512_mask_storeu_pd(a.add(i), m, x);
        }
    }
}

/// One AVX2 pass: the fast path (`a` aligned to the vector, `n` a whole number of
/// iterations, at least one) runs the main loop of `$class` registers over the whole pass;
/// everything else goes to [`avx2_general`]. `FMA` picks the body, `NT` the stores, `FENCE`
/// an `sfence` after non-temporal ones. One definition for the ymm and the xmm loop.
macro_rules! avx2_pass {
    ($(#[$doc:meta])* $name:ident, $class:ident, $bytes:literal, $step:literal, $set1:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The CPU has AVX2 and FMA; `a`, `b`, `c` valid for `n` elements, `a` not overlapping
        /// `b`, `c`.
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $name<const FMA: bool, const NT: bool, const FENCE: bool>(
            a: *mut f64,
            b: *mut f64,
            c: *mut f64,
            n: usize,
            s: f64,
        ) {
            // SAFETY: the fast path runs the main loop over exactly n elements (a whole number
            // of iterations, at least one) with `a` aligned to the vector; the rest is
            // avx2_general's.
            unsafe {
                if (a as usize).is_multiple_of($bytes) && n.is_multiple_of($step) && n > 0 {
                    let vs = $set1(s);
                    main_loop!(fma: FMA, nt: NT, $class, $bytes, $step, a, b, c, n, vs,);
                } else {
                    avx2_general::<FMA, NT>(a, b, c, n, s);
                }
                if NT && FENCE {
                    _mm_sfence();
                }
            }
        }
    };
}

avx2_pass!(
    /// AVX2: 4 ymm (16 elements) per iteration. `FMA`: likwid-bench's `stream_avx_fma` loop,
    /// `vfmadd213pd` with `b` from memory; otherwise `vmulpd` of `c` from memory and `vaddpd`
    /// of `b` from memory, likwid-bench's `stream_avx` in effect, which on Zen 3 runs a fifth
    /// faster in L1 (in-process A/B, 200 alternating samples each: 245 against 206 GB/s; alike
    /// in L2 and L3). `VARIANTS` has mul+add picked on AMD and FMA elsewhere: on a 4-wide Intel
    /// core the mul+add loop's four extra instructions per iteration would likely cost more
    /// than they save, and nothing here could measure one. Listings: `docs/kernels.md`.
    triad_avx2, ymm_reg, 32, 16, _mm256_set1_pd
);

avx2_pass!(
    /// AVX2 for arrays streamed from memory with normal stores: the same triad with 128-bit
    /// loads, 4 xmm (8 elements) per iteration, VEX-encoded (`FMA` as in [`triad_avx2`]).
    ///
    /// On the Zen 3 this was tuned on, a pass over arrays in DRAM runs about 15 % faster with
    /// 128-bit loads than with 256-bit ones, whatever the loop's unrolling or order (in-process
    /// A/B, 60 alternating samples each, medians: 26.2 GB/s against 22.3; 128-bit loads with
    /// 256-bit stores 25.8, 256-bit loads with 128-bit stores 24.5). In L1 the same loop
    /// reaches only half of the ymm loop (123 against 245 GB/s); in L2 and L3 the two are
    /// alike; with non-temporal stores the ymm loop stays ahead (34.9 against 33.8). Hence a
    /// separate loop, which `VARIANTS` has picked, on AMD, for working sets the caller knows to
    /// be beyond the caches ([`Residence::Memory`]). Listing: `docs/kernels.md`.
    triad_avx2_mem, xmm_reg, 16, 8, _mm_set1_pd
);

/// [`triad_avx2`] for any alignment and length: scalar head to a 32-byte boundary, main loop,
/// single vectors, scalar tail, each fused or not as `FMA` says, so every element of a pass is
/// rounded the same way.
///
/// # Safety
/// As [`triad_avx2`].
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_general<const FMA: bool, const NT: bool>(
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    s: f64,
) {
    const W: usize = 4;
    const STEP: usize = 4 * W;
    // SAFETY: every access below is at an index < n, which the caller guarantees valid; aligned
    // and stream stores are 32-byte aligned (a + head is, and the index advances by whole
    // vectors).
    unsafe {
        if NT && !(a as usize).is_multiple_of(8) {
            avx2_general::<FMA, false>(a, b, c, n, s);
            return;
        }
        let head = head_len(a, 32, n);
        scalar_triad::<FMA, W>(a, b, c, head, s);
        let (a, b, c, n) = (a.add(head), b.add(head), c.add(head), n - head);
        let vs = _mm256_set1_pd(s);
        let mut i = 0;
        if (a as usize).is_multiple_of(32) {
            i = n - n % STEP;
            if i > 0 {
                main_loop!(fma: FMA, nt: NT, ymm_reg, 32, 16, a, b, c, i, vs,);
            }
        }
        while i + W <= n {
            let (cv, bv) = (_mm256_loadu_pd(c.add(i)), _mm256_loadu_pd(b.add(i)));
            let x = if FMA {
                _mm256_fmadd_pd(vs, cv, bv)
            } else {
                _mm256_add_pd(_mm256_mul_pd(vs, cv), bv)
            };
            if NT && (a as usize).is_multiple_of(32) {
                _mm256_stream_pd(a.add(i), x);
            } else {
                _mm256_storeu_pd(a.add(i), x);
            }
            i += W;
        }
        scalar_triad::<FMA, W>(a.add(i), b.add(i), c.add(i), n - i, s);
    }
}

/// SSE2: 4 xmm (8 elements) per iteration, `mulpd` + `addpd` (SSE2 has no FMA), as
/// likwid-bench's `stream_sse`. The `addpd` reads `b` from memory when `b` is 16-byte aligned
/// where `a` is (as the engine's arrays are); otherwise `b` is loaded with `movupd` first.
/// Listing: `docs/kernels.md`.
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, `a` not overlapping `b`, `c`.
#[target_feature(enable = "sse2")]
unsafe fn triad_sse2<const NT: bool, const FENCE: bool>(
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    s: f64,
) {
    const STEP: usize = 8;
    // SAFETY: the fast path runs the main loop over exactly n elements (a whole number of
    // iterations, at least one) with `a` and `b` 16-byte aligned; the rest is sse2_general's.
    unsafe {
        if ((a as usize) | (b as usize)).is_multiple_of(16) && n.is_multiple_of(STEP) && n > 0 {
            let vs = _mm_set1_pd(s);
            main_loop!(sse b_aligned: true, nt: NT, a, b, c, n, vs,);
        } else {
            sse2_general::<NT>(a, b, c, n, s);
        }
        if NT && FENCE {
            _mm_sfence();
        }
    }
}

/// [`triad_sse2`] for any alignment and length: scalar head to a 16-byte boundary, main loop
/// (`b` folded into `addpd` when aligned), single vectors, scalar tail.
///
/// # Safety
/// As [`triad_sse2`].
#[cold]
#[inline(never)]
#[target_feature(enable = "sse2")]
unsafe fn sse2_general<const NT: bool>(a: *mut f64, b: *mut f64, c: *mut f64, n: usize, s: f64) {
    const W: usize = 2;
    const STEP: usize = 4 * W;
    // SAFETY: every access below is at an index < n, which the caller guarantees valid; aligned
    // and stream stores are 16-byte aligned (a + head is, and the index advances by whole
    // vectors), and so are the folded loads of b (checked).
    unsafe {
        if NT && !(a as usize).is_multiple_of(8) {
            sse2_general::<false>(a, b, c, n, s);
            return;
        }
        let head = head_len(a, 16, n);
        scalar_triad::<false, W>(a, b, c, head, s);
        let (a, b, c, n) = (a.add(head), b.add(head), c.add(head), n - head);
        let vs = _mm_set1_pd(s);
        let mut i = 0;
        if (a as usize).is_multiple_of(16) {
            i = n - n % STEP;
            if i > 0 {
                let b_aligned = (b as usize).is_multiple_of(16);
                main_loop!(sse b_aligned: b_aligned, nt: NT, a, b, c, i, vs,);
            }
        }
        while i + W <= n {
            let x = _mm_add_pd(
                _mm_mul_pd(vs, _mm_loadu_pd(c.add(i))),
                _mm_loadu_pd(b.add(i)),
            );
            if NT && (a as usize).is_multiple_of(16) {
                _mm_stream_pd(a.add(i), x);
            } else {
                _mm_storeu_pd(a.add(i), x);
            }
            i += W;
        }
        scalar_triad::<false, W>(a.add(i), b.add(i), c.add(i), n - i, s);
    }
}
