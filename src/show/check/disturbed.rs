//! Whether check's triad measured through contention, and who contended: its disturbed rounds
//! (the engine's own judgement, `judge::disturbance`) and the other processes that were busy on
//! the CPUs its threads ran on meanwhile (sampled from /proc before and after). A figure taken
//! while something else held the CPUs says little about the node, so such a check is UNSURE,
//! whatever the figure, and its line names what disturbed it.

use crate::judge::watch::suspects::SHARE_MIN;
use crate::machine::procs::{ProcSample, ProcSampler};
use crate::show::report::{CellSnapshot, printable};
use std::path::Path;

/// Disturbed rounds that make a reading disturbed: one is an event (a wake-up, a tick), two
/// of the five a pattern, as a cell is marked noisy for two.
const DISTURBED_ROUNDS_MIN: u32 = 2;
/// Other processes named in the line, the busiest first.
const NAMED: usize = 3;

/// The other processes, sampled once before check measures and once after.
pub(super) struct Watch {
    sampler: ProcSampler,
}

impl Watch {
    /// Starts watching the processes under `root` (the first sample).
    pub(super) fn start(root: &Path) -> Watch {
        let mut sampler = ProcSampler::new(root, std::process::id());
        sampler.sample();
        Watch { sampler }
    }

    /// What disturbed `cell`, if its rounds were disturbed: the rounds and their first
    /// cause, and the processes busy on its CPUs since [`Watch::start`] (check's own children
    /// have ended and been reaped by then, so they are not among them).
    pub(super) fn finish(mut self, cell: &CellSnapshot) -> Option<Disturbed> {
        let sample = self.sampler.sample();
        let f = &cell.figures;
        if f.disturbed_rounds < DISTURBED_ROUNDS_MIN {
            return None;
        }
        let cause = (cell.history.iter())
            .find_map(|r| r.cause.as_deref())
            .map(|c| printable(c).into_owned());
        Some(Disturbed {
            rounds: f.disturbed_rounds,
            of: f.rounds,
            cause,
            busy: busy_on(&sample, &cell.cpus),
        })
    }
}

/// The processes busy on `cpus` in `sample` (at least [`SHARE_MIN`] of a CPU, on one of
/// them when last seen): "sh (pid 4242, 98 % of a CPU)", the busiest [`NAMED`].
fn busy_on(sample: &ProcSample, cpus: &[i32]) -> Vec<String> {
    sample
        .processes
        .iter()
        .filter(|p| p.cpu_pct >= SHARE_MIN)
        .filter(|p| p.cpus.iter().any(|c| cpus.contains(&(*c as i32))))
        .take(NAMED)
        .map(|p| {
            format!(
                "{} (pid {}, {:.0} % of a CPU)",
                printable(&p.comm),
                p.pid,
                p.cpu_pct
            )
        })
        .collect()
}

/// A reading taken through contention.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Disturbed {
    rounds: u32,
    of: u32,
    /// The first disturbed or late round's cause, where the counters show one.
    cause: Option<String>,
    /// Other processes busy on the reading's CPUs.
    busy: Vec<String>,
}

impl Disturbed {
    /// "; measured through contention: 5 of 5 rounds disturbed (t0 switched out 7× (68 ms
    /// off CPU)); busy on its CPUs: sh (pid 4242, 98 % of a CPU); run check again when the
    /// node is quiet", for the end of the UNSURE line.
    pub(super) fn words(&self) -> String {
        let mut w = format!(
            "; measured through contention: {} of {} rounds disturbed",
            self.rounds, self.of
        );
        if let Some(cause) = &self.cause {
            w.push_str(&format!(" ({cause})"));
        }
        if self.busy.is_empty() {
            w.push_str("; no other process seen busy on its CPUs");
        } else {
            w.push_str(&format!("; busy on its CPUs: {}", self.busy.join(", ")));
        }
        w.push_str("; run check again when the node is quiet");
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::procs::Process;

    #[test]
    fn only_other_processes_busy_on_the_cells_cpus_are_named() {
        let sample = ProcSample {
            elapsed_s: 2.0,
            processes: vec![
                Process::busy(10, "hog", 99.0, &[0]),
                Process::busy(11, "stream-top", 95.0, &[0]),
                Process::busy(12, "elsewhere", 90.0, &[1]),
                Process::busy(13, "idle\x1b[2J", 3.0, &[0]),
                Process::busy(14, "unplaced", 50.0, &[]),
                Process::busy(15, "esc\x1b]0;x\x07", 20.0, &[0, 1]),
            ],
            bandwidth: None,
        };
        let busy = busy_on(&sample, &[0]);
        assert_eq!(busy.len(), 3, "{busy:?}");
        assert_eq!(busy[0], "hog (pid 10, 99 % of a CPU)");
        assert_eq!(busy[1], "stream-top (pid 11, 95 % of a CPU)");
        assert!(busy[2].contains("(pid 15, 20 % of a CPU)") && !busy[2].contains('\x1b'));
        let d = Disturbed {
            rounds: 5,
            of: 5,
            cause: Some("t0 switched out 7× (68 ms off CPU)".into()),
            busy,
        };
        assert!(d.words().starts_with(
            "; measured through contention: 5 of 5 rounds disturbed (t0 switched out 7× (68 ms \
             off CPU)); busy on its CPUs: hog (pid 10, 99 % of a CPU), stream-top "
        ));
    }
}
