//! Statistics that judge a difference: the confidence interval of a median from order
//! statistics, the Mann–Whitney U test between two cells' rounds, and the Hodges–Lehmann
//! estimate of their ratio with its interval. Pure functions over round rates.
//!
//! Rates are compared on a log scale: the Hodges–Lehmann estimate of the shift of `ln rate` is
//! the median of all pairwise differences `ln b − ln a`, so its exponential is the median of
//! the pairwise ratios `b / a`, and the interval of the shift becomes an interval of the ratio.

use crate::base::median::median;
use statrs::distribution::{ContinuousCDF, Normal};

/// Two-sided 95 %.
const CONFIDENCE: f64 = 0.95;

/// The confidence interval of the median of `values` from order statistics: `[x(k), x(n+1−k)]`
/// with the largest `k` whose coverage `1 − 2·P(B ≤ k−1)`, B ~ Binomial(n, ½), is at least
/// 95 %. Exact for every n, distribution-free. None for fewer than 6 values (no pair of order
/// statistics covers the median with 95 % then: with 5, even the extremes cover 93.75 %).
pub(crate) fn median_ci(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    let k = order_statistic_rank(n, CONFIDENCE)?;
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some((v[k - 1], v[n - k]))
}

/// The 1-based rank `k` of the lower end of the order-statistic interval of a median of `n`
/// values with at least `confidence` coverage; None when even (x(1), x(n)) falls short.
fn order_statistic_rank(n: usize, confidence: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let alpha_half = (1.0 - confidence) / 2.0;
    // P(B ≤ j) for j = 0, 1, …, accumulated in log space (0.5^n underflows for large n).
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_pmf = ln_half_n; // P(B = 0)
    let mut cdf = 0.0;
    let mut k = None;
    for j in 0..n {
        cdf += ln_pmf.exp();
        // Interval (x(j+1), x(n−j)) misses the median with probability 2·P(B ≤ j).
        if cdf <= alpha_half {
            k = Some(j + 1);
        } else {
            break;
        }
        ln_pmf += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    k.filter(|&k| 2 * k <= n)
}

/// The result of a Mann–Whitney U test of B against A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTest {
    /// U of B: the number of pairs (a, b) with b > a, ties counting ½.
    u: f64,
    /// Two-sided p-value.
    pub(crate) p: f64,
    /// Whether `p` comes from the exact distribution (small samples without ties) or the
    /// normal approximation with tie and continuity corrections.
    exact: bool,
    /// The common-language effect size: P(b > a) + ½·P(b = a), U / (m·n). 0.5: no effect.
    effect: f64,
}

/// Samples this small and without ties get the exact distribution of U (as R's `wilcox.test`
/// does below 50 each).
const EXACT_BELOW: usize = 50;

/// Mann–Whitney U test, two-sided, of `b` against `a`. None when either is empty.
pub(crate) fn mann_whitney(a: &[f64], b: &[f64]) -> Option<RankTest> {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return None;
    }
    // Midranks of the pooled sample.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, false))
        .chain(b.iter().map(|&x| (x, true)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total = pooled.len();
    let mut rank_sum_b = 0.0;
    let mut tie_term = 0.0; // Σ (t³ − t)
    let mut i = 0;
    while i < total {
        let mut j = i + 1;
        while j < total && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        let midrank = (i + 1 + j) as f64 / 2.0;
        rank_sum_b += midrank * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let u = rank_sum_b - (n * (n + 1)) as f64 / 2.0;
    let mn = (m * n) as f64;
    let effect = u / mn;
    if tie_term == 0.0 && m < EXACT_BELOW && n < EXACT_BELOW {
        let p = exact_p(m, n, u);
        return Some(RankTest {
            u,
            p,
            exact: true,
            effect,
        });
    }
    let mean = mn / 2.0;
    let nn = total as f64;
    let var = mn / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    let p = if var <= 0.0 {
        1.0
    } else {
        let d = u - mean;
        // Continuity correction toward the mean, as R's `correct = TRUE`.
        let z = (d.abs() - 0.5).max(0.0) / var.sqrt();
        // The upper tail straight from statrs, not 1 − Φ(z): no digits lost far out.
        (2.0 * Normal::standard().sf(z)).min(1.0)
    };
    Some(RankTest {
        u,
        p,
        exact: false,
        effect,
    })
}

/// Counts of each U for samples of m and n without ties: the number of arrangements with
/// U = u, by the recursion f(m, n, u) = f(m−1, n, u−n) + f(m, n−1, u) (Mann & Whitney 1947).
fn u_counts(m: usize, n: usize) -> Vec<f64> {
    // f[i][j] as a vector over u, built up over i ≤ m and j ≤ n.
    let mut prev_row: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect(); // i = 0: only U = 0
    for i in 1..=m {
        let mut row: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        row.push(vec![1.0]); // j = 0: U = 0
        for j in 1..=n {
            let mut f = vec![0.0; i * j + 1];
            // The largest value is an A (it adds nothing to U) or a B (it beats all i A's).
            for (u, c) in prev_row[j].iter().enumerate() {
                f[u] += c;
            }
            for (u, c) in row[j - 1].iter().enumerate() {
                f[u + i] += c;
            }
            row.push(f);
        }
        prev_row = row;
    }
    prev_row.swap_remove(n)
}

/// Exact two-sided p-value of U for samples of m and n without ties (R's convention: twice the
/// smaller tail, at most 1).
fn exact_p(m: usize, n: usize, u: f64) -> f64 {
    let counts = u_counts(m, n);
    let all: f64 = counts.iter().sum();
    let u = u.round() as usize;
    let lower: f64 = counts[..=u.min(counts.len() - 1)].iter().sum();
    let upper: f64 = counts[u.min(counts.len() - 1)..].iter().sum();
    (2.0 * lower.min(upper) / all).min(1.0)
}

/// The Hodges–Lehmann estimate of B's rates over A's, as a ratio, with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioEstimate {
    /// The median of all pairwise ratios b / a.
    pub(crate) ratio: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
}

/// Hodges–Lehmann on `ln rate`: the median of the m·n pairwise ratios, and the interval
/// between the pairwise ratios of ranks `C` and `m·n + 1 − C` (Moses' distribution-free
/// interval, with `C` from the normal approximation of U:
/// `C = ⌊m·n/2 − z·√(m·n·(m+n+1)/12)⌋`, at least 1). None when either sample is empty or
/// holds a rate that is not positive.
pub(crate) fn ratio_estimate(a: &[f64], b: &[f64]) -> Option<RatioEstimate> {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 || a.iter().chain(b).any(|&x| !(x > 0.0 && x.is_finite())) {
        return None;
    }
    let mut diffs: Vec<f64> = Vec::with_capacity(m * n);
    for &x in a {
        for &y in b {
            diffs.push(y.ln() - x.ln());
        }
    }
    diffs.sort_by(|x, y| x.total_cmp(y));
    let mn = diffs.len();
    let mid = median(&diffs);
    let z = 1.959_963_984_540_054; // Φ⁻¹(0.975)
    let sd = ((m * n * (m + n + 1)) as f64 / 12.0).sqrt();
    let c = ((mn as f64 / 2.0 - z * sd).floor() as usize).max(1).min(mn);
    Some(RatioEstimate {
        ratio: mid.exp(),
        low: diffs[c - 1].exp(),
        high: diffs[mn - c].exp(),
    })
}

/// What a comparison of two cells' rounds concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// The rank test finds no significant difference at 5 %.
    Same,
    /// Too few rounds on one side to test (fewer than `MIN_ROUNDS_TO_JUDGE`).
    TooFew,
}

/// Rounds each side needs before a verdict: with 3 against 3 the smallest exact two-sided p is
/// 0.1, so nothing could ever be significant at 5 %; 4 against 4 reaches 0.029.
const MIN_ROUNDS_TO_JUDGE: usize = 4;

/// The significance level of the verdicts.
pub(crate) const ALPHA: f64 = 0.05;

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "no significant difference",
            Verdict::TooFew => "too few rounds",
        }
    }
}

/// B's rates against A's: the test, the ratio estimate and the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub(crate) test: Option<RankTest>,
    pub(crate) ratio: Option<RatioEstimate>,
    pub(crate) verdict: Verdict,
}

/// Judges B's rounds against A's.
pub fn judge(a: &[f64], b: &[f64]) -> Judgement {
    let test = mann_whitney(a, b);
    let ratio = ratio_estimate(a, b);
    let verdict = match (test, ratio) {
        _ if a.len() < MIN_ROUNDS_TO_JUDGE || b.len() < MIN_ROUNDS_TO_JUDGE => Verdict::TooFew,
        (Some(t), Some(r)) if t.p < ALPHA => {
            if r.ratio >= 1.0 {
                Verdict::Faster
            } else {
                Verdict::Slower
            }
        }
        _ => Verdict::Same,
    };
    Judgement {
        test,
        ratio,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn median_interval_ranks_match_the_binomial_table() {
        // The classic table of order-statistic intervals for the median (e.g. Conover,
        // Practical Nonparametric Statistics, 3rd ed., Table A3): for n = 20 the 95 % interval
        // is (x(6), x(15)). The other ranks and coverages were checked against
        // scipy.stats.binom.cdf (SciPy 1.17.1): k = largest j with 2·cdf(j−1; n, ½) ≤ 0.05.
        for (n, k) in [
            (6, 1),
            (8, 1),
            (9, 2),
            (11, 2),
            (20, 6),
            (21, 6),
            (50, 18),
            (100, 40),
            (1000, 469),
        ] {
            assert_eq!(order_statistic_rank(n, CONFIDENCE), Some(k), "n = {n}");
        }
        // With 5 rounds even (min, max) covers only 1 − 2/32 = 93.75 %.
        assert_eq!(order_statistic_rank(5, CONFIDENCE), None);
        assert_eq!(order_statistic_rank(0, CONFIDENCE), None);
        let v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(median_ci(&v), Some((6.0, 15.0)));
        assert_eq!(median_ci(&[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn the_normal_distribution_matches_the_published_values() {
        // Φ and erfc from the published tables (Abramowitz and Stegun, tables 26.1 and 7.1;
        // the digits past theirs from mpmath at 40 digits), within 1e-9 of each value: the
        // p-values are shown to three places.
        let n = Normal::standard();
        for (z, phi) in [
            (0.0, 0.5),
            (1.959_963_984_540_054, 0.975),
            (1.96, 0.975_002_104_851_780),
            (-1.0, 0.158_655_253_931_457),
            (-2.5, 0.006_209_665_325_776),
        ] {
            assert!((n.cdf(z) - phi).abs() < 1e-9 * phi, "Φ({z}) = {}", n.cdf(z));
            assert!(
                (n.sf(-z) - phi).abs() < 1e-9 * phi,
                "1 − Φ({}) = {}",
                -z,
                n.sf(-z)
            );
        }
        use statrs::function::erf::erfc;
        for (x, e) in [
            (1.0, 0.157_299_207_050_285),
            (0.5, 0.479_500_122_186_953),
            (2.0, 0.004_677_734_981_047),
        ] {
            assert!((erfc(x) - e).abs() < 1e-9 * e, "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn mann_whitney_matches_reference_values() {
        // Reference values from scipy.stats.mannwhitneyu(b, a, alternative='two-sided')
        // (SciPy 1.17.1), which follows R's wilcox.test: exact without ties for small
        // samples, else the normal approximation with tie and continuity corrections.
        let a = [90.1, 91.3, 89.7, 90.8, 92.0, 90.5];
        let b = [85.2, 86.9, 84.1, 88.0, 85.5, 86.3, 87.1];
        let t = mann_whitney(&a, &b).unwrap();
        assert!(t.exact);
        assert_eq!(t.u, 0.0);
        assert!(close(t.p, 0.001_165_501_165_501_165_5, 1e-12), "{t:?}");
        assert_eq!(t.effect, 0.0);

        let a2 = [10., 11., 11., 12., 13., 13., 13., 14., 15., 16.];
        let b2 = [12., 13., 14., 14., 15., 15., 16., 17., 18., 18., 19.];
        let t = mann_whitney(&a2, &b2).unwrap();
        assert!(!t.exact);
        assert_eq!(t.u, 90.5);
        assert!(close(t.p, 0.013_049_295_236_126_156, 1e-6), "{t:?}");

        let a3: Vec<f64> = (0..60).map(f64::from).collect();
        let b3: Vec<f64> = (0..55).map(|i| f64::from(i) + 7.5).collect();
        let t = mann_whitney(&a3, &b3).unwrap();
        assert!(!t.exact);
        assert_eq!(t.u, 1922.0);
        assert!(close(t.p, 0.128_483_792_277_504_23, 1e-6), "{t:?}");

        // The exact distribution sums to C(m+n, m) and is symmetric.
        let c = u_counts(4, 3);
        assert_eq!(c.iter().sum::<f64>(), 35.0);
        assert_eq!(c, c.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(mann_whitney(&[], &[1.0]), None);
    }

    #[test]
    fn hodges_lehmann_ratio_and_its_interval() {
        // By hand: the pairwise ratios of b = [2, 4] over a = [1, 2] are 2, 4, 1, 2; their
        // median is 2. With m = n = 2, C = ⌊2 − 1.96·√(20/12)⌋ < 1, so the interval is the
        // extremes [1, 4].
        let r = ratio_estimate(&[1.0, 2.0], &[2.0, 4.0]).unwrap();
        assert!(
            close(r.ratio, 2.0, 1e-12) && close(r.low, 1.0, 1e-12) && close(r.high, 4.0, 1e-12)
        );
        // m = n = 10: C = ⌊50 − 1.96·√(100·21/12)⌋ = 24, the rank the exact table of U gives
        // too (two-sided 5 % critical U for 10 and 10 is 23; Hollander & Wolfe, Nonparametric
        // Statistical Methods, §4.3: C = U + 1). B is A × 1.1 exactly: estimate 1.1.
        let a: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i)).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        let r = ratio_estimate(&a, &b).unwrap();
        assert!(close(r.ratio, 1.1, 1e-12), "{r:?}");
        assert!(r.low < 1.1 && r.high > 1.1);
        let mut d: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| y / x))
            .collect();
        d.sort_by(|x, y| x.total_cmp(y));
        assert!(close(r.low, d[23], 1e-12) && close(r.high, d[100 - 24], 1e-12));
        assert_eq!(ratio_estimate(&[0.0], &[1.0]), None);
    }

    #[test]
    fn verdicts_need_significance_and_enough_rounds() {
        let a = [90.1, 91.3, 89.7, 90.8, 92.0, 90.5];
        let b = [85.2, 86.9, 84.1, 88.0, 85.5, 86.3, 87.1];
        let j = judge(&a, &b);
        assert_eq!(j.verdict, Verdict::Slower);
        assert_eq!(judge(&b, &a).verdict, Verdict::Faster);
        // Interleaved: no significant difference.
        let c = [90.0, 92.0, 94.0, 96.0, 98.0];
        let d = [91.0, 93.0, 95.0, 97.0, 99.0];
        assert_eq!(judge(&c, &d).verdict, Verdict::Same);
        assert_eq!(judge(&a[..3], &b).verdict, Verdict::TooFew);
    }
}
