//! aarch64 triad: NEON (AdvSIMD), normal stores (`stp q`) or non-temporal ones (`stnp q`).
//!
//! Written and cross-checked (`cargo check --target aarch64-unknown-linux-gnu`) on x86-64; see
//! `docs/kernels.md` for what was and was not run on an aarch64 machine.

use super::{Variant, always, head_len, scalar_triad};
use std::arch::aarch64::*;
use std::arch::asm;

/// Every aarch64 triad: NEON with normal and with non-temporal stores (the portable one is
/// `super`'s).
pub(super) const VARIANTS: &[Variant] = &[
    variant!("neon q fma", Neon, Normal, has_neon, always, triad_neon),
    variant!("neon-nt q fma", Neon, Nt, has_neon, always, triad_neon),
];

fn has_neon() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

/// NEON: 4 q registers (8 elements, one 64-byte line) per iteration with `fmla`; the head runs
/// until `a` is 64-byte aligned so each iteration writes exactly one line. `FENCE` ends a
/// non-temporal pass with `dmb ishst` (see [`super::Kernel::pass_function`]). The loop rustc
/// emits is quoted in `docs/kernels.md`.
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, `a` not overlapping `b`, `c`.
#[target_feature(enable = "neon")]
unsafe fn triad_neon<const NT: bool, const FENCE: bool>(
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    s: f64,
) {
    const W: usize = 2;
    const STEP: usize = 4 * W;
    // SAFETY: every access below is at an index < n, which the caller guarantees valid. NEON
    // loads and stores (and stnp) of q registers need no alignment on Linux (no strict
    // alignment checking in user space).
    unsafe {
        let head = head_len(a, 64, n);
        scalar_triad::<true, STEP>(a, b, c, head, s);
        let (a, b, c, n) = (a.add(head), b.add(head), c.add(head), n - head);
        let vs = vdupq_n_f64(s);
        let end = n - n % STEP;
        let mut i = 0;
        while i < end {
            let x0 = vfmaq_f64(vld1q_f64(b.add(i)), vld1q_f64(c.add(i)), vs);
            let x1 = vfmaq_f64(vld1q_f64(b.add(i + W)), vld1q_f64(c.add(i + W)), vs);
            let x2 = vfmaq_f64(vld1q_f64(b.add(i + 2 * W)), vld1q_f64(c.add(i + 2 * W)), vs);
            let x3 = vfmaq_f64(vld1q_f64(b.add(i + 3 * W)), vld1q_f64(c.add(i + 3 * W)), vs);
            if NT {
                // Store pair, non-temporal: the hint that the line need not be allocated.
                asm!(
                    "stnp {x0:q}, {x1:q}, [{p}]",
                    "stnp {x2:q}, {x3:q}, [{p}, #32]",
                    x0 = in(vreg) x0,
                    x1 = in(vreg) x1,
                    x2 = in(vreg) x2,
                    x3 = in(vreg) x3,
                    p = in(reg) a.add(i),
                    options(nostack, preserves_flags),
                );
            } else {
                vst1q_f64(a.add(i), x0);
                vst1q_f64(a.add(i + W), x1);
                vst1q_f64(a.add(i + 2 * W), x2);
                vst1q_f64(a.add(i + 3 * W), x3);
            }
            i += STEP;
        }
        while i + W <= n {
            vst1q_f64(
                a.add(i),
                vfmaq_f64(vld1q_f64(b.add(i)), vld1q_f64(c.add(i)), vs),
            );
            i += W;
        }
        scalar_triad::<true, W>(a.add(i), b.add(i), c.add(i), n - i, s);
        if NT && FENCE {
            // Non-temporal stores are weakly ordered: make them visible before the barrier.
            asm!("dmb ishst", options(nostack, preserves_flags));
        }
    }
}
