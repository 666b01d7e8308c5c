//! The command line's checks, one step per area of flags (the grid, the kernel and memory,
//! the live monitor, reports and files, comparison, service and recording, latency). Each step
//! takes clap's `Args` and returns its part of the `Config`, or the one-line usage error (exit
//! 2) that names the flag at fault.

use super::args::DEFAULT_SERVE_ADDR;
use super::args::{Args, FormatArg, HugePagesArg, Measure, PinArg, SERVICE_DUTY, StoresArg, Sub};
use super::config::Mode;
use super::values::{
    KernelArg, check_name, check_node, parse_delays, parse_sets, parse_size_flag, parse_threads,
    refuse_negative,
};
use crate::base::error::{Error, Result};
use crate::base::quote::quote;
use crate::engine::kernel::{Op, Stores};
use crate::engine::plan::{HugePages, Level, SetSpec};
use crate::engine::sweep::{DEFAULT_POINTS_PER_OCTAVE, check_points_per_octave};
use crate::machine::topology::PinPolicy;
use crate::machine::vendor::usable_gbs;
use std::net::SocketAddr;
use std::path::PathBuf;

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

/// `--record-max`'s least: a recording's header and a few rounds.
const MIN_RECORD_MAX: u64 = 64 << 10;

/// A usage error for `flag` (with its value, as given) and the reason.
fn refuse<T>(flag: impl std::fmt::Display, why: impl std::fmt::Display) -> Result<T> {
    Err(Error::usage(format!("{flag}: {why}")))
}

/// The mode the subcommand (or `--headless`) asks for, with the subcommand's own flags moved
/// into `args` (where they may also be given before the subcommand's name); `compare`'s
/// snapshots are checked here. `given_before`: the flags given before the subcommand.
pub(super) fn mode(
    args: &mut Args,
    given_before: &[String],
    given_after: &[String],
) -> Result<Mode> {
    Ok(match args.command.take() {
        Some(Sub::Compare { a, b, gate }) => {
            args.fail_if_slower = gate.fail_if_slower.or(args.fail_if_slower);
            args.allow_single_run |= gate.allow_single_run;
            compare_mode(a, b)?
        }
        Some(Sub::Calibrate { grid, repeat, span }) => {
            let is_grid = |id: &String| GRID_IDS.contains(&id.as_str());
            if given_after.iter().any(is_grid) {
                if let Some(before) = given_before.iter().find(|&id| is_grid(id)) {
                    return refuse(
                        format!("--{}", before.replace('_', "-")),
                        "give calibrate's grid flags all after `calibrate` or all before it",
                    );
                }
                args.grid = grid;
            }
            args.repeat = repeat.or(args.repeat);
            args.span = span.or(args.span.take());
            Mode::Calibrate
        }
        Some(Sub::Replay {
            files,
            headless,
            at,
            from,
            to,
            format,
        }) => {
            for (long, value) in [("at", &at), ("from", &from), ("to", &to)] {
                if let Some(v) = value {
                    refuse_negative(long, v)?;
                }
            }
            Mode::Replay {
                files,
                headless,
                at,
                window: from.zip(to),
                format,
            }
        }
        Some(Sub::Fleet(f)) => Mode::Fleet(f),
        Some(Sub::Check(c)) => Mode::Check(c),
        None if args.headless => Mode::Headless,
        None => Mode::Live,
    })
}

/// Refuses a negative number given to a flag of text that takes none (`--threads -1`); clap
/// refuses those of the flags it reads as numbers (`Config::parse_from`).
pub(super) fn negatives(args: &Args) -> Result<()> {
    for (long, value) in [
        ("threads", &args.grid.threads),
        ("delays", &args.delays),
        ("span", &args.span),
        ("max-memory", &args.max_memory),
        ("record-max", &args.record_max),
    ] {
        if let Some(v) = value {
            refuse_negative(long, v)?;
        }
    }
    Ok(())
}

/// The ids of `GridArgs`' flags.
const GRID_IDS: &[&str] = &[
    "threads",
    "sets",
    "rounds",
    "round_ms",
    "pin",
    "kernel",
    "op",
    "stores",
    "huge_pages",
    "choices_from",
];

/// `compare A B`, or `compare A1 A2 … -- B1 B2 …`.
fn compare_mode(a: Vec<PathBuf>, b: Vec<PathBuf>) -> Result<Mode> {
    if !b.is_empty() {
        // After `--` everything is a path: a flag there was meant for compare.
        if let Some(flag) = b.iter().find(|p| p.to_string_lossy().starts_with("--")) {
            return refuse(
                "compare",
                format!(
                    "{} after `--` is read as B's snapshot; give flags before the snapshots \
                     (compare --fail-if-slower 5 A1 A2 -- B1 B2)",
                    flag.display()
                ),
            );
        }
        return Ok(Mode::Compare { a, b, every: true });
    }
    match <[PathBuf; 2]>::try_from(a) {
        Ok([a, b]) => Ok(Mode::Compare {
            a: vec![a],
            b: vec![b],
            every: false,
        }),
        Err(a) => {
            let named = if a.len() == 1 {
                "one snapshot".to_string()
            } else {
                format!("{} snapshots", a.len())
            };
            refuse(
                "compare",
                format!(
                    "{named} named; name two (compare A.json B.json), or several a side with \
                     `--` between them (compare A1 A2 -- B1 B2)"
                ),
            )
        }
    }
}

/// The grid: thread counts, working sets (with the loaded-latency chase's), rounds.
pub(super) struct Grid {
    pub threads: Option<Vec<usize>>,
    pub sets: Vec<SetSpec>,
    pub(crate) delays: Option<Vec<u64>>,
    pub(crate) rounds: u32,
    pub(crate) round_ms: u32,
}

/// The working sets when `--sets` is not given: what each mode is for.
fn default_sets(measure: Measure, mode: &Mode) -> Vec<SetSpec> {
    let levels: &[Level] = match (measure, mode) {
        (Measure::Latency, _) => &[Level::L1, Level::L2, Level::L3, Level::Dram],
        (_, Mode::Headless) => &[Level::L2, Level::Dram],
        _ => &[Level::L1, Level::L2, Level::Dram],
    };
    levels.iter().map(|&l| SetSpec::Level(l)).collect()
}

/// `--threads`, `--sets`, `--points-per-octave`, `--rounds`, `--round-ms`, and `--measure
/// loaded-latency`'s sets and `--delays`.
pub(super) fn grid(args: &Args, mode: &Mode) -> Result<Grid> {
    let threads = args
        .grid
        .threads
        .as_deref()
        .map(|t| parse_threads(t).map_err(|e| e.on(&format!("--threads {t}"))))
        .transpose()?;
    let per_octave = args
        .points_per_octave
        .map(check_points_per_octave)
        .transpose()?;
    let sets = match args.grid.sets.as_deref() {
        Some(s) => parse_sets(s, per_octave.unwrap_or(DEFAULT_POINTS_PER_OCTAVE))
            .map_err(|e| e.on(&format!("--sets {s}")))?,
        None => default_sets(args.measure, mode),
    };
    let (sets, delays) = latency(args, mode, sets)?;
    if per_octave.is_some() && !sets.iter().any(|s| matches!(s, SetSpec::Range(_))) {
        return refuse(
            "--points-per-octave",
            "only with a range of sizes in --sets (e.g. --sets 16KiB..1GiB)",
        );
    }
    Ok(Grid {
        threads,
        sets,
        delays,
        rounds: count_in("--rounds", args.grid.rounds, 100_000)?,
        round_ms: count_in("--round-ms", args.grid.round_ms, 60_000)?,
    })
}

/// A count from 1 to `most`, or "--flag N: must be from 1 to MOST".
fn count_in(flag: &str, n: u64, most: u64) -> Result<u32> {
    if n == 0 || n > most {
        return refuse(format!("{flag} {n}"), format!("must be from 1 to {most}"));
    }
    // In range: `most` fits a u32.
    Ok(n as u32)
}

/// The kernel, its ops and stores, placement and the arrays' memory.
pub(super) struct KernelAndMemory {
    pub(crate) pin: PinPolicy,
    pub(crate) kernel: KernelArg,
    pub(crate) ops: Vec<Op>,
    pub(crate) stores: Stores,
    pub(crate) huge_pages: HugePages,
    pub(crate) choices_from: Option<PathBuf>,
    pub(crate) max_memory: Option<u64>,
    pub(crate) vendor_gbs: Option<f64>,
}

/// `--pin`, `--kernel`, `--op`, `--stores`, `--huge-pages`, `--max-memory`, `--vendor-gbs`.
pub(super) fn kernel_and_memory(args: &Args) -> Result<KernelAndMemory> {
    let max_memory = args
        .max_memory
        .as_deref()
        .map(|s| {
            parse_size_flag(
                s,
                1,
                "a memory cap of no bytes holds no array; give a size, e.g. 2GiB",
            )
            .map_err(|e| e.on(&format!("--max-memory {s}")))
        })
        .transpose()?;
    if let Some(v) = args.vendor_gbs
        && !usable_gbs(v)
    {
        return refuse(
            format!("--vendor-gbs {v}"),
            "must be a positive figure in GB/s",
        );
    }
    let stores = match args.grid.stores {
        StoresArg::Normal => Stores::Normal,
        StoresArg::Nt => Stores::Nt,
    };
    let kernel = KernelArg::parse(&args.grid.kernel, stores)?;
    let ops = Op::parse_list(&args.grid.op)
        .map_err(|e| Error::usage(format!("--op {}: {e}", args.grid.op)))?;
    let huge_pages = match args.grid.huge_pages {
        HugePagesArg::Auto => HugePages::Auto,
        HugePagesArg::On => HugePages::On,
        HugePagesArg::Off => HugePages::Off,
    };
    if let Some(file) = &args.grid.choices_from {
        choices_from_alone(file, args, &kernel, huge_pages)?;
    }
    Ok(KernelAndMemory {
        pin: match args.grid.pin {
            PinArg::Spread => PinPolicy::Spread,
            PinArg::Compact => PinPolicy::Compact,
            PinArg::None => PinPolicy::None,
        },
        kernel,
        ops,
        stores,
        huge_pages,
        choices_from: args.grid.choices_from.clone(),
        max_memory,
        vendor_gbs: args.vendor_gbs,
    })
}

/// `--choices-from FILE` gives every loop and page layout: a `--kernel` or `--huge-pages`
/// other than `auto` would contradict it, and the loaded-latency curve's load settles none.
fn choices_from_alone(
    file: &std::path::Path,
    args: &Args,
    kernel: &KernelArg,
    huge_pages: HugePages,
) -> Result<()> {
    let flag = format!("--choices-from {}", file.display());
    let other = match (kernel, huge_pages) {
        (KernelArg::Auto, HugePages::Auto) => None,
        (KernelArg::Auto, pages) => Some(format!("--huge-pages {pages}")),
        _ => Some(format!("--kernel {}", args.grid.kernel)),
    };
    if let Some(other) = other {
        return refuse(
            flag,
            format!(
                "it gives each working set's loop and page layout, so {other} contradicts it; \
                 drop one of them"
            ),
        );
    }
    if args.measure == Measure::LoadedLatency {
        return refuse(flag, "not with --measure loaded-latency");
    }
    Ok(())
}

/// `--contention-drop` (as a fraction) and `--contention-rounds`: the live monitor's watch.
pub(super) fn live_monitor(args: &Args) -> Result<(f64, u32)> {
    if !(1.0..=90.0).contains(&args.contention_drop) {
        return refuse(
            format!("--contention-drop {}", args.contention_drop),
            "must be a percentage from 1 to 90",
        );
    }
    let rounds = count_in("--contention-rounds", args.contention_rounds, 1000)?;
    Ok((args.contention_drop / 100.0, rounds))
}

/// `--format`, `--readme-style`, `--name`, `--node`: what the reports can hold of the run's
/// `ops`, and names they can show.
pub(super) fn reports_and_files(args: &Args, given: &[String], ops: &[Op]) -> Result<()> {
    if given.iter().any(|g| g == "readme_style") && args.readme.is_none() {
        return refuse("--readme-style", "only with --readme FILE");
    }
    if let Some(name) = &args.name {
        check_name(name).map_err(|e| e.on(&format!("--name {name:?}")))?;
    }
    if let Some(node) = &args.node {
        check_node(node).map_err(|e| e.on(&format!("--node {node:?}")))?;
    }
    if args.format == FormatArg::Stream && !ops.iter().any(|op| op.stream_name().is_some()) {
        return refuse(
            "--format stream",
            format!(
                "STREAM's table has only its own ops, and --op {} has none of them (copy, \
                 scale, add, triad; --op stream runs the four)",
                args.grid.op
            ),
        );
    }
    if args.format == FormatArg::Stream && args.measure != Measure::Bandwidth {
        return refuse(
            "--format stream",
            "STREAM's table is a bandwidth table, not one of --measure's latencies (md, csv or \
             json)",
        );
    }
    Ok(())
}

/// `compare`'s gate and the repetitions it judges by: `--fail-if-slower`, `--repeat`,
/// `calibrate --span`.
pub(super) struct Comparison {
    pub(crate) fail_if_slower: Option<f64>,
    pub(crate) repeat: u32,
    pub(crate) calibrate_span_ms: u64,
}

pub(super) fn comparison(args: &Args, mode: &Mode) -> Result<Comparison> {
    if let Some(p) = args.fail_if_slower
        && !(p.is_finite() && (0.0..100.0).contains(&p))
    {
        return refuse(
            format!("--fail-if-slower {p}"),
            "must be a percentage from 0 to under 100",
        );
    }
    let repeat = match args.repeat {
        None if *mode == Mode::Calibrate => CALIBRATE_REPEAT,
        None => 1,
        Some(n) if (1..=MAX_REPEAT).contains(&n) => n as u32,
        Some(n) => {
            return refuse(
                format!("--repeat {n}"),
                format!("must be from 1 to {MAX_REPEAT}"),
            );
        }
    };
    if *mode == Mode::Calibrate && repeat < 2 {
        return refuse(
            format!("--repeat {repeat}"),
            "calibrate needs 2 or more repetitions to see a spread",
        );
    }
    let calibrate_span_ms = match args.span.as_deref() {
        None => CALIBRATE_SPAN_MS,
        Some(t) => {
            let ms = crate::base::time::parse_duration_ms(t)
                .map_err(|e| Error::usage(format!("--span {t}: {e}")))?;
            if ms > MAX_CALIBRATE_SPAN_MS {
                return refuse(format!("--span {t}"), "at most 24h");
            }
            ms
        }
    };
    Ok(Comparison {
        fail_if_slower: args.fail_if_slower,
        repeat,
        calibrate_span_ms,
    })
}

/// A service's address and duty, and the recording's cap.
pub(super) struct ServiceAndRecording {
    pub(crate) serve: Option<SocketAddr>,
    pub(crate) duty: u8,
    pub(crate) record_max: u64,
}

/// `--serve`, `--duty`, `--record-max`.
pub(super) fn service_and_recording(args: &Args, mode: &Mode) -> Result<ServiceAndRecording> {
    let serve = args
        .serve
        .as_deref()
        .map(|a| {
            a.parse::<SocketAddr>().map_err(|_| {
                Error::usage(format!(
                    "--serve {}: not an address to listen on (IP:PORT, e.g. {DEFAULT_SERVE_ADDR})",
                    quote(a)
                ))
            })
        })
        .transpose()?;
    if let Some(file) = &args.web_config
        && serve.is_none()
    {
        return refuse(
            format!("--web-config {}", file.display()),
            "only with --serve (it secures the endpoint)",
        );
    }
    let service = *mode == Mode::Headless && serve.is_some();
    let duty = args
        .duty
        .unwrap_or(if service { SERVICE_DUTY.into() } else { 100.0 });
    if !(1.0..=100.0).contains(&duty) || duty.fract() != 0.0 {
        return refuse(
            format!("--duty {duty}"),
            "must be a whole percentage from 1 to 100",
        );
    }
    let record_max = match args.record_max.as_deref() {
        Some(t) => parse_size_flag(t, MIN_RECORD_MAX, "a size of at least 64KiB, e.g. 256MiB")
            .map_err(|e| e.on(&format!("--record-max {t}")))?,
        None => DEFAULT_RECORD_MAX,
    };
    Ok(ServiceAndRecording {
        serve,
        duty: duty as u8,
        record_max,
    })
}

/// `--measure loaded-latency`'s sets and delays, and its refusals: one working set for the
/// chase (default `dram`), to which the load's `dram` set is added (the session sizes both;
/// a `dram` chase is the one set), and `--delays` only with it. Other measures keep `sets`.
fn latency(
    args: &Args,
    mode: &Mode,
    sets: Vec<SetSpec>,
) -> Result<(Vec<SetSpec>, Option<Vec<u64>>)> {
    use crate::engine::latency::loaded::{MAX_DELAY_NS, MAX_DELAYS};
    if args.measure != Measure::LoadedLatency {
        if args.delays.is_some() {
            return refuse("--delays", "only with --measure loaded-latency");
        }
        return Ok((sets, None));
    }
    let not = |what: &str| refuse("--measure loaded-latency", what);
    if *mode == Mode::Calibrate {
        return not("not with calibrate (it measures the spread of bandwidth)");
    }
    if args.matrix {
        return not("not with --matrix");
    }
    if args.serve.is_some() && *mode == Mode::Headless {
        return not(
            "not with --headless --serve (one curve, then it ends; --prom-file writes its metrics)",
        );
    }
    if args.repeat.is_some_and(|n| n > 1) {
        return not("one curve per run (not with --repeat)");
    }
    let chase = match (args.grid.sets.as_deref(), sets.as_slice()) {
        (None, _) => SetSpec::Level(Level::Dram),
        (Some(_), [SetSpec::Range(_)]) | (Some(_), []) => {
            return not(
                "the chase runs one working set, not a range (e.g. --sets dram or --sets 64MiB)",
            );
        }
        (Some(_), [one]) => one.clone(),
        (Some(text), _) => {
            return refuse(
                format!("--sets {text}"),
                "--measure loaded-latency chases one working set; name one (e.g. --sets dram)",
            );
        }
    };
    let delays = args
        .delays
        .as_deref()
        .map(|t| {
            parse_delays(t, MAX_DELAYS, MAX_DELAY_NS).map_err(|e| e.on(&format!("--delays {t}")))
        })
        .transpose()?;
    Ok((vec![chase, SetSpec::Level(Level::Dram)], delays))
}
