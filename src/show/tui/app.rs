//! The monitor's state, apart from any terminal, and the questions the panels ask of it. `App`
//! is a few parts, each changed by one kind of input: the run's setup (fixed at launch), what
//! the engine and the host said lately (`intake`), what the keys chose (`input`), the
//! contention watch and its log (`narration`), the baseline and the clocks. The files that
//! change the parts hold `impl App` blocks of their own; this one imports none of them, so the
//! state has one home and every input a file.

use super::history::History;
use super::probe_panel::ProbePanel;
use super::view::LogView;
use crate::engine::events::{Command, Stage, TrialProgress};
use crate::engine::kernel::Op;
use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::{CellId, Grid};
use crate::judge::groups::{CpuGroups, GroupFigures};
use crate::judge::inference::{Judgement, judge};
use crate::judge::stats::{Board, Context, Figures};
use crate::judge::watch::contention::{Change, Episode, Reference, Source, Thresholds, Watch};
use crate::judge::watch::log::{EventLog, Kind};
use crate::judge::watch::suspects::{Placement, Tracker};
use crate::machine::host::HostSample;
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

/// Thread lines a page of the per-thread list scrolls by before a frame said how many fit.
const THREADS_PAGE: usize = 10;

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
    pub(crate) cell: CellId,
    pub(crate) stage: Stage,
    pub(crate) done_bytes: u64,
    pub(crate) total_bytes: u64,
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

/// What the run was set up with: said once at launch, read by the panels ever after.
#[derive(Clone)]
pub struct Setup {
    pub(crate) ctx: Context,
    pub(crate) header: Header,
    /// CPU → NUMA node on a machine with several nodes (for suspects on our node).
    pub(crate) nodes: HashMap<u32, u32>,
    /// Each CPU's node and core type, for a cell's figures per node and per core type (empty
    /// on a machine with one node and one core type: the detail shows nothing more).
    pub groups: CpuGroups,
    /// The thread count from which threads run on E-cores too, where the pinning order says
    /// (hybrid machines): its column head is marked.
    pub e_cores_from: Option<usize>,
    /// stream-top's own process, never a suspect.
    pub(crate) own_pid: u32,
    /// `--matrix`: the grid's working sets are these pairs, shown as a CPU node × memory node
    /// grid of their own.
    pub matrix: Option<MatrixPlan>,
    /// `--oversubscribe`: why no figure is a measurement (said above the grid).
    pub not_a_measurement: Option<String>,
}

impl Setup {
    /// Memory nodes (columns) of the matrix view, when it is one.
    pub(crate) fn matrix_columns(&self) -> Option<usize> {
        let m = self.matrix.as_ref()?;
        let first = m.pairs.first()?.cpu_node;
        Some(m.pairs.iter().take_while(|p| p.cpu_node == first).count())
    }
}

/// What the engine and the host said lately (changed by `intake`).
#[derive(Clone, Default)]
pub struct Live {
    /// What the engine last said: parked or not.
    pub paused: bool,
    /// The cell whose rounds run now.
    pub current: Option<CellId>,
    pub progress: Option<Progress>,
    /// A working set's trial under way (until its choice or a visit).
    pub(crate) trial: Option<TrialProgress>,
    /// The bytes of arrays the engine holds, as it last said (None before it has).
    pub(crate) arrays_held: Option<u64>,
    pub host: Option<HostSample>,
    /// The engine has ended; with the last error, if any.
    pub finished: bool,
    pub last_error: Option<String>,
    /// Per-second history for the timeline.
    pub history: History,
}

impl Live {
    /// A cell's allocation or first touch is over.
    pub(crate) fn progress_done(&mut self, cell: CellId) {
        if self.progress.is_some_and(|p| p.cell == cell) {
            self.progress = None;
        }
    }
}

/// What the keys and clicks chose (changed by `input`): the selection, the overlays, the
/// per-thread list's scroll, and what the engine was asked for.
#[derive(Clone)]
pub struct View {
    /// The op the grid shows (`o` cycles the grid's ops): every cell drawn, selected or
    /// focused is this op's.
    pub op: Op,
    /// Selected cell: index into `grid.sets`, index into `grid.threads`.
    pub sel_set: usize,
    pub sel_col: usize,
    pub mode: Mode,
    /// What we last asked for.
    pub pause_requested: bool,
    pub(crate) duty: u8,
    /// The help overlay covers the screen.
    pub help: bool,
    /// How far the help is scrolled (its first line shown).
    pub(crate) help_scroll: u16,
    /// The per-thread panel: the full list (`t`) instead of the summary it shows when the
    /// threads do not fit, from this thread on (PgUp/PgDn, Home/End).
    pub threads_list: bool,
    pub threads_top: usize,
    /// Thread lines the panel showed in the last frame: a page for PgUp/PgDn (the event loop
    /// keeps it from the screen, as it keeps the click map).
    pub threads_page: usize,
    /// Keys that write files or wipe figures merge or ask first: see `Guard`.
    pub(crate) guard: Guard,
    /// The full-screen log view (`L`).
    pub log: LogView,
    /// The op `o` switched to: its cells show their last known figures greyed until a new
    /// round of theirs arrives.
    pub(crate) greyed: Option<Op>,
    /// Cells of the `greyed` op that have had a round since the switch.
    pub(crate) fresh: std::collections::HashSet<CellId>,
}

impl View {
    /// Whether `cell` shows figures from before `o` switched to its op.
    pub(crate) fn is_greyed(&self, cell: CellId) -> bool {
        self.greyed == Some(cell.op) && !self.fresh.contains(&cell)
    }

    /// A round of `cell` came: its figures are greyed no longer.
    pub(crate) fn heard_round(&mut self, cell: CellId) {
        if self.greyed == Some(cell.op) {
            self.fresh.insert(cell);
        }
    }

    /// The selected cell of `grid`.
    pub(crate) fn selected(&self, grid: &Grid) -> CellId {
        let t = grid.threads.get(self.sel_col).copied().unwrap_or(1);
        CellId::of(self.op, self.sel_set, t)
    }

    /// What the footer says instead of the keys at `now`: the question of a wipe waiting for
    /// its second `R`, or what the last key did instead of what it usually does.
    pub(crate) fn notice(&self, now: Instant) -> Option<String> {
        let g = &self.guard;
        match g.wipe_until {
            Some(until) if now <= until => Some(format!(
                "press R again within {} s to wipe every cell's statistics; any other key cancels",
                WIPE_WAIT.as_secs()
            )),
            _ => g.notice.clone(),
        }
    }
}

/// How long a first `R` waits for the second that wipes every cell.
pub(crate) const WIPE_WAIT: Duration = Duration::from_secs(3);
/// Exports come at most this often; `e` pressed again sooner is merged into the last one.
pub(crate) const EXPORT_EVERY: Duration = Duration::from_secs(1);

/// The keys that write files or wipe figures: `e` writes at most once per `EXPORT_EVERY` (an
/// unbracketed paste of `eee…` once wrote thousands of files), and `R` wipes only when pressed
/// twice within `WIPE_WAIT` (the first press only tries the failed cells again, which loses
/// nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Guard {
    /// When the last export was asked for, and where it wrote (None until it is known, or when
    /// it failed).
    pub(crate) export: Option<(Instant, Option<String>)>,
    /// `R` was pressed once: a second `R` until then wipes every cell.
    pub(crate) wipe_until: Option<Instant>,
    /// What the last key did instead of what it usually does, until the next key.
    pub(crate) notice: Option<String>,
}

/// The contention watch and the event log that tells it (changed by `narration`).
#[derive(Clone)]
pub struct Narration {
    /// Each cell's reference and contention state, and the episodes so far.
    pub watch: Watch,
    /// The other processes' activity, for naming the suspects of open episodes.
    pub(crate) suspects: Tracker,
    /// Episodes begun whose log line waits for a process sample (id, until when).
    pub(crate) unannounced: Vec<(u64, Instant)>,
    pub log: EventLog,
    /// The watch's changes not yet handed to the recorder (`--record`); None when not
    /// recording.
    pub(crate) unrecorded: Option<Vec<(CellId, Change)>>,
}

/// The `--baseline` run, by cell.
#[derive(Clone, Default)]
pub struct Baseline {
    /// Its medians: shown against the cell's median, and the cell's reference.
    pub medians: HashMap<CellId, f64>,
    /// Its round rates: what the verdicts test the window against.
    pub(crate) rounds: HashMap<CellId, Vec<f64>>,
    /// Its file name.
    pub name: Option<String>,
}

impl Baseline {
    /// The change of a cell's median against the baseline, as a fraction (+0.02 = 2 % faster).
    pub fn change(&self, board: &Board, cell: CellId) -> Option<f64> {
        let a = *self.medians.get(&cell)?;
        let b = board.cell(cell)?.median_gbs()?;
        (a > 0.0).then(|| b / a - 1.0)
    }

    /// The window's rounds against the baseline's, as `compare` judges them; None without a
    /// baseline cell or a window.
    pub(crate) fn verdict(&self, board: &Board, cell: CellId) -> Option<Judgement> {
        let base = self.rounds.get(&cell)?;
        let now = board.cell(cell)?.rates();
        (!now.is_empty()).then(|| judge(base, &now))
    }
}

/// The monitor's clocks: when it started, and "now" for what is drawn.
#[derive(Clone)]
pub struct Clock {
    /// When the monitor started, by the monotonic clock and by the wall clock: the timeline's
    /// seconds count from it, and an instant's wall-clock time is reckoned from it.
    pub started: Instant,
    wall_started: SystemTime,
    /// The latest instant an event, a key or a sample came at: "now" for what is drawn.
    pub now: Instant,
    /// Wall-clock time for the log (replaced in tests).
    pub stamp: fn() -> String,
    /// The local time of day of a wall-clock time, `HH:MM:SS` (replaced in tests).
    pub time_of: fn(SystemTime) -> String,
    /// A replay: the clock is the recording's, and the log is stamped with its time.
    pub(crate) recorded: bool,
}

impl Clock {
    fn new() -> Clock {
        let now = Instant::now();
        Clock {
            started: now,
            wall_started: SystemTime::now(),
            now,
            stamp: crate::judge::watch::log::local_time,
            time_of: crate::judge::watch::log::local_time_of,
            recorded: false,
        }
    }

    /// A replay: `started` is the recording's first frame, at `wall` by the wall clock.
    pub(crate) fn replaying(&mut self, wall: SystemTime) {
        self.wall_started = wall;
        self.recorded = true;
    }

    /// The time of day for a log line now: the wall clock's, or in a replay the recording's.
    pub(crate) fn stamp_now(&self) -> String {
        if self.recorded {
            self.time_of_day(self.now)
        } else {
            (self.stamp)()
        }
    }

    /// Something came at `at`: "now" moves on (never back).
    pub(crate) fn advance(&mut self, at: Instant) {
        self.now = self.now.max(at);
    }

    /// Seconds since the monitor started, at `at`.
    pub(crate) fn second(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_secs()
    }

    /// The wall-clock time of an instant.
    pub fn wall_at(&self, at: Instant) -> SystemTime {
        match at.checked_duration_since(self.started) {
            Some(d) => self.wall_started + d,
            None => self.wall_started - self.started.saturating_duration_since(at),
        }
    }

    /// The local time of day of an instant, `HH:MM:SS`.
    pub(crate) fn time_of_day(&self, at: Instant) -> String {
        (self.time_of)(self.wall_at(at))
    }
}

/// The play speeds `>` cycles through (× the recording's own pace).
pub const SPEEDS: [u32; 3] = [1, 10, 60];

/// The speed `>` goes to after `speed`: the next of `SPEEDS`, the first after the last.
pub fn speed_after(speed: u32) -> u32 {
    SPEEDS
        .iter()
        .position(|&s| s == speed)
        .map_or(SPEEDS[0], |i| SPEEDS[(i + 1) % SPEEDS.len()])
}

/// Where a replay's cursor is, for the header and the footer (`tui::replay`).
#[derive(Debug, Clone, PartialEq)]
pub struct Replaying {
    /// The recording's file names.
    pub(crate) file: String,
    /// The cursor by the wall clock, and from the recording's first frame.
    pub(crate) at: SystemTime,
    pub(crate) offset: Duration,
    /// From the first frame to the last.
    pub(crate) length: Duration,
    /// 1, 10 or 60 (× real time) while playing.
    pub(crate) speed: u32,
    pub(crate) playing: bool,
    /// A time being typed after `g`.
    pub(crate) typing: Option<String>,
    /// The episodes are the recorded ones (else judged again from the rounds).
    pub(crate) episodes_recorded: bool,
}

/// Everything the screen shows.
#[derive(Clone)]
pub struct App {
    pub grid: Grid,
    pub board: Board,
    pub setup: Setup,
    pub live: Live,
    pub view: View,
    pub narration: Narration,
    pub baseline: Baseline,
    pub clock: Clock,
    /// The latency probe (`--probe`, `P`), its watch and timeline.
    pub probe: ProbePanel,
    /// A replay's cursor (None in the live monitor).
    pub(crate) replay: Option<Replaying>,
}

impl App {
    pub fn new(grid: Grid, window: usize, ctx: Context, header: Header, duty: u8) -> App {
        let op = grid.ops.first().copied().unwrap_or_default();
        App {
            grid,
            board: Board::new(window),
            setup: Setup {
                ctx,
                header,
                nodes: HashMap::new(),
                groups: CpuGroups::default(),
                e_cores_from: None,
                own_pid: std::process::id(),
                matrix: None,
                not_a_measurement: None,
            },
            live: Live::default(),
            view: View {
                op,
                sel_set: 0,
                sel_col: 0,
                mode: Mode::Sweep,
                pause_requested: false,
                duty: duty.clamp(1, 100),
                help: false,
                help_scroll: 0,
                threads_list: false,
                threads_top: 0,
                threads_page: THREADS_PAGE,
                guard: Guard::default(),
                log: LogView::default(),
                greyed: None,
                fresh: Default::default(),
            },
            narration: Narration {
                watch: Watch::new(Thresholds::default(), window),
                suspects: Tracker::default(),
                unannounced: Vec::new(),
                log: EventLog::default(),
                unrecorded: None,
            },
            baseline: Baseline::default(),
            clock: Clock::new(),
            probe: ProbePanel::default(),
            replay: None,
        }
    }

    /// Judges contention with these thresholds (`--contention-drop`, `--contention-rounds`).
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.narration.watch.thresholds = t;
    }

    /// The `--baseline` run's median for a cell: shown against the cell's median, and the
    /// cell's reference.
    pub fn set_baseline(&mut self, cell: CellId, gbs: f64) {
        self.baseline.medians.insert(cell, gbs);
        let r = Reference {
            gbs,
            source: Source::Baseline,
        };
        self.narration.watch.set_reference(cell, r, self.clock.now);
    }

    /// The cell `r` and `p` act on: the focused one, else the selected one.
    pub fn target(&self) -> CellId {
        match self.view.mode {
            Mode::Focus(c) => c,
            Mode::Sweep => self.selected(),
        }
    }

    /// The selected cell.
    pub fn selected(&self) -> CellId {
        self.view.selected(&self.grid)
    }

    /// Where a cell's threads ran, for suspects on our CPUs or node.
    pub(crate) fn placement(&self, cell: CellId) -> Placement {
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
            nodes: self.setup.nodes.clone(),
        }
    }

    pub fn figures(&self, cell: CellId) -> Option<Figures> {
        self.board.figures(cell, self.setup.ctx)
    }

    /// The cell's figures per node and per core type (empty where there is one of each).
    pub(crate) fn group_figures(&self, cell: CellId) -> Vec<GroupFigures> {
        self.board
            .cell(cell)
            .map(|c| self.setup.groups.figures(&c.window))
            .unwrap_or_default()
    }

    /// Threads in the selected cell's last round (its thread count before one).
    pub(crate) fn selected_threads(&self) -> usize {
        let cell = self.selected();
        self.board
            .cell(cell)
            .and_then(|c| c.last.as_ref())
            .map_or(cell.threads, |r| r.threads.len())
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

    /// Whether a cell of the grid could not run and has not been tried again since (what `R`
    /// does first, and the footer says so).
    pub(crate) fn any_failed(&self) -> bool {
        (self.grid.cells().into_iter())
            .any(|c| self.board.cell(c).is_some_and(|s| s.failure.is_some()))
    }

    /// Adds a line about a cell (or none) to the event log, stamped now.
    pub(crate) fn note(&mut self, kind: Kind, cell: Option<CellId>, text: String) {
        let t = self.clock.stamp_now();
        self.narration.log.push(t, kind, cell, text);
    }

    /// Adds a line to the event log.
    pub fn log_line(&mut self, kind: Kind, text: String) {
        self.note(kind, None, text);
    }

    /// The episode open on a cell now, if any.
    pub fn open_episode(&self, cell: CellId) -> Option<&Episode> {
        self.narration.watch.open(cell)
    }

    /// The processes of the last sample, busiest first (for the host panel).
    pub fn busiest(&self) -> &[crate::machine::procs::Process] {
        self.narration.suspects.latest()
    }

    /// Rows of the grid on screen: a working set each, or the matrix's CPU nodes and its note.
    pub(crate) fn grid_rows(&self) -> usize {
        match (self.setup.matrix_columns(), &self.setup.matrix) {
            (Some(cols), Some(m)) => {
                self.grid.sets.len().div_ceil(cols.max(1)) + usize::from(m.note.is_some())
            }
            _ => self.grid.sets.len(),
        }
    }
}
