//! Every file the program writes goes through here: the one check of an output path, the
//! temporary files beside it (their names, and the removal of those a killed run left), and
//! the atomic replace.
//!
//! An output path is a regular file, or a name that does not exist yet in a directory that
//! exists; never a device, FIFO, socket or directory, and never a read-only file (mode without
//! a write bit: the person's statement that it stays as it is, even for root, who could write
//! it). A file that is replaced (`--prom-file`) needs a directory that takes a new file, as the
//! replacement is renamed over it; a file rewritten in place (`--readme`) needs only to open
//! for writing. `check_output_file` says so before anything is measured (exit 2), and the
//! writers check again at write time: a rename never lands on a device or FIFO, even when the
//! path changed after the first check.
//!
//! A temporary file is `.stream-top-PID-N-NANOS.tmp`: hidden, and named by the process that
//! owns it, so a later run can tell one left by a killed run (its PID is gone) from one that a
//! live run is about to put in place (`remove_stale_temps`).

use crate::base::error::{Error, Result};
use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// How an output file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// A new file renamed over the old one (`--prom-file`): the directory must take a new file;
    /// the file need not exist yet.
    Replace,
    /// The same inode rewritten (`--readme`): the file must exist and open for writing; its
    /// directory may be read-only.
    InPlace,
}

/// The prefix and suffix of every temporary file: `.stream-top-PID-N-NANOS.tmp`.
const TEMP_PREFIX: &str = ".stream-top-";
const TEMP_SUFFIX: &str = ".tmp";

/// A temporary file of a dead process is removed only when it is older than this: a PID that
/// looks dead may be a live run in another PID namespace (a container) sharing the directory,
/// whose temporary file lives a few milliseconds.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// What a file that is not a regular file is, for a message.
pub(crate) fn kind_of(t: FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Why the file with this metadata must not be written: not a regular file, or read-only.
fn refusal(meta: &fs::Metadata) -> Option<String> {
    if !meta.is_file() {
        return Some(format!("{}, not a regular file", kind_of(meta.file_type())));
    }
    let mode = meta.permissions().mode() & 0o7777;
    (mode & 0o222 == 0)
        .then(|| format!("read-only (mode {mode:03o}); make it writable to have it updated"))
}

/// The directory a file lies in (`.` for a bare name), following a symbolic link to its
/// target; returns the path the link leads to and that directory.
pub(crate) fn directory_of(path: &Path) -> (PathBuf, PathBuf) {
    let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match real.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (real, dir)
}

/// Checks, before anything is measured, that `path` may be written `how`. Every failure is
/// `Error::Usage`, naming the path; the caller puts the flag in front.
pub(crate) fn check_output_file(path: &Path, how: How) -> Result<()> {
    let refuse = |why: String| Err(Error::usage(format!("{}: {why}", path.display())));
    match fs::metadata(path) {
        Ok(meta) => {
            if let Some(why) = refusal(&meta) {
                return refuse(why);
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound && how == How::Replace => {}
        Err(e) => {
            return Err(Error::usage(format!("cannot read {}: {e}", path.display())));
        }
    }
    let (real, dir) = directory_of(path);
    match how {
        How::Replace => {
            if !dir.is_dir() {
                return refuse(format!("no directory {}", dir.display()));
            }
            probe_writable(&dir)
                .or_else(|e| refuse(format!("cannot write into {}: {e}", dir.display())))
        }
        How::InPlace => OpenOptions::new()
            .write(true)
            .open(&real)
            .map(drop)
            .or_else(|e| refuse(format!("cannot open for writing: {e}"))),
    }
}

/// Checks, before anything is measured, that files can be created in `dir`: it is a directory
/// that takes a new file, or it does not exist yet and its nearest existing ancestor is a
/// directory that does (it is created at the first write, not now). Failures are
/// `Error::Usage`.
pub(crate) fn check_output_dir(dir: &Path) -> Result<()> {
    let refuse = |why: String| Error::usage(why);
    let mut existing = dir;
    while fs::metadata(existing).is_err() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => {
                existing = Path::new(".");
                break;
            }
        }
    }
    let meta = fs::metadata(existing)
        .map_err(|e| refuse(format!("cannot read {}: {e}", existing.display())))?;
    if !meta.is_dir() {
        return Err(refuse(format!("{} is not a directory", existing.display())));
    }
    probe_writable(existing).map_err(|e| {
        if existing == dir {
            refuse(format!("cannot write into {}: {e}", dir.display()))
        } else {
            refuse(format!(
                "cannot create {}: cannot write into {}: {e}",
                dir.display(),
                existing.display()
            ))
        }
    })
}

/// The check again, at write time, on the path a rename or rewrite is about to reach: an
/// error (`InvalidInput`) when it exists and is not a writable regular file.
pub(crate) fn recheck(real: &Path) -> io::Result<()> {
    match fs::metadata(real) {
        Ok(meta) => match refusal(&meta) {
            Some(why) => Err(io::Error::new(io::ErrorKind::InvalidInput, why)),
            None => Ok(()),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// A temporary file, removed when dropped unless `keep` was called (it was put in place, or is
/// kept as the safety copy of a README whose rewrite failed).
pub(crate) struct Temp {
    pub(crate) path: PathBuf,
    armed: bool,
}

impl Temp {
    /// Creates (never reuses) a temporary file in `dir`, writes `data`, and syncs it to disk.
    pub fn write(dir: &Path, data: &[u8]) -> io::Result<Temp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        loop {
            let nanos = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(temp_name(std::process::id(), n, nanos));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let temp = Temp { path, armed: true };
                    f.write_all(data)?;
                    f.sync_all()?;
                    return Ok(temp);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The file stays when this value is dropped.
    pub fn keep(&mut self) {
        self.armed = false;
    }

    /// Whether the file is removed when this value is dropped.
    pub(crate) fn armed(&self) -> bool {
        self.armed
    }

    /// The file is removed again when this value is dropped (it was moved back to its name).
    pub(crate) fn rearm(&mut self) {
        self.armed = true;
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// `.stream-top-PID-N-NANOS.tmp`.
fn temp_name(pid: u32, n: u64, nanos: u32) -> String {
    format!("{TEMP_PREFIX}{pid}-{n}-{nanos:09}{TEMP_SUFFIX}")
}

/// The PID in a temporary file's name, when the name is one of ours.
fn temp_owner(name: &str) -> Option<u32> {
    let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let parts: Vec<&str> = middle.split('-').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [pid, n, nanos] if digits(pid) && digits(n) && digits(nanos) => pid.parse().ok(),
        _ => None,
    }
}

/// Removes the temporary files of ours in `dir` that a run killed before it could remove them
/// left behind: those whose PID `alive` says is gone, older than `STALE_AFTER`. Only regular
/// files named as `Temp` names them are touched. Returns how many were removed; a directory
/// that cannot be read removes none.
pub(crate) fn remove_stale_temps(dir: &Path, alive: impl Fn(u32) -> bool) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if meta.is_file() && old && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether `dir` takes a new file: one is created there and removed.
pub(crate) fn probe_writable(dir: &Path) -> io::Result<()> {
    Temp::write(dir, b"").map(drop)
}

/// Flushes a directory's entries (the renames and links in it) to disk; best effort.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Replaces `path` with `data` atomically: a temporary file beside it (with the same
/// permissions), synced, renamed over it. A symbolic link is followed and its target replaced.
/// What the rename would reach is checked again just before it (`recheck`): a device, FIFO,
/// socket, directory or read-only file is never replaced.
pub(crate) fn replace_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let (real, dir) = directory_of(path);
    let mut temp = Temp::write(&dir, data).map_err(|e| Error::io("write", path, e))?;
    recheck(&real).map_err(|e| Error::io("replace", path, e))?;
    if let Ok(meta) = fs::metadata(&real) {
        let _ = fs::set_permissions(&temp.path, meta.permissions());
    }
    fs::rename(&temp.path, &real).map_err(|e| Error::io("replace", path, e))?;
    temp.keep();
    sync_dir(&dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_carry_the_pid_and_only_ours_are_read_back() {
        assert_eq!(temp_name(42, 3, 7), ".stream-top-42-3-000000007.tmp");
        assert_eq!(temp_owner(&temp_name(42, 3, 7)), Some(42));
        for other in [
            ".stream-top-42.tmp",
            ".stream-top-x-1-2.tmp",
            ".stream-top-1-2-3-4.tmp",
            "stream-top-1-2-3.tmp",
            ".stream-top-1-2-3.md",
            ".stream-top--2-3.tmp",
        ] {
            assert_eq!(temp_owner(other), None, "{other}");
        }
    }

    #[test]
    fn a_fifo_a_directory_and_a_read_only_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ro = dir.path().join("ro");
        fs::write(&ro, "x").unwrap();
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o444)).unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for (path, says) in [
            (&ro, "read-only (mode 444)"),
            (&fifo, "a FIFO, not a regular file"),
            (&dir.path().to_path_buf(), "a directory, not a regular file"),
        ] {
            for how in [How::Replace, How::InPlace] {
                let e = check_output_file(path, how).unwrap_err();
                assert_eq!(e.exit_code(), 2);
                assert!(e.to_string().contains(says), "{how:?}: {e}");
            }
            let e = replace_atomically(path, b"new").unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        assert_eq!(fs::read_to_string(&ro).unwrap(), "x");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_new_name_is_replaced_but_not_rewritten_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.prom");
        check_output_file(&new, How::Replace).unwrap();
        let e = check_output_file(&new, How::InPlace).unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
        replace_atomically(&new, b"a").unwrap();
        replace_atomically(&new, b"b").unwrap();
        assert_eq!(fs::read_to_string(&new).unwrap(), "b");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
    }
}
