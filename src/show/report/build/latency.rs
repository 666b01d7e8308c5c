//! The latency cells of a snapshot, from the chases the engine measured: each job's
//! repetitions (`--repeat`, one for a plain run) folded into one cell.

use crate::base::median::median;
use crate::engine::latency::{ChaseJob, CyclesSource, LatencyRow};
use crate::judge::stats::cv;
use crate::show::report::model::{CycleSource, LatencyCell, Snapshot};

impl Snapshot {
    /// The snapshot's latency cells: `measured[i]` holds job `jobs[i]`'s repetitions (a job
    /// with none is left out: a run a signal cut short).
    pub(crate) fn set_latency(&mut self, jobs: &[ChaseJob], measured: &[Vec<LatencyRow>]) {
        self.latency = jobs
            .iter()
            .zip(measured)
            .filter_map(|(job, reps)| latency_cell(job, reps))
            .collect();
    }
}

/// One job's cell: the median of its repetitions' medians (ns, cycles, 4 KiB pages), the
/// fastest and slowest timed run and the cv over all of their runs; None without a repetition.
pub(crate) fn latency_cell(job: &ChaseJob, reps: &[LatencyRow]) -> Option<LatencyCell> {
    let first = reps.first()?;
    let of = |f: fn(&LatencyRow) -> Option<f64>| {
        let v: Vec<f64> = reps.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| median(&v))
    };
    let runs: Vec<f64> = reps
        .iter()
        .flat_map(|r| r.runs_ns.iter().copied())
        .collect();
    let median_ns = median(&reps.iter().map(|r| r.ns).collect::<Vec<_>>());
    let small_pages_ns = of(|r| r.ns_small_pages);
    Some(LatencyCell {
        label: first.label.clone(),
        set_name: job.set_name.clone(),
        level: first.level.map(Into::into),
        bytes: first.bytes,
        cpu: first.cpu,
        cpu_node: first.cpu_node,
        mem_node: first.mem_node,
        median_ns,
        min_ns: runs.iter().copied().fold(f64::INFINITY, f64::min),
        max_ns: runs.iter().copied().fold(0.0, f64::max),
        cv: cv(&runs),
        cycles: median(&reps.iter().map(|r| r.cycles).collect::<Vec<_>>()),
        // Every repetition counts the same way: the thread's PMU is there or it is not.
        cycles_from: match first.cycles_source {
            CyclesSource::Counted => CycleSource::Counted,
            CyclesSource::ClockEstimate { .. } => CycleSource::ClockEstimate,
        },
        huge_share: of(|r| r.huge_share),
        small_pages_ns,
        tlb_ns: of(|r| r.tlb_ns),
        runs: first.runs_ns.len(),
        hops_per_run: first.hops_per_run,
        repetitions: reps.iter().map(|r| r.ns).collect(),
    })
}
