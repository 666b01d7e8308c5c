//! The scalar parts every instruction set's vector loops share: the op as a const generic
//! (`op_code`), how far a loop unrolls, the alignment test of its fast path, and the scalar
//! heads and tails below one vector.

// Only the vector loops use these, and the portable-only targets have none.
#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]

use super::op::Op;

use super::op::codes::READ;

/// The op a const generic code names, evaluated where the loops are compiled
/// (`const { op_of(OP) }`): the loops then `match` on [`Op`] with no catch-all arm, so an op
/// without a body in some loop is a compile error, and a code that names no op fails the build.
pub(super) const fn op_of(code: u8) -> Op {
    let mut k = 0;
    while k < Op::ALL.len() {
        if Op::ALL[k] as u8 == code {
            return Op::ALL[k];
        }
        k += 1;
    }
    panic!("not an op code")
}

/// Vectors per iteration of an op's main loop: 4, as likwid-bench's loops; 8 for `read`, whose
/// accumulators would otherwise make it wait on the adds' latency (3 cycles on Zen 3 at 2 a
/// cycle: 6 in flight to keep up with the loads).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the x86-64 loops' only
#[inline(always)]
pub(super) const fn unroll(op: u8) -> usize {
    if op == READ { 8 } else { 4 }
}

/// Whether every array `op` reads or writes is aligned to `bytes` (a power of two).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the x86-64 loops' only
#[inline(always)]
pub(super) fn aligned<const OP: u8>(a: *mut f64, b: *mut f64, c: *mut f64, bytes: usize) -> bool {
    let [ta, tb, tc] = const { op_of(OP).touches() };
    let address = |touched: bool, p: *mut f64| if touched { p as usize } else { 0 };
    (address(ta, a) | address(tb, b) | address(tc, c)).is_multiple_of(bytes)
}

/// The scalar loop of `OP` over `n < LIMIT` elements with unaligned accesses: the heads and
/// tails of the vector loops, below one vector. `FUSED` rounds the triad once (`fma`), as the
/// vector loop of an FMA variant does, so every element of a pass is computed the same way.
/// The bound keeps the compiler from vectorising (and unrolling, and alias-checking) a loop of
/// at most a few trips. The value is `read`'s sum of `b` (0 for the rest).
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, not overlapping.
#[inline(always)]
pub(super) unsafe fn scalar_op<const OP: u8, const FUSED: bool, const LIMIT: usize>(
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    s: f64,
) -> f64 {
    debug_assert!(n < LIMIT, "scalar_op: {n} elements, at most {}", LIMIT - 1);
    let mut sum = 0.0;
    // A constant trip count with an early exit: unrolled into a chain of compares, never
    // vectorised.
    for i in 0..LIMIT - 1 {
        if i >= n {
            break;
        }
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe {
            let (a, b, c) = (a.add(i), b.add(i), c.wrapping_add(i));
            let v = match const { op_of(OP) } {
                Op::Triad if FUSED => s.mul_add(c.read_unaligned(), b.read_unaligned()),
                Op::Triad => b.read_unaligned() + s * c.read_unaligned(),
                Op::Copy => b.read_unaligned(),
                Op::Scale => s * b.read_unaligned(),
                Op::Add => b.read_unaligned() + c.read_unaligned(),
                Op::Read => {
                    sum += b.read_unaligned();
                    continue;
                }
                Op::Write => s,
                Op::Update => s * a.read_unaligned(),
                Op::Mix31 => b.read_unaligned() + c.read_unaligned() - a.read_unaligned(),
                Op::Mix21 => s * b.read_unaligned() - a.read_unaligned(),
                Op::Mix11 => {
                    let (x, y) = (a.read_unaligned(), b.read_unaligned());
                    b.write_unaligned(x);
                    y
                }
            };
            a.write_unaligned(v);
        }
    }
    sum
}

/// Elements before `a` reaches an `align`-byte boundary (a power of two), at most `n`; 0 when
/// `a` is not 8-byte aligned (it never gets there by whole elements).
#[inline(always)]
pub(super) fn head_len(a: *mut f64, align: usize, n: usize) -> usize {
    let addr = a as usize;
    if !addr.is_multiple_of(8) {
        return 0;
    }
    (((align - (addr & (align - 1))) & (align - 1)) / 8).min(n)
}
