//! What the person named outside the program, checked before the first array is allocated: a
//! mistake there costs a moment, not a sweep. Each failure is one line naming the flag, and
//! exit 2 (`Error::Usage`).
//!
//! - `--export DIR`: a directory that exists or can be created, and that takes a new file.
//! - `--readme FILE`: a regular file of bounded size, readable and writable (not read-only),
//!   with exactly one pair of markers in order (`report::check_readme`).
//! - `--baseline FILE`: a snapshot this build reads, loaded here once for the monitor.
//! - `--prom-file FILE`: its directory exists and takes a new file (`serve::check_prom_file`).
//! - `--serve ADDR`: bound here, so a port that is taken or an address that cannot be bound is
//!   one line before anything is measured; the bound listener is handed on in `Checked`.

use crate::app::cli::Config;
use crate::base::error::Result;
use crate::show::report::{self, Baseline};
use crate::show::serve::{self, Listener};
use std::path::Path;

/// What the checks loaded, for the run to use rather than read again.
#[derive(Debug, Default)]
pub struct Checked {
    /// `--baseline`, read and validated.
    pub baseline: Option<Baseline>,
    /// `--serve`, bound.
    pub listener: Option<Listener>,
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
    if let Some(file) = &config.prom_file {
        serve::check_prom_file(file)?;
    }
    let listener = config.serve.map(serve::bind).transpose()?;
    Ok(Checked { baseline, listener })
}
