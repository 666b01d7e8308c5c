//! The recording and its replay: what the monitor saw, kept in an append-only file of framed,
//! checksummed records (`format`), written by a thread of its own that never makes the watcher
//! wait (`writer`), read back frame by frame with damage skipped (`reader`), and turned into the
//! snapshot table of a moment or a window (`replay`); the contention watch's changes go in
//! as frames of their own (`watch`), so that a replay shows the episodes the monitor had.

pub mod format;
mod plausible;
pub mod reader;
pub mod replay;
mod scan;
mod segments;
pub(crate) mod watch;
pub mod writer;

pub use format::Header;
pub use replay::{Span, TimeSpec};
pub use writer::Recorder;

use crate::app::cli::{Config, FormatArg, Mode};
use crate::base::error::{Error, Result};
use crate::base::files::{self, How};
use crate::base::output;
use crate::engine::plan::Grid;
use crate::judge::run_info::RunInfo;
use crate::judge::stats::Board;
use crate::judge::watch::contention::Thresholds;
use crate::show::report::{self, Snapshot};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

impl Header {
    /// The header of a run: its description as a snapshot with no cells.
    pub fn of(run: &RunInfo, grid: &Grid, window: usize, contention: Option<Thresholds>) -> Header {
        let ctx = run.context();
        let frame = Snapshot::build(
            run,
            grid,
            &Board::new(window),
            &run.host_start,
            run.started.clone(),
        );
        Header {
            window,
            vendor_gbs: ctx.vendor_gbs,
            ghz: ctx.ghz,
            cpus: ctx.cpus,
            not_a_measurement: ctx.not_a_measurement,
            frame,
            contention: contention.map(|t| (t.drop, t.rounds)),
        }
    }
}

/// `stream-top replay FILE… --headless`: the snapshot of the span, with what reading found
/// damaged said on stderr, and whether frames were lost before the end of a file.
fn replay_snapshot(files: &[PathBuf], span: Span) -> Result<(Snapshot, bool)> {
    let index = reader::Index::open(files)?;
    reader::tell_losses(index.damage(), index.dropped());
    let snap = replay::snapshot(|| index.frames(), span)?;
    Ok((snap, index.damage().lost_frames()))
}

/// Starts the recorder `--record` asks for (None without it), and says so on stderr. Its later
/// lines (the rate after a minute, drops) go to stderr in a headless run; under the live
/// monitor's screen they would tear it, so there the gap frames alone say what was dropped.
pub fn start(config: &Config, run: &RunInfo, grid: &Grid) -> Result<Option<Recorder>> {
    let Some(path) = &config.record else {
        return Ok(None);
    };
    let thresholds = Thresholds {
        drop: config.contention_drop,
        rounds: config.contention_rounds,
    };
    let header = Header::of(run, grid, config.rounds as usize, Some(thresholds));
    let say: writer::Say = if config.mode == Mode::Live {
        Box::new(|_: &str| {})
    } else {
        Box::new(|line: &str| output::say(line))
    };
    let max = writer::within_free_room(path, config.record_max);
    let mut recorder = Recorder::start(path, max, &header, say)?;
    // The live monitor records its own watch's changes (the keys steer it); elsewhere the
    // recorder watches the rounds itself.
    if config.mode != Mode::Live {
        recorder = recorder.with_watch(thresholds, config.rounds as usize);
    }
    output::stderr(&format!(
        "stream-top: recording to {} (at most {} in {} files{})",
        path.display(),
        crate::base::units::format_bytes(max),
        segments::MAX_ROTATED + 1,
        if config.mode == Mode::Live {
            String::new()
        } else {
            "; the rate is said after a minute".into()
        }
    ));
    Ok(Some(recorder))
}

/// `--record FILE`, before anything is measured: a path the one output check allows (its
/// directory takes the rotated files), and, when it exists and is not empty, a recording to
/// append to, never another file to write over.
pub(crate) fn check_record_file(path: &Path) -> Result<()> {
    let flag = |e: Error| e.context(&format!("--record {}", path.display()));
    files::check_output_file(path, How::Replace).map_err(flag)?;
    let mut head = [0u8; 8];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    if n > 0 && head[..n] != format::MAGIC[..n] {
        return Err(flag(Error::usage(
            "not a stream-top recording: name a new file or a recording to append to",
        )));
    }
    Ok(())
}

/// `stream-top replay FILE… --headless`: the snapshot table of a moment (the end when
/// no time is given) or of a window, on stdout in the format asked for; exit 1 when frames were
/// lost in the middle of a file (the table then lacks them), 0 otherwise.
pub fn run_replay(
    files: &[PathBuf],
    at: Option<&str>,
    window: Option<&(String, String)>,
    format: FormatArg,
) -> Result<ExitCode> {
    let time =
        |flag: &str, t: &str| TimeSpec::parse(t).map_err(|e| Error::usage(format!("--{flag} {e}")));
    let span = match (at, window) {
        (_, Some((a, b))) => Span::Window(time("from", a)?, time("to", b)?),
        (Some(t), None) => Span::At(time("at", t)?),
        (None, None) => Span::At(TimeSpec::Absolute(u64::MAX)),
    };
    let (snap, lost) = replay_snapshot(files, span)?;
    output::stdout(&report::table_text(format, &snap))?;
    Ok(if lost {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
