//! One sweep of the grid, printed as the per-cell and derived tables: the method with no
//! terminal UI.
//! Progress goes to stderr, the table to stdout, both through `output` (a failed stderr write
//! never stops the run; the exports are written even when stdout fails). With `--serve` it is a
//! service instead: it sweeps on, answering scrapes, until SIGTERM, and then prints the table.
//! A signal ends either in order (a one-shot run prints the cells it finished, marked partial;
//! the exit code is 128 + the signal's number) and Ctrl-Z stops it like any job.

use crate::app::cli::{Config, FormatArg, Mode, ReadmeStyle};
use crate::app::session::Session;
use crate::base::error::Result;
use crate::base::output;
use crate::base::units::{format_bytes, threads_phrase};
use crate::engine::Engine;
use crate::engine::events::{Command, Event, Placement, Stage};
use crate::engine::latency::probe::{ProbeConfig, ProbeEvent};
use crate::engine::plan::{CellId, Grid, Plan};
use crate::judge::run_info::RunInfo;
use crate::judge::stats::{Board, Context};
use crate::machine::host::{HostSampler, HostState};
use crate::platform::signals::{self, Asks, PARK_WAIT, Signals, signal_name};
use crate::show::record::{self, Recorder};
use crate::show::report::{self, Snapshot};
use crate::show::serve::Exporter;
use crate::show::serve::probe::HeadlessProbe;
use crossbeam_channel::{Receiver, never, select};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How a sweep ended, for the exit code.
#[derive(Debug, Default)]
pub struct Outcome {
    checksum_failures: usize,
    /// Cells that could not run (the report shows each with its reason).
    failed_cells: usize,
    pub(crate) errors: Vec<String>,
    /// The signal that ended the run (SIGTERM, SIGINT, SIGHUP, SIGQUIT), if one did.
    pub(crate) signal: Option<i32>,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.checksum_failures == 0 && self.failed_cells == 0 && self.errors.is_empty()
    }

    /// 128 + the signal's number for a run a signal ended, whatever it measured; else 0 for a
    /// run without failures and 1 for one with any.
    pub fn exit_code(&self) -> u8 {
        match self.signal {
            Some(sig) => signals::exit_code(sig),
            None if self.ok() => 0,
            None => 1,
        }
    }
}

/// Before a sweep of more than one op: the ops and about how long the sweep will take (an
/// estimate, said to be one). None for one op, and for a service, which does not end.
fn ops_estimate(plan: &crate::engine::plan::Plan, service: bool) -> Option<String> {
    let ops = &plan.grid.ops;
    if ops.len() < 2 || service {
        return None;
    }
    let secs = plan.once_estimate()?.as_secs_f64();
    let about = if secs < 90.0 {
        format!("{:.0} s", secs.max(1.0))
    } else {
        format!("{:.0} min", secs / 60.0)
    };
    let names: Vec<&str> = ops.iter().map(|op| op.name()).collect();
    Some(format!(
        "{} ops ({}) × {} cells each: about {about} (an estimate from the grid, the ops and \
         the rounds; trials, first touches and long DRAM rounds add to it)",
        ops.len(),
        names.join(", "),
        plan.grid.cells_of(ops[0]).len(),
    ))
}

/// How often the host is sampled: for the exporter's host gauges, and for the steal and
/// throttling each round carries.
const HOST_EVERY: Duration = Duration::from_secs(1);

/// Runs the sweep, prints the table in the chosen format, and writes the exports asked for.
/// With an exporter (`--serve`, `--prom-file`) the figures are published as they come; as a
/// service (`--headless --serve`) it sweeps until SIGTERM or SIGINT, then prints the table.
pub fn run(config: &Config, session: Session, exporter: Option<Exporter>) -> Result<Outcome> {
    // Calibrate's repetitions are separate processes, each a headless run of its own.
    if config.mode == Mode::Calibrate {
        return crate::show::calibrate::run(config).map(|signal| Outcome {
            signal,
            ..Outcome::default()
        });
    }
    let Session { plan, info } = session;
    let probe = HeadlessProbe::config(config, &plan, &info)?;
    // Signals end a run in order, and Ctrl-Z stops it as a job (the workers parked first):
    // taken before the lines that tell a supervisor the run is up, so that a signal sent on
    // reading them finds the handlers in place.
    let signals = Signals::start()?;
    announce(config, &plan, &info, exporter.as_ref());
    let mut sweep = Sweep::start(config, &plan, &info, (exporter, probe), signals)?;
    // Every repetition's rounds are pooled in the sweep's board; each repetition's own median
    // per cell is kept beside them, the unit of evidence `compare` judges by.
    let repeat = config.repeat.max(1) as usize;
    for rep in 1..=repeat {
        if repeat > 1 {
            output::stderr(&format!(
                "stream-top: repetition {rep} of {repeat}: fresh arrays (new pages), the loop \
                 chosen again"
            ));
        }
        if !sweep.repetition(&plan)? {
            break;
        }
    }
    sweep.settle();
    let Sweep {
        grid,
        board,
        repetitions,
        outcome,
        ..
    } = sweep;
    let mut snap = snapshot(config, &info, &grid, &board);
    snap.set_repetitions(|cell| repetitions.get(&cell).cloned().unwrap_or_default());
    // A CSV is one table: a size sweep's cliffs, which the Markdown and JSON carry, go to stderr.
    if config.format == FormatArg::Csv {
        for c in &snap.cliffs {
            output::stderr(&format!(
                "stream-top: cliff: {}",
                report::cliffs::cliff_line(c)
            ));
        }
    }
    print_then_save(&report::table_text(config.format, &snap), || {
        save(config, &snap)
    })?;
    Ok(outcome)
}

/// What the run is, said on stderr before it starts: the machine, kernel and cells, the ops'
/// estimate, the container, counters, NUMA, notes, and where it serves.
fn announce(config: &Config, plan: &Plan, info: &RunInfo, exporter: Option<&Exporter>) {
    let service = config.is_service();
    let cells = plan.grid.sweep_once().len();
    output::stderr(&format!(
        "stream-top: {} · kernel {}, {} stores · huge pages {} · clock {} · {cells} {}",
        info.topology.model,
        info.loops.setting(info.kernel),
        info.kernel.stores,
        info.huge_pages_flag,
        info.clock.line(),
        if cells == 1 { "cell" } else { "cells" }
    ));
    let lines = [
        ops_estimate(plan, service),
        info.container.and_then(|c| c.line()),
        info.counters
            .as_ref()
            .map(|c| format!("counters: {}", c.line())),
        info.numa.clone(),
        info.not_a_measurement
            .as_ref()
            .map(|why| format!("NOT A MEASUREMENT: {why}")),
        info.threads_note.clone(),
        info.choices_from.as_ref().map(|file| {
            format!("loops and page layouts reused from {file} (--choices-from), no trial")
        }),
    ];
    for line in lines.into_iter().flatten() {
        output::say(&line);
    }
    if let Some(url) = exporter.and_then(|e| e.serving_at()) {
        output::stderr(&format!(
            "stream-top: serving {url}{}",
            if service {
                format!(" at duty {} %, until SIGTERM", plan.duty)
            } else {
                String::new()
            }
        ));
    }
}

/// A headless run's state across its repetitions: the rounds pooled on one board, each
/// repetition's medians, and who hears the rounds (exporter, recorder, probe, progress).
struct Sweep {
    grid: Grid,
    ctx: Context,
    rounds: usize,
    board: Board,
    repetitions: HashMap<CellId, Vec<f64>>,
    outcome: Outcome,
    progress: Progress,
    exporter: Option<Exporter>,
    probe: Option<HeadlessProbe>,
    recorder: Option<Recorder>,
    sampler: HostSampler,
    host_tick: Receiver<Instant>,
    _signals: Signals,
    signal_rx: Receiver<i32>,
}

/// One repetition's state beside the sweep's: its own board, and a Ctrl-Z waiting for the
/// workers to park (the process stops at their word or then).
struct Repetition {
    board: Board,
    parking: Option<Instant>,
}

impl Sweep {
    fn start(
        config: &Config,
        plan: &Plan,
        info: &RunInfo,
        (mut exporter, probe): (Option<Exporter>, Option<ProbeConfig>),
        (signals, signal_rx): (Signals, Receiver<i32>),
    ) -> Result<Sweep> {
        // The host is sampled as the live monitor samples it: each round then carries the
        // steal and the throttling over it, as /metrics reports them.
        let mut sampler = HostSampler::new(&config.root, std::process::id());
        // A first sample at once, so even a short sweep's exposition has the host's gauges.
        let first = sampler.sample();
        if let Some(x) = &mut exporter {
            x.on_host(&first);
        }
        // The latency probe beside the sweeps (a service's unless --no-probe; --probe).
        let probe = HeadlessProbe::start(probe)?;
        let recorder = record::start(config, info, &plan.grid)?;
        let repeat = config.repeat.max(1) as usize;
        Ok(Sweep {
            grid: plan.grid.clone(),
            ctx: info.context(),
            rounds: config.rounds as usize,
            board: Board::new(config.rounds as usize * repeat),
            repetitions: HashMap::new(),
            outcome: Outcome::default(),
            progress: Progress {
                tty: output::stderr_is_terminal(),
                quiet: config.is_service(),
            },
            exporter,
            probe,
            recorder,
            sampler,
            host_tick: crossbeam_channel::tick(HOST_EVERY),
            _signals: signals,
            signal_rx,
        })
    }

    /// One repetition: a fresh engine maps fresh arrays and runs its trial again, until it
    /// finishes or a signal or an error ends it. False when the run is to end here.
    fn repetition(&mut self, plan: &Plan) -> Result<bool> {
        let (engine, events) = Engine::start(plan.clone())?;
        let mut rep = Repetition {
            board: Board::new(self.rounds),
            parking: None,
        };
        loop {
            let park_timer = rep.parking.map_or_else(never, crossbeam_channel::at);
            let probe_rx = self
                .probe
                .as_ref()
                .map_or_else(never, HeadlessProbe::events);
            let host_tick = self.host_tick.clone();
            let signal_rx = self.signal_rx.clone();
            select! {
                recv(probe_rx) -> m => self.on_probe(m.ok()),
                recv(events) -> m => {
                    if self.on_event(m.unwrap_or(Event::Finished), &engine, &mut rep) {
                        break;
                    }
                }
                recv(host_tick) -> _ => self.on_host_tick(&mut rep.board),
                recv(park_timer) -> _ => {
                    rep.parking = None;
                    stop_like_a_job(&engine);
                }
                recv(signal_rx) -> sig => {
                    if self.on_signal(sig.ok(), &engine, &mut rep.parking) {
                        break;
                    }
                }
            }
        }
        engine.stop();
        // A repetition a signal or an error cut short has no median to give.
        let ended_early = self.outcome.signal.is_some() || !self.outcome.errors.is_empty();
        if !ended_early {
            for cell in self.grid.sweep_once() {
                if let Some(f) = rep.board.figures(cell, self.ctx) {
                    self.repetitions.entry(cell).or_default().push(f.median_gbs);
                }
            }
        }
        Ok(!ended_early)
    }

    /// The probe's event; a service idles long between visits, so the probe's figures go
    /// out anyway.
    fn on_probe(&mut self, m: Option<ProbeEvent>) {
        if let Some(p) = &mut self.probe {
            p.take(m, self.exporter.as_mut());
        }
        if let Some(x) = &mut self.exporter {
            report_export(x.tick(&self.grid, &self.board));
        }
    }

    /// One engine event: recorded, judged on both boards, published. True at the end.
    fn on_event(&mut self, ev: Event, engine: &Engine, rep: &mut Repetition) -> bool {
        if let Some(r) = &self.recorder {
            r.event(&ev);
        }
        if ev == Event::Paused && rep.parking.take().is_some() {
            stop_like_a_job(engine);
        }
        self.board.record(&ev);
        if let Some(r) = &self.recorder {
            r.judged(&ev, &self.board);
        }
        rep.board.record(&ev);
        if let Some(x) = &mut self.exporter {
            x.on_event(&ev, &self.board);
            if ev == Event::Finished {
                report_export(x.publish(&self.grid, &self.board, true));
            } else {
                report_export(x.tick(&self.grid, &self.board));
            }
        }
        if ev == Event::Finished {
            return true;
        }
        let (grid, board, ctx) = (&self.grid, &self.board, self.ctx);
        self.progress.show(ev, grid, board, ctx, &mut self.outcome);
        false
    }

    /// A host sample: to the recorder (with its dropped frames), both boards, the exporter.
    fn on_host_tick(&mut self, rep_board: &mut Board) {
        let h = self.sampler.sample();
        if let Some(r) = &self.recorder {
            r.host(&h);
            if let Some(x) = &mut self.exporter {
                x.record_dropped(r.dropped());
            }
        }
        self.board.record_host(&h);
        rep_board.record_host(&h);
        if let Some(x) = &mut self.exporter {
            x.on_host(&h);
        }
    }

    /// A signal: Ctrl-Z parks the workers first; an ending one stops the run (true then).
    fn on_signal(
        &mut self,
        sig: Option<i32>,
        engine: &Engine,
        parking: &mut Option<Instant>,
    ) -> bool {
        match sig.map(Asks::of) {
            Some(Asks::Stop) => {
                if parking.is_none() {
                    engine.send(Command::Pause);
                    *parking = Some(Instant::now() + PARK_WAIT);
                }
                false
            }
            Some(Asks::Continued) => false,
            Some(Asks::End(sig)) => {
                output::stderr(&format!("stream-top: {}: stopping", signal_name(sig)));
                self.outcome.signal = Some(sig);
                true
            }
            // The signal thread could not start: signals keep their default actions.
            None => {
                self.signal_rx = never();
                false
            }
        }
    }

    /// After the last repetition: the probe's last word, the host's last sample, what a
    /// signal or the engine left unmeasured and why, and a failed textfile write.
    fn settle(&mut self) {
        if let Some(p) = self.probe.take() {
            match p.finish() {
                Ok(line) => output::say(&line),
                Err(e) => self.outcome.errors.push(e.to_string()),
            }
        }
        let (grid, ctx, board) = (&self.grid, self.ctx, &mut self.board);
        // The rounds since the last sample get their steal and throttling too.
        board.record_host(&self.sampler.sample());
        if let (Some(sig), false) = (self.outcome.signal, self.progress.quiet) {
            keep_what_finished(grid, board, signal_name(sig));
        }
        // The engine stopped before these: the report says they were not measured, and why.
        if let Some(why) = self.outcome.errors.first() {
            for cell in grid.sweep_once() {
                if board.figures(cell, ctx).is_none() {
                    board.mark_failed(cell, format!("not run: the engine stopped ({why})"));
                }
            }
        }
        self.outcome.failed_cells = grid
            .sweep_once()
            .into_iter()
            .filter(|&c| board.figures(c, ctx).is_none())
            .filter(|&c| board.cell(c).is_some_and(|s| s.failure.is_some()))
            .count();
        // A textfile whose last write failed (a full disk) fails the run, after the cells are
        // judged: it is no reason a cell was not measured.
        if self.exporter.as_ref().is_some_and(|x| x.write_failed()) {
            self.outcome
                .errors
                .push("the last --prom-file write failed".into());
        }
    }
}

/// The snapshot of a headless run's end: the run, its grid and board, the host now (or, where
/// it cannot be read, at the start).
pub(crate) fn snapshot(config: &Config, info: &RunInfo, grid: &Grid, board: &Board) -> Snapshot {
    let host_now = HostState::read(&config.root).unwrap_or_else(|_| info.host_start.clone());
    Snapshot::build(
        info,
        grid,
        board,
        &host_now,
        crate::base::time::utc_now_string(),
    )
}

/// Prints the table, then writes the files: they are written even when stdout failed, as a
/// closed pipe or a full disk on stdout must not lose the run's exports. The files' error wins
/// (the table's is then said on stderr, unless it was a closed pipe).
pub(crate) fn print_then_save(text: &str, save: impl FnOnce() -> Result<()>) -> Result<()> {
    let printed = output::stdout(text);
    match (printed, save()) {
        (printed, Ok(())) => printed,
        (printed, Err(e)) => {
            if let Err(p) = printed
                && !p.is_broken_pipe()
            {
                output::stderr(&format!("stream-top: {p}"));
            }
            Err(e)
        }
    }
}

/// What a sweep says on stderr as it goes: first-touch progress of large arrays and each
/// configuration's median and checksum (a service says only what went wrong).
struct Progress {
    tty: bool,
    quiet: bool,
}

impl Progress {
    fn show(&mut self, ev: Event, grid: &Grid, board: &Board, ctx: Context, outcome: &mut Outcome) {
        match ev {
            Event::Progress {
                cell,
                stage: stage @ (Stage::FirstTouch | Stage::Moving),
                done_bytes,
                total_bytes,
            } if total_bytes >= 64 << 20 && !self.quiet => {
                let what = if stage == Stage::Moving {
                    "moving pages to the threads' nodes for"
                } else {
                    "first touch of"
                };
                let line = format!(
                    "  {what} {} × {}: {:>3.0} % of {}",
                    grid.sets[cell.set].label(),
                    threads_phrase(cell.threads),
                    100.0 * done_bytes as f64 / total_bytes as f64,
                    format_bytes(total_bytes)
                );
                let done = done_bytes >= total_bytes;
                if self.tty {
                    output::stderr_partial(&format!("\r{line}{}", if done { "\n" } else { "" }));
                } else if done {
                    output::stderr(&line);
                }
            }
            Event::Choice(c) if !self.quiet => {
                output::stderr(&format!(
                    "  {}{} runs {}",
                    op_prefix(grid, c.op),
                    grid.sets[c.set].label(),
                    c.describe()
                ));
            }
            Event::Checksum(c) => {
                let label = op_prefix(grid, c.cell.op) + &grid.sets[c.cell.set].label();
                let rerun = if c.cell.rerun { ", run again last" } else { "" };
                let median = board
                    .figures(c.cell, ctx)
                    .map_or("no timed round".into(), |f| {
                        format!("{:.1} GB/s", f.median_gbs)
                    });
                if !c.ok {
                    outcome.checksum_failures += 1;
                    output::stderr(&format!(
                        "  {label} × {}{rerun}: CHECKSUM MISMATCH: sum of a is {} but must be {}",
                        c.cell.threads, c.actual, c.expected
                    ));
                } else if !self.quiet {
                    let pages = match board.cell(c.cell).and_then(|s| s.pages.as_ref()) {
                        Some(Placement::Sampled(p)) => format!(" · pages {}", p.line()),
                        _ => String::new(),
                    };
                    output::stderr(&format!(
                        "  {label} × {}{rerun}: {median}{pages}",
                        c.cell.threads
                    ));
                }
            }
            Event::CellFailed { cell, reason } => {
                let label = op_prefix(grid, cell.op) + &grid.sets[cell.set].label();
                let rerun = if cell.rerun { ", run again last" } else { "" };
                output::stderr(&format!(
                    "  {label} × {}{rerun}: FAILED: {reason}",
                    cell.threads
                ));
            }
            // A service's backoff came due: said beside the failure it answers.
            Event::CellRetry { cell, tries } => {
                let label = op_prefix(grid, cell.op) + &grid.sets[cell.set].label();
                output::stderr(&format!(
                    "  {label} × {}: tried again (try {tries})",
                    cell.threads
                ));
            }
            Event::Error(e) => {
                output::stderr(&format!("stream-top: error: {e}"));
                outcome.errors.push(e);
            }
            _ => {}
        }
    }
}

/// `copy: ` before a progress line's cell where the grid has more than one op; nothing for one.
fn op_prefix(grid: &Grid, op: crate::engine::kernel::Op) -> String {
    if grid.ops.len() > 1 {
        format!("{op}: ")
    } else {
        String::new()
    }
}

/// Ctrl-Z: stops the process as a shell job (the workers parked, or `PARK_WAIT` passed) and,
/// once it is continued, lets the workers go on.
fn stop_like_a_job(engine: &Engine) {
    output::stderr("stream-top: SIGTSTP: workers parked, stopped until continued");
    if let Err(e) = signals::stop_process() {
        output::stderr(&format!("stream-top: could not stop: {e}"));
    }
    engine.send(Command::Resume);
    output::stderr("stream-top: continued");
}

/// A one-shot run that a signal ended keeps the cells it finished (their checksum came); the
/// others, the one under way too, are marked as a partial run's, in every format.
fn keep_what_finished(grid: &Grid, board: &mut Board, signal: &str) {
    let cells = grid.sweep_once();
    let mut finished = 0;
    for &cell in &cells {
        let done = board
            .cell(cell)
            .is_some_and(|s| s.checksum.is_some() || s.failure.is_some());
        if done {
            finished += 1;
        } else {
            board.reset_cell(cell);
            board.mark_failed(
                cell,
                format!("partial run: stopped by {signal} before it finished"),
            );
        }
    }
    output::stderr(&format!(
        "stream-top: a partial run: {finished} of {} {} finished before {signal}",
        cells.len(),
        if cells.len() == 1 { "cell" } else { "cells" }
    ));
}

/// A textfile that could not be written is said and tried again after the next sweep.
fn report_export(result: Result<()>) {
    if let Err(e) = result {
        output::stderr(&format!("stream-top: {e}"));
    }
}

/// Writes the exports and the README asked for.
pub(crate) fn save(config: &Config, snap: &Snapshot) -> Result<()> {
    if let Some(dir) = &config.export {
        for path in report::export(dir, snap)? {
            output::stderr(&format!("stream-top: wrote {}", path.display()));
        }
    }
    if let Some(file) = &config.readme {
        let text = match config.readme_style {
            ReadmeStyle::Full => report::to_markdown(snap),
            ReadmeStyle::Compact => report::to_markdown_compact(snap),
        };
        report::update_readme(file, &text)?;
        output::stderr(&format!("stream-top: updated {}", file.display()));
    }
    Ok(())
}
