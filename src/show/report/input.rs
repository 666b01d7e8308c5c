//! Reading a file the person named (a snapshot, a README), with limits: it must be a regular
//! file (a FIFO would block forever, `/dev/zero` never ends), at most `MAX_INPUT_BYTES`, and
//! UTF-8 text. Read once into one buffer: the text is the only copy the reader holds.

use crate::base::error::{Error, Result};
use crate::base::files::kind_of;
use crate::base::units::format_bytes;
use std::fs::{self, File};
use std::io::Read;
use std::path::Path;

/// The largest snapshot or README read. A snapshot of a long live run with every round kept is
/// a few MiB; a file far past that is not one.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Refuses what is not a regular file of at most `MAX_INPUT_BYTES` (`Error::Usage`, naming the
/// file). A missing or unreadable file is `Error::Io` (`read FILE`), for the caller to judge.
pub(crate) fn check_regular(path: &Path) -> Result<fs::Metadata> {
    // Metadata before opening: opening a FIFO for reading waits for a writer.
    let meta = fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
    if !meta.is_file() {
        return Err(Error::usage(format!(
            "{}: {}, not a regular file",
            path.display(),
            kind_of(meta.file_type())
        )));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_big(path, meta.len()));
    }
    Ok(meta)
}

fn too_big(path: &Path, len: u64) -> Error {
    Error::usage(format!(
        "{}: {} is more than the {} stream-top reads",
        path.display(),
        format_bytes(len),
        format_bytes(MAX_INPUT_BYTES)
    ))
}

/// The whole of a regular file of at most `MAX_INPUT_BYTES`. Errors as `check_regular`.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let meta = check_regular(path)?;
    let file = File::open(path).map_err(|e| Error::io("read", path, e))?;
    // The file may have been swapped or grown since its metadata was read: read one byte past
    // the limit at most, and say so when it is there.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", path, e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big(path, bytes.len() as u64));
    }
    Ok(bytes)
}

/// `read_bytes`, as UTF-8 text (`Error::Usage` when it is not).
pub(crate) fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read_bytes(path)?)
        .map_err(|_| Error::usage(format!("{}: not UTF-8 text", path.display())))
}
