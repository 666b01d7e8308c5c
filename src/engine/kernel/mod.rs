//! The triad `a[i] = b[i] + s*c[i]`, one variant per instruction set, chosen at run time.
//!
//! Each variant is reached through a function pointer, so every pass is an opaque call that the
//! compiler can neither merge with the next pass nor drop.
//!
//! Every vector variant has the same shape, the one likwid-bench's hand-written kernels have:
//! a main loop of four vectors per iteration (16 elements for AVX2, 32 for AVX-512, 8 for SSE2
//! and NEON) with unaligned loads and aligned stores. On x86-64 the main loop is `asm!` and the
//! function opens with a fast path: when `a` is aligned to the vector and `n` is a whole number
//! of iterations (always so for the engine's partitions: 128-byte aligned, multiples of 16
//! elements), the pass is three tests, the loop set-up, the loop and `ret`, as short as
//! likwid-bench's own. Anything else goes to a cold general path: a scalar (or masked) head
//! until `a` is aligned, the main loop, single vectors, a scalar (or masked) tail. The
//! non-temporal variants store with `movntpd` / `stnp`. [`Kernel::function`] ends each
//! non-temporal pass with a store fence (`sfence`, `dmb ishst`), so the data is globally
//! visible before the worker reaches its barrier. [`Kernel::pass_function`] leaves the fence to
//! one [`Kernel::fence`] after the last pass of a round, which is what the timed loop should
//! use: in L1 the fence makes a non-temporal pass about 30 % slower. It also picks the loop by
//! [`Residence`]: for normal stores from DRAM on AMD, the AVX2 variant loads 128 bits at a time.
//!
//! Each architecture's module lists its loops in one table (`VARIANTS`: name, instruction set,
//! stores, availability, which residences it is the default for, and the unfenced and fenced
//! pass); [`Variant::all`] adds the portable loop. Selection, [`Kernel::loops`] and
//! [`Kernel::all_available`] read that table. The loops as `objdump -d` shows them are in
//! `docs/kernels.md`.

use crate::base::error::{Error, Result};
use std::fmt;

/// A table entry for a loop generic over `<…, NT, FENCE>` (`NT`: non-temporal stores, `FENCE`:
/// a store fence at the end): `variant!(Op, name, Isa, Normal | Nt, available, default_for,
/// function::<leading const arguments>)`. For normal stores `fenced` is the same function as
/// `pass`: there is no fence to add.
#[allow(unused_macros)] // the portable-only targets have no table
macro_rules! variant {
    ($op:ident, $name:literal, $isa:ident, Normal, $available:expr, $default_for:expr,
     $f:ident $(::<$($p:tt),*>)?) => {
        super::Variant {
            name: $name,
            op: super::Op::$op,
            isa: super::Isa::$isa,
            stores: super::Stores::Normal,
            available: $available,
            default_for: $default_for,
            pass: $f::<$($($p,)*)? false, false>,
            fenced: $f::<$($($p,)*)? false, false>,
        }
    };
    ($op:ident, $name:literal, $isa:ident, Nt, $available:expr, $default_for:expr,
     $f:ident $(::<$($p:tt),*>)?) => {
        super::Variant {
            name: $name,
            op: super::Op::$op,
            isa: super::Isa::$isa,
            stores: super::Stores::Nt,
            available: $available,
            default_for: $default_for,
            pass: $f::<$($($p,)*)? true, false>,
            fenced: $f::<$($($p,)*)? true, true>,
        }
    };
}

// First: it declares the ops, and `every_op!` for the architectures' tables.
#[macro_use]
mod op;
#[cfg(target_arch = "aarch64")]
mod aarch64;
mod scalar;
mod table;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
use aarch64::VARIANTS as ARCH_VARIANTS;
#[cfg(target_arch = "x86_64")]
use x86::VARIANTS as ARCH_VARIANTS;

pub use op::{Op, OpFn, READ_LANES, UnknownName};
use table::always;
pub use table::{Isa, Kernel, Residence, Stores, TriadFn, Variant};
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH_VARIANTS: [&[Variant]; Op::ALL.len()] = [&[]; Op::ALL.len()];

/// The plain loop of every op, which every target has, indexed by op.
static PORTABLE: [Variant; Op::ALL.len()] = {
    let mut table = [portable(Op::Triad); Op::ALL.len()];
    let mut k = 0;
    while k < Op::ALL.len() {
        table[k] = portable(Op::ALL[k]);
        k += 1;
    }
    table
};

/// The table entry of an op's portable loop.
const fn portable(op: Op) -> Variant {
    let pass = op.portable();
    Variant {
        name: "portable",
        op,
        isa: Isa::Portable,
        stores: Stores::Normal,
        available: || true,
        default_for: always,
        pass,
        fenced: pass,
    }
}

impl Variant {
    /// Every loop of this target, whether or not this CPU runs it: the architecture's table,
    /// then the portable loop.
    pub fn all() -> impl Iterator<Item = &'static Variant> {
        ARCH_VARIANTS.iter().copied().flatten().chain(&PORTABLE)
    }

    /// The loop of the table for `stores` called `name`: its name in the table, or the same
    /// without the `-nt` (so `--kernel 'avx2 xmm fma' --stores nt` finds `avx2-nt xmm fma`),
    /// with `-` or `_` for the spaces. Whether this CPU runs it is not asked here.
    ///
    /// The triad's loops only: `--kernel` names the triad's (every op has an `avx2 ymm`, so a
    /// name alone does not say which op's loop it is); [`Variant::named_for`] takes the op.
    pub fn named(name: &str, stores: Stores) -> Option<&'static Variant> {
        Variant::named_for(Op::Triad, name, stores)
    }

    /// [`Variant::named`] among the loops of `op`.
    pub fn named_for(op: Op, name: &str, stores: Stores) -> Option<&'static Variant> {
        let plain = |s: &str| s.replace(['-', '_'], " ").to_ascii_lowercase();
        let want = plain(name);
        Variant::all().find(|v| {
            v.op == op
                && v.stores == stores
                && (plain(v.name) == want || plain(&v.name.replacen("-nt", "", 1)) == want)
        })
    }

    /// The kernel this loop is one of.
    pub fn kernel(&self) -> Kernel {
        Kernel {
            isa: self.isa,
            stores: self.stores,
        }
    }
}

impl Isa {
    /// Whether this CPU can run the variant.
    pub fn available(self) -> bool {
        Variant::all().any(|v| v.isa == self && (v.available)())
    }

    /// The fastest variant this CPU has.
    pub fn best() -> Isa {
        Isa::ALL
            .into_iter()
            .find(|i| i.available())
            .unwrap_or(Isa::Portable)
    }

    /// Whether the variant has non-temporal stores on this target.
    fn has_nt(self) -> bool {
        Variant::all().any(|v| v.isa == self && v.stores == Stores::Nt)
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
    /// The kernel to run: the one asked for (refused, as a usage error, when the CPU lacks it
    /// or it has no non-temporal stores and they were asked for), or the best the CPU has.
    pub fn resolve(isa: Option<Isa>, stores: Stores) -> Result<Kernel> {
        let isa = match isa {
            Some(i) if !i.available() => {
                return Err(Error::usage(format!(
                    "--kernel {i}: this CPU does not support it"
                )));
            }
            Some(i) => i,
            None => Isa::best(),
        };
        if stores == Stores::Nt && !isa.has_nt() {
            return Err(Error::usage(format!(
                "--stores nt: the {isa} kernel has no non-temporal stores"
            )));
        }
        Ok(Kernel { isa, stores })
    }

    /// Every variant this CPU can run, fastest instruction set first, normal stores before
    /// non-temporal ones (for tests and benchmarks).
    pub fn all_available() -> Vec<Kernel> {
        Isa::ALL
            .into_iter()
            .flat_map(|isa| [Stores::Normal, Stores::Nt].map(|stores| Kernel { isa, stores }))
            .filter(|k| k.loops(Op::Triad).next().is_some())
            .collect()
    }

    /// A short name without spaces: `avx2`, `avx2-nt`.
    pub fn short_name(self) -> String {
        match self.stores {
            Stores::Normal => self.isa.name().to_string(),
            Stores::Nt => format!("{}-nt", self.isa),
        }
    }

    /// Every loop of this kernel that this CPU can run, in table order: the ones
    /// [`Kernel::pass_function`] picks and the alternatives it chooses between (for benchmarks
    /// that show what the choice is worth). None for a kernel this CPU cannot run.
    pub fn loops(self, op: Op) -> impl Iterator<Item = &'static Variant> {
        Variant::all().filter(move |v| v.op == op && v.kernel() == self && (v.available)())
    }

    /// The function that runs one pass of this variant, non-temporal stores fenced at its end,
    /// the loop for cache-resident data. For the engine's timed loop,
    /// [`Kernel::pass_function`] and [`Kernel::fence`] are faster.
    ///
    /// # Panics
    /// When this CPU cannot run the variant or the variant has no non-temporal stores and they
    /// are asked for: a `Kernel` that [`Kernel::resolve`] gave never does. (A `Kernel` read back
    /// from a snapshot of another machine may; running it here would fault.)
    pub fn function(self, op: Op) -> OpFn {
        self.default_loop(op, Residence::Cache).fenced
    }

    /// The function for one pass of many in a row: non-temporal stores are *not* fenced (call
    /// [`Kernel::fence`] after the last pass, before another thread may read `a`), and the loop
    /// is the one for where the arrays live. For a slice in L1 the fence makes a non-temporal
    /// pass about 30 % slower; for arrays in DRAM the AVX2 variant on AMD loads 128 bits at a
    /// time, which streams faster from memory on the machine it was tuned on (see
    /// `docs/kernels.md`). Results are the same whichever is picked.
    ///
    /// # Panics
    /// As [`Kernel::function`].
    pub fn pass_function(self, op: Op, residence: Residence) -> OpFn {
        self.default_loop(op, residence).pass
    }

    /// Makes the non-temporal stores of the passes before it visible to other threads (`sfence`
    /// on x86-64, `dmb ishst` on aarch64); nothing for normal stores. Call it after the last
    /// [`Kernel::pass_function`] pass and before the barrier that publishes the data.
    #[inline]
    pub fn fence(self) {
        if self.stores == Stores::Nt {
            store_fence();
        }
    }

    /// The loop the table names the default for `op` and `residence` on this CPU. An op that
    /// stores no array (`read`) has no non-temporal loops: its kernel's normal loop runs.
    pub fn default_loop(self, op: Op, residence: Residence) -> &'static Variant {
        let kernel = match self.stores {
            Stores::Nt if op.writes() == [false; 3] => Kernel {
                stores: Stores::Normal,
                ..self
            },
            _ => self,
        };
        kernel
            .loops(op)
            .find(|v| (v.default_for)(residence))
            .unwrap_or_else(|| panic!("kernel {self} cannot run on this CPU; use Kernel::resolve"))
    }
}

/// Makes earlier non-temporal stores of this thread globally visible.
#[inline]
pub(crate) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence is part of SSE, which every x86-64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier instruction; it touches no registers or memory of ours.
    unsafe {
        std::arch::asm!("dmb ishst", options(nostack, preserves_flags))
    };
}

#[cfg(test)]
mod tests {
    use super::scalar::head_len;
    use super::*;

    const SENTINEL: f64 = -7.5;
    const LENGTHS: [usize; 24] = [
        0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 129, 1000, 4096,
        4099,
    ];

    /// What `a`, `b`, `c` hold at `i` before a pass: small integers, so every op is exact
    /// whether or not it is fused and in whatever order `read` adds.
    fn start(i: usize) -> (f64, f64, f64) {
        (
            -((i % 5) as f64) - 1.0,
            (i % 1009) as f64,
            (i % 7) as f64 + 1.0,
        )
    }

    /// Every loop of the table this CPU runs, every op.
    fn available_loops() -> impl Iterator<Item = &'static Variant> {
        Variant::all().filter(|v| (v.available)())
    }

    /// Passes to check an op's loops with: 1 and 2 for in-place ops (what the arrays hold
    /// depends on whether the count is odd), 1 for the rest.
    fn passes(op: Op) -> &'static [u64] {
        if op.in_place() { &[1, 2] } else { &[1] }
    }

    /// Every function a kernel hands out for `op`: fenced, and unfenced for either residence.
    fn functions(kernel: Kernel, op: Op) -> [(String, OpFn); 3] {
        [
            (format!("{op} {kernel}"), kernel.function(op)),
            (
                format!("{op} {kernel}, pass_function(Cache)"),
                kernel.pass_function(op, Residence::Cache),
            ),
            (
                format!("{op} {kernel}, pass_function(Memory)"),
                kernel.pass_function(op, Residence::Memory),
            ),
        ]
    }

    /// Runs both functions of a loop of the table (unfenced and fenced) over `n` elements at
    /// byte offsets `oa`, `ob`, `oc`, for each count of passes the op is checked with.
    fn check(variant: &Variant, n: usize, offsets: (usize, usize, usize)) {
        for &p in passes(variant.op) {
            let name = format!("{} {}", variant.op, variant.name);
            check_fn(&name, variant.op, variant.pass, n, offsets, p);
            variant.kernel().fence();
            if variant.stores == Stores::Nt {
                let fenced = format!("{name}, fenced");
                check_fn(&fenced, variant.op, variant.fenced, n, offsets, p);
            }
        }
    }

    /// Runs `f`, a loop of `op`, `passes` times over `n` elements at byte offsets `oa`, `ob`,
    /// `oc` into three fresh buffers, then checks every element of the three arrays against
    /// [`Op::after`] (`read`: the first [`READ_LANES`] of `a` sum to the sum of `b`) and that no byte around them changed.
    fn check_fn(
        name: &str,
        op: Op,
        f: OpFn,
        n: usize,
        (oa, ob, oc): (usize, usize, usize),
        passes: u64,
    ) {
        const PAD: usize = 64; // bytes of guard on each side
        let words = (n * 8 + 2 * PAD + oa.max(ob).max(oc)) / 8 + 2;
        // u64 storage keeps the buffers 8-byte aligned; byte offsets then choose alignment.
        let mut bufs = [oa, ob, oc].map(|_| vec![SENTINEL.to_bits(); words]);
        let base = |buf: &mut Vec<u64>, off: usize| {
            // SAFETY: PAD + off + n*8 stays inside the buffer (words covers the largest offset).
            unsafe { (buf.as_mut_ptr() as *mut u8).add(PAD + off) as *mut f64 }
        };
        let [abuf, bbuf, cbuf] = &mut bufs;
        let (a, b, c) = (base(abuf, oa), base(bbuf, ob), base(cbuf, oc));
        // SAFETY: each pointer is valid for n elements (written unaligned where need be).
        unsafe {
            for i in 0..n {
                let (x, y, z) = start(i);
                a.add(i).write_unaligned(x);
                b.add(i).write_unaligned(y);
                c.add(i).write_unaligned(z);
            }
            for _ in 0..passes {
                f(a, b, c, n, op.scalar());
            }
        }
        store_fence();
        let sum: f64 = (0..n).map(|i| start(i).1).sum();
        for (k, (buf, off)) in bufs.iter().zip([oa, ob, oc]).enumerate() {
            // SAFETY: reading the whole of the buffer as bytes.
            let raw = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, words * 8) };
            let at = |byte: usize| f64::from_le_bytes(raw[byte..byte + 8].try_into().unwrap());
            let first = PAD + off;
            let array = ["a", "b", "c"][k];
            // read's first lanes of a hold partial sums: their total is checked.
            let lanes = if op == Op::Read && k == 0 && passes > 0 {
                n.min(READ_LANES)
            } else {
                0
            };
            let total: f64 = (0..lanes).map(|i| at(first + 8 * i)).sum();
            let want_total = if lanes > 0 { sum } else { 0.0 };
            assert_eq!(
                total, want_total,
                "{name} × {passes}: n={n} offsets {oa},{ob},{oc} bytes: a[..{lanes}] sums to \
                 {total}, want {want_total}"
            );
            for i in lanes..n {
                let got = at(first + 8 * i);
                let (want_a, want_b) = op.after(passes, start(i));
                let want = match k {
                    0 => want_a,
                    1 => want_b,
                    _ => start(i).2,
                };
                assert_eq!(
                    got, want,
                    "{name} × {passes}: n={n} offsets {oa},{ob},{oc} bytes: \
                     {array}[{i}] = {got}, want {want}"
                );
            }
            // Guards: the bytes before and after the array still hold the sentinel pattern.
            let sentinel = SENTINEL.to_bits().to_le_bytes();
            for byte in (0..first).chain(first + 8 * n..words * 8) {
                assert_eq!(
                    raw[byte],
                    sentinel[byte % 8],
                    "{name} × {passes}: n={n} offsets {oa},{ob},{oc}: wrote outside {array} \
                     (byte {byte})"
                );
            }
        }
    }

    #[test]
    fn every_loop_of_every_op_is_exact_for_every_length_and_element_offset() {
        // Every loop of the table, whichever the vendor check would pick, unfenced and fenced,
        // 1 and 2 passes for in-place ops.
        // Every pair of element offsets of a and b up to 129 elements; beyond, every offset of
        // a with one of b (the long lengths cost the time, and add no new head or tail).
        for variant in available_loops() {
            for n in LENGTHS {
                for oa in 0..8 {
                    for ob in 0..8 {
                        if n > 129 && ob != (5 * oa + 3) % 8 {
                            continue;
                        }
                        let oc = (oa + 3 * ob + 1) % 8;
                        check(variant, n, (8 * oa, 8 * ob, 8 * oc));
                    }
                }
            }
        }
    }

    #[test]
    fn what_kernels_hand_out_is_exact() {
        for kernel in Kernel::all_available() {
            for op in Op::ALL {
                for (name, f) in functions(kernel, op) {
                    for n in LENGTHS {
                        for (oa, ob, oc) in [(0, 0, 0), (8, 0, 16), (24, 40, 8), (64, 64, 64)] {
                            for &p in passes(op) {
                                check_fn(&name, op, f, n, (oa, ob, oc), p);
                                kernel.fence();
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn vector_loops_are_exact_at_odd_byte_offsets() {
        // Pointers not even aligned to f64: the vector loops must still be right (the
        // non-temporal ones fall back to normal stores). The portable one takes slices and so
        // needs f64 alignment, which Rust requires of it anyway.
        for variant in available_loops().filter(|v| v.isa != Isa::Portable) {
            for n in LENGTHS {
                for (oa, ob, oc) in [(1, 0, 0), (3, 5, 7), (0, 4, 2), (7, 7, 7), (4, 12, 20)] {
                    check(variant, n, (oa, ob, oc));
                }
            }
        }
    }

    #[test]
    fn engine_shaped_partitions_take_the_fast_path_and_are_exact() {
        // What the engine passes: 128-byte aligned starts, lengths a multiple of 16 (and of
        // 64, the longest main-loop iteration: AVX-512's read).
        for variant in available_loops() {
            for n in [16, 32, 48, 64, 128, 672, 1024, 10912] {
                check(variant, n, (64, 64, 64));
                check(variant, n, (128, 0, 256));
            }
        }
    }

    #[test]
    fn the_table_names_each_loop_once_under_its_kernel() {
        let names: Vec<(Op, &str)> = Variant::all().map(|v| (v.op, v.name)).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name:?} twice");
        }
        for v in Variant::all() {
            let short = v.kernel().short_name();
            assert!(
                v.name == short || v.name.starts_with(&format!("{short} ")),
                "{} is not named after {short}",
                v.name
            );
        }
    }

    #[test]
    fn every_op_has_loops_for_every_kernel_the_triad_has() {
        // No op falls back to another kernel's loop: every instruction set of this target has
        // a loop of every op, with non-temporal stores where the triad has them (`read`
        // stores nothing but its sum, so it has none).
        let kernels: Vec<Kernel> = Variant::all()
            .filter(|v| v.op == Op::Triad)
            .map(Variant::kernel)
            .collect();
        for op in Op::ALL {
            for k in &kernels {
                let has = Variant::all().any(|v| v.op == op && v.kernel() == *k);
                let want = !(op == Op::Read && k.stores == Stores::Nt);
                assert_eq!(has, want, "{op} {k}");
            }
        }
        for v in Variant::all() {
            assert!(kernels.contains(&v.kernel()), "{} {}", v.op, v.name);
        }
    }

    #[test]
    fn each_kernel_has_one_default_loop_per_op_and_residence() {
        for kernel in Kernel::all_available() {
            for op in Op::ALL {
                if op == Op::Read && kernel.stores == Stores::Nt {
                    assert_eq!(kernel.loops(op).count(), 0, "{kernel}");
                    continue;
                }
                for residence in [Residence::Cache, Residence::Memory] {
                    let defaults: Vec<&str> = kernel
                        .loops(op)
                        .filter(|v| (v.default_for)(residence))
                        .map(|v| v.name)
                        .collect();
                    assert_eq!(
                        defaults.len(),
                        1,
                        "{op} {kernel} {residence:?}: {defaults:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_op_has_a_loop_for_every_instruction_set_compiled_in() {
        // Each instruction set this target builds, with the store kinds it has loops for.
        let kernels: std::collections::HashSet<Kernel> =
            Variant::all().map(Variant::kernel).collect();
        assert!(kernels.contains(&Kernel {
            isa: Isa::Portable,
            stores: Stores::Normal
        }));
        for kernel in kernels {
            for op in Op::ALL {
                // An op that stores no array has no non-temporal loops (its normal ones run).
                if kernel.stores == Stores::Nt && op.writes() == [false; 3] {
                    continue;
                }
                assert!(
                    Variant::all().any(|v| v.op == op && v.kernel() == kernel),
                    "no {op} loop for {kernel}"
                );
            }
        }
        // The tables are indexed by op: row k holds the loops of `Op::ALL[k]` and no other.
        for (k, row) in ARCH_VARIANTS.iter().enumerate() {
            assert!(row.iter().all(|v| v.op == Op::ALL[k]), "row {k}");
        }
        for (k, v) in PORTABLE.iter().enumerate() {
            assert_eq!(v.op, Op::ALL[k]);
        }
    }

    #[test]
    fn the_vector_loops_of_each_op_differ_from_other_ops_loops() {
        // One generic function per instruction set, instantiated per op: the table must hand
        // each op its own instantiation (a copy-paste slip would run another op's loop and
        // the exactness tests would catch it too, but this names the entry).
        for v in available_loops().filter(|v| v.isa != Isa::Portable) {
            for w in available_loops().filter(|w| w.op != v.op) {
                assert_ne!(
                    v.pass as usize, w.pass as usize,
                    "{} {} = {} {}",
                    v.op, v.name, w.op, w.name
                );
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_avx2_loop_is_in_the_table_whichever_vendor_picks_it() {
        // `default_for` picks the FMA or the mul+add loops by vendor; the table holds all of
        // them, so the tests above run them all: ymm or xmm × FMA or mul+add × normal, nt, nt
        // fenced.
        let mut functions: Vec<usize> = Variant::all()
            .filter(|v| v.op == Op::Triad && v.isa == Isa::Avx2)
            .flat_map(|v| [v.pass as usize, v.fenced as usize])
            .collect();
        functions.sort_unstable();
        functions.dedup();
        assert_eq!(functions.len(), 12);
        for stores in [Stores::Normal, Stores::Nt] {
            for shape in ["ymm fma", "ymm mul+add", "xmm fma", "xmm mul+add"] {
                let name = format!(
                    "{} {shape}",
                    Kernel {
                        isa: Isa::Avx2,
                        stores
                    }
                    .short_name()
                );
                assert!(Variant::all().any(|v| v.name == name), "{name}");
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_defaults_follow_the_vendor() {
        // Mul+add on AMD (128-bit loads for normal stores from memory), FMA elsewhere.
        if !Isa::Avx2.available() {
            return;
        }
        let amd = x86::amd();
        for stores in [Stores::Normal, Stores::Nt] {
            let kernel = Kernel {
                isa: Isa::Avx2,
                stores,
            };
            for residence in [Residence::Cache, Residence::Memory] {
                let shape = match (amd, stores, residence) {
                    (true, Stores::Normal, Residence::Memory) => "xmm mul+add",
                    (true, _, _) => "ymm mul+add",
                    (false, _, _) => "ymm fma",
                };
                let want = format!("{} {shape}", kernel.short_name());
                assert_eq!(
                    kernel.default_loop(Op::Triad, residence).name,
                    want,
                    "{residence:?}"
                );
                assert_eq!(
                    kernel.pass_function(Op::Triad, residence) as usize,
                    kernel.default_loop(Op::Triad, residence).pass as usize
                );
            }
        }
    }

    #[test]
    fn names_find_the_triads_loop_or_the_ops_given() {
        // Every op has a loop called like this (the triad's are `… mul+add`, `… fma`): a name
        // alone must not hand the triad another op's loop.
        let name = Variant::all().find(|v| v.op == Op::Copy).unwrap().name;
        assert!(Variant::named(name, Stores::Normal).is_none_or(|v| v.op == Op::Triad));
        for op in Op::ALL {
            for v in Variant::all().filter(|v| v.op == op) {
                let found = Variant::named_for(op, v.name, v.stores).unwrap();
                assert_eq!((found.op, found.name), (op, v.name));
            }
        }
        let triad = Variant::all().find(|v| v.op == Op::Triad).unwrap();
        assert_eq!(
            Variant::named(triad.name, triad.stores).map(|v| v.name),
            Some(triad.name)
        );
    }

    #[test]
    fn loops_include_what_pass_function_picks() {
        for kernel in Kernel::all_available() {
            for op in Op::ALL
                .into_iter()
                .filter(|&op| kernel.loops(op).next().is_some())
            {
                let loops: Vec<usize> = kernel.loops(op).map(|v| v.pass as usize).collect();
                for residence in [Residence::Cache, Residence::Memory] {
                    let chosen = kernel.pass_function(op, residence) as usize;
                    assert!(loops.contains(&chosen), "{op} {kernel} {residence:?}");
                }
            }
        }
    }

    #[test]
    fn the_memory_loop_differs_only_where_one_exists() {
        for kernel in Kernel::all_available() {
            for op in Op::ALL
                .into_iter()
                .filter(|&op| kernel.loops(op).next().is_some())
            {
                let cache = kernel.pass_function(op, Residence::Cache) as usize;
                let memory = kernel.pass_function(op, Residence::Memory) as usize;
                #[cfg(target_arch = "x86_64")]
                let tuned = x86::amd()
                    && kernel.isa == Isa::Avx2
                    && (op == Op::Triad && kernel.stores == Stores::Normal
                        || op != Op::Triad
                            && x86::xmm_from_memory(op as u8, kernel.stores == Stores::Nt));
                #[cfg(not(target_arch = "x86_64"))]
                let tuned = false;
                assert_eq!(cache != memory, tuned, "{op} {kernel}");
                // Normal stores have no fence to leave out.
                if kernel.stores == Stores::Normal {
                    assert_eq!(kernel.function(op) as usize, cache, "{op} {kernel}");
                }
            }
        }
        for v in Variant::all().filter(|v| v.stores == Stores::Normal) {
            assert_eq!(v.pass as usize, v.fenced as usize, "{}", v.name);
        }
    }
    #[test]
    fn all_available_lists_what_resolve_accepts() {
        let all = Kernel::all_available();
        assert!(all.contains(&Kernel {
            isa: Isa::Portable,
            stores: Stores::Normal
        }));
        assert_eq!(all[0].isa, Isa::best());
        for isa in Isa::ALL {
            assert_eq!(isa.available(), all.iter().any(|k| k.isa == isa), "{isa}");
            for stores in [Stores::Normal, Stores::Nt] {
                let k = Kernel { isa, stores };
                assert_eq!(
                    all.contains(&k),
                    Kernel::resolve(Some(isa), stores).is_ok(),
                    "{k}"
                );
            }
        }
        #[cfg(target_arch = "x86_64")]
        assert!(
            all.iter()
                .any(|k| k.isa == Isa::Sse2 && k.stores == Stores::Nt)
        );
    }

    #[test]
    fn resolve_refuses_an_isa_the_cpu_lacks() {
        let missing = Isa::ALL.into_iter().find(|i| !i.available());
        // Every target lacks at least NEON or the x86 ones.
        let missing = missing.expect("some ISA is unavailable");
        let err = Kernel::resolve(Some(missing), Stores::Normal).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("--kernel {missing}: this CPU does not support it")
        );
    }

    #[test]
    fn resolve_refuses_nt_for_portable() {
        let err = Kernel::resolve(Some(Isa::Portable), Stores::Nt).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "--stores nt: the portable kernel has no non-temporal stores"
        );
    }

    #[test]
    fn resolve_defaults_to_the_best_isa() {
        let k = Kernel::resolve(None, Stores::Normal).unwrap();
        assert_eq!(k.isa, Isa::best());
        assert!(k.isa.available());
        assert_eq!(
            Kernel::resolve(None, Stores::Nt).unwrap().stores,
            Stores::Nt
        );
    }

    #[test]
    #[should_panic(expected = "cannot run on this CPU")]
    fn function_refuses_an_unavailable_kernel() {
        let missing = Isa::ALL.into_iter().find(|i| !i.available()).unwrap();
        let _ = Kernel {
            isa: missing,
            stores: Stores::Normal,
        }
        .function(Op::Triad);
    }

    #[test]
    fn isa_and_stores_names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(isa.name().parse::<Isa>().ok(), Some(isa));
            assert_eq!(isa.to_string().parse::<Isa>().ok(), Some(isa));
            assert_eq!(isa.name().to_uppercase().parse::<Isa>().ok(), Some(isa));
        }
        assert_eq!(" avx2 ".parse::<Isa>(), Ok(Isa::Avx2));
        let err = "avx10".parse::<Isa>().unwrap_err().to_string();
        assert!(err.contains("unknown kernel 'avx10'"), "{err}");
        for st in [Stores::Normal, Stores::Nt] {
            assert_eq!(st.to_string().parse::<Stores>().ok(), Some(st));
        }
        assert!("streaming".parse::<Stores>().is_err());
    }

    #[test]
    fn display_and_short_names() {
        let k = Kernel {
            isa: Isa::Avx2,
            stores: Stores::Nt,
        };
        assert_eq!(k.to_string(), "avx2 (non-temporal stores)");
        assert_eq!(k.short_name(), "avx2-nt");
        let k = Kernel {
            isa: Isa::Sse2,
            stores: Stores::Normal,
        };
        assert_eq!(k.to_string(), "sse2");
        assert_eq!(k.short_name(), "sse2");
    }

    #[test]
    fn head_len_counts_elements_to_the_boundary() {
        let p = |addr: usize| addr as *mut f64;
        assert_eq!(head_len(p(0x1000), 32, 100), 0);
        assert_eq!(head_len(p(0x1008), 32, 100), 3);
        assert_eq!(head_len(p(0x1018), 32, 100), 1);
        assert_eq!(head_len(p(0x1008), 32, 2), 2);
        assert_eq!(head_len(p(0x1008), 64, 100), 7);
        assert_eq!(head_len(p(0x1003), 32, 100), 0);
    }
}
