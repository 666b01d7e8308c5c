//! The grid that ran: thread counts × working sets, each set with its level or explicit size
//! and, for an explicit size, the level it lands in.

use serde::{Deserialize, Serialize};

/// Ops × thread counts × working sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub sets: Vec<WorkingSet>,
    pub threads: Vec<usize>,
    /// The ops, by name, in the order the run took them (schema 4).
    pub ops: Vec<String>,
}

/// A sized working set: a row of the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkingSet {
    /// `l2`, `dram`, `64 MiB`, `1 MiB/thread`.
    pub name: String,
    pub level: Option<Level>,
    pub size: ArraySize,
    /// Said beside the row when the sizing departed from the rule.
    pub note: Option<String>,
    /// An explicit size (no `level`): the level its three arrays land in, from the caches found
    /// (`report/lands.rs`); null for named levels and where no cache is known.
    #[serde(default)]
    pub lands_in: Option<Level>,
}

impl WorkingSet {
    /// Per-thread sets are cache sets.
    pub(crate) fn is_per_thread(&self) -> bool {
        matches!(self.size, ArraySize::PerThread(_))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    L1,
    L2,
    L3,
    Dram,
}

/// How big each of the three arrays is. Written as one shape, `{"kind": "per_thread",
/// "bytes": 87296}` or `{"kind": "split", "bytes": 134217728}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "SizeRepr", from = "SizeRepr")]
pub enum ArraySize {
    /// Bytes per array owned by each thread.
    PerThread(u64),
    /// Bytes per array, split across the threads.
    Split(u64),
}

/// `ArraySize` as the JSON holds it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct SizeRepr {
    kind: SizeKind,
    bytes: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SizeKind {
    PerThread,
    Split,
}

impl From<ArraySize> for SizeRepr {
    fn from(s: ArraySize) -> SizeRepr {
        match s {
            ArraySize::PerThread(bytes) => SizeRepr {
                kind: SizeKind::PerThread,
                bytes,
            },
            ArraySize::Split(bytes) => SizeRepr {
                kind: SizeKind::Split,
                bytes,
            },
        }
    }
}

impl From<SizeRepr> for ArraySize {
    fn from(r: SizeRepr) -> ArraySize {
        match r.kind {
            SizeKind::PerThread => ArraySize::PerThread(r.bytes),
            SizeKind::Split => ArraySize::Split(r.bytes),
        }
    }
}
