//! Reads recordings back: every whole frame whose checksum holds, in order. A torn tail (the
//! last frame cut short by a crash or `kill -9`) ends a file quietly and is counted; a frame
//! whose checksum fails is skipped (its length still says where the next one starts) and
//! counted; a length past `MAX_FRAME` is damage nothing can be read after, counted as torn.

use super::format::{self, FRAME_HEAD, Frame, MAGIC, MAX_FRAME};
use crate::base::error::{Error, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// What reading found besides the frames.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Damage {
    /// Bytes at the end of files that were not a whole frame.
    pub(crate) torn_bytes: u64,
    /// Frames whose checksum failed or whose body did not parse.
    pub(crate) bad_frames: u64,
}

/// The frames of one file's bytes (the magic first), and what was damaged.
pub(crate) fn frames_of(bytes: &[u8], damage: &mut Damage) -> Option<Vec<Frame>> {
    let mut rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let Some((head, body)) = rest.split_first_chunk::<FRAME_HEAD>() else {
            damage.torn_bytes += rest.len() as u64;
            break;
        };
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if len > MAX_FRAME || len > body.len() {
            damage.torn_bytes += rest.len() as u64;
            break;
        }
        let payload = &body[..len];
        match (crc32fast::hash(payload) == crc)
            .then(|| format::decode(payload))
            .flatten()
        {
            Some(f) => out.push(f),
            None => damage.bad_frames += 1,
        }
        rest = &body[len..];
    }
    Some(out)
}

/// The files of a recording named `path`, oldest first: its rotated `path.N` … `path.1`, then
/// `path` itself.
pub(crate) fn with_rotated(path: &Path) -> Vec<PathBuf> {
    let mut older: Vec<PathBuf> = (1..=super::writer::MAX_ROTATED)
        .map(|n| super::writer::rotated(path, n))
        .filter(|p| p.is_file())
        .collect();
    older.reverse();
    older.push(path.to_path_buf());
    older
}

/// Every frame of the named recordings (each with its rotated files), sorted by time.
pub fn read(paths: &[PathBuf]) -> Result<(Vec<Frame>, Damage)> {
    let mut damage = Damage::default();
    let mut frames = Vec::new();
    for path in paths {
        for file in with_rotated(path) {
            let bytes = fs::read(&file)
                .map_err(|e| Error::usage(format!("cannot read {}: {e}", file.display())))?;
            let got = frames_of(&bytes, &mut damage).ok_or_else(|| {
                Error::usage(format!("{}: not a stream-top recording", file.display()))
            })?;
            frames.extend(got);
        }
    }
    // Stable: frames of one moment keep the order they were written in.
    frames.sort_by_key(|f| f.t_ms);
    Ok((frames, damage))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::record::format::{Body, gap_frame};

    fn file(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        for f in frames {
            b.extend_from_slice(f);
        }
        b
    }

    #[test]
    fn a_torn_tail_is_skipped_and_counted() {
        let whole = file(&[gap_frame(1, 1), gap_frame(2, 2)]);
        // Cut the last frame at every length short of whole: the first frame always reads.
        let one = MAGIC.len() + gap_frame(1, 1).len();
        for cut in one..whole.len() {
            let mut d = Damage::default();
            let got = frames_of(&whole[..cut], &mut d).unwrap();
            assert_eq!(got.len(), 1, "cut at {cut}");
            assert_eq!(d.torn_bytes, (cut - one) as u64);
        }
        let mut d = Damage::default();
        assert_eq!(frames_of(&whole, &mut d).unwrap().len(), 2);
        assert_eq!(d, Damage::default());
    }

    #[test]
    fn a_frame_with_a_bad_checksum_is_skipped_and_the_next_read() {
        let mut bytes = file(&[gap_frame(1, 1), gap_frame(2, 2), gap_frame(3, 3)]);
        // Flip a bit in the second frame's payload.
        let second = MAGIC.len() + gap_frame(1, 1).len();
        bytes[second + FRAME_HEAD + 3] ^= 0x10;
        let mut d = Damage::default();
        let got = frames_of(&bytes, &mut d).unwrap();
        let times: Vec<u64> = got.iter().map(|f| f.t_ms).collect();
        assert_eq!(times, [1, 3]);
        assert_eq!(d.bad_frames, 1);
        assert!(matches!(got[1].body, Body::Gap(3)));
    }

    #[test]
    fn a_file_without_the_magic_is_not_a_recording() {
        assert!(frames_of(b"hello world", &mut Damage::default()).is_none());
    }
}
