//! The snapshot files a side of `compare` names: a file as given, a directory as its newest
//! snapshot or, with several a side, as every snapshot in it.

use crate::base::error::{Error, Result};
use crate::base::time::parse_rfc3339;
use crate::show::report::json::load_snapshot;
use std::fs;
use std::path::{Path, PathBuf};

/// The files a `compare` argument names, and how the comparison names each: a file as given;
/// a directory as its newest snapshot, "DIR/FILE (the newest snapshot in DIR)", or with `every`
/// as each of its snapshots, oldest first.
pub(super) fn snapshot_files(path: &Path, every: bool) -> Result<Vec<(PathBuf, String)>> {
    if !path.is_dir() {
        return Ok(vec![(path.to_path_buf(), path.display().to_string())]);
    }
    if every {
        let all = snapshots_in(path)?;
        return Ok(all
            .into_iter()
            .map(|(_, f)| {
                let name = f.display().to_string();
                (f, name)
            })
            .collect());
    }
    let file = newest_snapshot(path)?;
    let name = format!(
        "{} (the newest snapshot in {})",
        file.display(),
        path.display()
    );
    Ok(vec![(file, name)])
}

/// The newest snapshot in a directory: of its `*.json` files that read as snapshots, the one
/// taken last by the time written in it (`taken`), not by the file's modification time, which a
/// copy or a checkout resets. In a tie (one second), the later export of the two (`-2`). Files
/// that are not snapshots are passed over; a directory without any is the person's to fix
/// (`Error::Usage`).
pub fn newest_snapshot(dir: &Path) -> Result<PathBuf> {
    let all = snapshots_in(dir)?;
    Ok(all
        .into_iter()
        .last()
        .map(|(_, p)| p)
        .expect("one at least"))
}

/// The snapshots in a directory, oldest first by the time written in them; in a tie, in the
/// order of their names (shorter first, so `NAME-2.json` after `NAME.json`, `-10` after `-9`).
/// Files that are not snapshots are passed over; a directory without any is the person's to
/// fix (`Error::Usage`).
fn snapshots_in(dir: &Path) -> Result<Vec<(i64, PathBuf)>> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::usage(format!("{}: cannot read the directory: {e}", dir.display())))?;
    let mut json: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    json.sort_by(|a, b| (a.as_os_str().len(), a).cmp(&(b.as_os_str().len(), b)));
    let mut found: Vec<(i64, PathBuf)> = json
        .iter()
        .filter_map(|path| {
            let taken = load_snapshot(path)
                .ok()
                .and_then(|s| parse_rfc3339(&s.taken))?;
            Some((taken, path.clone()))
        })
        .collect();
    // A stable sort keeps the names' order within one second.
    found.sort_by_key(|(t, _)| *t);
    if found.is_empty() {
        return Err(Error::usage(format!(
            "{}: no stream-top snapshot in this directory ({} .json {} that this stream-top \
             reads as a snapshot); name a snapshot file, or a directory `--export` wrote into",
            dir.display(),
            json.len(),
            if json.len() == 1 {
                "file, not one"
            } else {
                "files, none"
            }
        )));
    }
    Ok(found)
}
