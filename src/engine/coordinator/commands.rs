//! The commands the watcher sends (stop, pause, focus, sweep, a new grid, a gap, the duty
//! cycle), handled between rounds and never inside one; also the waits in which they are
//! taken: a gap, a pause, the idle part of the duty cycle.

use super::{Coordinator, Flow, Mode};
use crate::base::error::Result;
use crate::engine::events::{Command, Event};
use crossbeam_channel::{RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// The longest a gap between rounds waits for `GapDone`.
const GAP_LIMIT: Duration = Duration::from_millis(50);

impl Coordinator {
    /// Handles the commands that came during the round. Some(flow) ends the visit.
    pub(super) fn between_rounds(&mut self, threads: usize) -> Result<Option<Flow>> {
        if self.stopping() {
            return Ok(Some(Flow::Stop));
        }
        loop {
            match self.commands.try_recv() {
                Ok(cmd) => {
                    if let Some(flow) = self.apply(cmd, threads)? {
                        return Ok(Some(flow));
                    }
                }
                Err(TryRecvError::Empty) => return Ok(None),
                Err(TryRecvError::Disconnected) => return Ok(Some(Flow::Stop)),
            }
        }
    }

    /// With a duty cycle under 100 %, parks the workers for the rest of the cycle.
    pub(super) fn duty_sleep(&mut self, threads: usize, span_ns: u64) -> Result<Option<Flow>> {
        if self.duty >= 100 {
            return Ok(None);
        }
        let idle = span_ns * (100 - self.duty as u64) / self.duty as u64;
        self.pool.park_all();
        let until = Instant::now() + Duration::from_nanos(idle);
        let mut flow = None;
        while flow.is_none() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.commands.recv_timeout(left) {
                Ok(cmd) => flow = self.apply(cmd, threads)?,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => flow = Some(Flow::Stop),
            }
        }
        self.pool.activate(threads);
        Ok(flow)
    }

    /// Applies a command; Some(flow) when the current visit must end.
    fn apply(&mut self, cmd: Command, threads: usize) -> Result<Option<Flow>> {
        match cmd {
            Command::Stop => Ok(Some(Flow::Stop)),
            Command::Pause => self.pause(threads),
            Command::Resume | Command::GapDone => Ok(None),
            Command::RequestGap => self.gap(threads),
            Command::SetDuty(d) => {
                self.duty = d.clamp(1, 100);
                Ok(None)
            }
            Command::Focus(cell) => {
                if !self.plan.grid.cells().contains(&cell) {
                    self.send(Event::Error(format!("no such cell to focus: {cell}")));
                    return Ok(None);
                }
                let same = self.mode == Mode::Focus(cell);
                self.mode = Mode::Focus(cell);
                Ok((!same).then_some(Flow::Next))
            }
            Command::Sweep => {
                if matches!(self.mode, Mode::Sweep { .. }) {
                    return Ok(None);
                }
                let cells = self.plan.grid.cells();
                let next = match self.mode {
                    Mode::Focus(c) => cells.iter().position(|x| *x == c).map_or(0, |i| i + 1),
                    _ => 0,
                };
                self.mode = Mode::Sweep { next };
                Ok(Some(Flow::Next))
            }
            Command::SetGrid(grid) => {
                if grid.sets.is_empty() || grid.threads.is_empty() || grid.threads.contains(&0) {
                    self.send(Event::Error("refused an empty grid".into()));
                    return Ok(None);
                }
                self.pending_grid = Some(grid);
                Ok(Some(Flow::Next))
            }
        }
    }

    /// A gap between rounds: workers parked until the watcher says it is done (or the limit).
    fn gap(&mut self, threads: usize) -> Result<Option<Flow>> {
        self.pool.park_all();
        self.send(Event::Gap);
        let until = Instant::now() + GAP_LIMIT;
        let mut flow = None;
        while flow.is_none() {
            match self
                .commands
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(Command::GapDone) | Err(RecvTimeoutError::Timeout) => break,
                Ok(Command::RequestGap) => {}
                Ok(cmd) => flow = self.apply(cmd, threads)?,
                Err(RecvTimeoutError::Disconnected) => flow = Some(Flow::Stop),
            }
        }
        self.pool.activate(threads);
        Ok(flow)
    }

    /// Parks every worker until Resume (or Stop).
    fn pause(&mut self, threads: usize) -> Result<Option<Flow>> {
        self.pool.park_all();
        self.send(Event::Paused);
        let mut flow = None;
        loop {
            match self.commands.recv() {
                Ok(Command::Resume) => break,
                Ok(Command::Stop) | Err(_) => return Ok(Some(Flow::Stop)),
                Ok(Command::Pause) | Ok(Command::GapDone) => {}
                // Nothing runs while paused: the gap is already there.
                Ok(Command::RequestGap) => self.send(Event::Gap),
                Ok(other) => {
                    if let Some(f) = self.apply(other, threads)? {
                        flow = Some(f);
                    }
                }
            }
        }
        self.send(Event::Resumed);
        self.pool.activate(threads);
        Ok(flow)
    }
}
