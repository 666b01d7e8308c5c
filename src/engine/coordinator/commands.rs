//! The commands the watcher sends (stop, pause, focus, sweep, a new grid, a gap, the duty
//! cycle, a retry of the failed cells), handled between rounds and never inside one; also the
//! waits in which they are taken: a gap, a pause, the idle part of the duty cycle, a sweep
//! with no cell that can run.

use super::{Coordinator, Flow, Mode};
use crate::base::error::Result;
use crate::engine::events::{Command, Event};
use crossbeam_channel::{RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// The longest a gap between rounds waits for `GapDone`.
const GAP_LIMIT: Duration = Duration::from_millis(50);
/// How often a sweep with no cell that can run looks at the stop flag while it waits.
const IDLE_POLL: Duration = Duration::from_millis(100);

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

    /// When no cell can run: a run with an end is done (Stop). A sweep whose cells all failed
    /// waits instead, its workers parked, for what lets one run: a service's next retry, or a
    /// command (focus, `R`, another op or grid); then it looks again (Next). It answers a
    /// redraw's gap and a pause meanwhile, and ends on a stop.
    pub(super) fn wait_for_a_cell(&mut self) -> Result<Flow> {
        if matches!(self.mode, Mode::Once { .. }) || self.failed.is_empty() || self.stopping() {
            return Ok(Flow::Stop);
        }
        self.pool.park_all();
        self.hot = None;
        let now = Instant::now();
        let due = self.retry_due.values().min().copied();
        let wait = due.map_or(IDLE_POLL, |d| d.saturating_duration_since(now));
        let flow = match self.commands.recv_timeout(wait.min(IDLE_POLL)) {
            Ok(Command::RequestGap) => {
                self.send(Event::Gap);
                None
            }
            Ok(Command::Pause) => self.wait_paused(0)?,
            Ok(cmd) => self.apply(cmd, 0)?,
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Flow::Stop),
        };
        Ok(flow.unwrap_or(Flow::Next))
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
            Command::RetryFailed => {
                self.retry_all();
                Ok(None)
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
        CellId, Grid, HugePages, Level, Loops, MemoryBudget, Numa, Plan, Schedule, SetSpec,
        size_sets,
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

    /// The cells each `Event::CellRetry` among `events` names, with its tries.
    fn retried(events: &Receiver<Event>) -> Vec<(CellId, u32)> {
        events
            .try_iter()
            .filter_map(|e| match e {
                Event::CellRetry { cell, tries } => Some((cell, tries)),
                _ => None,
            })
            .collect()
    }

    /// A cell whose arrays could not be mapped is tried again when the person focuses it,
    /// not skipped for good, and the watcher hears that it is.
    #[test]
    fn focusing_a_failed_cell_tries_it_again() {
        let (mut c, _tx, rx) = coordinator();
        let cell = c.plan.grid.cells()[0];
        c.fail(cell, "no room".into());
        c.mode = Mode::Focus(cell);
        assert_eq!(c.apply(Command::Focus(cell), 2).unwrap(), Some(Flow::Next));
        assert!(c.failed.is_empty());
        assert_eq!(retried(&rx), vec![(cell, 1)]);
        assert_eq!(c.next_cell(), Some(cell));
    }

    /// `R` in the live monitor: every failed cell is tried again at once, whatever a backoff
    /// says, and each says so; a cell that had not failed is not.
    #[test]
    fn retry_failed_tries_every_failed_cell_again() {
        let (mut c, _tx, rx) = coordinator();
        c.plan.grid.threads = vec![1, 2];
        let cells = c.plan.grid.cells();
        c.fail(cells[1], "no room".into());
        c.fail(cells[0], "no room".into());
        assert_eq!(c.apply(Command::RetryFailed, 2).unwrap(), None);
        assert!(c.failed.is_empty());
        assert_eq!(retried(&rx), vec![(cells[0], 1), (cells[1], 1)]);
        assert_eq!(c.apply(Command::RetryFailed, 2).unwrap(), None);
        assert!(
            retried(&rx).is_empty(),
            "nothing failed, nothing tried again"
        );
    }

    /// A service tries a failed cell again 30 s after it failed, then after twice as long
    /// each time it fails again, at most 10 minutes; a run with an end does not.
    #[test]
    fn a_service_retries_a_failed_cell_with_backoff() {
        use super::super::RETRY_FIRST;
        let (mut c, _tx, rx) = coordinator();
        let cell = c.plan.grid.cells()[0];
        let t0 = Instant::now();
        c.fail_at(cell, "no room".into(), t0);
        c.release_due_retries(t0 + Duration::from_secs(3600));
        assert!(
            c.failed.contains(&cell),
            "a run with an end keeps it failed"
        );
        c.failed.clear();
        c.service_cycle = Some(Duration::from_secs(60));
        c.fail_at(cell, "no room".into(), t0);
        c.release_due_retries(t0 + RETRY_FIRST / 2);
        assert!(c.failed.contains(&cell), "not before its backoff");
        c.release_due_retries(t0 + RETRY_FIRST);
        assert!(!c.failed.contains(&cell));
        assert_eq!(retried(&rx), vec![(cell, 1)]);
        // It fails again: the next try waits twice as long, then four times, ...
        let mut at = t0 + RETRY_FIRST;
        for (tries, wait_s) in [(2, 60), (3, 120), (4, 240), (5, 480), (6, 600), (7, 600)] {
            c.fail_at(cell, "no room".into(), at);
            c.release_due_retries(at + Duration::from_secs(wait_s - 1));
            assert!(c.failed.contains(&cell), "try {tries} before {wait_s} s");
            at += Duration::from_secs(wait_s);
            c.release_due_retries(at);
            assert!(!c.failed.contains(&cell), "try {tries} after {wait_s} s");
            assert_eq!(retried(&rx), vec![(cell, tries)]);
        }
    }

    /// A sweep whose every cell failed waits for what lets one run (here `R`) rather than
    /// ending the engine; a stop still ends it, and a run with an end is simply done.
    #[test]
    fn a_sweep_of_failed_cells_waits_for_a_retry_rather_than_ending() {
        let (mut c, tx, rx) = coordinator();
        let cell = c.plan.grid.cells()[0];
        c.fail(cell, "no room".into());
        assert_eq!(c.next_cell(), None);
        assert_eq!(
            c.wait_for_a_cell().unwrap(),
            Flow::Next,
            "nothing came: wait on"
        );
        tx.send(Command::RequestGap).unwrap();
        assert_eq!(c.wait_for_a_cell().unwrap(), Flow::Next);
        assert!(
            rx.try_iter().any(|e| e == Event::Gap),
            "a redraw is answered"
        );
        tx.send(Command::RetryFailed).unwrap();
        assert_eq!(c.wait_for_a_cell().unwrap(), Flow::Next);
        assert_eq!(c.next_cell(), Some(cell));
        c.fail(cell, "no room".into());
        tx.send(Command::Stop).unwrap();
        assert_eq!(c.wait_for_a_cell().unwrap(), Flow::Stop);
        c.mode = Mode::Once {
            order: vec![cell],
            next: 1,
        };
        assert_eq!(c.wait_for_a_cell().unwrap(), Flow::Stop);
    }

    /// A service whose every cell failed waits for the first retry due and then runs it.
    #[test]
    fn a_service_of_failed_cells_runs_its_retry_when_due() {
        let (mut c, _tx, rx) = coordinator();
        c.service_cycle = Some(Duration::from_secs(60));
        c.retry_first = Duration::from_millis(1);
        let cell = c.plan.grid.cells()[0];
        c.fail(cell, "no room".into());
        let mut next = None;
        for _ in 0..100 {
            assert_eq!(c.wait_for_a_cell().unwrap(), Flow::Next);
            next = c.next_cell();
            if next.is_some() {
                break;
            }
        }
        assert_eq!(next, Some(cell));
        assert_eq!(retried(&rx), vec![(cell, 1)]);
    }

    /// A cell that ran again starts its backoff afresh should it fail later.
    #[test]
    fn a_cell_that_runs_forgets_its_tries() {
        let (mut c, _tx, _rx) = coordinator();
        c.duty = 100;
        let cell = c.plan.grid.cells()[0];
        c.tries.insert(cell, 3);
        assert_eq!(c.visit(cell).unwrap(), Flow::Next);
        assert!(c.tries.is_empty());
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
