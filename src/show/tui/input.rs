//! Keys and clicks: each becomes an `Action` for the event loop (a redraw, a command for the
//! engine, an export, quit) and changes what the view shows (`View`) or what the monitor knows
//! (a reset, a pinned reference). Where an export wrote is logged here too, since `e` asked
//! for it. The keys that write files or wipe figures are guarded (`app::Guard`): `e` at most
//! once a second, `R` only when pressed twice.

use super::app::{Action, App, EXPORT_EVERY, Mode, WIPE_WAIT};
use super::click_map::{ClickMap, Target};
use super::ui::help_max_scroll;
use crate::engine::events::Command;
use crate::engine::kernel::Op;
use crate::engine::plan::CellId;
use crate::judge::watch::contention::{Reference, Source};
use crate::judge::watch::log::Kind;
use crate::judge::watch::narrative::gbs;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::fmt::Display;
use std::time::Instant;

/// Lines PgUp and PgDn scroll the help by.
const HELP_PAGE: u16 = 10;

/// Duty cycles `d` steps through, in order.
const DUTY_STEPS: [u8; 3] = [100, 50, 10];

impl App {
    /// Takes in a key pressed now.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        self.on_key_at(key, Instant::now())
    }

    /// Takes in a key pressed at `at` (the clock that paces exports and the second `R`).
    pub fn on_key_at(&mut self, key: KeyEvent, at: Instant) -> Action {
        if key.kind != KeyEventKind::Press {
            return Action::None;
        }
        self.clock.advance(at);
        // A notice lasts until the next key; a wipe waiting for its second `R` ends with it.
        let had_notice = self.view.guard.notice.take().is_some();
        let wipe_asked = self.view.guard.wipe_until.take();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Char('z') if ctrl => return Action::Suspend,
            // The log view takes every other key (q leaves it), unless the help covers it.
            code if self.view.log.open && !self.view.help => return self.log_key(code),
            KeyCode::Char('q') => return Action::Quit,
            _ => {}
        }
        let wipe_asked = wipe_asked.filter(|until| at <= *until);
        if wipe_asked.is_some() && key.code != KeyCode::Char('R') {
            // The answer to the question is not also a command.
            self.view.guard.notice = Some("wipe of every cell cancelled".into());
            return Action::Redraw;
        }
        if self.view.help {
            // The arrows and pages scroll it; any other key closes it (Esc too: it closes the
            // overlay, not the program).
            let max = help_max_scroll(self);
            let s = &mut self.view.help_scroll;
            match key.code {
                KeyCode::Up => *s = s.saturating_sub(1),
                KeyCode::Down => *s = (*s + 1).min(max),
                KeyCode::PageUp => *s = s.saturating_sub(HELP_PAGE),
                KeyCode::PageDown => *s = (*s + HELP_PAGE).min(max),
                KeyCode::Home => *s = 0,
                KeyCode::End => *s = max,
                _ => self.view.help = false,
            }
            return Action::Redraw;
        }
        match key.code {
            KeyCode::Esc => Action::Quit,
            KeyCode::Char('?') => {
                self.view.help = true;
                self.view.help_scroll = 0;
                Action::Redraw
            }
            KeyCode::Left | KeyCode::Char('h') => self.move_by(0, -1),
            KeyCode::Right | KeyCode::Char('l') => self.move_by(0, 1),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1, 0),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1, 0),
            KeyCode::Enter => self.toggle_focus(),
            KeyCode::Char(' ') => {
                let v = &mut self.view;
                v.pause_requested = !v.pause_requested;
                Action::Send(if v.pause_requested {
                    Command::Pause
                } else {
                    Command::Resume
                })
            }
            KeyCode::Char('d') => {
                self.view.duty = next_duty(self.view.duty);
                let text = format!("duty cycle {} %", self.view.duty);
                self.note(Kind::Info, None, text);
                Action::Send(Command::SetDuty(self.view.duty))
            }
            KeyCode::Char('o') => self.next_op(),
            KeyCode::Char('e') => self.export_at(at),
            KeyCode::Char('r') => {
                self.reset_cell(self.target());
                Action::Redraw
            }
            KeyCode::Char('R') => match wipe_asked {
                Some(_) => {
                    self.reset_all();
                    Action::Redraw
                }
                // Failed cells are tried again at once (nothing is lost by that); only a second
                // `R` wipes.
                None => {
                    self.view.guard.wipe_until = Some(at + WIPE_WAIT);
                    if self.any_failed() {
                        Action::Send(Command::RetryFailed)
                    } else {
                        Action::Redraw
                    }
                }
            },
            KeyCode::Char('p') => self.pin(self.target()),
            KeyCode::Char('P') => self.toggle_probe(),
            KeyCode::Char('t') => {
                self.view.threads_list = !self.view.threads_list;
                Action::Redraw
            }
            KeyCode::Char('L') => {
                self.view.log.open = true;
                Action::Redraw
            }
            KeyCode::PageDown => self.scroll_threads(|top, page, _| top + page),
            KeyCode::PageUp => self.scroll_threads(|top, page, _| top.saturating_sub(page)),
            KeyCode::Home => self.scroll_threads(|_, _, _| 0),
            KeyCode::End => self.scroll_threads(|_, _, last| last),
            // An unbound key still takes a notice off the screen.
            _ if had_notice => Action::Redraw,
            _ => Action::None,
        }
    }

    /// A key in the log view (`L`): a search being typed takes every key but Enter, Esc and
    /// Backspace; else the keys scroll, search, filter, or leave the view (Esc, `L`, `q`: `q`
    /// leaves the view, not the monitor). Leaving, the view goes back to the newest entry.
    fn log_key(&mut self, code: KeyCode) -> Action {
        let log = &self.narration.log;
        let lv = &mut self.view.log;
        let had_notice = lv.notice.take().is_some();
        if lv.typing {
            match code {
                KeyCode::Enter => {
                    lv.typing = false;
                    lv.found = None;
                    lv.search(log, true);
                }
                KeyCode::Esc => {
                    lv.typing = false;
                    lv.query.clear();
                }
                KeyCode::Backspace => {
                    lv.query.pop();
                }
                KeyCode::Char(c) => lv.query.push(c),
                _ => return Action::None,
            }
            return Action::Redraw;
        }
        let page = lv.page.max(1) as isize;
        match code {
            KeyCode::Esc | KeyCode::Char('L' | 'q') => {
                lv.open = false;
                lv.bottom = None;
                lv.found = None;
            }
            KeyCode::Up | KeyCode::Char('k') => lv.scroll(log, -1),
            KeyCode::Down | KeyCode::Char('j') => lv.scroll(log, 1),
            KeyCode::PageUp => lv.scroll(log, -page),
            KeyCode::PageDown => lv.scroll(log, page),
            KeyCode::Home | KeyCode::Char('g') => lv.home(log),
            KeyCode::End | KeyCode::Char('G') => lv.bottom = None,
            KeyCode::Char('/') => {
                lv.typing = true;
                lv.query.clear();
            }
            KeyCode::Char('n') if !lv.query.is_empty() => lv.search(log, true),
            KeyCode::Char('N') if !lv.query.is_empty() => lv.search(log, false),
            KeyCode::Char('f') => lv.filter = lv.filter.next(),
            KeyCode::Char('?') => self.view.help = true,
            _ if had_notice => {}
            _ => return Action::None,
        }
        Action::Redraw
    }

    /// `e`: an export, unless one was asked for less than `EXPORT_EVERY` ago: then this press
    /// is merged into it and the footer says where it wrote.
    fn export_at(&mut self, at: Instant) -> Action {
        let g = &mut self.view.guard;
        match &g.export {
            Some((last, wrote)) if at < *last + EXPORT_EVERY => {
                g.notice = Some(match wrote {
                    Some(paths) => format!("export already written: {paths}"),
                    None => "export just tried (see the log): e again in a second".into(),
                });
                Action::Redraw
            }
            _ => {
                g.export = Some((at, None));
                Action::Export
            }
        }
    }

    /// A left click on a grid cell selects it; `clicks` says where the frame on screen drew
    /// each cell. Clicks do nothing while the help covers the screen.
    pub fn on_mouse(&mut self, m: MouseEvent, clicks: &ClickMap) -> Action {
        if m.kind != MouseEventKind::Down(MouseButton::Left) || self.view.help || self.view.log.open
        {
            return Action::None;
        }
        match clicks.at(m.column, m.row) {
            Some(Target::Cell { set, col }) => {
                let v = &mut self.view;
                if (set, col) == (v.sel_set, v.sel_col) {
                    return Action::None;
                }
                v.sel_set = set;
                v.sel_col = col;
                Action::Redraw
            }
            None => Action::None,
        }
    }

    /// Logs where an export wrote.
    pub fn exported(&mut self, paths: &[std::path::PathBuf]) {
        let short = paths_in_short(paths);
        if let Some((_, wrote)) = &mut self.view.guard.export {
            *wrote = Some(short.clone());
        }
        self.note(Kind::Export, None, format!("exported {short}"));
    }

    /// Logs why an export could not be written.
    pub fn export_failed(&mut self, why: impl Display) {
        self.note(Kind::Error, None, format!("export failed: {why}"));
    }

    fn move_by(&mut self, dset: isize, dcol: isize) -> Action {
        if let Some(cols) = self.setup.matrix_columns() {
            // Up and down go from CPU node to CPU node, left and right from memory node to
            // memory node: the pair is the working set, at the one thread count.
            let cols = cols.max(1) as isize;
            let rows = self.grid_rows().max(1) as isize;
            let sel = self.view.sel_set as isize;
            let (r, c) = (sel / cols + dset, sel % cols + dcol);
            let set = (r.clamp(0, rows - 1) * cols + c.clamp(0, cols - 1)) as usize;
            let set = set.min(self.grid.sets.len().saturating_sub(1));
            if set == self.view.sel_set {
                return Action::None;
            }
            self.view.sel_set = set;
            return Action::Redraw;
        }
        let sets = self.grid.sets.len().max(1) as isize;
        let cols = self.grid.threads.len().max(1) as isize;
        let v = &mut self.view;
        let s = (v.sel_set as isize + dset).clamp(0, sets - 1) as usize;
        let c = (v.sel_col as isize + dcol).clamp(0, cols - 1) as usize;
        if (s, c) == (v.sel_set, v.sel_col) {
            return Action::None;
        }
        v.sel_set = s;
        v.sel_col = c;
        Action::Redraw
    }

    /// Enter: focus the selected cell; on the focused cell, back to the sweep.
    fn toggle_focus(&mut self) -> Action {
        let sel = self.selected();
        if self.view.mode == Mode::Focus(sel) {
            self.view.mode = Mode::Sweep;
            self.note(Kind::Info, None, "sweep over every cell".into());
            Action::Send(Command::Sweep)
        } else {
            self.view.mode = Mode::Focus(sel);
            let text = format!("focus on {}", self.cell_name(sel));
            self.note(Kind::Info, Some(sel), text);
            // Its reference is the first window from now on; not while it is contended, when
            // that window would learn the contended level as normal.
            if !self.narration.watch.is_contended(sel) {
                self.relearn(sel, false);
            }
            Action::Send(Command::Focus(sel))
        }
    }

    /// PgUp/PgDn/Home/End: the per-thread list, scrolled; `to` picks the new first thread
    /// from the old one, the page and the last first thread that still fills the panel.
    /// Nothing to scroll when the threads fit.
    fn scroll_threads(&mut self, to: impl Fn(usize, usize, usize) -> usize) -> Action {
        let page = self.view.threads_page.max(1);
        let threads = self.selected_threads();
        if threads <= page {
            return Action::None;
        }
        let last = threads - page;
        let v = &mut self.view;
        let top = to(v.threads_top.min(last), page, last).min(last);
        if v.threads_list && top == v.threads_top {
            return Action::None;
        }
        v.threads_list = true;
        v.threads_top = top;
        Action::Redraw
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

    /// `p`: the cell's median now is its reference from here on.
    /// `o`: the grid shows the next op, its last known figures greyed until new rounds
    /// come (of one op, the footer says so); a focused cell gives way to a sweep of the op
    /// shown, which the engine now visits alone.
    fn next_op(&mut self) -> Action {
        let ops = &self.grid.ops;
        if ops.len() < 2 {
            self.view.guard.notice = Some(format!(
                "o: one op only ({}); --op names more to measure",
                self.view.op
            ));
            return Action::Redraw;
        }
        let i = ops
            .iter()
            .position(|&o| o == self.view.op)
            .map_or(0, |i| i + 1);
        let op = ops[i % ops.len()];
        self.view.op = op;
        self.view.greyed = Some(op);
        self.view.fresh.clear();
        if !self.has_figures(op) {
            self.view.guard.notice = Some(format!(
                "op {op}: no rounds of it yet; its figures come as the engine measures it now"
            ));
        }
        if matches!(self.view.mode, Mode::Focus(c) if c.op != op) {
            self.view.mode = Mode::Sweep;
        }
        Action::Send(Command::ShowOp(op))
    }

    /// Whether any cell of `op` has figures to show.
    fn has_figures(&self, op: Op) -> bool {
        let mut cells = (0..self.grid.sets.len()).flat_map(|set| {
            self.grid
                .threads
                .iter()
                .map(move |&t| CellId::of(op, set, t))
        });
        cells.any(|c| self.figures(c).is_some())
    }

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
        let now = self.clock.now;
        if let Some(id) = self.narration.watch.set_reference(cell, r, now) {
            self.episode_ended(cell, id, now);
        }
        let text = format!(
            "reference for {} pinned at {} GB/s",
            self.cell_name(cell),
            gbs(m)
        );
        self.note(Kind::Info, Some(cell), text);
        Action::Redraw
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
