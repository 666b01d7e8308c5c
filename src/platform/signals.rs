//! Signals as messages: a thread turns SIGTERM, SIGHUP, SIGINT, SIGTSTP and SIGCONT into
//! numbers on a channel, so the live monitor's event loop and the headless service can select
//! over them beside their other work and end (or stop) in order.

use crate::base::error::{Error, Result};
use crossbeam_channel::Receiver;
use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGTERM, SIGTSTP};
use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;

/// SIGTERM, SIGHUP, SIGINT, SIGTSTP and SIGCONT as messages on a channel.
pub struct Signals {
    handle: signal_hook::iterator::Handle,
    thread: Option<JoinHandle<()>>,
}

impl Signals {
    pub fn start() -> Result<(Signals, Receiver<i32>)> {
        let err = |source: io::Error| Error::Io {
            what: "install signal handlers".into(),
            source,
        };
        // A second SIGTERM or SIGINT ends the process at once, should the orderly exit that
        // the first one started ever hang.
        let seen = Arc::new(AtomicBool::new(false));
        for sig in [SIGTERM, SIGINT] {
            signal_hook::flag::register_conditional_shutdown(sig, 1, seen.clone()).map_err(err)?;
            signal_hook::flag::register(sig, seen.clone()).map_err(err)?;
        }
        let mut signals =
            signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGTSTP, SIGCONT])
                .map_err(err)?;
        let handle = signals.handle();
        let (tx, rx) = crossbeam_channel::bounded(4);
        let thread = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    if tx.send(sig).is_err() {
                        return;
                    }
                }
            })
            .ok();
        Ok((Signals { handle, thread }, rx))
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The name of a signal `Signals` sends, for a message.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        SIGINT => "SIGINT",
        _ => "a signal",
    }
}
