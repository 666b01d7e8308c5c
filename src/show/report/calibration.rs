//! The machine's run-to-run spread, measured once by `stream-top calibrate` and kept under the
//! user's data directory, so that `compare` can judge two single runs against it: how far
//! apart two runs of the same command land on this machine, a figure that the rounds inside one
//! run cannot give (they share that run's pages, loop and neighbours).
//!
//! One file per host, `calibration-HOST.json` in `$STREAM_TOP_DATA_DIR`, else
//! `$XDG_DATA_HOME/stream-top`, else `~/.local/share/stream-top`. It holds each cell's
//! repetition medians and the pooled spread; a file for another CPU model is not used.
//!
//! `spread_between` says what the repetitions were: separate processes (calibrate runs each as
//! a child process of its own binary), or repetitions inside one process, as files from before
//! that field were (read as such: their spread is far too narrow for separate runs on these
//! VMs, 0.1 % against up to 9 %).

use super::model::{CellSnapshot, RunInfo, Snapshot};
use crate::base::error::{Error, Result};
use crate::base::files::replace_atomically;
use crate::judge::verdict::{
    Between, MIN_CALIBRATION_SPAN_S, Narrow, ProcessSpread, Spread, SpreadSource, pooled_log_sd,
    spread_from_repetitions,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file's format version.
const CALIBRATION_VERSION: u32 = 1;

/// What `stream-top calibrate` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    version: u32,
    hostname: String,
    cpu_model: String,
    /// When it was measured: RFC 3339.
    measured: String,
    command_line: String,
    /// Repetitions per cell.
    pub(crate) repetitions: usize,
    /// The half-width of the 95 % band of the ratio of two single runs (0.08: ±8 %), pooled
    /// over the cells.
    pub(crate) half_width: f64,
    /// Which spread the repetitions show; a file without the field measured within one process.
    #[serde(default)]
    spread_between: SpreadBetween,
    /// Seconds from the first process's start to the last one's end (`calibrate --span`); None
    /// in files from before calibrate spread its processes out (back to back, seconds).
    #[serde(default)]
    span_s: Option<f64>,
    pub(crate) cells: Vec<CalibratedCell>,
}

/// What a calibration's repetitions were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpreadBetween {
    /// Each repetition a separate process: the run-to-run spread a new run meets.
    Processes,
    /// Repetitions inside one process (`--repeat`): only that process's scatter.
    #[default]
    WithinOneProcess,
}

/// One cell's repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedCell {
    pub(crate) label: String,
    pub(crate) threads: usize,
    /// Each repetition's median, GB/s.
    pub(crate) medians: Vec<f64>,
}

impl Calibration {
    /// The spread between separate processes of the same command, from one snapshot of each
    /// (their per-cell medians); None when no cell is in two of them.
    pub fn from_processes(
        snaps: &[Snapshot],
        command_line: &str,
        span_s: f64,
    ) -> Option<Calibration> {
        let first = snaps.first()?;
        let cells = calibrated_cells(first, |c| {
            snaps
                .iter()
                .filter_map(|s| {
                    s.cells
                        .iter()
                        .find(|o| !o.rerun && o.label == c.label && o.threads == c.threads)
                })
                .map(|o| o.figures.median_gbs)
                .collect()
        });
        Calibration::of_cells(
            first,
            command_line,
            cells,
            snaps.len(),
            SpreadBetween::Processes,
        )
        .map(|c| Calibration {
            span_s: Some(span_s),
            ..c
        })
    }

    /// The spread a snapshot with repetitions shows (inside its one process); None when no
    /// cell has two.
    pub fn from_snapshot(s: &Snapshot) -> Option<Calibration> {
        let cells = calibrated_cells(s, |c| c.repetitions.clone());
        let repetitions = cells.iter().map(|c| c.medians.len()).max().unwrap_or(0);
        let command_line = s.info.command_line.clone();
        Calibration::of_cells(
            s,
            &command_line,
            cells,
            repetitions,
            SpreadBetween::WithinOneProcess,
        )
    }

    /// A calibration of `cells`, described by the run `first` (host, CPU, time), with the spread
    /// pooled over them; no span. None when no cell has two repetitions.
    fn of_cells(
        first: &Snapshot,
        command_line: &str,
        cells: Vec<CalibratedCell>,
        repetitions: usize,
        spread_between: SpreadBetween,
    ) -> Option<Calibration> {
        let spread = spread_from_repetitions(&medians_of(&cells))?;
        Some(Calibration {
            version: CALIBRATION_VERSION,
            hostname: first.info.hostname.clone(),
            cpu_model: first.info.topology.model.trim().to_string(),
            measured: first.taken.clone(),
            command_line: command_line.to_string(),
            repetitions,
            half_width: spread.half_width,
            spread_between,
            span_s: None,
            cells,
        })
    }

    /// Writes it atomically to its file under `dir`, creating `dir`; returns the path.
    pub fn save(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            what: format!("create {}", dir.display()),
            source,
        })?;
        let path = dir.join(file_name(&self.hostname));
        let text = serde_json::to_string_pretty(self).expect("plain data serializes") + "\n";
        replace_atomically(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// Each cell's repetition medians, as the spread's estimators take them.
fn medians_of(cells: &[CalibratedCell]) -> Vec<Vec<f64>> {
    cells.iter().map(|c| c.medians.clone()).collect()
}

/// `calibration-HOST.json`, the host name kept to characters safe in a file name.
fn file_name(hostname: &str) -> String {
    let safe: String = hostname
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("calibration-{safe}.json")
}

/// Where calibrations live: `$STREAM_TOP_DATA_DIR`, else `$XDG_DATA_HOME/stream-top`, else
/// `$HOME/.local/share/stream-top`; None without any of them.
pub(crate) fn data_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    var("STREAM_TOP_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("stream-top")))
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/share/stream-top")))
}

/// The calibration of the machine a run describes: its host's file, when it measured the same
/// CPU model, with the file's path. A file that cannot be read is passed over (the comparison
/// then says that no spread is known).
pub(crate) fn load_for(info: &RunInfo) -> Option<(Calibration, PathBuf)> {
    let file = data_dir()?.join(file_name(&info.hostname));
    let text = std::fs::read_to_string(&file).ok()?;
    let c: Calibration = serde_json::from_str(&text).ok()?;
    let same = c.version == CALIBRATION_VERSION
        && c.hostname == info.hostname
        && c.cpu_model == info.topology.model.trim()
        && c.half_width.is_finite()
        && c.half_width > 0.0;
    same.then_some((c, file))
}

impl Calibration {
    /// The spread of the cell with this label and thread count: from its own repetitions
    /// where it has two or more, but never narrower than the spread pooled over every cell. A
    /// few processes can all miss a cell's rare slow runs: here the first l2 cell's five
    /// calibrated processes agreed within ±1 % while one run in six of the same command landed
    /// 4–10 % off, and its own spread called 15 of 40 same-against-same pairs different.
    pub(crate) fn spread_of(&self, file: &Path, label: &str, threads: usize) -> Spread {
        let own = self
            .cells
            .iter()
            .find(|c| c.label == label && c.threads == threads)
            .and_then(|c| spread_from_repetitions(std::slice::from_ref(&c.medians)));
        Spread {
            half_width: own.map_or(self.half_width, |s| s.half_width.max(self.half_width)),
            source: self.source(file),
            narrow: self.narrow(),
        }
    }

    /// Why its spread is too narrow for runs a user compares: repetitions inside one process,
    /// or processes that ran within [`MIN_CALIBRATION_SPAN_S`] of each other.
    fn narrow(&self) -> Option<Narrow> {
        match (self.spread_between, self.span_s) {
            (SpreadBetween::WithinOneProcess, _) => Some(Narrow::WithinOneProcess),
            (SpreadBetween::Processes, Some(s)) if s >= MIN_CALIBRATION_SPAN_S => None,
            (SpreadBetween::Processes, span_s) => Some(Narrow::BackToBack { span_s }),
        }
    }

    fn source(&self, file: &Path) -> SpreadSource {
        SpreadSource::Calibration {
            file: file.display().to_string(),
            measured: match self.span_s {
                Some(span) => format!(
                    "{} over {span:.0} s ({} processes)",
                    crate::base::time::display(&self.measured),
                    self.repetitions
                ),
                None => crate::base::time::display(&self.measured),
            },
        }
    }

    /// The spread between processes for the cell with this label and thread count (its own
    /// medians where it has two or more, but never under the spread pooled over every cell, as
    /// [`Calibration::spread_of`]), for sides whose repetitions come from one process; a
    /// calibration inside one process or back to back cannot give it.
    pub(crate) fn between_of(&self, file: &Path, label: &str, threads: usize) -> Between {
        if let Some(n) = self.narrow() {
            return Between::TooNarrow(n);
        }
        let own = self
            .cells
            .iter()
            .find(|c| c.label == label && c.threads == threads)
            .and_then(|c| pooled_log_sd(std::slice::from_ref(&c.medians)));
        let pooled = pooled_log_sd(&medians_of(&self.cells));
        let wider = match (own, pooled) {
            (Some(o), Some(p)) if o.0 >= p.0 => Some(o),
            (_, Some(p)) => Some(p),
            (o, None) => o,
        };
        match wider {
            Some((sd, df, _)) => Between::Calibrated(ProcessSpread {
                sd,
                df: df as f64,
                source: self.source(file),
            }),
            None => Between::TooNarrow(Narrow::WithinOneProcess),
        }
    }
}

/// A calibration's cells: each cell of `s` but the rerun, with its medians as `medians` finds
/// them.
fn calibrated_cells(
    s: &Snapshot,
    medians: impl Fn(&CellSnapshot) -> Vec<f64>,
) -> Vec<CalibratedCell> {
    s.cells
        .iter()
        .filter(|c| !c.rerun)
        .map(|c| CalibratedCell {
            label: c.label.clone(),
            threads: c.threads,
            medians: medians(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibration over five minutes of a steady cell and a scattered one.
    fn calibration() -> Calibration {
        let cell = |label: &str, medians: &[f64]| CalibratedCell {
            label: label.into(),
            threads: 1,
            medians: medians.to_vec(),
        };
        let cells = vec![
            cell("l2", &[100.0, 100.1, 99.9, 100.0, 100.05]),
            cell("dram", &[20.0, 21.0, 19.0, 20.5, 19.5]),
        ];
        let reps: Vec<Vec<f64>> = cells.iter().map(|c| c.medians.clone()).collect();
        Calibration {
            version: CALIBRATION_VERSION,
            hostname: "h".into(),
            cpu_model: "cpu".into(),
            measured: "2026-12-02T03:00:00Z".into(),
            command_line: "stream-top calibrate".into(),
            repetitions: 5,
            half_width: spread_from_repetitions(&reps).unwrap().half_width,
            spread_between: SpreadBetween::Processes,
            span_s: Some(300.0),
            cells,
        }
    }

    #[test]
    fn a_cell_spread_is_its_own_but_never_under_the_pooled_one() {
        let c = calibration();
        let f = Path::new("cal.json");
        let steady = c.spread_of(f, "l2", 1).half_width;
        let scattered = c.spread_of(f, "dram", 1).half_width;
        assert_eq!(
            steady, c.half_width,
            "the steady cell takes the pooled spread"
        );
        assert!(scattered > c.half_width, "the scattered cell keeps its own");
        let sd = |b: Between| match b {
            Between::Calibrated(p) => p.sd,
            other => panic!("{other:?}"),
        };
        let pooled = pooled_log_sd(&[c.cells[0].medians.clone(), c.cells[1].medians.clone()]);
        assert_eq!(sd(c.between_of(f, "l2", 1)), pooled.unwrap().0);
        assert!(sd(c.between_of(f, "dram", 1)) > pooled.unwrap().0);
    }

    #[test]
    fn processes_within_a_minute_or_inside_one_are_too_narrow() {
        let f = Path::new("cal.json");
        let mut c = calibration();
        assert_eq!(c.spread_of(f, "l2", 1).narrow, None);
        c.span_s = Some(4.0);
        assert_eq!(
            c.spread_of(f, "l2", 1).narrow,
            Some(Narrow::BackToBack { span_s: Some(4.0) })
        );
        assert!(matches!(c.between_of(f, "l2", 1), Between::TooNarrow(_)));
        c.span_s = None;
        assert_eq!(
            c.spread_of(f, "l2", 1).narrow,
            Some(Narrow::BackToBack { span_s: None })
        );
        c.spread_between = SpreadBetween::WithinOneProcess;
        assert_eq!(
            c.spread_of(f, "l2", 1).narrow,
            Some(Narrow::WithinOneProcess)
        );
    }
}
