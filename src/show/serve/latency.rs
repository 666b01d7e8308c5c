//! The idle-latency family of a run that measures latency (`--measure latency` with `--serve`
//! or `--prom-file`): `stream_top_latency_seconds{set,level,stat}`, in seconds (the base unit),
//! the median, fastest and slowest timed run of each buffer chased.

use prometheus::{GaugeVec, Opts, Registry};

/// One buffer's idle latency as a scrape shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyFigures {
    /// The working set's name (`l1`, `dram`, `64KiB`), or the matrix pair's
    /// (`cpu0-mem1`).
    pub(crate) set: String,
    /// `l1`, `l2`, `l3`, `dram`, or `none` for an explicit size or a matrix pair.
    pub(crate) level: String,
    /// Median, fastest and slowest timed run, ns per load.
    pub(crate) median_ns: f64,
    pub(crate) min_ns: f64,
    pub(crate) max_ns: f64,
}

/// Registers the family in `registry` when there is latency to show.
pub(super) fn latency(registry: &Registry, figures: &[LatencyFigures]) {
    if figures.is_empty() {
        return;
    }
    let g = GaugeVec::new(
        Opts::new(
            "stream_top_latency_seconds",
            "Idle memory latency of a dependent pointer chase through a buffer of the working \
             set's size, seconds per load: the median timed run (the figure), the fastest and \
             the slowest.",
        ),
        &["set", "level", "stat"],
    )
    .expect("a valid family");
    for f in figures {
        for (stat, ns) in [
            ("median", f.median_ns),
            ("min", f.min_ns),
            ("max", f.max_ns),
        ] {
            g.with_label_values(&[f.set.as_str(), f.level.as_str(), stat])
                .set(ns * 1e-9);
        }
    }
    registry
        .register(Box::new(g))
        .expect("a family registered once");
}

#[cfg(test)]
mod tests {
    use super::super::exposition::render;
    use super::super::scrape::Scrape;
    use super::*;

    #[test]
    fn latency_is_in_seconds_with_help_type_and_its_stats() {
        let scrape = Scrape {
            latency: vec![LatencyFigures {
                set: "l1".into(),
                level: "l1".into(),
                median_ns: 1.25,
                min_ns: 1.2,
                max_ns: 2.5,
            }],
            ..Scrape::default()
        };
        let text = render(&scrape, 0);
        assert!(
            text.contains("# HELP stream_top_latency_seconds Idle memory latency"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE stream_top_latency_seconds gauge"),
            "{text}"
        );
        let value = |stat: &str| {
            let series =
                format!("stream_top_latency_seconds{{level=\"l1\",set=\"l1\",stat=\"{stat}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(series.as_str()))
                .and_then(|v| v.parse::<f64>().ok())
        };
        assert!((value("median").unwrap() - 1.25e-9).abs() < 1e-18);
        assert!((value("min").unwrap() - 1.2e-9).abs() < 1e-18);
        assert!((value("max").unwrap() - 2.5e-9).abs() < 1e-18);
        // A bandwidth run shows no latency family.
        assert!(!render(&Scrape::default(), 0).contains("stream_top_latency_seconds"));
    }
}
