//! The traffic patterns stream-top measures: STREAM's four kernels, a read-only reduction, a
//! write-only fill, an in-place update and three read:write mixes. Each is one loop over the
//! cell's three arrays `a`, `b`, `c`; this file says what each computes, how many bytes it is
//! counted for, which scalar it runs with, and what the arrays hold after a number of passes
//! (the integer reference each op's checksum is checked against).
//!
//! Bytes are counted the STREAM way: 8 per array element read or written, no write-allocate
//! traffic (a store that misses reads its line first unless it is non-temporal; STREAM does not
//! count that read, and neither do we).
//!
//! Ops that write an array they also read (`update`, the mixes) are built so that two passes
//! give back what was there before (`a = -a`; `a = b + c - a`; `a = s·b - a`; a swap of `a`
//! and `b`): what the arrays hold after any number of passes is exact in small integers and
//! depends only on whether that number is odd.

use crate::base::error::Result;
use std::fmt;
use std::str::FromStr;

/// One pass of an op over `n` elements of `a`, `b`, `c` with scalar `s`. Which arrays are read
/// and written is the op's ([`Op::reads`], [`Op::writes`]); the three pointers are passed to
/// every op so that one table type holds them all. The arrays must be valid for `n` elements,
/// aligned to `f64` and must not overlap. `n` may be anything, 0 included. `read` stores its
/// sum of `b` in the first [`READ_LANES`] elements of `a` (fewer when `n` is smaller), so that
/// its result is a store the compiler cannot drop and the checksum can check.
pub type OpFn = unsafe fn(a: *mut f64, b: *mut f64, c: *mut f64, n: usize, s: f64);

/// How many elements of `a` a `read` pass leaves its sum in: partial sums whose total is the
/// sum of `b` (one line of `a`, 64 bytes). The vector loops store their accumulators' lanes
/// there as they are, so that no horizontal sum ends a pass: on a short pass (8 KiB, 64 cycles
/// of loads) the chain of adds and the reload through the stack that a single sum needs cost
/// a third of the rate (Intel Xeon, model 207: 221 against 312 GB/s). The scalar loops store
/// the whole sum in `a[0]` and zeros in the rest.
pub const READ_LANES: usize = 8;

/// Stores `read`'s `sum` of `b` as a pass of the scalar loops does: `a[0]`, and zeros in the
/// rest of its first [`READ_LANES`] elements (of `n`).
///
/// # Safety
/// `a` valid for `n` elements.
#[inline(always)]
pub(crate) unsafe fn store_read_sum(a: *mut f64, n: usize, sum: f64) {
    for i in 0..n.min(READ_LANES) {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { a.add(i).write_unaligned(if i == 0 { sum } else { 0.0 }) };
    }
}

/// The one declaration of the ops: each row gives the variant, its code (the const generic
/// argument of the vector loops), its name, formula, STREAM's name, the arrays it reads and
/// writes, its scalar, its portable loop and `Nt` where it stores an array (so that it has
/// non-temporal loops). From it follow [`Op`], [`Op::ALL`], the per-op facts, the codes
/// (`codes::TRIAD` …) and `every_op!`, which builds an instruction set's table of loops in the
/// same order. `$d` is a `$`, for the macro it defines.
macro_rules! declare_ops {
    ($d:tt $(
        $(#[$attr:meta])*
        $op:ident = $code:ident, $name:literal, $formula:literal, $stream:expr,
        reads $reads:expr, writes $writes:expr, s $scalar:expr, $portable:ident $(, $nt:ident)?;
    )*) => {
        /// A traffic pattern: the loop each worker runs over its part of the arrays.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub enum Op {
            $($(#[$attr])* $op,)*
        }

        impl Op {
            /// Every op, in the order tables list them.
            pub const ALL: [Op; [$(Op::$op),*].len()] = [$(Op::$op),*];
        }

        /// What each op is, indexed by the op.
        const FACTS: [Facts; Op::ALL.len()] = [$(
            Facts {
                name: $name,
                formula: $formula,
                stream_name: $stream,
                reads: $reads,
                writes: $writes,
                scalar: $scalar,
                portable: $portable,
            },
        )*];

        /// Each op as the const generic argument of the vector loops (`const OP: u8`): its
        /// discriminant.
        #[allow(dead_code)] // the portable-only targets have no vector loops
        pub(super) mod codes {
            $(pub(in super::super) const $code: u8 = super::Op::$op as u8;)*
        }

        /// An instruction set's table of loops, indexed by op: `$loops_of!(Op, CODE[, Nt])`
        /// for each op, `Nt` where the op stores an array. The table's type,
        /// `[&[Variant]; Op::ALL.len()]`, makes a missing op a compile error.
        #[allow(unused_macros)] // the portable-only targets have no table
        macro_rules! every_op {
            ($d loops_of:ident) => {
                [$($d loops_of!($op, $code $(, $nt)?)),*]
            };
        }
    };
}

/// The facts of one op, one row of [`declare_ops!`].
struct Facts {
    name: &'static str,
    formula: &'static str,
    stream_name: Option<&'static str>,
    reads: [bool; 3],
    writes: [bool; 3],
    scalar: f64,
    portable: OpFn,
}

const NONE: Option<&str> = None;
const A: [bool; 3] = [true, false, false];
const B: [bool; 3] = [false, true, false];
const AB: [bool; 3] = [true, true, false];
const BC: [bool; 3] = [false, true, true];
const ABC: [bool; 3] = [true, true, true];
const NO: [bool; 3] = [false, false, false];

// Scalars: STREAM's 3 for scale and triad (and the 2:1 mix, and the value `write` fills
// with), −1 for `update` so that its values stay ±a.
#[rustfmt::skip] // a table: one op a row
declare_ops! {$
    /// `a = b + s·c` (STREAM's Triad).
    #[default]
    Triad = TRIAD,   "triad",   "a = b + s·c",   Some("Triad"), reads BC,  writes A,  s 3.0,  triad_portable, Nt;
    /// `a = b` (STREAM's Copy).
    Copy = COPY,     "copy",    "a = b",         Some("Copy"),  reads B,   writes A,  s 3.0,  portable_copy, Nt;
    /// `a = s·b` (STREAM's Scale).
    Scale = SCALE,   "scale",   "a = s·b",       Some("Scale"), reads B,   writes A,  s 3.0,  portable_scale, Nt;
    /// `a = b + c` (STREAM's Add).
    Add = ADD,       "add",     "a = b + c",     Some("Add"),   reads BC,  writes A,  s 3.0,  portable_add, Nt;
    /// `a[0..8] = Σ b` as partial sums ([`READ_LANES`]): reads one array (likwid-bench's
    /// `load`/`sum`); the one element per pass it writes is not counted.
    Read = READ,     "read",    "sum of b",      NONE,          reads B,   writes NO, s 3.0,  portable_read;
    /// `a = s`: writes one array (likwid-bench's `store`).
    Write = WRITE,   "write",   "a = s",         NONE,          reads NO,  writes A,  s 3.0,  portable_write, Nt;
    /// `a = s·a` with `s = -1` (likwid-bench's `update`).
    Update = UPDATE, "update",  "a = s·a",       NONE,          reads A,   writes A,  s -1.0, portable_update, Nt;
    /// `a = b + c - a`: reads three arrays, writes one (3:1).
    Mix31 = MIX31,   "mix-3:1", "a = b + c − a", NONE,          reads ABC, writes A,  s 3.0,  portable_mix31, Nt;
    /// `a = s·b - a`: reads two arrays, writes one (2:1).
    Mix21 = MIX21,   "mix-2:1", "a = s·b − a",   NONE,          reads AB,  writes A,  s 3.0,  portable_mix21, Nt;
    /// `(a, b) = (b, a)`: reads two arrays, writes two (1:1).
    Mix11 = MIX11,   "mix-1:1", "swap a, b",     NONE,          reads AB,  writes AB, s 3.0,  portable_mix11, Nt;
}

impl Op {
    /// STREAM's four kernels, in STREAM's order (`--op stream`).
    pub const STREAM: [Op; 4] = [Op::Copy, Op::Scale, Op::Add, Op::Triad];

    /// This op's row of the declaration.
    const fn facts(self) -> &'static Facts {
        &FACTS[self as usize]
    }

    /// The name on the command line, in tables, snapshots and metric labels.
    pub const fn name(self) -> &'static str {
        self.facts().name
    }

    /// What the loop computes, for legends and help.
    pub const fn formula(self) -> &'static str {
        self.facts().formula
    }

    /// STREAM's name for its four kernels (`Copy:`, … in `--format stream`), none for the rest.
    pub const fn stream_name(self) -> Option<&'static str> {
        self.facts().stream_name
    }

    /// Arrays read per element: of `a`, `b`, `c`.
    pub const fn reads(self) -> [bool; 3] {
        self.facts().reads
    }

    /// Arrays written per element: of `a`, `b`, `c` (`read` writes one element per pass,
    /// which is not counted).
    pub const fn writes(self) -> [bool; 3] {
        self.facts().writes
    }

    /// Arrays read or written per element: of `a`, `b`, `c`.
    pub const fn touches(self) -> [bool; 3] {
        let (r, w) = (self.reads(), self.writes());
        [r[0] || w[0], r[1] || w[1], r[2] || w[2]]
    }

    /// Bytes counted per element of a pass, the STREAM way: 8 for each array read and each
    /// array written (copy and scale 16, add and triad 24, read and write 8).
    pub fn bytes_per_element(self) -> u64 {
        let count = |arrays: [bool; 3]| arrays.iter().filter(|&&x| x).count() as u64;
        8 * (count(self.reads()) + count(self.writes()))
    }

    /// The scalar `s` the engine runs the op with: STREAM's 3 for scale and triad (and the 2:1
    /// mix, and the value `write` fills with), −1 for `update` so that its values stay ±a.
    pub const fn scalar(self) -> f64 {
        self.facts().scalar
    }

    /// Whether the op writes an array it reads, so that what the arrays hold depends on how
    /// many passes ran (on whether that number is odd).
    pub fn in_place(self) -> bool {
        let (r, w) = (self.reads(), self.writes());
        (0..3).any(|i| r[i] && w[i])
    }

    /// The names `--op` takes, comma-separated, for its help: every op, then the groups.
    pub fn help_list() -> String {
        let names: Vec<&str> = Op::ALL.iter().map(|op| op.name()).collect();
        let stream: Vec<&str> = Op::STREAM.iter().map(|op| op.name()).collect();
        format!(
            "{}; stream ({}) or all",
            names.join(", "),
            stream.join(", ")
        )
    }

    /// What `(a[i], b[i])` hold after `passes` passes over elements that held `(a, b, c)`, with
    /// the op's [`Op::scalar`]; `read`'s first [`READ_LANES`] are the caller's (they sum the part).
    pub fn after(self, passes: u64, (a, b, c): (f64, f64, f64)) -> (f64, f64) {
        if passes == 0 {
            return (a, b);
        }
        let s = self.scalar();
        let odd = passes % 2 == 1;
        match self {
            Op::Triad => (b + s * c, b),
            Op::Copy => (b, b),
            Op::Scale => (s * b, b),
            Op::Add => (b + c, b),
            Op::Read => (a, b),
            Op::Write => (s, b),
            Op::Update if odd => (s * a, b),
            Op::Mix31 if odd => (b + c - a, b),
            Op::Mix21 if odd => (s * b - a, b),
            Op::Mix11 if odd => (b, a),
            Op::Update | Op::Mix31 | Op::Mix21 | Op::Mix11 => (a, b),
        }
    }

    /// `--op`: a comma-separated list of op names, `stream` (STREAM's four) or `all`; each op
    /// once, in the order given.
    pub fn parse_list(text: &str) -> Result<Vec<Op>, UnknownName> {
        let mut ops = Vec::new();
        for word in text.split(',').map(str::trim) {
            let more: Vec<Op> = match word.to_ascii_lowercase().as_str() {
                "stream" => Op::STREAM.to_vec(),
                "all" => Op::ALL.to_vec(),
                _ => vec![word.parse()?],
            };
            for op in more {
                if !ops.contains(&op) {
                    ops.push(op);
                }
            }
        }
        Ok(ops)
    }

    /// The plain loop of the op, for every target (the vector tables' fallback and reference).
    pub const fn portable(self) -> OpFn {
        self.facts().portable
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        let want = s.trim().to_ascii_lowercase();
        Op::ALL
            .into_iter()
            .find(|op| op.name() == want)
            .ok_or_else(|| {
                let names: Vec<&str> = Op::ALL.iter().map(|op| op.name()).collect();
                UnknownName(format!(
                    "unknown op '{s}' (one of {}, or stream, all)",
                    names.join(", ")
                ))
            })
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_mix31(a: *mut f64, b: *mut f64, c: *mut f64, n: usize, _: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) = *b.add(i) + *c.add(i) - *a.add(i) };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_mix21(a: *mut f64, b: *mut f64, _: *mut f64, n: usize, s: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) = s * *b.add(i) - *a.add(i) };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_copy(a: *mut f64, b: *mut f64, _: *mut f64, n: usize, _: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) = *b.add(i) };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_scale(a: *mut f64, b: *mut f64, _: *mut f64, n: usize, s: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) = s * *b.add(i) };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_add(a: *mut f64, b: *mut f64, c: *mut f64, n: usize, _: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) = *b.add(i) + *c.add(i) };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_read(a: *mut f64, b: *mut f64, _: *mut f64, n: usize, _: f64) {
    let mut sum = 0.0;
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        sum += unsafe { *b.add(i) };
    }
    // SAFETY: a is valid for n elements.
    unsafe { store_read_sum(a, n, sum) };
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_write(a: *mut f64, _: *mut f64, _: *mut f64, n: usize, s: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) = s };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_update(a: *mut f64, _: *mut f64, _: *mut f64, n: usize, s: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { *a.add(i) *= s };
    }
}

/// # Safety
/// As [`OpFn`].
unsafe fn portable_mix11(a: *mut f64, b: *mut f64, _: *mut f64, n: usize, _: f64) {
    for i in 0..n {
        // SAFETY: i < n, and the caller guarantees validity for n elements.
        unsafe { std::ptr::swap(a.add(i), b.add(i)) };
    }
}

/// A name that is not one of the table's (an instruction set, a store kind, an op): the
/// message says what was given and what there is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName(pub String);

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnknownName {}

/// Portable fallback: a plain loop the compiler may vectorise for the baseline target (SSE2 on
/// x86-64, NEON on aarch64). No non-temporal stores. On x86-64 LLVM makes it two xmm per array
/// and iteration, behind an overlap check and a scalar loop for short or overlapping arrays
/// (listing: `docs/kernels.md`).
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements and aligned to `f64`, `a` not overlapping `b` or `c`.
unsafe fn triad_portable(a: *mut f64, b: *mut f64, c: *mut f64, n: usize, s: f64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn start(i: usize) -> (f64, f64, f64) {
        (-1.0, (i % 1024) as f64, (i % 16 + 1) as f64)
    }

    #[test]
    fn bytes_are_counted_the_stream_way() {
        let bytes = |op: Op| op.bytes_per_element();
        assert_eq!(
            [Op::Copy, Op::Scale, Op::Add, Op::Triad].map(bytes),
            [16, 16, 24, 24]
        );
        assert_eq!([Op::Read, Op::Write, Op::Update].map(bytes), [8, 8, 16]);
        assert_eq!([Op::Mix31, Op::Mix21, Op::Mix11].map(bytes), [32, 24, 32]);
    }

    #[test]
    fn mixes_read_and_write_in_their_ratio() {
        for (op, ratio) in [(Op::Mix31, 3), (Op::Mix21, 2), (Op::Mix11, 1)] {
            let count = |x: [bool; 3]| x.iter().filter(|&&v| v).count();
            assert_eq!(count(op.reads()), ratio * count(op.writes()), "{op}");
        }
    }

    #[test]
    fn in_place_ops_come_back_after_two_passes() {
        for op in Op::ALL {
            let (a, b, c) = start(7);
            let two = op.after(2, (a, b, c));
            if op.in_place() {
                assert_eq!(two, (a, b), "{op}");
                assert_ne!(
                    op.after(1, (a, b, c)),
                    (a, b),
                    "{op}: a pass changes nothing"
                );
            } else {
                assert_eq!(two, op.after(1, (a, b, c)), "{op}");
            }
        }
    }

    #[test]
    fn the_portable_loops_do_what_after_says() {
        for op in Op::ALL {
            for passes in 0..4u64 {
                let n = 37;
                let mut arrays: [Vec<f64>; 3] = [0, 1, 2].map(|k| {
                    (0..n)
                        .map(|i| [start(i).0, start(i).1, start(i).2][k])
                        .collect()
                });
                let [a, b, c] = &mut arrays;
                for _ in 0..passes {
                    // SAFETY: three distinct vectors of n elements.
                    unsafe {
                        (op.portable())(
                            a.as_mut_ptr(),
                            b.as_mut_ptr(),
                            c.as_mut_ptr(),
                            n,
                            op.scalar(),
                        )
                    };
                }
                for i in 0..n {
                    if op == Op::Read && i < READ_LANES && passes > 0 {
                        let sum: f64 = (0..n).map(|j| start(j).1).sum();
                        let want = if i == 0 { sum } else { 0.0 };
                        assert_eq!(a[i], want, "read × {passes} at {i}");
                        continue;
                    }
                    assert_eq!(
                        (a[i], b[i]),
                        op.after(passes, start(i)),
                        "{op} × {passes} at {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn lists_parse_with_stream_and_all_and_refuse_unknown_names() {
        assert_eq!(Op::parse_list("triad").unwrap(), vec![Op::Triad]);
        assert_eq!(Op::parse_list("stream").unwrap(), Op::STREAM.to_vec());
        assert_eq!(
            Op::parse_list("read, stream,copy").unwrap()[..2],
            [Op::Read, Op::Copy]
        );
        assert_eq!(Op::parse_list("all").unwrap().len(), Op::ALL.len());
        assert_eq!(Op::parse_list("MIX-2:1").unwrap(), vec![Op::Mix21]);
        let err = Op::parse_list("triad,trid").unwrap_err().to_string();
        assert!(
            err.to_string().contains("unknown op 'trid'") && err.to_string().contains("mix-1:1"),
            "{err}"
        );
    }

    #[test]
    fn names_round_trip() {
        for op in Op::ALL {
            assert_eq!(op.name().parse::<Op>().ok(), Some(op));
        }
    }
}
