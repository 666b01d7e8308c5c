//! The process and its neighbours: whether another process is alive (a temporary file of a
//! killed run is removed only when its PID is gone), how many files it may open, and whether
//! stdout was closed when the program started (`stream-top … >&-`).
//!
//! The Rust runtime opens /dev/null on a standard descriptor that is closed at start, before
//! `main`, so that a later `open` cannot land on it; a write to a closed stdout then vanishes
//! without an error. A constructor that runs before the runtime (`.init_array`, or
//! `__mod_init_func` on macOS) notes whether descriptor 1 was closed, so that writing the
//! result there can fail as it should.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a process with this PID exists (in our PID namespace); one we may not signal
/// (another user's) exists too.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; kill only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Sends `sig` to the process `pid`: a signal forwarded to a child this process started.
pub fn send_signal(pid: u32, sig: i32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "no such process"))?;
    // SAFETY: kill(2) with a PID and a signal number; it touches no memory of ours.
    let r = unsafe { libc::kill(pid, sig) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The variable that tells a child to end when its stdin, a pipe its parent holds open, ends.
const WATCH_PARENT: &str = "STREAM_TOP_DIE_WITH_PARENT";

/// Makes the child that `cmd` starts die with this process, however this process ends
/// (`kill -9` too). On Linux the kernel sends the child SIGKILL when its parent ends, and a
/// child whose parent ended before it was set up ends at once. Everywhere (macOS has no such
/// call) the child's stdin is a pipe this process holds open and never writes: the child's
/// [`watch_parent`] ends it when that pipe ends, as it does when the parent's end closes it.
/// The parent must keep the child's stdin (`Child::stdin`) until the child ends.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    cmd.stdin(std::process::Stdio::piped())
        .env(WATCH_PARENT, "1");
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: getpid(2) reads this process's ID and touches no memory of ours.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the forked child before exec and calls only
        // async-signal-safe functions (prctl, getppid, _exit), allocating nothing.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
}

/// In a child started with [`die_with_parent`]: a thread that waits for stdin to end and then
/// kills this process (SIGKILL, as the kernel does on Linux), since its parent is gone. A
/// process started any other way is left alone (its stdin may be a terminal or /dev/null).
pub fn watch_parent() {
    if std::env::var_os(WATCH_PARENT).is_none() {
        return;
    }
    // SAFETY: the variable is removed at start, before this process starts any other thread
    // that could read the environment.
    unsafe { std::env::remove_var(WATCH_PARENT) };
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        loop {
            match io::Read::read(&mut io::stdin(), &mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        // SAFETY: kill(2) on this process's own PID; it touches no memory of ours.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    });
}

/// The process's limit on open files (the soft `RLIMIT_NOFILE`); None when unlimited or
/// unknown.
pub fn open_files_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a pointer to a live, writable one.
    let r = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (r == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

extern "C" fn note_closed_stdout() {
    // SAFETY: F_GETFD takes no pointer and only reads the descriptor's flags.
    let r = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) };
    if r == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

// SAFETY: the section holds pointers to functions the loader calls before `main`, with no
// arguments; `note_closed_stdout` takes none and only reads a descriptor's flags.
#[used]
#[cfg_attr(target_os = "linux", unsafe(link_section = ".init_array"))]
#[cfg_attr(target_os = "macos", unsafe(link_section = "__DATA,__mod_init_func"))]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

/// The error a write to stdout meets when stdout was closed when the program started (EBADF),
/// though the runtime has since put /dev/null there.
pub fn stdout_closed_at_start() -> Option<io::Error> {
    STDOUT_CLOSED
        .load(Ordering::Relaxed)
        .then(|| io::Error::from_raw_os_error(libc::EBADF))
}
