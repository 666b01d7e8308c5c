//! What the person named outside the program, checked before the first array is allocated: a
//! mistake there costs a moment, not a sweep. Each failure is one line naming the flag, and
//! exit 2 (`Error::Usage`).
//!
//! Every output path goes through the one check of `base::files`: a writable regular file or a
//! new name, never a device, FIFO, socket or read-only file.
//! - `--export DIR`: a directory that exists or can be created, and that takes a new file
//!   (`files::check_output_dir`).
//! - `--readme FILE`: a writable regular file of bounded size, with exactly one pair of markers
//!   in order, outside fenced code blocks (`report::check_readme`); its directory may be
//!   read-only, as the file is rewritten in place.
//! - `--baseline FILE`: a snapshot this build reads, loaded here once for the monitor.
//! - `--choices-from FILE`: a snapshot this build reads, its loop and layout per op × working
//!   set taken out here for the session to match to the grid (`Session::reuse_choices`).
//! - `--prom-file FILE`: a regular file or a new name, in a directory that takes a new file
//!   (`serve::check_prom_file`).
//! - `--record FILE`: a path the one output check allows, and a recording when it is not empty
//!   (`record::check_record_file`).
//! - `--serve ADDR`: bound here, so a port that is taken or an address that cannot be bound is
//!   one line before anything is measured; the bound listener is handed on in `Checked`.
//! - `--web-config FILE`: read and checked whole (the YAML, the certificates, key and CA, the
//!   hashes, the headers: `serve::WebConfig::load`), and handed on with the listener.
//!
//! Then each directory the run will write into is cleared of the temporary files that killed
//! runs left there (`files::remove_stale_temps`), said on stderr.

use crate::app::choices_from::Earlier;
use crate::app::cli::{Config, Mode};
use crate::base::error::Result;
use crate::base::files::{self, directory_of};
use crate::base::output;
use crate::platform;
use crate::show::record;
use crate::show::report::{self, Baseline};
use crate::show::serve::{self, Listener};
use std::path::{Path, PathBuf};

/// Where the live monitor's `e` writes when `--export` is not given.
pub const DEFAULT_EXPORT_DIR: &str = "results";

/// What the checks loaded, for the run to use rather than read again.
#[derive(Debug, Default)]
pub struct Checked {
    /// `--baseline`, read and validated.
    pub baseline: Option<Baseline>,
    /// `--serve`, bound.
    pub listener: Option<Listener>,
    /// `--choices-from`, read.
    pub choices: Option<Earlier>,
}

/// Checks every output and input the command line names; the first failure is returned.
pub fn check(config: &Config) -> Result<Checked> {
    let flag = |name: &str, path: &Path| format!("--{name} {}", path.display());
    if let Some(dir) = &config.export {
        report::check_export_dir(dir).map_err(|e| e.context(&flag("export", dir)))?;
    }
    if let Some(file) = &config.readme {
        report::check_readme(file).map_err(|e| e.context("--readme"))?;
    }
    let baseline = config
        .baseline
        .as_deref()
        .map(|path| Baseline::load(path).map_err(|e| e.context("--baseline")))
        .transpose()?;
    let choices = config
        .choices_from
        .as_deref()
        .map(report::earlier_choices)
        .transpose()?;
    if let Some(file) = &config.prom_file {
        serve::check_prom_file(file)?;
    }
    if let Some(file) = &config.record {
        record::check_record_file(file)?;
    }
    let web = config
        .web_config
        .as_deref()
        .map(serve::WebConfig::load)
        .transpose()?;
    let listener = config.serve.map(serve::bind).transpose()?;
    let listener = match (listener, web) {
        (Some(l), Some(web)) => Some(l.secured(web)),
        (l, _) => l,
    };
    for dir in output_dirs(config) {
        remove_leftovers(&dir);
    }
    Ok(Checked {
        baseline,
        listener,
        choices,
    })
}

/// The directories the run writes files into: the exports' (the live monitor's default too),
/// the README's and the textfile's.
fn output_dirs(config: &Config) -> Vec<PathBuf> {
    let export = match (&config.export, &config.mode) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Mode::Live) => Some(PathBuf::from(DEFAULT_EXPORT_DIR)),
        (None, _) => None,
    };
    let files = [&config.readme, &config.prom_file]
        .into_iter()
        .flatten()
        .map(|f| directory_of(f).1);
    let mut dirs: Vec<PathBuf> = export.into_iter().chain(files).collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Removes the temporary files that runs killed mid-write left in `dir`, and says so.
fn remove_leftovers(dir: &Path) {
    let n = files::remove_stale_temps(dir, platform::process_alive);
    if n > 0 {
        let files = if n == 1 { "file" } else { "files" };
        output::stderr(&format!(
            "stream-top: removed {n} stale temp {files} of dead runs in {}",
            dir.display()
        ));
    }
}
