//! Verdicts across runs. The rounds of one run share that run's state (which physical pages the
//! arrays got, the loop the trial chose, the neighbours, the frequency), so they answer "did
//! these two runs differ?", and on these machines two runs of the same command differ by far
//! more than the rounds inside one run scatter. The question a person asks of `compare` is
//! "did the change make it slower?", and its unit of evidence is the repetition: a fresh
//! process or a fresh set of arrays, summarised by its median.
//!
//! - With at least [`MIN_REPETITIONS`] repetitions a side, Welch's t-test on the logarithms of
//!   the repetition medians, two-sided at [`ALPHA`] = 1 % per cell: "faster" or "slower" only
//!   when p < 1 %, and the interval shown is the test's own (99 %). Its false-positive rate is
//!   what it says when the repetitions' run effects are independent, which the rank test on
//!   pooled rounds is not; it is not when the machine drifts between the two sides (A's
//!   repetitions all before B's while the load changes): interleave the sides' repetitions in
//!   time (A B A B …, each a snapshot, `compare A1 A2 … -- B1 B2 …`) for that.
//! - With fewer, no test: the ratio of the medians is set against the machine's run-to-run
//!   spread, where one is known ([`Spread`]: the 95 % band of two single runs), and called
//!   different only outside it.
//! - When a side's repetitions all come from one process (one snapshot of `--repeat N`), they
//!   share that process's pages, neighbours and period, and their scatter is only the scatter
//!   inside a process: on these VMs 0.1 % against up to 9 % between processes a second apart.
//!   Welch's test on them alone cries wolf. The variance between processes is not in the data,
//!   so it comes from `stream-top calibrate` ([`ProcessSpread`]) and is added to each such
//!   side's mean (the hierarchical model: var(mean) = σ²_process + s²_within / n); without it
//!   no word is given ([`RunVerdict::OneProcess`]).
//!
//! The pieces: [`spread`] (the run-to-run spreads and where they come from), [`student_t`]
//! (Student's t through statrs), [`welch`] (Welch's test, plain and hierarchical), [`run`] (a
//! cell's verdict and the gate), and a simulation of their error rates in the tests.

mod run;
mod spread;
mod student_t;
mod welch;

#[cfg(test)]
mod rates;

pub(crate) use run::{Direction, GateOutcome, RunVerdict, judge_runs, judge_sides, tally};
pub(crate) use spread::{BETWEEN_UNKNOWN, pooled_log_sd, spread_from_repetitions};
pub use spread::{Between, MIN_CALIBRATION_SPAN_S, Narrow, ProcessSpread, Spread, SpreadSource};
pub(crate) use welch::{ALPHA, MIN_REPETITIONS, SideRuns, detectable_change};
