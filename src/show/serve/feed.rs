//! Who fills a scrape in. The loop that watches the engine (the live monitor
//! or headless) keeps an [`Exporter`]: it counts rounds from the events it already receives,
//! and now and then publishes a [`Scrape`], a copy of the figures, into a [`Shared`] slot. The
//! server only ever takes the latest copy from that slot: it never touches the engine, the
//! board or the UI, and no one waits on it (the slot's lock is held for a pointer swap).

use super::http::{Listener, Server};
use super::scrape::{CellFigures, RunLabels, Scrape, Shared};
use crate::base::error::{Error, Result};
use crate::base::files::{self, How};
use crate::engine::events::Event;
use crate::engine::plan::{CellId, Grid};
use crate::judge::run_info::RunInfo;
use crate::judge::stats::{Board, Context};
use crate::machine::host::HostSample;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Figures are copied for the server at most this often (and at the end of each sweep).
pub const PUBLISH_EVERY: Duration = Duration::from_millis(250);

/// Counts per cell, from the events: they only grow, as Prometheus counters must (the
/// board's window and its resets do not touch them).
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    rounds: u64,
    late_rounds: u64,
    checksum_failures: u64,
    last_round_ns: Option<u64>,
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
    /// Cells whose configuration ended (their checksum came) since the textfile was written.
    swept: BTreeSet<CellId>,
    last_publish: Option<Instant>,
    /// Why the textfile's last write failed (a full disk), None when it succeeded: the run
    /// ends with exit 1 unless a later write succeeds.
    write_failed: Option<String>,
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
            last_publish: None,
            write_failed: None,
        }
    }

    /// Takes in an engine event (every one the loop receives, before or after the board).
    pub fn on_event(&mut self, ev: &Event) {
        match ev {
            // The headless rerun of the first cell counts with that cell: same labels.
            Event::Round(r) if !r.warmup => {
                let t = self
                    .tally
                    .entry(CellId::new(r.cell.set, r.cell.threads))
                    .or_default();
                t.rounds += 1;
                t.late_rounds += u64::from(r.late);
                t.last_round_ns = r.threads.iter().map(|t| t.end_ns).max();
            }
            Event::Checksum(c) => {
                let id = CellId::new(c.cell.set, c.cell.threads);
                self.tally.entry(id).or_default().checksum_failures += u64::from(!c.ok);
                self.swept.insert(c.cell);
            }
            _ => {}
        }
    }

    /// Where scrapes are answered, when serving.
    pub fn serving_at(&self) -> Option<SocketAddr> {
        self.server.as_ref().map(|s| s.addr())
    }

    pub fn on_host(&mut self, sample: &HostSample) {
        self.host = Some(sample.clone());
    }

    /// Publishes when `PUBLISH_EVERY` has passed since the last time or a sweep just ended;
    /// after a sweep, also writes the textfile. A write that fails is returned, and the next
    /// sweep tries again.
    pub fn tick(&mut self, grid: &Grid, board: &Board) -> Result<()> {
        let sweep_done = grid.cells().iter().all(|c| self.swept.contains(c));
        let due = self
            .last_publish
            .is_none_or(|t| t.elapsed() >= PUBLISH_EVERY);
        if due || sweep_done {
            self.publish(grid, board, sweep_done)
        } else {
            Ok(())
        }
    }

    /// Publishes now, and writes the textfile when `write_file` (the end of a sweep or of the
    /// run).
    pub fn publish(&mut self, grid: &Grid, board: &Board, write_file: bool) -> Result<()> {
        self.last_publish = Some(Instant::now());
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
    pub fn write_failed(&self) -> bool {
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
                    set: set.name.clone(),
                    level: set.level.map_or("none".into(), |l| l.name().to_string()),
                    threads: id.threads,
                    figures: board.figures(id, self.ctx),
                    rounds: t.rounds,
                    late_rounds: t.late_rounds,
                    checksum_failures: t.checksum_failures,
                    last_round_ns: t.last_round_ns,
                    loop_pick: board
                        .choice(id.set)
                        .map(|c| (c.kept.variant.name.to_string(), c.kept.huge_pages)),
                }
            })
            .collect();
        Scrape {
            run: self.run.clone(),
            cells,
            host: self.host.clone(),
            memory_limit: self.memory_limit,
        }
    }
}

/// `--prom-file`: a writable regular file or a new name, in a directory that takes a new file
/// (`files::check_output_file`), checked before anything is measured (exit 2).
pub fn check_prom_file(path: &Path) -> Result<()> {
    files::check_output_file(path, How::Replace).map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("--prom-file {m}")),
        other => other.context("--prom-file"),
    })
}
