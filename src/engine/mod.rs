//! The measurement engine: a persistent pool of pinned workers that runs STREAM triad rounds
//! over a grid of thread counts × working sets and sends one record per round.

pub mod events;
pub mod kernel;
pub mod plan;

use crossbeam_channel::{Receiver, Sender};
use events::{Command, Event};
use plan::Plan;
use std::thread::JoinHandle;

/// A running engine: send it commands; its events come on the receiver `start` gave.
pub struct Engine {
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Starts the workers and the schedule. Events (rounds, checksums, progress, errors) arrive
    /// on the returned receiver; the last one is always `Event::Finished`.
    pub fn start(plan: Plan) -> Result<(Engine, Receiver<Event>), String> {
        let _ = plan;
        todo!("engine")
    }

    /// Sends a command; it takes effect between rounds. Ignored once the engine has ended.
    pub fn send(&self, cmd: Command) {
        let _ = self.commands.send(cmd);
    }

    /// Stops the engine and waits for its threads (within about one round).
    pub fn stop(mut self) {
        self.send(Command::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
