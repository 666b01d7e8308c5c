//! The binary run as a process a test watches: its stderr read line by line on a thread, so a
//! test can wait for a line, signal the process while it runs, and read what it printed. Every
//! wait is bounded; a process still running when its `Running` is dropped gets SIGTERM, then
//! SIGKILL after `PATIENCE`.

use super::binary::BIN;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a test waits for a line, a state or an end before it fails: generous, the machine
/// is shared.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// The binary started with stderr read line by line on a thread.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Running {
    pub fn start(args: &[&str]) -> Running {
        let mut command = Command::new(BIN);
        command.args(args);
        Running::spawn(command)
    }

    /// Starts `command` with stdout and stderr piped.
    pub fn spawn(mut command: Command) -> Running {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start stream-top");
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Running { child, lines }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a stderr line that `pred` accepts; the lines read until then.
    pub fn wait_for_line(&self, what: &str, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = pred(&line);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(e) => panic!("no {what} ({e}); stderr so far:\n{}", seen.join("\n")),
            }
        }
    }

    /// The stderr lines come since they were last read.
    pub fn lines_so_far(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.pid().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success(), "kill -{sig}");
    }

    /// Its exit status, once it has ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The process's state letter from /proc (R, S, T for stopped…); None once it has ended.
    pub fn state(&self) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).ok()?;
        let state = stat.rsplit(')').next()?.trim_start().chars().next()?;
        (state != 'Z').then_some(state)
    }

    /// Polls until the state is `want` (or, for `None`, until it has ended).
    pub fn wait_state(&self, want: impl Fn(Option<char>) -> bool, what: &str) {
        let start = Instant::now();
        while !want(self.state()) {
            assert!(
                start.elapsed() < PATIENCE,
                "{what}: state {:?}",
                self.state()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the end (at most `PATIENCE`, then kills it and fails): the exit code (None
    /// for a signal), stdout, and the rest of stderr.
    pub fn finish(mut self) -> (Option<i32>, String, String) {
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let code = wait_bounded(&mut self.child);
        let rest: Vec<String> = self.lines.iter().collect();
        (code, out, rest.join("\n"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.pid().to_string()])
                .status();
            wait_bounded(&mut self.child);
        }
    }
}

/// Waits for a child at most `PATIENCE`, then kills it; its exit code.
pub fn wait_bounded(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pid {} did not end within {PATIENCE:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
