//! A cell's per-thread rates gathered by where the threads ran: per NUMA node and per core
//! type (P-cores, E-cores). On a machine with several nodes or core types a cell's one figure
//! hides whether one node's memory or the E-cores held it back; these figures say it. On a
//! machine with one node and one core type there is nothing to gather and nothing is shown.

use crate::base::median::median;
use crate::judge::stats::RoundSummary;
use crate::machine::topology::{CoreKind, Topology};
use std::collections::{BTreeMap, VecDeque};

/// What a group of threads shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    Node(usize),
    Performance,
    Efficiency,
}

impl Group {
    /// `node 0`, `P-cores`, `E-cores`.
    pub fn name(self) -> String {
        match self {
            Group::Node(n) => format!("node {n}"),
            Group::Performance => "P-cores".into(),
            Group::Efficiency => "E-cores".into(),
        }
    }
}

/// A cell's threads in one group, over its window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupFigures {
    pub(crate) group: Group,
    /// The most threads the group had in one round.
    pub(crate) threads: usize,
    /// Median over rounds of the sum of the group's threads' own rates, GB/s.
    pub(crate) gbs: f64,
    /// Median over the group's thread-rounds of one thread's rate, GB/s.
    pub(crate) per_thread_gbs: f64,
}

/// Which node and which core type each CPU belongs to, kept only for what the machine has more
/// than one of.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuGroups {
    node: BTreeMap<usize, Group>,
    kind: BTreeMap<usize, Group>,
}

impl CpuGroups {
    /// The groups of a machine: its nodes when it has more than one, its core types when it
    /// has both P- and E-cores.
    pub fn of(t: &Topology) -> CpuGroups {
        let node = if t.nodes.iter().filter(|n| !n.cpus.is_empty()).count() > 1 {
            t.cpus.iter().map(|c| (c.id, Group::Node(c.node))).collect()
        } else {
            BTreeMap::new()
        };
        let kind_of = |k: CoreKind| match k {
            CoreKind::Performance => Some(Group::Performance),
            CoreKind::Efficiency => Some(Group::Efficiency),
            CoreKind::Uniform => None,
        };
        let kind: BTreeMap<usize, Group> = t
            .cpus
            .iter()
            .filter_map(|c| kind_of(c.kind).map(|g| (c.id, g)))
            .collect();
        let hybrid = kind.values().any(|g| *g == Group::Performance)
            && kind.values().any(|g| *g == Group::Efficiency);
        CpuGroups {
            node,
            kind: if hybrid { kind } else { BTreeMap::new() },
        }
    }

    /// Nothing to gather: one node and one core type.
    pub fn is_empty(&self) -> bool {
        self.node.is_empty() && self.kind.is_empty()
    }

    /// The groups of a thread that started its round on `start` and ended it on `end`: in a
    /// grouping only when both CPUs are known and in the same group (a thread that moved
    /// between nodes mid-round belongs to neither).
    fn of_thread(&self, start: i32, end: i32) -> [Option<Group>; 2] {
        let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
            return [None, None];
        };
        let same = |m: &BTreeMap<usize, Group>| match (m.get(&start), m.get(&end)) {
            (Some(a), Some(b)) if a == b => Some(*a),
            _ => None,
        };
        [same(&self.node), same(&self.kind)]
    }

    /// A cell's figures per group over its window: nodes first, then P- and E-cores, each
    /// grouping only where the cell's threads ran in more than one of its groups (a figure
    /// for "node 0" alone would repeat the cell's own); empty on a machine with one node and
    /// one core type, or before a round.
    pub fn figures(&self, window: &VecDeque<RoundSummary>) -> Vec<GroupFigures> {
        if self.is_empty() {
            return Vec::new();
        }
        // Per group: the sum and count of each round, and every thread-round's rate.
        let mut sums: BTreeMap<Group, Vec<(f64, usize)>> = BTreeMap::new();
        let mut rates: BTreeMap<Group, Vec<f64>> = BTreeMap::new();
        for round in window {
            let mut this: BTreeMap<Group, (f64, usize)> = BTreeMap::new();
            for ((gbs, _), [start, end]) in round.threads.iter().zip(&round.cpus) {
                for g in self.of_thread(*start, *end).into_iter().flatten() {
                    let e = this.entry(g).or_default();
                    e.0 += gbs;
                    e.1 += 1;
                    rates.entry(g).or_default().push(*gbs);
                }
            }
            for (g, s) in this {
                sums.entry(g).or_default().push(s);
            }
        }
        let nodes = sums.keys().filter(|g| matches!(g, Group::Node(_))).count();
        let kinds = sums.len() - nodes;
        sums.into_iter()
            .filter(|(g, _)| match g {
                Group::Node(_) => nodes > 1,
                _ => kinds > 1,
            })
            .map(|(group, per_round)| {
                let totals: Vec<f64> = per_round.iter().map(|s| s.0).collect();
                GroupFigures {
                    group,
                    threads: per_round.iter().map(|s| s.1).max().unwrap_or(0),
                    gbs: median(&totals),
                    per_thread_gbs: median(&rates[&group]),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::counters::Counts;
    use crate::machine::topology::{Cpu, NumaNode};

    /// 4 CPUs: 0 and 1 P-cores on node 0, 2 and 3 E-cores on node 1.
    fn machine(nodes: bool, hybrid: bool) -> Topology {
        let cpu = |id: usize| Cpu {
            id,
            package: 0,
            core: id,
            node: if nodes { id / 2 } else { 0 },
            smt_siblings: vec![id],
            kind: match (hybrid, id < 2) {
                (false, _) => CoreKind::Uniform,
                (true, true) => CoreKind::Performance,
                (true, false) => CoreKind::Efficiency,
            },
        };
        let node = |id: usize, cpus: Vec<usize>| NumaNode { id, cpus };
        Topology {
            model: "test".into(),
            cpus: (0..4).map(cpu).collect(),
            caches: Vec::new(),
            nodes: if nodes {
                vec![node(0, vec![0, 1]), node(1, vec![2, 3])]
            } else {
                vec![node(0, vec![0, 1, 2, 3])]
            },
            llc_hidden: false,
            cpu: None,
        }
    }

    /// A round whose threads ran at `rates` on `cpus` (start, end).
    fn round(rates: &[f64], cpus: &[[i32; 2]]) -> RoundSummary {
        RoundSummary {
            span_ns: 1,
            bytes: 1,
            gbs: rates.iter().sum(),
            fastest_thread_gbs: 0.0,
            slowest_thread_gbs: 0.0,
            late: false,
            disturbed: false,
            cause: None,
            threads: rates.iter().map(|&r| (r, Counts::default())).collect(),
            thread_ns: vec![1; rates.len()],
            cpus: cpus.to_vec(),
            steal: None,
            throttled: None,
        }
    }

    #[test]
    fn one_node_and_one_core_type_gather_nothing() {
        let g = CpuGroups::of(&machine(false, false));
        assert!(g.is_empty());
        let w: VecDeque<_> = [round(&[1.0], &[[0, 0]])].into();
        assert!(g.figures(&w).is_empty());
    }

    #[test]
    fn rates_sum_per_node_and_per_core_type_with_medians_over_rounds() {
        let g = CpuGroups::of(&machine(true, true));
        let cpus = [[0, 0], [1, 1], [2, 2], [3, 3]];
        let w: VecDeque<_> = [
            round(&[10.0, 10.0, 4.0, 4.0], &cpus),
            round(&[12.0, 10.0, 5.0, 4.0], &cpus),
            round(&[11.0, 11.0, 3.0, 3.0], &cpus),
        ]
        .into();
        let f = g.figures(&w);
        let names: Vec<String> = f.iter().map(|x| x.group.name()).collect();
        assert_eq!(names, ["node 0", "node 1", "P-cores", "E-cores"]);
        // Node 0 summed 20, 22, 22: median 22; its threads ran at 10, 10, 12, 10, 11, 11.
        assert_eq!(
            (f[0].threads, f[0].gbs, f[0].per_thread_gbs),
            (2, 22.0, 10.5)
        );
        assert_eq!((f[1].threads, f[1].gbs, f[1].per_thread_gbs), (2, 8.0, 4.0));
        assert_eq!(f[2].gbs, f[0].gbs);
        assert_eq!(f[3].group, Group::Efficiency);
    }

    #[test]
    fn a_thread_that_moved_between_groups_or_is_nowhere_is_left_out() {
        let g = CpuGroups::of(&machine(true, false));
        // Thread 1 moved from node 0 to node 1; thread 2's CPU is unknown.
        let w: VecDeque<_> = [round(
            &[10.0, 9.0, 8.0, 7.0],
            &[[0, 1], [1, 2], [-1, -1], [3, 3]],
        )]
        .into();
        let f = g.figures(&w);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].group, f[0].threads, f[0].gbs),
            (Group::Node(0), 1, 10.0)
        );
        assert_eq!(
            (f[1].group, f[1].threads, f[1].gbs),
            (Group::Node(1), 1, 7.0)
        );
    }

    #[test]
    fn a_grouping_whose_threads_all_ran_in_one_group_says_nothing() {
        let g = CpuGroups::of(&machine(true, true));
        // Both threads on node 0's P-cores: neither nodes nor core types differ.
        let w: VecDeque<_> = [round(&[10.0, 9.0], &[[0, 0], [1, 1]])].into();
        assert!(g.figures(&w).is_empty());
        // One on a P-core of node 0, one on an E-core of node 1: both groupings.
        let w: VecDeque<_> = [round(&[10.0, 4.0], &[[0, 0], [2, 2]])].into();
        assert_eq!(g.figures(&w).len(), 4);
    }
}
