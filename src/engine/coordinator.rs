//! The engine thread: worker 0 of the pool and the one that walks the schedule, handles
//! commands between rounds and sends one record per round after the end barrier.

use super::buffers::{Arrays, expected_sum};
use super::choice::candidates;
use super::events::{Checksum, Choice, Command, Event, Pick, RoundRecord, Stage};
use super::kernel::Stores;
use super::placement::sample_placement;
use super::plan::{ArraySize, CellId, Grid, Layout, MemPolicy, Plan, Schedule};
use super::pool::{JobKind, PartitionedArrays, Pass, Pool};
use super::trial;
use crate::base::error::{Result, panic_message};
use crate::platform::{self, now_ns};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
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
/// The longest a gap between rounds waits for `GapDone`.
const GAP_LIMIT: Duration = Duration::from_millis(50);
/// Progress events while first touching, at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Runs the engine to its end and always sends `Event::Finished` last. Once `stop` is set it
/// ends at the next chunk of an untimed job or the end of the round under way.
pub fn run(
    plan: Plan,
    events: Sender<Event>,
    commands: Receiver<Command>,
    panic_worker: Option<usize>,
    stop: Arc<AtomicBool>,
) {
    let tx = events.clone();
    let result = catch_unwind(AssertUnwindSafe(move || {
        Coordinator::new(plan, events, commands, panic_worker, stop)?.run()
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

/// What makes two working sets' arrays the same: their size and where their pages come from.
/// A working set has one set of arrays whatever its thread count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ArraysKey {
    size: ArraySize,
    policy: MemPolicy,
}

/// A working set's arrays, sized for its largest thread count and partitioned for the cell
/// that uses them now.
struct Kept {
    memory: PartitionedArrays,
    /// Elements of each array written by a first touch, from the start: all of a split set's
    /// at its first cell; a per-thread set's grow with its thread count.
    touched: usize,
    /// Under first touch, each partition the pages were put in place for and its node: a new
    /// partition whose pages are not all where its thread is gets them moved.
    placed: Vec<(Range<usize>, Option<usize>)>,
    /// Cells whose `Event::Allocated` has been sent for these arrays.
    announced: HashSet<CellId>,
    /// The cell the pages were last sampled for: a visit of the same cell again (focus) has
    /// them where they were.
    sampled_for: Option<CellId>,
    /// When they were last used (for eviction).
    last_use: u64,
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
    /// Calibrated passes per (set, threads).
    passes: HashMap<(usize, usize), u32>,
    /// Each working set's loop and layout, by its size (so a grid change keeps them): chosen
    /// once per run.
    choices: HashMap<ArraySize, Choice>,
    /// The current grid's sets whose choice has been sent.
    announced: HashSet<usize>,
    /// The cell whose workers are still hot from the previous visit.
    hot: Option<CellId>,
    pending_grid: Option<Grid>,
    visits: u64,
    stop: Arc<AtomicBool>,
    /// Cells whose arrays could not be mapped: skipped until the grid changes.
    failed: HashSet<CellId>,
}

impl Coordinator {
    fn new(
        plan: Plan,
        events: Sender<Event>,
        commands: Receiver<Command>,
        panic_worker: Option<usize>,
        stop: Arc<AtomicBool>,
    ) -> Result<Coordinator> {
        let pool = Pool::new(
            worker_cpus(&plan, plan.grid.max_threads()),
            plan.counters,
            stop.clone(),
        )?;
        if let Some(w) = panic_worker {
            pool.inject_panic(w);
        }
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
            choices: HashMap::new(),
            announced: HashSet::new(),
            hot: None,
            pending_grid: None,
            visits: 0,
            stop,
            failed: HashSet::new(),
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
        while let Some(cell) = self.next_cell() {
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

    /// The next cell to visit, skipping those that failed; None when the schedule is done or
    /// no cell is left that can run.
    fn next_cell(&mut self) -> Option<CellId> {
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
                    if c.is_some_and(|c| !self.failed.contains(&c)) {
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

    /// The key of working set `set`'s arrays.
    fn key_of(&self, set: usize) -> ArraysKey {
        ArraysKey {
            size: self.plan.grid.sets[set].size,
            policy: self.plan.policy_for(set),
        }
    }

    /// Bytes of the kept arrays.
    fn kept_bytes(&self) -> u64 {
        self.buffers
            .values()
            .map(|b| b.memory.arrays().bytes())
            .sum()
    }

    /// Evicts the least recently used arrays until `need` more bytes fit the budget.
    fn make_room(&mut self, need: u64) {
        while !self.buffers.is_empty() && self.kept_bytes() + need > self.plan.memory_budget {
            let oldest = self
                .buffers
                .iter()
                .min_by_key(|(_, b)| b.last_use)
                .map(|(k, _)| k.clone())
                .expect("non-empty");
            self.buffers.remove(&oldest);
        }
    }

    /// The cell's working set's arrays, partitioned for its threads: taken out of the kept
    /// ones (the visit puts them back) or newly mapped; what the partition has not yet touched
    /// is first touched by its threads, and on NUMA pages not on their new thread's node are
    /// moved there. None when they cannot be mapped (said with `Event::CellFailed`; the cell
    /// is skipped) or when a stop cut the first touch short (the arrays are dropped).
    fn arrays_for(&mut self, cell: CellId) -> Result<Option<Kept>> {
        let key = self.key_of(cell.set);
        self.visits += 1;
        if !self.keep_buffers {
            self.buffers.retain(|k, _| *k == key);
        }
        let mut kept = match self.buffers.remove(&key) {
            Some(k) => k,
            None => match self.map_arrays(cell, &key)? {
                Some(k) => k,
                None => return Ok(None),
            },
        };
        let layout = self.plan.grid.sets[cell.set].layout(cell.threads);
        kept.memory.set_layout(layout)?;
        self.pool.activate(cell.threads);
        if kept.touched < kept.memory.layout().len {
            if !self.first_touch(cell, &mut kept)? {
                return Ok(None);
            }
        } else {
            self.move_to_threads(cell, &mut kept)?;
        }
        if self.stopping() {
            return Ok(None);
        }
        if kept.sampled_for.replace(cell) != Some(cell) {
            let plan = &self.plan;
            let layout = kept.memory.layout();
            let parts = &layout.parts[..cell.threads.min(layout.parts.len())];
            let pages = sample_placement(kept.memory.arrays(), parts, |i| {
                plan.intended_node(cell.set, i)
            });
            self.send(Event::Placement { cell, pages });
        }
        if kept.announced.insert(cell) {
            let bytes = 3 * kept.memory.layout().len as u64 * 8;
            self.send(Event::Allocated {
                cell,
                bytes,
                huge_bytes: kept.memory.arrays().huge_bytes().map(|h| h.min(bytes)),
            });
        }
        Ok(Some(kept))
    }

    /// Maps a working set's arrays for its largest thread count, bound as its policy says;
    /// nothing is touched yet.
    fn map_arrays(&mut self, cell: CellId, key: &ArraysKey) -> Result<Option<Kept>> {
        let len = self.plan.grid.sets[cell.set]
            .layout(self.plan.grid.max_threads())
            .len;
        let need = 3 * len as u64 * 8;
        self.make_room(need);
        self.send(Event::Progress {
            cell,
            stage: Stage::Allocating,
            done_bytes: 0,
            total_bytes: need,
        });
        // The address space may be limited (`ulimit -v`) rather than the memory: kept arrays
        // are let go for a second try before the cell is given up.
        let huge_pages = self.pick_for(cell.set).huge_pages;
        let map = |huge| {
            let arrays = Arrays::map(len, huge)?;
            arrays.bind(&key.policy)?;
            Ok::<_, crate::base::error::Error>(arrays)
        };
        let mapped = map(huge_pages).or_else(|e| {
            if self.buffers.is_empty() {
                Err(e)
            } else {
                self.buffers.clear();
                map(huge_pages)
            }
        });
        let arrays = match mapped {
            Ok(arrays) => arrays,
            Err(e) => {
                self.failed.insert(cell);
                self.send(Event::CellFailed {
                    cell,
                    reason: e.to_string(),
                });
                return Ok(None);
            }
        };
        let layout = Layout {
            len: 0,
            parts: Vec::new(),
        };
        Ok(Some(Kept {
            memory: PartitionedArrays::new(arrays, layout)?,
            touched: 0,
            placed: Vec::new(),
            announced: HashSet::new(),
            sampled_for: None,
            last_use: self.visits,
        }))
    }

    /// First touch, by the cell's threads, of what its partition holds beyond what was touched
    /// before. False when a stop cut it short.
    fn first_touch(&mut self, cell: CellId, kept: &mut Kept) -> Result<bool> {
        let layout = kept.memory.layout().clone();
        let from = kept.touched;
        let need = 3 * (layout.len - from) as u64 * 8;
        // Each thread writes the part of its partition not yet written.
        let fresh = Layout {
            len: layout.len,
            parts: layout
                .parts
                .iter()
                .map(|p| p.start.max(from).min(p.end)..p.end)
                .collect(),
        };
        kept.memory.set_layout(fresh.clone())?;
        let events = self.events.clone();
        let mut last = Instant::now();
        let r = self.pool.run(
            cell.threads,
            JobKind::Touch,
            &kept.memory,
            0,
            Pass::NONE,
            |elems| {
                // The full count is sent once, after the job.
                if last.elapsed() >= PROGRESS_EVERY && elems * 24 < need {
                    last = Instant::now();
                    let _ = events.send(Event::Progress {
                        cell,
                        stage: Stage::FirstTouch,
                        done_bytes: elems * 24,
                        total_bytes: need,
                    });
                }
            },
        );
        kept.memory.set_layout(layout)?;
        r?;
        if self.stopping() {
            return Ok(false);
        }
        kept.touched = kept.memory.layout().len;
        let nodes = self.first_touch_nodes(cell);
        settle_placed(&mut kept.placed, &fresh.parts, &nodes);
        self.send(Event::Progress {
            cell,
            stage: Stage::FirstTouch,
            done_bytes: need,
            total_bytes: need,
        });
        Ok(true)
    }

    /// The node each of the cell's threads puts pages on by first touch (its CPU's), under a
    /// first-touch policy; none under a binding.
    fn first_touch_nodes(&self, cell: CellId) -> Vec<Option<usize>> {
        let first_touch = self.plan.policy_for(cell.set) == MemPolicy::FirstTouch;
        (0..cell.threads)
            .map(|i| {
                first_touch
                    .then(|| self.plan.node_for(cell.set, i))
                    .flatten()
            })
            .collect()
    }

    /// On a NUMA machine under first touch: moves the pages of each partition that are not
    /// known to be on its thread's node there, each thread its own. Nothing to do on one node.
    fn move_to_threads(&mut self, cell: CellId, kept: &mut Kept) -> Result<()> {
        if self.plan.numa.cpu_nodes() < 2 {
            return Ok(());
        }
        let nodes = self.first_touch_nodes(cell);
        let parts = kept.memory.layout().parts.clone();
        if !needs_moving(&kept.placed, &parts, &nodes) {
            return Ok(());
        }
        let total = 3 * kept.memory.layout().len as u64 * 8;
        self.send(Event::Progress {
            cell,
            stage: Stage::Moving,
            done_bytes: 0,
            total_bytes: total,
        });
        self.pool.place(cell.threads, &kept.memory, &nodes)?;
        settle_placed(&mut kept.placed, &parts, &nodes);
        self.send(Event::Progress {
            cell,
            stage: Stage::Moving,
            done_bytes: total,
            total_bytes: total,
        });
        Ok(())
    }

    /// One configuration: arrays in place, `a` reset, passes calibrated, warm-up, timed
    /// rounds, and the checksum of `a`. The arrays are kept for the next visit (or evicted
    /// when the next cell needs the memory).
    fn visit(&mut self, cell: CellId) -> Result<Flow> {
        let cpus: Vec<Option<usize>> = (0..self.pool.workers())
            .map(|i| self.plan.cpu_for_set(cell.set, i))
            .collect();
        self.pool.repin(&cpus)?;
        self.settle(cell.set)?;
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
        let flow = self.visit_with(cell, &kept.memory);
        kept.last_use = self.visits;
        self.buffers.insert(self.key_of(cell.set), kept);
        flow
    }

    fn visit_with(&mut self, cell: CellId, memory: &PartitionedArrays) -> Result<Flow> {
        let t = cell.threads;
        let key = (cell.set, cell.threads);
        self.pool.activate(t);
        self.pool
            .run(t, JobKind::ResetA, memory, 0, Pass::NONE, |_| {})?;

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
        for _ in 0..self.rounds {
            let r = self.round(cell, memory, passes, false)?;
            let span = r.span_ns;
            self.send(Event::Round(Box::new(r)));
            if let Some(flow) = self.between_rounds(t)? {
                return self.finish(cell, memory, flow);
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
        let expected = expected_sum(memory.layout().len);
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
        let timings = self.pool.timings(t, memory, passes);
        Ok(RoundRecord::from_threads(cell, warmup, passes, timings))
    }

    /// The pass function for a cell: its working set's chosen loop, with non-temporal stores
    /// fenced once a round.
    fn pass_for(&self, cell: CellId) -> Pass {
        let variant = self.pick_for(cell.set).variant;
        Pass {
            triad: variant.pass,
            fence: variant.stores == Stores::Nt,
        }
    }

    /// Settles set `set`'s loop and page layout on its first visit in the run (a trial, when
    /// there is a choice; never inside a cell's rounds) and tells the watcher once per grid.
    fn settle(&mut self, set: usize) -> Result<()> {
        let ws = self.plan.grid.sets[set].clone();
        if !self.choices.contains_key(&ws.size) {
            let max = self.plan.grid.max_threads();
            self.make_room(3 * ws.layout(max).len as u64 * 8);
            let room = self.plan.memory_budget.saturating_sub(self.kept_bytes());
            self.hot = None;
            let stop = self.stop.clone();
            let choice = trial::choose(
                &mut self.pool,
                &self.plan,
                set,
                &ws,
                max,
                |bytes| bytes <= room,
                || stop.load(Ordering::Relaxed),
            )?;
            self.choices.insert(ws.size, choice);
        }
        if self.announced.insert(set) {
            let choice = Choice {
                set,
                ..self.choices[&ws.size].clone()
            };
            self.send(Event::Choice(Box::new(choice)));
        }
        Ok(())
    }

    /// The loop and layout set `set` runs with: its choice, once settled.
    fn pick_for(&self, set: usize) -> Pick {
        let ws = &self.plan.grid.sets[set];
        match self.choices.get(&ws.size) {
            Some(c) => c.kept,
            // Not reached: `visit` settles the set first. The default candidate.
            None => {
                candidates(
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

    /// Handles the commands that came during the round. Some(flow) ends the visit.
    fn between_rounds(&mut self, threads: usize) -> Result<Option<Flow>> {
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

    /// With a duty cycle under 100 %, parks the workers for the rest of the cycle.
    fn duty_sleep(&mut self, threads: usize, span_ns: u64) -> Result<Option<Flow>> {
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
}

/// Whether some partition's pages are not all known to be on its thread's node: no placed
/// partition with that node covers it.
fn needs_moving(
    placed: &[(Range<usize>, Option<usize>)],
    parts: &[Range<usize>],
    nodes: &[Option<usize>],
) -> bool {
    parts.iter().zip(nodes).any(|(part, node)| {
        node.is_some()
            && !part.is_empty()
            && !placed
                .iter()
                .any(|(r, n)| n == node && r.start <= part.start && part.end <= r.end)
    })
}

/// Records that `parts` now have their pages on `nodes`: what they overlap is forgotten.
fn settle_placed(
    placed: &mut Vec<(Range<usize>, Option<usize>)>,
    parts: &[Range<usize>],
    nodes: &[Option<usize>],
) {
    let parts: Vec<(Range<usize>, Option<usize>)> = parts
        .iter()
        .cloned()
        .zip(nodes.iter().copied())
        .filter(|(p, _)| !p.is_empty())
        .collect();
    placed.retain(|(r, _)| {
        !parts
            .iter()
            .any(|(p, _)| p.start < r.end && r.start < p.end)
    });
    placed.extend(parts);
}

/// The CPU for each worker of a pool of `n`.
fn worker_cpus(plan: &Plan, n: usize) -> Vec<Option<usize>> {
    (0..n.max(1)).map(|i| plan.cpu_for(i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // One partition is one range.
    fn partitions_whose_pages_are_on_their_threads_nodes_need_no_move() {
        // A split set first touched by two threads on nodes 0 and 1.
        let mut placed = Vec::new();
        settle_placed(&mut placed, &[0..500, 500..1000], &[Some(0), Some(1)]);
        // Again at two threads: in place. At one thread on node 0: half of it is on node 1.
        assert!(!needs_moving(
            &placed,
            &[0..500, 500..1000],
            &[Some(0), Some(1)]
        ));
        assert!(needs_moving(&placed, &[0..1000], &[Some(0)]));
        // A part inside a placed one on the same node needs nothing; on another node it does.
        assert!(!needs_moving(&placed, &[0..250], &[Some(0)]));
        assert!(needs_moving(&placed, &[0..250], &[Some(1)]));
        // Threads with no known node (not pinned) never ask for a move.
        assert!(!needs_moving(&placed, &[0..1000], &[None]));
        // Moved to one thread on node 0: what it overlapped is forgotten.
        settle_placed(&mut placed, &[0..1000], &[Some(0)]);
        assert_eq!(placed, vec![(0..1000, Some(0))]);
        // A per-thread set grown to a third slice keeps the first two.
        let mut placed = vec![(0..100, Some(0)), (100..200, Some(1))];
        settle_placed(
            &mut placed,
            &[0..0, 100..100, 200..300],
            &[Some(0), Some(1), Some(0)],
        );
        assert_eq!(placed.len(), 3);
        assert!(!needs_moving(
            &placed,
            &[0..100, 100..200, 200..300],
            &[Some(0), Some(1), Some(0)]
        ));
    }
}
