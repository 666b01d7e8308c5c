//! The command line: clap parses, `Config::parse_from` validates into what the rest takes.
//! Every error a person can cause here is one line naming the flag, and exit code 2; a flag
//! that would do nothing in the chosen mode is refused with where it applies (`APPLIES`).
//!
//! The parts: `args` (clap's definition of the flags), `values` (what a flag's text means:
//! thread lists, working sets, sizes, labels), `applies` (where each flag does something); this
//! file builds and validates the `Config` from them.

mod applies;
mod args;
mod fleet;
mod values;

pub use args::{
    Args, DEFAULT_SERVE_ADDR, FormatArg, HugePagesArg, Measure, OnOff, PinArg, ReadmeStyle,
    SERVICE_DUTY, StoresArg, Sub,
};
pub use fleet::{CheckArgs, FleetArgs, FleetFormat};
pub use values::{KernelArg, default_threads};

use crate::base::error::{Error, Result};
use crate::engine::kernel::{Op, Stores};
use crate::engine::plan::{HugePages, Level, SetSpec};
use crate::engine::sweep::{DEFAULT_POINTS_PER_OCTAVE, check_points_per_octave};
use crate::machine::topology::PinPolicy;
use crate::machine::vendor::usable_gbs;
use applies::{given_flags, refuse_flags_that_do_not_apply, refuse_for_measure};
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use values::{check_name, parse_delays, parse_sets, parse_threads};

/// The largest thread count accepted, as a multiple of the online CPUs.
const MAX_OVERSUBSCRIPTION: usize = 4;

/// `--repeat`'s most: a hundred sweeps of the grid is already hours at DRAM.
const MAX_REPEAT: u64 = 100;

/// Repetitions `calibrate` runs unless told: ten give each cell's spread nine degrees of
/// freedom, and a fair chance to meet a cell's rare slow runs (here about one in six).
const CALIBRATE_REPEAT: u32 = 10;

/// `calibrate --span` unless told: on these VMs runs a second apart agree within 0.2 % while
/// runs minutes apart differ by up to 6 %, and a before/after comparison spans minutes.
const CALIBRATE_SPAN_MS: u64 = 5 * 60_000;

/// `calibrate --span`'s most: a day.
const MAX_CALIBRATE_SPAN_MS: u64 = 24 * 3_600_000;

/// `--record-max` when not given: 256 MiB over all the recording's files.
const DEFAULT_RECORD_MAX: u64 = 256 << 20;

/// Whether the latency probe runs (`engine::latency::probe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeMode {
    Off,
    /// Beside the triad (`--probe`; a service's default).
    On,
    /// Alone: no triad workers (`--probe-only`).
    Only,
}

/// Flags that set up the triad: with `--probe-only` no triad runs, and each is refused.
const TRIAD_FLAGS: &[&str] = &[
    "threads",
    "sets",
    "points_per_octave",
    "rounds",
    "round_ms",
    "pin",
    "kernel",
    "stores",
    "huge_pages",
    "membind",
    "interleave",
    "max_memory",
    "matrix",
    "oversubscribe",
    "vendor_gbs",
    "duty",
    "baseline",
    "counters",
    "contention_drop",
    "contention_rounds",
];

/// `--probe`, `--no-probe`, `--probe-only`, `--probe-cpu`.
struct ProbeFlags {
    on: bool,
    off: bool,
    only: bool,
    cpu: Option<usize>,
}

/// The probe's mode from its flags, or the one-line refusal: `--probe-only` with a triad flag,
/// `--probe-cpu` with no probe to place.
fn probe_mode(args: ProbeFlags, given: &[String], service: bool) -> Result<ProbeMode, String> {
    let mode = if args.only {
        if let Some(flag) = given.iter().find(|g| TRIAD_FLAGS.contains(&g.as_str())) {
            return Err(format!(
                "--probe-only: no triad runs, so --{} would do nothing; drop one of them",
                flag.replace('_', "-")
            ));
        }
        ProbeMode::Only
    } else if args.on || (service && !args.off) {
        ProbeMode::On
    } else {
        ProbeMode::Off
    };
    if args.cpu.is_some() && mode == ProbeMode::Off {
        return Err(format!(
            "--probe-cpu: only with {}",
            if service {
                "the probe (drop --no-probe)"
            } else {
                "--probe or --probe-only"
            }
        ));
    }
    Ok(mode)
}

/// What stream-top was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Live,
    Headless,
    /// `compare A B`, or `compare A1 A2 … -- B1 B2 …` (`every`: a directory stands for every
    /// snapshot in it, not its newest).
    Compare {
        a: Vec<PathBuf>,
        b: Vec<PathBuf>,
        every: bool,
    },
    /// `calibrate`: a headless sweep repeated, whose spread is written for `compare`.
    Calibrate,
    /// `stream-top replay FILE… --headless`: the snapshot of a moment (`at`, the end when
    /// None) or of a window (`from`, `to`); the times are read by `show::record`.
    Replay {
        files: Vec<PathBuf>,
        headless: bool,
        at: Option<String>,
        window: Option<(String, String)>,
        format: FormatArg,
    },
    /// `fleet FILES|DIRS…`: nodes judged against their peers.
    Fleet(FleetArgs),
    /// `check`: a short all-core triad against a reference.
    Check(CheckArgs),
}

/// What a command line asks for: a run, or text for stdout (`--help`, `--version`).
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Config>),
    Print(String),
}

/// clap's error as one line: its first paragraph (which can run over several lines, as the
/// list of missing arguments does), clap's suggestion when it has one (`--threds`: "did you
/// mean '--threads'?") and, when arguments are missing, the usage that shows them.
fn clap_message(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let text = e.render().to_string();
    let mut line: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    if let Some(first) = line.first_mut() {
        *first = first.trim_start_matches("error: ");
    }
    let mut message = line.join(" ");
    let suggested: Vec<String> = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedValue,
        ContextKind::SuggestedSubcommand,
    ]
    .into_iter()
    .filter_map(|kind| match e.get(kind)? {
        ContextValue::String(s) => Some(vec![s.clone()]),
        ContextValue::Strings(v) => Some(v.clone()),
        _ => None,
    })
    .flatten()
    .map(|s| format!("'{s}'"))
    .collect();
    if !suggested.is_empty() {
        message.push_str(&format!("; did you mean {}?", suggested.join(" or ")));
    }
    if e.kind() == clap::error::ErrorKind::MissingRequiredArgument
        && let Some(usage) = text.lines().find_map(|l| l.trim().strip_prefix("Usage: "))
    {
        message.push_str(&format!(" (usage: {usage})"));
    }
    if message.is_empty() {
        "bad arguments; see --help".into()
    } else {
        message
    }
}

/// The validated command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mode: Mode,
    /// `--delays`: the loaded-latency delays in ns, rising (None: the default ladder).
    pub delays: Option<Vec<u64>>,
    /// None: the default for the online CPUs.
    pub threads: Option<Vec<usize>>,
    pub sets: Vec<SetSpec>,
    pub rounds: u32,
    pub round_ms: u32,
    pub pin: PinPolicy,
    pub kernel: KernelArg,
    /// `--op`: the ops each cell of the grid runs, in the order given.
    pub ops: Vec<Op>,
    pub stores: Stores,
    pub vendor_gbs: Option<f64>,
    pub duty: u8,
    pub huge_pages: HugePages,
    /// `--membind NODE`: every page from this node (checked against the machine's nodes later).
    pub membind: Option<usize>,
    /// `--interleave`: pages round-robin across every node.
    pub interleave: bool,
    /// `--max-memory SIZE`: the most the arrays may hold in all, bytes.
    pub(crate) max_memory: Option<u64>,
    /// `--measure`: bandwidth (the triad), idle latency (the pointer chase), or loaded latency.
    pub measure: Measure,
    /// `--matrix`: the NUMA bandwidth matrix instead of the grid (the latency matrix with
    /// `--measure latency`).
    pub matrix: bool,
    /// `--oversubscribe`: thread counts past `MAX_OVERSUBSCRIPTION` × the CPUs, as no
    /// measurement.
    pub oversubscribe: bool,
    /// `--serve`: where to answer scrapes.
    pub serve: Option<SocketAddr>,
    /// `--prom-file`: the textfile written after each sweep.
    pub prom_file: Option<PathBuf>,
    pub format: FormatArg,
    pub export: Option<PathBuf>,
    pub readme: Option<PathBuf>,
    pub(crate) readme_style: ReadmeStyle,
    /// `--name`: the run's label, checked to be safe in a file name.
    pub name: Option<String>,
    /// `--node`: the node's name for `fleet` (None: the hostname).
    pub node: Option<String>,
    pub baseline: Option<PathBuf>,
    /// Per-thread counters on (`--counters`).
    pub counters: bool,
    /// `compare --fail-if-slower PERCENT`: the slowdown, percent, that fails the comparison.
    pub fail_if_slower: Option<f64>,
    /// `compare --allow-single-run`: the gate may judge single runs against the spread.
    pub allow_single_run: bool,
    /// `--repeat N`: sweeps of the grid, each on fresh arrays (1 unless asked; calibrate 10).
    pub repeat: u32,
    /// `calibrate --span`: the time its processes are spread over, ms.
    pub calibrate_span_ms: u64,
    /// `--contention-drop` as a fraction (0.15).
    pub contention_drop: f64,
    pub contention_rounds: u32,
    /// `--probe`, `--probe-only`, `--no-probe` (a service runs it unless told).
    pub probe: ProbeMode,
    /// `--probe-cpu N` (checked against the usable CPUs once they are known).
    pub probe_cpu: Option<usize>,
    /// `--record FILE` and `--record-max` in bytes.
    pub record: Option<PathBuf>,
    pub(crate) record_max: u64,
    pub root: PathBuf,
}

impl Config {
    /// Parses a command line (the program's name first) and validates it. Thread counts are
    /// checked against the CPUs later (`thread_counts`), once the topology is known. Every
    /// error is a usage error of one line.
    pub fn parse_from<I, T>(argv: I) -> Result<Parsed>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = match Args::command().try_get_matches_from(argv) {
            Ok(m) => m,
            Err(e) if e.use_stderr() => return Err(Error::usage(clap_message(&e))),
            Err(e) => return Ok(Parsed::Print(e.render().to_string())),
        };
        let args = Args::from_arg_matches(&matches).map_err(|e| Error::usage(clap_message(&e)))?;
        let config = Config::validate(args, &given_flags(&matches)).map_err(Error::Usage)?;
        Ok(Parsed::Run(Box::new(config)))
    }

    fn validate(args: Args, given: &[String]) -> Result<Config, String> {
        let mode = match args.command {
            Some(Sub::Compare { a, b }) if b.is_empty() => match <[PathBuf; 2]>::try_from(a) {
                Ok([a, b]) => Mode::Compare {
                    a: vec![a],
                    b: vec![b],
                    every: false,
                },
                Err(a) => {
                    return Err(format!(
                        "compare: {} named; name two (compare A.json B.json), or several a \
                         side with `--` between them (compare A1 A2 -- B1 B2)",
                        if a.len() == 1 {
                            "one snapshot".to_string()
                        } else {
                            format!("{} snapshots", a.len())
                        }
                    ));
                }
            },
            Some(Sub::Compare { a, b }) => {
                // After `--` everything is a path: a flag there was meant for compare.
                if let Some(flag) = b.iter().find(|p| p.to_string_lossy().starts_with("--")) {
                    return Err(format!(
                        "compare: {} after `--` is read as B's snapshot; give flags before the \
                         snapshots (compare --fail-if-slower 5 A1 A2 -- B1 B2)",
                        flag.display()
                    ));
                }
                Mode::Compare { a, b, every: true }
            }
            Some(Sub::Calibrate) => Mode::Calibrate,
            Some(Sub::Replay {
                files,
                headless,
                at,
                from,
                to,
                format,
            }) => Mode::Replay {
                files,
                headless,
                at,
                window: from.zip(to),
                format,
            },
            Some(Sub::Fleet(f)) => Mode::Fleet(f),
            Some(Sub::Check(c)) => Mode::Check(c),
            None if args.headless => Mode::Headless,
            None => Mode::Live,
        };
        refuse_flags_that_do_not_apply(given, &mode)?;
        let probe = probe_mode(
            ProbeFlags {
                on: args.probe,
                off: args.no_probe,
                only: args.probe_only,
                cpu: args.probe_cpu,
            },
            given,
            mode == Mode::Headless && args.serve.is_some(),
        )?;
        refuse_for_measure(args.measure, &mode, given)?;
        let threads = args
            .threads
            .as_deref()
            .map(|t| parse_threads(t).map_err(|e| format!("--threads {t}: {e}")))
            .transpose()?;
        let per_octave = args
            .points_per_octave
            .map(check_points_per_octave)
            .transpose()
            .map_err(|e| e.to_string())?;
        let sets = match args.sets.as_deref() {
            Some(s) => parse_sets(s, per_octave.unwrap_or(DEFAULT_POINTS_PER_OCTAVE))
                .map_err(|e| format!("--sets {s}: {e}"))?,
            None if args.measure == Measure::Latency => vec![
                SetSpec::Level(Level::L1),
                SetSpec::Level(Level::L2),
                SetSpec::Level(Level::L3),
                SetSpec::Level(Level::Dram),
            ],
            None if mode == Mode::Headless => {
                vec![SetSpec::Level(Level::L2), SetSpec::Level(Level::Dram)]
            }
            None => vec![
                SetSpec::Level(Level::L1),
                SetSpec::Level(Level::L2),
                SetSpec::Level(Level::Dram),
            ],
        };
        let (sets, delays) = loaded_latency_args(
            LoadedArgs {
                measure: args.measure,
                delays: args.delays.as_deref(),
                sets: args.sets.as_deref(),
                matrix: args.matrix,
                serve: args.serve.is_some(),
                repeat: args.repeat,
            },
            &mode,
            sets,
        )?;
        if per_octave.is_some() && !sets.iter().any(|s| matches!(s, SetSpec::Range(_))) {
            return Err(
                "--points-per-octave: only with a range of sizes in --sets (e.g. --sets 16KiB..1GiB)"
                    .into(),
            );
        }
        if args.rounds == 0 || args.rounds > 100_000 {
            return Err(format!(
                "--rounds {}: must be from 1 to 100000",
                args.rounds
            ));
        }
        if args.round_ms == 0 || args.round_ms > 60_000 {
            return Err(format!(
                "--round-ms {}: must be from 1 to 60000",
                args.round_ms
            ));
        }
        if !(1.0..=90.0).contains(&args.contention_drop) {
            return Err(format!(
                "--contention-drop {}: must be a percentage from 1 to 90",
                args.contention_drop
            ));
        }
        if args.contention_rounds == 0 || args.contention_rounds > 1000 {
            return Err(format!(
                "--contention-rounds {}: must be from 1 to 1000",
                args.contention_rounds
            ));
        }
        let serve = args
            .serve
            .as_deref()
            .map(|a| {
                a.parse::<SocketAddr>().map_err(|_| {
                    format!(
                        "--serve {a}: not an address to listen on (IP:PORT, e.g. {DEFAULT_SERVE_ADDR})"
                    )
                })
            })
            .transpose()?;
        let service = mode == Mode::Headless && serve.is_some();
        let max_memory = args
            .max_memory
            .as_deref()
            .map(|s| match crate::base::units::parse_size(s) {
                Ok(0) => Err(format!("--max-memory {s}: must be more than 0 bytes")),
                Ok(b) => Ok(b),
                Err(e) => Err(format!("--max-memory {s}: {e}")),
            })
            .transpose()?;
        let duty = args
            .duty
            .unwrap_or(if service { SERVICE_DUTY.into() } else { 100.0 });
        if !(1.0..=100.0).contains(&duty) || duty.fract() != 0.0 {
            return Err(format!(
                "--duty {duty}: must be a whole percentage from 1 to 100"
            ));
        }
        if let Some(v) = args.vendor_gbs
            && !usable_gbs(v)
        {
            return Err(format!(
                "--vendor-gbs {v}: must be a positive figure in GB/s"
            ));
        }
        if given.iter().any(|g| g == "readme_style") && args.readme.is_none() {
            return Err("--readme-style: only with --readme FILE".into());
        }
        if let Some(name) = &args.name {
            check_name(name).map_err(|e| format!("--name {name:?}: {e}"))?;
        }
        let stores = match args.stores {
            StoresArg::Normal => Stores::Normal,
            StoresArg::Nt => Stores::Nt,
        };
        let kernel = KernelArg::parse(&args.kernel, stores)?;
        let ops = Op::parse_list(&args.op).map_err(|e| format!("--op {}: {e}", args.op))?;
        if args.format == FormatArg::Stream && !ops.iter().any(|op| op.stream_name().is_some()) {
            return Err(format!(
                "--format stream: STREAM's table has only its own ops, and --op {} has none of \
                 them (copy, scale, add, triad; --op stream runs the four)",
                args.op
            ));
        }
        if args.format == FormatArg::Stream && args.measure != Measure::Bandwidth {
            return Err(
                "--format stream: STREAM's table is a bandwidth table, not one of --measure's \
                 latencies (md, csv or json)"
                    .into(),
            );
        }
        if let Some(p) = args.fail_if_slower
            && !(p.is_finite() && (0.0..100.0).contains(&p))
        {
            return Err(format!(
                "--fail-if-slower {p}: must be a percentage from 0 to under 100"
            ));
        }
        let repeat = match args.repeat {
            None if mode == Mode::Calibrate => CALIBRATE_REPEAT,
            None => 1,
            Some(n) if (1..=MAX_REPEAT).contains(&n) => n as u32,
            Some(n) => return Err(format!("--repeat {n}: must be from 1 to {MAX_REPEAT}")),
        };
        if mode == Mode::Calibrate && repeat < 2 {
            return Err(format!(
                "--repeat {repeat}: calibrate needs 2 or more repetitions to see a spread"
            ));
        }
        let calibrate_span_ms = match args.span.as_deref() {
            None => CALIBRATE_SPAN_MS,
            Some(t) => crate::base::time::parse_duration_ms(t)
                .map_err(|e| format!("--span {t}: {e}"))
                .and_then(|ms| {
                    if ms > MAX_CALIBRATE_SPAN_MS {
                        Err(format!("--span {t}: at most 24h"))
                    } else {
                        Ok(ms)
                    }
                })?,
        };
        Ok(Config {
            mode,
            delays,
            threads,
            sets,
            // In range, checked above.
            rounds: args.rounds as u32,
            round_ms: args.round_ms as u32,
            pin: match args.pin {
                PinArg::Spread => PinPolicy::Spread,
                PinArg::Compact => PinPolicy::Compact,
                PinArg::None => PinPolicy::None,
            },
            kernel,
            ops,
            stores,
            vendor_gbs: args.vendor_gbs,
            duty: duty as u8,
            huge_pages: match args.huge_pages {
                HugePagesArg::Auto => HugePages::Auto,
                HugePagesArg::On => HugePages::On,
                HugePagesArg::Off => HugePages::Off,
            },
            membind: args.membind,
            interleave: args.interleave,
            max_memory,
            measure: args.measure,
            matrix: args.matrix,
            oversubscribe: args.oversubscribe,
            serve,
            prom_file: args.prom_file,
            format: args.format,
            export: args.export,
            readme: args.readme,
            readme_style: args.readme_style,
            name: args.name,
            node: args.node,
            baseline: args.baseline,
            counters: args.counters == OnOff::On,
            fail_if_slower: args.fail_if_slower,
            allow_single_run: args.allow_single_run,
            repeat,
            calibrate_span_ms,
            contention_drop: args.contention_drop / 100.0,
            contention_rounds: args.contention_rounds as u32,
            record_max: match args.record_max.as_deref() {
                Some(t) => crate::base::units::parse_size(t)
                    .ok()
                    .filter(|&n| n >= 64 << 10)
                    .ok_or_else(|| {
                        format!("--record-max {t}: a size of at least 64KiB, e.g. 256MiB")
                    })?,
                None => DEFAULT_RECORD_MAX,
            },
            probe,
            probe_cpu: args.probe_cpu,
            record: args.record,
            root: args.root,
        })
    }

    /// `--measure loaded-latency`: the chase's working set first, the load's dram set after.
    pub fn is_loaded_latency(&self) -> bool {
        self.measure == Measure::LoadedLatency
    }

    /// `--headless --serve`: sweep until told to stop, answering scrapes.
    pub fn is_service(&self) -> bool {
        self.mode == Mode::Headless && self.serve.is_some()
    }

    /// The thread counts to run with `online` CPUs: the given ones (refused past
    /// `MAX_OVERSUBSCRIPTION` × online unless `--oversubscribe`), or [`default_threads`] over
    /// them and the counts that fill a node or a socket (`domains`), but no more than `quota`
    /// (the whole CPUs of a cgroup's CPU quota) when there is one.
    pub(crate) fn thread_counts(
        &self,
        online: usize,
        quota: Option<usize>,
        domains: &[usize],
    ) -> Result<Vec<usize>> {
        let online = online.max(1);
        match &self.threads {
            Some(t) => {
                let max = MAX_OVERSUBSCRIPTION * online;
                if let Some(bad) = t.iter().find(|&&n| n > max)
                    && !self.oversubscribe
                {
                    return Err(Error::usage(format!(
                        "--threads: {bad} is more than {MAX_OVERSUBSCRIPTION} × the {online} online CPUs (--oversubscribe runs it, as no measurement)"
                    )));
                }
                Ok(t.clone())
            }
            None => Ok(default_threads(
                quota.map_or(online, |q| q.min(online)),
                domains,
            )),
        }
    }
}

/// `--measure loaded-latency`'s sets and delays, and its refusals: one working set for the
/// chase (default `dram`), to which the load's `dram` set is added (the session sizes both;
/// a `dram` chase is the one set), and `--delays` only with it. Other measures keep `sets`.
/// The flags `loaded_latency_args` judges.
struct LoadedArgs<'a> {
    measure: Measure,
    delays: Option<&'a str>,
    sets: Option<&'a str>,
    matrix: bool,
    serve: bool,
    repeat: Option<u64>,
}

fn loaded_latency_args(
    args: LoadedArgs<'_>,
    mode: &Mode,
    sets: Vec<SetSpec>,
) -> Result<(Vec<SetSpec>, Option<Vec<u64>>), String> {
    use crate::engine::latency::loaded::{MAX_DELAY_NS, MAX_DELAYS};
    if args.measure != Measure::LoadedLatency {
        if args.delays.is_some() {
            return Err("--delays: only with --measure loaded-latency".into());
        }
        return Ok((sets, None));
    }
    let refuse = |what: &str| Err(format!("--measure loaded-latency: {what}"));
    if *mode == Mode::Calibrate {
        return refuse("not with calibrate (it measures the spread of bandwidth)");
    }
    if args.matrix {
        return refuse("not with --matrix");
    }
    if args.serve && *mode == Mode::Headless {
        return refuse(
            "not with --headless --serve (one curve, then it ends; --prom-file writes its metrics)",
        );
    }
    if args.repeat.is_some_and(|n| n > 1) {
        return refuse("one curve per run (not with --repeat)");
    }
    let chase = match (args.sets, sets.as_slice()) {
        (None, _) => SetSpec::Level(Level::Dram),
        (Some(_), [SetSpec::Range(_)]) | (Some(_), []) => {
            return refuse(
                "the chase runs one working set, not a range (e.g. --sets dram or --sets 64MiB)",
            );
        }
        (Some(_), [one]) => one.clone(),
        (Some(text), _) => {
            return Err(format!(
                "--sets {text}: --measure loaded-latency chases one working set; name one (e.g. --sets dram)"
            ));
        }
    };
    let delays = args
        .delays
        .map(|t| {
            parse_delays(t, MAX_DELAYS, MAX_DELAY_NS).map_err(|e| format!("--delays {t}: {e}"))
        })
        .transpose()?;
    Ok((vec![chase, SetSpec::Level(Level::Dram)], delays))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernel::{Isa, Op, Variant};

    fn config(args: &[&str]) -> Result<Config, String> {
        let mut v = vec!["stream-top"];
        v.extend_from_slice(args);
        match Config::parse_from(v) {
            Ok(Parsed::Run(c)) => Ok(*c),
            Ok(Parsed::Print(text)) => panic!("{args:?} printed {text}"),
            Err(e) => {
                assert_eq!(e.exit_code(), 2, "{e}");
                Err(e.to_string())
            }
        }
    }

    #[test]
    fn defaults_differ_between_headless_and_live() {
        let h = config(&["--headless"]).unwrap();
        assert_eq!(h.mode, Mode::Headless);
        assert_eq!(h.sets.len(), 2);
        assert_eq!(h.rounds, 21);
        assert_eq!(h.round_ms, 20);
        let live = config(&[]).unwrap();
        assert_eq!(live.mode, Mode::Live);
        assert_eq!(live.sets[0], SetSpec::Level(Level::L1));
    }

    #[test]
    fn measure_is_bandwidth_unless_asked_and_latency_chases_every_level() {
        assert_eq!(config(&["--headless"]).unwrap().measure, Measure::Bandwidth);
        let c = config(&["--headless", "--measure", "latency"]).unwrap();
        assert_eq!(c.measure, Measure::Latency);
        assert_eq!(
            c.sets,
            [Level::L1, Level::L2, Level::L3, Level::Dram].map(SetSpec::Level)
        );
        // Sets, a matrix, repetitions, exports and counters apply to it.
        let c = config(&[
            "--headless",
            "--measure",
            "latency",
            "--sets",
            "l1,64KiB",
            "--repeat",
            "3",
            "--counters",
            "off",
        ])
        .unwrap();
        assert_eq!((c.sets.len(), c.repeat, c.counters), (2, 3, false));
        assert!(
            config(&["--headless", "--measure", "latency", "--matrix"])
                .unwrap()
                .matrix
        );
        // Each refusal in one line: live, loaded latency, flags that mean nothing to a chase.
        for (args, says) in [
            (&["--measure", "latency"][..], "latency is headless for now"),
            (
                &["--headless", "--measure", "latency", "--threads", "2"],
                "--threads: not with --measure latency (one thread chases)",
            ),
            (
                &["--headless", "--measure", "latency", "--huge-pages", "on"],
                "--huge-pages: not with --measure latency",
            ),
        ] {
            let e = config(args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn max_memory_is_a_size_and_no_cap_by_default() {
        assert_eq!(config(&[]).unwrap().max_memory, None);
        let c = config(&["--max-memory", "2GiB"]).unwrap();
        assert_eq!(c.max_memory, Some(2 << 30));
        for bad in ["lots", "0", "1.5.2GiB"] {
            let e = config(&["--max-memory", bad]).unwrap_err();
            assert!(e.starts_with("--max-memory"), "{e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn bad_values_name_their_flag() {
        assert!(
            config(&["--threads", "0"])
                .unwrap_err()
                .starts_with("--threads")
        );
        assert!(
            config(&["--sets", "0MiB"])
                .unwrap_err()
                .starts_with("--sets")
        );
        assert!(
            config(&["--sets", "l2,,dram"])
                .unwrap_err()
                .starts_with("--sets")
        );
        assert!(
            config(&["--vendor-gbs", "-5"])
                .unwrap_err()
                .starts_with("--vendor-gbs")
        );
        assert!(
            config(&["--rounds", "0"])
                .unwrap_err()
                .starts_with("--rounds")
        );
        assert!(config(&["--duty", "0"]).unwrap_err().starts_with("--duty"));
        assert!(
            config(&["--contention-drop", "0"])
                .unwrap_err()
                .starts_with("--contention-drop")
        );
        assert!(
            config(&["--contention-rounds", "0"])
                .unwrap_err()
                .starts_with("--contention-rounds")
        );
        let c = config(&["--contention-drop", "20", "--contention-rounds", "3"]).unwrap();
        assert_eq!((c.contention_drop, c.contention_rounds), (0.2, 3));
        // Past u32, the real range (issue 21, item 10): it said u32's 0..=4294967295.
        assert_eq!(
            config(&["--rounds", "4294967296"]).unwrap_err(),
            "--rounds 4294967296: must be from 1 to 100000"
        );
        assert_eq!(
            config(&["--threads=-1"]).unwrap_err(),
            "--threads -1: '-1' is not a thread count (at least 1)"
        );
        assert_eq!(
            config(&["--sets", "1B"]).unwrap_err(),
            "--sets 1B: '1B' is below 128 B, the least an array can be (one cache line)"
        );
        assert_eq!(
            config(&["--sets", "l1,100/thread"]).unwrap_err(),
            "--sets l1,100/thread: '100/thread' is below 128 B, the least an array can be (one \
             cache line)"
        );
        assert!(config(&["--sets", "128B,128B/thread"]).is_ok());
        assert!(
            config(&["--kernel", "mmx"])
                .unwrap_err()
                .starts_with("--kernel")
        );
        assert!(config(&["--readme", "x.md"]).is_err());
        let c = config(&["--headless", "--threads", "64"]).unwrap();
        assert!(
            c.thread_counts(2, None, &[])
                .unwrap_err()
                .to_string()
                .contains("online CPUs")
        );
        assert_eq!(c.clone().thread_counts(16, None, &[]).unwrap(), vec![64]);
        let o = config(&["--headless", "--threads", "64", "--oversubscribe"]).unwrap();
        assert!(o.oversubscribe);
        assert_eq!(o.thread_counts(2, None, &[]).unwrap(), vec![64]);
        // A CPU quota bounds the defaults, not what is asked for.
        assert_eq!(c.thread_counts(16, Some(1), &[8]).unwrap(), vec![64]);
        let d = config(&["--headless"]).unwrap();
        assert_eq!(d.thread_counts(8, Some(3), &[4]).unwrap(), vec![1, 2, 3]);
        assert_eq!(d.thread_counts(2, Some(6), &[]).unwrap(), vec![1, 2]);
        assert_eq!(
            d.thread_counts(80, Some(48), &[40]).unwrap(),
            vec![1, 2, 4, 8, 16, 32, 40, 48]
        );
    }

    #[test]
    fn serve_address_and_the_service_duty() {
        let c = config(&["--headless", "--serve"]).unwrap();
        assert_eq!(c.serve, Some(DEFAULT_SERVE_ADDR.parse().unwrap()));
        assert!(c.is_service());
        assert_eq!(c.duty, SERVICE_DUTY);
        let c = config(&["--headless", "--serve", "0.0.0.0:9100", "--duty", "50"]).unwrap();
        assert_eq!(c.serve.unwrap().port(), 9100);
        assert_eq!(c.duty, 50);
        let live = config(&["--serve", "[::1]:9464"]).unwrap();
        assert!(!live.is_service());
        assert_eq!(live.duty, 100);
        assert_eq!(config(&["--headless"]).unwrap().duty, 100);
        assert!(
            config(&["--serve", "localhost"])
                .unwrap_err()
                .starts_with("--serve localhost: not an address")
        );
        assert!(config(&["compare", "a", "b", "--serve"]).is_err());
        let f = config(&["--headless", "--prom-file", "/tmp/x.prom"]).unwrap();
        assert_eq!(f.prom_file.unwrap(), PathBuf::from("/tmp/x.prom"));
    }

    #[test]
    fn op_takes_a_list_stream_or_all_and_refuses_an_unknown_name() {
        use crate::engine::kernel::Op;
        assert_eq!(
            config(&[]).unwrap().ops,
            [Op::Triad],
            "the triad by default"
        );
        assert_eq!(config(&["--op", "stream"]).unwrap().ops, Op::STREAM);
        assert_eq!(config(&["--op", "all"]).unwrap().ops, Op::ALL);
        assert_eq!(
            config(&["--op", "read,mix-1:1"]).unwrap().ops,
            [Op::Read, Op::Mix11]
        );
        let e = config(&["--op", "copy,trid"]).unwrap_err();
        assert!(
            e.starts_with("--op copy,trid: unknown op 'trid'") && e.contains("mix-3:1"),
            "{e}"
        );
        assert!(config(&["--op", ""]).is_err());
    }

    #[test]
    fn kernel_takes_auto_an_isa_or_a_loop_and_huge_pages_auto_on_off() {
        let c = config(&[]).unwrap();
        assert_eq!(c.kernel, KernelArg::Auto, "auto is the default");
        assert_eq!(c.huge_pages, HugePages::Auto, "auto is the default");
        assert_eq!(
            config(&["--kernel", "auto"]).unwrap().kernel,
            KernelArg::Auto
        );
        assert_eq!(
            config(&["--kernel", "portable"]).unwrap().kernel,
            KernelArg::Isa(Isa::Portable)
        );
        // Every loop by name ("portable" is also an instruction set, and the same loop).
        for v in Variant::all().filter(|v| v.op == Op::Triad && v.name.parse::<Isa>().is_err()) {
            let stores = v.stores.to_string();
            let c = config(&["--kernel", v.name, "--stores", &stores]).unwrap();
            assert_eq!(c.kernel, KernelArg::Loop(v.name));
            // Dashes for spaces, and the name without -nt with --stores nt.
            let dashed = v.name.replace(' ', "-").replacen("-nt", "", 1);
            let c = config(&["--kernel", &dashed, "--stores", &stores]).unwrap();
            assert_eq!(c.kernel, KernelArg::Loop(v.name), "{dashed}");
        }
        let e = config(&["--kernel", "zmm"]).unwrap_err();
        assert!(
            e.starts_with("--kernel zmm:") && e.contains("'portable'"),
            "{e}"
        );
        // Each loop it offers once: the triad's table, not every op's copy of the names.
        let triad: Vec<&str> = Variant::all()
            .filter(|v| v.op == Op::Triad && v.stores == Stores::Normal)
            .map(|v| v.name)
            .collect();
        for v in Variant::all().filter(|v| v.stores == Stores::Normal) {
            let want = usize::from(triad.contains(&v.name));
            let quoted = format!("'{}'", v.name);
            assert_eq!(e.matches(&quoted).count(), want, "{quoted} in {e}");
        }
        for (arg, want) in [
            ("on", HugePages::On),
            ("off", HugePages::Off),
            ("auto", HugePages::Auto),
        ] {
            assert_eq!(config(&["--huge-pages", arg]).unwrap().huge_pages, want);
        }
        assert!(config(&["--huge-pages", "maybe"]).is_err());
    }

    #[test]
    fn numa_flags_and_the_matrix_exclude_what_they_replace() {
        let c = config(&["--headless", "--membind", "0"]).unwrap();
        assert_eq!((c.membind, c.interleave), (Some(0), false));
        assert!(config(&["--interleave"]).unwrap().interleave);
        let e = config(&["--membind", "0", "--interleave"]).unwrap_err();
        assert!(e.contains("--interleave") && e.contains("--membind"), "{e}");
        assert!(config(&["--headless", "--matrix"]).unwrap().matrix);
        for other in [
            &["--threads", "2"][..],
            &["--sets", "l2"],
            &["--membind", "0"],
        ] {
            let mut argv = vec!["--headless", "--matrix"];
            argv.extend_from_slice(other);
            let e = config(&argv).unwrap_err();
            assert!(e.contains("--matrix") && e.contains(other[0]), "{e}");
        }
        let e = config(&["--oversubscribe", "compare", "a", "b"]).unwrap_err();
        assert!(e.starts_with("--oversubscribe: only when measuring"), "{e}");
    }

    #[test]
    fn percentages_take_the_sign_a_person_types() {
        let c = config(&["--duty", "50%", "--contention-drop", "20 %"]).unwrap();
        assert_eq!((c.duty, c.contention_drop), (50, 0.2));
        let c = config(&["compare", "a", "b", "--fail-if-slower", "5%"]).unwrap();
        assert_eq!(c.fail_if_slower, Some(5.0));
        let e = config(&["--duty", "50.5%"]).unwrap_err();
        assert_eq!(e, "--duty 50.5: must be a whole percentage from 1 to 100");
        let e = config(&["--duty", "5%%"]).unwrap_err();
        assert!(e.contains("'5%%' is not a percentage"), "{e}");
        let e = config(&["--contention-drop", "95%"]).unwrap_err();
        assert!(e.starts_with("--contention-drop 95:"), "{e}");
    }

    #[test]
    fn a_mistyped_flag_keeps_claps_suggestion() {
        assert_eq!(
            config(&["--threds", "2"]).unwrap_err(),
            "unexpected argument '--threds' found; did you mean '--threads'?"
        );
        let e = config(&["--pin", "sprad"]).unwrap_err();
        assert!(e.contains("did you mean 'spread'?"), "{e}");
    }

    #[test]
    fn compare_subcommand() {
        let c = config(&["compare", "a.json", "b.json"]).unwrap();
        assert_eq!(
            c.mode,
            Mode::Compare {
                a: vec!["a.json".into()],
                b: vec!["b.json".into()],
                every: false,
            }
        );
        assert_eq!(c.fail_if_slower, None);
        // Several a side, after `--` B's: a directory then stands for every snapshot in it.
        let c = config(&["compare", "--allow-single-run", "a1", "a2", "--", "dir"]).unwrap();
        assert_eq!(
            c.mode,
            Mode::Compare {
                a: vec!["a1".into(), "a2".into()],
                b: vec!["dir".into()],
                every: true,
            }
        );
        assert!(c.allow_single_run);
        let e = config(&["compare", "a", "--", "b", "--fail-if-slower", "5"]).unwrap_err();
        assert!(e.contains("give flags before the snapshots"), "{e}");
        let e = config(&["compare", "a", "b", "c"]).unwrap_err();
        assert!(e.starts_with("compare: 3 snapshots named"), "{e}");
        // --repeat: headless and calibrate only, 1 to 100; calibrate needs two.
        assert_eq!(config(&["--headless", "--repeat", "5"]).unwrap().repeat, 5);
        assert_eq!(config(&["calibrate"]).unwrap().repeat, CALIBRATE_REPEAT);
        assert_eq!(
            config(&["calibrate", "--sets", "l2", "--repeat", "3"])
                .unwrap()
                .repeat,
            3
        );
        assert!(
            config(&["calibrate", "--repeat", "1"])
                .unwrap_err()
                .contains("2 or more")
        );
        assert!(
            config(&["--headless", "--repeat", "0"])
                .unwrap_err()
                .starts_with("--repeat 0")
        );
        assert!(
            config(&["--repeat", "2"])
                .unwrap_err()
                .contains("only with --headless")
        );
        // The gate goes after the snapshots, as a CI step writes it, or before the subcommand.
        for argv in [
            &["compare", "a.json", "b.json", "--fail-if-slower", "5"][..],
            &["--fail-if-slower", "5", "compare", "a.json", "b.json"][..],
        ] {
            assert_eq!(config(argv).unwrap().fail_if_slower, Some(5.0), "{argv:?}");
        }
        let e = config(&["compare", "a", "b", "--fail-if-slower", "-3"]).unwrap_err();
        assert!(e.contains("--fail-if-slower"), "{e}");
        let e = config(&["--headless", "--fail-if-slower", "5"]).unwrap_err();
        assert!(e.contains("only with `stream-top compare"), "{e}");
        let e = config(&["compare", "a", "b", "--counters", "off"]).unwrap_err();
        assert!(e.contains("--counters"), "{e}");
        assert!(
            !config(&["--headless", "--counters", "off"])
                .unwrap()
                .counters
        );
        assert!(config(&["--headless"]).unwrap().counters);
    }

    #[test]
    fn the_probe_is_on_in_a_service_asked_for_elsewhere_and_alone_refuses_triad_flags() {
        assert_eq!(config(&[]).unwrap().probe, ProbeMode::Off);
        assert_eq!(config(&["--probe"]).unwrap().probe, ProbeMode::On);
        assert_eq!(
            config(&["--headless", "--probe"]).unwrap().probe,
            ProbeMode::On
        );
        assert_eq!(config(&["--probe-only"]).unwrap().probe, ProbeMode::Only);
        assert_eq!(
            config(&["--headless", "--serve"]).unwrap().probe,
            ProbeMode::On
        );
        let off = config(&["--headless", "--serve", "--no-probe"]).unwrap();
        assert_eq!(off.probe, ProbeMode::Off);
        assert_eq!(
            config(&["--probe", "--probe-cpu", "1"]).unwrap().probe_cpu,
            Some(1)
        );
        for (argv, message) in [
            (
                &["--probe-only", "--threads", "1"][..],
                "--probe-only: no triad runs, so --threads would do nothing; drop one of them",
            ),
            (
                &["--probe-only", "--sets", "dram"][..],
                "--probe-only: no triad runs, so --sets would do nothing; drop one of them",
            ),
            (
                &["--probe-only", "--round-ms", "5"][..],
                "--probe-only: no triad runs, so --round-ms would do nothing; drop one of them",
            ),
            (
                &["--headless", "--probe-only"][..],
                "--probe-only: only for the live monitor, not with --headless",
            ),
            (
                &["--no-probe"][..],
                "--no-probe: only with --headless --serve, not for the live monitor (the \
                 probe is on there unless told)",
            ),
            (
                &["--probe-cpu", "1"][..],
                "--probe-cpu: only with --probe or --probe-only",
            ),
            (
                &["--headless", "--serve", "--no-probe", "--probe-cpu", "1"][..],
                "--probe-cpu: only with the probe (drop --no-probe)",
            ),
        ] {
            assert_eq!(config(argv).unwrap_err(), message, "{argv:?}");
        }
        assert!(
            config(&["--probe", "--probe-only"])
                .unwrap_err()
                .contains("cannot be used with")
        );
    }

    #[test]
    fn flags_that_do_nothing_here_are_refused_with_where_they_apply() {
        for (args, says) in [
            (
                &["--headless", "--duty", "50"][..],
                "--duty: only for the live monitor or --headless --serve, not with --headless",
            ),
            (
                &["--format", "json"][..],
                "--format: only with --headless, not for the live monitor",
            ),
            (&["--readme", "x.md"][..], "--readme: only with --headless"),
            (
                &["--headless", "--baseline", "a.json"][..],
                "--baseline: only for the live monitor",
            ),
            (
                &["--round-ms", "5", "compare", "a", "b"][..],
                "--round-ms: only when measuring",
            ),
            (
                &["--headless", "compare", "a", "b"][..],
                "--headless: only when measuring",
            ),
        ] {
            let err = config(args).unwrap_err();
            assert!(err.starts_with(says), "{args:?}: {err}");
        }
        // Defaults are not "given": the live monitor's duty and headless's format stay quiet.
        assert!(config(&["--headless"]).is_ok());
        assert!(config(&["--duty", "50"]).is_ok());
        assert!(config(&["--headless", "--format", "csv", "--export", "d"]).is_ok());
    }

    #[test]
    fn names_are_checked_for_file_names() {
        let c = config(&["--headless", "--name", "before-1.2_x"]).unwrap();
        assert_eq!(c.name.as_deref(), Some("before-1.2_x"));
        for bad in ["", "a b", "a/b", "../x", ".hidden", "é", &"x".repeat(65)] {
            let err = config(&["--headless", "--name", bad]).unwrap_err();
            assert!(err.starts_with("--name"), "{bad:?}: {err}");
        }
        assert!(
            config(&["--name", "x", "compare", "a", "b"])
                .unwrap_err()
                .starts_with("--name: only when measuring")
        );
    }

    #[test]
    fn readme_style_needs_a_readme() {
        let c = config(&[
            "--headless",
            "--readme",
            "R.md",
            "--readme-style",
            "compact",
        ])
        .unwrap();
        assert_eq!(c.readme_style, ReadmeStyle::Compact);
        assert_eq!(
            config(&["--headless", "--readme-style", "compact"]).unwrap_err(),
            "--readme-style: only with --readme FILE"
        );
        assert!(
            config(&["--readme-style", "full"])
                .unwrap_err()
                .starts_with("--readme-style: only with --headless")
        );
        assert_eq!(
            config(&["--headless"]).unwrap().readme_style,
            ReadmeStyle::Full
        );
    }

    #[test]
    fn ranges_of_sizes_mix_with_other_sets() {
        let c = config(&["--headless", "--sets", "l1,16KiB..1MiB"]).unwrap();
        assert_eq!(c.sets[0], SetSpec::Level(Level::L1));
        let SetSpec::Range(r) = &c.sets[1] else {
            panic!("{:?}", c.sets[1])
        };
        assert_eq!((r.points.len(), r.per_octave, r.per_thread), (13, 2, false));
        let c = config(&[
            "--sets",
            "4KiB/thread..64MiB/thread",
            "--points-per-octave",
            "4",
        ])
        .unwrap();
        let SetSpec::Range(r) = &c.sets[0] else {
            panic!()
        };
        assert_eq!((r.points.len(), r.per_thread), (57, true));
        for (args, says) in [
            (
                &["--sets", "1MiB..16KiB"][..],
                "--sets 1MiB..16KiB: '1MiB..16KiB' runs backwards",
            ),
            (
                &["--sets", "l2,4KiB/thread..1MiB"][..],
                "--sets l2,4KiB/thread..1MiB: '4KiB/thread..1MiB' has one end per thread",
            ),
            (&["--sets", "0..1MiB"][..], "--sets 0..1MiB: '0' is zero"),
            (
                &["--sets", "16KiB..1GiB", "--points-per-octave", "16"][..],
                "--sets 16KiB..1GiB: '16KiB..1GiB' gives 257 sizes",
            ),
            (
                &["--sets", "16KiB..1MiB", "--points-per-octave", "0"][..],
                "--points-per-octave 0: must be from 1 to 16",
            ),
            (
                &["--sets", "16KiB..1MiB", "--points-per-octave", "17"][..],
                "--points-per-octave 17: must be from 1 to 16",
            ),
            (
                &["--sets", "l1,64MiB", "--points-per-octave", "4"][..],
                "--points-per-octave: only with a range of sizes in --sets",
            ),
            (
                &["--points-per-octave", "4"][..],
                "--points-per-octave: only with a range of sizes in --sets",
            ),
            (
                &["--points-per-octave", "4", "compare", "a", "b"][..],
                "--points-per-octave: only when measuring",
            ),
        ] {
            let err = config(args).unwrap_err();
            assert!(err.starts_with(says), "{args:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn a_missing_argument_is_named() {
        let err = config(&["compare"]).unwrap_err();
        assert!(err.contains("not provided: <A.json|DIR>"), "{err}");
        assert!(err.contains("usage: stream-top compare"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = config(&["compare", "a.json"]).unwrap_err();
        assert!(
            err.starts_with("compare: one snapshot named; name two"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }
}
