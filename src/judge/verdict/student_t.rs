//! Student's t distribution for the tests across runs, through `statrs`: its upper tail (the
//! p-values) and its quantiles (the intervals, bounds and bands), with the normal distribution
//! standing in where the degrees of freedom are past what statrs' inverse handles.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Degrees of freedom past which Student's t is taken as the normal distribution: statrs'
/// inverse loses digits beyond (7e-6 at 10⁵, 1e-4 at 10⁶) and does not return past about
/// 2·10⁷, while t there is the normal to within 5e-5. The tests' degrees of freedom are those
/// of a few hundred repetitions at most.
const NORMAL_BEYOND_DF: f64 = 1e5;

/// P(T > t) for Student's t with `df` degrees of freedom; NaN for `df` not above 0.
pub(super) fn student_t_upper(t: f64, df: f64) -> f64 {
    if df > NORMAL_BEYOND_DF {
        return Normal::standard().sf(t);
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.sf(t))
}

/// The quantile of Student's t with `df` degrees of freedom at probability `p`; NaN for `df`
/// not above 0.
pub(super) fn student_t_quantile(p: f64, df: f64) -> f64 {
    if df > NORMAL_BEYOND_DF {
        return Normal::standard().inverse_cdf(p);
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.inverse_cdf(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_matches_the_table() {
        // t quantiles from the published tables (any t table; the digits past three from
        // mpmath at 40 digits), within 1e-9 of each: the intervals and bounds are shown to
        // three places.
        for (p, df, q) in [
            (0.975, 1.0, 12.706_204_736_175),
            (0.975, 2.0, 4.302_652_729_749),
            (0.975, 4.0, 2.776_445_105_198),
            (0.975, 8.0, 2.306_004_135_204),
            (0.975, 30.0, 2.042_272_456_301),
            (0.995, 10.0, 3.169_272_672_617),
            (0.995, 4.0, 4.604_094_871_350),
            (0.995, 2.5, 7.163_728_138_949),
            (0.99, 4.0, 3.746_947_387_979),
            (0.99, 1.3, 15.269_323_764_121),
            (0.995, 1000.0, 2.580_754_698_066),
        ] {
            let got = student_t_quantile(p, df);
            assert!((got - q).abs() < 1e-9 * q, "t({p}, {df}) = {got}, not {q}");
        }
        for (t, df, upper) in [
            (0.0, 5.0, 0.5),
            (2.015, 5.0, 0.050_003_086_163),
            (3.0, 4.0, 0.019_970_984_036),
            (10.0, 3.0, 0.001_064_199_529),
            (6.0, 12.0, 0.000_031_083_694_324_3),
        ] {
            let got = student_t_upper(t, df);
            assert!(
                (got - upper).abs() < 1e-9 * upper,
                "P(T > {t}; {df}) = {got}"
            );
        }
        // Past 10⁵ degrees of freedom, and at infinity, the normal (statrs' own inverse does
        // not return there): its 2.575829 against t(0.995, 10⁵) = 2.575878.
        for df in [1e5 + 1.0, 1e9, f64::INFINITY] {
            let got = student_t_quantile(0.995, df);
            assert!((got - 2.575_829_303_549).abs() < 1e-9, "df {df}: {got}");
            let upper = student_t_upper(2.5, df);
            assert!(
                (upper - 0.006_209_665_326).abs() < 1e-11,
                "df {df}: {upper}"
            );
        }
        assert!(student_t_quantile(0.99, 0.0).is_nan());
    }
}
