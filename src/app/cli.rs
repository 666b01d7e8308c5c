//! The command line: clap parses, `Config::parse_from` validates into what the rest takes.
//! Every error a person can cause here is one line naming the flag, and exit code 2; a flag
//! that would do nothing in the chosen mode is refused with where it applies (`APPLIES`).
//!
//! The parts: `args` (clap's definition of the flags), `values` (what a flag's text means:
//! thread lists, working sets, sizes, labels), `applies` (where each flag does something); this
//! file builds and validates the `Config` from them.

mod applies;
mod args;
mod config;
mod fleet;
mod generate;
mod validate;
mod values;

pub use args::{
    Args, DEFAULT_SERVE_ADDR, FormatArg, HugePagesArg, Measure, OnOff, PinArg, ReadmeStyle,
    SERVICE_DUTY, StoresArg, Sub,
};
pub use config::{Config, Mode, ProbeMode};
pub use fleet::{CheckArgs, FleetArgs, FleetFormat};
pub use generate::LIVE_KEYS;
pub use values::{KernelArg, default_threads};

use crate::base::error::{Error, Result};
use applies::{given_flags, refuse_flags_that_do_not_apply, refuse_for_measure};
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;

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
    "choices_from",
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
fn probe_mode(args: ProbeFlags, given: &[String], service: bool) -> Result<ProbeMode> {
    let mode = if args.only {
        if let Some(flag) = given.iter().find(|g| TRIAD_FLAGS.contains(&g.as_str())) {
            return Err(Error::usage(format!(
                "--probe-only: no triad runs, so --{} would do nothing; drop one of them",
                flag.replace('_', "-")
            )));
        }
        ProbeMode::Only
    } else if args.on || (service && !args.off) {
        ProbeMode::On
    } else {
        ProbeMode::Off
    };
    if args.cpu.is_some() && mode == ProbeMode::Off {
        return Err(Error::usage(format!(
            "--probe-cpu: only with {}",
            if service {
                "the probe (drop --no-probe)"
            } else {
                "--probe or --probe-only"
            }
        )));
    }
    Ok(mode)
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
    // The value or argument clap quotes, as every error line quotes input: cut and printable.
    for kind in [
        ContextKind::InvalidValue,
        ContextKind::InvalidArg,
        ContextKind::InvalidSubcommand,
    ] {
        if let Some(ContextValue::String(given)) = e.get(kind)
            && !given.is_empty()
        {
            message = message.replace(given.as_str(), &crate::base::quote::quote(given));
        }
    }
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

/// A negative number clap could not read for a flag of counts (`--rounds -1`): the flag's own
/// refusal, which says what it takes.
fn negative_number(e: &clap::Error) -> Result<()> {
    use clap::error::{ContextKind, ContextValue};
    let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) else {
        return Ok(());
    };
    let long = arg
        .trim_start_matches('-')
        .split([' ', '=', '<'])
        .next()
        .unwrap_or_default();
    values::refuse_negative(long, value)
}

/// For a flag clap did not know where it was given (`compare --span`): which subcommand, or
/// which mode, it belongs to.
fn flag_elsewhere(e: &clap::Error, argv: &[OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let ContextValue::String(flag) = e.get(ContextKind::InvalidArg)? else {
        return None;
    };
    let subcommand = argv.iter().skip(1).find_map(|a| {
        let a = a.to_str()?;
        Args::command()
            .get_subcommands()
            .any(|s| s.get_name() == a)
            .then(|| a.to_string())
    });
    applies::home_of(flag.split('=').next()?, subcommand.as_deref())
}

/// `--generate` prints the manual or completions and runs nothing: a mode or any other flag
/// beside it would be silently ignored, so it is refused, named.
fn refuse_beside_generate(given: &[String], subcommand: Option<&str>) -> Result<()> {
    let other = given
        .iter()
        .find(|id| *id != "generate")
        .map(|id| format!("--{}", id.replace('_', "-")))
        .or_else(|| subcommand.map(|s| format!("`{s}`")));
    match other {
        Some(other) => Err(Error::usage(format!(
            "--generate prints the manual or completions and runs nothing: not with {other}"
        ))),
        None => Ok(()),
    }
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
        let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
        let matches = match Args::command().try_get_matches_from(&argv) {
            Ok(m) => m,
            Err(e) if e.use_stderr() => {
                negative_number(&e)?;
                let mut message = clap_message(&e);
                if let Some(home) = flag_elsewhere(&e, &argv) {
                    message.push_str(&format!("; {home}"));
                }
                return Err(Error::usage(message));
            }
            Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
                return Ok(Parsed::Print(generate::version_text()));
            }
            Err(e) => return Ok(Parsed::Print(e.render().to_string())),
        };
        let args = Args::from_arg_matches(&matches).map_err(|e| Error::usage(clap_message(&e)))?;
        let before = given_flags(&matches);
        if let Some(kind) = args.generate {
            refuse_beside_generate(&before, matches.subcommand_name())?;
            return Ok(Parsed::Print(generate::generate(kind)?));
        }
        // The flags of `compare` and `calibrate` themselves (replay's are its own: its
        // `--headless` is not the run's).
        let after = match matches.subcommand() {
            Some(("compare" | "calibrate", sub)) => given_flags(sub),
            _ => Vec::new(),
        };
        let config = Config::validate(args, &before, &after)?;
        Ok(Parsed::Run(Box::new(config)))
    }

    /// Checks the flags area by area (`validate`), each step giving its part of the `Config`.
    /// `before`, `after`: the flags given before the subcommand's name and after it.
    fn validate(mut args: Args, before: &[String], after: &[String]) -> Result<Config> {
        let mode = validate::mode(&mut args, before, after)?;
        validate::negatives(&args)?;
        let given: Vec<String> = before.iter().chain(after).cloned().collect();
        let given = given.as_slice();
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
        let grid = validate::grid(&args, &mode)?;
        let (contention_drop, contention_rounds) = validate::live_monitor(&args)?;
        let service = validate::service_and_recording(&args, &mode)?;
        let kernel = validate::kernel_and_memory(&args)?;
        validate::reports_and_files(&args, given, &kernel.ops)?;
        let comparison = validate::comparison(&args, &mode)?;
        Ok(Config {
            mode,
            delays: grid.delays,
            threads: grid.threads,
            sets: grid.sets,
            rounds: grid.rounds,
            round_ms: grid.round_ms,
            pin: kernel.pin,
            kernel: kernel.kernel,
            ops: kernel.ops,
            stores: kernel.stores,
            vendor_gbs: kernel.vendor_gbs,
            duty: service.duty,
            huge_pages: kernel.huge_pages,
            choices_from: kernel.choices_from,
            membind: args.membind,
            interleave: args.interleave,
            max_memory: kernel.max_memory,
            measure: args.measure,
            matrix: args.matrix,
            oversubscribe: args.oversubscribe,
            serve: service.serve,
            web_config: args.web_config,
            prom_file: args.prom_file,
            format: args.format,
            export: args.export,
            readme: args.readme,
            readme_style: args.readme_style,
            name: args.name,
            node: args.node,
            baseline: args.baseline,
            counters: args.counters == OnOff::On,
            tlb: !args.no_tlb,
            fail_if_slower: comparison.fail_if_slower,
            allow_single_run: args.allow_single_run,
            repeat: comparison.repeat,
            calibrate_span_ms: comparison.calibrate_span_ms,
            contention_drop,
            contention_rounds,
            record_max: service.record_max,
            probe,
            probe_cpu: args.probe_cpu,
            record: args.record,
            root: args.root,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernel::{Isa, Op, Stores, Variant};
    use crate::engine::plan::{HugePages, Level, SetSpec};
    use std::path::PathBuf;

    fn config(args: &[&str]) -> Result<Config> {
        let mut v = vec!["stream-top"];
        v.extend_from_slice(args);
        match Config::parse_from(v) {
            Ok(Parsed::Run(c)) => Ok(*c),
            Ok(Parsed::Print(text)) => panic!("{args:?} printed {text}"),
            Err(e) => {
                assert_eq!(e.exit_code(), 2, "{e}");
                Err(e)
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
            let e = config(args).unwrap_err().to_string();
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
            let e = config(&["--max-memory", bad]).unwrap_err().to_string();
            assert!(e.starts_with("--max-memory"), "{e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn bad_values_name_their_flag() {
        assert!(
            config(&["--threads", "0"])
                .unwrap_err()
                .to_string()
                .starts_with("--threads")
        );
        assert!(
            config(&["--sets", "0MiB"])
                .unwrap_err()
                .to_string()
                .starts_with("--sets")
        );
        assert!(
            config(&["--sets", "l2,,dram"])
                .unwrap_err()
                .to_string()
                .starts_with("--sets")
        );
        assert!(
            config(&["--vendor-gbs", "-5"])
                .unwrap_err()
                .to_string()
                .starts_with("--vendor-gbs")
        );
        assert!(
            config(&["--rounds", "0"])
                .unwrap_err()
                .to_string()
                .starts_with("--rounds")
        );
        assert!(
            config(&["--duty", "0"])
                .unwrap_err()
                .to_string()
                .starts_with("--duty")
        );
        assert!(
            config(&["--contention-drop", "0"])
                .unwrap_err()
                .to_string()
                .starts_with("--contention-drop")
        );
        assert!(
            config(&["--contention-rounds", "0"])
                .unwrap_err()
                .to_string()
                .starts_with("--contention-rounds")
        );
        let c = config(&["--contention-drop", "20", "--contention-rounds", "3"]).unwrap();
        assert_eq!((c.contention_drop, c.contention_rounds), (0.2, 3));
        // Past u32, the real range: it said u32's 0..=4294967295.
        assert_eq!(
            config(&["--rounds", "4294967296"]).unwrap_err().to_string(),
            "--rounds 4294967296: must be from 1 to 100000"
        );
        assert_eq!(
            config(&["--threads=-1"]).unwrap_err().to_string(),
            "--threads takes counts of 1 or more, not -1"
        );
        assert_eq!(
            config(&["--sets", "1B"]).unwrap_err().to_string(),
            "--sets 1B: '1B' is below 128 B, the least an array can be (one cache line)"
        );
        assert_eq!(
            config(&["--sets", "l1,100/thread"])
                .unwrap_err()
                .to_string(),
            "--sets l1,100/thread: '100/thread' is below 128 B, the least an array can be (one \
             cache line)"
        );
        assert!(config(&["--sets", "128B,128B/thread"]).is_ok());
        assert!(
            config(&["--kernel", "mmx"])
                .unwrap_err()
                .to_string()
                .starts_with("--kernel")
        );
        assert!(config(&["--readme", "x.md"]).is_err());
        let c = config(&["--headless", "--threads", "64"]).unwrap();
        assert!(
            c.thread_counts(2, None, &[])
                .unwrap_err()
                .to_string()
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
                .to_string()
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
        let e = config(&["--op", "copy,trid"]).unwrap_err().to_string();
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
        let e = config(&["--kernel", "zmm"]).unwrap_err().to_string();
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
        let e = config(&["--membind", "0", "--interleave"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--interleave") && e.contains("--membind"), "{e}");
        assert!(config(&["--headless", "--matrix"]).unwrap().matrix);
        for other in [
            &["--threads", "2"][..],
            &["--sets", "l2"],
            &["--membind", "0"],
        ] {
            let mut argv = vec!["--headless", "--matrix"];
            argv.extend_from_slice(other);
            let e = config(&argv).unwrap_err().to_string();
            assert!(e.contains("--matrix") && e.contains(other[0]), "{e}");
        }
        let e = config(&["--oversubscribe", "compare", "a", "b"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--oversubscribe: only when measuring"), "{e}");
    }

    #[test]
    fn percentages_take_the_sign_a_person_types() {
        let c = config(&["--duty", "50%", "--contention-drop", "20 %"]).unwrap();
        assert_eq!((c.duty, c.contention_drop), (50, 0.2));
        let c = config(&["compare", "a", "b", "--fail-if-slower", "5%"]).unwrap();
        assert_eq!(c.fail_if_slower, Some(5.0));
        let e = config(&["--duty", "50.5%"]).unwrap_err().to_string();
        assert_eq!(e, "--duty 50.5: must be a whole percentage from 1 to 100");
        let e = config(&["--duty", "5%%"]).unwrap_err().to_string();
        assert!(e.contains("'5%%' is not a percentage"), "{e}");
        let e = config(&["--contention-drop", "95%"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--contention-drop 95:"), "{e}");
    }

    #[test]
    fn a_mistyped_flag_keeps_claps_suggestion() {
        assert_eq!(
            config(&["--threds", "2"]).unwrap_err().to_string(),
            "unexpected argument '--threds' found; did you mean '--threads'?"
        );
        let e = config(&["--pin", "sprad"]).unwrap_err().to_string();
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
        let e = config(&["compare", "a", "--", "b", "--fail-if-slower", "5"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("give flags before the snapshots"), "{e}");
        let e = config(&["compare", "a", "b", "c"]).unwrap_err().to_string();
        assert!(e.starts_with("compare: 3 snapshots named"), "{e}");
        // --repeat: headless and calibrate only, 1 to 100; calibrate needs two.
        assert_eq!(config(&["--headless", "--repeat", "5"]).unwrap().repeat, 5);
        assert_eq!(config(&["calibrate"]).unwrap().repeat, 10);
        assert_eq!(
            config(&["calibrate", "--sets", "l2", "--repeat", "3"])
                .unwrap()
                .repeat,
            3
        );
        assert!(
            config(&["calibrate", "--repeat", "1"])
                .unwrap_err()
                .to_string()
                .contains("2 or more")
        );
        assert!(
            config(&["--headless", "--repeat", "0"])
                .unwrap_err()
                .to_string()
                .starts_with("--repeat 0")
        );
        assert!(
            config(&["--repeat", "2"])
                .unwrap_err()
                .to_string()
                .contains("only with --headless")
        );
        // The gate goes after the snapshots, as a CI step writes it, or before the subcommand.
        for argv in [
            &["compare", "a.json", "b.json", "--fail-if-slower", "5"][..],
            &["--fail-if-slower", "5", "compare", "a.json", "b.json"][..],
        ] {
            assert_eq!(config(argv).unwrap().fail_if_slower, Some(5.0), "{argv:?}");
        }
        let e = config(&["compare", "a", "b", "--fail-if-slower", "-3"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--fail-if-slower"), "{e}");
        let e = config(&["--headless", "--fail-if-slower", "5"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("only with `stream-top compare"), "{e}");
        let e = config(&["compare", "a", "b", "--counters", "off"])
            .unwrap_err()
            .to_string();
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
            assert_eq!(config(argv).unwrap_err().to_string(), message, "{argv:?}");
        }
        assert!(
            config(&["--probe", "--probe-only"])
                .unwrap_err()
                .to_string()
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
            let err = config(args).unwrap_err().to_string();
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
            let err = config(&["--headless", "--name", bad])
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("--name"), "{bad:?}: {err}");
        }
        assert!(
            config(&["--name", "x", "compare", "a", "b"])
                .unwrap_err()
                .to_string()
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
            config(&["--headless", "--readme-style", "compact"])
                .unwrap_err()
                .to_string(),
            "--readme-style: only with --readme FILE"
        );
        assert!(
            config(&["--readme-style", "full"])
                .unwrap_err()
                .to_string()
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
            let err = config(args).unwrap_err().to_string();
            assert!(err.starts_with(says), "{args:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn a_missing_argument_is_named() {
        let err = config(&["compare"]).unwrap_err().to_string();
        assert!(err.contains("not provided: <A.json|DIR>"), "{err}");
        assert!(err.contains("usage: stream-top compare"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = config(&["compare", "a.json"]).unwrap_err().to_string();
        assert!(
            err.starts_with("compare: one snapshot named; name two"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn calibrate_takes_its_grid_after_its_name_or_before_it_but_not_split() {
        let after = config(&["calibrate", "--threads", "2", "--sets", "l2"]).unwrap();
        let before = config(&["--threads", "2", "--sets", "l2", "calibrate"]).unwrap();
        assert_eq!(after.threads, Some(vec![2]));
        assert_eq!(after, before);
        let e = config(&["--threads", "2", "calibrate", "--sets", "l2"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--threads: give calibrate's grid flags all after `calibrate` or all before it"
        );
        // compare's gate before its name, as a CI step may write it.
        let c = config(&["--allow-single-run", "compare", "a", "b"]).unwrap();
        assert!(c.allow_single_run);
    }
}
