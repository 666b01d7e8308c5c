//! The command line: clap parses, `Config::parse_from` validates into what the rest takes.
//! Every error a person can cause here is one line naming the flag, and exit code 2; a flag
//! that would do nothing in the chosen mode is refused with where it applies (`APPLIES`).

use crate::base::error::{Error, Result};
use crate::engine::kernel::{Isa, Stores, Variant};
use crate::engine::plan::{HugePages, Level, SetSpec};
use crate::engine::sweep::{DEFAULT_POINTS_PER_OCTAVE, check_points_per_octave};
use crate::machine::topology::PinPolicy;
use crate::machine::vendor::usable_gbs;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The largest thread count accepted, as a multiple of the online CPUs.
pub(crate) const MAX_OVERSUBSCRIPTION: usize = 4;

/// `--serve` with no address: loopback only; another interface must be named.
pub const DEFAULT_SERVE_ADDR: &str = "127.0.0.1:9464";

/// `--duty` of `--headless --serve`, a canary on every node: rounds run 2 % of the time
/// (warm-up rounds add a little), so the node keeps about 97 % of its memory bandwidth and CPU
/// while a sweep still ends every minute or two (the README says why).
pub const SERVICE_DUTY: u8 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "stream-top",
    version,
    about = "top for memory bandwidth: the STREAM triad over thread counts × working sets, live",
    long_about = "top for memory bandwidth. Worker threads run the STREAM triad a[i] = b[i] + s*c[i] \
over a grid of thread counts × working sets (cache-resident and DRAM-sized) and show, live, \
what each cell delivers: median GB/s, best, cv, fraction of the vendor figure, scaling, fastest \
and slowest thread, late rounds.\n\nWith no flags on a terminal it opens the live monitor; \
--headless runs one sweep and prints the table; `stream-top compare A.json B.json` compares \
two snapshots.",
    after_help = "Working sets: l1, l2, l3 (last level), dram (each array ≥ 4× all last-level cache), \
SIZE (per array, split across threads, e.g. 256MiB) or SIZE/thread (per array per thread, e.g. 1MiB/thread); \
a range of sizes sweeps them on a log scale to find the cache edges (16KiB..1GiB or 4KiB/thread..64MiB/thread).\n\
Examples:\n  stream-top\n  stream-top --headless --threads 1,2 --sets l1,l2,dram\n  \
stream-top --headless --threads 1 --sets 16KiB..1GiB --points-per-octave 4\n  \
stream-top --headless --format json > run.json\n  \
stream-top --headless --name before --export results\n  stream-top compare before.json after.json\n  \
stream-top compare results/stream-top-before-*.json results\n  \
stream-top --headless --matrix            # the NUMA bandwidth matrix, CPU node × memory node"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Sub>,

    /// Run one sweep of the grid and print the table instead of the live monitor.
    #[arg(long)]
    pub headless: bool,

    /// Thread counts, e.g. 1,2,4 or 1-4 [default: 1, 2, 4, … and all online CPUs].
    #[arg(short, long, value_name = "LIST")]
    pub threads: Option<String>,

    /// Working sets, e.g. l1,l2,dram or 64MiB or 1MiB/thread, or a range to sweep, e.g. 16KiB..1GiB [default: l2,dram headless; l1,l2,dram live].
    #[arg(short, long, value_name = "LIST")]
    pub sets: Option<String>,

    /// Sizes per doubling in a range of --sets (16KiB..1GiB), 1 to 16 [default: 2].
    #[arg(long, value_name = "N")]
    pub points_per_octave: Option<u32>,

    /// Timed rounds per cell (headless), or the rounds each cell's statistics cover (live).
    #[arg(long, default_value_t = 21, value_name = "N")]
    pub rounds: u32,

    /// Each round lasts at least this long; a DRAM round is at least one whole pass.
    #[arg(long, default_value_t = 20, value_name = "MS")]
    pub round_ms: u32,

    /// Thread placement: spread (across NUMA nodes, then cores, SMT siblings last), compact, none.
    #[arg(long, value_enum, default_value_t = PinArg::Spread)]
    pub pin: PinArg,

    /// Kernel: auto (per working set, the fastest loop this CPU runs, by a short trial), an
    /// instruction set to pin (avx512, avx2, sse2, neon, portable: its default loop), or one
    /// loop of the table by name (e.g. 'avx2 xmm fma'; see docs/kernels.md).
    #[arg(long, default_value = "auto", value_name = "auto|ISA|LOOP")]
    pub kernel: String,

    /// How the kernel stores a: normal, or nt (non-temporal, bypassing the caches).
    #[arg(long, value_enum, default_value_t = StoresArg::Normal)]
    pub stores: StoresArg,

    /// Transparent huge pages for the arrays: auto (per working set: by trial in cache, on for
    /// memory), on (madvise MADV_HUGEPAGE) or off (MADV_NOHUGEPAGE).
    #[arg(long, value_enum, default_value_t = HugePagesArg::Auto, value_name = "auto|on|off")]
    pub huge_pages: HugePagesArg,

    /// Take the arrays' pages from NUMA node NODE only (mbind MPOL_BIND) [default: first touch, each partition on its thread's node].
    #[arg(long, value_name = "NODE", conflicts_with = "interleave")]
    pub membind: Option<usize>,

    /// Interleave the arrays' pages across every NUMA node (mbind MPOL_INTERLEAVE).
    #[arg(long)]
    pub interleave: bool,

    /// Measure the NUMA bandwidth matrix instead of the grid: every CPU node × memory node, all cores of the CPU node streaming a dram-sized set bound to the memory node.
    #[arg(long, conflicts_with_all = ["threads", "sets", "membind", "interleave"])]
    pub matrix: bool,

    /// Allow thread counts above 4 × the usable CPUs (spinning workers then yield the CPU); every figure is marked as not a measurement.
    #[arg(long)]
    pub oversubscribe: bool,

    /// The vendor's peak memory bandwidth in GB/s, for the fraction column [default: from SMBIOS].
    #[arg(long, value_name = "GB/s", allow_negative_numbers = true)]
    pub vendor_gbs: Option<f64>,

    /// Run rounds only this share of the time, in percent (live monitor: `d` cycles 100/50/10) [default: 100; 2 for --headless --serve].
    #[arg(long, value_name = "PERCENT")]
    pub duty: Option<u32>,

    /// Serve the figures to Prometheus at http://ADDR/metrics [default ADDR: 127.0.0.1:9464]; with --headless, keep sweeping until SIGTERM.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_SERVE_ADDR)]
    pub serve: Option<String>,

    /// Write the Prometheus exposition to FILE (atomically) after each sweep, for node_exporter's textfile collector.
    #[arg(long, value_name = "FILE")]
    pub prom_file: Option<PathBuf>,

    /// Table format on stdout (headless).
    #[arg(long, value_enum, default_value_t = FormatArg::Md)]
    pub format: FormatArg,

    /// Write a snapshot (md, csv, json, svg) into DIR: at the end (headless) or on `e` (live) [default for `e`: results].
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,

    /// Replace what stands between <!-- stream-top:begin --> and <!-- stream-top:end --> in FILE with the table (headless).
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,

    /// What --readme writes: full (every line and column) or compact (the working set, threads, median, best, cv and vendor-fraction columns).
    #[arg(long, value_enum, default_value_t = ReadmeStyle::Full, value_name = "full|compact")]
    pub readme_style: ReadmeStyle,

    /// A label for this run: in the snapshot and the exported file names (stream-top-LABEL-HOST-…); letters, digits, '-', '_', '.'.
    #[arg(long, value_name = "LABEL")]
    pub name: Option<String>,

    /// A JSON snapshot to show each cell's change against (live), with a verdict per cell; its medians are the cells' references for contention.
    #[arg(long, value_name = "A.json")]
    pub baseline: Option<PathBuf>,

    /// Per-thread counters (context switches, migrations, page faults, task clock; cycles, instructions, LLC misses where the PMU allows): on or off.
    #[arg(long, value_enum, default_value_t = OnOff::On, value_name = "on|off")]
    pub counters: OnOff,

    /// compare: exit 1 when any cell of B is significantly slower than A's by more than PERCENT (a regression gate for CI).
    #[arg(
        long,
        global = true,
        value_name = "PERCENT",
        allow_negative_numbers = true
    )]
    pub fail_if_slower: Option<f64>,

    /// A cell is contended when its rounds fall more than this far below its reference, in percent; it is over within half of it (live).
    #[arg(long, default_value_t = 15.0, value_name = "PERCENT")]
    pub contention_drop: f64,

    /// Slow rounds in a row that begin contention; it ends when the median of the last N has recovered (live).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub contention_rounds: u32,

    /// Root of the sysfs and /proc trees to read (for tests).
    #[arg(long, hide = true, default_value = "/")]
    pub root: PathBuf,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Compare two JSON snapshots: A, B and B/A for each cell in both. A directory stands for
    /// its newest snapshot (by the time written in it).
    Compare {
        #[arg(value_name = "A.json|DIR")]
        a: PathBuf,
        #[arg(value_name = "B.json|DIR")]
        b: PathBuf,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinArg {
    Spread,
    Compact,
    None,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoresArg {
    Normal,
    Nt,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

/// What `--readme` puts between the markers.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadmeStyle {
    /// The lines above the table, every column, the derived table.
    Full,
    /// The first lines, the notes, and a table of working set, threads, median, best, cv and
    /// fraction of the vendor figure.
    Compact,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugePagesArg {
    Auto,
    On,
    Off,
}

/// `--kernel` as given: checked against the table here, against the CPU in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    Auto,
    Isa(Isa),
    /// A loop of the table, by its name there (for the run's stores).
    Loop(&'static str),
}

impl KernelArg {
    fn parse(text: &str, stores: Stores) -> Result<KernelArg, String> {
        if text == "auto" {
            return Ok(KernelArg::Auto);
        }
        if let Ok(isa) = text.parse::<Isa>() {
            return Ok(KernelArg::Isa(isa));
        }
        if let Some(v) = Variant::named(text, stores) {
            return Ok(KernelArg::Loop(v.name));
        }
        let loops: Vec<String> = Variant::all()
            .filter(|v| v.stores == stores)
            .map(|v| format!("'{}'", v.name))
            .collect();
        Err(format!(
            "--kernel {text}: not auto, an instruction set (avx512, avx2, sse2, neon, portable) \
             or a loop for {stores} stores ({})",
            loops.join(", ")
        ))
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Md,
    Csv,
    Json,
}

/// What stream-top was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Live,
    Headless,
    Compare { a: PathBuf, b: PathBuf },
}

/// A mode, as the table of where flags apply names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Live,
    Headless,
    /// `--headless --serve`: sweeps until stopped, so a duty cycle applies.
    Service,
    Compare,
}

impl Where {
    fn of(mode: &Mode, serving: bool) -> Where {
        match mode {
            Mode::Live => Where::Live,
            Mode::Headless if serving => Where::Service,
            Mode::Headless => Where::Headless,
            Mode::Compare { .. } => Where::Compare,
        }
    }

    /// The mode as a message names it: "not with {name}".
    fn name(self) -> &'static str {
        match self {
            Where::Live => "the live monitor",
            Where::Headless => "--headless",
            Where::Service => "--headless --serve",
            Where::Compare => "compare",
        }
    }
}

const MEASURING: &[Where] = &[Where::Live, Where::Headless, Where::Service];
const HEADLESS: &[Where] = &[Where::Headless, Where::Service];
const ANYWHERE: &[Where] = &[Where::Live, Where::Headless, Where::Service, Where::Compare];

/// Where each flag of `Args` does something (by clap's id, the field's name), and a hint for
/// the person who gave it elsewhere. The one home of that fact: a flag given where it would do
/// nothing is refused (exit 2) rather than silently ignored. A test checks every flag is here.
const APPLIES: &[(&str, &[Where], &str)] = &[
    ("headless", MEASURING, ""),
    ("threads", MEASURING, ""),
    ("sets", MEASURING, ""),
    ("points_per_octave", MEASURING, ""),
    ("rounds", MEASURING, ""),
    ("round_ms", MEASURING, ""),
    ("pin", MEASURING, ""),
    ("kernel", MEASURING, ""),
    ("stores", MEASURING, ""),
    ("huge_pages", MEASURING, ""),
    ("membind", MEASURING, ""),
    ("interleave", MEASURING, ""),
    ("matrix", MEASURING, ""),
    ("oversubscribe", MEASURING, ""),
    ("vendor_gbs", MEASURING, ""),
    // Headless runs each cell once at full speed: a duty cycle would only stretch the run. A
    // service sweeps on, and its duty is what it leaves the node.
    ("duty", &[Where::Live, Where::Service], ""),
    ("serve", MEASURING, ""),
    ("prom_file", MEASURING, ""),
    (
        "format",
        HEADLESS,
        " (the live monitor writes every format on `e`)",
    ),
    ("export", MEASURING, ""),
    ("readme", HEADLESS, ""),
    ("readme_style", HEADLESS, ""),
    ("name", MEASURING, ""),
    (
        "baseline",
        &[Where::Live],
        " (use `stream-top compare A.json B.json` to compare two snapshots)",
    ),
    ("counters", MEASURING, ""),
    ("fail_if_slower", &[Where::Compare], ""),
    ("contention_drop", &[Where::Live], ""),
    ("contention_rounds", &[Where::Live], ""),
    ("root", ANYWHERE, ""),
];

/// "only for the live monitor", "only with --headless", …
fn applies_phrase(places: &[Where]) -> &'static str {
    match places {
        [Where::Live] => "only for the live monitor",
        [Where::Live, Where::Service] => "only for the live monitor or --headless --serve",
        [Where::Headless, Where::Service] => "only with --headless",
        [Where::Compare] => "only with `stream-top compare A.json B.json`",
        _ => "only when measuring (the live monitor or --headless)",
    }
}

/// The flags given on the command line (not defaults), by clap id.
fn given_flags(matches: &ArgMatches) -> Vec<String> {
    matches
        .ids()
        .map(|id| id.as_str().to_string())
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .collect()
}

/// Refuses the first given flag that does nothing in `mode`, saying where it applies.
fn refuse_flags_that_do_not_apply(given: &[String], mode: &Mode) -> Result<(), String> {
    let here = Where::of(mode, given.iter().any(|id| id == "serve"));
    let command = Args::command();
    for id in given {
        let Some((_, places, hint)) = APPLIES.iter().find(|(name, _, _)| name == id) else {
            continue;
        };
        if places.contains(&here) {
            continue;
        }
        let long = command
            .get_arguments()
            .find(|a| a.get_id() == id.as_str())
            .and_then(|a| a.get_long())
            .unwrap_or(id);
        return Err(format!(
            "--{long}: {}, not {} {}{hint}",
            applies_phrase(places),
            if here == Where::Live { "for" } else { "with" },
            here.name()
        ));
    }
    Ok(())
}

/// What a command line asks for: a run, or text for stdout (`--help`, `--version`).
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Config>),
    Print(String),
}

/// clap's error as one line: its first paragraph (which can run over several lines, as the
/// list of missing arguments does) and, when arguments are missing, the usage that shows them.
fn clap_message(e: &clap::Error) -> String {
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
    /// None: the default for the online CPUs.
    pub threads: Option<Vec<usize>>,
    pub sets: Vec<SetSpec>,
    pub rounds: u32,
    pub round_ms: u32,
    pub pin: PinPolicy,
    pub kernel: KernelArg,
    pub stores: Stores,
    pub vendor_gbs: Option<f64>,
    pub duty: u8,
    pub huge_pages: HugePages,
    /// `--membind NODE`: every page from this node (checked against the machine's nodes later).
    pub membind: Option<usize>,
    /// `--interleave`: pages round-robin across every node.
    pub interleave: bool,
    /// `--matrix`: the NUMA bandwidth matrix instead of the grid.
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
    pub readme_style: ReadmeStyle,
    /// `--name`: the run's label, checked to be safe in a file name.
    pub name: Option<String>,
    pub baseline: Option<PathBuf>,
    /// Per-thread counters on (`--counters`).
    pub counters: bool,
    /// `compare --fail-if-slower PERCENT`: the slowdown, percent, that fails the comparison.
    pub fail_if_slower: Option<f64>,
    /// `--contention-drop` as a fraction (0.15).
    pub contention_drop: f64,
    pub contention_rounds: u32,
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
            Some(Sub::Compare { a, b }) => Mode::Compare { a, b },
            None if args.headless => Mode::Headless,
            None => Mode::Live,
        };
        refuse_flags_that_do_not_apply(given, &mode)?;
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
            None if mode == Mode::Headless => {
                vec![SetSpec::Level(Level::L2), SetSpec::Level(Level::Dram)]
            }
            None => vec![
                SetSpec::Level(Level::L1),
                SetSpec::Level(Level::L2),
                SetSpec::Level(Level::Dram),
            ],
        };
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
        let duty = args
            .duty
            .unwrap_or(if service { SERVICE_DUTY.into() } else { 100 });
        if duty == 0 || duty > 100 {
            return Err(format!("--duty {duty}: must be a percentage from 1 to 100"));
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
        if let Some(p) = args.fail_if_slower
            && !(p.is_finite() && (0.0..100.0).contains(&p))
        {
            return Err(format!(
                "--fail-if-slower {p}: must be a percentage from 0 to under 100"
            ));
        }
        Ok(Config {
            mode,
            threads,
            sets,
            rounds: args.rounds,
            round_ms: args.round_ms,
            pin: match args.pin {
                PinArg::Spread => PinPolicy::Spread,
                PinArg::Compact => PinPolicy::Compact,
                PinArg::None => PinPolicy::None,
            },
            kernel,
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
            matrix: args.matrix,
            oversubscribe: args.oversubscribe,
            serve,
            prom_file: args.prom_file,
            format: args.format,
            export: args.export,
            readme: args.readme,
            readme_style: args.readme_style,
            name: args.name,
            baseline: args.baseline,
            counters: args.counters == OnOff::On,
            fail_if_slower: args.fail_if_slower,
            contention_drop: args.contention_drop / 100.0,
            contention_rounds: args.contention_rounds,
            root: args.root,
        })
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

/// The default thread counts up to `all`: 1, 2, 4, … below it, the counts that fill one node
/// or one socket (`domains`, from `Topology::domain_counts`) below it, and `all` itself;
/// sorted and distinct. Doubling keeps the columns few on hundreds of threads (1 to 256 is
/// nine), and the domain counts are where bandwidth changes its nature.
pub fn default_threads(all: usize, domains: &[usize]) -> Vec<usize> {
    let all = all.max(1);
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|&n| n < all)
        .chain(domains.iter().copied().filter(|&n| n >= 1 && n < all))
        .collect();
    v.push(all);
    v.sort_unstable();
    v.dedup();
    v
}

/// Parses `1,2,4`, `1-4` or a mix; sorted, deduplicated, each at least 1.
fn parse_threads(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err("an empty item in the list".into());
        }
        let num = |s: &str| -> Result<usize, String> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| format!("'{s}' is not a thread count"))?;
            if n == 0 {
                return Err("0 is not a thread count (at least 1)".into());
            }
            if n > 4096 {
                return Err(format!("{n} threads is absurd (at most 4096)"));
            }
            Ok(n)
        };
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("'{item}' is an empty range"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The longest `--name`.
const MAX_NAME: usize = 64;

/// A run's label goes into file names: ASCII letters, digits, `-`, `_` and `.`, not starting
/// with a dot (a hidden file) and at most `MAX_NAME` long.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a label needs at least one character".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!("at most {MAX_NAME} characters"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
    {
        return Err(format!(
            "{bad:?} is not allowed: a label is letters, digits, '-', '_' and '.'"
        ));
    }
    if name.starts_with('.') {
        return Err("a label cannot start with '.'".into());
    }
    Ok(())
}

/// Parses a comma-separated list of working sets; a range in it (`16KiB..1MiB`) is measured at
/// `per_octave` sizes per doubling.
fn parse_sets(text: &str, per_octave: u32) -> Result<Vec<SetSpec>, String> {
    text.split(',')
        .map(|s| {
            if s.trim().is_empty() {
                Err("an empty item in the list".to_string())
            } else {
                SetSpec::parse_with(s, per_octave).map_err(|e| e.to_string())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn thread_lists_and_ranges() {
        assert_eq!(parse_threads("1,2,4").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_threads("4,1-3,2").unwrap(), vec![1, 2, 3, 4]);
        assert!(parse_threads("0").unwrap_err().contains("at least 1"));
        assert!(parse_threads("1,,2").is_err());
        assert!(parse_threads("x").is_err());
        assert!(parse_threads("3-1").is_err());
        assert!(parse_threads("100000").unwrap_err().contains("absurd"));
    }

    #[test]
    fn default_thread_counts() {
        assert_eq!(default_threads(1, &[]), vec![1]);
        assert_eq!(default_threads(2, &[]), vec![1, 2]);
        assert_eq!(default_threads(6, &[]), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(8, &[]), vec![1, 2, 4, 8]);
        // Nodes of 12 and sockets of 24 CPUs among 48; counts above `all` left out.
        assert_eq!(
            default_threads(48, &[12, 24]),
            vec![1, 2, 4, 8, 12, 16, 24, 32, 48]
        );
        assert_eq!(default_threads(20, &[12, 24]), vec![1, 2, 4, 8, 12, 16, 20]);
        assert_eq!(default_threads(0, &[0]), vec![1]);
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
        for v in Variant::all().filter(|v| v.name.parse::<Isa>().is_err()) {
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
    fn compare_subcommand() {
        let c = config(&["compare", "a.json", "b.json"]).unwrap();
        assert_eq!(
            c.mode,
            Mode::Compare {
                a: "a.json".into(),
                b: "b.json".into()
            }
        );
        assert_eq!(c.fail_if_slower, None);
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
    fn every_flag_says_where_it_applies() {
        let command = Args::command();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if matches!(id, "help" | "version") {
                continue;
            }
            assert!(
                APPLIES.iter().any(|(name, _, _)| *name == id),
                "--{id} is not in APPLIES: say where it applies"
            );
        }
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
        let err = config(&["compare", "a.json"]).unwrap_err();
        assert!(err.contains("not provided: <B.json|DIR>"), "{err}");
        assert!(
            err.contains("usage: stream-top compare <A.json|DIR> <B.json|DIR>"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }
}
