//! The command line as clap defines it: the flags, their help and defaults, the subcommand and
//! the value enums. What the values mean is checked in `values` and turned into a `Config` in
//! `cli`; where each flag applies is `applies`.

use super::values::{Words, kernel_words, op_words, parse_percent, set_words};
use crate::engine::kernel::Op;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Where the manual is, the last words of every help text.
macro_rules! MANUAL_TEXT {
    () => {
        "The manual: docs/ beside the README, and `man stream-top` (stream-top --generate man \
> stream-top.1). --help says more than -h."
    };
}

/// [`MANUAL_TEXT`] as a constant, for clap's short help.
const MANUAL: &str = MANUAL_TEXT!();

/// `--serve` with no address: loopback only; another interface must be named.
pub const DEFAULT_SERVE_ADDR: &str = "127.0.0.1:9464";

/// `--duty` of `--headless --serve`, a canary on every node: rounds run 2 % of the time
/// (warm-up rounds add a little), so the node keeps about 97 % of its memory bandwidth and CPU
/// while a sweep still ends every minute or two (docs/operations.md, "Serving to Prometheus",
/// has the measured cell ages and the cost to a co-runner).
pub const SERVICE_DUTY: u8 = 2;

/// What `--generate` writes on stdout.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generate {
    /// The man page, roff (`stream-top --generate man > stream-top.1`).
    Man,
    CompleteBash,
    CompleteZsh,
    CompleteFish,
    CompletePowershell,
}

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
    after_help = MANUAL,
    after_long_help = concat!("Working sets: l1, l2, l3 (last level), dram (each array ≥ 4× all last-level cache), \
SIZE (per array, split across threads, e.g. 256MiB) or SIZE/thread (per array per thread, e.g. 1MiB/thread), \
at least 128B (one cache line, the least an array is cut into; smaller is refused); \
a range of sizes sweeps them on a log scale to find the cache edges (16KiB..1GiB or 4KiB/thread..64MiB/thread).\n\
Examples:\n  stream-top\n  stream-top --headless --threads 1,2 --sets l1,l2,dram\n  \
stream-top --headless --threads 1 --sets 16KiB..1GiB --points-per-octave 4\n  \
stream-top --headless --format json > run.json\n  \
stream-top --headless --name before --export results\n  stream-top compare before.json after.json\n  \
stream-top compare results/stream-top-before-*.json results\n  \
stream-top --headless --matrix            # the NUMA bandwidth matrix, CPU node × memory node\n  \
stream-top --headless --measure latency   # idle latency at l1, l2, l3, dram\n  \
stream-top --headless --measure latency --sets 4KiB..1GiB --export results   # latency against size, SVG\n\n", MANUAL_TEXT!())
)]
pub struct Args {
    #[command(subcommand)]
    pub(crate) command: Option<Sub>,

    /// Run one sweep and print the table, not the live monitor.
    ///
    /// Run one sweep of the grid and print the table instead of the live monitor.
    #[arg(help_heading = "Mode", long)]
    pub(crate) headless: bool,

    /// What to measure: bandwidth, latency or loaded-latency.
    ///
    /// What to measure: bandwidth (the triad over the grid), latency (idle latency per working set, a pointer chase on one thread; headless), loaded-latency (the chase's latency while the other CPUs stream the triad, stepped down by delays).
    #[arg(help_heading = "Mode", long, value_enum, default_value = "bandwidth")]
    pub(crate) measure: Measure,

    /// The NUMA matrix: every CPU node × memory node.
    ///
    /// Measure the NUMA bandwidth matrix instead of the grid: every CPU node × memory node, all cores of the CPU node streaming a dram-sized set bound to the memory node (with --measure latency: the latency matrix, one thread chasing a dram-sized buffer).
    #[arg(help_heading = "Mode", long, conflicts_with_all = ["threads", "sets", "membind", "interleave"])]
    pub(crate) matrix: bool,

    /// The grid and its kernel (also `calibrate`'s).
    #[command(flatten)]
    pub(crate) grid: GridArgs,

    /// Sizes per doubling in a range of --sets, 1 to 16.
    ///
    /// Sizes per doubling in a range of --sets (16KiB..1GiB), 1 to 16 [default: 2].
    #[arg(
        help_heading = "Grid",
        long,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    pub(crate) points_per_octave: Option<u32>,

    /// Sweep the grid N times, each on fresh arrays.
    ///
    /// Sweep the grid N times, each repetition on fresh arrays (new pages, the trial again): the snapshot keeps each repetition's median per cell, the evidence `compare` judges by (headless, calibrate) [default: 1; calibrate 10].
    #[arg(
        help_heading = "Grid",
        long,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    pub(crate) repeat: Option<u64>,

    /// Allow more than 4 threads per usable CPU (as no measurement).
    ///
    /// Allow thread counts above 4 × the usable CPUs (spinning workers then yield the CPU); every figure is marked as not a measurement.
    #[arg(help_heading = "Grid", long)]
    pub(crate) oversubscribe: bool,

    /// Take the arrays' pages from NUMA node NODE only.
    ///
    /// Take the arrays' pages from NUMA node NODE only (mbind MPOL_BIND) [default: first touch, each partition on its thread's node].
    #[arg(
        help_heading = "Kernel and memory",
        long,
        allow_negative_numbers = true,
        value_name = "NODE",
        conflicts_with = "interleave"
    )]
    pub(crate) membind: Option<usize>,

    /// Interleave the arrays' pages across every NUMA node.
    ///
    /// Interleave the arrays' pages across every NUMA node (mbind MPOL_INTERLEAVE).
    #[arg(help_heading = "Kernel and memory", long)]
    pub(crate) interleave: bool,

    /// Hold the arrays to at most SIZE in all (e.g. 2GiB).
    ///
    /// Hold the arrays to at most SIZE in all (e.g. 2GiB): `dram` is shrunk below STREAM's rule, with a note, as a container's memory limit shrinks it [default: no cap beyond MemAvailable and the container's limit].
    #[arg(
        help_heading = "Kernel and memory",
        long,
        allow_hyphen_values = true,
        value_name = "SIZE"
    )]
    pub(crate) max_memory: Option<String>,

    /// The vendor's peak memory bandwidth in GB/s.
    ///
    /// The vendor's peak memory bandwidth in GB/s, for the fraction column [default: from SMBIOS].
    #[arg(
        help_heading = "Kernel and memory",
        long,
        value_name = "GB/s",
        allow_negative_numbers = true
    )]
    pub(crate) vendor_gbs: Option<f64>,

    /// Per-thread counters.
    ///
    /// Per-thread counters (context switches, migrations, page faults, task clock; cycles, instructions, LLC misses where the PMU allows): on or off.
    #[arg(help_heading = "Kernel and memory", long, value_enum, default_value_t = OnOff::On, value_name = "on|off")]
    pub(crate) counters: OnOff,

    /// Run rounds only this share of the time, in percent.
    ///
    /// Run rounds only this share of the time, in percent (live monitor: `d` cycles 100/50/10) [default: 100; 2 for --headless --serve].
    #[arg(help_heading = "Live monitor", long, value_name = "PERCENT", value_parser = parse_percent)]
    pub(crate) duty: Option<f64>,

    /// A JSON snapshot to show each cell's change against.
    ///
    /// A JSON snapshot to show each cell's change against (live), with a verdict per cell; its medians are the cells' references for contention.
    #[arg(help_heading = "Live monitor", long, value_name = "A.json")]
    pub baseline: Option<PathBuf>,

    /// A drop below the reference, in percent, that is contention.
    ///
    /// A cell is contended when its rounds fall more than this far below its reference, in percent; it is over within half of it (live).
    #[arg(help_heading = "Live monitor", long, default_value_t = 15.0, value_name = "PERCENT", value_parser = parse_percent)]
    pub(crate) contention_drop: f64,

    /// Slow rounds in a row that begin contention.
    ///
    /// Slow rounds in a row that begin contention; it ends when the median of the last N has recovered (live).
    #[arg(
        help_heading = "Live monitor",
        long,
        allow_negative_numbers = true,
        default_value_t = 5,
        value_name = "N"
    )]
    pub(crate) contention_rounds: u64,

    /// Run the latency probe beside the triad.
    ///
    /// Run the probe beside the triad: a pointer chase on one CPU, a few thousand loads every 100 ms (about 2.6 MB/s), whose latency watches for contention (live: `P` toggles it; headless: its figures at the end) [default: on with --headless --serve].
    #[arg(help_heading = "Live monitor", long, conflicts_with = "no_probe")]
    pub(crate) probe: bool,

    /// Watch with the probe alone: no triad.
    ///
    /// Watch with the probe alone: no triad workers, no arrays, near-zero bandwidth (live).
    #[arg(help_heading = "Live monitor", long, conflicts_with = "probe")]
    pub(crate) probe_only: bool,

    /// The CPU the probe runs on.
    ///
    /// The CPU the probe runs on [default: the last CPU no worker uses; else the last CPU, shared].
    #[arg(
        help_heading = "Live monitor",
        long,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    pub(crate) probe_cpu: Option<usize>,

    /// --headless --serve: do not run the probe.
    ///
    /// --headless --serve: do not run the probe.
    #[arg(help_heading = "Live monitor", long)]
    pub(crate) no_probe: bool,

    /// Table format on stdout (headless).
    ///
    /// Table format on stdout (headless).
    #[arg(help_heading = "Reports and files", long, value_enum, default_value_t = FormatArg::Md)]
    pub(crate) format: FormatArg,

    /// Write a snapshot (md, csv, json, svg) into DIR.
    ///
    /// Write a snapshot (md, csv, json, svg) into DIR: at the end (headless) or on `e` (live) [default for `e`: results].
    #[arg(help_heading = "Reports and files", long, value_name = "DIR")]
    pub(crate) export: Option<PathBuf>,

    /// A label for this run, in the snapshot and the file names.
    ///
    /// A label for this run: in the snapshot and the exported file names (stream-top-LABEL-HOST-…); letters, digits, '-', '_', '.'.
    #[arg(help_heading = "Reports and files", long, value_name = "LABEL")]
    pub(crate) name: Option<String>,

    /// The node's name in the snapshot and on /metrics, for `fleet` [default: the hostname].
    ///
    /// The node's name in the snapshot and on /metrics, for `fleet` [default: the hostname] (in a Kubernetes pod: the node's name from the downward API); 1 to 253 bytes, no control characters.
    #[arg(help_heading = "Service and recording", long, value_name = "NAME")]
    pub(crate) node: Option<String>,

    /// Put the table between FILE's stream-top markers (headless).
    ///
    /// Replace what stands between <!-- stream-top:begin --> and <!-- stream-top:end --> in FILE with the table (headless).
    #[arg(help_heading = "Reports and files", long, value_name = "FILE")]
    pub(crate) readme: Option<PathBuf>,

    /// What --readme writes.
    ///
    /// What --readme writes: full (every line and column) or compact (the working set, threads, median, best, cv and vendor-fraction columns).
    #[arg(help_heading = "Reports and files", long, value_enum, default_value_t = ReadmeStyle::Full, value_name = "full|compact")]
    pub(crate) readme_style: ReadmeStyle,

    /// Serve the figures to Prometheus at http://ADDR/metrics.
    ///
    /// Serve the figures to Prometheus at http://ADDR/metrics [default ADDR: 127.0.0.1:9464]; with --headless, keep sweeping until SIGTERM.
    #[arg(help_heading = "Service and recording", long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_SERVE_ADDR)]
    pub(crate) serve: Option<String>,

    /// Secure --serve with an exporter-toolkit web config (TLS, client certificates, basic auth, headers).
    ///
    /// Secure --serve with FILE in the exporter-toolkit format (node_exporter's --web.config.file): tls_server_config, basic_auth_users, http_server_config.headers; re-read when it or the files it names change.
    #[arg(help_heading = "Service and recording", long, value_name = "FILE")]
    pub(crate) web_config: Option<PathBuf>,

    /// Write the Prometheus exposition to FILE after each sweep.
    ///
    /// Write the Prometheus exposition to FILE (atomically) after each sweep, for node_exporter's textfile collector.
    #[arg(help_heading = "Service and recording", long, value_name = "FILE")]
    pub(crate) prom_file: Option<PathBuf>,

    /// Record what the monitor sees into FILE, for replay.
    ///
    /// Record what the monitor sees (rounds, host samples, events) into FILE, for `stream-top replay FILE`.
    #[arg(help_heading = "Service and recording", long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,

    /// The most the recording takes over its files.
    ///
    /// The most the recording takes over FILE and its rotated FILE.1…FILE.4 [default: 256MiB].
    #[arg(
        help_heading = "Service and recording",
        long,
        allow_hyphen_values = true,
        value_name = "SIZE"
    )]
    pub(crate) record_max: Option<String>,

    /// --measure loaded-latency: the delays, rising, e.g. 0,500ns,2us.
    ///
    /// --measure loaded-latency: the delays after each load thread's chunk of triad, rising, in ns or with a unit (0,500ns,2us,1ms), at most 32, each at most 10ms [default: 0 and 7 more, geometric from ¼ to 32 × one chunk's time at full load].
    #[arg(
        help_heading = "Latency",
        long,
        allow_hyphen_values = true,
        value_name = "LIST"
    )]
    pub(crate) delays: Option<String>,

    /// `--measure latency` without its second chase on 4 KiB pages (the TLB cost): `check`'s
    /// latency run, which needs the figure on huge pages only, within its time.
    #[arg(long, hide = true)]
    pub(crate) no_tlb: bool,

    // `calibrate`'s and `compare`'s own flags, also taken before the subcommand's name
    // (`stream-top --fail-if-slower 5 compare A B`); listed by the subcommand's help.
    #[arg(long, allow_hyphen_values = true, hide = true)]
    pub(crate) span: Option<String>,

    #[arg(long, hide = true)]
    pub(crate) allow_single_run: bool,

    #[arg(long, hide = true, allow_negative_numbers = true, value_parser = parse_percent)]
    pub(crate) fail_if_slower: Option<f64>,

    /// Root of the sysfs and /proc trees to read (for tests).
    #[arg(long, hide = true, default_value = "/")]
    pub(crate) root: PathBuf,

    /// Print the man page or a shell's completions.
    ///
    /// Print the man page (man: `stream-top --generate man > stream-top.1`) or a shell's completions (complete-bash: `source <(stream-top --generate complete-bash)`).
    #[arg(help_heading = "Manual", long, value_enum, value_name = "KIND")]
    pub(crate) generate: Option<Generate>,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Compare snapshots: A, B and B/A for each cell, with a verdict across runs.
    ///
    /// Compare snapshots: A, B and B/A for each cell in both, with a verdict across runs.
    /// `compare A B`: two snapshots (a directory stands for its newest, by the time written in
    /// it). `compare A1 A2 A3 -- B1 B2 B3`: several a side, each one repetition (a directory
    /// stands for every snapshot in it). With 3 or more repetitions a side the verdict is
    /// Welch's t-test on their medians; with fewer, the ratio is set against the machine's
    /// run-to-run spread (`stream-top calibrate`), never a test on one run's rounds.
    #[command(after_help = MANUAL)]
    Compare {
        /// A's snapshots (and B's, in the two-snapshot form).
        #[arg(value_name = "A.json|DIR", required = true, num_args = 1..)]
        a: Vec<PathBuf>,
        /// B's snapshots, after `--`.
        #[arg(value_name = "B.json|DIR", last = true)]
        b: Vec<PathBuf>,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// Measure this machine's run-to-run spread, for `compare` to judge single runs by.
    ///
    /// Measure this machine's run-to-run spread: the grid (--sets, --threads) run --repeat
    /// times (default 10), each a separate process, spread evenly over --span (default 5m), and
    /// the spread of their medians written under the user's data directory, where `compare`
    /// finds it to judge single runs and one-process sides.
    #[command(after_help = MANUAL)]
    Calibrate {
        #[command(flatten)]
        grid: GridArgs,
        /// Processes to run, each one sweep of the grid on fresh arrays [default: 10].
        #[arg(
            help_heading = "Calibration",
            long,
            allow_negative_numbers = true,
            value_name = "N"
        )]
        repeat: Option<u64>,
        /// Spread the processes evenly over this long [default: 5m].
        ///
        /// Spread the processes evenly over this long (90s, 5m, 1h; 0: back to back), so that the spread holds the machine's drift between two runs that far apart, not only the scatter of runs a second apart [default: 5m].
        #[arg(
            help_heading = "Calibration",
            long,
            allow_hyphen_values = true,
            value_name = "TIME"
        )]
        span: Option<String>,
    },
    /// Replay a recording (--record FILE): the screens, or a moment's table.
    ///
    /// Replay a recording (--record FILE): the live monitor's screens at a time cursor ([ ] step
    /// a second, { } the previous/next contention episode, g go to a time, space play/pause,
    /// the speed 1×/10×/60× with the key >; --at TIME places it first); with --headless, print
    /// the snapshot table of a moment (--at TIME) or a window (--from A --to B). TIME: an
    /// offset from the recording's start (90s, 4m, 1h30m) or an RFC 3339 time.
    #[command(after_help = MANUAL)]
    Replay {
        /// The recording's files (--record's FILE, and its rotated FILE.1… where kept).
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// Print the snapshot table instead of opening the screens.
        #[arg(long)]
        headless: bool,
        /// The moment: the table's (--headless), or where the screens open.
        #[arg(long, allow_hyphen_values = true, value_name = "TIME", conflicts_with_all = ["from", "to"])]
        at: Option<String>,
        /// The window's start (--headless; with --to).
        #[arg(long, allow_hyphen_values = true, value_name = "TIME", requires = "to")]
        from: Option<String>,
        /// The window's end (--headless; with --from).
        #[arg(
            long,
            allow_hyphen_values = true,
            value_name = "TIME",
            requires = "from"
        )]
        to: Option<String>,
        /// Table format on stdout (json for `compare`).
        #[arg(long, value_enum, default_value_t = FormatArg::Md)]
        format: FormatArg,
    },
    /// Judge many nodes' snapshots against their peers of identical hardware.
    ///
    /// Judge many nodes' snapshots against their peers: classes of identical hardware (by the
    /// fingerprint), each node's ratio to its class median per cell and its distance in median
    /// absolute deviations; an outlier is below by more than --mads K and by more than
    /// --min-gap PERCENT, with what in its fingerprint differs from its peers'.
    Fleet(super::fleet::FleetArgs),
    /// A quick health check for schedulers: a short all-core DRAM triad against a reference.
    ///
    /// A quick health check for schedulers: a short all-core DRAM triad (about 10 s) against
    /// --against FILE (a snapshot, or `fleet --export-reference`'s file) or --min-gbs X; one
    /// line, ok, SLOW (slow in two readings) or UNSURE (in one); exit 0 ok, 1 SLOW, 3 UNSURE,
    /// 2 when it cannot check.
    Check(super::fleet::CheckArgs),
}

/// The grid and its kernel: the live monitor's, `--headless`'s and `calibrate`'s.
#[derive(clap::Args, Debug)]
pub struct GridArgs {
    /// Thread counts, e.g. 1,2,4 or 1-4.
    ///
    /// Thread counts, e.g. 1,2,4 or 1-4 [default: 1, 2, 4, … and all online CPUs].
    #[arg(
        help_heading = "Grid",
        short,
        long,
        allow_negative_numbers = true,
        value_name = "LIST"
    )]
    pub(crate) threads: Option<String>,

    /// Working sets, e.g. l1,l2,dram, 64MiB, 1MiB/thread or 16KiB..1GiB.
    ///
    /// Working sets, e.g. l1,l2,dram or 64MiB or 1MiB/thread, or a range to sweep, e.g. 16KiB..1GiB [default: l2,dram headless; l1,l2,dram live; l1,l2,l3,dram with --measure latency].
    #[arg(help_heading = "Grid", short, long, value_name = "LIST", value_parser = Words(set_words), hide_possible_values = true)]
    pub(crate) sets: Option<String>,

    /// Timed rounds per cell.
    ///
    /// Timed rounds per cell (headless), or the rounds each cell's statistics cover (live).
    // Counts are read wider than the u32 they become, so that a number past u32 meets its
    // range's own message (`--rounds 4294967296: must be from 1 to 100000`), not u32's.
    #[arg(
        help_heading = "Grid",
        long,
        allow_negative_numbers = true,
        default_value_t = 21,
        value_name = "N"
    )]
    pub(crate) rounds: u64,

    /// The least time a round lasts, in ms.
    ///
    /// Each round lasts at least this long; a DRAM round is at least one whole pass.
    #[arg(
        help_heading = "Grid",
        long,
        allow_negative_numbers = true,
        default_value_t = 20,
        value_name = "MS"
    )]
    pub(crate) round_ms: u64,

    /// Ops to run: triad, copy, scale, add, …; stream or all.
    #[arg(
        help_heading = "Kernel and memory",
        long,
        long_help = format!("Ops to run, a comma-separated list: {} (docs/kernels.md).", Op::help_list()),
        default_value = "triad",
        value_name = "LIST", value_parser = Words(op_words), hide_possible_values = true
    )]
    pub(crate) op: String,

    /// Kernel: auto, an instruction set, or one loop by name.
    ///
    /// Kernel: auto (per working set, the fastest loop this CPU runs, by a short trial), an
    /// instruction set to pin (avx512, avx2, sse2, neon, portable: its default loop), or one
    /// loop of the table by name (e.g. 'avx2 xmm fma'; see docs/kernels.md).
    #[arg(
        help_heading = "Kernel and memory",
        long,
        default_value = "auto",
        value_name = "auto|ISA|LOOP",
        value_parser = Words(kernel_words),
        hide_possible_values = true
    )]
    pub(crate) kernel: String,

    /// Thread placement.
    ///
    /// Thread placement: spread (across NUMA nodes, then cores, SMT siblings last), compact, none.
    #[arg(help_heading = "Kernel and memory", long, value_enum, default_value_t = PinArg::Spread)]
    pub(crate) pin: PinArg,

    /// How the kernel stores a: normal or nt (non-temporal).
    ///
    /// How the kernel stores a: normal, or nt (non-temporal, bypassing the caches).
    #[arg(help_heading = "Kernel and memory", long, value_enum, default_value_t = StoresArg::Normal)]
    pub(crate) stores: StoresArg,

    /// Transparent huge pages for the arrays.
    ///
    /// Transparent huge pages for the arrays: auto (per working set: by trial in cache, on for
    /// memory), on (madvise MADV_HUGEPAGE) or off (MADV_NOHUGEPAGE).
    #[arg(help_heading = "Kernel and memory", long, value_enum, default_value_t = HugePagesArg::Auto, value_name = "auto|on|off")]
    pub(crate) huge_pages: HugePagesArg,

    /// Each working set's loop and page layout from an earlier run's snapshot.
    ///
    /// Each op's loop and page layout per working set from A.json, a snapshot stream-top wrote, instead of a trial: B of a before/after comparison then runs what A ran, so a loop one trial preferred and the next did not cannot be the difference (not with --kernel or --huge-pages; A must hold every op × working set of this grid).
    #[arg(help_heading = "Kernel and memory", long, value_name = "A.json")]
    pub(crate) choices_from: Option<PathBuf>,
}

/// `compare`'s regression gate.
#[derive(clap::Args, Debug)]
pub struct GateArgs {
    /// Exit 1 when a cell of B is slower than A's by more than PERCENT; 3 when undecided.
    ///
    /// A regression gate for CI with three outcomes, by a one-sided Welch's test at 1 % on 3 or more repetitions a side (separate processes, interleaved): exit 0 when every cell is shown not slower by more than PERCENT, exit 1 when a cell is slower by more than PERCENT, exit 3 when the evidence cannot tell (the cells are named, with how many processes a side would decide them).
    #[arg(
        help_heading = "Comparison",
        long,
        value_name = "PERCENT",
        allow_negative_numbers = true,
        value_parser = parse_percent
    )]
    pub(crate) fail_if_slower: Option<f64>,

    /// Let --fail-if-slower judge single runs on their B/A alone.
    ///
    /// Let --fail-if-slower judge cells with fewer than 3 repetitions a side on their B/A alone: below 1 − PERCENT/100 fails (no test is possible on one run).
    #[arg(help_heading = "Comparison", long)]
    pub(crate) allow_single_run: bool,
}

/// `--measure`: what a run measures.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    Bandwidth,
    Latency,
    LoadedLatency,
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

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Md,
    Csv,
    Json,
    /// STREAM's own table (Function, Best Rate MB/s, Avg time, Min time, Max time) per cell.
    Stream,
}
