//! Reads recordings back without holding them: each file is scanned once (`scan`) into an index
//! of where its whole frames lie and when they were written, and the frames are read again one
//! at a time, in time order, as a replay walks them. What a replay holds is that index and one
//! window of a file, however large the files or whatever they hold.
//!
//! Only regular files are read (a FIFO would wait for a writer, a device would never end), and
//! only those that start with the recording's magic. Damage in the middle of a file is passed
//! over to the next whole frame and said (how many bytes, where); a frame that reads but that no
//! recorder writes (`plausible`) is skipped and said; a torn tail, the last frame cut short by
//! a crash or `kill -9`, ends its file and is said apart, as the one damage that is expected.

use super::format::{self, Body, FRAME_HEAD, Frame};
use super::plausible::Plausible;
use super::scan::{Found, Scan};
use super::segments::with_rotated;
use crate::base::error::{Error, Result};
use crate::base::files::kind_of;
use crate::base::output;
use std::cell::RefCell;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The lines of damage said one by one; past them, a count.
const MAX_NOTES: usize = 8;

/// Bytes read at a time when the frames are read again: a batch of the writer's.
const WINDOW: usize = 256 << 10;

/// What reading found besides the frames.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Damage {
    /// Bytes at the end of files that were not a whole frame.
    pub(crate) torn_bytes: u64,
    /// Stretches of damage before the end of a file, and frames refused as implausible: each
    /// lost one frame or more.
    pub(crate) bad_frames: u64,
    /// What was skipped, where, a line each (the first `MAX_NOTES`).
    notes: Vec<String>,
    /// Lines past the first `MAX_NOTES`.
    more: u64,
}

impl Damage {
    /// Whether frames were lost before the end of a file (a torn tail alone is no loss).
    pub fn lost_frames(&self) -> bool {
        self.bad_frames > 0
    }

    /// What reading found, a line each, for stderr.
    pub fn lines(&self) -> Vec<String> {
        let mut out = self.notes.clone();
        if self.more > 0 {
            out.push(format!("replay: and {} more like these", self.more));
        }
        out
    }

    fn note(&mut self, line: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(line);
        } else {
            self.more += 1;
        }
    }

    /// Counts and says what the scan of `file` found; the frame, when it found one.
    fn tally(&mut self, file: &Path, found: Found) -> Option<(u64, u64, Frame)> {
        let name = file.display();
        match found {
            Found::Frame { at, len, frame } => return Some((at, len, frame)),
            Found::Implausible { at, why, .. } => {
                self.bad_frames += 1;
                self.note(format!(
                    "replay: {name}: skipped the frame at byte {at}: {why}"
                ));
            }
            Found::Damaged { at, bytes } => {
                self.bad_frames += 1;
                self.note(format!(
                    "replay: {name}: skipped {bytes} damaged bytes at byte {at}: the frames in them are lost"
                ));
            }
            Found::Torn { at, bytes } => {
                self.torn_bytes += bytes;
                self.note(format!(
                    "replay: {name}: ignored a torn tail of {bytes} bytes at byte {at} (the last frame cut short, as by a crash)"
                ));
            }
        }
        None
    }
}

/// Where one whole frame lies, and when it was written.
#[derive(Debug, Clone, Copy)]
struct Entry {
    file: u32,
    len: u32,
    at: u64,
    t_ms: u64,
}

/// The whole frames of the named recordings (each with its rotated files), in time order.
#[derive(Debug, Default)]
pub struct Index {
    files: Vec<File>,
    entries: Vec<Entry>,
    damage: Damage,
    /// Frames the recorder said it dropped (gap frames), summed.
    dropped: u64,
}

impl Index {
    /// Scans every file of `paths`, oldest first; refuses (`Error::Usage`) a file that is not
    /// a regular file or not a recording.
    pub fn open(paths: &[PathBuf]) -> Result<Index> {
        let mut index = Index::default();
        for path in paths {
            for file in with_rotated(path) {
                index.add(&file)?;
            }
        }
        // Stable: frames of one moment keep the order they were written in.
        index.entries.sort_by_key(|e| e.t_ms);
        Ok(index)
    }

    fn add(&mut self, path: &Path) -> Result<()> {
        let file = open_regular(path)?;
        let failed =
            |e: io::Error| Error::usage(format!("replay: cannot read {}: {e}", path.display()));
        let Some(mut scan) = Scan::new(&file, Plausible::now()).map_err(failed)? else {
            return Err(Error::usage(format!(
                "replay: {}: not a stream-top recording",
                path.display()
            )));
        };
        let id = self.files.len() as u32;
        while let Some(found) = scan.next_found().map_err(failed)? {
            if let Some((at, len, frame)) = self.damage.tally(path, found) {
                if let Body::Gap(n) = frame.body {
                    self.dropped = self.dropped.saturating_add(n);
                }
                self.entries.push(Entry {
                    file: id,
                    len: len as u32,
                    at,
                    t_ms: frame.t_ms,
                });
            }
        }
        drop(scan);
        self.files.push(file);
        Ok(())
    }

    /// What reading found damaged.
    pub fn damage(&self) -> &Damage {
        &self.damage
    }

    /// Frames the recorder said it could not write.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The frames, in time order, each read again from its file as it is reached.
    pub fn frames(&self) -> impl Iterator<Item = Frame> + '_ {
        let mut window = Window::default();
        self.entries
            .iter()
            .filter_map(move |e| window.frame(&self.files, e))
    }
}

/// A stretch of one file, read at once: the frames a replay reads next lie mostly in it.
#[derive(Debug, Default)]
struct Window {
    file: Option<u32>,
    at: u64,
    bytes: Vec<u8>,
}

impl Window {
    /// The frame `e` points at, decoded; None when the file no longer holds it.
    fn frame(&mut self, files: &[File], e: &Entry) -> Option<Frame> {
        let (len, end) = (e.len as usize, e.at + u64::from(e.len));
        let inside = self.file == Some(e.file)
            && e.at >= self.at
            && end <= self.at + self.bytes.len() as u64;
        if !inside {
            self.file = None;
            self.bytes.resize(len.max(WINDOW), 0);
            let got = read_at_most(files.get(e.file as usize)?, &mut self.bytes, e.at).ok()?;
            self.bytes.truncate(got);
            (self.file, self.at) = (Some(e.file), e.at);
        }
        let start = (e.at - self.at) as usize;
        format::decode(self.bytes.get(start + FRAME_HEAD..start + len)?)
    }
}

/// Fills `buf` from `file` at `at` as far as the file goes; the bytes read.
fn read_at_most(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A recording's file, opened for reading once its metadata says it is a regular file
/// (metadata first: opening a FIFO waits for a writer).
fn open_regular(path: &Path) -> Result<File> {
    let cannot =
        |e: io::Error| Error::usage(format!("replay: cannot read {}: {e}", path.display()));
    let meta = fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(Error::usage(format!(
            "replay: {}: {}, not a regular file",
            path.display(),
            kind_of(meta.file_type())
        )));
    }
    File::open(path).map_err(cannot)
}

/// The frames of one file's bytes (the magic first), and what was damaged; None without the
/// magic.
#[cfg(test)]
pub(crate) fn frames_of(bytes: &[u8], damage: &mut Damage) -> Option<Vec<Frame>> {
    let mut scan = Scan::new(bytes, Plausible::now()).ok()??;
    let mut out = Vec::new();
    while let Ok(Some(found)) = scan.next_found() {
        out.extend(damage.tally(Path::new("bytes"), found).map(|(_, _, f)| f));
    }
    Some(out)
}

/// The end of the last whole frame of the recording at `path` and the file's length: what
/// lies between is no frame (a torn tail), and is cut before a new session is appended. None
/// when `path` is not a recording.
pub(crate) fn end_of_frames(path: &Path) -> io::Result<Option<(u64, u64)>> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let Some(mut scan) = Scan::new(&file, Plausible::now())? else {
        return Ok(None);
    };
    let mut end = format::MAGIC.len() as u64;
    while let Some(found) = scan.next_found()? {
        if let Found::Frame { at, len, .. } | Found::Implausible { at, len, .. } = found {
            end = at + len;
        }
    }
    Ok(Some((end, len)))
}

/// Says on stderr what reading found damaged and how many frames the recorder dropped.
pub fn tell_losses(damage: &Damage, dropped: u64) {
    for line in damage.lines() {
        output::say(&line);
    }
    if dropped > 0 {
        output::stderr(&format!(
            "stream-top: replay: the recorder dropped {dropped} frames (a slow or full disk)"
        ));
    }
}

/// A recording's frames in time order for a reader that goes back and forth (the interactive
/// replay): read again from their files as they are reached, so that memory follows the index
/// (a few bytes a frame), not the recording; or frames already in memory (made by a test).
#[derive(Debug)]
pub struct Frames {
    source: Source,
}

#[derive(Debug)]
enum Source {
    Files {
        index: Index,
        /// Interior: reading a frame moves the window, not what the frames are.
        window: RefCell<Window>,
    },
    Held(Vec<Frame>),
}

impl Frames {
    /// The frames of the named recordings (each with its rotated files).
    pub fn open(paths: &[PathBuf]) -> Result<Frames> {
        let index = Index::open(paths)?;
        Ok(Frames {
            source: Source::Files {
                index,
                window: RefCell::default(),
            },
        })
    }

    /// Frames in memory, sorted by time, nothing damaged.
    pub fn held(frames: Vec<Frame>) -> Frames {
        Frames {
            source: Source::Held(frames),
        }
    }

    pub fn len(&self) -> usize {
        match &self.source {
            Source::Files { index, .. } => index.entries.len(),
            Source::Held(frames) => frames.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Frame `i`'s time, ms since the epoch.
    pub fn t_ms(&self, i: usize) -> Option<u64> {
        match &self.source {
            Source::Files { index, .. } => index.entries.get(i).map(|e| e.t_ms),
            Source::Held(frames) => frames.get(i).map(|f| f.t_ms),
        }
    }

    /// Frame `i`; None past the end, or when its file no longer holds it.
    pub fn get(&self, i: usize) -> Option<Frame> {
        match &self.source {
            Source::Files { index, window } => {
                let e = index.entries.get(i)?;
                window.borrow_mut().frame(&index.files, e)
            }
            Source::Held(frames) => frames.get(i).cloned(),
        }
    }

    /// Every frame, in order.
    pub fn iter(&self) -> impl Iterator<Item = Frame> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// What reading found damaged.
    pub fn damage(&self) -> Damage {
        match &self.source {
            Source::Files { index, .. } => index.damage.clone(),
            Source::Held(_) => Damage::default(),
        }
    }

    /// Frames the recorder said it could not write.
    pub fn dropped(&self) -> u64 {
        match &self.source {
            Source::Files { index, .. } => index.dropped,
            Source::Held(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::record::format::{Body, MAGIC, gap_frame};

    /// A time a recorder could have written (late 2026).
    const T: u64 = 1_780_000_000_000;

    fn file(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        for f in frames {
            b.extend_from_slice(f);
        }
        b
    }

    /// Three gap frames, the second `second`, as a file; and where the second starts.
    fn three(second: Vec<u8>) -> (Vec<u8>, usize) {
        let at = MAGIC.len() + gap_frame(T + 1, 1).len();
        (
            file(&[gap_frame(T + 1, 1), second, gap_frame(T + 3, 3)]),
            at,
        )
    }

    fn times(bytes: &[u8]) -> (Vec<u64>, Damage) {
        let mut d = Damage::default();
        let got = frames_of(bytes, &mut d).unwrap();
        (got.iter().map(|f| f.t_ms - T).collect(), d)
    }

    #[test]
    fn a_torn_tail_is_skipped_and_counted_as_no_loss() {
        let whole = file(&[gap_frame(T + 1, 1), gap_frame(T + 2, 2)]);
        // Cut the last frame at every length short of whole: the first frame always reads.
        let one = MAGIC.len() + gap_frame(T + 1, 1).len();
        for cut in one + 1..whole.len() {
            let (got, d) = times(&whole[..cut]);
            assert_eq!(got, [1], "cut at {cut}");
            assert_eq!(d.torn_bytes, (cut - one) as u64);
            assert!(!d.lost_frames(), "cut at {cut}: {d:?}");
            assert!(d.lines()[0].contains("torn tail"), "{d:?}");
        }
        let (got, d) = times(&whole);
        assert_eq!(got, [1, 2]);
        assert_eq!(d, Damage::default());
    }

    #[test]
    fn a_frame_with_a_bad_checksum_is_skipped_said_and_the_next_read() {
        let (mut bytes, second) = three(gap_frame(T + 2, 2));
        bytes[second + FRAME_HEAD + 3] ^= 0x10;
        let (got, d) = times(&bytes);
        assert_eq!(got, [1, 3]);
        assert_eq!((d.bad_frames, d.torn_bytes), (1, 0));
        let len = gap_frame(T + 2, 2).len();
        let said = format!("skipped {len} damaged bytes at byte {second}");
        assert!(d.lines()[0].contains(&said), "{:?}", d.lines());
    }

    #[test]
    fn a_flipped_bit_in_a_length_loses_only_its_frame() {
        // A length made longer than the file (once read as a torn tail that hid the rest), or
        // shorter than the frame (its checksum then fails, and its length points nowhere).
        for bit in [0x0001_0000u32, 0x0000_0010, 0x0000_0001, 0x8000_0000] {
            let (mut bytes, second) = three(gap_frame(T + 2, 2));
            let len = u32::from_le_bytes(bytes[second..second + 4].try_into().unwrap());
            bytes[second..second + 4].copy_from_slice(&(len ^ bit).to_le_bytes());
            let (got, d) = times(&bytes);
            assert_eq!(got, [1, 3], "bit {bit:#x}");
            assert_eq!((d.bad_frames, d.torn_bytes), (1, 0), "bit {bit:#x}");
            assert!(d.lost_frames());
        }
    }

    #[test]
    fn a_whole_last_frame_that_is_wrong_is_a_loss_not_a_torn_tail() {
        let mut bytes = file(&[gap_frame(T + 1, 1), gap_frame(T + 2, 2)]);
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        let (got, d) = times(&bytes);
        assert_eq!(got, [1]);
        assert_eq!((d.bad_frames, d.torn_bytes), (1, 0));
    }

    #[test]
    fn a_frame_no_recorder_writes_is_skipped_with_the_reason() {
        // A time in the year 584556019, and a gap of 10^18 frames a second into the session.
        for crafted in [gap_frame(u64::MAX / 1000, 1), gap_frame(T + 2, 1 << 60)] {
            let (got, d) = times(&three(crafted).0);
            assert_eq!(got, [1, 3]);
            assert_eq!(d.bad_frames, 1);
            assert!(d.lines()[0].contains("skipped the frame at byte"), "{d:?}");
        }
    }

    #[test]
    fn a_hole_of_zeros_across_the_buffer_is_passed_over_to_the_next_frame() {
        // Zeros that end a few bytes short of a read chunk: the next frame straddles it.
        let mut bytes = file(&[gap_frame(T + 1, 1)]);
        let hole = (1 << 20) - bytes.len() - 5 + (3 << 20);
        bytes.resize(bytes.len() + hole, 0);
        bytes.extend_from_slice(&gap_frame(T + 2, 2));
        let (got, d) = times(&bytes);
        assert_eq!(got, [1, 2]);
        assert_eq!(d.bad_frames, 1);
        assert!(
            d.lines()[0].contains(&format!("skipped {hole} damaged bytes")),
            "{d:?}"
        );
    }

    #[test]
    fn past_eight_lines_the_damage_is_counted() {
        let mut frames = Vec::new();
        for i in 0..12 {
            frames.push(gap_frame(T + i, 1));
            frames.push(gap_frame(5, 1));
        }
        let (got, d) = times(&file(&frames));
        assert_eq!(got.len(), 12);
        assert_eq!(d.bad_frames, 12);
        let lines = d.lines();
        assert_eq!(lines.len(), MAX_NOTES + 1);
        assert!(lines[MAX_NOTES].contains("4 more"), "{lines:?}");
    }

    #[test]
    fn a_file_without_the_magic_is_not_a_recording() {
        assert!(frames_of(b"hello world", &mut Damage::default()).is_none());
        assert!(frames_of(b"", &mut Damage::default()).is_none());
    }

    #[test]
    fn the_index_reads_the_frames_again_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.rec"), dir.path().join("b.rec"));
        fs::write(&a, file(&[gap_frame(T + 1, 1), gap_frame(T + 4, 4)])).unwrap();
        // A header among the gaps: JSON, a few kilobytes, read in the same window.
        let long = format::header_frame(T + 2, &format::tests::header());
        fs::write(&b, file(&[long, gap_frame(T + 3, 3)])).unwrap();
        let index = Index::open(&[a, b]).unwrap();
        let got: Vec<u64> = index.frames().map(|f| f.t_ms - T).collect();
        assert_eq!(got, [1, 2, 3, 4]);
        assert_eq!(index.dropped(), 8);
        assert!(matches!(
            index.frames().nth(1).unwrap().body,
            Body::Header(_)
        ));
        assert_eq!(index.damage(), &Damage::default());
    }

    /// The interactive replay's frames are not held: a frame is read from its file when it is
    /// reached, so what a replay holds is the index, whatever the recording's size.
    #[test]
    fn frames_are_read_from_the_file_when_reached_not_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rec");
        let (bytes, second) = three(gap_frame(T + 2, 2));
        fs::write(&path, &bytes).unwrap();
        let frames = Frames::open(std::slice::from_ref(&path)).unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(frames.t_ms(2), Some(T + 3));
        // The same frame's place, another count: what `get` gives comes from the file now.
        let mut changed = bytes.clone();
        let other = gap_frame(T + 2, 9);
        changed[second..second + other.len()].copy_from_slice(&other);
        fs::write(&path, &changed).unwrap();
        assert!(matches!(frames.get(1).unwrap().body, Body::Gap(9)));
        assert_eq!(frames.dropped(), 1 + 2 + 3, "as the index counted them");
        assert!(frames.get(3).is_none());
    }
}
