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

    /// With a duty cycle under 100 %, parks the workers for the rest of the cycle: they block
    /// on the pool's condition variable, so the off time costs no CPU. Commands are taken
    /// meanwhile, but none wakes the workers: a redraw request is answered at once (they are
    /// parked already) and a pause waits here parked. They are let go only when the off time
    /// is over and the visit goes on.
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
                // The UI may draw now: the workers are parked for the whole off time.
                Ok(Command::RequestGap) => self.send(Event::Gap),
                Ok(Command::GapDone) => {}
                Ok(Command::Pause) => flow = self.wait_paused(threads)?,
                Ok(cmd) => flow = self.apply(cmd, threads)?,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => flow = Some(Flow::Stop),
            }
        }
        // A visit that ends here lets `finish` wake the workers it needs.
        if flow.is_none() {
            self.pool.activate(threads);
        }
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
                // Focusing a failed cell tries it again: the memory it lacked may be free now.
                let retried = self.retry(cell);
                Ok((!same || retried).then_some(Flow::Next))
            }
            Command::ShowOp(op) => {
                if !self.plan.grid.ops.contains(&op) || self.shown == Some(op) {
                    return Ok(None);
                }
                self.shown = Some(op);
                // A focused cell of another op gives way to a sweep of the op shown.
                if let Mode::Focus(c) = self.mode
                    && c.op != op
                {
                    self.mode = Mode::Sweep { next: 0 };
                }
                Ok(Some(Flow::Next))
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

    /// Parks every worker until Resume (or Stop), then lets the cell's workers go.
    fn pause(&mut self, threads: usize) -> Result<Option<Flow>> {
        let flow = self.wait_paused(threads)?;
        self.pool.activate(threads);
        Ok(flow)
    }

    /// Parks every worker until Resume (or Stop) and leaves them parked.
    fn wait_paused(&mut self, threads: usize) -> Result<Option<Flow>> {
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
        Ok(flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernel::{Kernel, Stores};
    use crate::engine::plan::MemPolicy;
    use crate::engine::plan::{
        Grid, HugePages, Level, Loops, MemoryBudget, Numa, Plan, Schedule, SetSpec, size_sets,
    };
    use crate::machine::topology::{PinPolicy, Topology};
    use crossbeam_channel::{Receiver, Sender};
    use std::path::Path;
    use std::sync::Arc;

    /// A coordinator of two unpinned workers on an L1 set, with the watcher's ends of its
    /// channels; its duty cycle at 10 %.
    fn coordinator() -> (Coordinator, Sender<Command>, Receiver<Event>) {
        coordinator_with(Loops::Default)
    }

    /// The same with `loops` (`Loops::Auto`: a trial of every loop the CPU runs).
    fn coordinator_with(loops: Loops) -> (Coordinator, Sender<Command>, Receiver<Event>) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vm-2core");
        let topo = Topology::read(&root).unwrap();
        let budget = MemoryBudget::new(8 << 30, None);
        let sets = size_sets(&[SetSpec::Level(Level::L1)], &topo, &budget, 2).unwrap();
        let plan = Plan {
            grid: Grid {
                sets,
                threads: vec![2],
                ops: vec![crate::engine::kernel::Op::Triad],
            },
            kernel: Kernel::resolve(None, Stores::Normal).unwrap(),
            loops,
            pin: PinPolicy::None,
            cpu_order: vec![0, 1],
            round_ms: 1,
            schedule: Schedule::Sweep {
                rounds_per_visit: 1,
            },
            duty: 10,
            huge_pages: HugePages::Off,
            memory_budget: budget.bytes,
            counters: false,
            numa: Numa {
                policy: MemPolicy::FirstTouch,
                node_of_cpu: Default::default(),
                matrix: Vec::new(),
            },
            reused: None,
        };
        let (ev_tx, ev_rx) = crossbeam_channel::unbounded();
        let (cmd_tx, cmd_rx) = crossbeam_channel::unbounded();
        let c = Coordinator::new(
            plan,
            ev_tx,
            cmd_rx,
            super::super::Hooks::default(),
            Arc::default(),
        )
        .unwrap();
        (c, cmd_tx, ev_rx)
    }

    /// A cell whose arrays could not be mapped is tried again when the person focuses it,
    /// not skipped for good.
    #[test]
    fn focusing_a_failed_cell_tries_it_again() {
        let (mut c, _tx, _rx) = coordinator();
        let cell = c.plan.grid.cells()[0];
        c.failed.insert(cell);
        c.mode = Mode::Focus(cell);
        assert_eq!(c.apply(Command::Focus(cell), 2).unwrap(), Some(Flow::Next));
        assert!(c.failed.is_empty());
        assert_eq!(c.retries, 1);
        assert_eq!(c.next_cell(), Some(cell));
    }

    /// A service tries a failed cell again after 30 s, then after twice as long each time; a
    /// run with an end does not.
    #[test]
    fn a_service_retries_a_failed_cell_with_backoff() {
        use super::super::{RETRY_FIRST, RETRY_MOST};
        let (mut c, _tx, _rx) = coordinator();
        let cell = c.plan.grid.cells()[0];
        let t0 = Instant::now();
        c.failed.insert(cell);
        c.release_due_retries(t0 + RETRY_MOST);
        assert!(
            c.failed.contains(&cell),
            "a sweep with an end keeps it failed"
        );
        c.service_cycle = Some(Duration::from_secs(60));
        c.release_due_retries(t0);
        assert!(c.failed.contains(&cell), "not before its backoff");
        c.release_due_retries(t0 + RETRY_FIRST);
        assert!(!c.failed.contains(&cell));
        assert_eq!(c.retries, 1);
        // It fails again: the next try waits twice as long.
        c.failed.insert(cell);
        c.release_due_retries(t0 + RETRY_FIRST * 2);
        assert!(c.failed.contains(&cell));
        c.release_due_retries(t0 + RETRY_FIRST * 3);
        assert!(!c.failed.contains(&cell));
        assert_eq!(c.retries, 2);
    }

    /// The off time of a 10 s round at 10 %: 90 s, never waited out here (a Stop ends it).
    const LONG_SPAN_NS: u64 = 10_000_000_000;

    #[test]
    fn a_live_sweep_visits_only_the_op_shown_until_told_another() {
        use crate::engine::kernel::Op;
        let (mut c, _tx, _rx) = coordinator();
        c.plan.grid.ops = vec![Op::Triad, Op::Copy];
        assert_eq!(
            c.shown,
            Some(Op::Triad),
            "the first op, shown from the start"
        );
        for _ in 0..4 {
            assert_eq!(c.next_cell().unwrap().op, Op::Triad);
        }
        assert_eq!(
            c.apply(Command::ShowOp(Op::Copy), 2).unwrap(),
            Some(Flow::Next)
        );
        for _ in 0..4 {
            assert_eq!(c.next_cell().unwrap().op, Op::Copy);
        }
        // An op the grid does not have changes nothing.
        assert_eq!(c.apply(Command::ShowOp(Op::Read), 2).unwrap(), None);
        assert_eq!(c.shown, Some(Op::Copy));
    }

    #[test]
    fn redraw_requests_in_the_off_time_are_answered_with_the_workers_parked() {
        let (mut c, cmd, ev) = coordinator();
        c.pool.activate(2);
        let wakes = c.pool.wakes();
        for m in [
            Command::RequestGap,
            Command::GapDone,
            Command::RequestGap,
            Command::GapDone,
            Command::Stop,
        ] {
            cmd.send(m).unwrap();
        }
        let flow = c.duty_sleep(2, LONG_SPAN_NS).unwrap();
        assert_eq!(flow, Some(Flow::Stop));
        assert_eq!(c.pool.wakes(), wakes, "no redraw let the workers go");
        assert_eq!(c.pool.spinning(), 0, "the workers are parked, not spinning");
        let gaps = ev.try_iter().filter(|e| matches!(e, Event::Gap)).count();
        assert_eq!(gaps, 2, "each request is answered at once");
    }

    #[test]
    fn a_pause_in_the_off_time_keeps_the_workers_parked() {
        let (mut c, cmd, _ev) = coordinator();
        c.pool.activate(2);
        let wakes = c.pool.wakes();
        for m in [
            Command::Pause,
            Command::RequestGap,
            Command::Resume,
            Command::Stop,
        ] {
            cmd.send(m).unwrap();
        }
        assert_eq!(c.duty_sleep(2, LONG_SPAN_NS).unwrap(), Some(Flow::Stop));
        assert_eq!(c.pool.wakes(), wakes);
        assert_eq!(c.pool.spinning(), 0);
    }

    #[test]
    fn the_off_time_ends_with_the_workers_let_go_once() {
        let (mut c, cmd, _ev) = coordinator();
        c.pool.activate(2);
        let wakes = c.pool.wakes();
        cmd.send(Command::RequestGap).unwrap();
        // A 1 µs round at 10 %: 9 µs off, then the visit goes on.
        assert_eq!(c.duty_sleep(2, 1_000).unwrap(), None);
        assert_eq!(c.pool.wakes(), wakes + 1);
        assert_eq!(c.pool.spinning(), 1, "worker 1 spins for the next round");
        c.pool.park_all();
    }

    #[test]
    fn a_gap_between_rounds_lets_the_workers_go_again() {
        let (mut c, cmd, _ev) = coordinator();
        c.pool.activate(2);
        let wakes = c.pool.wakes();
        cmd.send(Command::RequestGap).unwrap();
        cmd.send(Command::GapDone).unwrap();
        assert_eq!(c.between_rounds(2).unwrap(), None);
        assert_eq!(c.pool.wakes(), wakes + 1);
        c.pool.park_all();
    }

    #[test]
    fn a_set_runs_on_its_trials_arrays_and_maps_none_of_its_own() {
        let (mut c, _cmd, ev) = coordinator_with(Loops::Auto);
        c.duty = 100;
        let cell = c.plan.grid.cells()[0];
        assert_eq!(c.visit(cell).unwrap(), Flow::Next);
        let tried = ev
            .try_iter()
            .any(|e| matches!(e, Event::Choice(ch) if ch.trial.is_some()));
        if !tried {
            // One loop only on this CPU: nothing to try, and the arrays are mapped once.
            assert_eq!(c.mapped, 1);
            return;
        }
        assert_eq!(c.mapped, 0, "the trial's arrays were kept for the cell");
        assert_eq!(c.buffers.len(), 1);
        // The next visit maps nothing either.
        assert_eq!(c.visit(cell).unwrap(), Flow::Next);
        assert_eq!(c.mapped, 0);
    }

    #[test]
    fn a_page_layout_trial_hands_on_its_copy_only_when_its_layout_won() {
        // Huge pages on and off, one copy at a time, the default's (on) last: the cell runs on
        // the trial's copy when on won, and maps its own only when off did.
        let (mut c, _cmd, ev) = coordinator_with(Loops::Default);
        c.plan.huge_pages = HugePages::Auto;
        c.duty = 100;
        let cell = c.plan.grid.cells()[0];
        assert_eq!(c.visit(cell).unwrap(), Flow::Next);
        let choice = ev
            .try_iter()
            .find_map(|e| match e {
                Event::Choice(ch) => Some(ch),
                _ => None,
            })
            .unwrap();
        if choice.trial.is_none() {
            // No transparent huge pages here (macOS): one layout, nothing to try.
            assert_eq!(c.mapped, 1);
            return;
        }
        assert_eq!(c.mapped, u64::from(!choice.kept.huge_pages), "{choice:?}");
        assert_eq!(c.buffers.len(), 1);
    }

    #[test]
    fn without_a_trial_a_set_maps_its_arrays_once() {
        let (mut c, _cmd, _ev) = coordinator();
        c.duty = 100;
        let cell = c.plan.grid.cells()[0];
        assert_eq!(c.visit(cell).unwrap(), Flow::Next);
        assert_eq!(c.visit(cell).unwrap(), Flow::Next);
        assert_eq!(c.mapped, 1);
    }
}
