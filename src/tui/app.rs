//! The monitor's state, apart from any terminal: engine events, host samples, keys and mouse
//! clicks go in; what to draw and what to ask of the engine come out. Everything here is tested
//! without a terminal.

use super::click_map::{ClickMap, Target};
use super::contention::{Contention, Streaks};
use super::log::{EventLog, Kind};
use crate::engine::events::{Command, Event, RoundRecord, Stage};
use crate::engine::plan::{CellId, Grid};
use crate::inference::{Judgement, judge};
use crate::machine::host::HostSample;
use crate::platform;
use crate::stats::{Board, Context, Figures};
use crate::units::format_bytes;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::collections::HashMap;
use std::fmt::Display;

/// Duty cycles `d` steps through, in order.
const DUTY_STEPS: [u8; 3] = [100, 50, 10];

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
    streaks: Streaks,
    /// Wall-clock time for the log (replaced in tests).
    pub clock: fn() -> String,
}

impl App {
    pub fn new(grid: Grid, window: usize, ctx: Context, header: Header, duty: u8) -> App {
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
            streaks: Streaks::default(),
            clock: super::log::local_time,
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

    /// Takes in an engine event; returns whether the screen changed.
    pub fn on_event(&mut self, ev: &Event) -> bool {
        match ev {
            Event::Round(r) => {
                if !r.warmup {
                    let median = self.board.cell(r.cell).and_then(|c| {
                        // Only once the window has enough rounds to mean something.
                        (c.window.len() >= super::contention::MIN_ROUNDS)
                            .then(|| c.median_gbs())
                            .flatten()
                    });
                    if let Some(c) = self.streaks.round(r.cell, r.gbs(), median) {
                        self.contention(r.cell, c);
                    }
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
            Event::CellFailed { cell, reason } => {
                if self.progress.is_some_and(|p| p.cell == *cell) {
                    self.progress = None;
                }
                let text = format!("{} could not run: {reason}", self.cell_name(*cell));
                // Said on exit should the engine end for want of a cell that can run.
                self.last_error = Some(text.clone());
                self.note(Kind::Error, Some(*cell), text);
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
        self.board.record(ev);
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

    fn contention(&mut self, cell: CellId, c: Contention) {
        let mut text = match c {
            Contention::Began { median, recent } => format!(
                "contention on {}: {:.0} % below median for 3 rounds ({} vs {} GB/s)",
                self.cell_name(cell),
                (1.0 - recent / median) * 100.0,
                gbs(recent),
                gbs(median)
            ),
            Contention::Ended { rounds, now } => {
                let text = format!(
                    "{} back to {} GB/s after {rounds} slow rounds",
                    self.cell_name(cell),
                    gbs(now)
                );
                self.note(Kind::Info, Some(cell), text);
                return;
            }
        };
        match &self.host {
            Some(h) => {
                if let Some(s) = h.steal_pct {
                    text.push_str(&format!("; steal {s:.1} %"));
                }
                if let Some(t) = h.throttling_note() {
                    text.push_str(&format!("; {t}"));
                }
                match h.top_others.first() {
                    Some(p) => text.push_str(&format!("; top {} {:.0} %", p.comm, p.cpu_pct)),
                    None => text.push_str("; no other process busy"),
                }
            }
            None => text.push_str("; host not sampled yet"),
        }
        self.note(Kind::Contention, Some(cell), text);
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

    /// Logs where an export wrote.
    pub fn exported(&mut self, paths: &[std::path::PathBuf]) {
        let text = format!("exported {}", paths_in_short(paths));
        self.note(Kind::Export, None, text);
    }

    /// Logs why an export could not be written.
    pub fn export_failed(&mut self, why: impl Display) {
        self.note(Kind::Error, None, format!("export failed: {why}"));
    }

    /// Forgets every figure (`r`).
    fn reset(&mut self) {
        self.board.reset();
        self.streaks = Streaks::default();
        self.note(Kind::Info, None, "statistics reset".into());
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.kind != KeyEventKind::Press {
            return Action::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => return Action::Quit,
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
                self.reset();
                Action::Redraw
            }
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
            Action::Send(Command::Focus(sel))
        }
    }

    fn move_by(&mut self, dset: isize, dcol: isize) -> Action {
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

/// GB/s with as many decimals as the size of the number deserves.
pub(crate) fn gbs(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}
