//! The chain: a random cyclic permutation of a buffer's cache lines, one pointer per line (in
//! the line's first word), built in place from a seed, and the check that it is still one
//! cycle through every line.

use super::hops::{UNROLL, Walker};
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::platform::Mapping;

/// Bytes per cache line, and the chain's step: one pointer per 64-byte line. Cores with
/// 128-byte lines (Apple's) get two pointers per line, visited at unrelated times.
pub const LINE: usize = 64;

const WORDS_PER_LINE: usize = LINE / std::mem::size_of::<usize>();

/// The mapping's alignment: one x86 huge page, as the triad's arrays.
const ALIGN: usize = 2 << 20;
/// Lines between two questions whether to go on, in a chain's build and check: 4 MiB, a few
/// milliseconds of random writes or dependent loads.
pub(crate) const CHECK_LINES: usize = 1 << 16;

/// Pages for the chase's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// Transparent huge pages advised (`MADV_HUGEPAGE`) where the OS has them.
    Huge,
    /// Huge pages advised against (`MADV_NOHUGEPAGE`): 4 KiB pages, one TLB entry per 4 KiB.
    Small,
}

/// SplitMix64 (Steele, Lea, Flood 2014; what seeds Java's SplittableRandom): a 64-bit
/// state, one add and a mix per number, every seed a full-period stream. Ours, so that a
/// seed gives the same chain on every build and platform.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n ≥ 1), by multiply-shift (Lemire): biased by at most n / 2^64.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// A buffer whose lines form one cycle: line `i`'s first word holds the address of the line
/// that follows it.
pub struct Chain {
    mapping: Mapping,
    lines: usize,
    pages: Pages,
    /// Every line points to a line of the buffer: what makes `walk` sound. Only a test's
    /// `point_raw` clears it.
    inside: bool,
}

impl Chain {
    /// Maps `bytes` (whole lines, at least one) 2 MiB aligned, advises the pages, and writes a
    /// random cyclic permutation of its lines drawn from `seed` (Sattolo's shuffle: every
    /// single cycle through all lines equally likely). The calling thread touches every page
    /// first: pin it where the chase will run.
    pub fn build(bytes: u64, pages: Pages, seed: u64) -> Result<Chain> {
        Chain::build_on(bytes, pages, seed, None, &|| Ok(()))
    }

    /// As [`Chain::build`], with the buffer's pages bound to NUMA node `node` (mbind
    /// MPOL_BIND, before the first touch) when one is given: the latency matrix's memory side.
    /// `go_on` is asked every [`CHECK_LINES`] lines: a gigabyte's shuffle takes seconds, and a
    /// signal must end it within one.
    pub fn build_on(
        bytes: u64,
        pages: Pages,
        seed: u64,
        node: Option<usize>,
        go_on: &dyn Fn() -> Result<()>,
    ) -> Result<Chain> {
        let lines = (bytes as usize / LINE).max(1);
        let mut mapping = Mapping::new(lines * LINE, ALIGN).map_err(|e| {
            Error::machine(format!(
                "cannot map {} for the latency chain: {e}",
                format_bytes((lines * LINE) as u64)
            ))
        })?;
        if let Some(n) = node {
            mapping.bind(&[n], false).map_err(|e| {
                Error::machine(format!(
                    "cannot bind the latency chain's pages to NUMA node {n}: {e}"
                ))
            })?;
        }
        mapping.advise_huge_pages(pages == Pages::Huge);
        let mut chain = Chain {
            mapping,
            lines,
            pages,
            inside: true,
        };
        let base = chain.base();
        let w = chain.words_mut();
        // In place: line i holds its successor's index while shuffling, its address after.
        // The first pass is the pages' first touch: as slow as the OS is to give them.
        for i in 0..lines {
            if i % CHECK_LINES == 0 {
                go_on()?;
            }
            w[i * WORDS_PER_LINE] = i;
        }
        let mut rng = SplitMix64::new(seed);
        for i in (1..lines).rev() {
            if i % CHECK_LINES == 0 {
                go_on()?;
            }
            // Sattolo: j < i strictly, which makes the permutation one cycle.
            let j = rng.below(i);
            w.swap(i * WORDS_PER_LINE, j * WORDS_PER_LINE);
        }
        for i in 0..lines {
            w[i * WORDS_PER_LINE] = base + w[i * WORDS_PER_LINE] * LINE;
        }
        Ok(chain)
    }

    pub fn lines(&self) -> usize {
        self.lines
    }

    pub fn bytes(&self) -> u64 {
        (self.lines * LINE) as u64
    }

    pub fn pages(&self) -> Pages {
        self.pages
    }

    /// Bytes of the buffer on transparent huge pages now; `None` where the OS does not say.
    pub fn huge_bytes(&self) -> Option<u64> {
        self.mapping.huge_page_bytes().map(|b| b.min(self.bytes()))
    }

    fn base(&self) -> usize {
        self.mapping.as_mut_ptr() as usize
    }

    fn words(&self) -> &[usize] {
        // SAFETY: the mapping holds lines × LINE bytes, aligned to 2 MiB, zero-filled by the
        // OS or written by `build` (every bit pattern is a valid usize); the chase only reads
        // it, and writes go through `words_mut`, which needs `&mut self`.
        unsafe {
            std::slice::from_raw_parts(
                self.mapping.as_mut_ptr() as *const usize,
                self.lines * WORDS_PER_LINE,
            )
        }
    }

    fn words_mut(&mut self) -> &mut [usize] {
        // SAFETY: as in `words`; `&mut self` makes this the only view.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.mapping.as_mut_ptr() as *mut usize,
                self.lines * WORDS_PER_LINE,
            )
        }
    }

    /// The line that line `line` points to, or why its pointer is not a line of the buffer.
    fn next_line(&self, line: usize) -> Result<usize> {
        let addr = self.words()[line * WORDS_PER_LINE];
        let off = addr.wrapping_sub(self.base());
        if !off.is_multiple_of(LINE) || off / LINE >= self.lines {
            return Err(Error::engine(format!(
                "latency chain broken: line {line} points to {addr:#x}, not to a line of the \
                 {}-line buffer",
                self.lines
            )));
        }
        Ok(off / LINE)
    }

    /// The line at address `p` (one of the buffer's, or None).
    fn line_of(&self, p: *const usize) -> Option<usize> {
        let off = (p as usize).wrapping_sub(self.base());
        (off.is_multiple_of(LINE) && off / LINE < self.lines).then_some(off / LINE)
    }

    /// Checks, after a chase, that the chain is still one cycle through every line (walked
    /// from the start, it returns there after exactly `lines` hops and not before, every
    /// pointer in the buffer), and that a chase of `hops` hops from the start ends at `end`:
    /// the walker made exactly the dependent loads it was asked for. As the triad checks its
    /// sum, a failure is an error and the figures are not used.
    /// `go_on` is asked every [`CHECK_LINES`] lines, as in `build_on`.
    pub(crate) fn validate(
        &self,
        hops: u64,
        end: usize,
        go_on: &dyn Fn() -> Result<()>,
    ) -> Result<()> {
        let n = self.lines;
        let target = (hops % n as u64) as usize;
        let mut at_target = 0;
        let mut line = 0;
        for step in 1..=n {
            if step % CHECK_LINES == 0 {
                go_on()?;
            }
            line = self.next_line(line)?;
            if step == target {
                at_target = line;
            }
            if line == 0 && step < n {
                return Err(Error::engine(format!(
                    "latency chain broken: it returns to its start after {step} of {n} lines"
                )));
            }
        }
        if line != 0 {
            return Err(Error::engine(format!(
                "latency chain broken: {n} hops from its start do not return there"
            )));
        }
        if end != at_target {
            return Err(Error::engine(format!(
                "latency chase miscounted: {hops} hops from the start end on line {at_target}, \
                 the walker ended on line {end}"
            )));
        }
        Ok(())
    }

    /// Follows the chain `blocks × UNROLL` hops from line `from` (line 0 is where every chase
    /// starts) with `walker`, and returns the line it ended on. `None` for a line past the end,
    /// a chain a test pointed outside its buffer, or a walker that ended off the lines.
    pub(crate) fn walk(&self, walker: Walker, from: usize, blocks: u64) -> Option<usize> {
        if !self.inside || from >= self.lines {
            return None;
        }
        let p = (self.base() + from * LINE) as *const usize;
        // SAFETY: `p` is a line of this buffer, and every line points to a line of it
        // (`inside`: `build` wrote only such pointers); `&self` keeps the buffer mapped and
        // unwritten during the walk.
        let end = unsafe { walker.run(p, blocks) };
        self.line_of(end)
    }

    /// Hops per `walk` of `blocks` blocks.
    pub const fn hops(blocks: u64) -> u64 {
        blocks * UNROLL
    }

    /// Points line `from` at line `to`: for tests that break a chain on purpose.
    #[cfg(test)]
    pub(crate) fn point(&mut self, from: usize, to: usize) {
        let addr = self.base() + to * LINE;
        self.words_mut()[from * WORDS_PER_LINE] = addr;
    }

    /// Points line `from` at the buffer's start + `offset` bytes (wrapping): for tests that
    /// point outside the buffer or between lines.
    #[cfg(test)]
    pub(crate) fn point_raw(&mut self, from: usize, offset: usize) {
        self.inside = false;
        let addr = self.base().wrapping_add(offset);
        self.words_mut()[from * WORDS_PER_LINE] = addr;
    }

    /// The successor of every line, as indices: for tests.
    #[cfg(test)]
    pub(crate) fn successors(&self) -> Vec<usize> {
        (0..self.lines)
            .map(|l| self.next_line(l).unwrap())
            .collect()
    }
}
