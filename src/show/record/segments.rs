//! A recording's files: `FILE`, and the older segments rotation keeps beside it, `FILE.1` (the
//! newest) to `FILE.MAX_ROTATED` (the oldest). The writer makes them; the reader reads them all.

use std::path::{Path, PathBuf};

/// Older files kept beside the current one: `FILE.1` … `FILE.4`.
pub(crate) const MAX_ROTATED: usize = 4;

/// `FILE.n`.
pub(crate) fn rotated(path: &Path, n: usize) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

/// The files of a recording named `path`, oldest first: its rotated `path.N` … `path.1`, then
/// `path` itself.
pub(crate) fn with_rotated(path: &Path) -> Vec<PathBuf> {
    let mut older: Vec<PathBuf> = (1..=MAX_ROTATED)
        .map(|n| rotated(path, n))
        .filter(|p| p.is_file())
        .collect();
    older.reverse();
    older.push(path.to_path_buf());
    older
}
