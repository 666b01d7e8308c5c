//! `stream-top --generate KIND`: the man page and the shells' completions, made from the same
//! clap definitions as `--help`, so that neither can drift from the flags.

use super::args::{Args, Generate};
use crate::base::error::{Error, Result};
use crate::engine::kernel::{Isa, Variant};
use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

/// The keys of the live monitor, as its help overlay (`?`) lists them.
pub const LIVE_KEYS: &[(&str, &str)] = &[
    ("arrows, hjkl, a click", "move the selection over the grid"),
    (
        "Enter",
        "focus the selected cell (only it runs) or back to the sweep",
    ),
    ("space", "pause or resume"),
    ("d", "duty 100 → 50 → 10 %"),
    (
        "e",
        "export a snapshot (md, csv, json, svg) into --export's DIR",
    ),
    (
        "r, R, R R",
        "reset the selected cell; try failed cells again; reset all cells",
    ),
    ("p", "pin the selected cell's figure as its reference"),
    ("t", "threads: summary or the full list"),
    ("PgUp PgDn Home End", "scroll"),
    ("L", "the log: / search, n N older/newer, f kind"),
    ("P", "the latency probe on or off"),
    ("o", "the next op of --op"),
    ("?", "help: every figure explained"),
    ("Ctrl-Z", "suspend (fg resumes)"),
    ("q, Esc, Ctrl-C", "quit"),
];

/// Exit codes, as the man page states them.
const EXIT_CODES: &[(&str, &str)] = &[
    ("0", "success"),
    (
        "1",
        "a failed run, or a regression past compare --fail-if-slower",
    ),
    (
        "2",
        "the person's error: a flag, a value, a file or address named, no terminal",
    ),
    (
        "3",
        "compare could not decide (too few runs to judge a cell)",
    ),
    (
        "128+n",
        "ended by signal n (130 for SIGINT, 143 for SIGTERM)",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "results/",
        "where `e` writes snapshots when --export is not given",
    ),
    (
        "$STREAM_TOP_DATA_DIR, $XDG_DATA_HOME/stream-top, ~/.local/share/stream-top",
        "where calibrate writes the machine's spread and compare reads it",
    ),
    (
        "docs/",
        "the manual beside the README: method, kernels, fleets",
    ),
];

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "STREAM_TOP_DATA_DIR",
        "where calibrations live (before XDG_DATA_HOME and HOME)",
    ),
    (
        "XDG_DATA_HOME, HOME",
        "where calibrations live when STREAM_TOP_DATA_DIR is unset",
    ),
    ("NO_COLOR", "the live monitor draws without colour"),
    ("TERM", "the terminal the live monitor draws on"),
];

const EXAMPLES: &[(&str, &str)] = &[
    ("stream-top", "the live monitor"),
    (
        "stream-top --headless --threads 1,2 --sets l1,l2,dram",
        "one sweep, the table on stdout",
    ),
    (
        "stream-top --headless --name before --export results",
        "a snapshot to compare later",
    ),
    (
        "stream-top compare before.json after.json",
        "B/A per cell, with a verdict",
    ),
    (
        "stream-top calibrate --sets l2,dram",
        "the machine's run-to-run spread",
    ),
    (
        "stream-top --headless --measure latency",
        "idle latency at l1, l2, l3, dram",
    ),
    (
        "stream-top --headless --serve",
        "a Prometheus target that sweeps until stopped",
    ),
];

/// `--version`: the version, the git commit when built from a checkout, and the instruction
/// sets the kernels were compiled for (those this CPU runs in brackets).
pub fn version_text() -> String {
    let commit = option_env!("STREAM_TOP_GIT_COMMIT")
        .map(|c| format!(" (git {c})"))
        .unwrap_or_default();
    let compiled: Vec<Isa> = Isa::ALL
        .into_iter()
        .filter(|isa| Variant::all().any(|v| v.isa == *isa))
        .collect();
    let names = |isas: &[Isa]| isas.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ");
    let runs: Vec<Isa> = compiled.iter().copied().filter(|i| i.available()).collect();
    format!(
        "stream-top {}{commit}\nkernels built for {}: {} (this CPU runs {})\n",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH,
        names(&compiled),
        names(&runs)
    )
}

/// The text `--generate kind` prints.
pub fn generate(kind: Generate) -> Result<String> {
    let mut out = Vec::new();
    let mut command = Args::command();
    let shell = match kind {
        Generate::Man => return man_page(),
        Generate::CompleteBash => Shell::Bash,
        Generate::CompleteZsh => Shell::Zsh,
        Generate::CompleteFish => Shell::Fish,
        Generate::CompletePowershell => Shell::PowerShell,
    };
    clap_complete::generate(shell, &mut command, "stream-top", &mut out);
    String::from_utf8(out).map_err(|e| Error::engine(format!("--generate: {e}")))
}

/// The man page: clap_mangen's sections (name, synopsis, description, the flags by heading,
/// the subcommands with their own flags) and ours (keys, exit status, files, environment,
/// examples).
fn man_page() -> Result<String> {
    let man = Man::new(Args::command());
    let mut out: Vec<u8> = Vec::new();
    let io = |e: std::io::Error| Error::stream("the man page", e);
    man.render_title(&mut out).map_err(io)?;
    man.render_name_section(&mut out).map_err(io)?;
    man.render_synopsis_section(&mut out).map_err(io)?;
    man.render_description_section(&mut out).map_err(io)?;
    man.render_options_section(&mut out).map_err(io)?;
    let mut roff = Roff::new();
    roff.control("SH", ["MODES AND SUBCOMMANDS"]);
    for sub in Args::command().get_subcommands() {
        roff.control("SS", [format!("stream-top {}", sub.get_name()).as_str()]);
        let about = sub.get_long_about().or(sub.get_about());
        roff.text([roman(about.map(|a| a.to_string()).unwrap_or_default())]);
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            roff.control("TP", []);
            roff.text([bold(format!("--{long}"))]);
            let help = arg.get_long_help().or(arg.get_help());
            roff.text([roman(help.map(|h| h.to_string()).unwrap_or_default())]);
        }
    }
    let mut table = |title: &str, rows: &[(&str, &str)]| {
        roff.control("SH", [title]);
        for (term, text) in rows {
            roff.control("TP", []);
            roff.text([bold(*term)]);
            roff.text([roman(*text)]);
        }
    };
    table("KEYS OF THE LIVE MONITOR", LIVE_KEYS);
    table("EXIT STATUS", EXIT_CODES);
    table("FILES", FILES);
    table("ENVIRONMENT", ENVIRONMENT);
    table("EXAMPLES", EXAMPLES);
    roff.to_writer(&mut out).map_err(io)?;
    man.render_version_section(&mut out).map_err(io)?;
    let text = String::from_utf8(out).map_err(|e| Error::engine(format!("--generate man: {e}")))?;
    Ok(groff_escapes(&text))
}

/// Text with each character past ASCII as groff's escape for it (`×` → `\[u00D7]`), which
/// every troff reads without a preprocessor.
fn groff_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}
