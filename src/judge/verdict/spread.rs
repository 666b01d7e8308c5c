//! How far apart single runs of the same command land, and where that figure comes from: the
//! 95 % band of two runs' ratio from repetitions ([`Spread`]), the scatter between processes
//! that `stream-top calibrate` measures ([`ProcessSpread`]), and why a stored spread may be too
//! narrow to judge by ([`Narrow`]).

use super::student_t::student_t_quantile;

/// The level of the run-to-run band that single runs are judged against: two runs of the same
/// command land inside it 95 % of the time.
const BAND: f64 = 0.05;

/// How far apart two single runs of the same command land on this machine: the half-width of
/// the 95 % band of their ratio (0.08: one run's median within ×0.92…×1.08 of another's), and
/// where that figure comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub(crate) half_width: f64,
    pub(crate) source: SpreadSource,
    /// Why the stored spread is too narrow to give words by (measured inside one process, or
    /// by processes back to back); None when it is not.
    pub(crate) narrow: Option<Narrow>,
}

/// Why a stored spread is known to be too narrow for runs a user compares: the verdict then
/// gives no word, and says why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Narrow {
    /// Repetitions inside one process (a calibration file from before calibrate ran separate
    /// processes): on these VMs 0.1 % apart, against up to 9 % between processes.
    WithinOneProcess,
    /// Separate processes, but all within `span_s` seconds (None: a file from before calibrate
    /// spread them out): on these VMs runs a second apart agree within 0.2 % while runs minutes
    /// apart differ by up to 6 %.
    BackToBack { span_s: Option<f64> },
}

/// The least time a calibration's processes must span for its spread to hold between runs a
/// user compares (a before and an after are minutes apart).
pub const MIN_CALIBRATION_SPAN_S: f64 = 60.0;

impl Narrow {
    /// What the comparison says of it.
    pub(crate) fn words(self) -> String {
        match self {
            Narrow::WithinOneProcess => WITHIN_ONE_PROCESS.to_string(),
            Narrow::BackToBack { span_s } => format!(
                "stored spread measured by processes back to back ({}): runs minutes apart \
                 differ more; run `stream-top calibrate` again (it spreads them over 5 min)",
                match span_s {
                    Some(s) => format!("within {s:.0} s"),
                    None => "a file from before --span".to_string(),
                }
            ),
        }
    }
}

/// The scatter between separate processes of the same command, as `stream-top calibrate`
/// measures it: the standard deviation of their log medians, on `df` degrees of freedom.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSpread {
    pub(crate) sd: f64,
    pub(crate) df: f64,
    pub(crate) source: SpreadSource,
}

/// What is known of the scatter between processes, for sides whose repetitions come from one
/// process each.
#[derive(Debug, Clone, PartialEq)]
pub enum Between {
    /// Measured by `stream-top calibrate` across processes.
    Calibrated(ProcessSpread),
    /// A calibration file exists, but its spread is too narrow (inside one process, or
    /// processes back to back).
    TooNarrow(Narrow),
    /// No calibration.
    Unknown,
}

/// The words for a verdict resting on a spread measured inside one process.
pub(crate) const WITHIN_ONE_PROCESS: &str =
    "stored spread measured within one process: may be too narrow; run calibrate again";

/// The words for repetitions from one process a side without a spread between processes.
pub(crate) const BETWEEN_UNKNOWN: &str = "repetitions from one process per side: the run-to-run \
     spread between processes is unknown; run `stream-top calibrate` or interleave runs: \
     compare A1 A2 … -- B1 B2 …";

/// Where a spread comes from, for the sentence that quotes it.
#[derive(Debug, Clone, PartialEq)]
pub enum SpreadSource {
    /// The repetitions inside the compared snapshots (`--repeat`, or several files a side).
    Repetitions { count: usize },
    /// `stream-top calibrate`'s file for this machine: its path and when it was measured.
    Calibration { file: String, measured: String },
}

impl SpreadSource {
    /// "measured from 4 repetitions in the snapshots", "measured by stream-top calibrate on
    /// 2026-12-01 (FILE)".
    pub(crate) fn phrase(&self) -> String {
        match self {
            SpreadSource::Repetitions { count } => {
                format!("measured from {count} repetitions in the snapshots")
            }
            SpreadSource::Calibration { file, measured } => {
                format!("measured by `stream-top calibrate` at {measured}, {file}")
            }
        }
    }
}

/// The spread of single runs from repetitions: `reps` holds lists of repetition medians of one
/// configuration each (a cell on one side). The pooled standard deviation `s` of the log
/// medians (each list about its own mean), with its degrees of freedom, gives the 95 % band of
/// the ratio of two new single runs ([`band_of_two_runs`]). None with fewer than two
/// repetitions in every list.
pub(crate) fn spread_from_repetitions(reps: &[Vec<f64>]) -> Option<Spread> {
    let (sd, df, count) = pooled_log_sd(reps)?;
    Some(Spread {
        half_width: band_of_two_runs(sd, df as f64),
        source: SpreadSource::Repetitions { count },
        narrow: None,
    })
}

/// The pooled standard deviation of the log medians in `reps` (each list about its own mean),
/// its degrees of freedom, and the longest list's length; None with fewer than two values in
/// every list.
pub(crate) fn pooled_log_sd(reps: &[Vec<f64>]) -> Option<(f64, usize, usize)> {
    let (mut squares, mut df, mut count) = (0.0, 0usize, 0usize);
    for cell in reps {
        let logs: Vec<f64> = cell
            .iter()
            .filter(|x| **x > 0.0 && x.is_finite())
            .map(|x| x.ln())
            .collect();
        if logs.len() < 2 {
            continue;
        }
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        squares += logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        df += logs.len() - 1;
        count = count.max(logs.len());
    }
    (df > 0).then(|| ((squares / df as f64).sqrt(), df, count))
}

/// The half-width of the 95 % band of the ratio of two new single runs whose log medians
/// scatter with a standard deviation estimated as `sd` on `df` degrees of freedom: their log
/// ratio over `sd·√2` follows Student's t with `df`, so the band is `exp(t·√2·sd) − 1` (with
/// five repetitions, t = 2.78 rather than the normal 1.96: a spread learned from few runs is
/// itself uncertain).
fn band_of_two_runs(sd: f64, df: f64) -> f64 {
    let t = student_t_quantile(1.0 - BAND / 2.0, df);
    (t * std::f64::consts::SQRT_2 * sd).exp() - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_of_repetitions_pools_the_cells() {
        // Two cells, each with log medians ±0.05 about its own mean: s = 0.05·√(4/2)… computed.
        let e = |x: f64| x.exp();
        let reps = [
            vec![e(1.0 - 0.05), e(1.0 + 0.05)],
            vec![e(3.0 - 0.05), e(3.0 + 0.05)],
            vec![7.0], // one repetition: no scatter to learn from
        ];
        let s = spread_from_repetitions(&reps).unwrap();
        // Each cell: squares 2·0.05², df 1; pooled sd = 0.05·√2 on 2 degrees of freedom.
        let sd = 0.05 * std::f64::consts::SQRT_2;
        assert!((s.half_width - band_of_two_runs(sd, 2.0)).abs() < 1e-12);
        // t at 2 degrees of freedom is 4.30: a wide band from so little.
        assert!((band_of_two_runs(sd, 2.0) - (4.303 * 0.1_f64).exp() + 1.0).abs() < 1e-3);
        assert_eq!(s.source, SpreadSource::Repetitions { count: 2 });
        assert_eq!(spread_from_repetitions(&[vec![1.0]]), None);
    }
}
