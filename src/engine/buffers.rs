//! The three arrays of a cell: 2 MiB aligned anonymous mappings advised onto huge pages (where
//! the OS has them), the values they hold, and the integer reference the sum of `a` is checked
//! against.

use super::plan::MemPolicy;
use crate::error::{Error, Result};
use crate::platform::Mapping;
use crate::units::format_bytes;

/// Alignment of each array (and the unit of its mapping): one x86 huge page.
pub const ARRAY_ALIGN: usize = 2 << 20;

/// The triad's scalar. `b`, `c` and `s` are small integers, so `b + s*c` is exact with or
/// without a fused multiply-add, and every partial sum of `a` is an exact integer.
pub const SCALAR: f64 = 3.0;

const B_PERIOD: u64 = 1024;
const C_PERIOD: u64 = 16;

/// `b[i]`: 0, 1, …, 1023, 0, 1, …
pub fn b_value(i: usize) -> f64 {
    (i as u64 % B_PERIOD) as f64
}

/// `c[i]`: 1, 2, …, 16, 1, 2, …
pub fn c_value(i: usize) -> f64 {
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
    let n = n as u64;
    let b = periodic_sum(n, B_PERIOD);
    let c = periodic_sum(n, C_PERIOD) + n;
    b + SCALAR as u64 * c
}

/// One array of f64 in its own 2 MiB aligned mapping.
pub struct Array {
    mapping: Mapping,
    len: usize,
}

impl Array {
    /// Maps `len` elements, 2 MiB aligned, and advises huge pages (or advises against them).
    /// Nothing is touched: the pages land where the first thread that writes them runs.
    pub fn map(len: usize, huge_pages: bool) -> Result<Array> {
        let bytes = len.max(1) * 8;
        let mut mapping = Mapping::new(bytes, ARRAY_ALIGN).map_err(|e| {
            Error::machine(format!(
                "cannot map {} for an array: {e}",
                format_bytes((bytes.div_ceil(ARRAY_ALIGN) + 1) as u64 * ARRAY_ALIGN as u64)
            ))
        })?;
        mapping.advise_huge_pages(huge_pages);
        Ok(Array { mapping, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *mut f64 {
        self.mapping.as_mut_ptr() as *mut f64
    }
}

/// The three arrays of one cell.
pub struct Arrays {
    pub a: Array,
    pub b: Array,
    pub c: Array,
}

impl Arrays {
    pub fn map(len: usize, huge_pages: bool) -> Result<Arrays> {
        Ok(Arrays {
            a: Array::map(len, huge_pages)?,
            b: Array::map(len, huge_pages)?,
            c: Array::map(len, huge_pages)?,
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
            let direct: u64 = (0..n)
                .map(|i| (b_value(i) + SCALAR * c_value(i)) as u64)
                .sum();
            assert_eq!(expected_sum(n), direct, "n = {n}");
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
        assert_eq!(arr.len(), 1000);
        assert_eq!(arr.bytes(), 24_000);
        // SAFETY: 1000 elements were mapped.
        unsafe {
            *arr.c.as_ptr().add(999) = 5.0;
            assert_eq!(*arr.c.as_ptr().add(999), 5.0);
        }
    }
}
