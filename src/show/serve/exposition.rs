//! A [`Scrape`] in the Prometheus text format (0.0.4), through the `prometheus` crate: every
//! family with `# HELP` and `# TYPE`, base units in the names (bytes per second, seconds,
//! ratios from 0 to 1), and labels bounded by the grid (set, level, threads, op, stat).
//!
//! The classic text format rather than OpenMetrics: it is what node_exporter's textfile
//! collector and `promtool check metrics` read, and Prometheus scrapes it as well.

use super::scrape::{CellFigures, Scrape};
use crate::engine::latency::loaded::LoadedCurve;
use prometheus::core::Collector;
use prometheus::{Counter, Encoder, Gauge, GaugeVec, IntCounterVec, Opts, Registry, TextEncoder};

/// The Content-Type of [`render`]'s output.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A cell's labels: its working set, the level it targets, its thread count and its op.
const CELL: [&str; 4] = ["set", "level", "threads", "op"];

/// The exposition of `scrape`; `now_ns` (the engine's clock) dates the cells' ages.
pub fn render(scrape: &Scrape, now_ns: u64) -> String {
    let mut families = Families::default();
    cells(&mut families, &scrape.cells, now_ns);
    let run = &scrape.run;
    families.gauge_with(
        "stream_top_info",
        "The run: stream-top's version, the triad kernel, its stores, the CPU, the pinning.",
        &[
            ("version", &run.version),
            ("kernel", &run.kernel),
            ("stores", &run.stores),
            ("cpu_model", &run.cpu_model),
            ("pin", &run.pin),
        ],
        1.0,
    );
    if let Some(m) = &run.machine {
        let labels = m.labels();
        let pairs: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        families.gauge_with(
            "stream_top_machine_info",
            "The node's hardware fingerprint: its peer class (a hash of CPU model, sockets, DIMM slots, module size and speed) and what decides its bandwidth.",
            &pairs,
            1.0,
        );
    }
    host(&mut families, scrape);
    service(&mut families, scrape);
    probe(&mut families, scrape);
    super::latency::latency(&families.registry, &scrape.latency);
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and the families were checked when registered.
    let _ = TextEncoder::new().encode(&families.registry.gather(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// The exposition of a loaded-latency curve (`--measure loaded-latency --prom-file`): its own
/// families, one series per point, `delay` the ns after each load chunk (`idle`: no load).
pub fn render_loaded_latency(curve: &LoadedCurve) -> String {
    let mut families = Families::default();
    loaded_latency(&mut families, curve);
    let mut out = Vec::new();
    // As in `render`: a Vec cannot fail, the families were checked when registered.
    let _ = TextEncoder::new().encode(&families.registry.gather(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn loaded_latency(f: &mut Families, curve: &LoadedCurve) {
    let latency = f.vec(
        "stream_top_loaded_latency_seconds",
        "Median latency of a dependent pointer chase while load threads stream the triad with \
         `delay` ns after each chunk (idle: no load), seconds per load.",
        &["delay"],
    );
    let bandwidth = f.vec(
        "stream_top_loaded_bandwidth_bytes_per_second",
        "The load threads' total triad bandwidth during the chase at that delay, decimal \
         bytes per second (24 per element).",
        &["delay"],
    );
    for p in std::iter::once(&curve.idle).chain(&curve.points) {
        let delay = p.delay_ns.map_or("idle".to_string(), |d| d.to_string());
        latency
            .with_label_values(&[delay.as_str()])
            .set(p.latency_ns * 1e-9);
        bandwidth
            .with_label_values(&[delay.as_str()])
            .set(p.load_gbs * 1e9);
    }
    if let Some(k) = curve.knee.and_then(|i| curve.points.get(i)) {
        f.gauge(
            "stream_top_loaded_latency_knee_bytes_per_second",
            "The load bandwidth of the loaded-latency curve's knee: the least from which on \
             latency stays above 2 x idle (absent when the curve has none).",
            k.load_gbs * 1e9,
        );
    }
}

fn cells(f: &mut Families, cells: &[CellFigures], now_ns: u64) {
    let families = CellFamilies::declare(f);
    for c in cells {
        let threads = c.threads.to_string();
        let labels = [
            c.set.as_str(),
            c.level.as_str(),
            threads.as_str(),
            c.op.as_str(),
        ];
        families.counts(c, labels, now_ns);
        families.figures(c, labels);
    }
}

/// The families of the cells, declared once per rendering and filled cell by cell.
struct CellFamilies {
    bw: GaugeVec,
    cv: GaugeVec,
    vendor: GaugeVec,
    scaling: GaugeVec,
    age: GaugeVec,
    rounds: IntCounterVec,
    late: IntCounterVec,
    loops: GaugeVec,
    failures: IntCounterVec,
    disturbed: IntCounterVec,
    episodes: IntCounterVec,
    contended: GaugeVec,
    reference: GaugeVec,
    warming: GaugeVec,
}

impl CellFamilies {
    fn declare(f: &mut Families) -> CellFamilies {
        let bw = f.vec(
            "stream_top_bandwidth_bytes_per_second",
            "Triad bandwidth of a cell over its window of rounds, decimal bytes per second \
             (24 per element): the median round, the best round, and the medians of each round's \
             fastest and slowest thread.",
            &["set", "level", "threads", "op", "stat"],
        );
        let cv = f.vec(
            "stream_top_bandwidth_cv_ratio",
            "Coefficient of variation of a cell's round rates (standard deviation over mean).",
            &CELL,
        );
        let vendor = f.vec(
            "stream_top_vendor_fraction_ratio",
            "A cell's median bandwidth as a fraction of the vendor's peak figure (absent when \
             that figure is unknown).",
            &CELL,
        );
        let scaling = f.vec(
            "stream_top_scaling_ratio",
            "A cell's median bandwidth over the single-thread median on the same working set.",
            &CELL,
        );
        let age = f.vec(
            "stream_top_cell_age_seconds",
            "Seconds since the cell's last timed round ended.",
            &CELL,
        );
        let rounds = f.counter_vec(
            "stream_top_rounds_total",
            "Timed rounds of a cell since the start.",
            &CELL,
        );
        let late = f.counter_vec(
            "stream_top_late_rounds_total",
            "Timed rounds of a cell in which a thread was held back (span over 1.2 x the \
             slowest thread's own time).",
            &CELL,
        );
        let loops = f.vec(
            "stream_top_loop_info",
            "The kernel loop and page layout a working set runs, chosen once per run (by a trial \
             with --kernel auto and --huge-pages auto): 1 for the pair in use.",
            &["set", "level", "op", "loop", "huge_pages"],
        );
        let failures = f.counter_vec(
            "stream_top_checksum_failures_total",
            "Configurations of a cell whose checksum of a did not match the reference.",
            &CELL,
        );
        let disturbed = f.counter_vec(
            "stream_top_disturbed_rounds_total",
            "Timed rounds of a cell judged disturbed (a worker kept off its CPU, or far off its \
             median): they leave the median.",
            &CELL,
        );
        let episodes = f.counter_vec(
            "stream_top_contention_episodes_total",
            "Episodes the contention watch opened on a cell: contention (rounds well below the \
             reference) or disturbance (disturbed rounds in a row).",
            &["set", "level", "threads", "op", "kind"],
        );
        let contended = f.vec(
            "stream_top_contended",
            "1 while a cell is in a contention episode (its rounds well below its reference), \
             else 0.",
            &CELL,
        );
        let reference = f.vec(
            "stream_top_reference_bytes_per_second",
            "The rate the contention watch judges a cell by: the median of its first window of \
             calm rounds, decimal bytes per second.",
            &CELL,
        );
        let warming = f.vec(
            "stream_top_cell_warming",
            "1 while a cell has fewer timed rounds than its first figure needs (a median with a \
             scatter beside it), else 0.",
            &CELL,
        );
        CellFamilies {
            warming,
            bw,
            cv,
            vendor,
            scaling,
            age,
            rounds,
            late,
            loops,
            failures,
            disturbed,
            episodes,
            contended,
            reference,
        }
    }

    /// What every cell of the grid has: its counters, contention, loop and age.
    fn counts(&self, c: &CellFigures, labels: [&str; 4], now_ns: u64) {
        // Counters are there from zero for every cell of the grid, so rate() sees the first
        // rounds; each rendering starts a fresh registry, so inc_by sets the total.
        self.rounds.with_label_values(&labels).inc_by(c.rounds);
        let warming = c.rounds < u64::from(crate::engine::FIRST_FIGURE_ROUNDS);
        self.warming
            .with_label_values(&labels)
            .set(f64::from(u8::from(warming)));
        self.late.with_label_values(&labels).inc_by(c.late_rounds);
        self.failures
            .with_label_values(&labels)
            .inc_by(c.checksum_failures);
        self.disturbed
            .with_label_values(&labels)
            .inc_by(c.disturbed_rounds);
        if let Some(on) = c.contended {
            self.contended
                .with_label_values(&labels)
                .set(f64::from(u8::from(on)));
            for (kind, n) in [
                ("contention", c.contention_episodes),
                ("disturbance", c.disturbance_episodes),
            ] {
                self.episodes
                    .with_label_values(&[labels[0], labels[1], labels[2], labels[3], kind])
                    .inc_by(n);
            }
        }
        if let Some(r) = c.reference_gbs {
            self.reference.with_label_values(&labels).set(r * 1e9);
        }
        if let Some((name, huge)) = &c.loop_pick {
            let huge = if *huge { "true" } else { "false" };
            self.loops
                .with_label_values(&[labels[0], labels[1], labels[3], name, huge])
                .set(1.0);
        }
        if let Some(end) = c.last_round_ns {
            self.age
                .with_label_values(&labels)
                .set(now_ns.saturating_sub(end) as f64 / 1e9);
        }
    }

    /// What a cell with a timed round has: its bandwidth figures.
    fn figures(&self, c: &CellFigures, labels: [&str; 4]) {
        let Some(fig) = &c.figures else { return };
        for (stat, gbs) in [
            ("median", fig.median_gbs),
            ("best", fig.best_gbs),
            ("fastest_thread", fig.fastest_thread_gbs),
            ("slowest_thread", fig.slowest_thread_gbs),
        ] {
            self.bw
                .with_label_values(&[labels[0], labels[1], labels[2], labels[3], stat])
                .set(gbs * 1e9);
        }
        self.cv.with_label_values(&labels).set(fig.cv);
        if let Some(v) = fig.vendor_fraction {
            self.vendor.with_label_values(&labels).set(v);
        }
        if let Some(s) = fig.scaling {
            self.scaling.with_label_values(&labels).set(s);
        }
    }
}

fn host(f: &mut Families, scrape: &Scrape) {
    if let Some(limit) = scrape.memory_limit {
        f.gauge(
            "stream_top_cgroup_memory_limit_bytes",
            "The tightest memory limit of stream-top's cgroups at the start.",
            limit as f64,
        );
    }
    let Some(h) = &scrape.host else { return };
    for (name, help, v) in [
        (
            "stream_top_host_load1",
            "The host's load average over 1 minute.",
            h.load[0],
        ),
        (
            "stream_top_host_load5",
            "The host's load average over 5 minutes.",
            h.load[1],
        ),
        (
            "stream_top_host_load15",
            "The host's load average over 15 minutes.",
            h.load[2],
        ),
    ] {
        f.gauge(name, help, v);
    }
    if let Some(s) = h.steal_pct {
        f.gauge(
            "stream_top_host_steal_ratio",
            "Share of all CPU time the hypervisor stole over the last host sample (about 1 s).",
            s / 100.0,
        );
    }
    let psi = [
        ("cpu", "some", h.cpu_some_avg10),
        ("memory", "some", h.mem_some_avg10),
        ("memory", "full", h.mem_full_avg10),
    ];
    if psi.iter().any(|p| p.2.is_some()) {
        let g = f.vec(
            "stream_top_host_pressure_ratio",
            "Pressure stall information, avg10: share of the last 10 s in which some (or all) \
             tasks waited for the resource.",
            &["resource", "kind"],
        );
        for (resource, kind, v) in psi {
            if let Some(v) = v {
                g.with_label_values(&[resource, kind]).set(v / 100.0);
            }
        }
    }
    if let Some(q) = h.cpu_quota {
        f.gauge(
            "stream_top_cgroup_cpu_quota_cpus",
            "The tightest CPU quota of stream-top's cgroups, in CPUs.",
            q,
        );
    }
    if let Some(t) = h.throttling {
        f.counter(
            "stream_top_cgroup_throttled_periods_total",
            "CPU quota periods in which stream-top's cgroup ran out of quota (cpu.stat \
             nr_throttled of the group that sets the quota).",
            t.throttled_periods as f64,
        );
        f.counter(
            "stream_top_cgroup_throttled_seconds_total",
            "Time stream-top's cgroup was held back by its CPU quota.",
            t.throttled_ns as f64 / 1e9,
        );
    }
    if let Some(r) = h.throttled_ratio {
        f.gauge(
            "stream_top_cgroup_throttled_ratio",
            "Share of the CPU quota periods over the last host sample (about 1 s) that ran \
             out of quota.",
            r,
        );
    }
}

/// What a service needs to be watched by: its sweeps, the memory it holds, the recorder.
fn service(f: &mut Families, scrape: &Scrape) {
    if let Some((ended, took)) = scrape.last_sweep {
        f.gauge(
            "stream_top_last_sweep_timestamp_seconds",
            "When the last complete sweep over the grid ended, seconds since 1970.",
            ended,
        );
        f.gauge(
            "stream_top_sweep_duration_seconds",
            "How long the last complete sweep over the grid took (every cell visited once).",
            took,
        );
    }
    if let Some(bytes) = scrape.arrays_bytes {
        f.gauge(
            "stream_top_arrays_bytes",
            "Bytes of arrays the engine holds now (a service lets them go between visits).",
            bytes as f64,
        );
    }
    f.counter(
        "stream_top_arrays_mapped_total",
        "Times a cell's arrays were mapped and first-touched (every visit of a service).",
        scrape.arrays_mapped as f64,
    );
    f.counter(
        "stream_top_cell_retries_total",
        "Times a cell that could not run (its arrays could not be mapped or first-touched, \
         e.g. for want of the container's memory) was tried again.",
        scrape.cell_retries as f64,
    );
    f.gauge(
        "stream_top_cells_failed",
        "Cells of the grid that could not run and wait to be tried again.",
        scrape.cells_failed as f64,
    );
    if let Some(n) = scrape.record_dropped {
        f.counter(
            "stream_top_record_dropped_total",
            "Records the recording (--record) dropped rather than make the engine wait.",
            n as f64,
        );
    }
}

/// The latency probe (`--probe`; a service runs it unless `--no-probe`): absent when it does
/// not run.
fn probe(f: &mut Families, scrape: &Scrape) {
    let Some(p) = &scrape.probe else {
        return;
    };
    if let Some(ns) = p.latency_ns {
        f.gauge(
            "stream_top_probe_latency_seconds",
            "The probe's memory latency: the median of its last second of samples (each the \
             mean of a burst of dependent loads through a DRAM-sized chain), seconds per load.",
            ns * 1e-9,
        );
    }
    if let Some(ns) = p.reference_ns {
        f.gauge(
            "stream_top_probe_reference_seconds",
            "The probe's calm latency, learned from its first calm samples, seconds per load.",
            ns * 1e-9,
        );
    }
    f.gauge(
        "stream_top_probe_contended",
        "1 while the probe's latency stays well above its reference (a latency contention \
         episode), else 0.",
        if p.contended { 1.0 } else { 0.0 },
    );
    f.counter(
        "stream_top_probe_samples_total",
        "Samples (bursts) the probe took since the start.",
        p.samples as f64,
    );
    f.counter(
        "stream_top_probe_episodes_total",
        "Latency contention episodes the probe's watch opened since the start.",
        p.episodes as f64,
    );
}

/// A registry made for one rendering, and the helpers that fill it.
#[derive(Default)]
struct Families {
    registry: Registry,
}

impl Families {
    /// Registers a family or metric (each name once a rendering), and gives it back to fill.
    fn register<C: Collector + Clone + 'static>(&mut self, c: C) -> C {
        self.registry
            .register(Box::new(c.clone()))
            .expect("a family registered once");
        c
    }

    fn vec(&mut self, name: &str, help: &str, labels: &[&str]) -> GaugeVec {
        self.register(GaugeVec::new(Opts::new(name, help), labels).expect("a valid family"))
    }

    fn gauge(&mut self, name: &str, help: &str, value: f64) {
        self.gauge_with(name, help, &[], value);
    }

    fn gauge_with(&mut self, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        let mut opts = Opts::new(name, help);
        for (k, v) in labels {
            opts = opts.const_label(*k, *v);
        }
        self.register(Gauge::with_opts(opts).expect("a valid gauge"))
            .set(value);
    }

    fn counter_vec(&mut self, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
        self.register(IntCounterVec::new(Opts::new(name, help), labels).expect("a valid family"))
    }

    fn counter(&mut self, name: &str, help: &str, value: f64) {
        self.register(Counter::new(name, help).expect("a valid counter"))
            .inc_by(value.max(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::stats::Figures;
    use crate::machine::cgroup::Throttling;
    use crate::machine::host::HostSample;
    use crate::show::serve::scrape::RunLabels;

    fn cell(set: &str, level: &str, threads: usize, median_gbs: Option<f64>) -> CellFigures {
        CellFigures {
            op: "triad".into(),
            set: set.into(),
            level: level.into(),
            threads,
            figures: median_gbs.map(|m| Figures {
                median_gbs: m,
                best_gbs: m * 1.1,
                cv: 0.02,
                fastest_thread_gbs: m / threads as f64 * 1.05,
                slowest_thread_gbs: m / threads as f64 * 0.95,
                late_rounds: 1,
                rounds: 21,
                scaling: Some(1.5),
                vendor_fraction: None,
                bytes_per_cycle: None,
                checksum_ok: Some(true),
                disturbed_rounds: 0,
                bytes_per_cycle_source: None,
                median_ci: None,
                counters: Default::default(),
                noisy: Vec::new(),
            }),
            rounds: 40,
            late_rounds: 3,
            checksum_failures: 0,
            last_round_ns: median_gbs.map(|_| 1_000_000_000),
            loop_pick: median_gbs.map(|_| ("avx2 ymm mul+add".to_string(), true)),
            disturbed_rounds: 4,
            contention_episodes: 2,
            disturbance_episodes: 1,
            contended: Some(median_gbs.is_some()),
            reference_gbs: median_gbs.map(|m| m * 2.0),
        }
    }

    fn scrape() -> Scrape {
        Scrape {
            run: RunLabels {
                version: "0.1.0".into(),
                kernel: "avx2".into(),
                stores: "normal".into(),
                cpu_model: "AMD EPYC \"Milan\"".into(),
                pin: "spread".into(),
                machine: None,
            },
            cells: vec![
                cell("dram", "dram", 2, Some(12.5)),
                cell("64 MiB", "none", 1, None),
            ],
            host: Some(HostSample {
                load: [0.5, 0.25, 0.125],
                steal_pct: Some(2.0),
                cpu_some_avg10: Some(10.0),
                cpu_quota: Some(1.5),
                throttling: Some(Throttling {
                    periods: 100,
                    throttled_periods: 7,
                    throttled_ns: 2_500_000_000,
                }),
                throttled_ratio: Some(0.25),
                ..Default::default()
            }),
            memory_limit: Some(400 << 20),
            last_sweep: Some((1_700_000_000.5, 240.25)),
            arrays_bytes: Some(0),
            arrays_mapped: 17,
            cell_retries: 5,
            cells_failed: 1,
            record_dropped: None,
            probe: None,
            latency: Vec::new(),
        }
    }

    #[test]
    fn the_probe_has_its_families_in_base_units_and_none_without_it() {
        let text = render(&scrape(), 0);
        assert!(!text.contains("stream_top_probe"), "{text}");
        let probe = |latency_ns, contended| Scrape {
            probe: Some(super::super::scrape::ProbeFigures {
                latency_ns,
                reference_ns: Some(95.0),
                contended,
                samples: 1234,
                episodes: 2,
            }),
            ..scrape()
        };
        let text = render(&probe(Some(142.5), true), 0);
        assert!(
            text.contains("# HELP stream_top_probe_latency_seconds The probe's memory latency")
                && text.contains("# TYPE stream_top_probe_latency_seconds gauge"),
            "{text}"
        );
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-15);
        assert!(near(
            value(&text, "stream_top_probe_latency_seconds"),
            142.5e-9
        ));
        assert!(near(
            value(&text, "stream_top_probe_reference_seconds"),
            95e-9
        ));
        assert_eq!(value(&text, "stream_top_probe_contended"), Some(1.0));
        assert!(text.contains("# TYPE stream_top_probe_samples_total counter"));
        assert_eq!(value(&text, "stream_top_probe_samples_total"), Some(1234.0));
        assert_eq!(value(&text, "stream_top_probe_episodes_total"), Some(2.0));
        // Before its first sample: the state and counters, no latency.
        let text = render(&probe(None, false), 0);
        assert!(!text.contains("stream_top_probe_latency_seconds"), "{text}");
        assert_eq!(value(&text, "stream_top_probe_contended"), Some(0.0));
    }

    #[test]
    fn a_service_says_what_to_alert_on() {
        let text = render(&scrape(), 3_500_000_000);
        let cell = r#"{level="dram",op="triad",set="dram",threads="2"}"#;
        let v = |series: &str| value(&text, series);
        assert_eq!(v(&format!("stream_top_contended{cell}")), Some(1.0));
        assert_eq!(
            v(r#"stream_top_contended{level="none",op="triad",set="64 MiB",threads="1"}"#),
            Some(0.0)
        );
        assert_eq!(
            v(&format!("stream_top_disturbed_rounds_total{cell}")),
            Some(4.0)
        );
        assert_eq!(
            v(
                r#"stream_top_contention_episodes_total{kind="contention",level="dram",op="triad",set="dram",threads="2"}"#
            ),
            Some(2.0)
        );
        assert_eq!(
            v(
                r#"stream_top_contention_episodes_total{kind="disturbance",level="dram",op="triad",set="dram",threads="2"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            v(&format!("stream_top_reference_bytes_per_second{cell}")),
            Some(25e9)
        );
        assert_eq!(
            v("stream_top_last_sweep_timestamp_seconds"),
            Some(1_700_000_000.5)
        );
        assert_eq!(v("stream_top_sweep_duration_seconds"), Some(240.25));
        assert_eq!(v("stream_top_arrays_bytes"), Some(0.0));
        assert_eq!(v("stream_top_arrays_mapped_total"), Some(17.0));
        // A cell that could not run: how often it was tried again, and that it waits now.
        assert!(text.contains("# TYPE stream_top_cell_retries_total counter"));
        assert_eq!(v("stream_top_cell_retries_total"), Some(5.0));
        assert!(text.contains("# TYPE stream_top_cells_failed gauge"));
        assert_eq!(v("stream_top_cells_failed"), Some(1.0));
        // Not recording: no family; the recorder's count makes one.
        assert!(!text.contains("stream_top_record_dropped_total"), "{text}");
        let mut recording = scrape();
        recording.record_dropped = Some(3);
        let text = render(&recording, 3_500_000_000);
        assert_eq!(value(&text, "stream_top_record_dropped_total"), Some(3.0));
        // Without a contention watch, no contention families at all (not a 0 that means calm).
        let mut unwatched = scrape();
        for c in &mut unwatched.cells {
            c.contended = None;
        }
        let text = render(&unwatched, 3_500_000_000);
        assert!(!text.contains("stream_top_contended{"), "{text}");
        assert!(
            !text.contains("stream_top_contention_episodes_total{"),
            "{text}"
        );
    }

    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn each_working_set_names_its_loop_and_layout() {
        let text = render(&scrape(), 3_500_000_000);
        assert_eq!(
            value(
                &text,
                r#"stream_top_loop_info{huge_pages="true",level="dram",loop="avx2 ymm mul+add",op="triad",set="dram"}"#
            ),
            Some(1.0),
            "{text}"
        );
        assert!(!text.contains(r#"loop_info{huge_pages="true",level="none""#));
    }

    #[test]
    fn every_family_has_help_and_type() {
        let text = render(&scrape(), 3_500_000_000);
        let mut families = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(text.contains(&format!("# HELP {name} ")), "{name}");
            assert!(text.contains(&format!("# TYPE {name} ")), "{name}");
        }
        for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
            families += 1;
            let name = line.split(' ').nth(2).unwrap();
            let kind = line.split(' ').nth(3).unwrap();
            assert!(name.starts_with("stream_top_"), "{name}");
            // Counters end in _total, nothing else does.
            assert_eq!(kind == "counter", name.ends_with("_total"), "{line}");
        }
        assert!(families >= 15, "{text}");
    }

    #[test]
    fn each_op_of_a_cell_is_its_own_series() {
        let mut s = scrape();
        let mut copy = cell("dram", "dram", 2, Some(25.0));
        copy.op = "copy".into();
        s.cells.push(copy);
        let text = render(&s, 0);
        for (op, v) in [("triad", "12500000000"), ("copy", "25000000000")] {
            let line = format!(
                r#"stream_top_bandwidth_bytes_per_second{{level="dram",op="{op}",set="dram",stat="median",threads="2"}} {v}"#
            );
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }

    #[test]
    fn figures_in_base_units_with_bounded_labels() {
        let text = render(&scrape(), 3_500_000_000);
        let cell = r#"{level="dram",op="triad",set="dram",threads="2"}"#;
        let bw = |stat: &str| {
            value(
                &text,
                &format!(
                    r#"stream_top_bandwidth_bytes_per_second{{level="dram",op="triad",set="dram",stat="{stat}",threads="2"}}"#
                ),
            )
        };
        assert_eq!(bw("median"), Some(12.5e9));
        assert_eq!(bw("best"), Some(12.5e9 * 1.1));
        assert_eq!(bw("fastest_thread"), Some(12.5e9 / 2.0 * 1.05));
        assert_eq!(bw("slowest_thread"), Some(12.5e9 / 2.0 * 0.95));
        let v = |family: &str| value(&text, &format!("{family}{cell}"));
        assert_eq!(v("stream_top_bandwidth_cv_ratio"), Some(0.02));
        assert_eq!(v("stream_top_scaling_ratio"), Some(1.5));
        assert_eq!(v("stream_top_cell_age_seconds"), Some(2.5));
        assert_eq!(v("stream_top_rounds_total"), Some(40.0));
        assert_eq!(v("stream_top_late_rounds_total"), Some(3.0));
        assert_eq!(v("stream_top_checksum_failures_total"), Some(0.0));
        // Unknown is absent, never 0: no vendor figure, and no figures yet for 64 MiB.
        assert!(
            !text.contains("stream_top_vendor_fraction_ratio{"),
            "{text}"
        );
        assert!(!text.contains(r#"bytes_per_second{level="none""#), "{text}");
        // But its counters are there from zero on.
        assert_eq!(
            value(
                &text,
                r#"stream_top_rounds_total{level="none",op="triad",set="64 MiB",threads="1"}"#
            ),
            Some(40.0)
        );
        assert!(text.contains(
            r#"stream_top_info{cpu_model="AMD EPYC \"Milan\"",kernel="avx2",pin="spread",stores="normal",version="0.1.0"} 1"#
        ), "{text}");
    }

    #[test]
    fn host_and_cgroup_gauges() {
        let text = render(&scrape(), 0);
        assert_eq!(value(&text, "stream_top_host_load1"), Some(0.5));
        assert_eq!(value(&text, "stream_top_host_load15"), Some(0.125));
        assert_eq!(value(&text, "stream_top_host_steal_ratio"), Some(0.02));
        assert_eq!(
            value(
                &text,
                r#"stream_top_host_pressure_ratio{kind="some",resource="cpu"}"#
            ),
            Some(0.1)
        );
        assert!(
            !text.contains(r#"resource="memory""#),
            "no PSI figure, no series"
        );
        assert_eq!(value(&text, "stream_top_cgroup_cpu_quota_cpus"), Some(1.5));
        assert_eq!(
            value(&text, "stream_top_cgroup_memory_limit_bytes"),
            Some((400u64 << 20) as f64)
        );
        assert_eq!(
            value(&text, "stream_top_cgroup_throttled_periods_total"),
            Some(7.0)
        );
        assert_eq!(
            value(&text, "stream_top_cgroup_throttled_seconds_total"),
            Some(2.5)
        );
        assert_eq!(
            value(&text, "stream_top_cgroup_throttled_ratio"),
            Some(0.25)
        );
        // Before the first host sample: no host families at all.
        let bare = render(
            &Scrape {
                host: None,
                ..scrape()
            },
            0,
        );
        assert!(!bare.contains("stream_top_host_"), "{bare}");
    }
}
