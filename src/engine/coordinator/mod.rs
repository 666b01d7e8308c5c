//! The engine thread: worker 0 of the pool and the one that walks the schedule, runs each
//! visit (calibration, warm-up, timed rounds, checksum) and sends one record per round after
//! the end barrier. Its other jobs have their own files: the kept arrays (`arrays`), where
//! pages go (`pages`) and the commands between rounds (`commands`).

mod arrays;
mod commands;
mod kept;
mod pages;

use super::buffers::expected_sum_of;
use super::choice::{candidates, reused};
use super::events::{Checksum, Choice, Command, Event, Pick, RoundRecord};
use super::kernel::{Op, Stores};
use super::plan::{ArraySize, CellId, Grid, MemPolicy, Plan, Schedule};
pub(crate) use super::pool::Hooks;
use super::pool::{JobKind, PartitionedArrays, Pass, Pool};
use super::room::{Headroom, RoomGuard};
use super::trial;
use crate::base::error::{Result, panic_message};
use crate::platform::{self, now_ns};
use crossbeam_channel::{Receiver, Sender};
use kept::{ArraysKey, Kept};
use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Warm-up on a cell's first visit: at least this long and this many rounds.
const WARMUP_NS: u64 = 100_000_000;
const WARMUP_ROUNDS: u32 = 3;
/// At most this many rounds to find the passes per round.
const CALIBRATION_ROUNDS: u32 = 8;
/// Warm-up on a revisit (pages are in place, passes calibrated): one round.
const REVISIT_WARMUP_ROUNDS: u32 = 1;
/// A cell's first figure: the fewest timed rounds whose median has a scatter beside it (one
/// round's figure has a cv of 0 and no interval). A service's first visit of each cell runs at
/// least this many and does not idle after it, so a fresh service has a figure for every cell
/// after one quick pass over the grid, then settles to its duty.
pub const FIRST_FIGURE_ROUNDS: u32 = 3;
/// A service's first retry of a failed cell comes this long after it failed; each further
/// one waits twice as long as the one before, up to `RETRY_MOST_FIRSTS` times the first wait
/// (10 minutes). A test hook shortens the first (`Hooks::retry_first`).
const RETRY_FIRST: Duration = Duration::from_secs(30);
const RETRY_MOST_FIRSTS: u32 = 20;

/// Runs the engine to its end and always sends `Event::Finished` last. Once `stop` is set it
/// ends at the next chunk of an untimed job or the end of the round under way.
pub fn run(
    plan: Plan,
    events: Sender<Event>,
    commands: Receiver<Command>,
    hooks: Hooks,
    stop: Arc<AtomicBool>,
) {
    let tx = events.clone();
    let result = catch_unwind(AssertUnwindSafe(move || {
        Coordinator::new(plan, events, commands, hooks, stop)?.run()
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let _ = tx.send(Event::Error(e.to_string()));
        }
        Err(p) => {
            let msg = panic_message(p.as_ref());
            let _ = tx.send(Event::Error(format!("the engine panicked: {msg}")));
        }
    }
    let _ = tx.send(Event::Finished);
}

/// What the schedule does next.
#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Once { order: Vec<CellId>, next: usize },
    Sweep { next: usize },
    Focus(CellId),
}

/// How a visit ended.
#[derive(Debug, PartialEq)]
enum Flow {
    /// All its rounds ran, or a command changed the schedule: go on.
    Next,
    Stop,
}

struct Coordinator {
    plan: Plan,
    pool: Pool,
    events: Sender<Event>,
    commands: Receiver<Command>,
    mode: Mode,
    /// Timed rounds per visit.
    rounds: u32,
    duty: u8,
    /// Arrays per working set, kept across visits in sweep mode while memory allows.
    buffers: HashMap<ArraysKey, Kept>,
    keep_buffers: bool,
    /// Calibrated passes per (op, set, threads).
    passes: HashMap<(Op, usize, usize), u32>,
    /// Passes of the cell's op over the arrays since their `a` was last reset: what the
    /// checksum's reference depends on for ops that read what they write.
    passes_run: u64,
    /// Each op's loop and layout on each working set, by the set's size (so a grid change
    /// keeps them): chosen once per run.
    choices: HashMap<(Op, ArraySize), Choice>,
    /// The current grid's (op, set)s whose choice has been sent.
    announced: HashSet<(Op, usize)>,
    /// The cell whose workers are still hot from the previous visit.
    hot: Option<CellId>,
    /// The op the live monitor shows: a sweep visits only its cells (None: every op's, as a
    /// service and a headless sweep do).
    shown: Option<Op>,
    pending_grid: Option<Grid>,
    visits: u64,
    stop: Arc<AtomicBool>,
    /// Cells whose arrays could not be mapped: skipped until the grid changes, the cell is
    /// focused or `R` pressed, or (a service) its retry is due.
    failed: HashSet<CellId>,
    /// A service's failed cells: when each is tried again.
    retry_due: HashMap<CellId, Instant>,
    /// How often each cell was tried again since it last ran (its backoff doubles with each).
    tries: HashMap<CellId, u32>,
    /// A service's first wait before a retry (`RETRY_FIRST` but in tests).
    retry_first: Duration,
    /// The memory cgroup each first touch is checked against, step by step.
    room: RoomGuard,
    /// Sets of arrays mapped for cells (the trial's own not counted).
    mapped: u64,
    /// A service (`Schedule::Service`): the longest one cycle over the grid may take. Its
    /// arrays are let go after each visit, and it idles once per visit, not per round.
    service_cycle: Option<Duration>,
}

impl Coordinator {
    fn new(
        plan: Plan,
        events: Sender<Event>,
        commands: Receiver<Command>,
        hooks: Hooks,
        stop: Arc<AtomicBool>,
    ) -> Result<Coordinator> {
        let pool = Pool::new(
            worker_cpus(&plan, plan.grid.max_threads()),
            plan.counters,
            stop.clone(),
        )?;
        if let Some(w) = hooks.panic_worker {
            pool.inject_panic(w);
        }
        if let Some(w) = hooks.yield_worker {
            pool.inject_yield(w);
        }
        // The live monitor shows one op at a time, the first until `o` picks another.
        let shown = matches!(plan.schedule, Schedule::Sweep { .. })
            .then(|| plan.grid.ops.first().copied())
            .flatten();
        let mut service_cycle = None;
        let (mode, rounds, keep) = match plan.schedule {
            Schedule::Once { rounds } => (
                Mode::Once {
                    order: plan.grid.sweep_once(),
                    next: 0,
                },
                rounds,
                false,
            ),
            Schedule::Sweep { rounds_per_visit } => {
                (Mode::Sweep { next: 0 }, rounds_per_visit, true)
            }
            Schedule::Service {
                rounds_per_visit,
                cycle_s,
            } => {
                service_cycle = Some(Duration::from_secs(cycle_s.max(1).into()));
                (Mode::Sweep { next: 0 }, rounds_per_visit, false)
            }
        };
        Ok(Coordinator {
            duty: plan.duty,
            plan,
            pool,
            events,
            commands,
            mode,
            rounds: rounds.max(1),
            buffers: HashMap::new(),
            keep_buffers: keep,
            passes: HashMap::new(),
            passes_run: 0,
            choices: HashMap::new(),
            announced: HashSet::new(),
            hot: None,
            shown,
            pending_grid: None,
            visits: 0,
            stop,
            failed: HashSet::new(),
            retry_due: HashMap::new(),
            tries: HashMap::new(),
            retry_first: hooks.retry_first.unwrap_or(RETRY_FIRST),
            // The live cgroup whatever root the machine was read from: the arrays are real.
            room: RoomGuard::find(Path::new("/")),
            mapped: 0,
            service_cycle,
        })
    }

    fn send(&self, ev: Event) {
        let _ = self.events.send(ev);
    }

    /// Whether the owner asked the engine to stop (`Engine::stop`).
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn run(&mut self) -> Result<()> {
        loop {
            let Some(cell) = self.next_cell() else {
                match self.wait_for_a_cell()? {
                    Flow::Next => continue,
                    Flow::Stop => break,
                }
            };
            // A failure inside a visit (a worker died) ends the engine; the cell says why first.
            let flow = self.visit(cell).inspect_err(|e| {
                self.send(Event::CellFailed {
                    cell,
                    reason: e.to_string(),
                })
            })?;
            if let Some(grid) = self.pending_grid.take() {
                self.set_grid(grid)?;
            }
            if flow == Flow::Stop {
                break;
            }
        }
        self.pool.park_all();
        Ok(())
    }

    /// A cell could not run (`reason`): it is skipped from now on, said with
    /// `Event::CellFailed`, and a service sets when to try it again.
    fn fail(&mut self, cell: CellId, reason: String) {
        self.fail_at(cell, reason, Instant::now());
    }

    /// `fail` at `now`: a service's retry is due after `RETRY_FIRST`, twice as long for each
    /// try since the cell last ran, at most `RETRY_MOST_FIRSTS` times the first wait.
    fn fail_at(&mut self, cell: CellId, reason: String, now: Instant) {
        self.failed.insert(cell);
        if self.service_cycle.is_some() {
            let tries = self.tries.get(&cell).copied().unwrap_or(0);
            let wait = self
                .retry_first
                .saturating_mul(2u32.saturating_pow(tries))
                .min(self.retry_first.saturating_mul(RETRY_MOST_FIRSTS));
            self.retry_due.insert(cell, now + wait);
        }
        self.send(Event::CellFailed { cell, reason });
    }

    /// Tries a failed cell again: it is no longer skipped, and `Event::CellRetry` says so.
    /// Whether it had failed.
    fn retry(&mut self, cell: CellId) -> bool {
        if !self.failed.remove(&cell) {
            return false;
        }
        self.retry_due.remove(&cell);
        let tries = self.tries.entry(cell).or_insert(0);
        *tries += 1;
        let tries = *tries;
        self.send(Event::CellRetry { cell, tries });
        true
    }

    /// Tries every failed cell again (`R`), in the grid's order.
    fn retry_all(&mut self) {
        let mut cells: Vec<CellId> = self.failed.iter().copied().collect();
        cells.sort();
        for cell in cells {
            self.retry(cell);
        }
    }

    /// A service tries each failed cell again once its backoff is over (`fail_at`): what
    /// another instance held of the cgroup's memory may be free by then. A run with an end (a
    /// headless sweep) never does, and the live monitor only when asked.
    fn release_due_retries(&mut self, now: Instant) {
        let mut due: Vec<CellId> = (self.retry_due.iter())
            .filter(|&(_, &at)| now >= at)
            .map(|(&cell, _)| cell)
            .collect();
        due.sort();
        for cell in due {
            self.retry(cell);
        }
    }

    /// The next cell to visit, skipping those that failed; None when the schedule is done or
    /// no cell is left that can run.
    fn next_cell(&mut self) -> Option<CellId> {
        self.release_due_retries(Instant::now());
        let cells = self.plan.grid.cells();
        if let Mode::Focus(c) = self.mode
            && self.failed.contains(&c)
        {
            self.mode = Mode::Sweep { next: 0 };
        }
        match &mut self.mode {
            Mode::Once { order, next } => {
                while order.get(*next).is_some_and(|c| self.failed.contains(c)) {
                    *next += 1;
                }
                let c = order.get(*next).copied();
                *next += 1;
                c
            }
            Mode::Sweep { next } => {
                let n = cells.len().max(1);
                for _ in 0..n {
                    let c = cells.get(*next % n).copied();
                    *next = (*next + 1) % n;
                    let shown = |c: CellId| self.shown.is_none_or(|op| c.op == op);
                    if c.is_some_and(|c| !self.failed.contains(&c) && shown(c)) {
                        return c;
                    }
                }
                None
            }
            Mode::Focus(c) => Some(*c),
        }
    }

    fn set_grid(&mut self, grid: Grid) -> Result<()> {
        self.buffers.clear();
        self.failed.clear();
        self.retry_due.clear();
        self.tries.clear();
        self.passes.clear();
        self.announced.clear();
        self.hot = None;
        if grid.max_threads() > self.pool.workers() {
            self.pool.park_all();
            // Replace the pool: the old workers exit when it drops.
            self.pool = Pool::new(
                worker_cpus(&self.plan, grid.max_threads()),
                self.plan.counters,
                self.stop.clone(),
            )?;
        }
        self.plan.grid = grid;
        if let Mode::Focus(c) = self.mode
            && !self.plan.grid.cells().contains(&c)
        {
            self.mode = Mode::Sweep { next: 0 };
        }
        if let Mode::Sweep { next } = &mut self.mode {
            *next = 0;
        }
        Ok(())
    }

    /// One configuration: arrays in place, `a` reset, passes calibrated, warm-up, timed
    /// rounds, and the checksum of `a`. The arrays are kept for the next visit (or evicted
    /// when the next cell needs the memory).
    fn visit(&mut self, cell: CellId) -> Result<Flow> {
        let started = Instant::now();
        let first_visit = !self.passes.contains_key(&(cell.op, cell.set, cell.threads));
        let cpus: Vec<Option<usize>> = (0..self.pool.workers())
            .map(|i| self.plan.cpu_for_set(cell.set, i))
            .collect();
        self.pool.repin(&cpus)?;
        self.settle(cell.op, cell.set)?;
        // A stop during the trial: no arrays, no calibration.
        if self.stopping() {
            return Ok(Flow::Stop);
        }
        let Some(mut kept) = self.arrays_for(cell)? else {
            return Ok(if self.stopping() {
                Flow::Stop
            } else {
                Flow::Next
            });
        };
        // It runs: a later failure starts its backoff afresh.
        self.tries.remove(&cell);
        self.send(Event::ArraysHeld(
            self.kept_bytes() + kept.memory.arrays().bytes(),
        ));
        let flow = self.visit_with(cell, &kept.memory);
        kept.last_use = self.visits;
        if self.service_cycle.is_some() {
            // Unmapped here: a service holds no arrays between visits.
            drop(kept);
        } else {
            self.buffers.insert(self.key_of(cell.set), kept);
        }
        self.send(Event::ArraysHeld(self.kept_bytes()));
        match (flow?, self.service_cycle) {
            (Flow::Next, Some(_)) if first_visit => Ok(Flow::Next),
            (Flow::Next, Some(cycle)) => self.idle_after_visit(cell, started.elapsed(), cycle),
            (flow, _) => Ok(flow),
        }
    }

    /// A service's idle after a visit: `busy` (trial, mapping, first touch, warm-up, rounds
    /// and checksum) is the duty's share, but a cell's slot of the cycle is the most it waits,
    /// so every cell is visited again within `cycle` whatever the duty (as long as no visit
    /// alone outlasts its slot).
    fn idle_after_visit(&mut self, cell: CellId, busy: Duration, cycle: Duration) -> Result<Flow> {
        let duty = u128::from(self.duty.clamp(1, 100));
        if duty >= 100 {
            return Ok(Flow::Next);
        }
        let cells = self.plan.grid.cells().len().max(1) as u32;
        let by_duty = busy.as_nanos() * (100 - duty) / duty;
        let idle = by_duty.min((cycle / cells).saturating_sub(busy).as_nanos());
        // `duty_sleep` idles for `span × (100 − duty) / duty`: the span that gives `idle`.
        let span = (idle * duty / (100 - duty)).min(u64::MAX.into()) as u64;
        let flow = self.duty_sleep(cell.threads, span)?;
        self.pool.park_all();
        Ok(flow.unwrap_or(Flow::Next))
    }

    fn visit_with(&mut self, cell: CellId, memory: &PartitionedArrays) -> Result<Flow> {
        let t = cell.threads;
        let key = (cell.op, cell.set, cell.threads);
        self.pool.activate(t);
        // b is put back too where an op of the grid writes it (a swap), so every op starts
        // from the same values whatever ran on the arrays before.
        let reset = if self.plan.grid.ops.iter().any(|op| op.writes()[1]) {
            JobKind::ResetAB
        } else {
            JobKind::ResetA
        };
        self.pool.run(t, reset, memory, 0, Pass::NONE, |_| {})?;
        self.passes_run = 0;

        let first_visit = !self.passes.contains_key(&key);
        let was_hot = self.hot == Some(cell);
        let passes = match self.passes.get(&key) {
            Some(&p) => p,
            None => {
                let p = self.calibrate(cell, memory)?;
                self.passes.insert(key, p);
                p
            }
        };
        self.send(Event::Visit { cell, passes });

        let warm_start = now_ns();
        let mut warm = 0u32;
        loop {
            let done = if first_visit {
                warm >= WARMUP_ROUNDS && now_ns() - warm_start >= WARMUP_NS
            } else {
                was_hot || warm >= REVISIT_WARMUP_ROUNDS
            };
            if done {
                break;
            }
            let r = self.round(cell, memory, passes, true)?;
            self.send(Event::Round(Box::new(r)));
            warm += 1;
            if let Some(flow) = self.between_rounds(t)? {
                return self.finish(cell, memory, flow);
            }
        }
        let rounds = if first_visit && self.service_cycle.is_some() {
            self.rounds.max(FIRST_FIGURE_ROUNDS)
        } else {
            self.rounds
        };
        for _ in 0..rounds {
            let r = self.round(cell, memory, passes, false)?;
            let span = r.span_ns;
            self.send(Event::Round(Box::new(r)));
            if let Some(flow) = self.between_rounds(t)? {
                return self.finish(cell, memory, flow);
            }
            // A service idles once, after the visit (`idle_after_visit`).
            if self.service_cycle.is_some() {
                continue;
            }
            if let Some(flow) = self.duty_sleep(t, span)? {
                return self.finish(cell, memory, flow);
            }
        }
        self.finish(cell, memory, Flow::Next)
    }

    /// Passes per round: grown from one until a round lasts `--round-ms` even at the fastest
    /// per-pass time seen, so a round disturbed during calibration cannot make every later
    /// round short. Calibration rounds are sent as warm-up rounds.
    fn calibrate(&mut self, cell: CellId, memory: &PartitionedArrays) -> Result<u32> {
        let target = self.plan.round_ms as f64 * 1e6;
        let mut passes = 1u32;
        let mut best_per_pass = f64::INFINITY;
        for _ in 0..CALIBRATION_ROUNDS {
            if self.stopping() {
                break;
            }
            let r = self.round(cell, memory, passes, true)?;
            best_per_pass = best_per_pass.min(r.span_ns as f64 / passes as f64);
            self.send(Event::Round(Box::new(r)));
            let want = (target / best_per_pass).ceil().clamp(1.0, u32::MAX as f64) as u32;
            if want <= passes {
                break;
            }
            // Grow quickly, but not so far that one short round makes a very long one.
            passes = want.min(passes.saturating_mul(64));
        }
        Ok(passes)
    }

    /// Ends a visit: the sum of `a` against the reference.
    fn finish(&mut self, cell: CellId, memory: &PartitionedArrays, flow: Flow) -> Result<Flow> {
        let t = cell.threads;
        if self.stopping() {
            // Nobody waits for this sum, and it could take a while on a large set.
            self.pool.park_all();
            return Ok(Flow::Stop);
        }
        self.pool.activate(t);
        self.pool
            .run(t, JobKind::SumA, memory, 0, Pass::NONE, |_| {})?;
        let actual = self.pool.sum(t);
        let parts = &memory.layout().parts;
        let expected = expected_sum_of(cell.op, self.passes_run, &parts[..t.min(parts.len())]);
        self.send(Event::Checksum(Checksum {
            cell,
            expected,
            actual,
            ok: actual == expected as f64,
        }));
        // Stay hot only when the next visit is the same cell (focus); park otherwise.
        let next_same = matches!(self.mode, Mode::Focus(c) if c == cell) && flow == Flow::Next;
        if next_same && self.pending_grid.is_none() {
            self.hot = Some(cell);
        } else {
            self.hot = None;
            self.pool.park_all();
        }
        Ok(flow)
    }

    /// One round on the cell's threads; the record of its stamps.
    fn round(
        &mut self,
        cell: CellId,
        memory: &PartitionedArrays,
        passes: u32,
        warmup: bool,
    ) -> Result<RoundRecord> {
        let t = cell.threads;
        let pass = self.pass_for(cell);
        self.pool
            .run(t, JobKind::Round, memory, passes, pass, |_| {})?;
        self.passes_run += u64::from(passes);
        let timings = self.pool.timings(t, memory, passes, cell.op);
        Ok(RoundRecord::from_threads(cell, warmup, passes, timings))
    }

    /// The pass function for a cell: the loop chosen for its op on its working set, with
    /// non-temporal stores fenced once a round.
    fn pass_for(&self, cell: CellId) -> Pass {
        let variant = self.pick_for(cell.op, cell.set).variant;
        Pass {
            op: cell.op,
            function: variant.pass,
            fence: variant.stores == Stores::Nt,
        }
    }

    /// Settles `op`'s loop and page layout on set `set` on its first visit in the run (an
    /// earlier run's choice when the plan holds one, else a trial when there is a choice;
    /// never inside a cell's rounds) and tells the watcher once per grid.
    fn settle(&mut self, op: Op, set: usize) -> Result<()> {
        let ws = self.plan.grid.sets[set].clone();
        // An earlier run's choice (`--choices-from`) stands in for the trial.
        if !self.choices.contains_key(&(op, ws.size))
            && let Some(choice) = reused(&self.plan, op, set)
        {
            self.choices.insert((op, ws.size), choice);
        }
        if !self.choices.contains_key(&(op, ws.size)) {
            let max = self.plan.grid.max_threads();
            self.make_room(3 * ws.layout(max).len as u64 * 8);
            let room = self.plan.memory_budget.saturating_sub(self.kept_bytes());
            self.hot = None;
            let stop = self.stop.clone();
            let events = self.events.clone();
            let (choice, arrays) = trial::choose(
                &mut self.pool,
                &self.plan,
                (op, set),
                &ws,
                Headroom {
                    budget_left: room,
                    guard: &self.room,
                },
                || stop.load(Ordering::Relaxed),
                |p| {
                    let _ = events.send(Event::Trial(p));
                },
            )?;
            self.choices.insert((op, ws.size), choice);
            // The trial's arrays become the set's (under first touch: a binding is made when
            // arrays are mapped), so the first visit does not map and touch a second copy.
            if let Some(memory) = arrays
                && self.plan.policy_for(set) == MemPolicy::FirstTouch
            {
                let key = self.key_of(set);
                self.buffers.insert(key, Kept::touched(memory, self.visits));
            }
        }
        if self.announced.insert((op, set)) {
            let choice = Choice {
                set,
                ..self.choices[&(op, ws.size)].clone()
            };
            self.send(Event::Choice(Box::new(choice)));
        }
        Ok(())
    }

    /// The loop and layout `op` runs with on set `set`: its choice, once settled.
    fn pick_for(&self, op: Op, set: usize) -> Pick {
        let ws = &self.plan.grid.sets[set];
        match self.choices.get(&(op, ws.size)) {
            Some(c) => c.kept,
            // Not reached: `visit` settles the set first. The default candidate.
            None => {
                candidates(
                    op,
                    self.plan.kernel,
                    self.plan.loops,
                    self.plan.huge_pages,
                    ws.residence(),
                    platform::HUGE_PAGES_NOTE.is_none(),
                )
                .0[0]
            }
        }
    }
}

impl Plan {
    /// About how long a headless sweep (`Schedule::Once`) of this plan takes, for a run to say
    /// before it starts: per cell (ops × sets × thread counts, and the rerun) its warm-up (at
    /// least [`WARMUP_NS`] and [`WARMUP_ROUNDS`] rounds), about two rounds of calibration and
    /// its timed rounds, each round `round_ms`. An estimate, and a low one: a trial, a first
    /// touch of a large set and rounds longer than `round_ms` (a DRAM round is at least one
    /// whole pass) come on top. None for a schedule that does not end.
    pub fn once_estimate(&self) -> Option<Duration> {
        let Schedule::Once { rounds } = self.schedule else {
            return None;
        };
        let round = Duration::from_millis(self.round_ms.max(1).into());
        let warmup = Duration::from_nanos(WARMUP_NS).max(round * WARMUP_ROUNDS);
        let per_cell = warmup + round * (rounds.max(1) + 2);
        Some(per_cell * self.grid.sweep_once().len() as u32)
    }
}

/// The CPU for each worker of a pool of `n`.
fn worker_cpus(plan: &Plan, n: usize) -> Vec<Option<usize>> {
    (0..n.max(1)).map(|i| plan.cpu_for(i)).collect()
}
