//! Who fills a scrape in. The loop that watches the engine (the live monitor
//! or headless) keeps an [`Exporter`]: it counts rounds from the events it already receives,
//! and now and then publishes a [`Scrape`], a copy of the figures, into a [`Shared`] slot. The
//! server only ever takes the latest copy from that slot: it never touches the engine, the
//! board or the UI, and no one waits on it (the slot's lock is held for a pointer swap).

use super::http::{Listener, Server};
use super::latency::LatencyFigures;
use super::scrape::{CellFigures, ProbeFigures, RunLabels, Scrape, Shared};
use crate::base::error::{Error, Result};
use crate::base::files::{self, How};
use crate::base::output;
use crate::base::units::format_bytes;
use crate::engine::events::Event;
use crate::engine::latency::probe::ProbeEvent;
use crate::engine::plan::{CellId, Grid};
use crate::judge::run_info::RunInfo;
use crate::judge::stats::{Board, Context};
use crate::judge::watch::contention::{Change, Disturbed, EpisodeKind, Thresholds, Watch};
use crate::judge::watch::probe::ProbeWatch;
use crate::machine::host::HostSample;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Figures are copied for the server at most this often (and at the end of each sweep).
const PUBLISH_EVERY: Duration = Duration::from_millis(250);

/// A cell is still warming up until it has the timed rounds of a first figure since the start.
const FIRST_FIGURE_ROUNDS: u64 = crate::engine::FIRST_FIGURE_ROUNDS as u64;

/// Counts per cell, from the events: they only grow, as Prometheus counters must (the
/// board's window and its resets do not touch them).
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    rounds: u64,
    late_rounds: u64,
    checksum_failures: u64,
    last_round_ns: Option<u64>,
    /// Timed rounds the board judged disturbed.
    disturbed_rounds: u64,
    /// Episodes the contention watch opened on the cell: contention, disturbance.
    episodes: [u64; 2],
}

/// Sweeps over the whole grid, from the checksums and failures: when the last ended and how
/// long it took.
#[derive(Debug, Clone)]
struct Sweeps {
    /// Cells whose visit ended in the sweep under way: with a checksum, or failed.
    cells: BTreeSet<CellId>,
    started: Instant,
    /// The last complete sweep: when it ended (wall clock, seconds since 1970) and its length.
    last: Option<(f64, Duration)>,
    count: u64,
}

/// The arrays the engine holds (`Event::ArraysHeld`) and how often it mapped and first-touched
/// a cell's arrays (`Event::Allocated`: every visit of a service, which lets them go between).
#[derive(Debug, Clone, Copy, Default)]
struct Memory {
    held: Option<u64>,
    mapped: u64,
}

/// Feeds the server's slot and the textfile from the loop that watches the engine; owns the
/// server, which stops when the exporter is dropped.
pub struct Exporter {
    server: Option<Server>,
    shared: Shared,
    prom_file: Option<PathBuf>,
    run: RunLabels,
    memory_limit: Option<u64>,
    ctx: Context,
    tally: BTreeMap<CellId, Tally>,
    host: Option<HostSample>,
    /// Cells whose configuration ended (their checksum came, or they failed) since the
    /// textfile was written.
    swept: BTreeSet<CellId>,
    /// Cells that could not run and have not been tried again since: the engine skips them,
    /// so a sweep is complete without them.
    failed: BTreeSet<CellId>,
    /// Failed cells tried again since the start.
    retries: u64,
    last_publish: Option<Instant>,
    /// Why the textfile's last write failed (a full disk), None when it succeeded: the run
    /// ends with exit 1 unless a later write succeeds.
    write_failed: Option<String>,
    /// The contention watch the live monitor runs, fed the same rounds, for
    /// `stream_top_contended` and the episode counters (set by `watch_contention`).
    watch: Option<Watch>,
    sweeps: Sweeps,
    memory: Memory,
    /// A service says after each sweep how long it took and how often it mapped arrays.
    log_sweeps: bool,
    /// Records the recorder dropped (`--record`), once it reports any: None when not recording.
    record_dropped: Option<u64>,
    /// Something changed that must not wait for the next event to be published: a service
    /// idles tens of seconds after letting its arrays go or after a checksum.
    urgent: bool,
    /// The latency probe's watch, once a probe event came (`on_probe`).
    probe: Option<ProbeWatch>,
    /// Idle latency per buffer, once a latency run measured it.
    latency: Vec<LatencyFigures>,
    /// When the exporter started, and whether a service said that every cell has its first
    /// figure ([`FIRST_FIGURE_ROUNDS`]): it says so once.
    started: Instant,
    said_warm: bool,
}

impl Exporter {
    /// Starts serving on `listener` (`--serve`, bound earlier) and writes `prom_file` after
    /// each sweep (`--prom-file`). None when neither is asked for.
    pub fn start(
        listener: Option<Listener>,
        prom_file: Option<PathBuf>,
        info: &RunInfo,
    ) -> Result<Option<Exporter>> {
        if listener.is_none() && prom_file.is_none() {
            return Ok(None);
        }
        let shared = Shared::default();
        let server = listener
            .map(|l| Server::start(l, shared.clone()))
            .transpose()?;
        Ok(Some(Exporter::new(server, shared, prom_file, info)))
    }

    fn new(
        server: Option<Server>,
        shared: Shared,
        prom_file: Option<PathBuf>,
        info: &RunInfo,
    ) -> Exporter {
        Exporter {
            server,
            shared,
            prom_file,
            run: RunLabels::of(info),
            memory_limit: info.container.and_then(|c| c.memory_limit),
            ctx: info.context(),
            tally: BTreeMap::new(),
            host: None,
            swept: BTreeSet::new(),
            failed: BTreeSet::new(),
            retries: 0,
            last_publish: None,
            write_failed: None,
            watch: None,
            sweeps: Sweeps {
                cells: BTreeSet::new(),
                started: Instant::now(),
                last: None,
                count: 0,
            },
            memory: Memory::default(),
            log_sweeps: false,
            record_dropped: None,
            urgent: false,
            probe: None,
            latency: Vec::new(),
            started: Instant::now(),
            said_warm: false,
        }
    }

    /// The contention watch's thresholds (`--contention-drop`, `--contention-rounds`) and its
    /// window of rounds (`--rounds`), as the live monitor's.
    pub fn watch_contention(&mut self, thresholds: Thresholds, window: usize) {
        self.watch = Some(Watch::new(thresholds, window.max(1)));
    }

    /// The idle latency a run measured (`--measure latency`), for the next publish.
    pub fn on_latency(&mut self, figures: Vec<LatencyFigures>) {
        self.latency = figures;
        self.urgent = true;
    }

    /// A service logs each sweep on stderr: its length and how often arrays were mapped.
    pub fn log_sweeps(&mut self) {
        self.log_sweeps = true;
    }

    /// The recorder's count of dropped records so far (`--record`): from the first call on,
    /// `stream_top_record_dropped_total` is exposed.
    pub(crate) fn record_dropped(&mut self, total: u64) {
        self.record_dropped = Some(total);
    }

    /// Takes in an engine event (every one the loop receives), after `board` recorded it: the
    /// board's finding on a round (disturbed or not) is what the contention watch hears.
    pub fn on_event(&mut self, ev: &Event, board: &Board) {
        self.on_event_at(ev, board, Instant::now());
    }

    /// Takes in an engine event that came at `at`.
    pub fn on_event_at(&mut self, ev: &Event, board: &Board, at: Instant) {
        match ev {
            // The headless rerun of the first cell counts with that cell: same labels.
            Event::Round(r) if !r.warmup => {
                let id = CellId::of(r.cell.op, r.cell.set, r.cell.threads);
                let disturbed = board.cell(r.cell).is_some_and(|c| c.last_finding.disturbed);
                let changes = match &mut self.watch {
                    Some(w) => w.round(id, r.gbs(), Disturbed::judged(r, disturbed), at),
                    None => Vec::new(),
                };
                let t = self.tally.entry(id).or_default();
                t.rounds += 1;
                t.late_rounds += u64::from(r.late);
                t.disturbed_rounds += u64::from(disturbed);
                t.last_round_ns = r.threads.iter().map(|t| t.end_ns).max();
                for c in changes {
                    if let Change::Began(ep) = c {
                        let kind = self
                            .watch
                            .as_ref()
                            .and_then(|w| w.episode(ep))
                            .map(|e| e.kind);
                        let t = self.tally.entry(id).or_default();
                        match kind {
                            Some(EpisodeKind::Contention) => t.episodes[0] += 1,
                            Some(EpisodeKind::Disturbance) => t.episodes[1] += 1,
                            None => {}
                        }
                    }
                }
            }
            Event::Checksum(c) => {
                let id = CellId::of(c.cell.op, c.cell.set, c.cell.threads);
                self.tally.entry(id).or_default().checksum_failures += u64::from(!c.ok);
                self.swept.insert(c.cell);
                self.sweeps.cells.insert(c.cell);
                self.urgent = true;
            }
            Event::CellFailed { cell, .. } => {
                self.failed.insert(*cell);
                self.swept.insert(*cell);
                self.sweeps.cells.insert(*cell);
                self.urgent = true;
            }
            // It must end in this sweep again, with a checksum or a failure.
            Event::CellRetry { cell, .. } => {
                self.failed.remove(cell);
                self.swept.remove(cell);
                self.sweeps.cells.remove(cell);
                self.retries += 1;
                self.urgent = true;
            }
            Event::ArraysHeld(bytes) => {
                self.memory.held = Some(*bytes);
                self.urgent = true;
            }
            Event::Allocated { .. } => self.memory.mapped += 1,
            _ => {}
        }
    }

    /// Takes in a probe event: its samples feed the probe's own watch (the live monitor's
    /// thresholds), which `stream_top_probe_*` publish.
    pub fn on_probe(&mut self, ev: &ProbeEvent) {
        let w = self.probe.get_or_insert_with(ProbeWatch::default);
        if let ProbeEvent::Sample(s) = ev {
            w.sample(s.ns, s.at);
        }
    }

    /// Ends the sweep under way when every cell of `grid` ended in it (see [`covers`]).
    fn note_sweep(&mut self, grid: &Grid) {
        if !covers(&self.sweeps.cells, &self.failed, grid) {
            return;
        }
        let took = self.sweeps.started.elapsed();
        let ended = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.sweeps.last = Some((ended, took));
        self.sweeps.count += 1;
        self.sweeps.cells.clear();
        self.sweeps.started = Instant::now();
        if self.log_sweeps {
            let warming = self.warming(grid);
            let still = if warming.is_empty() {
                String::new()
            } else {
                format!(
                    "; still warming (fewer than {FIRST_FIGURE_ROUNDS} rounds): {}",
                    warming.join(", ")
                )
            };
            output::stderr(&format!(
                "stream-top: sweep {} took {:.0} s; arrays mapped and first-touched {} times, \
                 {} held now{still}",
                self.sweeps.count,
                took.as_secs_f64(),
                self.memory.mapped,
                format_bytes(self.memory.held.unwrap_or(0)),
            ));
        }
    }

    /// The cells of `grid` that can run and have fewer than [`FIRST_FIGURE_ROUNDS`] timed
    /// rounds, by name (`l2 × 1`, with the op where the grid has more than one).
    fn warming(&self, grid: &Grid) -> Vec<String> {
        let ops = grid.ops.len() > 1;
        grid.cells()
            .into_iter()
            .filter(|id| !self.failed.contains(id))
            .filter(|id| self.tally.get(id).map_or(0, |t| t.rounds) < FIRST_FIGURE_ROUNDS)
            .map(|id| {
                let op = if ops {
                    format!("{} ", id.op.name())
                } else {
                    String::new()
                };
                format!("{op}{} × {}", grid.sets[id.set].name, id.threads)
            })
            .collect()
    }

    /// A service says once when every cell that can run has its first figure, and how long
    /// that took from the start.
    fn note_warm(&mut self, grid: &Grid) {
        if !self.log_sweeps || self.said_warm || !self.warming(grid).is_empty() {
            return;
        }
        self.said_warm = true;
        output::stderr(&format!(
            "stream-top: every cell has a first figure ({FIRST_FIGURE_ROUNDS} rounds or more), \
             {:.0} s after the start",
            self.started.elapsed().as_secs_f64()
        ));
    }

    /// Where scrapes are answered, when serving.
    /// The URL of the figures, `https` under TLS.
    pub(crate) fn serving_at(&self) -> Option<String> {
        self.server.as_ref().map(|s| s.metrics_url())
    }

    pub fn on_host(&mut self, sample: &HostSample) {
        self.host = Some(sample.clone());
    }

    /// Publishes when `PUBLISH_EVERY` has passed since the last time or a sweep just ended;
    /// after a sweep, also writes the textfile. A write that fails is returned, and the next
    /// sweep tries again.
    pub fn tick(&mut self, grid: &Grid, board: &Board) -> Result<()> {
        self.note_sweep(grid);
        self.note_warm(grid);
        let sweep_done = covers(&self.swept, &self.failed, grid);
        let due = self
            .last_publish
            .is_none_or(|t| t.elapsed() >= PUBLISH_EVERY);
        if due || sweep_done || self.urgent {
            self.publish(grid, board, sweep_done)
        } else {
            Ok(())
        }
    }

    /// Publishes now, and writes the textfile when `write_file` (the end of a sweep or of the
    /// run).
    pub fn publish(&mut self, grid: &Grid, board: &Board, write_file: bool) -> Result<()> {
        self.last_publish = Some(Instant::now());
        self.urgent = false;
        let scrape = self.scrape(grid, board);
        let file = match (&self.prom_file, write_file) {
            (Some(path), true) => {
                self.swept.clear();
                Some((
                    path.clone(),
                    super::exposition::render(&scrape, crate::platform::now_ns()),
                ))
            }
            _ => None,
        };
        if self.server.is_some() {
            self.shared.publish(scrape);
        }
        if let Some((path, text)) = file {
            let failed = match files::replace_atomically(&path, text.as_bytes()) {
                Ok(()) => None,
                Err(Error::Io { what, source }) => Some(Error::Io {
                    what: format!("{what} (--prom-file)"),
                    source,
                }),
                Err(e) => Some(e.context("--prom-file")),
            };
            // Said once while it keeps failing the same way (a full disk, sweep after sweep).
            let message = failed.as_ref().map(Error::to_string);
            let again = message.is_some() && message == self.write_failed;
            self.write_failed = message;
            if let Some(e) = failed.filter(|_| !again) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Whether the textfile's last write failed (its error was returned by a `publish`).
    pub(crate) fn write_failed(&self) -> bool {
        self.write_failed.is_some()
    }

    /// The figures of every cell of the grid (the headless rerun row aside: it would repeat
    /// its cell's labels).
    pub fn scrape(&self, grid: &Grid, board: &Board) -> Scrape {
        let cells = grid
            .cells()
            .into_iter()
            .map(|id| {
                let set = &grid.sets[id.set];
                let t = self.tally.get(&id).copied().unwrap_or_default();
                CellFigures {
                    op: id.op.name().to_string(),
                    set: set.name.clone(),
                    level: set.level.map_or("none".into(), |l| l.name().to_string()),
                    threads: id.threads,
                    figures: board.figures(id, self.ctx),
                    rounds: t.rounds,
                    late_rounds: t.late_rounds,
                    checksum_failures: t.checksum_failures,
                    last_round_ns: t.last_round_ns,
                    disturbed_rounds: t.disturbed_rounds,
                    contention_episodes: t.episodes[0],
                    disturbance_episodes: t.episodes[1],
                    contended: self.watch.as_ref().map(|w| w.is_contended(id)),
                    reference_gbs: self
                        .watch
                        .as_ref()
                        .and_then(|w| w.reference(id))
                        .map(|r| r.gbs),
                    loop_pick: board
                        .choice(id.op, id.set)
                        .map(|c| (c.kept.variant.name.to_string(), c.kept.huge_pages)),
                }
            })
            .collect();
        Scrape {
            run: self.run.clone(),
            cells,
            host: self.host.clone(),
            memory_limit: self.memory_limit,
            last_sweep: self.sweeps.last.map(|(at, took)| (at, took.as_secs_f64())),
            arrays_bytes: self.memory.held,
            arrays_mapped: self.memory.mapped,
            cell_retries: self.retries,
            cells_failed: self.failed.len(),
            record_dropped: self.record_dropped,
            probe: self.probe.as_ref().map(|w| ProbeFigures {
                latency_ns: w.latency_ns(),
                reference_ns: w.reference_ns(),
                contended: w.is_contended(),
                samples: w.samples,
                // Ids count every episode opened; the list keeps the last hundred.
                episodes: w.episodes().last().map_or(0, |e| e.id),
            }),
            latency: self.latency.clone(),
        }
    }
}

/// Whether `ended` (cells whose visit ended since a sweep began: a checksum, or a failure)
/// completes a sweep over `grid`: every cell ended in it, or failed before and is skipped by
/// the engine until it is tried again (`failed`), and at least one cell ended in it, so that a
/// grid of failed cells, where nothing happens between retries, does not count a sweep each
/// time it is asked.
fn covers(ended: &BTreeSet<CellId>, failed: &BTreeSet<CellId>, grid: &Grid) -> bool {
    !ended.is_empty() && (grid.cells().iter()).all(|c| ended.contains(c) || failed.contains(c))
}

/// `--prom-file`: a writable regular file or a new name, in a directory that takes a new file
/// (`files::check_output_file`) and not a symbolic link, checked before anything is measured
/// (exit 2).
pub fn check_prom_file(path: &Path) -> Result<()> {
    files::check_output_file(path, How::Replace).map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("--prom-file {m}")),
        other => other.context("--prom-file"),
    })?;
    // The textfile is replaced by a rename: through a link that would replace the link's
    // target, a file the person may never have meant to hand over.
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        return Err(Error::usage(format!(
            "--prom-file {}: a symbolic link; name the file itself, as it is replaced",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernel::Op;
    use crate::engine::plan::{ArraySize, WorkingSet};

    fn grid() -> Grid {
        Grid {
            sets: vec![WorkingSet {
                name: "64 MiB".into(),
                level: None,
                size: ArraySize::Split(64 << 20),
                note: None,
            }],
            threads: vec![1, 2],
            ops: vec![Op::Triad],
        }
    }

    /// A failed cell the engine skips completes a sweep as one that ended in it does; a sweep
    /// in which nothing ended is none.
    #[test]
    fn a_sweep_is_every_cell_ended_or_failed_and_one_at_least_ended() {
        let (one, two) = (CellId::new(0, 1), CellId::new(0, 2));
        let set = |cells: &[CellId]| cells.iter().copied().collect::<BTreeSet<CellId>>();
        assert!(covers(&set(&[one, two]), &set(&[]), &grid()));
        assert!(covers(&set(&[one]), &set(&[two]), &grid()));
        assert!(!covers(&set(&[one]), &set(&[]), &grid()));
        assert!(!covers(&set(&[]), &set(&[one, two]), &grid()));
    }
}
