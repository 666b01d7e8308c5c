//! The three arrays of a cell: 2 MiB aligned anonymous mappings advised onto huge pages (where
//! the OS has them, or away from them), each array staggered within its mapping so that
//! `a[i]`, `b[i]` and `c[i]` fall in different cache sets, the values they hold, and the integer
//! reference the sum of `a` is checked against.

use super::kernel::{Op, READ_LANES};
use super::plan::MemPolicy;
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::platform::Mapping;
use std::ops::Range;

/// Alignment of each array (and the unit of its mapping): one x86 huge page.
const ARRAY_ALIGN: usize = 2 << 20;

/// How far each array starts past its mapping's 2 MiB boundary: `a` at 0, `b` at one step,
/// `c` at two (what STREAM's `OFFSET` and likwid-bench's per-stream offsets do). Three arrays
/// that all start on a 2 MiB boundary put `a[i]`, `b[i]` and `c[i]` in the same set of every
/// cache whose set span (sets × line size) divides 2 MiB: L1 always (it is indexed by the
/// address within the 4 KiB page), and with huge pages L2 and beyond as well, which costs an
/// L2 triad on Ice Lake about a fifth of its rate. 1408 bytes (11 × 128) is about a third of a
/// 4 KiB page, so the starts are at least 1280 bytes (20 lines) apart modulo every
/// power-of-two span from 4 KiB to 2 MiB; a multiple of 128 keeps every partition 128-byte
/// aligned, which the kernels' fast path needs.
const STAGGER_BYTES: usize = 11 * 128;

/// What `a` holds after a first touch or a reset, before any pass.
pub(crate) const A_RESET: f64 = -1.0;

const B_PERIOD: u64 = 1024;
const C_PERIOD: u64 = 16;

/// `b[i]`: 0, 1, …, 1023, 0, 1, …
pub(crate) fn b_value(i: usize) -> f64 {
    (i as u64 % B_PERIOD) as f64
}

/// `c[i]`: 1, 2, …, 16, 1, 2, …
pub(crate) fn c_value(i: usize) -> f64 {
    (i as u64 % C_PERIOD + 1) as f64
}

/// Σ_{i<n} (i mod m), in integers.
fn periodic_sum(n: u64, m: u64) -> u64 {
    let full = n / m;
    let rest = n % m;
    full * (m * (m - 1) / 2) + rest * rest.saturating_sub(1) / 2
}

/// The sum of `a` after a triad over `n` elements, computed in integer arithmetic.
pub fn expected_sum(n: usize) -> u64 {
    expected_sum_of(Op::Triad, 1, std::slice::from_ref(&(0..n))) as u64
}

/// Σ_{start ≤ i < end} of `b[i]` and of `c[i]`, in integers.
fn sums_of_b_and_c(part: &Range<usize>) -> (i64, i64) {
    let (lo, hi) = (part.start as u64, part.end.max(part.start) as u64);
    let b = periodic_sum(hi, B_PERIOD) - periodic_sum(lo, B_PERIOD);
    let c = periodic_sum(hi, C_PERIOD) - periodic_sum(lo, C_PERIOD) + (hi - lo);
    (b as i64, c as i64)
}

/// The sum of `a` over `parts` after `passes` passes of `op` (each pass over every part, one
/// call of the op's loop per part) since `a` was reset to [`A_RESET`], with `b` and `c` holding
/// their values: an exact integer, from [`Op::after`]. Every op's `a` after n passes is affine
/// in the element's `(a, b, c)` with integer coefficients, so the sum over a part is the
/// coefficients times the part's sums of `b` and `c`. `read` leaves each part's sum of `b` in
/// the part's first [`READ_LANES`] elements of `a`: the reference depends on the parts.
pub fn expected_sum_of(op: Op, passes: u64, parts: &[Range<usize>]) -> i64 {
    let f = |a: f64, b: f64, c: f64| op.after(passes, (a, b, c)).0;
    let k0 = f(0.0, 0.0, 0.0);
    let (ka, kb, kc) = (
        f(1.0, 0.0, 0.0) - k0,
        f(0.0, 1.0, 0.0) - k0,
        f(0.0, 0.0, 1.0) - k0,
    );
    let each = (k0 + ka * A_RESET) as i64;
    parts
        .iter()
        .map(|part| {
            let (b, c) = sums_of_b_and_c(part);
            let mut sum = each * part.len() as i64 + kb as i64 * b + kc as i64 * c;
            if op == Op::Read && passes > 0 {
                // The part's first lanes of a hold its sum of b in place of what they held.
                let lanes = part.start..part.end.min(part.start + READ_LANES);
                sum += b - lanes
                    .map(|i| f(A_RESET, b_value(i), c_value(i)) as i64)
                    .sum::<i64>();
            }
            sum
        })
        .sum()
}

/// One array of f64 in its own 2 MiB aligned mapping, starting `offset` bytes past its start.
pub struct Array {
    mapping: Mapping,
    offset: usize,
    len: usize,
}

impl Array {
    /// Maps `len` elements `offset` bytes (a multiple of 128) past a 2 MiB boundary, and
    /// advises huge pages (or advises against them). Nothing is touched: the pages land where
    /// the first thread that writes them runs.
    pub fn map(len: usize, offset: usize, huge_pages: bool) -> Result<Array> {
        debug_assert_eq!(offset % 128, 0);
        let bytes = len.max(1) * 8 + offset;
        let mut mapping = Mapping::new(bytes, ARRAY_ALIGN).map_err(|e| {
            Error::machine(format!(
                "cannot map {} for an array: {e}",
                format_bytes((bytes.div_ceil(ARRAY_ALIGN) + 1) as u64 * ARRAY_ALIGN as u64)
            ))
        })?;
        mapping.advise_huge_pages(huge_pages);
        Ok(Array {
            mapping,
            offset,
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn as_ptr(&self) -> *mut f64 {
        // SAFETY: the mapping holds offset + len × 8 bytes past its aligned start.
        unsafe { self.mapping.as_mut_ptr().add(self.offset) as *mut f64 }
    }
}

/// The three arrays of one cell, staggered by [`STAGGER_BYTES`].
pub struct Arrays {
    pub(crate) a: Array,
    pub(crate) b: Array,
    pub(crate) c: Array,
}

impl Arrays {
    pub fn map(len: usize, huge_pages: bool) -> Result<Arrays> {
        Ok(Arrays {
            a: Array::map(len, 0, huge_pages)?,
            b: Array::map(len, STAGGER_BYTES, huge_pages)?,
            c: Array::map(len, 2 * STAGGER_BYTES, huge_pages)?,
        })
    }

    pub fn len(&self) -> usize {
        self.a.len
    }

    pub fn is_empty(&self) -> bool {
        self.a.len == 0
    }

    /// Takes the three arrays' pages from the policy's nodes (first touch needs nothing).
    /// Before anything touches them: pages already in place stay where they are.
    pub fn bind(&self, policy: &MemPolicy) -> Result<()> {
        let (nodes, interleave) = match policy {
            MemPolicy::FirstTouch => return Ok(()),
            MemPolicy::Bind(n) => (vec![*n], false),
            MemPolicy::Interleave(nodes) => (nodes.clone(), true),
        };
        for arr in [&self.a, &self.b, &self.c] {
            arr.mapping.bind(&nodes, interleave).map_err(|e| {
                Error::machine(format!("cannot take the arrays' pages {policy}: {e}"))
            })?;
        }
        Ok(())
    }

    /// Bytes of the three arrays.
    pub fn bytes(&self) -> u64 {
        3 * self.a.len as u64 * 8
    }

    /// Bytes of the three arrays on transparent huge pages, or `None` where the OS has none
    /// (macOS) or they cannot be read (no /proc, no file descriptor left): unknown, not 0.
    pub fn huge_bytes(&self) -> Option<u64> {
        // A small array still sits in a whole huge page: the mapping counts at most its bytes.
        [&self.a, &self.b, &self.c]
            .iter()
            .map(|arr| {
                arr.mapping
                    .huge_page_bytes()
                    .map(|b| b.min(arr.len as u64 * 8))
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_sum_matches_a_direct_loop() {
        for n in [0usize, 1, 15, 16, 17, 1023, 1024, 1025, 5000, 100_003] {
            let direct: u64 = (0..n).map(|i| (b_value(i) + 3.0 * c_value(i)) as u64).sum();
            assert_eq!(expected_sum(n), direct, "n = {n}");
        }
    }

    /// Runs `passes` passes of `function` (with `op`'s scalar) over each of `parts` of arrays
    /// of `len` elements holding what a first touch leaves, and sums `a`.
    fn run(op: Op, function: crate::engine::kernel::OpFn, passes: u64, len: usize) -> Vec<f64> {
        let mut a = vec![A_RESET; len];
        let mut b: Vec<f64> = (0..len).map(b_value).collect();
        let mut c: Vec<f64> = (0..len).map(c_value).collect();
        for _ in 0..passes {
            for part in parts_of(len) {
                // SAFETY: three distinct vectors of len elements; part lies inside them.
                unsafe {
                    function(
                        a.as_mut_ptr().add(part.start),
                        b.as_mut_ptr().add(part.start),
                        c.as_mut_ptr().add(part.start),
                        part.len(),
                        op.scalar(),
                    )
                };
            }
        }
        a
    }

    /// Three uneven parts with a gap after the second (a per-thread set's parts need not
    /// tile the arrays).
    fn parts_of(len: usize) -> Vec<Range<usize>> {
        vec![0..len / 3, len / 3..len / 2, len / 2 + 5..len]
    }

    #[test]
    fn every_op_sums_to_its_reference_over_odd_and_even_passes_and_several_parts() {
        for op in Op::ALL {
            for passes in 0..=5u64 {
                for len in [17usize, 1030, 5003] {
                    let a = run(op, op.portable(), passes, len);
                    let sum: f64 = parts_of(len)
                        .iter()
                        .map(|p| a[p.clone()].iter().sum::<f64>())
                        .sum();
                    assert_eq!(
                        sum,
                        expected_sum_of(op, passes, &parts_of(len)) as f64,
                        "{op} × {passes} passes over {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_reference_catches_a_wrong_kernel() {
        // Each op run with another op's loop (the triad's for the rest, copy's for the triad),
        // at one and two passes: the sum differs from the reference.
        for op in Op::ALL {
            let wrong = if op == Op::Triad { Op::Copy } else { Op::Triad };
            for passes in [1u64, 2] {
                let a = run(op, wrong.portable(), passes, 1030);
                let sum: f64 = parts_of(1030)
                    .iter()
                    .map(|p| a[p.clone()].iter().sum::<f64>())
                    .sum();
                assert_ne!(
                    sum,
                    expected_sum_of(op, passes, &parts_of(1030)) as f64,
                    "{op} run with {wrong}'s loop × {passes}"
                );
            }
        }
    }

    #[test]
    fn expected_sum_of_a_large_array_stays_exact_in_f64() {
        // 1.2 GiB per array: the sum must stay below 2^53 so f64 partial sums are exact.
        let n = (1200usize << 20) / 8;
        assert!(expected_sum(n) < 1 << 53);
    }

    #[test]
    fn arrays_are_aligned_and_writable() {
        let arr = Arrays::map(1000, true).unwrap();
        assert_eq!(arr.a.as_ptr() as usize % ARRAY_ALIGN, 0);
        assert_eq!(arr.b.as_ptr() as usize % ARRAY_ALIGN, STAGGER_BYTES);
        assert_eq!(arr.c.as_ptr() as usize % ARRAY_ALIGN, 2 * STAGGER_BYTES);
        assert_eq!(arr.len(), 1000);
        assert_eq!(arr.bytes(), 24_000);
        // SAFETY: 1000 elements were mapped.
        unsafe {
            *arr.c.as_ptr().add(999) = 5.0;
            assert_eq!(*arr.c.as_ptr().add(999), 5.0);
        }
    }

    /// The cache set of an address in a cache whose set span (sets × 64-byte lines) is `span`.
    fn set_of(addr: usize, span: usize) -> usize {
        addr % span / 64
    }

    #[test]
    fn no_two_arrays_share_a_cache_set_in_any_partition() {
        use crate::engine::plan::{ArraySize, WorkingSet};
        // Per-thread and split sets of several sizes, 1 to 5 threads: every partition's first
        // elements of a, b and c lie in different sets, at least 20 lines apart (circularly),
        // for every power-of-two set span from 4 KiB (L1) to 2 MiB (the mapping's alignment).
        let sizes = [
            ArraySize::PerThread(5376),
            ArraySize::PerThread(87_296),
            ArraySize::PerThread(333 << 10),
            ArraySize::Split(3 << 20),
            ArraySize::Split((5 << 20) + 128),
        ];
        for size in sizes {
            let set = WorkingSet {
                name: "t".into(),
                level: None,
                size,
                note: None,
            };
            for threads in 1..=5 {
                let layout = set.layout(threads);
                let arr = Arrays::map(layout.len, false).unwrap();
                for part in &layout.parts {
                    // SAFETY: only addresses are formed; part.start < len.
                    let starts = [&arr.a, &arr.b, &arr.c]
                        .map(|x| unsafe { x.as_ptr().add(part.start) } as usize);
                    for s in starts {
                        assert_eq!(
                            s % 128,
                            0,
                            "{size:?} × {threads}: partition not 128-aligned"
                        );
                    }
                    let mut span = 4 << 10;
                    while span <= ARRAY_ALIGN {
                        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
                            let (x, y) = (set_of(starts[i], span), set_of(starts[j], span));
                            let lines = span / 64;
                            let apart = x.abs_diff(y).min(lines - x.abs_diff(y));
                            assert!(
                                apart >= 20,
                                "{size:?} × {threads}, partition {part:?}, span {span}: arrays \
                                 {i} and {j} are {apart} sets apart"
                            );
                        }
                        span *= 2;
                    }
                }
            }
        }
    }
}
