//! aarch64 loops of every op: NEON (AdvSIMD), normal stores (`stp q`/`str q`) or non-temporal
//! ones (`stnp q`).
//!
//! One generic function runs every op: [`neon`]'s body per vector is a few lines per op
//! ([`body`]), the head, main loop, single vectors and tail are shared. Written and
//! cross-checked on x86-64 (`cargo test --target aarch64-unknown-linux-gnu` under qemu); see
//! `docs/kernels.md` for what was and was not run on an aarch64 machine.

use super::op::codes::*;
use super::op::{Op, store_read_sum};
use super::scalar::{head_len, op_of, scalar_op};
use super::table::{Variant, always};
use std::arch::aarch64::*;
use std::arch::asm;

/// The NEON loops of an op (the triad's are named `… fma`), normal stores and, given `Nt`, non-temporal.
macro_rules! loops_of {
    (Triad, $($_:tt)*) => {
        &[
            variant!(Triad, "neon q fma", Neon, Normal, has_neon, always, neon::<TRIAD>),
            variant!(Triad, "neon-nt q fma", Neon, Nt, has_neon, always, neon::<TRIAD>),
        ]
    };
    ($op:ident, $code:ident $(, $nt:ident)?) => {
        &[
            variant!($op, "neon q", Neon, Normal, has_neon, always, neon::<$code>),
            $(variant!($op, "neon-nt q", Neon, $nt, has_neon, always, neon::<$code>),)?
        ]
    };
}

/// Every aarch64 loop: NEON with normal and with non-temporal stores for each op (`read`
/// stores nothing but its sum); the portable ones are `super`'s.
pub(super) const VARIANTS: [&[Variant]; Op::ALL.len()] = every_op!(loops_of);

fn has_neon() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

/// What one vector (2 elements at `i`) of `OP` stores into `a` (and, for the swap, into `b`:
/// the second value), or for `read`, adds to `acc`. The op's loop body, the one place it is
/// written for NEON.
///
/// # Safety
/// `a`, `b`, `c` valid for 2 elements at `i`.
#[inline(always)]
unsafe fn body<const OP: u8>(
    (a, b, c): (*mut f64, *mut f64, *mut f64),
    i: usize,
    s: float64x2_t,
    acc: &mut float64x2_t,
) -> (float64x2_t, float64x2_t) {
    // SAFETY: the caller guarantees the two elements at i of the arrays the op touches.
    unsafe {
        let ld = |p: *mut f64| vld1q_f64(p.add(i));
        let x = match const { op_of(OP) } {
            Op::Triad => vfmaq_f64(ld(b), ld(c), s),
            Op::Copy => ld(b),
            Op::Scale => vmulq_f64(ld(b), s),
            Op::Add => vaddq_f64(ld(b), ld(c)),
            Op::Read => {
                *acc = vaddq_f64(*acc, ld(b));
                s
            }
            Op::Write => s,
            Op::Update => vmulq_f64(ld(a), s),
            Op::Mix31 => vsubq_f64(vaddq_f64(ld(b), ld(c)), ld(a)),
            Op::Mix21 => vsubq_f64(vmulq_f64(ld(b), s), ld(a)),
            Op::Mix11 => return (ld(b), ld(a)),
        };
        (x, x)
    }
}

/// Stores four vectors at `p`: `stp q` pairs, or `stnp q` (store pair, non-temporal: the hint
/// that the line need not be allocated) when `NT`.
///
/// # Safety
/// `p` valid for 8 elements.
#[inline(always)]
unsafe fn store4<const NT: bool>(p: *mut f64, x: [float64x2_t; 4]) {
    // SAFETY: the caller guarantees p valid for 8 elements; q stores need no alignment on
    // Linux and macOS (no strict alignment checking in user space).
    unsafe {
        if NT {
            asm!(
                "stnp {x0:q}, {x1:q}, [{p}]",
                "stnp {x2:q}, {x3:q}, [{p}, #32]",
                x0 = in(vreg) x[0],
                x1 = in(vreg) x[1],
                x2 = in(vreg) x[2],
                x3 = in(vreg) x[3],
                p = in(reg) p,
                options(nostack, preserves_flags),
            );
        } else {
            for (k, v) in x.into_iter().enumerate() {
                vst1q_f64(p.add(2 * k), v);
            }
        }
    }
}

/// NEON: 4 q registers (8 elements, one 64-byte line) per iteration (8 accumulators for
/// `read`); the head runs until the array the op leads with (`a`; `b` for `read`) is 64-byte
/// aligned, so each iteration writes exactly one line. `FENCE` ends a non-temporal pass with
/// `dmb ishst` (see [`super::Kernel::pass_function`]). The loop rustc emits is quoted in
/// `docs/kernels.md`.
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, not overlapping.
#[target_feature(enable = "neon")]
unsafe fn neon<const OP: u8, const NT: bool, const FENCE: bool>(
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    s: f64,
) {
    const W: usize = 2;
    const STEP: usize = 4 * W;
    // SAFETY: every access below is at an index < n, which the caller guarantees valid. NEON
    // loads and stores (and stnp) of q registers need no alignment.
    unsafe {
        let (a0, n0) = (a, n);
        let head = head_len(if OP == READ { b } else { a }, 64, n);
        let mut sum = scalar_op::<OP, true, STEP>(a, b, c, head, s);
        let (a, b, c, n) = (
            a.add(head),
            b.wrapping_add(head),
            c.wrapping_add(head),
            n - head,
        );
        let arrays = (a, b, c);
        let vs = vdupq_n_f64(s);
        let mut acc = [vdupq_n_f64(0.0); 8];
        let mut i = 0;
        if OP == READ {
            let end = n - n % (2 * STEP);
            while i < end {
                for (k, acc) in acc.iter_mut().enumerate() {
                    body::<OP>(arrays, i + k * W, vs, acc);
                }
                i += 2 * STEP;
            }
        } else {
            let end = n - n % STEP;
            while i < end {
                let mut x = [vs; 4];
                let mut y = [vs; 4];
                for k in 0..4 {
                    (x[k], y[k]) = body::<OP>(arrays, i + k * W, vs, &mut acc[0]);
                }
                store4::<NT>(a.add(i), x);
                if OP == MIX11 {
                    store4::<NT>(b.add(i), y);
                }
                i += STEP;
            }
        }
        while i + W <= n {
            let (x, y) = body::<OP>(arrays, i, vs, &mut acc[0]);
            if OP != READ {
                vst1q_f64(a.add(i), x);
            }
            if OP == MIX11 {
                vst1q_f64(b.add(i), y);
            }
            i += W;
        }
        sum += scalar_op::<OP, true, W>(a.add(i), b.wrapping_add(i), c.wrapping_add(i), n - i, s);
        if OP == READ {
            for v in acc {
                sum += vaddvq_f64(v);
            }
            store_read_sum(a0, n0, sum);
        }
        if NT && FENCE {
            // Non-temporal stores are weakly ordered: make them visible before the barrier.
            asm!("dmb ishst", options(nostack, preserves_flags));
        }
    }
}
