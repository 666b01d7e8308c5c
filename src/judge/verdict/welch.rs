//! Welch's t-test on the logarithms of two sides' repetition medians: plain, for sides of
//! separate processes, and hierarchical, the calibrated spread between processes added to a
//! side whose repetitions share one process; its one-sided bounds for the gate and the change
//! it can detect.

use super::spread::ProcessSpread;
use super::student_t::{student_t_quantile, student_t_upper};

/// Repetitions a side needs before a test: with 2 a side, Welch's test has about one degree of
/// freedom and its interval spans orders of magnitude.
pub(crate) const MIN_REPETITIONS: usize = 3;

/// The significance level of the test across runs, two-sided, per cell. Not 5 %: a comparison
/// judges every cell of the grid, and at 5 % a pair of identical runs with four cells gets a
/// "faster" or "slower" somewhere one time in five; and a benchmark of 20 pairs × 4 cells can
/// only show a rate of 5 % with the upper end of its 95 % interval under 10 % when the true
/// rate is well below 5 % (3 of 80 already reads 0.8–10.6 %). With five repetitions a side a
/// 1 % test still finds a difference of 3.5 times the run-to-run scatter nine times in ten
/// (and 3 times, eight in ten).
pub(crate) const ALPHA: f64 = 0.01;

/// One side's evidence for one cell: its repetition medians, and whether they all come from
/// one process (one snapshot with two or more repetitions).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SideRuns<'a> {
    pub(crate) medians: &'a [f64],
    pub(crate) one_process: bool,
}

#[cfg(test)]
impl<'a> SideRuns<'a> {
    /// A side whose repetitions all come from one process.
    pub(super) fn one_process(medians: &'a [f64]) -> Self {
        SideRuns {
            medians,
            one_process: true,
        }
    }
}

impl WelchTest {
    /// B/A's one-sided bounds at the gate's level: the lowest and highest ratios a one-sided
    /// test at [`ALPHA`] would not reject.
    pub(crate) fn one_sided(&self) -> (f64, f64) {
        if self.se <= 0.0 || !self.se.is_finite() {
            return (self.ratio, self.ratio);
        }
        let half = student_t_quantile(1.0 - ALPHA, self.df) * self.se;
        let log = self.ratio.ln();
        ((log - half).exp(), (log + half).exp())
    }

    /// The change the test can tell at its spread and repetitions: a ratio this far from 1
    /// (as a fraction: 0.08 is ±8 %) clears the one-sided bound.
    pub(crate) fn detectable(&self) -> f64 {
        let (low, _) = WelchTest {
            ratio: 1.0,
            ..*self
        }
        .one_sided();
        1.0 / low - 1.0
    }

    /// How many repetitions a side would decide the gate at the measured spread, the estimate
    /// held where it is: None when it sits on the limit (no count decides it) or past 1000.
    pub(crate) fn repetitions_to_decide(&self, percent: f64) -> Option<usize> {
        let distance = (self.ratio.ln() - (1.0 - percent / 100.0).ln()).abs();
        // The scatter of one repetition: se = sd·√(2/n) for n a side.
        let sd = self.se / (2.0 / self.n.max(1) as f64).sqrt();
        if distance <= 0.0 || sd <= 0.0 {
            return None;
        }
        (MIN_REPETITIONS..=1000).find(|&n| {
            let df = 2.0 * (n as f64 - 1.0);
            student_t_quantile(1.0 - ALPHA, df) * sd * (2.0 / n as f64).sqrt() < distance
        })
    }
}

/// The change a one-sided test at [`ALPHA`] tells with `n` separate processes a side whose
/// log medians scatter with standard deviation `sd`: a B/A this far from 1 (0.05 is ±5 %)
/// clears the bound when the estimate lands on it.
pub(crate) fn detectable_change(sd: f64, n: usize) -> f64 {
    let n = n.max(2) as f64;
    (student_t_quantile(1.0 - ALPHA, 2.0 * (n - 1.0)) * sd * (2.0 / n).sqrt()).exp() - 1.0
}

/// Welch's test on the log means with the hierarchical model: a side whose repetitions share
/// one process (or a single run) has var(mean) = σ²_process + s²_within / n, the calibrated
/// σ²_process added because its data cannot show it; a side of several processes has
/// s² / n, which already holds the spread between them. Degrees of freedom by
/// Welch–Satterthwaite, the calibrated term counting with the calibration's own. None when
/// neither side has any variance to judge by.
pub(crate) fn hierarchical(a: SideRuns, b: SideRuns, between: &ProcessSpread) -> Option<WelchTest> {
    // Each side: its log mean, and its variance terms as (variance of the mean, df).
    let side = |s: &SideRuns| {
        let logs: Vec<f64> = s.medians.iter().map(|x| x.ln()).collect();
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let within = if logs.len() >= 2 {
            let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            Some((var / n, n - 1.0))
        } else {
            None
        };
        let process = s.one_process || logs.len() < 2;
        (mean, within, process)
    };
    let ((ma, wa, pa), (mb, wb, pb)) = (side(&a), side(&b));
    let process_var = between.sd * between.sd * (usize::from(pa) + usize::from(pb)) as f64;
    let terms: Vec<(f64, f64)> = [wa, wb]
        .into_iter()
        .flatten()
        .chain((process_var > 0.0).then_some((process_var, between.df)))
        .filter(|(v, _)| *v > 0.0)
        .collect();
    let se2: f64 = terms.iter().map(|(v, _)| v).sum();
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let df = se2 * se2 / terms.iter().map(|(v, d)| v * v / d).sum::<f64>();
    let diff = mb - ma;
    Some(welch_test(
        diff,
        se2,
        df,
        a.medians.len().min(b.medians.len()),
    ))
}

/// Welch's two-sample t-test on the logarithms of A's and B's repetition medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WelchTest {
    /// exp(mean ln b − mean ln a): B over A, as the ratio of geometric means.
    pub(crate) ratio: f64,
    /// Its interval at the test's level (99 %): the ratios the test would not reject.
    pub(crate) low: f64,
    pub(crate) high: f64,
    /// Two-sided p.
    pub(crate) p: f64,
    /// Welch–Satterthwaite degrees of freedom.
    df: f64,
    /// The standard error of the log ratio (0 when neither side scatters).
    se: f64,
    /// Repetitions on the smaller side.
    pub(crate) n: usize,
}

/// Welch's test on `ln a` against `ln b`; None with fewer than two values a side. Two sides
/// without any scatter are the same when equal and differ surely otherwise.
pub(crate) fn welch_log(a: &[f64], b: &[f64]) -> Option<WelchTest> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let stats = |v: &[f64]| {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var / n, n)
    };
    let ((ma, qa, na), (mb, qb, nb)) = (stats(a), stats(b));
    let diff = mb - ma;
    let se2 = qa + qb;
    let n = a.len().min(b.len());
    if se2 <= 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let r = diff.exp();
        return Some(WelchTest {
            ratio: r,
            low: r,
            high: r,
            p,
            df: f64::INFINITY,
            se: 0.0,
            n,
        });
    }
    let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    Some(welch_test(diff, se2, df, n))
}

/// The test of a difference `diff` of log means with squared standard error `se2` on `df`
/// degrees of freedom: B/A, its two-sided interval at `ALPHA`, and the p-value.
fn welch_test(diff: f64, se2: f64, df: f64, n: usize) -> WelchTest {
    let t = diff / se2.sqrt();
    let p = 2.0 * student_t_upper(t.abs(), df);
    let half = student_t_quantile(1.0 - ALPHA / 2.0, df) * se2.sqrt();
    WelchTest {
        ratio: diff.exp(),
        low: (diff - half).exp(),
        high: (diff + half).exp(),
        p: p.min(1.0),
        df,
        se: se2.sqrt(),
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::verdict::run::{RunVerdict, judge_runs};
    use crate::judge::verdict::spread::SpreadSource;

    #[test]
    fn the_hierarchical_variance_adds_the_process_spread_to_each_one_process_side() {
        // Two one-process sides whose repetitions do not scatter at all: the variance of the
        // difference is 2 σ²_process, its degrees of freedom the calibration's.
        let p = ProcessSpread {
            sd: 0.05,
            df: 16.0,
            source: SpreadSource::Repetitions { count: 5 },
        };
        let t = hierarchical(
            SideRuns::one_process(&[15.0, 15.0]),
            SideRuns::one_process(&[14.0, 14.0]),
            &p,
        )
        .unwrap();
        let z = (14.0_f64 / 15.0).ln() / (2.0 * 0.05_f64 * 0.05).sqrt();
        assert!((t.df - 16.0).abs() < 1e-9, "{}", t.df);
        assert!((t.p - 2.0 * student_t_upper(z.abs(), 16.0)).abs() < 1e-12);
        // A side of separate processes brings its own scatter, without the calibrated term.
        let sep = SideRuns {
            medians: &[15.0, 15.0],
            one_process: false,
        };
        let t = hierarchical(sep, SideRuns::one_process(&[14.0, 14.0]), &p).unwrap();
        let z = (14.0_f64 / 15.0).ln() / 0.05;
        assert!((t.p - 2.0 * student_t_upper(z.abs(), 16.0)).abs() < 1e-12);
    }

    #[test]
    fn sides_without_scatter() {
        let t = welch_log(&[2.0, 2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(t.p, 1.0);
        let t = welch_log(&[2.0, 2.0, 2.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!(t.p, 0.0);
        assert!(judge_runs(&[], &[1.0], None) == RunVerdict::Nothing);
    }
}
