//! The monitor's state, apart from any terminal: engine events, host samples, keys and mouse
//! clicks go in; what to draw and what to ask of the engine come out. Everything here is tested
//! without a terminal.

use super::click_map::{ClickMap, Target};
use super::history::History;
use crate::base::units::format_bytes;
use crate::engine::events::{Command, Event, RoundRecord, Stage};
use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::{CellId, Grid};
use crate::judge::groups::{CpuGroups, GroupFigures};
use crate::judge::inference::{Judgement, judge};
use crate::judge::stats::{Board, Context, Figures};
use crate::judge::watch::contention::{
    Change, Disturbed, Episode, Reference, Source, Thresholds, Watch,
};
use crate::judge::watch::log::{EventLog, Kind};
use crate::judge::watch::narrative::{self, gbs};
use crate::judge::watch::suspects::{Placement, Tracker};
use crate::machine::host::HostSample;
use crate::machine::procs::ProcSample;
use crate::platform;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::collections::HashMap;
use std::fmt::Display;
use std::time::{Duration, Instant, SystemTime};

/// Thread lines a page of the per-thread list scrolls by before a frame said how many fit.
const THREADS_PAGE: usize = 10;
/// Duty cycles `d` steps through, in order.
const DUTY_STEPS: [u8; 3] = [100, 50, 10];
/// How long the log waits for a process sample to name suspects before it says that an
/// episode began without them.
const SUSPECTS_WAIT: Duration = Duration::from_millis(2500);

/// What the engine is asked to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Cycle over every cell.
    Sweep,
    /// Only this cell, continuously.
    Focus(CellId),
}

/// What the event loop must do after a key or a click.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Nothing changed.
    None,
    /// The screen changed; nothing else to do.
    Redraw,
    /// Send this to the engine (and redraw).
    Send(Command),
    /// Write a snapshot (and log the paths or the error).
    Export,
    /// Ctrl-Z: give the terminal back and stop until `fg`.
    Suspend,
    Quit,
}

/// Allocation or first touch in progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub cell: CellId,
    pub stage: Stage,
    pub done_bytes: u64,
    pub total_bytes: u64,
}

impl Progress {
    pub fn ratio(&self) -> f64 {
        if self.total_bytes == 0 {
            0.0
        } else {
            (self.done_bytes as f64 / self.total_bytes as f64).clamp(0.0, 1.0)
        }
    }
}

/// The lines above the grid, built once from the run's description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    /// CPU model and counts.
    pub machine: String,
    /// Caches and NUMA.
    pub caches: String,
    /// Kernel, stores, pin policy, clock.
    pub run: String,
    /// Vendor figure and where it came from.
    pub vendor: String,
}

/// Everything the screen shows.
pub struct App {
    pub grid: Grid,
    pub board: Board,
    pub(crate) ctx: Context,
    pub(crate) header: Header,
    /// Selected cell: index into `grid.sets`, index into `grid.threads`.
    pub sel_set: usize,
    pub sel_col: usize,
    pub mode: Mode,
    /// What the engine last said: parked or not.
    pub paused: bool,
    /// What we last asked for.
    pub pause_requested: bool,
    pub(crate) duty: u8,
    /// The cell whose rounds run now.
    pub current: Option<CellId>,
    pub progress: Option<Progress>,
    pub host: Option<HostSample>,
    pub log: EventLog,
    pub help: bool,
    /// Medians of the baseline run (`--baseline`), by cell, and its file name.
    pub baseline: HashMap<CellId, f64>,
    /// The baseline's round rates, by cell: what the verdicts test the window against.
    pub baseline_rounds: HashMap<CellId, Vec<f64>>,
    pub baseline_name: Option<String>,
    /// The engine has ended; with the last error, if any.
    pub finished: bool,
    pub last_error: Option<String>,
    /// Each cell's reference and contention state, and the episodes so far.
    pub watch: Watch,
    /// The other processes' activity, for naming the suspects of open episodes.
    pub(crate) suspects: Tracker,
    /// Per-second history for the timeline.
    pub history: History,
    /// When the monitor started, by the monotonic clock and by the wall clock: the timeline's
    /// seconds count from it, and an instant's wall-clock time is reckoned from it.
    pub started: Instant,
    pub wall_started: SystemTime,
    /// The latest instant an event, a key or a sample came at: "now" for what is drawn.
    pub now: Instant,
    /// CPU → NUMA node on a machine with several nodes (for suspects on our node).
    pub nodes: HashMap<u32, u32>,
    /// Each CPU's node and core type, for a cell's figures per node and per core type (empty
    /// on a machine with one node and one core type: the detail shows nothing more).
    pub groups: CpuGroups,
    /// The thread count from which threads run on E-cores too, where the pinning order says
    /// (hybrid machines): its column head is marked.
    pub e_cores_from: Option<usize>,
    /// The per-thread panel: the full list (`t`) instead of the summary it shows when the
    /// threads do not fit, from this thread on (PgUp/PgDn, Home/End).
    pub threads_list: bool,
    pub threads_top: usize,
    /// Thread lines the panel showed in the last frame: a page for PgUp/PgDn (the event loop
    /// keeps it from the screen, as it keeps the click map).
    pub threads_page: usize,
    /// stream-top's own process, never a suspect.
    pub own_pid: u32,
    /// `--matrix`: the grid's working sets are these pairs, shown as a CPU node × memory node
    /// grid of their own.
    pub matrix: Option<MatrixPlan>,
    /// `--oversubscribe`: why no figure is a measurement (said above the grid).
    pub not_a_measurement: Option<String>,
    /// Episodes begun whose log line waits for a process sample (id, until when).
    unannounced: Vec<(u64, Instant)>,
    /// Wall-clock time for the log (replaced in tests).
    pub clock: fn() -> String,
    /// The local time of day of a wall-clock time, `HH:MM:SS` (replaced in tests).
    pub time_of: fn(SystemTime) -> String,
}

impl App {
    pub fn new(grid: Grid, window: usize, ctx: Context, header: Header, duty: u8) -> App {
        let now = Instant::now();
        App {
            grid,
            board: Board::new(window),
            ctx,
            header,
            sel_set: 0,
            sel_col: 0,
            mode: Mode::Sweep,
            paused: false,
            pause_requested: false,
            duty: duty.clamp(1, 100),
            current: None,
            progress: None,
            host: None,
            log: EventLog::default(),
            help: false,
            baseline: HashMap::new(),
            baseline_rounds: HashMap::new(),
            baseline_name: None,
            finished: false,
            last_error: None,
            watch: Watch::new(Thresholds::default(), window),
            suspects: Tracker::default(),
            history: History::default(),
            started: now,
            wall_started: SystemTime::now(),
            now,
            nodes: HashMap::new(),
            groups: CpuGroups::default(),
            e_cores_from: None,
            threads_list: false,
            threads_top: 0,
            threads_page: THREADS_PAGE,
            own_pid: std::process::id(),
            matrix: None,
            not_a_measurement: None,
            unannounced: Vec::new(),
            clock: crate::judge::watch::log::local_time,
            time_of: crate::judge::watch::log::local_time_of,
        }
    }

    /// Judges contention with these thresholds (`--contention-drop`, `--contention-rounds`).
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.watch.thresholds = t;
    }

    /// The `--baseline` run's median for a cell: shown against the cell's median, and the
    /// cell's reference.
    pub fn set_baseline(&mut self, cell: CellId, gbs: f64) {
        self.baseline.insert(cell, gbs);
        let r = Reference {
            gbs,
            source: Source::Baseline,
        };
        self.watch.set_reference(cell, r, self.now);
    }

    /// The cell `r` and `p` act on: the focused one, else the selected one.
    pub fn target(&self) -> CellId {
        match self.mode {
            Mode::Focus(c) => c,
            Mode::Sweep => self.selected(),
        }
    }

    /// Seconds since the monitor started, at `at`.
    pub fn second(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_secs()
    }

    /// The wall-clock time of an instant.
    pub fn wall_at(&self, at: Instant) -> SystemTime {
        match at.checked_duration_since(self.started) {
            Some(d) => self.wall_started + d,
            None => self.wall_started - self.started.saturating_duration_since(at),
        }
    }

    /// Where a cell's threads ran, for suspects on our CPUs or node.
    pub fn placement(&self, cell: CellId) -> Placement {
        Placement {
            our_cpus: self
                .board
                .cell(cell)
                .map(|c| {
                    c.cpus
                        .iter()
                        .filter_map(|&c| u32::try_from(c).ok())
                        .collect()
                })
                .unwrap_or_default(),
            nodes: self.nodes.clone(),
        }
    }

    /// The selected cell.
    pub fn selected(&self) -> CellId {
        let t = self.grid.threads.get(self.sel_col).copied().unwrap_or(1);
        CellId::new(self.sel_set, t)
    }

    pub fn figures(&self, cell: CellId) -> Option<Figures> {
        self.board.figures(cell, self.ctx)
    }

    /// The cell's figures per node and per core type (empty where there is one of each).
    pub fn group_figures(&self, cell: CellId) -> Vec<GroupFigures> {
        self.board
            .cell(cell)
            .map(|c| self.groups.figures(&c.window))
            .unwrap_or_default()
    }

    /// Threads in the selected cell's last round (its thread count before one).
    pub fn selected_threads(&self) -> usize {
        let cell = self.selected();
        self.board
            .cell(cell)
            .and_then(|c| c.last.as_ref())
            .map_or(cell.threads, |r| r.threads.len())
    }

    /// PgUp/PgDn/Home/End: the per-thread list, scrolled; `to` picks the new first thread
    /// from the old one, the page and the last first thread that still fills the panel.
    /// Nothing to scroll when the threads fit.
    fn scroll_threads(&mut self, to: impl Fn(usize, usize, usize) -> usize) -> Action {
        let page = self.threads_page.max(1);
        let threads = self.selected_threads();
        if threads <= page {
            return Action::None;
        }
        let last = threads - page;
        let top = to(self.threads_top.min(last), page, last).min(last);
        if self.threads_list && top == self.threads_top {
            return Action::None;
        }
        self.threads_list = true;
        self.threads_top = top;
        Action::Redraw
    }

    /// The change of a cell's median against the baseline, as a fraction (+0.02 = 2 % faster).
    pub fn baseline_change(&self, cell: CellId) -> Option<f64> {
        let a = *self.baseline.get(&cell)?;
        let b = self.board.cell(cell)?.median_gbs()?;
        (a > 0.0).then(|| b / a - 1.0)
    }

    /// The window's rounds against the baseline's, as `compare` judges them; None without a
    /// baseline cell or a window.
    pub fn baseline_verdict(&self, cell: CellId) -> Option<Judgement> {
        let base = self.baseline_rounds.get(&cell)?;
        let now = self.board.cell(cell)?.rates();
        (!now.is_empty()).then(|| judge(base, &now))
    }

    /// A short name for a cell in the log and the status line: `dram ×2`.
    pub(crate) fn cell_name(&self, cell: CellId) -> String {
        let set = self
            .grid
            .sets
            .get(cell.set)
            .map(|s| s.name.as_str())
            .unwrap_or("?");
        let again = if cell.rerun { " (again)" } else { "" };
        format!("{set} ×{}{again}", cell.threads)
    }

    fn note(&mut self, kind: Kind, cell: Option<CellId>, text: String) {
        let t = (self.clock)();
        self.log.push(t, kind, cell, text);
    }

    /// Takes in an engine event now; returns whether the screen changed.
    pub fn on_event(&mut self, ev: &Event) -> bool {
        self.on_event_at(ev, Instant::now())
    }

    /// Takes in an engine event that came at `at`.
    pub fn on_event_at(&mut self, ev: &Event, at: Instant) -> bool {
        self.now = self.now.max(at);
        // First, so that the watch hears whether the board judged the round disturbed.
        self.board.record(ev);
        match ev {
            Event::Round(r) => {
                if !r.warmup {
                    let gbs = r.gbs();
                    let disturbed = self
                        .board
                        .cell(r.cell)
                        .is_some_and(|c| c.last_finding.disturbed);
                    let change = self
                        .watch
                        .round(r.cell, gbs, Disturbed::judged(r, disturbed), at);
                    self.history.round(r.cell, self.second(at), gbs);
                    for c in change {
                        self.contention(r.cell, c, at);
                    }
                    self.announce_waiting(at);
                }
                self.current = Some(r.cell);
                if self.progress.is_some_and(|p| p.cell == r.cell) {
                    self.progress = None;
                }
            }
            Event::Checksum(c) => {
                if !c.ok {
                    let text = format!(
                        "CHECKSUM FAILED on {}: sum of a is {}, expected {}",
                        self.cell_name(c.cell),
                        c.actual,
                        c.expected
                    );
                    self.note(Kind::Checksum, Some(c.cell), text);
                }
            }
            Event::Progress {
                cell,
                stage,
                done_bytes,
                total_bytes,
            } => {
                self.progress = Some(Progress {
                    cell: *cell,
                    stage: *stage,
                    done_bytes: *done_bytes,
                    total_bytes: *total_bytes,
                });
            }
            Event::Allocated {
                cell,
                bytes,
                huge_bytes,
            } => {
                if self.progress.is_some_and(|p| p.cell == *cell) {
                    self.progress = None;
                }
                let text = format!(
                    "arrays for {} in place: {}, {} on huge pages",
                    self.cell_name(*cell),
                    format_bytes(*bytes),
                    huge_bytes.map_or_else(
                        || platform::HUGE_PAGES_NOTE.unwrap_or("unknown").to_string(),
                        format_bytes
                    )
                );
                self.note(Kind::Info, Some(*cell), text);
            }
            // Kept by the board; the detail panel shows it.
            Event::Placement { .. } => {}
            Event::CellFailed { cell, reason } => {
                if self.progress.is_some_and(|p| p.cell == *cell) {
                    self.progress = None;
                }
                let text = format!("{} could not run: {reason}", self.cell_name(*cell));
                // Said on exit should the engine end for want of a cell that can run.
                self.last_error = Some(text.clone());
                self.note(Kind::Error, Some(*cell), text);
            }
            Event::Choice(c) => {
                let set = self
                    .grid
                    .sets
                    .get(c.set)
                    .map_or_else(|| format!("set {}", c.set), |s| s.label());
                self.note(Kind::Info, None, format!("{set} runs {}", c.describe()));
            }
            Event::Visit { cell, .. } => {
                self.current = Some(*cell);
                if self.progress.is_some_and(|p| p.cell == *cell) {
                    self.progress = None;
                }
            }
            Event::Paused => {
                self.paused = true;
                self.note(Kind::Info, None, "paused: workers parked".into());
            }
            Event::Resumed => {
                self.paused = false;
                self.note(Kind::Info, None, "resumed".into());
            }
            Event::Error(msg) => {
                self.last_error = Some(msg.clone());
                self.note(Kind::Error, None, msg.clone());
            }
            // The event loop answers gaps; nothing to show.
            Event::Gap => return false,
            Event::Finished => {
                self.finished = true;
                self.current = None;
                self.note(Kind::Info, None, "the engine ended".into());
            }
        }
        if let Event::Round(r) = ev {
            self.log_disturbed(r);
        }
        true
    }

    /// Logs a late or disturbed round once, with its cause where the counters show one.
    fn log_disturbed(&mut self, r: &RoundRecord) {
        let finding = self
            .board
            .cell(r.cell)
            .map(|c| c.last_finding.clone())
            .unwrap_or_default();
        let mut text = if r.late {
            let slowest = r.threads.iter().map(|t| t.ns()).max().unwrap_or(1);
            format!(
                "late{} round on {}: span {:.2}× its slowest thread",
                if finding.disturbed {
                    " and disturbed"
                } else {
                    ""
                },
                self.cell_name(r.cell),
                r.span_ns as f64 / slowest as f64
            )
        } else if finding.disturbed {
            format!("disturbed round on {}", self.cell_name(r.cell))
        } else {
            return;
        };
        if let Some(cause) = &finding.cause {
            text.push_str(&format!(": {cause}"));
        }
        if let Some(t) = self.host.as_ref().and_then(|h| h.throttling_note()) {
            text.push_str(&format!("; {t}"));
        }
        self.note(Kind::Late, Some(r.cell), text);
    }

    /// Logs what a round did to a cell's contention state.
    fn contention(&mut self, cell: CellId, c: Change, at: Instant) {
        let name = self.cell_name(cell);
        match c {
            Change::Learned(r) => {
                // Said of the focused cell only: in the sweep every cell learns one at the
                // start, and the detail shows it.
                if self.mode == Mode::Focus(cell) {
                    let text = format!(
                        "reference for {name}: {} GB/s, the median of its first {} calm rounds",
                        gbs(r.gbs),
                        self.board.window
                    );
                    self.note(Kind::Info, Some(cell), text);
                }
            }
            Change::Began(id) => {
                let Some((started, kind)) = self
                    .watch
                    .episode(id)
                    .map(|e| (e.started, e.kind.evidence()))
                else {
                    return;
                };
                self.suspects.open(cell, started, kind);
                self.rank(cell);
                self.unannounced.push((id, at + SUSPECTS_WAIT));
                self.announce_waiting(at);
            }
            Change::Lasting(id) => {
                self.rank(cell);
                if let Some(ep) = self.watch.episode(id) {
                    let text = narrative::lasting(&name, ep, ep.duration(at));
                    self.note(Kind::Contention, Some(cell), text);
                }
            }
            Change::Ended(id) => self.episode_ended(cell, id, at),
        }
    }

    /// An episode ended: its start is logged if it was not yet, then its end with its
    /// suspects as last ranked (the samples while its rounds recovered do not count); its
    /// windows go.
    fn episode_ended(&mut self, cell: CellId, id: u64, at: Instant) {
        if self.unannounced.iter().any(|(u, _)| *u == id) {
            self.announce(id);
        }
        let sampled = self.suspects.has_evidence(cell);
        self.suspects.close(cell);
        let Some(ep) = self.watch.episode(id) else {
            return;
        };
        let span = format!(
            "{}–{}",
            (self.time_of)(self.wall_at(ep.started)),
            (self.time_of)(self.wall_at(ep.ended.unwrap_or(at)))
        );
        let who = narrative::suspects(&ep.suspects, 3, sampled || !ep.suspects.is_empty());
        let text = narrative::ended(&self.cell_name(cell), &span, ep, ep.duration(at), &who);
        self.note(Kind::Contention, Some(cell), text);
    }

    /// Ranks the suspects of a cell's open episode, once there is a sample of it.
    fn rank(&mut self, cell: CellId) {
        if !self.suspects.has_evidence(cell) {
            return;
        }
        let ranked = self
            .suspects
            .rank(cell, &self.placement(cell), self.own_pid);
        if let Some(id) = self.watch.open(cell).map(|e| e.id)
            && let Some(ep) = self.watch.episode_mut(id)
        {
            ep.suspects = ranked;
        }
    }

    /// Logs the start of episodes whose suspects are known now, or whose wait is over.
    fn announce_waiting(&mut self, at: Instant) {
        let due: Vec<u64> = self
            .unannounced
            .iter()
            .filter(|(id, until)| {
                at >= *until
                    || self
                        .watch
                        .episode(*id)
                        .is_some_and(|e| self.suspects.has_evidence(e.cell))
            })
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            self.announce(id);
        }
    }

    /// Logs that an episode began.
    fn announce(&mut self, id: u64) {
        self.unannounced.retain(|(u, _)| *u != id);
        let Some(ep) = self.watch.episode(id) else {
            return;
        };
        let cell = ep.cell;
        let since = (self.time_of)(self.wall_at(ep.started));
        let sampled = self.suspects.has_evidence(cell) || !ep.suspects.is_empty();
        let who = narrative::suspects(&ep.suspects, 3, sampled);
        let text = narrative::began(&self.cell_name(cell), &since, ep, &who, self.host.as_ref());
        self.note(Kind::Contention, Some(cell), text);
    }

    /// The episode open on a cell now, if any.
    pub fn open_episode(&self, cell: CellId) -> Option<&Episode> {
        self.watch.open(cell)
    }

    /// Adds a line to the event log.
    pub fn log_line(&mut self, kind: Kind, text: String) {
        self.note(kind, None, text);
    }

    /// Takes in a host sample.
    pub fn on_host(&mut self, h: HostSample) {
        self.board.record_host(&h);
        self.host = Some(h);
    }

    /// Takes in a sample of the other processes, taken now.
    pub fn on_procs(&mut self, p: ProcSample) {
        self.on_procs_at(p, Instant::now());
    }

    /// Takes in a sample of the other processes, taken at `at`: the timeline's CPU shares,
    /// and new evidence for the suspects of every open episode.
    pub fn on_procs_at(&mut self, p: ProcSample, at: Instant) {
        self.now = self.now.max(at);
        let second = self.second(at);
        self.history
            .cpu(second, p.processes.iter().map(|p| (p.pid, p.cpu_pct)));
        let watch = &self.watch;
        self.suspects.sample(p, at, |c| watch.recovering(c));
        let open: Vec<CellId> = self
            .watch
            .open_ids()
            .into_iter()
            .filter_map(|id| self.watch.episode(id).map(|e| e.cell))
            .collect();
        for cell in open {
            self.rank(cell);
        }
        self.announce_waiting(at);
    }

    /// The processes of the last sample, busiest first (for the host panel).
    pub fn busiest(&self) -> &[crate::machine::procs::Process] {
        self.suspects.latest()
    }

    /// Logs where an export wrote.
    pub fn exported(&mut self, paths: &[std::path::PathBuf]) {
        let text = format!("exported {}", paths_in_short(paths));
        self.note(Kind::Export, None, text);
    }

    /// Logs why an export could not be written.
    pub fn export_failed(&mut self, why: impl Display) {
        self.note(Kind::Error, None, format!("export failed: {why}"));
    }

    /// `r`: forgets one cell's figures and its reference (a pinned one too; a baseline's comes
    /// back), so that it learns a new one.
    fn reset_cell(&mut self, cell: CellId) {
        self.board.reset_cell(cell);
        self.relearn(cell, true);
        let text = format!("statistics and reference of {} reset", self.cell_name(cell));
        self.note(Kind::Info, Some(cell), text);
    }

    /// `R`: forgets every figure and every reference.
    fn reset_all(&mut self) {
        self.board.reset();
        for cell in self.grid.cells() {
            self.relearn(cell, true);
        }
        self.note(
            Kind::Info,
            None,
            "every cell's statistics and reference reset".into(),
        );
    }

    /// A cell learns its reference anew (see `Watch::relearn`); an episode it cuts short is
    /// logged.
    fn relearn(&mut self, cell: CellId, forget_pin: bool) {
        let base = self.baseline.get(&cell).copied();
        if let Some(id) = self.watch.relearn(cell, base, forget_pin, self.now) {
            self.episode_ended(cell, id, self.now);
        }
    }

    /// `p`: the cell's median now is its reference from here on.
    fn pin(&mut self, cell: CellId) -> Action {
        let Some(m) = self.board.cell(cell).and_then(|c| c.median_gbs()) else {
            let text = format!("{}: no median to pin yet", self.cell_name(cell));
            self.note(Kind::Info, Some(cell), text);
            return Action::Redraw;
        };
        let r = Reference {
            gbs: m,
            source: Source::Pinned,
        };
        if let Some(id) = self.watch.set_reference(cell, r, self.now) {
            self.episode_ended(cell, id, self.now);
        }
        let text = format!(
            "reference for {} pinned at {} GB/s",
            self.cell_name(cell),
            gbs(m)
        );
        self.note(Kind::Info, Some(cell), text);
        Action::Redraw
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.kind != KeyEventKind::Press {
            return Action::None;
        }
        self.now = self.now.max(Instant::now());
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Char('z') if ctrl => return Action::Suspend,
            KeyCode::Char('q') => return Action::Quit,
            _ => {}
        }
        if self.help {
            // Any other key closes the help (Esc too: it closes the overlay, not the program).
            self.help = false;
            return Action::Redraw;
        }
        match key.code {
            KeyCode::Esc => Action::Quit,
            KeyCode::Char('?') => {
                self.help = true;
                Action::Redraw
            }
            KeyCode::Left | KeyCode::Char('h') => self.move_by(0, -1),
            KeyCode::Right | KeyCode::Char('l') => self.move_by(0, 1),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1, 0),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1, 0),
            KeyCode::Enter => self.toggle_focus(),
            KeyCode::Char(' ') => {
                self.pause_requested = !self.pause_requested;
                Action::Send(if self.pause_requested {
                    Command::Pause
                } else {
                    Command::Resume
                })
            }
            KeyCode::Char('d') => {
                self.duty = next_duty(self.duty);
                let text = format!("duty cycle {} %", self.duty);
                self.note(Kind::Info, None, text);
                Action::Send(Command::SetDuty(self.duty))
            }
            KeyCode::Char('e') => Action::Export,
            KeyCode::Char('r') => {
                self.reset_cell(self.target());
                Action::Redraw
            }
            KeyCode::Char('R') => {
                self.reset_all();
                Action::Redraw
            }
            KeyCode::Char('p') => self.pin(self.target()),
            KeyCode::Char('t') => {
                self.threads_list = !self.threads_list;
                Action::Redraw
            }
            KeyCode::PageDown => self.scroll_threads(|top, page, _| top + page),
            KeyCode::PageUp => self.scroll_threads(|top, page, _| top.saturating_sub(page)),
            KeyCode::Home => self.scroll_threads(|_, _, _| 0),
            KeyCode::End => self.scroll_threads(|_, _, last| last),
            _ => Action::None,
        }
    }

    /// Enter: focus the selected cell; on the focused cell, back to the sweep.
    fn toggle_focus(&mut self) -> Action {
        let sel = self.selected();
        if self.mode == Mode::Focus(sel) {
            self.mode = Mode::Sweep;
            self.note(Kind::Info, None, "sweep over every cell".into());
            Action::Send(Command::Sweep)
        } else {
            self.mode = Mode::Focus(sel);
            let text = format!("focus on {}", self.cell_name(sel));
            self.note(Kind::Info, Some(sel), text);
            // Its reference is the first window from now on; not while it is contended, when
            // that window would learn the contended level as normal.
            if !self.watch.is_contended(sel) {
                self.relearn(sel, false);
            }
            Action::Send(Command::Focus(sel))
        }
    }

    /// Memory nodes (columns) of the matrix view, when it is one.
    pub fn matrix_columns(&self) -> Option<usize> {
        let m = self.matrix.as_ref()?;
        let first = m.pairs.first()?.cpu_node;
        Some(m.pairs.iter().take_while(|p| p.cpu_node == first).count())
    }

    /// Rows of the grid on screen: a working set each, or the matrix's CPU nodes and its note.
    pub fn grid_rows(&self) -> usize {
        match (self.matrix_columns(), &self.matrix) {
            (Some(cols), Some(m)) => {
                self.grid.sets.len().div_ceil(cols.max(1)) + usize::from(m.note.is_some())
            }
            _ => self.grid.sets.len(),
        }
    }

    fn move_by(&mut self, dset: isize, dcol: isize) -> Action {
        if let Some(cols) = self.matrix_columns() {
            // Up and down go from CPU node to CPU node, left and right from memory node to
            // memory node: the pair is the working set, at the one thread count.
            let cols = cols.max(1) as isize;
            let rows = self.grid_rows().max(1) as isize;
            let (r, c) = (
                self.sel_set as isize / cols + dset,
                self.sel_set as isize % cols + dcol,
            );
            let set = (r.clamp(0, rows - 1) * cols + c.clamp(0, cols - 1)) as usize;
            let set = set.min(self.grid.sets.len().saturating_sub(1));
            if set == self.sel_set {
                return Action::None;
            }
            self.sel_set = set;
            return Action::Redraw;
        }
        let sets = self.grid.sets.len().max(1) as isize;
        let cols = self.grid.threads.len().max(1) as isize;
        let s = (self.sel_set as isize + dset).clamp(0, sets - 1) as usize;
        let c = (self.sel_col as isize + dcol).clamp(0, cols - 1) as usize;
        if (s, c) == (self.sel_set, self.sel_col) {
            return Action::None;
        }
        self.sel_set = s;
        self.sel_col = c;
        Action::Redraw
    }

    /// A left click on a grid cell selects it; `clicks` says where the frame on screen drew
    /// each cell. Clicks do nothing while the help covers the screen.
    pub fn on_mouse(&mut self, m: MouseEvent, clicks: &ClickMap) -> Action {
        if m.kind != MouseEventKind::Down(MouseButton::Left) || self.help {
            return Action::None;
        }
        match clicks.at(m.column, m.row) {
            Some(Target::Cell { set, col }) => {
                if (set, col) == (self.sel_set, self.sel_col) {
                    return Action::None;
                }
                self.sel_set = set;
                self.sel_col = col;
                Action::Redraw
            }
            None => Action::None,
        }
    }
}

/// Paths that differ only by extension as `dir/stem.{md,csv}`; others listed in full.
fn paths_in_short(paths: &[std::path::PathBuf]) -> String {
    let stem = |p: &std::path::PathBuf| p.with_extension("");
    let same = paths.len() > 1
        && paths
            .iter()
            .all(|p| stem(p) == stem(&paths[0]) && p.extension().is_some());
    if same {
        let exts: Vec<String> = paths
            .iter()
            .filter_map(|p| p.extension().map(|e| e.to_string_lossy().into_owned()))
            .collect();
        format!("{}.{{{}}}", stem(&paths[0]).display(), exts.join(","))
    } else {
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        list.join(", ")
    }
}

/// The next duty cycle in 100 → 50 → 10 → 100; from a value off the steps (`--duty 30`), the
/// next step below it.
pub fn next_duty(d: u8) -> u8 {
    DUTY_STEPS
        .into_iter()
        .find(|&s| s < d)
        .unwrap_or(DUTY_STEPS[0])
}
