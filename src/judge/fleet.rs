//! The fleet rule: which node delivers less bandwidth than its identical peers, and why.
//!
//! Nodes are grouped into peer classes by their hardware fingerprint's class, and judged cell
//! by cell (op, working set, threads) against the class's median, with the median absolute
//! deviation as the spread (one bad node cannot move either): a node is an outlier when it is
//! below the median by more than `mads` MADs (6, as Intel Cluster Checker) *and* by more than
//! a least gap (`min_gap` percent, widened to the class's own run-to-run spread: `confirm`),
//! so a class of identical nodes with a tiny spread does not flag noise. Several runs of one
//! node are its repetitions: its figure is their median. A node that breaks both rules is an
//! outlier only when it broke them on every one of `confirm::MIN_OCCASIONS` or more occasions
//! (runs taken at different times); else it is a suspect, to be measured again at another time. For an outlier,
//! the fingerprint fields that differ from its class's common value say why; where none
//! differs, its own evidence (disturbed rounds) does.

use crate::base::median::median;
use crate::judge::confirm::{self, Span, Timed};
use crate::machine::fingerprint::{Fingerprint, Known};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The two rules a node must break to be an outlier.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rules {
    /// Below the median by more than this many MADs.
    pub(crate) mads: f64,
    /// And below it by more than this many percent at least (the least gap's floor: a noisy
    /// class widens it to its own spread).
    pub(crate) min_gap: f64,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            mads: 6.0,
            min_gap: 5.0,
        }
    }
}

/// A cell of the grid, as the fleet compares it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Cell {
    pub(crate) op: String,
    /// The working set's name (`dram`, `l2`, `64 MiB`).
    pub(crate) set: String,
    pub(crate) threads: usize,
}

/// `triad dram × 64`, as the tables, the summary and the chart name a cell.
impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} × {}", self.op, self.set, self.threads)
    }
}

/// One run of one node: its fingerprint and each cell's median.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Where it came from (a file name), for messages.
    pub(crate) source: String,
    /// The node's name as the run stored it.
    pub(crate) node: String,
    pub(crate) fingerprint: Option<Fingerprint>,
    /// Each cell: its repetitions' medians (GB/s) and its disturbed rounds.
    pub(crate) cells: Vec<(Cell, Vec<f64>, u32)>,
    /// Idle latency per working set (ns per load), where the run chased one.
    pub(crate) latency: Vec<(String, f64)>,
    /// When it was taken (its start to its snapshot), where the snapshot's times parse.
    pub(crate) span: Option<Span>,
    /// The command line that took it, for a suspect to be measured again.
    pub(crate) command: String,
}

/// A node's standing in one cell of its class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    pub(crate) node: String,
    /// The median of its repetitions, GB/s.
    pub(crate) gbs: f64,
    pub(crate) repetitions: usize,
    /// Its figure over the class's median.
    pub(crate) ratio: f64,
    /// (figure − median) / MAD: negative below; ±infinity where the MAD is 0 and it differs.
    pub(crate) distance: f64,
    pub(crate) outlier: bool,
    /// Below by more than both rules, but not on `confirm::MIN_OCCASIONS` or more occasions
    /// every time.
    pub(crate) suspect: bool,
    /// Its runs' occasions (runs taken at least `confirm::APART_S` apart), and on how many
    /// of them it broke both rules.
    pub(crate) occasions: usize,
    pub(crate) slow_occasions: usize,
    disturbed: u32,
}

/// One cell of one class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellJudgement {
    pub(crate) cell: Cell,
    pub(crate) median: f64,
    pub(crate) mad: f64,
    /// The run-to-run spread (relative) the least gap follows, and how many nodes' repeated
    /// runs gave it; 0 nodes where none had two runs and the between-node spread stands in.
    pub(crate) spread: f64,
    pub(crate) spread_nodes: usize,
    /// The least gap applied, percent: the floor, or `SPREAD_K` × the spread.
    pub(crate) gap: f64,
    /// The smallest slowdown this cell can accuse, percent below the median: the stricter of
    /// `mads` MADs and the least gap.
    pub(crate) detectable: f64,
    pub(crate) nodes: Vec<Standing>,
}

/// One peer class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Class {
    /// The class hash, or `–` for runs without a fingerprint.
    pub(crate) class: String,
    pub(crate) cpu_model: String,
    pub(crate) nodes: Vec<String>,
    pub(crate) cells: Vec<CellJudgement>,
    /// Each outlier node, with why (its worst cell is in `cells`).
    pub(crate) outliers: Vec<(String, Vec<String>)>,
    /// Each suspect node (slow, not confirmed at another time), with why and the command
    /// that measures it again.
    pub(crate) suspects: Vec<Suspect>,
    /// What the class's nodes that are no outlier commonly are (all of them where every one
    /// is): what the exported reference carries for `check` to name differences against.
    #[serde(skip)]
    pub(crate) common: Common,
    /// Each working set's median idle latency over the nodes that chased it (ns per load).
    #[serde(skip)]
    pub(crate) latency: Vec<(String, f64)>,
}

/// A node slow, but not on enough occasions to be accused: to be measured again at another time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspect {
    pub(crate) node: String,
    pub(crate) why: Vec<String>,
    /// The command line of its run, to run again 10 minutes or more later.
    pub(crate) again: String,
}

/// The fleet's judgement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    pub(crate) rules: Rules,
    /// Classes of two or more nodes, judged.
    pub(crate) classes: Vec<Class>,
    /// Nodes alone in their class: no peers, not judged (node, class).
    pub(crate) alone: Vec<(String, String)>,
    /// Names claimed by different machines: kept apart, each named `NAME [machine N]`.
    pub(crate) clashes: Vec<String>,
}

/// One node: every run that names it from one machine.
struct Node {
    name: String,
    fingerprint: Option<Fingerprint>,
    cells: BTreeMap<Cell, (Vec<f64>, u32)>,
    /// Each cell's runs: each one's figure (its repetitions' median) and when it was taken.
    timed: BTreeMap<Cell, Vec<Timed>>,
    latency: BTreeMap<String, Vec<f64>>,
    command: String,
}

/// Judges the runs.
pub fn judge(runs: Vec<Run>, rules: Rules) -> Judgement {
    let (nodes, clashes) = nodes_of(runs);
    let mut by_class: BTreeMap<String, Vec<Node>> = BTreeMap::new();
    for n in nodes {
        by_class.entry(class_of(&n)).or_default().push(n);
    }
    let mut judgement = Judgement {
        rules,
        classes: Vec::new(),
        alone: Vec::new(),
        clashes,
    };
    for (class, members) in by_class {
        if members.len() < 2 {
            judgement
                .alone
                .extend(members.into_iter().map(|n| (n.name, class.clone())));
        } else {
            judgement.classes.push(judge_class(class, &members, rules));
        }
    }
    judgement
}

fn class_of(n: &Node) -> String {
    n.fingerprint
        .as_ref()
        .map_or_else(|| "–".to_string(), Fingerprint::class)
}

/// The machine behind a run: its machine id, else its class (what it is built as).
fn machine_of(run: &Run) -> Option<String> {
    let f = run.fingerprint.as_ref()?;
    Some(f.machine_id.value().cloned().unwrap_or_else(|| f.class()))
}

/// Runs merged into nodes by name; a name claimed by different machines is split, each part
/// named `NAME [machine N]`, and said in the second list. A run without a fingerprint (a
/// snapshot from before it was stored) joins the one machine of its name; where the name is
/// split it cannot be told whose it is, so it is left out and said in the second list.
fn nodes_of(runs: Vec<Run>) -> (Vec<Node>, Vec<String>) {
    let mut by_name: BTreeMap<String, Vec<(Option<String>, Run)>> = BTreeMap::new();
    for r in runs {
        by_name
            .entry(r.node.clone())
            .or_default()
            .push((machine_of(&r), r));
    }
    let mut nodes = Vec::new();
    let mut clashes = Vec::new();
    for (name, runs) in by_name {
        let mut machines: Vec<String> = runs.iter().filter_map(|(m, _)| m.clone()).collect();
        machines.sort();
        machines.dedup();
        if machines.len() <= 1 {
            nodes.push(merge(name, runs.iter().map(|(_, r)| r)));
            continue;
        }
        clashes.push(format!(
            "{name} is claimed by {} different machines (kept apart)",
            machines.len()
        ));
        let unknown: Vec<&str> = runs
            .iter()
            .filter(|(m, _)| m.is_none())
            .map(|(_, r)| r.source.as_str())
            .collect();
        if !unknown.is_empty() {
            clashes.push(format!(
                "{name}: {} left out: {} without a fingerprint, so which of its {} machines ran {} \
                 is unknown",
                unknown.join(", "),
                if unknown.len() == 1 {
                    "a snapshot"
                } else {
                    "snapshots"
                },
                machines.len(),
                if unknown.len() == 1 { "it" } else { "them" },
            ));
        }
        for (i, m) in machines.iter().enumerate() {
            let mine = runs.iter().filter(|(rm, _)| rm.as_ref() == Some(m));
            nodes.push(merge(
                format!("{name} [machine {}]", i + 1),
                mine.map(|(_, r)| r),
            ));
        }
    }
    (nodes, clashes)
}

/// One node from its runs: each cell's repetitions pooled, its disturbed rounds summed.
fn merge<'a>(name: String, runs: impl Iterator<Item = &'a Run>) -> Node {
    let mut node = Node {
        name,
        fingerprint: None,
        cells: BTreeMap::new(),
        timed: BTreeMap::new(),
        latency: BTreeMap::new(),
        command: String::new(),
    };
    for r in runs {
        if node.fingerprint.is_none() {
            node.fingerprint = r.fingerprint.clone();
            node.command = r.command.clone();
        }
        record_times(&mut node, r);
        for (cell, reps, disturbed) in &r.cells {
            let e = node.cells.entry(cell.clone()).or_default();
            e.0.extend(reps.iter().copied().filter(|g| g.is_finite()));
            e.1 += disturbed;
        }
        for (set, ns) in &r.latency {
            node.latency.entry(set.clone()).or_default().push(*ns);
        }
    }
    node
}

/// Each cell's figure of one run (its repetitions' median) and when the run was taken.
fn record_times(node: &mut Node, r: &Run) {
    for (cell, reps, _) in &r.cells {
        let finite: Vec<f64> = reps.iter().copied().filter(|g| g.is_finite()).collect();
        if !finite.is_empty() {
            let e = node.timed.entry(cell.clone()).or_default();
            e.push((r.span, median(&finite)));
        }
    }
}

fn judge_class(class: String, members: &[Node], rules: Rules) -> Class {
    let mut cells: BTreeMap<&Cell, Vec<(&Node, f64, usize, u32)>> = BTreeMap::new();
    for n in members {
        for (cell, (reps, disturbed)) in &n.cells {
            if !reps.is_empty() {
                cells
                    .entry(cell)
                    .or_default()
                    .push((n, median(reps), reps.len(), *disturbed));
            }
        }
    }
    let judged: Vec<CellJudgement> = cells
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(cell, v)| judge_cell(cell.clone(), &v, rules))
        .collect();
    let outliers: Vec<(String, Vec<String>)> = members
        .iter()
        .filter_map(|n| outlier_why(n, members, &judged, |s| s.outlier))
        .collect();
    let suspects: Vec<Suspect> = members
        .iter()
        .filter(|n| !outliers.iter().any(|(o, _)| *o == n.name))
        .filter_map(|n| {
            let (node, why) = outlier_why(n, members, &judged, |s| s.suspect)?;
            Some(Suspect {
                node,
                why,
                again: n.command.clone(),
            })
        })
        .collect();
    let flagged = |name: &str| {
        outliers.iter().any(|(o, _)| o == name) || suspects.iter().any(|s| s.node == name)
    };
    let fingerprints = |healthy: bool| -> Vec<&Fingerprint> {
        members
            .iter()
            .filter(|n| !healthy || !flagged(&n.name))
            .filter_map(|n| n.fingerprint.as_ref())
            .collect()
    };
    let healthy = fingerprints(true);
    let common = if healthy.is_empty() {
        Common::of(&fingerprints(false))
    } else {
        Common::of(&healthy)
    };
    Class {
        class,
        cpu_model: members[0]
            .fingerprint
            .as_ref()
            .map_or("–".into(), |f| f.cpu_model.clone()),
        nodes: members.iter().map(|n| n.name.clone()).collect(),
        cells: judged,
        outliers,
        suspects,
        common,
        latency: class_latency(members),
    }
}

/// Each working set's idle latency over the class: the median of its nodes' medians.
fn class_latency(members: &[Node]) -> Vec<(String, f64)> {
    let mut sets: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for n in members {
        for (set, ns) in &n.latency {
            sets.entry(set).or_default().push(median(ns));
        }
    }
    sets.into_iter()
        .map(|(set, ns)| (set.to_string(), median(&ns)))
        .collect()
}

/// The median, the MAD, the least gap the class's spread sets, and each node's standing in
/// one cell: slow on its median figure and on every one of [`confirm::MIN_OCCASIONS`] or
/// more occasions is an outlier, slow otherwise a suspect.
fn judge_cell(cell: Cell, v: &[(&Node, f64, usize, u32)], rules: Rules) -> CellJudgement {
    let figures: Vec<f64> = v.iter().map(|x| x.1).collect();
    let m = median(&figures);
    let deviations: Vec<f64> = figures.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&deviations);
    let runs: Vec<&[Timed]> = v.iter().map(|x| timed_of(x.0, &cell)).collect();
    let (spread, spread_nodes) = confirm::run_to_run(&runs).unwrap_or((mad / m, 0));
    let gap = confirm::least_gap(spread, rules.min_gap);
    let applied = Rules {
        min_gap: gap,
        ..rules
    };
    let nodes = v
        .iter()
        .zip(&runs)
        .map(|(&(n, gbs, repetitions, disturbed), runs)| {
            let slow = is_outlier(gbs, m, mad, applied);
            let occasions = confirm::occasions(runs);
            let slow_occasions = occasions
                .iter()
                .filter(|&&g| is_outlier(g, m, mad, applied))
                .count();
            let confirmed =
                occasions.len() >= confirm::MIN_OCCASIONS && slow_occasions == occasions.len();
            Standing {
                node: n.name.clone(),
                gbs,
                repetitions,
                ratio: gbs / m,
                distance: distance(gbs - m, mad),
                outlier: slow && confirmed,
                suspect: slow && !confirmed,
                occasions: occasions.len(),
                slow_occasions,
                disturbed,
            }
        })
        .collect();
    CellJudgement {
        cell,
        median: m,
        mad,
        spread,
        spread_nodes,
        gap,
        detectable: 100.0 * outlier_margin(m, mad, applied) / m,
        nodes,
    }
}

/// A node's runs in one cell, with their times.
fn timed_of<'a>(n: &'a Node, cell: &Cell) -> &'a [Timed] {
    n.timed.get(cell).map_or(&[], Vec::as_slice)
}

/// (x − m) / MAD, ±infinity when the MAD is 0 and x differs, 0 when it does not.
fn distance(diff: f64, mad: f64) -> f64 {
    if mad > 0.0 {
        diff / mad
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    }
}

/// How far below the median (GB/s) a figure must fall to break both rules: the stricter of
/// `mads` MADs and `min_gap` percent of the median.
pub fn outlier_margin(median: f64, mad: f64, rules: Rules) -> f64 {
    (rules.mads * mad).max(median * rules.min_gap / 100.0)
}

/// Both rules: below by more than `mads` MADs and by more than `min_gap` percent.
pub fn is_outlier(gbs: f64, median: f64, mad: f64, rules: Rules) -> bool {
    median - gbs > outlier_margin(median, mad, rules)
}

/// Why a node flagged in some cell (an outlier, or a suspect, as `flagged` picks) is slow: the
/// fingerprint's differences, else its disturbed rounds, else that none was found. None when
/// it is flagged in no cell.
fn outlier_why(
    n: &Node,
    members: &[Node],
    cells: &[CellJudgement],
    flagged: impl Fn(&Standing) -> bool,
) -> Option<(String, Vec<String>)> {
    let mine: Vec<&Standing> = cells
        .iter()
        .flat_map(|c| c.nodes.iter().filter(|s| s.node == n.name && flagged(s)))
        .collect();
    if mine.is_empty() {
        return None;
    }
    let mut why = differences(n, members);
    if why.is_empty() {
        let disturbed: u32 = mine.iter().map(|s| s.disturbed).sum();
        if disturbed > 0 {
            why.push(format!("{disturbed} disturbed rounds in its own run"));
        }
    }
    if why.is_empty() {
        why.push("no difference found in the fingerprint".to_string());
    }
    Some((n.name.clone(), why))
}

/// The fingerprint fields in which `n` differs from the common value of its class.
fn differences(n: &Node, members: &[Node]) -> Vec<String> {
    let Some(f) = &n.fingerprint else {
        return Vec::new();
    };
    let peers: Vec<&Fingerprint> = members
        .iter()
        .filter(|m| m.name != n.name)
        .filter_map(|m| m.fingerprint.as_ref())
        .collect();
    Common::of(&peers).differences(f, "peers")
}

/// What a group of nodes commonly is: each fingerprint field's most common value among them.
/// It is the yardstick a node's differences are named against, among its peers by `fleet`, and
/// by `check` against the class reference that `fleet --export-reference` writes (which
/// carries it), so that both say the same words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Common {
    /// Populated DIMMs.
    dimms: Option<usize>,
    /// The populated DIMMs' speed, MT/s.
    dimm_mts: Option<u32>,
    /// Each readable field's common value, by its name in the phrases (`BIOS`, `THP`, …).
    fields: BTreeMap<String, String>,
    /// Corrected and uncorrected memory errors, summed over the controllers.
    errors: Option<(u64, u64)>,
}

impl Common {
    /// The common values of these fingerprints (the most common of each field that has one).
    pub fn of(fingerprints: &[&Fingerprint]) -> Common {
        Common {
            dimms: common(fingerprints.iter().map(|p| p.populated().map(|d| d.len()))),
            dimm_mts: common(
                fingerprints
                    .iter()
                    .flat_map(|p| p.populated().unwrap_or_default())
                    .map(|d| d.speed()),
            ),
            fields: FIELDS
                .iter()
                .filter_map(|(name, value)| {
                    common(fingerprints.iter().map(|p| value(p))).map(|v| (name.to_string(), v))
                })
                .collect(),
            errors: common(fingerprints.iter().map(|p| p.memory_errors())),
        }
    }

    /// The fields in which `f` differs from these common values, each phrased with `word` for
    /// whose value it is: "7 of 8 DIMMs populated (peers: 8)", "THP never (reference:
    /// madvise)", "412 corrected memory errors".
    pub fn differences(&self, f: &Fingerprint, word: &str) -> Vec<String> {
        let mut out = self.dimm_differences(f, word);
        for (name, value) in FIELDS {
            if let (Some(mine), Some(common)) = (value(f), self.fields.get(*name))
                && &mine != common
            {
                out.push(format!("{name} {mine} ({word}: {common})"));
            }
        }
        out.extend(self.error_differences(f));
        out
    }

    /// "7 of 8 DIMMs populated (peers: 8)", "DIMM P0_DIMM_F1 at 4400 MT/s (peers: 4800)".
    fn dimm_differences(&self, f: &Fingerprint, word: &str) -> Vec<String> {
        let (Known::Value(slots), Some(populated)) = (&f.dimms, f.populated()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(pc) = self.dimms.filter(|&pc| pc != populated.len()) {
            out.push(format!(
                "{} of {} DIMMs populated ({word}: {pc})",
                populated.len(),
                slots.len()
            ));
        }
        for d in &populated {
            if let (Some(s), Some(ps)) = (d.speed(), self.dimm_mts)
                && s < ps
            {
                out.push(format!("DIMM {} at {s} MT/s ({word}: {ps})", d.locator));
            }
        }
        out
    }

    /// Memory errors where the common count is 0 (or unknown): "412 corrected memory errors".
    fn error_differences(&self, f: &Fingerprint) -> Vec<String> {
        let Some((ce, ue)) = f.memory_errors() else {
            return Vec::new();
        };
        let usual = self.errors.unwrap_or((0, 0));
        let mut out = Vec::new();
        if ce > 0 && usual.0 == 0 {
            out.push(format!("{ce} corrected memory errors"));
        }
        if ue > 0 && usual.1 == 0 {
            out.push(format!("{ue} uncorrected memory errors"));
        }
        out
    }
}

/// A readable field and how to read it.
type Field = (&'static str, fn(&Fingerprint) -> Option<String>);

const FIELDS: &[Field] = &[
    ("BIOS", |f| f.bios.value().map(|b| b.version.clone())),
    ("microcode", |f| f.microcode.value().cloned()),
    ("kernel", |f| f.kernel_release.value().cloned()),
    ("THP", |f| f.thp.value().cloned()),
    ("governor", |f| f.governor.value().cloned()),
    ("boost", |f| {
        f.boost
            .value()
            .map(|b| if *b { "on" } else { "off" }.to_string())
    }),
    ("zone_reclaim_mode", |f| {
        f.zone_reclaim_mode.value().map(u64::to_string)
    }),
    ("numa_balancing", |f| {
        f.numa_balancing.value().map(u64::to_string)
    }),
];

/// The most common value among those that have one.
fn common<T: Ord + Clone>(values: impl Iterator<Item = Option<T>>) -> Option<T> {
    let mut counts: BTreeMap<T, usize> = BTreeMap::new();
    for v in values.flatten() {
        *counts.entry(v).or_default() += 1;
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::latency::chain::SplitMix64;
    use crate::judge::confirm::MIN_OCCASIONS;
    use crate::machine::fingerprint::Dimm;

    /// A uniform number in (0, 1).
    fn uniform(rng: &mut SplitMix64) -> f64 {
        ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// One run's figure as a fraction of the node's true bandwidth: run-to-run scatter of
    /// 0.7 % (normal), and a heavy tail: one run in 50 disturbed, losing an exponential share
    /// with a mean of 1 % (an assumed model of a dedicated server: with one run in 20
    /// disturbed, 2 % of fleets flag a node at the defaults; the spread measured on the shared
    /// development VM is far wider, see `measured_spread`).
    fn noise(rng: &mut SplitMix64) -> f64 {
        let (u1, u2) = (uniform(rng), uniform(rng));
        let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let tail = if uniform(rng) < 0.02 {
            -0.01 * uniform(rng).ln()
        } else {
            0.0
        };
        1.0 + 0.007 * normal - tail
    }

    fn fingerprint(node: &str, populated: usize) -> Fingerprint {
        let dimm = |i: usize| Dimm {
            locator: format!("DIMM_{i}"),
            size_mib: (i < populated).then_some(32768),
            memory_type: "DDR5".into(),
            rated_mts: Some(4800),
            configured_mts: Some(4800),
            rank: Some(2),
        };
        Fingerprint {
            node: node.into(),
            machine_id: Known::Value(node.into()),
            cpu_model: "Simulated CPU".into(),
            sockets: 1,
            dimms: Known::Value((0..8).map(dimm).collect()),
            bios: Known::Missing("simulated".into()),
            microcode: Known::Value("0x1".into()),
            kernel_release: Known::Value("6.8".into()),
            thp: Known::Value("madvise".into()),
            governor: Known::Value("performance".into()),
            boost: Known::Value(true),
            zone_reclaim_mode: Known::Value(0),
            numa_balancing: Known::Value(1),
            edac: Known::Value(Vec::new()),
        }
    }

    /// The run-to-run spreads measured on two shared VMs, each fixture saying how it was taken.
    const MEASURED: [(&str, &str); 2] = [
        (
            "Zen 4",
            include_str!("../../tests/fixtures/fleet/dram-noise-zen4.txt"),
        ),
        (
            "Zen 3",
            include_str!("../../tests/fixtures/fleet/dram-noise-zen3.txt"),
        ),
    ];

    /// A fixture's spread: each line's ratio of one process's DRAM figure to the median of
    /// its kind.
    fn spread_of(fixture: &str) -> Vec<f64> {
        fixture
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
            .collect()
    }

    /// One run's figure as a fraction of the node's true bandwidth, drawn from the measured
    /// spread (a bootstrap: each draw one measured process, taken at random).
    fn measured(spread: &[f64]) -> impl Fn(&mut SplitMix64) -> f64 + '_ {
        move |rng| spread[rng.below(spread.len())]
    }

    /// How a node's runs are spread in time: an hour apart (each run an occasion of its own),
    /// or a minute apart, in one burst (one occasion).
    #[derive(Clone, Copy, PartialEq)]
    enum Taken {
        Apart,
        Burst,
    }

    /// A fleet of 50 nodes at 400 GB/s, as few runs a node an hour apart as may accuse one;
    /// node 0 runs at `slow` of that with `populated` DIMMs.
    fn fleet(rng: &mut SplitMix64, slow: f64, populated: usize) -> Judgement {
        fleet_of(
            rng,
            (slow, populated),
            &noise,
            (MIN_OCCASIONS, Taken::Apart),
        )
    }

    /// The same with `noise` for each run, `runs` separate runs a node, taken as `taken` says.
    fn fleet_of(
        rng: &mut SplitMix64,
        (slow, populated): (f64, usize),
        noise: &dyn Fn(&mut SplitMix64) -> f64,
        (runs, taken): (usize, Taken),
    ) -> Judgement {
        let step = if taken == Taken::Apart { 3600 } else { 60 };
        let mut all = Vec::new();
        for i in 0..50 {
            let node = format!("node-{i:02}");
            let (share, dimms) = if i == 0 { (slow, populated) } else { (1.0, 8) };
            let cell = Cell {
                op: "triad".into(),
                set: "dram".into(),
                threads: 64,
            };
            for k in 0..runs as i64 {
                all.push(Run {
                    source: format!("{node}-{k}"),
                    fingerprint: Some(fingerprint(&node, dimms)),
                    node: node.clone(),
                    cells: vec![(cell.clone(), vec![400.0 * share * noise(rng)], 0)],
                    latency: Vec::new(),
                    span: Some((k * step, k * step + 30)),
                    command: format!("stream-top --headless --node {node}"),
                });
            }
        }
        judge(all, Rules::default())
    }

    fn flagged(j: &Judgement) -> Vec<&(String, Vec<String>)> {
        j.classes.iter().flat_map(|c| &c.outliers).collect()
    }

    fn suspected(j: &Judgement) -> Vec<&str> {
        j.classes
            .iter()
            .flat_map(|c| c.suspects.iter().map(|s| s.node.as_str()))
            .collect()
    }

    #[test]
    fn identical_fleets_with_a_heavy_tail_rarely_flag_a_node() {
        let mut rng = SplitMix64::new(1);
        let alarms = (0..1000)
            .filter(|_| !flagged(&fleet(&mut rng, 1.0, 8)).is_empty())
            .count();
        assert!(alarms <= 10, "{alarms} of 1000 fleets flagged a node");
    }

    #[test]
    fn a_node_fifteen_percent_down_is_flagged_in_nearly_every_fleet() {
        let mut rng = SplitMix64::new(2);
        let found = (0..1000)
            .filter(|_| {
                let j = fleet(&mut rng, 0.85, 8);
                flagged(&j).iter().any(|(n, _)| n == "node-00")
            })
            .count();
        assert!(found >= 950, "flagged in {found} of 1000 fleets");
    }

    #[test]
    fn a_slow_node_seen_on_one_occasion_only_is_a_suspect_not_an_outlier() {
        let mut rng = SplitMix64::new(7);
        for taken in [(1, Taken::Apart), (3, Taken::Burst)] {
            let j = fleet_of(&mut rng, (0.70, 7), &noise, taken);
            assert!(flagged(&j).is_empty());
            assert_eq!(suspected(&j), ["node-00"]);
            let s = &j.classes[0].suspects[0];
            assert_eq!(s.why[0], "7 of 8 DIMMs populated (peers: 8)");
            assert_eq!(s.again, "stream-top --headless --node node-00");
        }
    }

    /// What 1,000 fleets gave: fleets with any outlier, with any suspect, fleets where node 0
    /// was an outlier, and the detectable slowdown's median over the fleets (percent).
    struct Tally {
        outlier: usize,
        suspect: usize,
        node0: usize,
        detectable: f64,
    }

    /// Of 1,000 fleets of 50 nodes at the measured spread, with `runs` runs a node taken as
    /// `taken` says and node 0 at `slow` with `populated` DIMMs.
    fn at_measured_spread(
        spread: &[f64],
        seed: u64,
        node0: (f64, usize),
        runs: (usize, Taken),
    ) -> Tally {
        let noise = measured(spread);
        let mut rng = SplitMix64::new(seed);
        let mut t = Tally {
            outlier: 0,
            suspect: 0,
            node0: 0,
            detectable: 0.0,
        };
        let mut detectable = Vec::new();
        for _ in 0..1000 {
            let j = fleet_of(&mut rng, node0, &noise, runs);
            detectable.push(j.classes[0].cells[0].detectable);
            let out = flagged(&j);
            t.outlier += usize::from(!out.is_empty());
            t.suspect += usize::from(!suspected(&j).is_empty());
            t.node0 += usize::from(out.iter().any(|(n, _)| n == "node-00"));
        }
        t.detectable = median(&detectable);
        t
    }

    /// At the spreads measured on two shared KVM guests (on the Zen 4 one process in 60 at
    /// 0.59 of the median, one in 12 below 0.82, none of them with a disturbed round: the
    /// host's other guests took the bandwidth), a healthy node is an outlier only when its
    /// tail strikes on every occasion, and the least gap follows the class's spread (about
    /// 3 × 5 % there), so false outliers are rare once runs are taken at different times, and
    /// a node 30 % down with a DIMM missing is still found. The figures are printed for the
    /// docs: `cargo test --lib judge::fleet::tests::at_the_measured -- --nocapture`.
    #[test]
    fn at_the_measured_spread_runs_at_different_times_rarely_accuse_a_healthy_node() {
        for (machine, fixture) in MEASURED {
            let spread = spread_of(fixture);
            assert_eq!(spread.len(), 60, "{machine}: the fixture's processes");
            rarely_accused_at(machine, &spread);
        }
    }

    /// The error-rate table's rows at one machine's spread, printed and checked.
    fn rarely_accused_at(machine: &str, spread: &[f64]) {
        let cases = [
            (1, Taken::Apart),
            (3, Taken::Burst),
            (2, Taken::Apart),
            (3, Taken::Apart),
            (5, Taken::Apart),
        ];
        for (i, runs) in cases.into_iter().enumerate() {
            let seed = 10 * i as u64;
            let healthy = at_measured_spread(spread, seed + 4, (1.0, 8), runs);
            let down15 = at_measured_spread(spread, seed + 5, (0.85, 8), runs);
            let down30 = at_measured_spread(spread, seed + 6, (0.70, 7), runs);
            let how = if runs.1 == Taken::Apart {
                "an hour apart"
            } else {
                "in one burst"
            };
            crate::base::output::stderr(&format!(
                "{machine} spread, {} run(s) a node {how}: false outliers in {} of 1000 fleets, \
                 a suspect in {}; detectable ≥ {:.0} %; a node 15 % down an outlier in {}, \
                 30 % down (a DIMM fewer) in {}",
                runs.0,
                healthy.outlier,
                healthy.suspect,
                healthy.detectable,
                down15.node0,
                down30.node0
            ));
            if runs.0 < MIN_OCCASIONS || runs.1 == Taken::Burst {
                assert_eq!(
                    healthy.outlier + down30.node0,
                    0,
                    "{machine}: fewer occasions than the rule needs accuse no one"
                );
            }
            if runs.1 == Taken::Apart {
                let false_outliers = healthy.outlier;
                assert!(
                    false_outliers <= 10,
                    "{machine}: {false_outliers} of 1000 healthy fleets"
                );
            }
        }
    }

    #[test]
    fn a_node_thirty_percent_down_with_a_dimm_missing_is_told_why_every_time() {
        let mut rng = SplitMix64::new(3);
        for _ in 0..1000 {
            let j = fleet(&mut rng, 0.70, 7);
            let out = flagged(&j);
            let (_, why) = out.iter().find(|(n, _)| n == "node-00").expect("flagged");
            assert_eq!(why[0], "7 of 8 DIMMs populated (peers: 8)");
        }
    }

    #[test]
    fn a_reference_names_a_missing_dimm_in_the_fleets_words_and_survives_json() {
        let healthy = [fingerprint("a", 8), fingerprint("b", 8)];
        let common = Common::of(&healthy.iter().collect::<Vec<_>>());
        let text = serde_json::to_string(&common).unwrap();
        let read: Common = serde_json::from_str(&text).unwrap();
        assert_eq!(read, common);
        let slow = Fingerprint {
            thp: Known::Value("never".into()),
            ..fingerprint("c", 7)
        };
        assert_eq!(
            read.differences(&slow, "reference"),
            [
                "7 of 8 DIMMs populated (reference: 8)",
                "THP never (reference: madvise)"
            ]
        );
        assert!(read.differences(&healthy[0], "reference").is_empty());
    }

    #[test]
    fn both_rules_must_be_broken() {
        let rules = Rules::default();
        // 10 MADs below but only 1 % down: noise of a tight class.
        assert!(!is_outlier(99.0, 100.0, 0.1, rules));
        // 20 % down but within 6 MADs of a wide class.
        assert!(!is_outlier(80.0, 100.0, 5.0, rules));
        assert!(is_outlier(80.0, 100.0, 1.0, rules));
        // The margin the chart draws is the stricter rule's: 6 MADs of a wide class, 5 % of a
        // tight one.
        assert_eq!(outlier_margin(100.0, 5.0, rules), 30.0);
        assert_eq!(outlier_margin(100.0, 0.1, rules), 5.0);
    }

    #[test]
    fn a_name_claimed_by_two_machines_is_flagged_not_merged() {
        let run = |id: &str, gbs: f64| Run {
            source: id.into(),
            node: "node-07".into(),
            fingerprint: Some(Fingerprint {
                machine_id: Known::Value(id.into()),
                ..fingerprint("node-07", 8)
            }),
            cells: vec![(
                Cell {
                    op: "triad".into(),
                    set: "dram".into(),
                    threads: 1,
                },
                vec![gbs],
                0,
            )],
            latency: Vec::new(),
            span: None,
            command: String::new(),
        };
        let j = judge(vec![run("a", 10.0), run("b", 20.0)], Rules::default());
        assert_eq!(j.clashes.len(), 1);
        assert_eq!(
            j.classes[0].nodes,
            ["node-07 [machine 1]", "node-07 [machine 2]"]
        );
    }
}
