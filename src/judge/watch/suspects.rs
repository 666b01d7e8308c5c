//! Who is to blame: each other process's activity while a cell was contended against its
//! activity in the calm before (the reference window), ranked by the evidence. While a cell's
//! workers were kept off their CPUs (a disturbance) the rise does not matter, as the culprit
//! may have been there first: whoever ran on our CPUs is ranked by its CPU share there.
//!
//! A process is suspect when it used clearly more CPU while we slowed down than before; memory-
//! heavy signs (page faults or resident-set growth per second, bandwidth resctrl measured for
//! its group) and running on our CPUs make the same rise count for more. Another stream-top is
//! ranked like any process and marked as such. Without resctrl the ranking is inferred: CPU
//! time and faults say who was busy, not who used the memory bus.

use crate::engine::plan::CellId;
use crate::machine::procs::{ProcSample, Process};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The calm before an episode that counts as its reference window.
const REFERENCE_SPAN: Duration = Duration::from_secs(60);
/// A rise of CPU share (percentage points of one core) below this is noise, not evidence.
const RISE_MIN: f64 = 2.0;
/// The least CPU share (percent of one core) that makes a process worth naming, unless it is
/// memory-heavy: a process at a few percent cannot explain a cell's drop of tens of percent.
pub(crate) const SHARE_MIN: f64 = 10.0;
/// Page faults per second that make a process memory-heavy.
const HEAVY_FAULTS_PER_S: f64 = 1000.0;
/// Resident-set growth per second that makes a process memory-heavy.
const HEAVY_RSS_GROWTH: f64 = (1 << 20) as f64;
/// Bandwidth resctrl measured for a process's group that makes it memory-heavy.
const HEAVY_MEASURED: f64 = 0.5e9;
/// Processes kept per ranking.
const KEPT: usize = 5;
/// A sample that ended less than this before an episode's first slow round may already hold
/// the culprit's first moments: it counts as contended, not as reference. The sampling interval.
const STRADDLE: Duration = Duration::from_secs(1);

/// One process's part in an episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    pub pid: u32,
    pub(crate) comm: String,
    pub(crate) user: Option<String>,
    /// Another stream-top.
    pub stream_top: bool,
    /// CPU share in the reference window and while contended, percent of one core.
    pub cpu_before_pct: f64,
    pub(crate) cpu_pct: f64,
    /// While contended.
    pub(crate) faults_per_s: f64,
    pub(crate) rss_growth_per_s: Option<f64>,
    /// Its threads ran on CPUs our cell's threads ran on.
    pub on_our_cpus: bool,
    /// Its threads ran on a NUMA node our cell's threads ran on, on a machine with more than
    /// one node (on one node everything shares it, and it says nothing).
    pub(crate) on_our_node: bool,
    /// Memory bandwidth of its resctrl group while contended, bytes/s, and the group: only for
    /// a group without stream-top in it (else the figure is ours too).
    pub measured_bytes_per_s: Option<f64>,
    pub group: Option<String>,
    /// Absent from the latest process sample: it exited (or went idle). It keeps its rank (it
    /// may be why the episode ends) but is no longer named as what slows us now.
    pub(crate) exited: bool,
    /// The ranking's key: the CPU rise, times 1 + 1 for memory-heavy signs + 1 for our CPUs
    /// (+ ½ for our node only); 0 without a rise of at least `RISE_MIN`.
    pub score: f64,
}

impl Suspect {
    pub fn cpu_rise(&self) -> f64 {
        self.cpu_pct - self.cpu_before_pct
    }

    /// Whether it did enough while contended to be named: a CPU share of `SHARE_MIN` or
    /// memory-heavy signs.
    pub fn meaningful(&self) -> bool {
        self.cpu_pct >= SHARE_MIN || self.memory_heavy()
    }

    pub fn memory_heavy(&self) -> bool {
        self.faults_per_s >= HEAVY_FAULTS_PER_S
            || self.rss_growth_per_s.is_some_and(|g| g >= HEAVY_RSS_GROWTH)
            || self
                .measured_bytes_per_s
                .is_some_and(|b| b >= HEAVY_MEASURED)
    }
}

/// Where our cell runs: its CPUs, and each CPU's NUMA node where the machine has several.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    pub our_cpus: BTreeSet<u32>,
    /// CPU → node; empty on a machine with one node.
    pub nodes: HashMap<u32, u32>,
}

impl Placement {
    fn our_nodes(&self) -> BTreeSet<u32> {
        self.our_cpus
            .iter()
            .filter_map(|c| self.nodes.get(c).copied())
            .collect()
    }
}

/// Processes' activity summed over a window of samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    seconds: f64,
    procs: HashMap<u32, ProcTally>,
    /// Bytes per resctrl group, and the seconds they were measured over.
    groups: HashMap<String, (f64, f64, BTreeSet<u32>)>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct ProcTally {
    comm: String,
    user: Option<String>,
    stream_top: bool,
    cpu_s: f64,
    faults: f64,
    rss_growth: f64,
    rss_seconds: f64,
    cpus: BTreeSet<u32>,
}

impl Tally {
    pub fn add(&mut self, s: &ProcSample) {
        if s.elapsed_s <= 0.0 {
            return;
        }
        self.seconds += s.elapsed_s;
        for p in &s.processes {
            let t = self.procs.entry(p.pid).or_default();
            t.comm.clone_from(&p.comm);
            if p.user.is_some() {
                t.user.clone_from(&p.user);
            }
            t.stream_top = p.stream_top;
            t.cpu_s += p.cpu_pct / 100.0 * s.elapsed_s;
            t.faults += p.faults_per_s * s.elapsed_s;
            if let Some(g) = p.rss_growth_per_s {
                t.rss_growth += g * s.elapsed_s;
                t.rss_seconds += s.elapsed_s;
            }
            t.cpus.extend(p.cpus.iter().copied());
        }
        for g in s.bandwidth.iter().flatten() {
            let e = self
                .groups
                .entry(g.name.clone())
                .or_insert_with(|| (0.0, 0.0, BTreeSet::new()));
            e.0 += g.bytes_per_s * s.elapsed_s;
            e.1 += s.elapsed_s;
            e.2.clone_from(&g.tasks);
        }
    }

    fn cpu_pct(&self, pid: u32) -> f64 {
        match self.procs.get(&pid) {
            Some(t) if self.seconds > 0.0 => 100.0 * t.cpu_s / self.seconds,
            _ => 0.0,
        }
    }

    /// The group holding `pid` and its bandwidth, unless stream-top (`own_pid`) is in it.
    fn measured(&self, pid: u32, own_pid: u32) -> Option<(String, f64)> {
        self.groups
            .iter()
            .filter(|(_, (_, secs, tasks))| {
                *secs > 0.0 && tasks.contains(&pid) && !tasks.contains(&own_pid)
            })
            .map(|(name, (bytes, secs, _))| (name.clone(), bytes / secs))
            .next()
    }
}

/// What makes a process suspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Evidence {
    /// Contention: more CPU than in the reference window.
    #[default]
    Rise,
    /// A disturbance: CPU on our CPUs, whenever it began.
    OnOurCpus,
}

/// Ranks the processes of the contended window against the reference window, most suspect
/// first; stream-top itself (`own_pid`) is never among them.
pub fn rank(
    reference: &Tally,
    contended: &Tally,
    placement: &Placement,
    own_pid: u32,
) -> Vec<Suspect> {
    rank_by(Evidence::Rise, reference, contended, placement, own_pid)
}

/// [`rank`] by this evidence: for [`Evidence::OnOurCpus`] the score is the CPU share of a
/// process that ran on our CPUs (times 2 if memory-heavy), whatever it was before.
fn rank_by(
    evidence: Evidence,
    reference: &Tally,
    contended: &Tally,
    placement: &Placement,
    own_pid: u32,
) -> Vec<Suspect> {
    let our_nodes = placement.our_nodes();
    let several_nodes = placement.nodes.values().collect::<BTreeSet<_>>().len() > 1;
    let secs = contended.seconds.max(f64::MIN_POSITIVE);
    let mut out: Vec<Suspect> = contended
        .procs
        .iter()
        .filter(|(pid, _)| **pid != own_pid)
        .map(|(&pid, t)| {
            let measured = contended.measured(pid, own_pid);
            let mut s = Suspect {
                pid,
                comm: t.comm.clone(),
                user: t.user.clone(),
                stream_top: t.stream_top,
                cpu_before_pct: reference.cpu_pct(pid),
                cpu_pct: contended.cpu_pct(pid),
                faults_per_s: t.faults / secs,
                rss_growth_per_s: (t.rss_seconds > 0.0).then(|| t.rss_growth / t.rss_seconds),
                on_our_cpus: t.cpus.iter().any(|c| placement.our_cpus.contains(c)),
                on_our_node: several_nodes
                    && t.cpus.iter().any(|c| {
                        placement
                            .nodes
                            .get(c)
                            .is_some_and(|n| our_nodes.contains(n))
                    }),
                measured_bytes_per_s: measured.as_ref().map(|m| m.1),
                group: measured.map(|m| m.0),
                exited: false,
                score: 0.0,
            };
            let rise = s.cpu_rise();
            if !s.meaningful() {
                // Too little to explain a drop: listed, never named.
            } else if evidence == Evidence::OnOurCpus {
                if s.on_our_cpus {
                    s.score = s.cpu_pct * (1.0 + f64::from(u8::from(s.memory_heavy())));
                }
            } else if rise >= RISE_MIN {
                let placed = if s.on_our_cpus {
                    1.0
                } else if s.on_our_node {
                    0.5
                } else {
                    0.0
                };
                s.score = rise * (1.0 + f64::from(u8::from(s.memory_heavy())) + placed);
            }
            s
        })
        .filter(|s| s.score > 0.0 || s.cpu_pct >= 1.0 || s.memory_heavy())
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.cpu_pct.total_cmp(&a.cpu_pct))
            .then(a.pid.cmp(&b.pid))
    });
    out.truncate(KEPT);
    out
}

/// A sample with the span of time it covers.
#[derive(Debug, Clone)]
struct Timed {
    end: Instant,
    sample: ProcSample,
}

impl Timed {
    fn start(&self) -> Instant {
        self.end
            .checked_sub(Duration::from_secs_f64(self.sample.elapsed_s))
            .unwrap_or(self.end)
    }
}

/// Samples held back while a cell's rounds look recovered, at most.
const HELD: usize = 120;

/// An open episode's windows.
#[derive(Debug, Clone, Default)]
struct Windows {
    evidence: Evidence,
    reference: Tally,
    contended: Tally,
    /// Samples since the cell's rounds began to look recovered: part of the episode if it
    /// relapses, dropped if it ends.
    held: Vec<ProcSample>,
}

/// The windows of the episodes open now, fed with process samples.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracker {
    /// The samples of the last `REFERENCE_SPAN` and a little more.
    recent: VecDeque<Timed>,
    open: HashMap<CellId, Windows>,
}

impl Tracker {
    /// Takes a sample taken at `at`; `recovering` says which cells' rounds look recovered now.
    pub fn sample(&mut self, s: ProcSample, at: Instant, recovering: impl Fn(CellId) -> bool) {
        for (cell, w) in &mut self.open {
            if recovering(*cell) {
                if w.held.len() < HELD {
                    w.held.push(s.clone());
                }
            } else {
                for h in w.held.drain(..) {
                    w.contended.add(&h);
                }
                w.contended.add(&s);
            }
        }
        self.recent.push_back(Timed { end: at, sample: s });
        while self.recent.front().is_some_and(|t| {
            at.saturating_duration_since(t.end) > REFERENCE_SPAN + Duration::from_secs(10)
        }) {
            self.recent.pop_front();
        }
    }

    /// An episode of `cell` began at `started`, to be ranked by `evidence`: the samples that ended well before (up to
    /// `REFERENCE_SPAN` of them) are its reference; the ones since, the start of its
    /// contended window.
    pub fn open(&mut self, cell: CellId, started: Instant, evidence: Evidence) {
        let mut reference = Tally::default();
        let mut contended = Tally::default();
        let calm_until = started.checked_sub(STRADDLE).unwrap_or(started);
        for t in &self.recent {
            if t.end <= calm_until {
                if started.saturating_duration_since(t.start()) <= REFERENCE_SPAN {
                    reference.add(&t.sample);
                }
            } else {
                contended.add(&t.sample);
            }
        }
        self.open.insert(
            cell,
            Windows {
                evidence,
                reference,
                contended,
                held: Vec::new(),
            },
        );
    }

    /// The episode of `cell` ended: its windows are dropped.
    pub fn close(&mut self, cell: CellId) {
        self.open.remove(&cell);
    }

    /// The ranking for the open episode of `cell` (empty before its first sample).
    /// A suspect absent from the latest sample is marked exited.
    pub fn rank(&self, cell: CellId, placement: &Placement, own_pid: u32) -> Vec<Suspect> {
        let Some(w) = self.open.get(&cell) else {
            return Vec::new();
        };
        let mut out = rank_by(w.evidence, &w.reference, &w.contended, placement, own_pid);
        let latest = self.latest();
        for s in &mut out {
            s.exited = !latest.iter().any(|p| p.pid == s.pid);
        }
        out
    }

    /// Whether the open episode of `cell` has a sample of its contended window yet.
    pub(crate) fn has_evidence(&self, cell: CellId) -> bool {
        self.open
            .get(&cell)
            .is_some_and(|w| w.contended.seconds > 0.0)
    }

    /// The processes of the last sample, busiest first.
    pub fn latest(&self) -> &[Process] {
        self.recent
            .back()
            .map_or(&[][..], |t| t.sample.processes.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(processes: Vec<Process>) -> Tally {
        let mut t = Tally::default();
        t.add(&ProcSample {
            elapsed_s: 1.0,
            processes,
            bandwidth: None,
        });
        t
    }

    /// A hog on our CPU that was there before is no suspect of contention (no rise), but the
    /// first suspect of a disturbance; a busier process away from our CPUs is not one.
    #[test]
    fn a_disturbance_ranks_by_cpu_on_our_cpus_whatever_came_before() {
        let before = tally(vec![
            Process::busy(2408, "memhog", 51.0, &[0]),
            Process::busy(900, "build", 10.0, &[1]),
        ]);
        let now = tally(vec![
            Process::busy(2408, "memhog", 51.0, &[0]),
            Process::busy(900, "build", 90.0, &[1]),
        ]);
        let placement = Placement {
            our_cpus: [0].into_iter().collect(),
            nodes: HashMap::new(),
        };
        let by_rise = rank(&before, &now, &placement, 1);
        assert_eq!(by_rise[0].pid, 900);
        let hog = by_rise.iter().find(|s| s.pid == 2408).unwrap();
        assert_eq!(hog.score, 0.0);
        let on_ours = rank_by(Evidence::OnOurCpus, &before, &now, &placement, 1);
        assert_eq!(on_ours[0].pid, 2408);
        assert_eq!(on_ours[0].score, 51.0);
        let build = on_ours.iter().find(|s| s.pid == 900).unwrap();
        assert_eq!(
            build.score, 0.0,
            "not on our CPUs: it cannot switch our worker out"
        );
    }

    /// Another stream-top at 4 % before and during a drop did nothing that explains it:
    /// it is neither a suspect nor named as the busiest, and a rise to 8 % is no suspect
    /// either.
    #[test]
    fn a_process_at_a_few_percent_is_never_named() {
        let mut other = Process::busy(3265, "stream-top", 4.0, &[0]);
        other.stream_top = true;
        let before = tally(vec![other.clone(), Process::busy(77, "sshd", 1.0, &[1])]);
        let now = tally(vec![other, Process::busy(77, "sshd", 8.0, &[0])]);
        let placement = Placement {
            our_cpus: [0].into_iter().collect(),
            nodes: HashMap::new(),
        };
        let ranked = rank(&before, &now, &placement, 1);
        assert!(ranked.iter().all(|s| s.score == 0.0), "{ranked:?}");
        assert_eq!(
            super::super::narrative::suspects(&ranked, 3, true),
            "no process used more CPU than before"
        );
    }

    /// A hog that ran for the first seconds of an episode and then exited keeps its rank but
    /// is marked so, and its evidence says it; a process still at work is not marked.
    #[test]
    fn an_exited_process_is_marked_and_no_longer_named_as_the_top_suspect() {
        let cell = CellId::new(1, 2);
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let sample = |processes: Vec<Process>| ProcSample {
            elapsed_s: 1.0,
            processes,
            bandwidth: None,
        };
        let mut tracker = Tracker::default();
        for s in 1..=5 {
            tracker.sample(
                sample(vec![Process::busy(900, "build", 1.0, &[1])]),
                at(s),
                |_| false,
            );
        }
        tracker.open(cell, at(6), Evidence::Rise);
        for s in 6..=8 {
            let busy = vec![
                Process::busy(4000, "stress-ng-vm", 99.0, &[0]),
                Process::busy(900, "build", 30.0, &[1]),
            ];
            tracker.sample(sample(busy), at(s), |_| false);
        }
        let placement = Placement {
            our_cpus: [0].into_iter().collect(),
            nodes: HashMap::new(),
        };
        let ranked = tracker.rank(cell, &placement, 1);
        assert_eq!((ranked[0].pid, ranked[0].exited), (4000, false));
        for s in 9..=12 {
            tracker.sample(
                sample(vec![Process::busy(900, "build", 30.0, &[1])]),
                at(s),
                |_| false,
            );
        }
        let ranked = tracker.rank(cell, &placement, 1);
        let gone = &ranked[0];
        assert!(
            gone.pid == 4000 && gone.exited && gone.score > 0.0,
            "{ranked:?}"
        );
        let build = ranked.iter().find(|s| s.pid == 900).unwrap();
        assert!(!build.exited && build.score > 0.0);
        let text = super::super::narrative::evidence(gone);
        assert!(text.ends_with(", exited"), "{text}");
        // The minute's line names the top suspect still at work, not the exited hog.
        let ep = super::super::episode::Episode {
            id: 1,
            cell,
            kind: super::super::episode::EpisodeKind::Contention,
            started: at(6),
            ended: None,
            cut_short: false,
            superseded: false,
            reference: None,
            rounds: 1,
            disturbed_rounds: 0,
            sum_gbs: 5.0,
            worst_gbs: 5.0,
            worst_off_cpu: None,
            noted: at(6),
            suspects: ranked.clone(),
        };
        let line = super::super::narrative::lasting("dram × 1", &ep, Duration::from_secs(60));
        assert!(line.ends_with("top suspect PID 900 build"), "{line}");
    }
}
