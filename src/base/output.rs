//! The one writer of the program's standard streams: every table, comparison, help text,
//! progress line and warning goes through here, so the rule for a failed write is kept in one
//! place instead of at each call site.
//!
//! - stdout carries the result (a table, a comparison, help). A failed write is an error
//!   (`Error::stream("stdout", …)`, exit 1): a full disk, or a stdout that was closed at start
//!   (`>&-`, which `main` reports through `stdout_closed`: the runtime puts /dev/null there,
//!   where every write would seem to succeed). A closed pipe (`stream-top … | head`) is an
//!   error too, which `main` ends quietly (`Error::is_broken_pipe`).
//! - stderr carries progress and warnings. A failed write there is ignored: there is nowhere
//!   left to report it, and it must never stop a run or lose its exports.
//!
//! The live monitor's screen is not written here: it is a terminal backend (`tui::terminal`).

use crate::base::error::{Error, Result};
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicI32, Ordering};

/// The OS error number of a stdout closed at start (`stdout_closed`); 0 while it is open.
static STDOUT_CLOSED: AtomicI32 = AtomicI32::new(0);

/// Says that stdout was closed when the program started (`error`, EBADF): every later
/// `stdout` call fails with it instead of writing where the runtime put /dev/null.
pub fn stdout_closed(error: &io::Error) {
    STDOUT_CLOSED.store(error.raw_os_error().unwrap_or(-1), Ordering::Relaxed);
}

/// Writes `text` to stdout with a final newline (added when it lacks one) and flushes.
pub fn stdout(text: &str) -> Result<()> {
    match STDOUT_CLOSED.load(Ordering::Relaxed) {
        0 => {}
        -1 => return Err(Error::stream("stdout", io::Error::other("closed"))),
        n => return Err(Error::stream("stdout", io::Error::from_raw_os_error(n))),
    }
    let mut out = io::stdout().lock();
    write_text(&mut out, text, true).map_err(|e| Error::stream("stdout", e))
}

/// Writes one line to stderr (a newline is added when it lacks one); a failure is ignored.
pub fn stderr(line: &str) {
    let mut err = io::stderr().lock();
    let _ = write_text(&mut err, line, true);
}

/// Says one of the program's own lines on stderr as `stream-top: line`, in the one form every
/// such line takes: a sentence goes on in lower case after the colon. A first word that is an
/// ordinary capitalised word (`No`, `Knee`) is lowered; one that is a name (`SIGTERM`, `NUMA`,
/// `Cargo.toml`) is kept as it is.
pub fn say(line: &str) {
    stderr(&format!("stream-top: {}", after_colon(line)));
}

/// `line` with its first word lowered where it is an ordinary capitalised word.
fn after_colon(line: &str) -> std::borrow::Cow<'_, str> {
    let word = line
        .split(|c: char| c.is_whitespace() || c == ':' || c == ',')
        .next()
        .unwrap_or("");
    let mut chars = word.chars();
    let ordinary = chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.clone().next().is_some()
        && chars.all(|c| c.is_ascii_lowercase());
    if ordinary {
        let mut lowered = line.to_string();
        lowered[..1].make_ascii_lowercase();
        lowered.into()
    } else {
        line.into()
    }
}

/// Writes `text` to stderr as it is, without a newline (a progress line redrawn with `\r`);
/// a failure is ignored.
pub(crate) fn stderr_partial(text: &str) {
    let mut err = io::stderr().lock();
    let _ = write_text(&mut err, text, false);
}

/// Whether stderr is a terminal (progress redraws one line there, prints finished lines else).
pub(crate) fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// Whether stdout is a terminal (the live monitor needs one).
pub(crate) fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

fn write_text(w: &mut impl Write, text: &str, newline: bool) -> io::Result<()> {
    w.write_all(text.as_bytes())?;
    if newline && !text.ends_with('\n') {
        w.write_all(b"\n")?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails every write, as /dev/full does.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::StorageFull))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_goes_on_in_lower_case_after_the_colon_and_names_are_kept() {
        assert_eq!(
            after_colon("No knee: there is no idle reference."),
            "no knee: there is no idle reference."
        );
        assert_eq!(after_colon("Knee at 14.5 GB/s"), "knee at 14.5 GB/s");
        for kept in [
            "SIGTERM: stopping",
            "NUMA node 0",
            "Cargo.toml: gone",
            "loaded latency: a chase",
            "A",
            "",
        ] {
            assert_eq!(after_colon(kept), kept);
        }
    }

    #[test]
    fn a_newline_is_added_once() {
        let mut v = Vec::new();
        write_text(&mut v, "a", true).unwrap();
        write_text(&mut v, "b\n", true).unwrap();
        write_text(&mut v, "\rc", false).unwrap();
        assert_eq!(v, b"a\nb\n\rc");
    }

    #[test]
    fn a_failed_write_is_reported_to_the_caller() {
        assert_eq!(
            write_text(&mut Full, "x", true).unwrap_err().kind(),
            io::ErrorKind::StorageFull
        );
    }
}
