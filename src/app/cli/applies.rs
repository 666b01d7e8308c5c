//! Where each flag applies (the live monitor, --headless, a service, compare), and the refusal
//! of a flag given where it would do nothing, naming where it does something.

use super::args::{Args, Measure};
use super::config::Mode;
use crate::base::error::{Error, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};

/// A mode, as the table of where flags apply names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Live,
    Headless,
    /// `--headless --serve`: sweeps until stopped, so a duty cycle applies.
    Service,
    Compare,
    /// `calibrate`: a headless sweep, repeated.
    Calibrate,
    Replay,
    Fleet,
    Check,
}

impl Where {
    fn of(mode: &Mode, serving: bool) -> Where {
        match mode {
            Mode::Live => Where::Live,
            Mode::Headless if serving => Where::Service,
            Mode::Headless => Where::Headless,
            Mode::Compare { .. } => Where::Compare,
            Mode::Calibrate => Where::Calibrate,
            Mode::Replay { .. } => Where::Replay,
            Mode::Fleet(_) => Where::Fleet,
            Mode::Check(_) => Where::Check,
        }
    }

    /// The subcommand by its name.
    fn of_subcommand(name: &str) -> Option<Where> {
        Some(match name {
            "compare" => Where::Compare,
            "calibrate" => Where::Calibrate,
            "replay" => Where::Replay,
            _ => return None,
        })
    }

    /// The mode as a message names it: "not with {name}".
    fn name(self) -> &'static str {
        match self {
            Where::Live => "the live monitor",
            Where::Headless => "--headless",
            Where::Service => "--headless --serve",
            Where::Compare => "compare",
            Where::Calibrate => "calibrate",
            Where::Replay => "replay",
            Where::Fleet => "fleet",
            Where::Check => "check",
        }
    }
}

const MEASURING: &[Where] = &[
    Where::Live,
    Where::Headless,
    Where::Service,
    Where::Calibrate,
];
/// What measures and keeps figures to publish or export: not calibrate, which writes its spread.
const PUBLISHING: &[Where] = &[Where::Live, Where::Headless, Where::Service];
const HEADLESS: &[Where] = &[Where::Headless, Where::Service];
const ANYWHERE: &[Where] = &[
    Where::Live,
    Where::Headless,
    Where::Service,
    Where::Compare,
    Where::Calibrate,
    Where::Replay,
];

/// Where each flag of `Args` does something (by clap's id, the field's name), and a hint for
/// the person who gave it elsewhere. The one home of that fact: a flag given where it would do
/// nothing is refused (exit 2) rather than silently ignored. A test checks every flag is here.
const APPLIES: &[(&str, &[Where], &str)] = &[
    ("headless", PUBLISHING, ""),
    ("measure", MEASURING, ""),
    ("delays", MEASURING, ""),
    ("no_tlb", HEADLESS, ""),
    ("threads", MEASURING, ""),
    ("sets", MEASURING, ""),
    ("points_per_octave", MEASURING, ""),
    ("rounds", MEASURING, ""),
    ("round_ms", MEASURING, ""),
    ("pin", MEASURING, ""),
    ("kernel", MEASURING, ""),
    ("op", MEASURING, ""),
    ("stores", MEASURING, ""),
    ("huge_pages", MEASURING, ""),
    ("choices_from", MEASURING, ""),
    ("membind", MEASURING, ""),
    ("interleave", MEASURING, ""),
    ("max_memory", MEASURING, ""),
    ("measure", PUBLISHING, ""),
    ("matrix", MEASURING, ""),
    ("oversubscribe", MEASURING, ""),
    ("vendor_gbs", MEASURING, ""),
    // Headless runs each cell once at full speed: a duty cycle would only stretch the run. A
    // service sweeps on, and its duty is what it leaves the node.
    ("duty", &[Where::Live, Where::Service], ""),
    ("serve", PUBLISHING, ""),
    ("web_config", PUBLISHING, ""),
    ("prom_file", PUBLISHING, ""),
    (
        "format",
        HEADLESS,
        " (the live monitor writes every format on `e`)",
    ),
    ("export", MEASURING, ""),
    ("readme", HEADLESS, ""),
    ("readme_style", HEADLESS, ""),
    ("name", MEASURING, ""),
    ("node", MEASURING, ""),
    (
        "baseline",
        &[Where::Live],
        " (use `stream-top compare A.json B.json` to compare two snapshots)",
    ),
    ("counters", MEASURING, ""),
    ("fail_if_slower", &[Where::Compare], ""),
    ("allow_single_run", &[Where::Compare], ""),
    ("repeat", &[Where::Headless, Where::Calibrate], ""),
    ("span", &[Where::Calibrate], ""),
    ("contention_drop", &[Where::Live], ""),
    ("contention_rounds", &[Where::Live], ""),
    ("probe", PUBLISHING, ""),
    (
        "no_probe",
        &[Where::Service],
        " (the probe is on there unless told)",
    ),
    ("probe_only", &[Where::Live], ""),
    ("probe_cpu", PUBLISHING, ""),
    ("record", MEASURING, ""),
    ("record_max", MEASURING, ""),
    ("root", ANYWHERE, ""),
    ("generate", ANYWHERE, ""),
];

/// "only for the live monitor", "only with --headless", …
fn applies_phrase(places: &[Where]) -> &'static str {
    match places {
        [Where::Live] => "only for the live monitor",
        [Where::Live, Where::Service] => "only for the live monitor or --headless --serve",
        [Where::Headless, Where::Service] => "only with --headless",
        [Where::Service] => "only with --headless --serve",
        [Where::Compare] => "only with `stream-top compare A.json B.json`",
        [Where::Headless, Where::Calibrate] => "only with --headless (one sweep) or calibrate",
        [Where::Calibrate] => "only with `stream-top calibrate`",
        _ => "only when measuring (the live monitor, --headless or calibrate)",
    }
}

/// Where a flag that `subcommand` (None: stream-top itself) does not take belongs: "--span is
/// a flag of `stream-top calibrate`", or, for a flag of stream-top itself, where it applies.
pub(super) fn home_of(flag: &str, subcommand: Option<&str>) -> Option<String> {
    let long = flag.strip_prefix("--")?;
    let command = Args::command();
    let takes = |c: &clap::Command| {
        c.get_arguments()
            .any(|a| !a.is_hide_set() && a.get_long() == Some(long))
    };
    let owners: Vec<String> = command
        .get_subcommands()
        .filter(|s| Some(s.get_name()) != subcommand && takes(s))
        .map(|s| format!("`stream-top {}`", s.get_name()))
        .collect();
    if subcommand.is_some()
        && let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(long))
        && let Some((_, places, _)) = APPLIES.iter().find(|(id, _, _)| *id == arg.get_id())
    {
        let here = Where::of_subcommand(subcommand?)?;
        if places.contains(&here) {
            return Some(format!(
                "{flag} is stream-top's own: give it before the subcommand (stream-top {flag} … {})",
                subcommand?
            ));
        }
        return Some(format!(
            "{flag}: {}, not with {}",
            applies_phrase(places),
            here.name()
        ));
    }
    (!owners.is_empty()).then(|| format!("{flag} is a flag of {}", owners.join(" and ")))
}

/// The flags given on the command line (not defaults), by clap id.
pub(super) fn given_flags(matches: &ArgMatches) -> Vec<String> {
    matches
        .ids()
        .map(|id| id.as_str().to_string())
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .collect()
}

/// Refuses the first given flag that does nothing in `mode`, saying where it applies.
pub(super) fn refuse_flags_that_do_not_apply(given: &[String], mode: &Mode) -> Result<()> {
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
        return Err(Error::usage(format!(
            "--{long}: {}, not {} {}{hint}",
            applies_phrase(places),
            if here == Where::Live { "for" } else { "with" },
            here.name()
        )));
    }
    Ok(())
}

/// Flags that mean nothing to `--measure latency`, with why: one thread chases one buffer at
/// a time, in its own loop, timing its own runs, on huge pages and on 4 KiB pages both. Each is
/// refused (exit 2) rather than silently ignored.
const NOT_WITH_LATENCY: &[(&str, &str)] = &[
    ("threads", "one thread chases"),
    ("oversubscribe", "one thread chases"),
    (
        "rounds",
        "the chase times its own runs, 11 of about 1 ms each per buffer",
    ),
    (
        "round_ms",
        "the chase times its own runs, 11 of about 1 ms each per buffer",
    ),
    ("kernel", "the chase is its own loop of dependent loads"),
    ("stores", "the chase only loads"),
    (
        "huge_pages",
        "the chase runs on huge pages and on 4 KiB pages both, for the TLB cost",
    ),
    (
        "membind",
        "--matrix chases a buffer bound to each memory node in turn",
    ),
    (
        "interleave",
        "--matrix chases a buffer bound to each memory node in turn",
    ),
    ("vendor_gbs", "it is a bandwidth figure"),
    (
        "choices_from",
        "the chase is its own loop of dependent loads",
    ),
    ("duty", "the chase runs once, on one CPU"),
    ("record", "a recording holds the triad's rounds"),
    ("record_max", "a recording holds the triad's rounds"),
];

/// What `--measure` allows in `mode` with the flags `given`: latency is headless for now, and
/// refuses the flags that do not apply to it.
pub(super) fn refuse_for_measure(measure: Measure, mode: &Mode, given: &[String]) -> Result<()> {
    match measure {
        Measure::Bandwidth => Ok(()),
        // Its own refusals: `cli::loaded_latency_args`.
        Measure::LoadedLatency => Ok(()),
        Measure::Latency if *mode == Mode::Live => Err(Error::usage(
            "--measure latency: latency is headless for now (add --headless; live latency: --probe)",
        )),
        Measure::Latency => {
            let command = Args::command();
            for (id, why) in NOT_WITH_LATENCY {
                if given.iter().any(|g| g == id) {
                    let long = command
                        .get_arguments()
                        .find(|a| a.get_id() == *id)
                        .and_then(|a| a.get_long())
                        .unwrap_or(id);
                    return Err(Error::usage(format!(
                        "--{long}: not with --measure latency ({why})"
                    )));
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
