//! `stream-top calibrate`: the machine's run-to-run spread between processes. Each repetition
//! is a separate child process of this binary (`--headless --format json` with the same grid
//! flags), because repetitions inside one process share its pages, neighbours and period: on
//! these VMs they land within 0.1 % of each other while processes a second apart differ by up
//! to 9 %, and a spread learned inside one process makes `compare` cry wolf. The children run
//! one after another; their stderr is passed on, marked; each one's snapshot comes back on its
//! stdout, and the spread of their per-cell medians is written where `compare` finds it.

use crate::app::cli::Config;
use crate::base::error::{Error, Result};
use crate::base::output;
use crate::show::report::calibration::{self, Calibration};
use crate::show::report::{Snapshot, from_json};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// The parent's flags that a child must not get, with whether each takes a value: the
/// subcommand, the repetitions (the parent's count of children), and the outputs the parent
/// alone writes or that the children would each write again.
const NOT_FOR_A_CHILD: &[(&str, bool)] = &[
    ("calibrate", false),
    ("--repeat", true),
    ("--export", true),
    ("--record", true),
    ("--record-max", true),
];

/// A child's arguments from the parent's (without the program name): the same grid flags,
/// with `--headless --format json` and without [`NOT_FOR_A_CHILD`].
pub(crate) fn child_args(parent: &[OsString]) -> Vec<OsString> {
    let mut out: Vec<OsString> = ["--headless", "--format", "json"]
        .iter()
        .map(OsString::from)
        .collect();
    let mut dropped_subcommand = false;
    let mut args = parent.iter();
    while let Some(a) = args.next() {
        let text = a.to_string_lossy();
        let skip = NOT_FOR_A_CHILD.iter().find(|(flag, _)| {
            if *flag == "calibrate" {
                !dropped_subcommand && text == "calibrate"
            } else {
                text == *flag || text.starts_with(&format!("{flag}="))
            }
        });
        match skip {
            Some(("calibrate", _)) => dropped_subcommand = true,
            Some((flag, takes_value)) => {
                if *takes_value && text == *flag {
                    args.next();
                }
            }
            None => out.push(a.clone()),
        }
    }
    out
}

/// Runs `config.repeat` child processes of this binary, one after another, and writes the
/// spread between them.
pub fn run(config: &Config) -> Result<()> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: "calibrate: find this program's own file".into(),
        source,
    })?;
    let parent: Vec<OsString> = std::env::args_os().skip(1).collect();
    let args = child_args(&parent);
    let n = config.repeat.max(2) as usize;
    let mut snaps: Vec<Snapshot> = Vec::with_capacity(n);
    for k in 1..=n {
        output::stderr(&format!(
            "stream-top: calibrate: process {k} of {n} (a separate process: its own pages, \
             loop and neighbours)"
        ));
        snaps.push(child(&exe, &args, k, n)?);
    }
    let command_line = crate::app::session::command_line();
    let Some(c) = Calibration::from_processes(&snaps, &command_line) else {
        return Err(Error::Engine(
            "calibrate: no cell finished in two processes, so there is no spread to write".into(),
        ));
    };
    let dir = calibration::data_dir().ok_or_else(|| {
        Error::usage("calibrate: no data directory: set STREAM_TOP_DATA_DIR, XDG_DATA_HOME or HOME")
    })?;
    let mut text =
        String::from("| per array | threads | median GB/s of each process |\n|---|---|---|\n");
    for cell in &c.cells {
        let medians: Vec<String> = cell.medians.iter().map(|m| format!("{m:.2}")).collect();
        text.push_str(&format!(
            "| {} | {} | {} |\n",
            cell.label.replace('|', "\\|"),
            cell.threads,
            medians.join(", ")
        ));
    }
    let path = c.save(&dir)?;
    text.push_str(&format!(
        "\nRun-to-run spread between processes ±{:.1} % (95 % band of the ratio of two single \
         runs, pooled over {} cells, {} processes each); written to {}\n",
        c.half_width * 100.0,
        c.cells.len(),
        c.repetitions,
        path.display()
    ));
    output::stdout(&text)
}

/// Runs child `k` of `n` and reads its snapshot from its stdout; its stderr is passed on when
/// it ends, line by line through the one writer, each line marked with the process.
fn child(exe: &Path, args: &[OsString], k: usize, n: usize) -> Result<Snapshot> {
    let out = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Io {
            what: format!("calibrate: start process {k} of {n} ({})", exe.display()),
            source,
        })?;
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        output::stderr(&format!("  [process {k}] {line}"));
    }
    if !out.status.success() {
        return Err(Error::Engine(format!(
            "calibrate: process {k} of {n} failed ({}); its figures are not used",
            out.status
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    from_json(&text, Path::new(&format!("calibrate process {k}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_child_gets_the_grid_flags_and_not_the_parents_own() {
        let got = child_args(&os(&[
            "calibrate",
            "--sets",
            "l2,dram",
            "--repeat",
            "5",
            "--threads=1,2",
            "--export",
            "out",
            "--repeat=3",
            "--name",
            "calibrate",
        ]));
        assert_eq!(
            got,
            os(&[
                "--headless",
                "--format",
                "json",
                "--sets",
                "l2,dram",
                "--threads=1,2",
                "--name",
                "calibrate",
            ])
        );
    }
}
