//! Finding the frames of one file, read forward once through a bounded buffer: the memory a
//! scan takes is its buffer (the largest frame and a chunk), whatever the file's size.
//!
//! A frame whose length, checksum or payload is wrong is damage, and its length cannot be
//! trusted to say where the next frame starts: the scan resynchronises on the next place where a
//! whole frame reads (a length in range, a kind, a plausible time, then the checksum and the
//! payload), and says how many bytes it passed over and where. Bytes at the end with no frame
//! after them, the last frame cut short by a crash, are a torn tail: expected, and said apart.

use super::format::{self, FRAME_HEAD, Frame, MAGIC, MAX_FRAME};
use super::plausible::{Implausible, Plausible};
use std::io::{self, Read};

/// The least payload: its kind and its time.
const MIN_PAYLOAD: usize = 9;

/// Where a frame's kind lies, from the frame's start (after its length and checksum).
const KIND_AT: u64 = FRAME_HEAD as u64;

/// Bytes read at a time.
const CHUNK: usize = 1 << 20;

/// What the scan found next, in file order. Offsets are from the start of the file.
#[derive(Debug)]
pub(crate) enum Found {
    /// A whole frame: where it starts, its length with its head, and what it holds.
    Frame { at: u64, len: u64, frame: Frame },
    /// A whole frame whose checksum held but which no recorder writes: skipped.
    Implausible { at: u64, len: u64, why: Implausible },
    /// Bytes that are no frame, with frames after them: damage in the middle.
    Damaged { at: u64, bytes: u64 },
    /// Bytes at the end that are no whole frame: the last frame cut short.
    Torn { at: u64, bytes: u64 },
}

/// The scan of one file.
pub(crate) struct Scan<R> {
    src: R,
    buf: Vec<u8>,
    /// The file offset of `buf[0]`.
    base: u64,
    /// The file offset of the next byte to look at.
    at: u64,
    eof: bool,
    check: Plausible,
    /// A frame a resynchronisation found, handed out after the damage before it.
    pending: Option<(u64, u64, Frame)>,
}

impl<R: Read> Scan<R> {
    /// The scan of `src` after its magic; None when it does not start with the magic.
    pub(crate) fn new(src: R, check: Plausible) -> io::Result<Option<Scan<R>>> {
        let mut scan = Scan {
            src,
            buf: Vec::new(),
            base: 0,
            at: MAGIC.len() as u64,
            eof: false,
            check,
            pending: None,
        };
        let magic = scan.bytes(0, MAGIC.len())?;
        Ok((magic == Some(MAGIC.as_slice())).then_some(scan))
    }

    /// What comes next; None at the end of the file.
    pub(crate) fn next_found(&mut self) -> io::Result<Option<Found>> {
        if let Some((at, len, frame)) = self.pending.take() {
            return Ok(Some(self.judged(at, len, frame)));
        }
        let at = self.at;
        if self.bytes(at, 1)?.is_none() {
            return Ok(None);
        }
        match self.frame_at(at)? {
            Some((len, frame)) => {
                self.at = at + len;
                Ok(Some(self.judged(at, len, frame)))
            }
            None => self.resync(at).map(Some),
        }
    }

    /// A whole frame, held to what a recorder writes.
    fn judged(&mut self, at: u64, len: u64, frame: Frame) -> Found {
        match self.check.check(&frame) {
            Ok(()) => Found::Frame { at, len, frame },
            Err(why) => Found::Implausible { at, len, why },
        }
    }

    /// Past the damage that starts at `from`: to the next whole frame (damage in the middle),
    /// or to the end (a torn tail, unless the frame at `from` was whole and only wrong).
    fn resync(&mut self, from: u64) -> io::Result<Found> {
        let claimed = self.bytes(from, 4)?.map(|h| {
            let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
            (len, from + (FRAME_HEAD + len) as u64)
        });
        let mut off = from + 1;
        while let Some(kind) = self.next_nonzero(off + KIND_AT)? {
            off = kind - KIND_AT;
            if self.may_start(off)?
                && let Some((len, frame)) = self.frame_at(off)?
            {
                self.at = off + len;
                self.pending = Some((off, len, frame));
                return Ok(Found::Damaged {
                    at: from,
                    bytes: off - from,
                });
            }
            off += 1;
        }
        let end = self.base + self.buf.len() as u64;
        self.at = end;
        let bytes = end - from;
        let whole =
            claimed.is_some_and(|(len, to)| (MIN_PAYLOAD..=MAX_FRAME).contains(&len) && to <= end);
        Ok(if whole {
            Found::Damaged { at: from, bytes }
        } else {
            Found::Torn { at: from, bytes }
        })
    }

    /// A quick look at a head before the checksum is computed: a length in range, a kind
    /// and a plausible time.
    fn may_start(&mut self, off: u64) -> io::Result<bool> {
        let Some(h) = self.bytes(off, FRAME_HEAD + MIN_PAYLOAD)? else {
            return Ok(false);
        };
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let kind = h[8];
        let t = u64::from_le_bytes([h[9], h[10], h[11], h[12], h[13], h[14], h[15], h[16]]);
        Ok((MIN_PAYLOAD..=MAX_FRAME).contains(&len) && kind != 0 && self.check.time_ok(t))
    }

    /// The whole frame at `off`, when one is there: its length in range, all of it present,
    /// its checksum right and its payload decoded. Its length with its head, and the frame.
    fn frame_at(&mut self, off: u64) -> io::Result<Option<(u64, Frame)>> {
        let Some(h) = self.bytes(off, FRAME_HEAD)? else {
            return Ok(None);
        };
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let crc = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        if !(MIN_PAYLOAD..=MAX_FRAME).contains(&len) {
            return Ok(None);
        }
        let Some(whole) = self.bytes(off, FRAME_HEAD + len)? else {
            return Ok(None);
        };
        let payload = &whole[FRAME_HEAD..];
        if crc32fast::hash(payload) != crc {
            return Ok(None);
        }
        Ok(format::decode(payload).map(|f| ((FRAME_HEAD + len) as u64, f)))
    }

    /// The offset of the first byte at or after `from` that is not zero (a kind never is);
    /// None at the end. Runs of zeros, as in a sparse file's holes, pass a word at a time.
    fn next_nonzero(&mut self, mut from: u64) -> io::Result<Option<u64>> {
        while self.bytes(from, 1)?.is_some() {
            let start = (from - self.base) as usize;
            let rest = &self.buf[start..];
            if let Some(i) = first_nonzero(rest) {
                return Ok(Some(from + i as u64));
            }
            from += rest.len() as u64;
        }
        Ok(None)
    }

    /// `n` bytes from the file offset `off`, read on as needed; None when the file ends first.
    /// The scan never looks back more than a frame's head: what lies before is let go.
    fn bytes(&mut self, off: u64, n: usize) -> io::Result<Option<&[u8]>> {
        let end = self.base + self.buf.len() as u64;
        let keep = off.saturating_sub(KIND_AT).clamp(self.base, end);
        if keep - self.base >= CHUNK as u64 {
            self.buf.drain(..(keep - self.base) as usize);
            self.base = keep;
        }
        let start = (off - self.base) as usize;
        while self.buf.len() < start + n && !self.eof {
            self.read_chunk()?;
        }
        Ok(self.buf.get(start..start + n))
    }

    fn read_chunk(&mut self) -> io::Result<()> {
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        let got = loop {
            match self.src.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(old + got);
        self.eof = got == 0;
        Ok(())
    }
}

/// The place of the first byte that is not zero, passing whole zero words sixteen bytes at a
/// time.
fn first_nonzero(bytes: &[u8]) -> Option<usize> {
    let (words, _) = bytes.as_chunks::<16>();
    let zero_words = words
        .iter()
        .take_while(|w| u128::from_ne_bytes(**w) == 0)
        .count();
    let skip = zero_words * 16;
    bytes[skip..].iter().position(|&b| b != 0).map(|i| skip + i)
}
