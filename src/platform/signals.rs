//! Signals as messages: a thread turns SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP and SIGCONT
//! into numbers on a channel, so the live monitor's event loop and headless runs can select
//! over them beside their other work and end (or stop) in order. What a signal means for the
//! exit code and how the process stops like a job are here too, one home for both.

use crate::base::error::{Error, Result};
use crossbeam_channel::Receiver;
use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a stop (Ctrl-Z, SIGTSTP) waits for the workers to park before it stops the
/// process anyway (a first touch or a long round is under way): a round should not span it.
pub(crate) const PARK_WAIT: Duration = Duration::from_millis(300);

/// How long the orderly exit after a first SIGTERM, SIGINT or SIGQUIT may take before a
/// second one ends the process at once.
const HANG_GRACE: Duration = Duration::from_secs(2);

/// Sets `flag` once `after` has gone by, from a thread of its own.
fn arm_after(after: Duration, flag: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("signals-grace".into())
        .spawn(move || {
            std::thread::sleep(after);
            flag.store(true, Ordering::SeqCst);
        });
}

/// SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP and SIGCONT as messages on a channel.
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
        // A second SIGTERM, SIGINT or SIGQUIT ends the process at once (128 + its number),
        // should the orderly exit that the first one started hang past HANG_GRACE; one sent
        // right after the first (a supervisor's retry) leaves that exit in order.
        let hung = Arc::new(AtomicBool::new(false));
        for sig in [SIGTERM, SIGINT, SIGQUIT] {
            let code = i32::from(exit_code(sig));
            signal_hook::flag::register_conditional_shutdown(sig, code, hung.clone())
                .map_err(err)?;
        }
        let mut signals = signal_hook::iterator::Signals::new([
            SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP, SIGCONT,
        ])
        .map_err(err)?;
        let handle = signals.handle();
        let (tx, rx) = crossbeam_channel::bounded(4);
        let thread = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut unarmed = Some(hung);
                for sig in signals.forever() {
                    if matches!(sig, SIGTERM | SIGINT | SIGQUIT)
                        && let Some(flag) = unarmed.take()
                    {
                        arm_after(HANG_GRACE, flag);
                    }
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

/// What a signal `Signals` sends asks of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asks {
    /// SIGTERM, SIGINT, SIGHUP, SIGQUIT: end in order, with [`exit_code`].
    End(i32),
    /// SIGTSTP (Ctrl-Z): park the workers, then [`stop_process`].
    Stop,
    /// SIGCONT: the process was continued (after our own stop, or someone's SIGSTOP).
    Continued,
}

impl Asks {
    pub fn of(sig: i32) -> Asks {
        match sig {
            SIGTSTP => Asks::Stop,
            SIGCONT => Asks::Continued,
            _ => Asks::End(sig),
        }
    }
}

/// The exit code of a run that a signal ended: 128 + its number, as a shell reports a job
/// the signal ended (SIGHUP 129, SIGINT 130, SIGQUIT 131, SIGTERM 143). A service exits so
/// too, so that its supervisor sees the stop it asked for (systemd, Kubernetes), and the systemd
/// unit in deploy/ counts these as success.
pub fn exit_code(sig: i32) -> u8 {
    128u8.saturating_add(u8::try_from(sig).unwrap_or(u8::MAX))
}

/// Stops the process as SIGTSTP's default action would (the shell sees a stopped job);
/// returns once it is continued (`fg`, SIGCONT).
pub(crate) fn stop_process() -> io::Result<()> {
    signal_hook::low_level::emulate_default_handler(SIGTSTP)
}

/// The name of a signal `Signals` sends, for a message.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        SIGINT => "SIGINT",
        SIGQUIT => "SIGQUIT",
        SIGTSTP => "SIGTSTP",
        SIGCONT => "SIGCONT",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_asks_to_end_stop_or_go_on_and_ends_with_128_plus_its_number() {
        assert_eq!(Asks::of(SIGTSTP), Asks::Stop);
        assert_eq!(Asks::of(SIGCONT), Asks::Continued);
        for (sig, code) in [(SIGHUP, 129), (SIGINT, 130), (SIGQUIT, 131), (SIGTERM, 143)] {
            assert_eq!(Asks::of(sig), Asks::End(sig));
            assert_eq!(exit_code(sig), code);
        }
        assert_eq!(signal_name(SIGQUIT), "SIGQUIT");
    }
}
