//! x86-64 loops of every op: AVX-512F (zmm), AVX2 (ymm, and xmm for DRAM), SSE2, each with
//! normal and non-temporal stores (`read` stores nothing but its sum), and [`VARIANTS`], the
//! table `Kernel` picks from.
//!
//! One generator makes them all. An op's loop body is written once, in [`dispatch!`], as a
//! few phases of abstract instructions per vector (`ld x b`: load `b` into `x`; `add x c`,
//! `sub x a`: add or subtract an array; `mul x b`: `s·b`; `fma x b`: `x·s + b`; `st a x`: store
//! `x` into `a`; `sts a`: store `s`); [`main_loop!`] repeats each phase for 4 vectors (8 for
//! `read`'s accumulators, 1 for the single-vector loop of the general path) and spells each
//! instruction for the instruction set: VEX three-operand for AVX2 and AVX-512, SSE
//! two-operand for SSE2 (memory operands folded only where every array is aligned). The
//! machinery around the body is shared by every op: [`pass_fn!`] makes, per instruction set,
//! one function generic over the op (`const OP: u8`, `super::TRIAD` …) with the fast path and
//! the cold general path (scalar head to the vector boundary, main loop, single vectors,
//! scalar tail).
//!
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
//! folds a load only when every array is aligned, as the engine's are). An array written that
//! is not 8-byte aligned never reaches a vector boundary: the pass then runs scalar.
//!
//! `FENCE` ends a non-temporal pass with `sfence`. A pass over an L1-sized slice is a few
//! hundred nanoseconds, and the fence, which waits for the write-combining buffers to drain,
//! makes it about 30 % slower (672 elements, interleaved medians: 46 GB/s fenced, 65 GB/s
//! not; likwid-bench's `stream_mem_*` do not fence at all), so callers that run many passes
//! take the unfenced variant and fence once after the last ([`super::Kernel::pass_function`],
//! [`super::Kernel::fence`]).

use super::op::codes::*;
use super::op::{Op, READ_LANES, store_read_sum};
use super::scalar::{aligned, head_len, op_of, scalar_op, unroll};
use super::table::{Residence, Variant, always};
use std::arch::asm;
use std::arch::x86_64::*;

/// The loops of an op (the triad's are [`TRIAD_LOOPS`]): AVX-512 zmm, AVX2 ymm and xmm, SSE2, each with
/// normal stores and, given `Nt`, non-temporal ones.
macro_rules! loops_of {
    (Triad, $($_:tt)*) => {
        TRIAD_LOOPS
    };
    ($op:ident, $code:ident $(, $nt:ident)?) => {
        &[
            variant!($op, "avx512 zmm", Avx512, Normal, has_avx512, always, avx512::<$code, true>),
            variant!($op, "avx2 ymm", Avx2, Normal, has_avx2,
                     avx2_pick::<$code, false, false>, avx2::<$code, false>),
            variant!($op, "avx2 xmm", Avx2, Normal, has_avx2,
                     avx2_pick::<$code, true, false>, avx2_xmm::<$code, false>),
            variant!($op, "sse2 xmm", Sse2, Normal, has_sse2, always, sse2::<$code, false>),
            $(
                variant!($op, "avx512-nt zmm", Avx512, $nt, has_avx512, always,
                         avx512::<$code, true>),
                variant!($op, "avx2-nt ymm", Avx2, $nt, has_avx2,
                         avx2_pick::<$code, false, true>, avx2::<$code, false>),
                variant!($op, "avx2-nt xmm", Avx2, $nt, has_avx2,
                         avx2_pick::<$code, true, true>, avx2_xmm::<$code, false>),
                variant!($op, "sse2-nt xmm", Sse2, $nt, has_sse2, always, sse2::<$code, false>),
            )?
        ]
    };
}

/// Every x86-64 loop, one entry per op, loop and store kind (the portable ones are `super`'s).
///
/// `default_for` says which loop `Kernel` runs for an op, instruction set, store kind and
/// [`Residence`]. The triad's AVX2 has four loops per store kind: 256- or 128-bit, FMA or
/// mul+add. On AMD (tuned on Zen 3) it runs mul+add, and for normal stores from DRAM the
/// 128-bit loads; the non-temporal loop stays ymm there. Elsewhere it runs likwid-bench's FMA
/// loop, which nothing here could measure against an alternative (see `docs/kernels.md`). The
/// other ops have a ymm and an xmm loop for AVX2; [`xmm_from_memory`] says where the xmm one
/// is the default. The loops no default picks are there for benchmarks, and for a caller that
/// times them all (`--kernel auto`).
pub(super) const VARIANTS: [&[Variant]; Op::ALL.len()] = every_op!(loops_of);

#[rustfmt::skip] // a table: one loop a line
const TRIAD_LOOPS: &[Variant] = &[
    //               name                   isa     stores  available   default    function
    variant!(Triad, "avx512 zmm fma",      Avx512, Normal, has_avx512, always,    avx512::<TRIAD, true>),
    variant!(Triad, "avx512-nt zmm fma",   Avx512, Nt,     has_avx512, always,    avx512::<TRIAD, true>),
    variant!(Triad, "avx2 ymm mul+add",    Avx2,   Normal, has_avx2,   amd_cache, avx2::<TRIAD, false>),
    variant!(Triad, "avx2 xmm mul+add",    Avx2,   Normal, has_avx2,   amd_mem,   avx2_xmm::<TRIAD, false>),
    variant!(Triad, "avx2 ymm fma",        Avx2,   Normal, has_avx2,   not_amd,   avx2::<TRIAD, true>),
    variant!(Triad, "avx2 xmm fma",        Avx2,   Normal, has_avx2,   never,     avx2_xmm::<TRIAD, true>),
    variant!(Triad, "avx2-nt ymm mul+add", Avx2,   Nt,     has_avx2,   on_amd,    avx2::<TRIAD, false>),
    variant!(Triad, "avx2-nt ymm fma",     Avx2,   Nt,     has_avx2,   not_amd,   avx2::<TRIAD, true>),
    variant!(Triad, "avx2-nt xmm mul+add", Avx2,   Nt,     has_avx2,   never,     avx2_xmm::<TRIAD, false>),
    variant!(Triad, "avx2-nt xmm fma",     Avx2,   Nt,     has_avx2,   never,     avx2_xmm::<TRIAD, true>),
    variant!(Triad, "sse2 xmm mul+add",    Sse2,   Normal, has_sse2,   always,    sse2::<TRIAD, false>),
    variant!(Triad, "sse2-nt xmm mul+add", Sse2,   Nt,     has_sse2,   always,    sse2::<TRIAD, false>),
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

/// `default_for` of an op's AVX2 loop (`XMM`: the 128-bit one) with normal or (`NT`)
/// non-temporal stores: the xmm loop for arrays in memory on AMD where [`xmm_from_memory`]
/// says it pays, the ymm loop everywhere else.
fn avx2_pick<const OP: u8, const XMM: bool, const NT: bool>(residence: Residence) -> bool {
    let xmm = residence == Residence::Memory && amd() && xmm_from_memory(OP, NT);
    xmm == XMM
}

/// Whether, on AMD, an op's AVX2 pass over arrays in DRAM is faster with 128-bit loads and
/// stores (the `avx2 xmm` loop) than with 256-bit ones; the triad's own choice is its table's.
/// Measured on Zen 3 for every op (`docs/results/kernels.md`, "Per-op defaults"; medians of 5
/// interleaved repetitions, GB/s, xmm against ymm): normal stores copy 25.1/19.6, scale
/// 26.2/20.6, add 27.8/24.0, write 18.7/16.1 — the ops that store a stream they do not read,
/// as the triad — but read 21.7/23.8, update 36.9/41.2, and the mixes alike (37.9/37.9,
/// 39.5/38.8, 39.7/41.2); with non-temporal stores ymm everywhere (copy 32.4/37.8).
pub(super) const fn xmm_from_memory(op: u8, nt: bool) -> bool {
    !nt && matches!(op, COPY | SCALE | ADD | WRITE)
}

/// Whether the arrays the main loop of `op` stores to (`a`; `a` and `b` for the swap) are
/// aligned to `bytes`, and for `read`, the array it sums (its head aligns that one).
#[inline(always)]
fn stored_aligned(op: u8, a: *mut f64, b: *mut f64, bytes: usize) -> bool {
    let lead = match op {
        READ => b as usize,
        MIX11 => a as usize | b as usize,
        _ => a as usize,
    };
    lead.is_multiple_of(bytes)
}

/// Whether the CPU is AMD's. The AVX2 variant's loops were tuned on Zen 3, where `vmulpd` +
/// `vaddpd` beat `vfmadd213pd` by a fifth in L1 and 128-bit loads beat 256-bit ones from DRAM
/// (see [`avx2_xmm`]); elsewhere the triad runs likwid-bench's FMA loop, which nothing here
/// could measure against an alternative.
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

/// `{x2}`: the operand of register `x` (or `y`) of vector 2.
macro_rules! reg {
    ($r:ident, $k:literal) => {
        concat!("{", stringify!($r), $k, "}")
    };
}

/// `[{b} + {i}*8 + 2*32]`: vector 2 (of 32 bytes) of array `b` in this iteration.
macro_rules! mem {
    ($m:ident, $k:literal, $v:literal) => {
        concat!("[{", stringify!($m), "} + {i}*8 + ", $k, "*", $v, "]")
    };
}

/// One abstract instruction of a loop body for vector `$k` of `$v` bytes, spelled for the
/// style: `vex` (AVX2, AVX-512: three operands, memory operands unaligned), `sse` (two
/// operands, memory operands folded: every array aligned) or `sseu` (two operands, every
/// load through a register, `{t}` the scratch). `$st` is the store mnemonic.
macro_rules! ins {
    ($sty:ident, $st:literal, $v:literal, $k:literal, st $m:ident $r:ident) => {
        concat!($st, " ", mem!($m, $k, $v), ", ", reg!($r, $k), "\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, sts $m:ident) => {
        concat!($st, " ", mem!($m, $k, $v), ", {s}\n")
    };
    (vex, $st:literal, $v:literal, $k:literal, ld $r:ident $m:ident) => {
        concat!("vmovupd ", reg!($r, $k), ", ", mem!($m, $k, $v), "\n")
    };
    (vex, $st:literal, $v:literal, $k:literal, add $r:ident $m:ident) => {
        concat!(
            "vaddpd ",
            reg!($r, $k),
            ", ",
            reg!($r, $k),
            ", ",
            mem!($m, $k, $v),
            "\n"
        )
    };
    (vex, $st:literal, $v:literal, $k:literal, sub $r:ident $m:ident) => {
        concat!(
            "vsubpd ",
            reg!($r, $k),
            ", ",
            reg!($r, $k),
            ", ",
            mem!($m, $k, $v),
            "\n"
        )
    };
    (vex, $st:literal, $v:literal, $k:literal, mul $r:ident $m:ident) => {
        concat!("vmulpd ", reg!($r, $k), ", {s}, ", mem!($m, $k, $v), "\n")
    };
    (vex, $st:literal, $v:literal, $k:literal, fma $r:ident $m:ident) => {
        concat!(
            "vfmadd213pd ",
            reg!($r, $k),
            ", {s}, ",
            mem!($m, $k, $v),
            "\n"
        )
    };
    (vex, $st:literal, $v:literal, $k:literal, zero $r:ident) => {
        // VEX-encoded, so it clears the whole register, zmm included.
        concat!(
            "vxorpd {",
            stringify!($r),
            $k,
            ":y}, {",
            stringify!($r),
            $k,
            ":y}, {",
            stringify!($r),
            $k,
            ":y}\n"
        )
    };
    (vex, $st:literal, $v:literal, $k:literal, addr $r:ident $q:ident) => {
        concat!(
            "vaddpd ",
            reg!($r, $k),
            ", ",
            reg!($r, $k),
            ", ",
            reg!($q, $k),
            "\n"
        )
    };
    // The loop leaves the upper halves of the vector registers dirty, and the compiler, which
    // sees no vector register of its own in `read`, would not clear them: the SSE code after
    // the pass then runs with a false dependency on them (a fifth of the rate at l1).
    (vex, $st:literal, $v:literal, $k:literal, zeroupper) => {
        "vzeroupper\n"
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, zeroupper) => {
        ""
    };
    (vex, $st:literal, $v:literal, $k:literal, add2 $r:ident $q:ident) => {
        concat!(
            "vaddpd {",
            stringify!($r),
            "}, {",
            stringify!($r),
            "}, {",
            stringify!($q),
            "}\n"
        )
    };
    (vex, $st:literal, $v:literal, $k:literal, out $r:ident) => {
        concat!("vmovupd [{out} + ", $k, "], {", stringify!($r), "}\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, addr $r:ident $q:ident) => {
        concat!("addpd ", reg!($r, $k), ", ", reg!($q, $k), "\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, add2 $r:ident $q:ident) => {
        concat!("addpd {", stringify!($r), "}, {", stringify!($q), "}\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, out $r:ident) => {
        concat!("movupd [{out} + ", $k, "], {", stringify!($r), "}\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, ld $r:ident $m:ident) => {
        concat!("movupd ", reg!($r, $k), ", ", mem!($m, $k, $v), "\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, muls $r:ident) => {
        concat!("mulpd ", reg!($r, $k), ", {s}\n")
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, mul $r:ident $m:ident) => {
        concat!(
            "movupd ",
            reg!($r, $k),
            ", ",
            mem!($m, $k, $v),
            "\n",
            "mulpd ",
            reg!($r, $k),
            ", {s}\n"
        )
    };
    ($sty:ident, $st:literal, $v:literal, $k:literal, zero $r:ident) => {
        concat!("xorpd ", reg!($r, $k), ", ", reg!($r, $k), "\n")
    };
    (sse, $st:literal, $v:literal, $k:literal, $f:ident $r:ident $m:ident) => {
        concat!(
            stringify!($f),
            "pd ",
            reg!($r, $k),
            ", ",
            mem!($m, $k, $v),
            "\n"
        )
    };
    (sseu, $st:literal, $v:literal, $k:literal, $f:ident $r:ident $m:ident) => {
        concat!(
            "movupd {t}, ",
            mem!($m, $k, $v),
            "\n",
            stringify!($f),
            "pd ",
            reg!($r, $k),
            ", {t}\n"
        )
    };
}

/// The end of `read`'s main loop: its eight accumulators added pairwise until they fill one
/// line of eight f64 (one zmm, two ymm or four xmm), stored at `{out}` as they are
/// ([`super::READ_LANES`]).
macro_rules! sum_to_line {
    ($sty:ident, 64) => {
        concat!(
            sum_to_line!(@pairs $sty, 64),
            ins!($sty, "", 64, 0, add2 x0 x2),
            ins!($sty, "", 64, 0, add2 x4 x6),
            ins!($sty, "", 64, 0, add2 x0 x4),
            ins!($sty, "", 64, 0, out x0),
        )
    };
    ($sty:ident, 32) => {
        concat!(
            sum_to_line!(@pairs $sty, 32),
            ins!($sty, "", 32, 0, add2 x0 x2),
            ins!($sty, "", 32, 0, add2 x4 x6),
            ins!($sty, "", 32, 0, out x0),
            ins!($sty, "", 32, 32, out x4),
        )
    };
    ($sty:ident, 16) => {
        concat!(
            sum_to_line!(@pairs $sty, 16),
            ins!($sty, "", 16, 0, out x0),
            ins!($sty, "", 16, 16, out x2),
            ins!($sty, "", 16, 32, out x4),
            ins!($sty, "", 16, 48, out x6),
        )
    };
    (@pairs $sty:ident, $v:literal) => {
        concat!(
            ins!($sty, "", $v, 0, add2 x0 x1),
            ins!($sty, "", $v, 0, add2 x2 x3),
            ins!($sty, "", $v, 0, add2 x4 x5),
            ins!($sty, "", $v, 0, add2 x6 x7),
        )
    };
}

/// One phase of a body (`[ld x c]`, `[muls x; add x b]`) for every vector `$k` of the
/// iteration, phase-major as likwid-bench's loops are (all loads, then all arithmetic, then
/// all stores).
macro_rules! phase {
    ($sty:ident, $st:literal, $v:literal, [$($k:literal)*], $ins:tt) => {
        concat!($( phase!(@k $sty, $st, $v, $k, $ins) ),*)
    };
    (@k $sty:ident, $st:literal, $v:literal, $k:literal, [$($i:ident $($arg:ident)*);*]) => {
        concat!($( ins!($sty, $st, $v, $k, $i $($arg)*) ),*)
    };
}

/// The main loop over `len` elements (a whole number of iterations, at least one) from `a`,
/// `b`, `c`, the written arrays aligned to the vector: `$ks` lists the vectors of an iteration
/// (`[0 1 2 3]`), the phases are the op's body. Inside, `{a} {b} {c}` point to the end of the
/// block and `{i}` runs from `-len` up to 0. With `reduce`, `x0…x7` are accumulators, zeroed
/// before the loop and summed into the first eight elements of `a` after it
/// ([`sum_to_line!`]).
macro_rules! main_loop {
    (($sty:ident, $st:literal, $class:ident, $v:literal, $w:literal), $u:literal $ks:tt,
     ($a:expr, $b:expr, $c:expr, $len:expr, $s:expr), $($ph:tt)+) => {{
        let len: usize = $len;
        asm!(
            ".p2align 5",
            "2:",
            $( phase!($sty, $st, $v, $ks, $ph), )+
            concat!("add {i}, ", $u, "*", $w),
            "jnz 2b",
            // Named in a comment where the body does not use them.
            "/* {a} {b} {c} {s} {t} {x0} {x1} {x2} {x3} {y0} {y1} {y2} {y3} */",
            a = in(reg) $a.add(len),
            b = in(reg) $b.wrapping_add(len),
            c = in(reg) $c.wrapping_add(len),
            i = inout(reg) len.wrapping_neg() => _,
            s = in($class) $s,
            x0 = out($class) _,
            x1 = out($class) _,
            x2 = out($class) _,
            x3 = out($class) _,
            y0 = out($class) _,
            y1 = out($class) _,
            y2 = out($class) _,
            y3 = out($class) _,
            t = out($class) _,
            options(nostack),
        );
    }};
    (reduce ($sty:ident, $st:literal, $class:ident, $v:tt, $w:literal), $u:literal $ks:tt,
     ($a:expr, $b:expr, $c:expr, $len:expr, $s:expr), $($ph:tt)+) => {{
        let len: usize = $len;
        asm!(
            phase!($sty, "", $v, [0 1 2 3 4 5 6 7], [zero x]),
            ".p2align 5",
            "2:",
            $( phase!($sty, $st, $v, $ks, $ph), )+
            concat!("add {i}, ", $u, "*", $w),
            "jnz 2b",
            sum_to_line!($sty, $v),
            ins!($sty, "", $v, 0, zeroupper),
            // Sixteen vector registers in all, as many as AVX2 and SSE2 have: `s` and the
            // scratch `t` are not the reduction's (its body loads through `y`).
            "/* {c} {y0} {y1} {y2} {y3} {y4} {y5} {y6} {y7} */",
            out = in(reg) $a,
            b = in(reg) $b.add(len),
            c = in(reg) $c,
            i = inout(reg) len.wrapping_neg() => _,
            x0 = out($class) _,
            x1 = out($class) _,
            x2 = out($class) _,
            x3 = out($class) _,
            x4 = out($class) _,
            x5 = out($class) _,
            x6 = out($class) _,
            x7 = out($class) _,
            y0 = out($class) _,
            y1 = out($class) _,
            y2 = out($class) _,
            y3 = out($class) _,
            y4 = out($class) _,
            y5 = out($class) _,
            y6 = out($class) _,
            y7 = out($class) _,
            options(nostack),
        );
        let _ = $s;
    }};
}

/// The op's body, the one place each op's loop is written: the main loop of `$isa` (`main`:
/// 4 vectors per iteration, 8 accumulators for `read`; `one`: 1 vector) with `OP`'s body,
/// stores `NT` or not, the triad's body FMA or mul+add as `FMA` says (`$isa` gives those two
/// bodies: SSE2 has no FMA and folds differently). `OP`, `FMA` and `NT` are constants, so
/// each function keeps exactly one loop. `read` leaves its sum in the first eight elements of
/// the `a` it is given ([`super::READ_LANES`]).
macro_rules! dispatch {
    ($op:expr, $fma:expr, $nt:expr, $isa:tt, $shape:ident, $args:tt) => {
        if $nt {
            dispatch!(@st 1, $op, $fma, $isa, $shape, $args)
        } else {
            dispatch!(@st 0, $op, $fma, $isa, $shape, $args)
        }
    };
    (@st 0, $op:expr, $fma:expr,
     [$sty:ident $stn:literal $stt:literal $class:ident $v:tt $w:literal
      fma: [$($fma_body:tt)+] muladd: [$($muladd_body:tt)+]],
     $shape:ident, $args:tt) => {
        dispatch!(@ops $op, $fma, ($sty, $stn, $class, $v, $w),
                  [$($fma_body)+], [$($muladd_body)+], $shape, $args)
    };
    (@st 1, $op:expr, $fma:expr,
     [$sty:ident $stn:literal $stt:literal $class:ident $v:tt $w:literal
      fma: [$($fma_body:tt)+] muladd: [$($muladd_body:tt)+]],
     $shape:ident, $args:tt) => {
        dispatch!(@ops $op, $fma, ($sty, $stt, $class, $v, $w),
                  [$($fma_body)+], [$($muladd_body)+], $shape, $args)
    };
    (@ops $op:expr, $fma:expr, $isa:tt, [$($fma_body:tt)+], [$($muladd_body:tt)+], $shape:ident,
     $args:tt) => {
        match const { op_of($op) } {
            Op::Triad if $fma => dispatch!(@shape $shape, $isa, $args, $($fma_body)+),
            Op::Triad => dispatch!(@shape $shape, $isa, $args, $($muladd_body)+),
            Op::Copy => dispatch!(@shape $shape, $isa, $args, [ld x b] [st a x]),
            Op::Scale => dispatch!(@shape $shape, $isa, $args, [mul x b] [st a x]),
            Op::Add => dispatch!(@shape $shape, $isa, $args, [ld x b] [add x c] [st a x]),
            Op::Read => dispatch!(@reduce $shape, $isa, $args, [ld y b] [addr x y]),
            Op::Write => dispatch!(@shape $shape, $isa, $args, [sts a]),
            Op::Update => dispatch!(@shape $shape, $isa, $args, [mul x a] [st a x]),
            Op::Mix31 => dispatch!(@shape $shape, $isa, $args, [ld x b] [add x c] [sub x a] [st a x]),
            Op::Mix21 => dispatch!(@shape $shape, $isa, $args, [mul x b] [sub x a] [st a x]),
            Op::Mix11 => dispatch!(@shape $shape, $isa, $args, [ld x a; ld y b] [st a y; st b x]),
        }
    };
    (@shape main, $isa:tt, $args:tt, $($ph:tt)+) => { main_loop!($isa, 4 [0 1 2 3], $args, $($ph)+) };
    (@shape one, $isa:tt, $args:tt, $($ph:tt)+) => { main_loop!($isa, 1 [0], $args, $($ph)+) };
    (@reduce main, $isa:tt, $args:tt, $($ph:tt)+) => {
        main_loop!(reduce $isa, 8 [0 1 2 3 4 5 6 7], $args, $($ph)+)
    };
    (@reduce one, $isa:tt, $args:tt, $($ph:tt)+) => {
        main_loop!(reduce $isa, 1 [0], $args, $($ph)+)
    };
}

/// One instruction set's pass, generic over the op: `$name` runs the fast path (every array
/// the op touches aligned to the vector, `n` a whole number of main-loop iterations, at least
/// one: the engine's partitions) and hands everything else to the cold `$general`. `$isa` is
/// the style for aligned arrays, `$isa_u` for the general path's main loop when some array read
/// is not aligned (the same for VEX, which folds unaligned loads).
macro_rules! pass_fn {
    ($(#[$doc:meta])* $name:ident, $general:ident, $feature:literal, $set1:ident,
     $bytes:literal, loads_aligned: $loads_aligned:literal, $isa:tt, $isa_u:tt) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The CPU has the instruction set; `a`, `b`, `c` valid for `n` elements and not
        /// overlapping.
        #[target_feature(enable = $feature)]
        unsafe fn $name<const OP: u8, const FMA: bool, const NT: bool, const FENCE: bool>(
            a: *mut f64,
            b: *mut f64,
            c: *mut f64,
            n: usize,
            s: f64,
        ) {
            const W: usize = $bytes / 8;
            // SAFETY: the fast path runs the main loop over exactly n elements (a whole number
            // of iterations, at least one) with the arrays it stores to (and for SSE2 every
            // array) aligned to the vector; read's sum goes to a[0..8], valid as n is a whole
            // number of iterations of 8 vectors. The rest is the general path's.
            unsafe {
                // VEX loads need no alignment: only the arrays stored to are checked, as the
                // triad's fast path always was (three tests before the loop).
                let fast = if $loads_aligned {
                    aligned::<OP>(a, b, c, $bytes)
                } else {
                    stored_aligned(OP, a, b, $bytes)
                };
                if fast && n.is_multiple_of(unroll(OP) * W) && n > 0 {
                    let vs = $set1(s);
                    dispatch!(OP, FMA, NT, $isa, main, (a, b, c, n, vs));
                } else {
                    $general::<OP, FMA, NT>(a, b, c, n, s);
                }
                if NT && FENCE {
                    _mm_sfence();
                }
            }
        }

        /// The general path of
        #[doc = concat!("[`", stringify!($name), "`]")]
        /// for any alignment and length: scalar head until the array the op leads with (`a`;
        /// `b` for `read`) is aligned to the vector, main loop, single vectors, scalar tail,
        /// each fused or not as `FMA` says, so every element of a pass is rounded the same
        /// way. Arrays written that cannot be aligned run scalar throughout.
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($name), "`].")]
        #[cold]
        #[inline(never)]
        #[target_feature(enable = $feature)]
        unsafe fn $general<const OP: u8, const FMA: bool, const NT: bool>(
            a: *mut f64,
            b: *mut f64,
            c: *mut f64,
            n: usize,
            s: f64,
        ) {
            const W: usize = $bytes / 8;
            // SAFETY: every access is at an index < n, which the caller guarantees valid;
            // aligned and stream stores are aligned to the vector (checked after the head, and
            // the index advances by whole vectors), and so are SSE2's folded loads (checked).
            unsafe {
                let (a0, n0) = (a, n);
                let lead = if OP == READ { b } else { a };
                let head = head_len(lead, $bytes, n);
                let mut sum = scalar_op::<OP, FMA, W>(a, b, c, head, s);
                let (a, b, c, n) = (
                    a.add(head),
                    b.wrapping_add(head),
                    c.wrapping_add(head),
                    n - head,
                );
                if !stored_aligned(OP, a, b, $bytes) {
                    // Never aligned: scalar throughout.
                    sum += scalar_op::<OP, FMA, { usize::MAX }>(a, b, c, n, s);
                } else {
                    let vs = $set1(s);
                    let folded = aligned::<OP>(a, b, c, $bytes);
                    // read's vector loops leave their lanes here, to be added to the rest.
                    let mut lanes = [0.0f64; READ_LANES];
                    let out = if OP == READ { lanes.as_mut_ptr() } else { a };
                    let main = n - n % (unroll(OP) * W);
                    if main > 0 {
                        if folded {
                            dispatch!(OP, FMA, NT, $isa, main, (out, b, c, main, vs))
                        } else {
                            dispatch!(OP, FMA, NT, $isa_u, main, (out, b, c, main, vs))
                        };
                        sum += lanes.iter().sum::<f64>();
                    }
                    let (a, b, c, n) = (
                        a.add(main),
                        b.wrapping_add(main),
                        c.wrapping_add(main),
                        n - main,
                    );
                    let ones = n - n % W;
                    if ones > 0 {
                        let out = if OP == READ { lanes.as_mut_ptr() } else { a };
                        if folded {
                            dispatch!(OP, FMA, NT, $isa, one, (out, b, c, ones, vs))
                        } else {
                            dispatch!(OP, FMA, NT, $isa_u, one, (out, b, c, ones, vs))
                        };
                        sum += lanes.iter().sum::<f64>();
                    }
                    sum += scalar_op::<OP, FMA, W>(
                        a.add(ones),
                        b.wrapping_add(ones),
                        c.wrapping_add(ones),
                        n - ones,
                        s,
                    );
                }
                if OP == READ {
                    store_read_sum(a0, n0, sum);
                }
            }
        }
    };
}

pass_fn!(
    /// AVX-512F: 4 zmm (32 elements) per iteration, as likwid-bench's `stream_avx512_fma`
    /// (the triad's FMA body); 8 accumulators for `read`.
    avx512, avx512_general, "avx512f", _mm512_set1_pd, 64, loads_aligned: false,
    [vex "vmovapd" "vmovntpd" zmm_reg 64 8
     fma: [[ld x c] [fma x b] [st a x]] muladd: [[mul x c] [add x b] [st a x]]],
    [vex "vmovapd" "vmovntpd" zmm_reg 64 8
     fma: [[ld x c] [fma x b] [st a x]] muladd: [[mul x c] [add x b] [st a x]]]
);

pass_fn!(
    /// AVX2: 4 ymm (16 elements) per iteration; 8 accumulators for `read`. The triad's `FMA`
    /// body is likwid-bench's `stream_avx_fma` loop, `vfmadd213pd` with `b` from memory; its
    /// mul+add body is `vmulpd` of `c` from memory and `vaddpd` of `b` from memory,
    /// likwid-bench's `stream_avx` in effect, which on Zen 3 runs a fifth faster in L1
    /// (in-process A/B, 200 alternating samples each: 245 against 206 GB/s; alike in L2 and
    /// L3). The table has mul+add picked on AMD and FMA elsewhere: on a 4-wide Intel core the
    /// mul+add loop's four extra instructions per iteration would likely cost more than they
    /// save, and nothing here could measure one. Listings: `docs/kernels.md`.
    avx2, avx2_general, "avx2,fma", _mm256_set1_pd, 32, loads_aligned: false,
    [vex "vmovapd" "vmovntpd" ymm_reg 32 4
     fma: [[ld x c] [fma x b] [st a x]] muladd: [[mul x c] [add x b] [st a x]]],
    [vex "vmovapd" "vmovntpd" ymm_reg 32 4
     fma: [[ld x c] [fma x b] [st a x]] muladd: [[mul x c] [add x b] [st a x]]]
);

pass_fn!(
    /// AVX2 for arrays streamed from memory: the same loops with 128-bit loads and stores, 4 xmm
    /// (8 elements) per iteration, VEX-encoded.
    ///
    /// On the Zen 3 this was tuned on, a triad pass over arrays in DRAM runs about 15 % faster
    /// with 128-bit loads than with 256-bit ones, whatever the loop's unrolling or order
    /// (in-process A/B, 60 alternating samples each, medians: 26.2 GB/s against 22.3; 128-bit
    /// loads with 256-bit stores 25.8, 256-bit loads with 128-bit stores 24.5). In L1 the same
    /// loop reaches only half of the ymm loop (123 against 245 GB/s); in L2 and L3 the two are
    /// alike; with non-temporal stores the ymm loop stays ahead (34.9 against 33.8). Hence a
    /// separate loop, which `VARIANTS` picks, on AMD, for working sets the caller knows to be
    /// beyond the caches ([`Residence::Memory`]), for the ops where it pays
    /// ([`xmm_from_memory`]). Listing: `docs/kernels.md`.
    avx2_xmm, avx2_xmm_general, "avx2,fma", _mm_set1_pd, 16, loads_aligned: false,
    [vex "vmovapd" "vmovntpd" xmm_reg 16 2
     fma: [[ld x c] [fma x b] [st a x]] muladd: [[mul x c] [add x b] [st a x]]],
    [vex "vmovapd" "vmovntpd" xmm_reg 16 2
     fma: [[ld x c] [fma x b] [st a x]] muladd: [[mul x c] [add x b] [st a x]]]
);

pass_fn!(
    /// SSE2: 4 xmm (8 elements) per iteration, two-operand, as likwid-bench's `stream_sse`
    /// (the triad: `mulpd` + `addpd`, SSE2 has no FMA); 8 accumulators for `read`. Loads fold
    /// into the arithmetic when every array is 16-byte aligned (as the engine's are); otherwise
    /// each goes through `movupd` into a scratch register first. Listing: `docs/kernels.md`.
    sse2, sse2_general, "sse2", _mm_set1_pd, 16, loads_aligned: true,
    [sse "movapd" "movntpd" xmm_reg 16 2
     fma: [[ld x c] [muls x; add x b] [st a x]] muladd: [[ld x c] [muls x; add x b] [st a x]]],
    [sseu "movapd" "movntpd" xmm_reg 16 2
     fma: [[ld x c] [muls x; add x b] [st a x]] muladd: [[ld x c] [muls x; add x b] [st a x]]]
);
