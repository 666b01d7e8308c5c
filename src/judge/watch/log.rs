//! The event log: a bounded ring of what happened, oldest first. Late and disturbed rounds
//! come many a minute; those of one cell fold into one line per minute with a count and the
//! worst share off CPU (`disturbed rounds on dram ×1: 14 in 48 s, t0 off CPU up to 52 %`), so
//! that the entries a person must see (contention, choices, errors) stay on screen and the
//! log's memory stays flat however long the monitor runs. `Filter` and `Entry::matches` are
//! what the full-screen log view shows and finds.

use super::contention::OffCpu;
use crate::engine::plan::CellId;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Lines kept.
pub const LOG_CAP: usize = 200;

/// The late and disturbed rounds of one cell within this span of the first fold into its line.
const FOLD_SPAN: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Info,
    /// Late or disturbed rounds (folded per cell and minute).
    Late,
    Contention,
    /// The loop or page layout a working set runs, as the trial chose it.
    Choice,
    Checksum,
    Export,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Wall-clock time of the first occurrence, `HH:MM:SS`.
    pub time: String,
    pub kind: Kind,
    pub cell: Option<CellId>,
    pub text: String,
    /// How many times it happened (the rounds a late-round line folds).
    pub count: u32,
    /// Its place in the log since the monitor started: it stays while lines come and go.
    pub seq: u64,
    /// The rounds a late-round line folds, to say them again as one more comes.
    rounds: Option<Rounds>,
}

/// A late or disturbed round, as the monitor tells it to the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// The cell's short name, `dram ×1`.
    pub(crate) name: String,
    pub(crate) late: bool,
    pub(crate) disturbed: bool,
    /// Its worker most off its CPU, where that was counted.
    pub(crate) off_cpu: Option<OffCpu>,
    /// Why, where something shows it (and the CPU quota's throttling).
    pub(crate) cause: Option<String>,
    /// The line of this round alone: `late round on l2 ×2: span 1.50× its slowest thread`.
    pub(crate) text: String,
}

/// The rounds a line folds so far.
#[derive(Debug, Clone, PartialEq)]
struct Rounds {
    first: Instant,
    last: Instant,
    late: u32,
    disturbed: u32,
    worst: Option<OffCpu>,
    latest: Round,
}

impl Rounds {
    fn of(at: Instant, r: Round) -> Rounds {
        Rounds {
            first: at,
            last: at,
            late: u32::from(r.late),
            disturbed: u32::from(r.disturbed),
            worst: r.off_cpu,
            latest: r,
        }
    }

    fn add(&mut self, at: Instant, r: Round) {
        self.last = self.last.max(at);
        self.late += u32::from(r.late);
        self.disturbed += u32::from(r.disturbed);
        if let Some(o) = r.off_cpu
            && self.worst.is_none_or(|w| o.share > w.share)
        {
            self.worst = Some(o);
        }
        self.latest = r;
    }

    /// `disturbed rounds on dram ×1: 14 in 48 s, t0 off CPU up to 52 %; last: t0 switched
    /// out 3× (1.2 ms off CPU)`; a single round's own line.
    fn text(&self, count: u32) -> String {
        if count <= 1 {
            return self.latest.text.clone();
        }
        let what = match (self.late, self.disturbed) {
            (0, _) => "disturbed".to_string(),
            (_, 0) => "late".to_string(),
            (l, d) => format!("late or disturbed ({d} disturbed, {l} late)"),
        };
        let secs = self
            .last
            .saturating_duration_since(self.first)
            .as_secs_f64();
        let within = if secs < 1.0 {
            "within a second".to_string()
        } else {
            format!("in {secs:.0} s")
        };
        let worst = self
            .worst
            .map(|o| format!(", t{} off CPU up to {:.0} %", o.thread, o.share * 100.0))
            .unwrap_or_default();
        let last = self
            .latest
            .cause
            .as_ref()
            .map(|c| format!("; last: {c}"))
            .unwrap_or_default();
        format!(
            "{what} rounds on {}: {count} {within}{worst}{last}",
            self.latest.name
        )
    }
}

/// Which entries the log view shows: `f` steps through them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Contention,
    Choices,
    Errors,
    /// The rest: notes, exports, late and disturbed rounds.
    Info,
}

impl Filter {
    pub fn next(self) -> Filter {
        match self {
            Filter::All => Filter::Contention,
            Filter::Contention => Filter::Choices,
            Filter::Choices => Filter::Errors,
            Filter::Errors => Filter::Info,
            Filter::Info => Filter::All,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Contention => "contention",
            Filter::Choices => "choices",
            Filter::Errors => "errors",
            Filter::Info => "info",
        }
    }

    pub(crate) fn admits(self, kind: Kind) -> bool {
        match self {
            Filter::All => true,
            Filter::Contention => kind == Kind::Contention,
            Filter::Choices => kind == Kind::Choice,
            Filter::Errors => matches!(kind, Kind::Error | Kind::Checksum),
            Filter::Info => matches!(kind, Kind::Info | Kind::Export | Kind::Late),
        }
    }
}

impl Entry {
    /// Whether the entry holds `query` (any case), in its text or its time.
    pub fn matches(&self, query: &str) -> bool {
        let q = query.to_lowercase();
        !q.is_empty() && (self.text.to_lowercase().contains(&q) || self.time.contains(&q))
    }
}

#[derive(Debug, Clone, Default)]
pub struct EventLog {
    entries: VecDeque<Entry>,
    next_seq: u64,
}

impl EventLog {
    /// Adds a line (late and disturbed rounds come through `round`).
    pub(crate) fn push(&mut self, time: String, kind: Kind, cell: Option<CellId>, text: String) {
        self.append(time, kind, cell, text, None);
    }

    /// Adds a late or disturbed round that came at `at`: into the line of its cell's rounds
    /// if that began less than `FOLD_SPAN` before, wherever it is in the log, else a new line.
    pub(crate) fn round(&mut self, at: Instant, time: String, cell: CellId, r: Round) {
        // The cell's newest line of rounds, if its first round is recent enough.
        let open = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.kind == Kind::Late && e.cell == Some(cell))
            .filter(|e| {
                e.rounds.as_ref().is_some_and(|f| {
                    at.checked_duration_since(f.first)
                        .is_some_and(|d| d < FOLD_SPAN)
                })
            });
        if let Some(e) = open {
            let rounds = e.rounds.as_mut().expect("found by its rounds");
            rounds.add(at, r);
            e.count += 1;
            e.text = rounds.text(e.count);
            return;
        }
        let text = r.text.clone();
        self.append(time, Kind::Late, Some(cell), text, Some(Rounds::of(at, r)));
    }

    fn append(
        &mut self,
        time: String,
        kind: Kind,
        cell: Option<CellId>,
        text: String,
        rounds: Option<Rounds>,
    ) {
        if self.entries.len() >= LOG_CAP {
            self.entries.pop_front();
        }
        self.entries.push_back(Entry {
            time,
            kind,
            cell,
            text,
            count: 1,
            seq: self.next_seq,
            rounds,
        });
        self.next_seq += 1;
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

    /// The entries `filter` admits, oldest first.
    pub fn shown(&self, filter: Filter) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| filter.admits(e.kind))
            .collect()
    }

    /// The seq of the entry `filter` admits that holds `query`, nearest to entry `from` on
    /// the side `older` says (not `from` itself); None when there is none that way.
    pub fn find(&self, filter: Filter, query: &str, from: u64, older: bool) -> Option<u64> {
        let hit = |e: &&Entry| filter.admits(e.kind) && e.matches(query);
        if older {
            self.entries.iter().rev().filter(|e| e.seq < from).find(hit)
        } else {
            self.entries.iter().filter(|e| e.seq > from).find(hit)
        }
        .map(|e| e.seq)
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

    fn disturbed(name: &str, share: f64) -> Round {
        Round {
            name: name.into(),
            late: false,
            disturbed: true,
            off_cpu: Some(OffCpu { thread: 0, share }),
            cause: Some(format!("t0 switched out 3× ({share} off CPU)")),
            text: format!("disturbed round on {name}"),
        }
    }

    /// The rounds of one cell within a minute of its line's first fold into it, whatever came
    /// between; the minute over, a new line begins.
    #[test]
    fn the_rounds_of_a_cell_fold_into_one_line_a_minute() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let (a, b) = (CellId::new(1, 1), CellId::new(0, 2));
        let mut log = EventLog::default();
        for s in [0, 10, 20, 30, 40, 59] {
            log.round(
                at(s),
                format!("{s}"),
                a,
                disturbed("dram ×1", s as f64 / 100.0),
            );
            log.round(at(s), format!("{s}"), b, disturbed("l2 ×2", 0.1));
            log.push(
                "x".into(),
                Kind::Contention,
                Some(a),
                "contention on dram ×1".into(),
            );
        }
        let lines: Vec<&Entry> = log.iter().filter(|e| e.kind == Kind::Late).collect();
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert_eq!((lines[0].count, lines[0].time.as_str()), (6, "0"));
        assert_eq!(
            lines[0].text,
            "disturbed rounds on dram ×1: 6 in 59 s, t0 off CPU up to 59 %; \
             last: t0 switched out 3× (0.59 off CPU)"
        );
        assert_eq!(lines[1].count, 6);
        // Sixty seconds after the first: a line of its own, the round's own text.
        log.round(at(60), "60".into(), a, disturbed("dram ×1", 0.2));
        let last = log.last().unwrap();
        assert_eq!(
            (last.count, last.text.as_str()),
            (1, "disturbed round on dram ×1")
        );
        log.round(at(61), "61".into(), a, disturbed("dram ×1", 0.2));
        assert_eq!(log.last().unwrap().count, 2);
        assert!(log.last().unwrap().text.contains(": 2 in 1 s"));
        // Late ones and disturbed ones together are counted apart.
        let late = Round {
            late: true,
            disturbed: false,
            off_cpu: None,
            cause: None,
            ..disturbed("dram ×1", 0.0)
        };
        log.round(at(62), "62".into(), a, late);
        assert!(
            log.last()
                .unwrap()
                .text
                .starts_with("late or disturbed (2 disturbed, 1 late) rounds on dram ×1: 3 in 2 s"),
            "{}",
            log.last().unwrap().text
        );
    }

    #[test]
    fn the_ring_is_bounded_and_keeps_its_places() {
        let mut log = EventLog::default();
        for i in 0..LOG_CAP * 3 {
            log.push("t".into(), Kind::Info, None, format!("{i}"));
        }
        assert_eq!(log.len(), LOG_CAP);
        assert_eq!(log.last().unwrap().text, format!("{}", LOG_CAP * 3 - 1));
        assert_eq!(log.last().unwrap().seq, (LOG_CAP * 3 - 1) as u64);
        assert_eq!(log.iter().next().unwrap().seq, (LOG_CAP * 2) as u64);
    }

    /// A log of each kind: what each filter shows, and the search both ways.
    #[test]
    fn filters_and_search_on_a_synthetic_log() {
        let mut log = EventLog::default();
        let t0 = Instant::now();
        let lines = [
            (Kind::Info, "focus on dram ×1"),
            (Kind::Choice, "dram runs the 4-way loop"),
            (Kind::Contention, "contention on dram ×1 since 12:00:00"),
            (Kind::Export, "exported /tmp/a.{md,csv}"),
            (Kind::Error, "export failed: disk full"),
            (Kind::Checksum, "CHECKSUM FAILED on l2 ×1"),
            (Kind::Contention, "contention on DRAM ×1 over after 15 s"),
        ];
        for (k, t) in lines {
            log.push("12:00:00".into(), k, None, t.into());
        }
        log.round(
            t0,
            "12:00:01".into(),
            CellId::new(1, 1),
            disturbed("dram ×1", 0.5),
        );
        let texts = |f: Filter| -> Vec<&str> {
            log.shown(f).into_iter().map(|e| e.text.as_str()).collect()
        };
        assert_eq!(texts(Filter::All).len(), 8);
        assert_eq!(
            texts(Filter::Contention),
            [lines[2].1, lines[6].1],
            "contention only"
        );
        assert_eq!(texts(Filter::Choices), [lines[1].1]);
        assert_eq!(texts(Filter::Errors), [lines[4].1, lines[5].1]);
        assert_eq!(
            texts(Filter::Info),
            [lines[0].1, lines[3].1, "disturbed round on dram ×1"]
        );
        // Every filter, in the order `f` steps through, and back to all.
        let mut f = Filter::All;
        let mut names = Vec::new();
        for _ in 0..5 {
            names.push(f.name());
            f = f.next();
        }
        assert_eq!(names, ["all", "contention", "choices", "errors", "info"]);
        assert_eq!(f, Filter::All);
        // Search, any case, from the newest back, then forward again.
        let newest = log.last().unwrap().seq;
        let first = log.find(Filter::All, "Contention on dram", newest + 1, true);
        assert_eq!(first, Some(6));
        assert_eq!(
            log.find(Filter::All, "contention on dram", 6, true),
            Some(2)
        );
        assert_eq!(log.find(Filter::All, "contention on dram", 2, true), None);
        assert_eq!(
            log.find(Filter::All, "contention on dram", 2, false),
            Some(6)
        );
        // Filtered out entries are not found; the time is searched too; nothing for "".
        assert_eq!(log.find(Filter::Errors, "dram", newest + 1, true), None);
        assert_eq!(
            log.find(Filter::All, "12:00:01", newest + 1, true),
            Some(newest)
        );
        assert_eq!(log.find(Filter::All, "", newest + 1, true), None);
    }

    #[test]
    fn local_time_looks_like_a_time() {
        let t = local_time();
        assert_eq!(t.len(), 8, "{t}");
        assert_eq!(&t[2..3], ":");
    }
}
