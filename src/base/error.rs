//! One error type for the whole program, and the exit code each kind of error means.
//!
//! The exit-code contract follows from the variant, not from where an error was caught:
//! 2 for what the person can fix (a flag, a size, a file or address they named, no terminal),
//! 1 for a failed measurement or a machine that could not be read or set up.

use std::fmt;
use std::io;
use std::path::Path;

#[derive(Debug)]
pub enum Error {
    /// Something the person asked for is wrong; the message names the flag or file.
    Usage(String),
    /// The machine could not be read or prepared (sysfs, /proc, threads, memory maps).
    Machine(String),
    /// Reading or writing a file failed after the run was under way (a full disk, a vanished
    /// directory). `what` says what was being done, e.g. `write results/x.json`.
    Io { what: String, source: io::Error },
    /// The measurement failed: a worker died, the engine ended early.
    Engine(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage(message.into())
    }

    pub fn machine(message: impl Into<String>) -> Error {
        Error::Machine(message.into())
    }

    pub fn engine(message: impl Into<String>) -> Error {
        Error::Engine(message.into())
    }

    /// An I/O error on `path` while doing `verb` (`read`, `write`, `create`, …).
    pub fn io(verb: &str, path: &Path, source: io::Error) -> Error {
        Error::Io {
            what: format!(
                "{verb} {}",
                super::quote::quote(&path.display().to_string())
            ),
            source,
        }
    }

    /// An I/O error on a stream (`stdout`).
    pub fn stream(name: &str, source: io::Error) -> Error {
        Error::Io {
            what: format!("write to {name}"),
            source,
        }
    }

    /// The process exit code this error means: 2 for the person to fix, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Machine(_) | Error::Io { .. } | Error::Engine(_) => 1,
        }
    }

    /// A closed pipe on the far side (`stream-top … | head`): a quiet end, not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The message with `context: ` in front, keeping the kind.
    pub fn context(self, context: &str) -> Error {
        match self {
            Error::Usage(m) => Error::Usage(format!("{context}: {m}")),
            Error::Machine(m) => Error::Machine(format!("{context}: {m}")),
            Error::Engine(m) => Error::Engine(format!("{context}: {m}")),
            Error::Io { what, source } => Error::Io {
                what: format!("{context}: {what}"),
                source,
            },
        }
    }
}

/// The message a panic carried (`panic!("…")` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Machine(m) | Error::Engine(m) => f.write_str(m),
            Error::Io { what, source } => write!(f, "cannot {what}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_kind() {
        assert_eq!(Error::usage("--threads 0: no").exit_code(), 2);
        assert_eq!(Error::machine("no sysfs").exit_code(), 1);
        assert_eq!(Error::engine("worker 1 panicked").exit_code(), 1);
        let full = io::Error::from(io::ErrorKind::StorageFull);
        assert_eq!(Error::io("write", Path::new("x"), full).exit_code(), 1);
        let e = Error::usage("no such file").context("--baseline x.json");
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.to_string(), "--baseline x.json: no such file");
    }

    #[test]
    fn a_broken_pipe_is_recognised_through_the_error() {
        let e = Error::stream("stdout", io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(e.is_broken_pipe());
        assert!(!Error::usage("x").is_broken_pipe());
    }
}
