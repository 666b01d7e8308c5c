//! What a working set is: the level or size the user asked for (`SetSpec`), its sized form
//! (`WorkingSet`) and how its arrays are cut into one partition per thread (`Layout`). Kept
//! apart from the sizing rules, which need the machine's caches and memory.

use crate::base::error::{Error, Result};
use crate::base::units::{format_bytes, parse_size, spelled_size};
use crate::engine::kernel::Residence;
use crate::engine::sweep::{DEFAULT_POINTS_PER_OCTAVE, SizeRange};
use std::ops::Range;

/// Elements per partition boundary: partitions are cut on 128-byte boundaries.
const ALIGN_ELEMS: usize = 128 / 8;

/// A named working-set level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    L1,
    L2,
    L3,
    Dram,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::L3 => "l3",
            Level::Dram => "dram",
        }
    }

    /// The cache level number, for cache levels.
    pub(crate) fn cache_level(self) -> Option<u8> {
        match self {
            Level::L1 => Some(1),
            Level::L2 => Some(2),
            Level::L3 => Some(3),
            Level::Dram => None,
        }
    }
}

/// A working set as the user wrote it. An explicit size keeps the user's spelling (`64 MB`,
/// `1.5 GiB`): its label says what was asked for, not a conversion of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetSpec {
    Level(Level),
    /// Bytes per array, split across the threads.
    Split {
        bytes: u64,
        text: String,
    },
    /// Bytes per array, per thread.
    PerThread {
        bytes: u64,
        text: String,
    },
    /// A size sweep, `SIZE..SIZE` or `SIZE/thread..SIZE/thread`: a row per size.
    Range(SizeRange),
}

impl SetSpec {
    /// Parses `l1`, `l2`, `l3`, `dram`, `SIZE`, `SIZE/thread` or a range of sizes at the
    /// default points per octave.
    pub fn parse(text: &str) -> Result<SetSpec> {
        SetSpec::parse_with(text, DEFAULT_POINTS_PER_OCTAVE)
    }

    /// As `parse`, with a range measured at `per_octave` sizes per doubling.
    pub(crate) fn parse_with(text: &str, per_octave: u32) -> Result<SetSpec> {
        let t = text.trim();
        if SizeRange::is_range(t) {
            let line = (ALIGN_ELEMS * 8) as u64;
            return SizeRange::parse(t, per_octave, line).map(SetSpec::Range);
        }
        match t.to_ascii_lowercase().as_str() {
            "l1" => return Ok(SetSpec::Level(Level::L1)),
            "l2" => return Ok(SetSpec::Level(Level::L2)),
            "l3" | "llc" => return Ok(SetSpec::Level(Level::L3)),
            "dram" | "mem" => return Ok(SetSpec::Level(Level::Dram)),
            _ => {}
        }
        if let Some(size) = t.strip_suffix("/thread").or_else(|| t.strip_suffix("/t")) {
            return Ok(SetSpec::PerThread {
                bytes: parse_size(size)?,
                text: spelled_size(size),
            });
        }
        let bytes = parse_size(t).map_err(|e| {
            Error::usage(format!(
                "{e}; a working set is l1, l2, l3, dram, SIZE or SIZE/thread"
            ))
        })?;
        Ok(SetSpec::Split {
            bytes,
            text: spelled_size(t),
        })
    }
}

/// How big each of the three arrays is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArraySize {
    /// Bytes per array owned by each thread (cache sets: each thread's slice sits in its cache).
    PerThread(u64),
    /// Bytes per array, split across the threads.
    Split(u64),
}

/// A sized working set: a row of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkingSet {
    /// `l2`, `dram`, or an explicit size as the user spelled it: `64 MB`, `1 MiB/thread`.
    pub name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    /// Said beside the row when the sizing departs from the rule (e.g. dram shrunk to fit).
    pub note: Option<String>,
}

/// Where each thread's partition lies in the arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Elements per array.
    pub len: usize,
    pub(crate) parts: Vec<Range<usize>>,
}

impl WorkingSet {
    /// A row label: `512 KiB/thread (l2)`, `128 MiB (dram)`; a set of no level is its name: an
    /// explicit size as the user spelled it (`64 MB`, `1 MiB/thread`), a matrix pair's.
    pub fn label(&self) -> String {
        let Some(level) = self.level else {
            return self.name.clone();
        };
        let size = match self.size {
            ArraySize::PerThread(b) => format!("{}/thread", format_bytes(b)),
            ArraySize::Split(b) => format_bytes(b),
        };
        format!("{size} ({})", level.name())
    }

    /// Per-thread sets are cache sets: scaling is about the cores, not the memory.
    pub(crate) fn is_per_thread(&self) -> bool {
        matches!(self.size, ArraySize::PerThread(_))
    }

    /// Where the arrays live, for the choice of loop and layout: per-thread sets in their
    /// cache, split sets in memory.
    pub(crate) fn residence(&self) -> Residence {
        if self.is_per_thread() {
            Residence::Cache
        } else {
            Residence::Memory
        }
    }

    /// How the arrays are laid out for `threads` threads: per-thread sets give thread t the
    /// t-th slice; split sets cut the arrays into near-equal parts on 128-byte boundaries.
    pub fn layout(&self, threads: usize) -> Layout {
        let threads = threads.max(1);
        match self.size {
            ArraySize::PerThread(bytes) => {
                let per = elems_for(bytes);
                Layout {
                    len: per * threads,
                    parts: (0..threads).map(|t| t * per..(t + 1) * per).collect(),
                }
            }
            ArraySize::Split(bytes) => {
                let len = elems_for(bytes);
                Layout {
                    len,
                    parts: split_aligned(len, threads),
                }
            }
        }
    }

    /// Bytes of one array for `threads` threads.
    pub fn array_bytes(&self, threads: usize) -> u64 {
        self.layout(threads).len as u64 * 8
    }
}

/// Elements for a byte size, rounded to whole 128-byte lines (at least one line).
fn elems_for(bytes: u64) -> usize {
    let elems = (bytes / 8) as usize;
    (elems / ALIGN_ELEMS).max(1) * ALIGN_ELEMS
}

/// Splits `len` elements into `parts` contiguous ranges whose boundaries fall on 128-byte
/// lines; sizes differ by at most one line (the last part takes any remainder).
fn split_aligned(len: usize, parts: usize) -> Vec<Range<usize>> {
    let lines = len / ALIGN_ELEMS;
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 0..parts {
        let end = if p + 1 == parts {
            len
        } else {
            (lines * (p + 1) / parts) * ALIGN_ELEMS
        };
        out.push(start..end);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_set_specs() {
        assert_eq!(SetSpec::parse("l2").unwrap(), SetSpec::Level(Level::L2));
        assert_eq!(SetSpec::parse("DRAM").unwrap(), SetSpec::Level(Level::Dram));
        let split = |bytes, text: &str| SetSpec::Split {
            bytes,
            text: text.into(),
        };
        assert_eq!(SetSpec::parse("64MiB").unwrap(), split(64 << 20, "64 MiB"));
        // The user's unit stays: 64MB is 64 MB, not the 61 MiB it comes to.
        assert_eq!(
            SetSpec::parse(" 64mb ").unwrap(),
            split(64_000_000, "64 MB")
        );
        assert_eq!(
            SetSpec::parse("1MiB/thread").unwrap(),
            SetSpec::PerThread {
                bytes: 1 << 20,
                text: "1 MiB".into()
            }
        );
        assert!(SetSpec::parse("l7").is_err());
        assert!(SetSpec::parse("0/thread").is_err());
    }

    #[test]
    fn split_is_aligned_and_covers_everything() {
        for (len, parts) in [(1600, 3), (16, 1), (1024 * 1024, 7), (160, 10)] {
            let r = split_aligned(len, parts);
            assert_eq!(r.len(), parts);
            assert_eq!(r[0].start, 0);
            assert_eq!(r.last().unwrap().end, len);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[1].start % ALIGN_ELEMS, 0);
            }
            let sizes: Vec<usize> = r.iter().map(|p| p.len()).collect();
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= ALIGN_ELEMS, "{sizes:?}");
        }
    }

    #[test]
    fn per_thread_layout_gives_each_thread_its_slice() {
        let ws = WorkingSet {
            name: "x".into(),
            level: None,
            size: ArraySize::PerThread(4096),
            note: None,
        };
        let l = ws.layout(3);
        assert_eq!(l.len, 3 * 512);
        assert_eq!(l.parts, vec![0..512, 512..1024, 1024..1536]);
        assert_eq!(ws.array_bytes(3), 3 * 4096);
    }
}
