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
//! [`Residence`]: for normal stores from DRAM, the AVX2 variant loads 128 bits at a time.
//!
//! The AVX2 pass as it runs for an engine partition on this AMD machine (`objdump -d
//! --no-show-raw-insn`; every variant's inner loop is quoted with its function and in
//! `docs/kernels.md`):
//!
//! ```text
//! test   $0x1f,%dil                 ; a 32-byte aligned,
//! jne    <avx2_general>
//! test   %rcx,%rcx                  ; n > 0,
//! je     <avx2_general>
//! mov    %ecx,%eax
//! and    $0xf,%eax                  ; n a multiple of 16
//! jne    <avx2_general>
//! vbroadcastsd %xmm0,%ymm0          ; s
//! lea    (%rdi,%rcx,8),%rax         ; ends of a, b, c; index -n .. 0
//! lea    (%rsi,%rcx,8),%rsi
//! lea    (%rdx,%rcx,8),%rdx
//! neg    %rcx
//! vmulpd (%rdx,%rcx,8),%ymm0,%ymm1  ; s*c
//! ...                               ; 4 vmulpd, 4 vaddpd (c, b from memory), 4 stores
//! vmovapd %ymm4,0x60(%rax,%rcx,8)   ; vmovntpd for nt
//! add    $0x10,%rcx
//! jne    <loop>
//! vzeroupper                        ; (sfence first for nt)
//! ret
//! ```

use std::fmt;
use std::str::FromStr;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86;

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
pub type TriadFn = unsafe fn(a: *mut f64, b: *const f64, c: *const f64, n: usize, s: f64);

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

    /// Whether this CPU can run the variant.
    pub fn available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => true,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            Isa::Portable => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The fastest variant this CPU has.
    pub fn best() -> Isa {
        Isa::ALL
            .into_iter()
            .find(|i| i.available())
            .unwrap_or(Isa::Portable)
    }

    /// Whether the variant has non-temporal stores.
    pub fn has_nt(self) -> bool {
        !matches!(self, Isa::Portable)
    }

    /// Bytes in one vector register of the variant (8 for the portable one: one `f64`).
    pub fn vector_bytes(self) -> usize {
        match self {
            Isa::Avx512 => 64,
            Isa::Avx2 => 32,
            Isa::Sse2 | Isa::Neon => 16,
            Isa::Portable => 8,
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Isa::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown kernel '{s}' (one of avx512, avx2, sse2, neon, portable)")
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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" => Ok(Stores::Normal),
            "nt" => Ok(Stores::Nt),
            _ => Err(format!("unknown stores '{s}' (one of normal, nt)")),
        }
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
    /// The kernel to run: the one asked for (refused when the CPU lacks it or it has no
    /// non-temporal stores and they were asked for), or the best the CPU has.
    pub fn resolve(isa: Option<Isa>, stores: Stores) -> Result<Kernel, String> {
        let isa = match isa {
            Some(i) if !i.available() => {
                return Err(format!("--kernel {i}: this CPU does not support it"));
            }
            Some(i) => i,
            None => Isa::best(),
        };
        if stores == Stores::Nt && !isa.has_nt() {
            return Err(format!(
                "--stores nt: the {isa} kernel has no non-temporal stores"
            ));
        }
        Ok(Kernel { isa, stores })
    }

    /// Every variant this CPU can run, fastest instruction set first, normal stores before
    /// non-temporal ones (for tests and benchmarks).
    pub fn all_available() -> Vec<Kernel> {
        Isa::ALL
            .into_iter()
            .filter(|i| i.available())
            .flat_map(|isa| {
                let nt = isa.has_nt().then_some(Kernel {
                    isa,
                    stores: Stores::Nt,
                });
                [
                    Some(Kernel {
                        isa,
                        stores: Stores::Normal,
                    }),
                    nt,
                ]
            })
            .flatten()
            .collect()
    }

    /// A short name without spaces: `avx2`, `avx2-nt`.
    pub fn short_name(self) -> String {
        match self.stores {
            Stores::Normal => self.isa.name().to_string(),
            Stores::Nt => format!("{}-nt", self.isa),
        }
    }

    /// The function that runs one pass of this variant, non-temporal stores fenced at its end,
    /// the loop for cache-resident data. For the engine's timed loop,
    /// [`Kernel::pass_function`] and [`Kernel::fence`] are faster.
    ///
    /// # Panics
    /// When this CPU cannot run the variant or the variant has no non-temporal stores and they
    /// are asked for: a `Kernel` that [`Kernel::resolve`] gave never does. (A `Kernel` read back
    /// from a snapshot of another machine may; running it here would fault.)
    pub fn function(self) -> TriadFn {
        self.select(Residence::Cache, true)
    }

    /// The function for one pass of many in a row: non-temporal stores are *not* fenced (call
    /// [`Kernel::fence`] after the last pass, before another thread may read `a`), and the loop
    /// is the one for where the arrays live. For a slice in L1 the fence makes a non-temporal
    /// pass about 30 % slower; for arrays in DRAM the AVX2 variant loads 128 bits at a time,
    /// which streams faster from memory on the machine it was tuned on (see
    /// `docs/kernels.md`). Results are the same whichever is picked.
    ///
    /// # Panics
    /// As [`Kernel::function`].
    pub fn pass_function(self, residence: Residence) -> TriadFn {
        self.select(residence, false)
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

    /// Every loop this variant can run for a pass, unfenced, by name: the one
    /// [`Kernel::pass_function`] picks and the alternatives it chose between (for benchmarks
    /// that show what the choice is worth). One entry where there is no choice.
    ///
    /// # Panics
    /// As [`Kernel::function`].
    pub fn loops(self) -> Vec<(&'static str, TriadFn)> {
        let chosen = self.pass_function(Residence::Cache);
        #[cfg(target_arch = "x86_64")]
        if self.isa == Isa::Avx2 {
            use x86::{triad_avx2 as y, triad_avx2_mem as x};
            return if self.stores == Stores::Nt {
                vec![
                    ("ymm mul+add", y::<false, true, false> as TriadFn),
                    ("ymm fma", y::<true, true, false>),
                    ("xmm mul+add", x::<false, true, false>),
                    ("xmm fma", x::<true, true, false>),
                ]
            } else {
                vec![
                    ("ymm mul+add", y::<false, false, false> as TriadFn),
                    ("ymm fma", y::<true, false, false>),
                    ("xmm mul+add", x::<false, false, false>),
                    ("xmm fma", x::<true, false, false>),
                ]
            };
        }
        vec![("main", chosen)]
    }

    fn select(self, residence: Residence, fenced: bool) -> TriadFn {
        assert!(
            self.isa.available() && (self.stores == Stores::Normal || self.isa.has_nt()),
            "kernel {self} cannot run on this CPU; use Kernel::resolve"
        );
        let nt = self.stores == Stores::Nt;
        let mem = residence == Residence::Memory;
        #[cfg(target_arch = "x86_64")]
        use x86::{triad_avx2, triad_avx2_mem, triad_avx512, triad_sse2};
        #[cfg(target_arch = "x86_64")]
        let zen = x86::amd();
        #[cfg(target_arch = "aarch64")]
        use aarch64::triad_neon;
        match (self.isa, nt, fenced) {
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx512, false, _) => triad_avx512::<false, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx512, true, false) => triad_avx512::<true, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx512, true, true) => triad_avx512::<true, true>,
            // AMD (tuned on Zen 3): vmulpd + vaddpd, and for normal stores from DRAM 128-bit
            // loads; the non-temporal loop stays ymm there (docs/kernels.md).
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, false, _) if zen && mem => triad_avx2_mem::<false, false, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, false, _) if zen => triad_avx2::<false, false, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, true, false) if zen => triad_avx2::<false, true, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, true, true) if zen => triad_avx2::<false, true, true>,
            // Elsewhere: likwid-bench's FMA loop.
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, false, _) => triad_avx2::<true, false, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, true, false) => triad_avx2::<true, true, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, true, true) => triad_avx2::<true, true, true>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Sse2, false, _) => triad_sse2::<false, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Sse2, true, false) => triad_sse2::<true, false>,
            #[cfg(target_arch = "x86_64")]
            (Isa::Sse2, true, true) => triad_sse2::<true, true>,
            #[cfg(target_arch = "aarch64")]
            (Isa::Neon, false, _) => triad_neon::<false, false>,
            #[cfg(target_arch = "aarch64")]
            (Isa::Neon, true, false) => triad_neon::<true, false>,
            #[cfg(target_arch = "aarch64")]
            (Isa::Neon, true, true) => triad_neon::<true, true>,
            _ => {
                let _ = mem;
                triad_portable
            }
        }
    }
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

/// Makes earlier non-temporal stores of this thread globally visible.
#[inline]
pub fn store_fence() {
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

/// Portable fallback: a plain loop the compiler may vectorise for the baseline target (SSE2 on
/// x86-64, NEON on aarch64). No non-temporal stores. On x86-64 LLVM makes it two xmm per array
/// and iteration, behind an overlap check and a scalar loop for short or overlapping arrays:
///
/// ```text
/// movupd     (%rdx,%r8,8),%xmm2     ; c
/// movupd 0x10(%rdx,%r8,8),%xmm3
/// mulpd  %xmm1,%xmm2
/// mulpd  %xmm1,%xmm3
/// movupd     (%rsi,%r8,8),%xmm4     ; b
/// addpd  %xmm2,%xmm4
/// movupd 0x10(%rsi,%r8,8),%xmm2
/// addpd  %xmm3,%xmm2
/// movupd %xmm4,    (%rdi,%r8,8)     ; a
/// movupd %xmm2,0x10(%rdi,%r8,8)
/// add    $0x4,%r8
/// cmp    %r8,%rax
/// jne    <loop>
/// ```
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements and aligned to `f64`, `a` not overlapping `b` or `c`.
unsafe fn triad_portable(a: *mut f64, b: *const f64, c: *const f64, n: usize, s: f64) {
    // SAFETY: the caller guarantees validity, alignment and no overlap for n elements.
    let (a, b, c) = unsafe {
        (
            std::slice::from_raw_parts_mut(a, n),
            std::slice::from_raw_parts(b, n),
            std::slice::from_raw_parts(c, n),
        )
    };
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}

/// The scalar triad over `n < LIMIT` elements with unaligned accesses: the heads and tails of
/// the vector variants, below one vector. `FUSED` rounds once (`fma`), as the vector loop of an
/// FMA variant does, so every element of a pass is computed the same way. The bound keeps the
/// compiler from vectorising (and unrolling, and alias-checking) a loop of at most a few trips.
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, `a` not overlapping `b` or `c`.
#[allow(dead_code)] // used only by the vector variants, which not every target has
#[inline(always)]
unsafe fn scalar_triad<const FUSED: bool, const LIMIT: usize>(
    a: *mut f64,
    b: *const f64,
    c: *const f64,
    n: usize,
    s: f64,
) {
    debug_assert!(
        n < LIMIT,
        "scalar_triad: {n} elements, at most {}",
        LIMIT - 1
    );
    // A constant trip count with an early exit: unrolled into a chain of compares, never
    // vectorised.
    for i in 0..LIMIT - 1 {
        if i >= n {
            break;
        }
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe {
            let (bi, ci) = (b.add(i).read_unaligned(), c.add(i).read_unaligned());
            let v = if FUSED {
                s.mul_add(ci, bi)
            } else {
                bi + s * ci
            };
            a.add(i).write_unaligned(v);
        }
    }
}

/// Elements before `a` reaches an `align`-byte boundary (a power of two), at most `n`; 0 when
/// `a` is not 8-byte aligned (it never gets there by whole elements).
#[allow(dead_code)]
#[inline(always)]
fn head_len(a: *mut f64, align: usize, n: usize) -> usize {
    let addr = a as usize;
    if !addr.is_multiple_of(8) {
        return 0;
    }
    (((align - (addr & (align - 1))) & (align - 1)) / 8).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: f64 = 3.0;
    const SENTINEL: f64 = -7.5;
    const LENGTHS: [usize; 24] = [
        0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 129, 1000, 4096,
        4099,
    ];

    /// Small integers, so `b + s*c` is exact whether or not it is fused.
    fn b_at(i: usize) -> f64 {
        (i % 1009) as f64
    }
    fn c_at(i: usize) -> f64 {
        (i % 7) as f64 + 1.0
    }

    /// Every function a kernel hands out: fenced, and unfenced for either residence.
    fn functions(kernel: Kernel) -> [(String, TriadFn); 3] {
        [
            (kernel.to_string(), kernel.function()),
            (
                format!("{kernel}, pass_function(Cache)"),
                kernel.pass_function(Residence::Cache),
            ),
            (
                format!("{kernel}, pass_function(Memory)"),
                kernel.pass_function(Residence::Memory),
            ),
        ]
    }

    /// Runs every function of `kernel` over `n` elements at byte offsets `oa`, `ob`, `oc`.
    fn check(kernel: Kernel, n: usize, offsets: (usize, usize, usize)) {
        for (name, f) in functions(kernel) {
            check_fn(&name, f, n, offsets);
            kernel.fence();
        }
    }

    /// Runs `f` over `n` elements at byte offsets `oa`, `ob`, `oc` into three fresh buffers and
    /// checks every element of `a` and that nothing around it was written.
    fn check_fn(kernel: &str, f: TriadFn, n: usize, (oa, ob, oc): (usize, usize, usize)) {
        const PAD: usize = 64; // bytes of guard on each side
        let bytes = n * 8 + 2 * PAD;
        // u64 storage keeps the buffers 8-byte aligned; byte offsets then choose alignment.
        let mut abuf = vec![SENTINEL.to_bits(); bytes / 8 + 2];
        let mut bbuf = vec![0u64; bytes / 8 + 2];
        let mut cbuf = vec![0u64; bytes / 8 + 2];
        let base = |buf: &mut Vec<u64>, off: usize| {
            // SAFETY: PAD + off + n*8 stays inside the buffer (bytes/8 + 2 words).
            unsafe { (buf.as_mut_ptr() as *mut u8).add(PAD + off) as *mut f64 }
        };
        let (a, b, c) = (
            base(&mut abuf, oa),
            base(&mut bbuf, ob),
            base(&mut cbuf, oc),
        );
        // SAFETY: each pointer is valid for n elements (written unaligned where need be).
        unsafe {
            for i in 0..n {
                b.add(i).write_unaligned(b_at(i));
                c.add(i).write_unaligned(c_at(i));
            }
            f(a, b, c, n, S);
        }
        let bytes_a = abuf.len() * 8;
        // SAFETY: reading the whole of abuf as bytes.
        let raw = unsafe { std::slice::from_raw_parts(abuf.as_ptr() as *const u8, bytes_a) };
        let at = |byte: usize| f64::from_le_bytes(raw[byte..byte + 8].try_into().unwrap());
        let start = PAD + oa;
        for i in 0..n {
            let got = at(start + 8 * i);
            let want = b_at(i) + S * c_at(i);
            assert_eq!(
                got, want,
                "{kernel}: n={n} offsets {oa},{ob},{oc} bytes: a[{i}] = {got}, want {want}"
            );
        }
        // Guards: the bytes before a and after a[n-1] still hold the sentinel pattern.
        let sentinel = SENTINEL.to_bits().to_le_bytes();
        for byte in (0..start).chain(start + 8 * n..bytes_a) {
            assert_eq!(
                raw[byte],
                sentinel[byte % 8],
                "{kernel}: n={n} offsets {oa},{ob},{oc}: wrote outside a (byte {byte})"
            );
        }
    }

    #[test]
    fn every_variant_is_exact_for_every_length_and_element_offset() {
        for kernel in Kernel::all_available() {
            for n in LENGTHS {
                for oa in 0..8 {
                    for ob in 0..8 {
                        let oc = (oa + 3 * ob + 1) % 8;
                        check(kernel, n, (8 * oa, 8 * ob, 8 * oc));
                    }
                }
            }
        }
    }

    #[test]
    fn vector_variants_are_exact_at_odd_byte_offsets() {
        // Pointers not even aligned to f64: the vector variants must still be right (the
        // non-temporal ones fall back to normal stores). The portable one takes slices and so
        // needs f64 alignment, which Rust requires of it anyway.
        for kernel in Kernel::all_available() {
            if kernel.isa == Isa::Portable {
                continue;
            }
            for n in LENGTHS {
                for (oa, ob, oc) in [(1, 0, 0), (3, 5, 7), (0, 4, 2), (7, 7, 7), (4, 12, 20)] {
                    check(kernel, n, (oa, ob, oc));
                }
            }
        }
    }

    #[test]
    fn engine_shaped_partitions_take_the_fast_path_and_are_exact() {
        // What the engine passes: 128-byte aligned starts, lengths a multiple of 16.
        for kernel in Kernel::all_available() {
            for n in [16, 32, 48, 672, 10912] {
                check(kernel, n, (64, 64, 64));
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_avx2_loop_is_exact_whichever_vendor_picks_it() {
        // `select` picks the FMA or the mul+add loops by vendor; run all of them here.
        if !Isa::Avx2.available() {
            return;
        }
        use x86::{triad_avx2 as y, triad_avx2_mem as x};
        let loops: [(&str, TriadFn); 12] = [
            ("ymm fma", y::<true, false, false>),
            ("ymm fma nt", y::<true, true, false>),
            ("ymm fma nt fenced", y::<true, true, true>),
            ("ymm mul+add", y::<false, false, false>),
            ("ymm mul+add nt", y::<false, true, false>),
            ("ymm mul+add nt fenced", y::<false, true, true>),
            ("xmm fma", x::<true, false, false>),
            ("xmm fma nt", x::<true, true, false>),
            ("xmm fma nt fenced", x::<true, true, true>),
            ("xmm mul+add", x::<false, false, false>),
            ("xmm mul+add nt", x::<false, true, false>),
            ("xmm mul+add nt fenced", x::<false, true, true>),
        ];
        for (name, f) in loops {
            for n in LENGTHS {
                for (oa, ob, oc) in [(0, 0, 0), (8, 0, 16), (24, 40, 8), (0, 3, 5), (1, 2, 3)] {
                    check_fn(name, f, n, (oa, ob, oc));
                }
            }
        }
        store_fence();
    }

    #[test]
    fn loops_include_what_pass_function_picks() {
        for kernel in Kernel::all_available() {
            let loops: Vec<usize> = kernel.loops().iter().map(|(_, f)| *f as usize).collect();
            for residence in [Residence::Cache, Residence::Memory] {
                let chosen = kernel.pass_function(residence) as usize;
                assert!(loops.contains(&chosen), "{kernel} {residence:?}");
            }
            for (name, f) in kernel.loops() {
                check_fn(name, f, 1000, (8, 16, 24));
            }
            kernel.fence();
        }
    }

    #[test]
    fn the_memory_loop_differs_only_where_one_exists() {
        for kernel in Kernel::all_available() {
            let cache = kernel.pass_function(Residence::Cache) as usize;
            let memory = kernel.pass_function(Residence::Memory) as usize;
            #[cfg(target_arch = "x86_64")]
            let tuned = x86::amd();
            #[cfg(not(target_arch = "x86_64"))]
            let tuned = false;
            assert_eq!(
                cache != memory,
                tuned && kernel.isa == Isa::Avx2 && kernel.stores == Stores::Normal,
                "{kernel}"
            );
            // Normal stores have no fence to leave out.
            if kernel.stores == Stores::Normal {
                assert_eq!(kernel.function() as usize, cache, "{kernel}");
            }
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
        assert_eq!(
            err,
            format!("--kernel {missing}: this CPU does not support it")
        );
    }

    #[test]
    fn resolve_refuses_nt_for_portable() {
        let err = Kernel::resolve(Some(Isa::Portable), Stores::Nt).unwrap_err();
        assert_eq!(
            err,
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
        .function();
    }

    #[test]
    fn isa_and_stores_names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
            assert_eq!(isa.to_string().parse::<Isa>(), Ok(isa));
            assert_eq!(isa.name().to_uppercase().parse::<Isa>(), Ok(isa));
        }
        assert_eq!(" avx2 ".parse::<Isa>(), Ok(Isa::Avx2));
        let err = "avx10".parse::<Isa>().unwrap_err();
        assert!(err.contains("unknown kernel 'avx10'"), "{err}");
        for st in [Stores::Normal, Stores::Nt] {
            assert_eq!(st.to_string().parse::<Stores>(), Ok(st));
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
