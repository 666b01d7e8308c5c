//! The event log: a bounded ring of what happened, newest last. A run of the same event on the
//! same cell (late rounds every 20 ms) folds into one line with a count, so the log stays
//! readable and its memory flat however long the monitor runs.

use crate::engine::plan::CellId;
use std::collections::VecDeque;

/// Lines kept.
pub const LOG_CAP: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Info,
    Late,
    Contention,
    Checksum,
    Export,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Wall-clock time of the latest occurrence, `HH:MM:SS`.
    pub time: String,
    pub kind: Kind,
    pub cell: Option<CellId>,
    pub text: String,
    /// How many times it happened in a row.
    pub count: u32,
}

#[derive(Debug, Clone, Default)]
pub struct EventLog {
    entries: VecDeque<Entry>,
}

impl EventLog {
    pub(crate) fn push(&mut self, time: String, kind: Kind, cell: Option<CellId>, text: String) {
        if kind == Kind::Late
            && let Some(last) = self.entries.back_mut()
            && last.kind == kind
            && last.cell == cell
        {
            last.count += 1;
            last.time = time;
            last.text = text;
            return;
        }
        if self.entries.len() >= LOG_CAP {
            self.entries.pop_front();
        }
        self.entries.push_back(Entry {
            time,
            kind,
            cell,
            text,
            count: 1,
        });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.entries.iter()
    }

    pub fn last(&self) -> Option<&Entry> {
        self.entries.back()
    }
}

/// Local wall-clock time, `HH:MM:SS` (UTC where the local zone cannot be read).
pub(crate) fn local_time() -> String {
    local_time_of(std::time::SystemTime::now())
}

/// The local time of day of `t`, `HH:MM:SS` (UTC where the local zone cannot be read).
pub(crate) fn local_time_of(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (h, m, s) = crate::platform::local_hms(secs).unwrap_or_else(|| {
        let s = secs.rem_euclid(86_400);
        ((s / 3600) as u8, (s / 60 % 60) as u8, (s % 60) as u8)
    });
    format!("{h:02}:{m:02}:{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_rounds_on_one_cell_fold_and_the_ring_is_bounded() {
        let mut log = EventLog::default();
        let c = Some(CellId::new(0, 1));
        for _ in 0..5 {
            log.push("t".into(), Kind::Late, c, "late".into());
        }
        assert_eq!(log.len(), 1);
        assert_eq!(log.last().unwrap().count, 5);
        log.push("t".into(), Kind::Info, None, "x".into());
        log.push("t".into(), Kind::Info, None, "x".into());
        assert_eq!(log.len(), 3, "only late rounds fold");
        for i in 0..LOG_CAP * 3 {
            log.push("t".into(), Kind::Info, None, format!("{i}"));
        }
        assert_eq!(log.len(), LOG_CAP);
        assert_eq!(log.last().unwrap().text, format!("{}", LOG_CAP * 3 - 1));
    }

    #[test]
    fn local_time_looks_like_a_time() {
        let t = local_time();
        assert_eq!(t.len(), 8, "{t}");
        assert_eq!(&t[2..3], ":");
    }
}
