//! Which loop of the kernel table and which page layout each working set runs with: the
//! candidates a run may use (`--kernel`, `--huge-pages`), and the decision from interleaved
//! trial rounds. The rounds themselves run in `trial.rs`; this module is pure.
//!
//! The decision keeps the default candidate (the table's default loop for where the arrays
//! live, on huge pages) unless another is faster by a clear margin: its median rate, paired
//! round by round with the default's, must beat it by more than [`MIN_MARGIN`] and by more
//! than the standard error the trial's own scatter gives that median, times a critical value
//! that grows with fewer repetitions and with more candidates (each one a chance for a lucky
//! lead), its best round
//! must beat the default's best by [`MIN_MARGIN`], and it must be the faster in three quarters
//! of the pairs. So a tie, or a lead no larger than the noise, keeps the default, and the
//! figures never change loops on a coin toss.

use super::events::{By, Choice, Pick};
use super::kernel::{Kernel, Op, Residence, Variant};
use super::plan::{HugePages, Loops, Plan};
use crate::base::median::median;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The smallest lead (as a fraction) that makes the trial leave the default candidate. Set
/// from the repeatability measured on the development machine (AMD EPYC, Zen 3) in a quiet
/// spell: repeated measurements of one loop agreed within about 1 % (docs/results/kernels.md,
/// "Choosing the loop: results"); a lead under that is not evidence. On a busy machine the trial's own
/// scatter widens the margin.
pub(crate) const MIN_MARGIN: f64 = 0.01;

/// A candidate leaves the default only with at least this many paired repetitions at every
/// thread count: fewer give no scatter to judge a lead by (a trial cut short by its time limit
/// on a busy machine keeps the default).
pub(crate) const MIN_PAIRS: usize = 3;

/// And it must be the faster of the pair in at least this share of them at every thread count:
/// on a busy machine a disturbance slows whichever loop it hits, so a default slowed in a few
/// repetitions gives a slower loop a median lead now and then, but not a lead in nearly every
/// repetition.
const MIN_WIN_SHARE: f64 = 0.75;

/// The candidates for `op` over a working set whose arrays live at `residence`, the default
/// first, and how the loop and the layout are settled: only `op`'s loops. `kernel` must be one
/// this CPU runs. A loop named on the command line (a triad loop) is, for another op, that
/// op's loop of the same name, or where the op has none its default loop of the same kernel.
/// Where the OS has no transparent huge pages (`thp` false: macOS) there is no layout to
/// choose: `auto` is no huge pages, the only kind there is.
pub(crate) fn candidates(
    op: Op,
    kernel: Kernel,
    loops: Loops,
    huge_pages: HugePages,
    residence: Residence,
    thp: bool,
) -> (Vec<Pick>, By, By) {
    let default = kernel.default_loop(op, residence);
    let (variants, kernel_by): (Vec<&'static Variant>, By) = match loops {
        Loops::Auto => {
            let mut v = vec![default];
            v.extend(Variant::all().filter(|v| {
                v.op == op && v.stores == kernel.stores && (v.available)() && v.name != default.name
            }));
            let by = if v.len() > 1 { By::Trial } else { By::Only };
            (v, by)
        }
        Loops::Default => (vec![default], By::Pinned),
        Loops::Named(v) if v.op == op => (vec![v], By::Pinned),
        Loops::Named(v) => {
            let kernel = v.kernel();
            let same = kernel.loops(op).find(|w| w.name == v.name);
            (
                vec![same.unwrap_or(kernel.default_loop(op, residence))],
                By::Pinned,
            )
        }
    };
    let (layouts, layout_by): (&[bool], By) = match (huge_pages, residence) {
        (HugePages::On, _) => (&[true], By::Pinned),
        (HugePages::Off, _) => (&[false], By::Pinned),
        (HugePages::Auto, _) if !thp => (&[false], By::Only),
        (HugePages::Auto, Residence::Cache) => (&[true, false], By::Trial),
        (HugePages::Auto, Residence::Memory) => (&[true], By::Rule),
    };
    let picks = variants
        .iter()
        .flat_map(|&variant| {
            layouts.iter().map(move |&huge_pages| Pick {
                variant,
                huge_pages,
            })
        })
        .collect();
    (picks, kernel_by, layout_by)
}

/// What an earlier run settled for `op` on set `set` (`--choices-from`), when the plan holds
/// it: that loop and layout, with no trial.
pub(crate) fn reused(plan: &Plan, op: Op, set: usize) -> Option<Choice> {
    let ws = plan.grid.sets.get(set)?;
    let (variant, huge_pages) = plan.reused.as_ref()?.get(op, ws.size)?;
    Some(Choice {
        op,
        set,
        kept: Pick {
            variant,
            huge_pages,
        },
        kernel_by: By::Reused,
        layout_by: By::Reused,
        runner_up: None,
        trial: None,
    })
}

/// The order of round `rep` over `n` candidates: rotated by one each repetition, so no
/// candidate always runs first (cold) or right after the same neighbour.
pub(crate) fn round_order(n: usize, rep: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |j| (j + rep) % n.max(1))
}

/// A trial's verdict, by index into the candidates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    pub(crate) kept: usize,
    /// The best other usable candidate and kept / it.
    pub(crate) runner_up: Option<(usize, f64)>,
    /// The lead the kept candidate needed, or the one the runner-up missed when the default
    /// was kept (the larger of `min_margin` and the noise times [`critical`]).
    pub(crate) margin: f64,
}

/// Decides from `rates[t][rep][candidate]` (GB/s; candidate 0 is the default; at each thread
/// count a repetition ran every candidate once, interleaved). A candidate is scored, per
/// thread count, by the median over repetitions of its rate over the default's in the same
/// repetition; its score is the geometric mean of those over the thread counts. The best score
/// among `usable` candidates is kept when it beats 1 by more than the margin: `min_margin`, or
/// the standard error of that median from the scatter of its ratios (1.4826 × MAD, × 1.2533
/// / √n for a median) times [`critical`] for its pairs and the number of challengers,
/// whichever is larger; and when its best round also beats the
/// default's best round by `min_margin` (geometric mean over the thread counts); and when it
/// was the faster in at least `MIN_WIN_SHARE` of its pairs, `MIN_PAIRS` or more, at every
/// thread count. Disturbances only ever slow a round down, so a best round shows what a loop
/// does when left alone: on a busy machine, a default held back in most repetitions cannot
/// hand the choice to a slower loop that happened to run in the quiet moments, nor one held
/// back in a few repetitions to a slower loop with a lucky round. Otherwise the default stays.
/// Equal scores keep the candidate that comes first. A rate that is not a positive finite number counts as
/// missing.
pub(crate) fn decide(rates: &[Vec<Vec<f64>>], usable: &[bool], min_margin: f64) -> Decision {
    let n = usable.len();
    let scored: Vec<Option<Score>> = (0..n)
        .map(|c| if usable[c] { score(rates, c) } else { None })
        .collect();
    let challengers = scored.iter().skip(1).flatten().count();
    let need = |s: &Score| min_margin.max(critical(s.pairs, challengers) * s.se);
    let lead = |c: usize| scored[c].map(|s| (s.median, need(&s)));
    let mut kept = 0;
    let mut best = 1.0;
    for (c, sc) in scored.iter().enumerate().skip(1) {
        if let Some(sc) = sc
            && sc.pairs >= MIN_PAIRS
            && sc.wins >= MIN_WIN_SHARE
            && sc.median > 1.0 + need(sc)
            && sc.best > 1.0 + min_margin
            && sc.median > best
        {
            kept = c;
            best = sc.median;
        }
    }
    let kept_score = scored[kept].map_or(1.0, |s| s.median);
    let runner_up = (0..n)
        .filter(|&c| c != kept)
        .filter_map(|c| scored[c].map(|s| (c, s.median)))
        .fold(None, |acc: Option<(usize, f64)>, (c, s)| match acc {
            Some((_, bs)) if bs >= s => acc,
            _ => Some((c, s)),
        })
        .map(|(c, s)| (c, kept_score / s));
    // The margin that decided: the kept candidate's, or the one the runner-up missed.
    let decider = if kept == 0 {
        runner_up.map_or(0, |r| r.0)
    } else {
        kept
    };
    let margin = lead(decider).map_or(min_margin, |(_, m)| m);
    Decision {
        kept,
        runner_up,
        margin,
    }
}

/// The chance, over all the challengers of one trial together, that a tie is taken for a lead:
/// about that of the former rule of twice the standard error with one challenger and many
/// repetitions. Shared among the challengers, so that eleven loops and layouts tried against
/// the default do not give eleven chances at a lucky lead (on the development machine under
/// load, l2's choice left the default in 3 of 10 runs, each time for another candidate).
const FAMILY_RISK: f64 = 0.025;

/// How many standard errors a challenger's lead must clear, from `pairs` paired repetitions
/// (`pairs - 1` degrees of freedom) and `challengers` candidates tried against the default:
/// Student's t quantile for a one-sided risk of [`FAMILY_RISK`] / `challengers`. A handful of
/// repetitions estimates the scatter poorly (three close ratios of five give a small MAD by
/// chance), which the t quantile pays for; with one challenger and many repetitions it is
/// about 2.
pub(crate) fn critical(pairs: usize, challengers: usize) -> f64 {
    let risk = FAMILY_RISK / challengers.max(1) as f64;
    // At most the trial's repetitions, so far below the degrees of freedom where statrs'
    // inverse loses digits.
    let nu = pairs.saturating_sub(1).max(1) as f64;
    // Never an error for nu ≥ 1; were it one, no lead would be taken.
    StudentsT::new(0.0, 1.0, nu).map_or(f64::INFINITY, |t| t.inverse_cdf(1.0 - risk))
}

/// A candidate against candidate 0, over the thread counts (geometric means).
#[derive(Debug, Clone, Copy)]
struct Score {
    /// The median of its paired ratios.
    median: f64,
    /// That median's standard error, relative.
    se: f64,
    /// Its best round over the default's best round.
    best: f64,
    /// The fewest paired repetitions at any thread count.
    pairs: usize,
    /// The smallest share, over the thread counts, of its pairs in which it was the faster.
    wins: f64,
}

/// Candidate `c`'s score against candidate 0; None when some thread count has no usable pair.
fn score(rates: &[Vec<Vec<f64>>], c: usize) -> Option<Score> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    let best_of = |reps: &Vec<Vec<f64>>, i: usize| {
        reps.iter()
            .filter_map(|r| r.get(i).copied().filter(|v| ok(*v)))
            .fold(0.0, f64::max)
    };
    let mut log_sum = 0.0;
    let mut var_sum = 0.0;
    let mut log_best = 0.0;
    let mut pairs = usize::MAX;
    let mut wins = f64::INFINITY;
    for reps in rates {
        let ratios: Vec<f64> = reps
            .iter()
            .filter_map(|r| {
                let (x, d) = (*r.get(c)?, *r.first()?);
                (ok(x) && ok(d)).then(|| x / d)
            })
            .collect();
        if ratios.is_empty() {
            return None;
        }
        pairs = pairs.min(ratios.len());
        let won = ratios.iter().filter(|&&r| r > 1.0).count();
        wins = wins.min(won as f64 / ratios.len() as f64);
        let m = median(&ratios);
        let deviations: Vec<f64> = ratios.iter().map(|r| (r - m).abs()).collect();
        let sigma = 1.4826 * median(&deviations) / m;
        let se = 1.2533 * sigma / (ratios.len() as f64).sqrt();
        log_sum += m.ln();
        var_sum += se * se;
        log_best += (best_of(reps, c) / best_of(reps, 0)).ln();
    }
    if rates.is_empty() {
        return None;
    }
    let t = rates.len() as f64;
    Some(Score {
        median: (log_sum / t).exp(),
        se: var_sum.sqrt() / t,
        best: (log_best / t).exp(),
        pairs,
        wins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernel::{Isa, Stores};

    /// rates[t][rep][c] from per-candidate rates that repeat every repetition, times a
    /// per-repetition factor (noise that hits every candidate of a repetition alike).
    fn steady(per_t: &[&[f64]], reps: usize) -> Vec<Vec<Vec<f64>>> {
        per_t
            .iter()
            .map(|cands| {
                (0..reps)
                    .map(|k| {
                        let drift = 1.0 + 0.1 * (k % 3) as f64;
                        cands.iter().map(|r| r * drift).collect()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn equal_rates_keep_the_default() {
        let rates = steady(&[&[100.0, 100.0, 100.0], &[200.0, 200.0, 200.0]], 7);
        let d = decide(&rates, &[true; 3], MIN_MARGIN);
        assert_eq!(d.kept, 0);
        assert_eq!(
            d.runner_up,
            Some((1, 1.0)),
            "a tie: the first other one, ratio 1"
        );
    }

    #[test]
    fn a_clear_winner_is_kept_and_the_runner_up_named() {
        // Candidate 2 is 50 % faster at both thread counts; candidate 1 is 10 % faster.
        let rates = steady(&[&[100.0, 110.0, 150.0], &[180.0, 198.0, 270.0]], 7);
        let d = decide(&rates, &[true; 3], MIN_MARGIN);
        assert_eq!(d.kept, 2);
        let (r, ratio) = d.runner_up.unwrap();
        assert_eq!(r, 1);
        assert!((ratio - 150.0 / 110.0).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn a_lead_under_the_margin_keeps_the_default() {
        let rates = steady(&[&[100.0, 100.5], &[100.0, 100.8]], 7);
        let d = decide(&rates, &[true; 2], MIN_MARGIN);
        assert_eq!(d.kept, 0);
        let (r, ratio) = d.runner_up.unwrap();
        assert_eq!(r, 1);
        assert!(ratio < 1.0, "the default kept though behind: {ratio}");
    }

    #[test]
    fn a_lead_inside_the_noise_keeps_the_default() {
        // Candidate 1's median ratio is 1.03, but its ratios scatter by ±20 %: not evidence.
        let ratios = [1.03, 0.80, 1.25, 0.85, 1.20, 1.03, 1.10];
        let rates = vec![
            ratios
                .iter()
                .map(|r| vec![100.0, 100.0 * r])
                .collect::<Vec<_>>(),
        ];
        let d = decide(&rates, &[true; 2], MIN_MARGIN);
        assert_eq!(d.kept, 0);
        assert!(
            d.margin > 0.05,
            "the margin grew with the noise: {}",
            d.margin
        );
        // The same lead without the scatter is taken.
        let rates = vec![(0..7).map(|_| vec![100.0, 103.0]).collect::<Vec<_>>()];
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 1);
    }

    #[test]
    fn the_critical_value_is_students_t_for_the_shared_risk() {
        // One-sided t quantiles from the published tables (any t table; the shared risks'
        // digits from mpmath at 40 digits): 1 − 0.025 at 4 and 2 degrees of freedom, and
        // 1 − 0.025/11 (eleven challengers) at 2, 4 and 6, within 1e-6 of each.
        for (pairs, challengers, t) in [
            (5, 1, 2.776_445_105),
            (3, 1, 4.302_652_730),
            (3, 11, 14.781_784_025),
            (5, 11, 5.746_507_144),
            (7, 11, 4.404_660_978),
            (1000, 1, 1.962_341_461),
        ] {
            let got = critical(pairs, challengers);
            assert!(
                (got - t).abs() < 1e-6 * t,
                "{pairs} pairs, {challengers} challengers: {got} against {t}"
            );
        }
        assert!(critical(7, 11) < critical(5, 11));
        assert!(critical(7, 11) > critical(7, 1));
        // Fewer than two pairs count as one degree of freedom: t(0.975, 1) = 12.706.
        assert!((critical(1, 1) - 12.706_204_736).abs() < 1e-6);
    }

    /// Five repetitions of twelve candidates on a busy machine: one of the eleven challengers
    /// leads the default by 3 % with a scatter whose standard error is 0.8 %. Twice that (the
    /// former rule) took it; with eleven chances at such a lead and five repetitions to judge
    /// the scatter by, it is a tie and the default stays. The same rounds with that challenger
    /// alone against the default are evidence.
    #[test]
    fn a_lucky_lead_among_many_challengers_keeps_the_default() {
        let lucky = [1.03, 1.03, 1.04, 1.00, 1.06];
        let others = [1.0, 0.99, 1.0, 0.98, 0.995];
        let reps = |n: usize| -> Vec<Vec<Vec<f64>>> {
            vec![
                (0..5)
                    .map(|k| {
                        let mut r = vec![100.0, 100.0 * lucky[k]];
                        r.extend((2..n).map(|_| 100.0 * others[k]));
                        r
                    })
                    .collect(),
            ]
        };
        let d = decide(&reps(12), &[true; 12], MIN_MARGIN);
        assert_eq!(d.kept, 0, "{d:?}");
        assert_eq!(d.runner_up.map(|r| r.0), Some(1));
        assert!(d.margin > 0.03, "the lead it missed: {}", d.margin);
        assert_eq!(decide(&reps(2), &[true; 2], MIN_MARGIN).kept, 1);
    }

    #[test]
    fn one_disturbed_round_does_not_decide() {
        // Candidate 1 caught one round while the default was preempted: 3× in that one.
        let mut rates = steady(&[&[100.0, 99.0]], 7);
        rates[0][3][0] = 33.0;
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 0);
    }

    #[test]
    fn a_lead_in_the_median_but_not_in_the_best_round_keeps_the_default() {
        // The default was held back in six repetitions of seven; its one quiet round shows it
        // 18 % faster than the other loop's best.
        let rates = vec![
            (0..7)
                .map(|k| {
                    if k == 0 {
                        vec![230.0, 195.0]
                    } else {
                        vec![150.0, 190.0]
                    }
                })
                .collect::<Vec<_>>(),
        ];
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 0);
        // Led in both, it is kept.
        let mut both = rates.clone();
        both[0][0] = vec![230.0, 260.0];
        assert_eq!(decide(&both, &[true; 2], MIN_MARGIN).kept, 1);
    }

    #[test]
    fn winning_at_one_thread_count_and_losing_at_the_other_is_a_wash() {
        let rates = steady(&[&[100.0, 120.0], &[200.0, 166.0]], 7);
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 0);
    }

    #[test]
    fn a_candidate_the_cpu_lacks_is_never_kept_nor_runner_up() {
        let rates = steady(&[&[100.0, 300.0, 120.0]], 7);
        let d = decide(&rates, &[true, false, true], MIN_MARGIN);
        assert_eq!(d.kept, 2);
        assert_eq!(d.runner_up.map(|r| r.0), Some(0));
    }

    #[test]
    fn equal_winners_keep_the_first() {
        let rates = steady(&[&[100.0, 130.0, 130.0]], 7);
        assert_eq!(decide(&rates, &[true; 3], MIN_MARGIN).kept, 1);
    }

    #[test]
    fn missing_rates_count_as_missing() {
        let mut rates = steady(&[&[100.0, 150.0, 150.0]], 5);
        for rep in &mut rates[0] {
            rep[1] = f64::NAN;
        }
        rates[0][0][2] = 0.0;
        let d = decide(&rates, &[true; 3], MIN_MARGIN);
        assert_eq!(
            d.kept, 2,
            "candidate 1 has no rate; one bad round of 2 is skipped"
        );
        assert_eq!(decide(&[], &[true; 2], MIN_MARGIN).kept, 0);
    }

    #[test]
    fn a_median_lead_from_a_default_slowed_in_some_repetitions_keeps_the_default() {
        // The other loop is 10 % slower when both run undisturbed (3 repetitions of 7); the
        // default was slowed by half in the other 4, and the other loop had one lucky round:
        // a median lead of 1.8 and a best-round lead of 1.3, but faster in 4 pairs of 7 only.
        let rates = vec![
            (0..7)
                .map(|k| match k {
                    0..=2 => vec![100.0, 90.0],
                    3 => vec![50.0, 130.0],
                    _ => vec![50.0, 90.0],
                })
                .collect::<Vec<_>>(),
        ];
        let d = decide(&rates, &[true; 2], MIN_MARGIN);
        assert_eq!(d.kept, 0, "it led in 4 pairs of 7");
        // Faster in 6 of 7 pairs by the same amounts, it is kept.
        let rates = vec![
            (0..7)
                .map(|k| match k {
                    0 => vec![100.0, 90.0],
                    _ => vec![100.0, 130.0],
                })
                .collect::<Vec<_>>(),
        ];
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 1);
    }

    #[test]
    fn too_few_repetitions_keep_the_default() {
        // Twice as fast, but in two repetitions only (a trial cut short): no scatter to judge.
        let rates = steady(&[&[100.0, 200.0]], MIN_PAIRS - 1);
        let d = decide(&rates, &[true; 2], MIN_MARGIN);
        assert_eq!(d.kept, 0);
        assert_eq!(
            d.runner_up.map(|r| r.0),
            Some(1),
            "still named as runner-up"
        );
        // One more repetition, at one of two thread counts only, is still too few.
        let mut rates = steady(&[&[100.0, 200.0], &[100.0, 200.0]], MIN_PAIRS);
        rates[1].pop();
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 0);
        rates[1].push(vec![100.0, 200.0]);
        assert_eq!(decide(&rates, &[true; 2], MIN_MARGIN).kept, 1);
    }

    #[test]
    fn rounds_rotate_over_the_candidates() {
        assert_eq!(round_order(3, 0).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(round_order(3, 1).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(round_order(3, 5).collect::<Vec<_>>(), [2, 0, 1]);
    }

    fn names(picks: &[Pick]) -> Vec<String> {
        picks.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn auto_offers_every_available_loop_of_the_stores_default_first() {
        for stores in [Stores::Normal, Stores::Nt] {
            let Ok(kernel) = Kernel::resolve(None, stores) else {
                continue;
            };
            for residence in [Residence::Cache, Residence::Memory] {
                for op in Op::ALL {
                    let (picks, kby, _) =
                        candidates(op, kernel, Loops::Auto, HugePages::Auto, residence, true);
                    assert_eq!(
                        picks[0].variant.name,
                        kernel.default_loop(op, residence).name
                    );
                    assert!(
                        picks.iter().all(|p| p.variant.op == op),
                        "{op}: only its loops"
                    );
                    let mut names: Vec<&str> = picks.iter().map(|p| p.variant.name).collect();
                    names.dedup();
                    let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
                    assert_eq!(unique.len(), names.len(), "{op}: a loop offered twice");
                    if names.len() == 1 {
                        assert_ne!(kby, By::Trial, "{op}: one loop, no trial of loops");
                    }
                }
                let (picks, kby, lby) = candidates(
                    Op::Triad,
                    kernel,
                    Loops::Auto,
                    HugePages::Auto,
                    residence,
                    true,
                );
                let default = kernel.default_loop(Op::Triad, residence);
                assert_eq!(picks[0].variant.name, default.name);
                assert!(picks[0].huge_pages, "the default layout is huge pages");
                let loops: Vec<&str> = Variant::all()
                    .filter(|v| v.op == Op::Triad && v.stores == stores && (v.available)())
                    .map(|v| v.name)
                    .collect();
                for p in &picks {
                    assert!(loops.contains(&p.variant.name), "{p} runs here");
                    assert_eq!(p.variant.stores, stores);
                }
                let layouts = if residence == Residence::Cache { 2 } else { 1 };
                assert_eq!(picks.len(), loops.len() * layouts, "{:?}", names(&picks));
                assert_eq!(kby, if loops.len() > 1 { By::Trial } else { By::Only });
                assert_eq!(
                    lby,
                    if residence == Residence::Cache {
                        By::Trial
                    } else {
                        By::Rule
                    }
                );
            }
        }
    }

    #[test]
    fn pinned_settings_leave_one_loop_or_one_layout() {
        let kernel = Kernel::resolve(Some(Isa::Portable), Stores::Normal).unwrap();
        let (picks, kby, lby) = candidates(
            Op::Triad,
            kernel,
            Loops::Default,
            HugePages::Off,
            Residence::Cache,
            true,
        );
        assert_eq!(names(&picks), ["portable, no huge pages"]);
        assert_eq!((kby, lby), (By::Pinned, By::Pinned));
        let best = Kernel::resolve(None, Stores::Normal).unwrap();
        let last = best.loops(Op::Triad).last().unwrap();
        let (picks, kby, lby) = candidates(
            Op::Triad,
            best,
            Loops::Named(last),
            HugePages::Auto,
            Residence::Cache,
            true,
        );
        assert_eq!(picks.len(), 2);
        assert!(picks.iter().all(|p| p.variant.name == last.name));
        assert_eq!((kby, lby), (By::Pinned, By::Trial));
        // A triad loop named for another op: that op's own loop, never the triad's.
        let (picks, kby, _) = candidates(
            Op::Copy,
            best,
            Loops::Named(last),
            HugePages::On,
            Residence::Cache,
            true,
        );
        assert_eq!(picks.len(), 1);
        assert_eq!((picks[0].variant.op, kby), (Op::Copy, By::Pinned));
        let (picks, _, _) = candidates(
            Op::Triad,
            best,
            Loops::Default,
            HugePages::On,
            Residence::Memory,
            true,
        );
        assert_eq!(picks.len(), 1);
        assert!(picks[0].huge_pages);
        // No transparent huge pages (macOS): nothing to choose, none advised.
        let (picks, _, lby) = candidates(
            Op::Triad,
            best,
            Loops::Default,
            HugePages::Auto,
            Residence::Cache,
            false,
        );
        assert_eq!(picks.len(), 1);
        assert!(!picks[0].huge_pages);
        assert_eq!(lby, By::Only);
    }
}
