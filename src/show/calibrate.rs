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
use crate::judge::verdict::{detectable_change, pooled_log_sd};
use crate::judge::watch::narrative::duration;
use crate::platform::Signals;
use crate::platform::signals::{Asks, PARK_WAIT, signal_name, stop_process};
use crate::show::report::calibration::{self, Calibration};
use crate::show::report::{Snapshot, from_json};
use crossbeam_channel::Receiver;
use signal_hook::consts::{SIGCONT, SIGSTOP, SIGTSTP};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The parent's flags that a child must not get, with whether each takes a value: the
/// subcommand, the repetitions (the parent's count of children), and the outputs the parent
/// alone writes or that the children would each write again.
const NOT_FOR_A_CHILD: &[(&str, bool)] = &[
    ("calibrate", false),
    ("--repeat", true),
    ("--span", true),
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

/// Runs `config.repeat` child processes of this binary, spread evenly over `--span` (the
/// first at once, the last at the span's end), and writes the spread between them. SIGINT or
/// SIGTERM stops it: the processes that finished are written when there are two or more.
/// Returns the signal that stopped it, if one did.
pub fn run(config: &Config) -> Result<Option<i32>> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: "calibrate: find this program's own file".into(),
        source,
    })?;
    let parent: Vec<OsString> = std::env::args_os().skip(1).collect();
    let args = child_args(&parent);
    let n = config.repeat.max(2) as usize;
    let span = Duration::from_millis(config.calibrate_span_ms);
    if !span.is_zero() {
        output::stderr(&format!(
            "stream-top: calibrate: {n} processes spread over {} (--span), one every {}, so \
             that the spread holds the drift between runs minutes apart",
            duration(span),
            duration(span / (n as u32 - 1))
        ));
    }
    let (_signals, signal_rx) = Signals::start()?;
    let start = Instant::now();
    let mut snaps: Vec<Snapshot> = Vec::with_capacity(n);
    let mut stopped = None;
    for k in 1..=n {
        let due = start + span.mul_f64((k - 1) as f64 / (n - 1) as f64);
        stopped = wait_until(due, &signal_rx);
        if stopped.is_some() {
            break;
        }
        output::stderr(&format!(
            "stream-top: calibrate: process {k} of {n} (a separate process: its own pages, \
             loop and neighbours)"
        ));
        match child(&exe, &args, (k, n), &signal_rx) {
            Ok(ChildEnd::Done(s)) => {
                let s = *s;
                snaps.push(s);
                output::stderr(&format!("stream-top: calibrate: process {k} of {n} done"));
            }
            Ok(ChildEnd::Stopped(sig)) => {
                stopped = Some(sig);
                break;
            }
            // The child got the terminal's signal too and ended early: not a figure. (Its
            // signal may reach this process's channel a moment after the child ended.)
            Err(e) => match wait_until(Instant::now() + SIGNAL_GRACE, &signal_rx) {
                Some(sig) => {
                    stopped = Some(sig);
                    break;
                }
                None => return Err(e),
            },
        }
    }
    let covered = start.elapsed();
    if let Some(sig) = stopped {
        output::stderr(&format!(
            "stream-top: calibrate: stopped by {} after {} of {n} processes ({})",
            signal_name(sig),
            snaps.len(),
            if snaps.len() >= 2 {
                "writing the spread they show"
            } else {
                "too few for a spread: nothing written"
            }
        ));
        if snaps.len() < 2 {
            return Ok(Some(sig));
        }
    }
    let command_line = crate::app::session::command_line();
    let Some(c) = Calibration::from_processes(&snaps, &command_line, covered.as_secs_f64()) else {
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
         runs, pooled over {} cells, {} processes each over {}); written to {}\n",
        c.half_width * 100.0,
        c.cells.len(),
        c.repetitions,
        duration(covered),
        path.display()
    ));
    text.push_str(&detectable_lines(&c));
    output::stdout(&text)?;
    Ok(stopped)
}

/// The processes a side the recipe takes, for the change they can tell.
const RECIPE_PROCESSES: usize = 5;

/// The change a useful comparison tells at the least: a spread that cannot tell this with
/// the recipe's processes is too wide to decide anything useful.
const USEFUL_CHANGE: f64 = 0.10;

/// What size of change the measured spread lets a comparison tell with the recipe's processes
/// a side, and, where that is too wide to be useful, what would help.
fn detectable_lines(c: &Calibration) -> String {
    let reps: Vec<Vec<f64>> = c.cells.iter().map(|cell| cell.medians.clone()).collect();
    let Some((sd, _, _)) = pooled_log_sd(&reps) else {
        return String::new();
    };
    let change = detectable_change(sd, RECIPE_PROCESSES);
    let mut text = format!(
        "At this spread, {RECIPE_PROCESSES} interleaved processes a side tell a change beyond \
         ±{:.1} % (the least B/A a gate at 1 % can call slower: {:.3}).\n",
        change * 100.0,
        1.0 / (1.0 + change)
    );
    if change > USEFUL_CHANGE {
        let needed = (RECIPE_PROCESSES..=1000).find(|&n| detectable_change(sd, n) <= 0.05);
        text.push_str(&format!(
            "Too wide to decide anything useful. What would help: a quiet host (nothing else \
             running), more processes a side ({}), and the same loop and page layout on both \
             sides (--kernel NAME --huge-pages on).\n",
            needed.map_or("more than 1000 for ±5 %".to_string(), |n| format!(
                "{n} for ±5 %"
            ))
        ));
    }
    text
}

/// How long a failed child's end waits for the signal that may have ended it.
const SIGNAL_GRACE: Duration = Duration::from_millis(200);

/// Waits until `due`; returns early with a signal that ends the run (SIGINT, SIGTERM, SIGHUP,
/// SIGQUIT). Ctrl-Z stops the process as a job and the wait goes on once it is continued.
fn wait_until(due: Instant, signals: &Receiver<i32>) -> Option<i32> {
    loop {
        match signals.recv_timeout(due.saturating_duration_since(Instant::now())) {
            Ok(sig) => match Asks::of(sig) {
                Asks::End(sig) => return Some(sig),
                Asks::Stop => {
                    let _ = stop_process();
                }
                Asks::Continued => {}
            },
            Err(_) => return None,
        }
    }
}

/// How a child ended: with its snapshot, or stopped by a signal this process was sent and
/// passed on to it.
enum ChildEnd {
    Done(Box<Snapshot>),
    Stopped(i32),
}

/// How often the parent looks whether its child has ended, between signals.
const CHILD_POLL: Duration = Duration::from_millis(50);

/// Runs child `k` of `n` and reads its snapshot from its stdout; its stderr is passed on when
/// it ends, line by line through the one writer, each line marked with the process. The child
/// dies with this process (`kill -9` too), and the signals this process gets are passed on to
/// it while it runs: SIGTERM or SIGINT ends it (its figures are then not used), Ctrl-Z stops
/// it with this process and SIGCONT continues both.
fn child(
    exe: &Path,
    args: &[OsString],
    (k, n): (usize, usize),
    signals: &Receiver<i32>,
) -> Result<ChildEnd> {
    let mut cmd = Command::new(exe);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its stdin becomes the pipe that ends it with this process: kept in `running` till then.
    crate::platform::die_with_parent(&mut cmd);
    let mut running = cmd.spawn().map_err(|source| Error::Io {
        what: format!("calibrate: start process {k} of {n} ({})", exe.display()),
        source,
    })?;
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut text);
            }
            text
        })
    };
    let stdout = read(running.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(running.stderr.take().map(|p| Box::new(p) as _));
    let (status, stopped) = wait_forwarding(&mut running, signals, (k, n))?;
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    for line in String::from_utf8_lossy(&stderr).lines() {
        output::stderr(&format!("  [process {k}] {line}"));
    }
    if let Some(sig) = stopped {
        return Ok(ChildEnd::Stopped(sig));
    }
    if !status.success() {
        return Err(Error::Engine(format!(
            "calibrate: process {k} of {n} failed ({status}); its figures are not used"
        )));
    }
    let text = String::from_utf8_lossy(&stdout);
    from_json(&text, Path::new(&format!("calibrate process {k}")))
        .map(|s| ChildEnd::Done(Box::new(s)))
}

/// Waits for the running child, passing on each signal this process gets: an ending signal
/// (returned with the status) ends the child; SIGTSTP stops the child, then this process;
/// SIGCONT continues the child once this process is continued.
fn wait_forwarding(
    running: &mut std::process::Child,
    signals: &Receiver<i32>,
    (k, n): (usize, usize),
) -> Result<(std::process::ExitStatus, Option<i32>)> {
    let pid = running.id();
    let mut stopped = None;
    loop {
        let waited = running.try_wait().map_err(|source| Error::Io {
            what: format!("calibrate: wait for process {k} of {n}"),
            source,
        })?;
        if let Some(status) = waited {
            return Ok((status, stopped));
        }
        let Ok(sig) = signals.recv_timeout(CHILD_POLL) else {
            continue;
        };
        match Asks::of(sig) {
            Asks::End(sig) => {
                stopped.get_or_insert(sig);
                let _ = crate::platform::send_signal(pid, sig);
            }
            Asks::Stop => {
                let _ = crate::platform::send_signal(pid, SIGTSTP);
                // A child still starting has not taken its signals yet: SIGTSTP's default
                // action, which the kernel discards in an orphaned process group (a job whose
                // shell is gone, a runner's background job). Once the child had its time to
                // park its workers, SIGSTOP, which nothing discards, makes sure it stopped
                // (nothing more when it already had).
                std::thread::sleep(2 * PARK_WAIT);
                let _ = crate::platform::send_signal(pid, SIGSTOP);
                let _ = stop_process();
                let _ = crate::platform::send_signal(pid, SIGCONT);
            }
            Asks::Continued => {
                let _ = crate::platform::send_signal(pid, SIGCONT);
            }
        }
    }
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
