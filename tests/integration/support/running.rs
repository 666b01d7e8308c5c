//! The binary run as a process a test watches: its stderr read line by line on a thread, so a
//! test can wait for a line, signal the process while it runs, and read what it printed.

use std::process::Command;

/// The binary started with stderr read line by line on a thread, so a test can wait for a
/// line and signal the process while it runs.
pub struct Running {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

/// How long a test waits for a line or a state before it fails: generous, the machine is shared.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

impl Running {
    pub fn start(args: &[&str]) -> Running {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stream-top"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start stream-top");
        let err = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Running { child, lines }
    }

    /// Waits for a stderr line that `pred` accepts; the lines read until then.
    pub fn wait_for_line(&self, what: &str, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(PATIENCE) {
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

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success(), "kill -{sig}");
    }

    /// The process's state letter from /proc (R, S, T for stopped…); None once it has ended.
    pub fn state(&self) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let state = stat.rsplit(')').next()?.trim_start().chars().next()?;
        (state != 'Z').then_some(state)
    }

    /// Polls until the state is `want` (or, for `None`, until it has ended).
    pub fn wait_state(&self, want: impl Fn(Option<char>) -> bool, what: &str) {
        let start = std::time::Instant::now();
        while !want(self.state()) {
            assert!(
                start.elapsed() < PATIENCE,
                "{what}: state {:?}",
                self.state()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Waits for the end: the exit code (None for a signal), stdout, and the rest of stderr.
    pub fn finish(mut self) -> (Option<i32>, String, String) {
        use std::io::Read;
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = self.child.wait().unwrap();
        let rest: Vec<String> = self.lines.iter().collect();
        (status.code(), out, rest.join("\n"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
