//! The clock estimate runs and reports both chains. No thresholds: this machine is shared.

use stream_top::machine::clock::ClockEstimate;

#[test]
fn measures_both_chains() {
    let c = ClockEstimate::measure(Some(0));
    eprintln!(
        "clock: {:.3} GHz, check {:.3} GHz: {}",
        c.ghz,
        c.check_ghz,
        c.line()
    );
    assert!(c.ghz.is_finite() && c.ghz > 0.0);
    assert!(c.check_ghz.is_finite() && c.check_ghz > 0.0);
    assert!(c.line().contains("GHz"));
    assert!(c.method.contains("min of 7 runs"), "{}", c.method);
    if !c.agree {
        assert!(c.line().contains("disagree"));
    }
}

#[test]
fn fixed_is_what_it_says() {
    let c = ClockEstimate::fixed(2.5);
    assert_eq!((c.ghz, c.check_ghz, c.agree), (2.5, 2.5, true));
    assert!(c.line().starts_with("2.50 GHz"));
}
