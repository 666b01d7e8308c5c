//! The real binary on a real (tmux) terminal: it draws figures, obeys keys, exports, and gives
//! the terminal back on `q`, on SIGTERM and when a worker panics. Skipped, with the reason
//! printed, where tmux is missing (`.ci/run` installs it).
//!
//! Every wait polls the screen until what it expects appears or a generous deadline passes; no
//! fixed sleep is an assertion and no timing is measured.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_stream-top");
/// Small sets and short rounds: the test measures nothing, it only needs figures to appear.
const ARGS: &str = "--sets 16KiB/thread,4MiB --threads 1,2 --round-ms 5 --rounds 5";
/// How long any one expectation may take on a loaded machine.
const DEADLINE: Duration = Duration::from_secs(90);

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A tmux server of our own (its own socket) with one detached session of a fixed size,
/// running a plain shell. Killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(tag: &str) -> Tmux {
        let socket = format!("stream-top-e2e-{tag}-{}", std::process::id());
        let t = Tmux { socket };
        let ok = t
            .cmd()
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "e2e"])
            .args(["-x", "120", "-y", "40"])
            .args(["env", "-i", "PATH=/usr/bin:/bin", "TERM=tmux-256color"])
            .args(["PS1=e2e$ ", "HOME=/tmp", "sh"])
            .status()
            .expect("tmux runs")
            .success();
        assert!(ok, "tmux new-session failed");
        t.wait_for("the shell prompt", |s| s.contains("e2e$"));
        t
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    fn capture(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "e2e"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its styles, as SGR escape sequences.
    fn capture_styled(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-e", "-t", "e2e"])
            .output()
            .expect("tmux capture-pane -e");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn display(&self, format: &str) -> String {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", "e2e", format])
            .output()
            .expect("tmux display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Types text (literally) into the pane.
    fn type_text(&self, text: &str) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", "e2e", "-l", text])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    /// Sends tmux key names (Enter, Space, Escape, j…).
    fn keys(&self, keys: &[&str]) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", "e2e"])
            .args(keys)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    /// Polls the screen until `pred` holds; panics with the last screen after the deadline.
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.capture();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > DEADLINE {
                panic!("waited {DEADLINE:?} for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls a tmux format until it equals `want`.
    fn wait_display(&self, format: &str, want: &str) {
        let start = Instant::now();
        loop {
            let v = self.display(format);
            if v == want {
                return;
            }
            if start.elapsed() > DEADLINE {
                panic!(
                    "{format} is {v}, not {want}; the screen:\n{}",
                    self.capture()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts stream-top in the pane's shell; the shell prints its exit status after it.
    fn run(&self, env: &str, args: &str) {
        // Quoted so that the command line itself never reads `EXIT=`.
        self.type_text(&format!("{env} {BIN} {args}; echo \"EX\"\"IT=$?\""));
        self.keys(&["Enter"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// The line of the grid for a working set.
fn row<'a>(screen: &'a str, set: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| l.starts_with('│') && l.contains(set) && !l.contains(" × "))
}

/// How many figures (numbers with a decimal point) a grid row shows.
fn figures_in(row: &str) -> usize {
    row.split_whitespace()
        .filter(|w| {
            let w = w.trim_matches(|c: char| !c.is_ascii_digit() && c != '.');
            w.contains('.') && w.parse::<f64>().is_ok()
        })
        .count()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stream-top-e2e-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

macro_rules! need_tmux {
    () => {
        if !tmux_available() {
            eprintln!("skipped: tmux is not installed (.ci/run installs it)");
            return;
        }
    };
}

#[test]
fn live_monitor_moves_focuses_pauses_exports_and_quits_cleanly() {
    need_tmux!();
    let dir = temp_dir("main");
    let t = Tmux::start("main");
    t.run("", &format!("{ARGS} --export {}", dir.display()));

    // Figures in every cell of both rows.
    let s = t.wait_for("figures in all four cells", |s| {
        row(s, "16 KiB/thread").is_some_and(|r| figures_in(r) == 2)
            && row(s, "4 MiB").is_some_and(|r| figures_in(r) == 2)
    });
    assert!(s.contains("median GB/s"), "{s}");
    assert!(s.contains("stream-top"), "{s}");
    t.wait_display("#{alternate_on}", "1");

    // Move down and right: the detail follows the selection.
    t.keys(&["j"]);
    t.wait_for("the detail of 4 MiB × 1", |s| {
        s.contains("4 MiB × 1 thread ")
    });
    t.keys(&["l"]);
    t.wait_for("the detail of 4 MiB × 2", |s| {
        s.contains("4 MiB × 2 threads")
    });

    // Focus: only that cell runs.
    t.keys(&["Enter"]);
    t.wait_for("focus on 4 MiB ×2", |s| {
        s.contains("focus on 4 MiB ×2") && s.contains("measuring 4 MiB ×2 now")
    });

    // Pause: the engine confirms.
    t.keys(&["Space"]);
    t.wait_for("the pause", |s| {
        s.contains("PAUSED") && s.contains("workers parked")
    });

    // Export into the directory given by --export; the log names the files.
    t.keys(&["e"]);
    let s = t.wait_for("the export in the log", |s| s.contains("exported "));
    let files = files_in(&dir);
    let md = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .unwrap_or_else(|| panic!("no .md in {}: {files:?}\n{s}", dir.display()));
    let text = std::fs::read_to_string(md).unwrap();
    assert!(text.contains("GB/s"), "{text}");
    assert!(text.contains("16 KiB/thread"), "{text}");

    // Help opens and closes.
    t.keys(&["?"]);
    t.wait_for("the help", |s| s.contains("help: any key closes"));
    t.keys(&["Escape"]);
    t.wait_for("the help to close", |s| !s.contains("help: any key closes"));

    // Quit: the shell is back, the alternate screen left, the grid gone.
    t.keys(&["q"]);
    let s = t.wait_for("the exit status", |s| s.contains("EXIT=0"));
    assert!(!s.contains("median GB/s"), "{s}");
    t.wait_display("#{alternate_on}", "0");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The pid of the program the pane's shell runs.
fn child_of_shell(t: &Tmux) -> String {
    let shell = t.display("#{pane_pid}");
    let out = Command::new("ps")
        .args(["-o", "pid=", "--ppid", &shell])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!pid.is_empty(), "no child of the pane's shell");
    pid
}

/// Whether a process has ended (gone, or a zombie nobody reaped).
fn ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_hangup_ends_the_process() {
    need_tmux!();
    let t = Tmux::start("hup");
    t.run("", ARGS);
    t.wait_for("the grid", |s| s.contains("median GB/s"));
    let pid = child_of_shell(&t);
    // The terminal goes away: tmux hangs up the pane.
    let _ = t.cmd().arg("kill-server").status();
    let start = Instant::now();
    while !ended(&pid) {
        assert!(
            start.elapsed() < DEADLINE,
            "stream-top {pid} still runs after its terminal hung up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sigterm_restores_the_terminal() {
    need_tmux!();
    let t = Tmux::start("term");
    t.run("", ARGS);
    t.wait_for("the grid", |s| s.contains("median GB/s"));
    let pid = child_of_shell(&t);
    let ok = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let s = t.wait_for("the exit after SIGTERM", |s| s.contains("EXIT="));
    assert!(!s.contains("median GB/s"), "{s}");
    t.wait_display("#{alternate_on}", "0");
}

#[test]
fn a_worker_panic_restores_the_terminal_and_says_why() {
    need_tmux!();
    let t = Tmux::start("panic");
    t.run("STREAM_TOP_PANIC_WORKER=1", ARGS);
    let s = t.wait_for("the exit after the panic", |s| s.contains("EXIT="));
    // A run that failed, not a mistake in the command line: exit 1.
    assert!(s.contains("EXIT=1"), "{s}");
    assert!(s.contains("panicked"), "{s}");
    t.wait_display("#{alternate_on}", "0");
}

#[test]
fn not_a_terminal_points_to_headless() {
    let out = Command::new(BIN)
        .args(ARGS.split_whitespace())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--headless"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// How many SGR sequences in `styled` set a foreground or background colour (30–38, 40–48,
/// 90–97, 100–107; 39 and 49, the defaults, are no colour).
fn colour_sequences(styled: &str) -> usize {
    styled
        .split("\x1b[")
        .skip(1)
        .filter_map(|s| s.split_once('m').map(|(params, _)| params))
        .filter(|params| {
            params.split(';').any(|p| {
                matches!(
                    p.parse::<u32>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            })
        })
        .count()
}

#[test]
fn no_color_and_a_dumb_terminal_get_a_screen_without_colour() {
    need_tmux!();
    for (tag, env, colour) in [
        ("colour", "", true),
        ("nocolor", "NO_COLOR=1", false),
        ("dumb", "TERM=dumb", false),
    ] {
        let t = Tmux::start(tag);
        t.run(env, ARGS);
        t.wait_for("figures", |s| {
            row(s, "16 KiB/thread").is_some_and(|r| figures_in(r) >= 1)
        });
        let styled = t.capture_styled();
        t.keys(&["q"]);
        t.wait_for("the exit", |s| s.contains("EXIT=0"));
        let found = colour_sequences(&styled);
        if colour {
            assert!(found > 0, "{tag}: the control run has colours: {styled:?}");
        } else {
            assert_eq!(found, 0, "{tag}: {styled:?}");
        }
    }
}
