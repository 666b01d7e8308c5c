//! The measurement engine: a persistent pool of pinned workers that runs STREAM triad rounds
//! over a grid of thread counts × working sets and sends one record per round.

#[allow(unsafe_code)]
pub mod buffers;
mod choice;
mod coordinator;
pub mod events;
#[allow(unsafe_code)]
pub mod kernel;
#[allow(unsafe_code)]
pub mod latency;
pub mod matrix;
mod placement;
pub mod plan;
#[allow(unsafe_code)]
pub mod pool;
mod room;
pub mod sweep;
mod trial;
mod trial_progress;

pub use coordinator::FIRST_FIGURE_ROUNDS;

use crate::base::error::{Error, Result};
use crossbeam_channel::{Receiver, Sender};
use events::{Command, Event};
use plan::Plan;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running engine: send it commands; its events come on the receiver `start` gave.
pub struct Engine {
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    /// Set on stop: the first touch and the other untimed jobs end at their next chunk, and no
    /// round starts after the one under way.
    stop: Arc<AtomicBool>,
}

impl Engine {
    /// Starts the workers and the schedule. Events (rounds, checksums, progress, errors) arrive
    /// on the returned receiver; the last one is always `Event::Finished`.
    ///
    /// In a build with the `test-hooks` feature (the tests' build, never a release), the
    /// environment variable `STREAM_TOP_PANIC_WORKER=N` makes worker N panic in its first
    /// round: a test hook for the error path; `STREAM_TOP_YIELD_WORKER=N` makes worker N yield
    /// its CPU inside every round's span: one for the preemption path;
    /// `STREAM_TOP_RETRY_FIRST_MS=N` makes a service try a failed cell again N ms after it
    /// failed rather than 30 s: one for the retry path.
    pub fn start(plan: Plan) -> Result<(Engine, Receiver<Event>)> {
        Engine::start_with_hooks(plan, coordinator::Hooks::from_env())
    }

    /// `start`, with worker `panic_worker` made to panic in its first round: the test hook
    /// without the environment, for tests that share a process.
    #[doc(hidden)]
    #[cfg(feature = "test-hooks")]
    pub fn start_with_panic(
        plan: Plan,
        panic_worker: Option<usize>,
    ) -> Result<(Engine, Receiver<Event>)> {
        let hooks = coordinator::Hooks {
            panic_worker,
            ..coordinator::Hooks::default()
        };
        Engine::start_with_hooks(plan, hooks)
    }

    fn start_with_hooks(
        plan: Plan,
        hooks: coordinator::Hooks,
    ) -> Result<(Engine, Receiver<Event>)> {
        plan.validate()?;
        let (event_tx, event_rx) = crossbeam_channel::unbounded();
        let (command_tx, command_rx) = crossbeam_channel::unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("stream-top-engine".into())
            .spawn(move || coordinator::run(plan, event_tx, command_rx, hooks, flag))
            .map_err(|e| Error::machine(format!("cannot start the engine thread: {e}")))?;
        Ok((
            Engine {
                commands: command_tx,
                thread: Some(thread),
                stop,
            },
            event_rx,
        ))
    }

    /// Sends a command; it takes effect between rounds. Ignored once the engine has ended.
    pub fn send(&self, cmd: Command) {
        let _ = self.commands.send(cmd);
    }

    /// Stops the engine and waits for its threads (within about one round, or one chunk of a
    /// first touch).
    pub fn stop(mut self) {
        self.shutdown();
    }

    /// Stops the engine and waits for it at most `limit`; says whether it ended. One that has
    /// not (a long round on a large set) is left to the end of the process.
    pub fn stop_within(mut self, limit: Duration) -> bool {
        self.ask_to_stop();
        let until = Instant::now() + limit;
        let ended = loop {
            match &self.thread {
                None => break true,
                Some(t) if t.is_finished() => break true,
                Some(_) if Instant::now() >= until => break false,
                Some(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        };
        if ended {
            self.shutdown();
        } else {
            // Detached: no join in Drop.
            self.thread.take();
        }
        ended
    }

    fn ask_to_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.commands.send(Command::Stop);
    }

    fn shutdown(&mut self) {
        self.ask_to_stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}
