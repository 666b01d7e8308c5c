//! The recorder: the loop that watches the engine hands it frames through a bounded channel and
//! never waits on it; a thread of its own batches them to the file, at least once a second.
//!
//! A full channel (a slow disk) or a failed write (a full disk) drops frames: they are counted,
//! said once when the trouble starts and once when it ends, and the next frame written is
//! preceded by a gap frame with the count, so a replay knows what is missing. A failed write is
//! cut back to the file's last whole frame, so what follows still reads.
//!
//! Bounded: the file is cut into segments of `max / (MAX_ROTATED + 1)`; when one is full it
//! becomes `FILE.1` (the older ones move up, and `FILE.MAX_ROTATED` is dropped), and a new
//! `FILE` starts with the header again, so every file replays on its own.

use super::format::{self, Header, MAGIC, WatchWire};
use super::reader;
use super::segments::{MAX_ROTATED, rotated, with_rotated};
use super::watch::Tap;
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::engine::events::Event;
use crate::engine::plan::CellId;
use crate::judge::stats::Board;
use crate::judge::watch::contention::{Change, Thresholds, Watch};
use crate::machine::host::HostSample;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};
use std::cell::RefCell;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a crash can lose at most: the batch is written at least this often.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Frames waiting for the writer: about a minute of a busy grid's rounds.
const QUEUE: usize = 4096;

/// A batch is written early when it grows past this.
const BATCH_BYTES: usize = 256 << 10;

/// When the rate is measured and said.
const RATE_AFTER: Duration = Duration::from_secs(60);

/// `--record-max`, within the room the recording's filesystem has: what is free, and what the
/// recording's files hold already (rotation deletes them in time). A bound past that room is
/// capped, and said on stderr; where the room cannot be read, the bound stands.
pub(crate) fn within_free_room(path: &Path, max: u64) -> u64 {
    let (_, dir) = crate::base::files::directory_of(path);
    let Some(free) = crate::platform::free_bytes(&dir) else {
        return max;
    };
    let held: u64 = with_rotated(path)
        .iter()
        .filter_map(|p| fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let room = free.saturating_add(held);
    if max <= room {
        return max;
    }
    crate::base::output::stderr(&format!(
        "stream-top: --record-max {} is more than the {} free in {}: recording at most {}",
        format_bytes(max),
        format_bytes(free),
        dir.display(),
        format_bytes(room)
    ));
    room
}

/// Milliseconds since the epoch, now.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Where the recorder's lines go (stderr, or a test's list).
pub(crate) type Say = Box<dyn Fn(&str) + Send>;

/// Where the frames go: a file that rotates (or, in tests, a disk that fails).
pub(crate) trait Store: Send {
    /// Appends all of `bytes` or, on an error, leaves the store as it was.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Bytes in the current segment.
    fn segment_len(&self) -> u64;
    /// Starts a new segment, the current one kept as the newest older one.
    fn rotate(&mut self) -> io::Result<()>;
}

/// The recording's files.
struct FileStore {
    path: PathBuf,
    file: File,
    len: u64,
}

impl FileStore {
    /// Opens `path` for appending (a recording that exists goes on; a new one gets the magic).
    /// A torn tail, the bytes after the last whole frame, is cut first: appended after it, the
    /// new session's frames would read as part of the torn one. The bytes cut, besides.
    pub fn open(path: &Path) -> io::Result<(FileStore, u64)> {
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        let mut len = file.metadata()?.len();
        let mut cut = 0;
        if len == 0 {
            file.write_all(MAGIC)?;
            len = MAGIC.len() as u64;
        } else if let Some((end, whole)) = reader::end_of_frames(path)?
            && end < whole
        {
            file.set_len(end)?;
            (len, cut) = (end, whole - end);
        }
        let store = FileStore {
            path: path.to_path_buf(),
            file,
            len,
        };
        Ok((store, cut))
    }
}

impl Store for FileStore {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.file.write_all(bytes) {
            Ok(()) => {
                self.len += bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                // A partial write would be a frame with the next one's bytes in it.
                let _ = self.file.set_len(self.len);
                Err(e)
            }
        }
    }

    fn segment_len(&self) -> u64 {
        self.len
    }

    fn rotate(&mut self) -> io::Result<()> {
        let _ = fs::remove_file(rotated(&self.path, MAX_ROTATED));
        for n in (1..MAX_ROTATED).rev() {
            let from = rotated(&self.path, n);
            if from.exists() {
                fs::rename(&from, rotated(&self.path, n + 1))?;
            }
        }
        fs::rename(&self.path, rotated(&self.path, 1))?;
        *self = FileStore::open(&self.path)?.0;
        Ok(())
    }
}

/// The handle the watching loop holds. Dropping it writes what is queued and joins the thread.
pub struct Recorder {
    tx: Option<Sender<Vec<u8>>>,
    dropped: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
    /// A headless run's or a service's own contention watch (`with_watch`); the live monitor
    /// hands its watch's changes over instead (`watch`).
    tap: Option<RefCell<Tap>>,
}

impl Recorder {
    /// Starts recording into `path`, bounded by `max` bytes over all its files; `say` takes
    /// the recorder's lines (the start, the rate after a minute, drops).
    pub fn start(path: &Path, max: u64, header: &Header, say: Say) -> Result<Recorder> {
        let (store, cut) = FileStore::open(path)
            .map_err(|e| Error::usage(format!("--record {}: {e}", path.display())))?;
        if cut > 0 {
            say(&format!(
                "recording: cut a torn tail of {cut} bytes (the last frame of a run that \
                 crashed) off {} before appending",
                path.display()
            ));
        }
        Ok(Recorder::with_store(Box::new(store), max, header, say))
    }

    /// The recorder over any store (tests give one whose disk is full).
    fn with_store(store: Box<dyn Store>, max: u64, header: &Header, say: Say) -> Recorder {
        let (tx, rx) = bounded(QUEUE);
        let header_bytes = format::header_frame(now_ms(), header);
        let dropped = Arc::new(AtomicU64::new(0));
        let mut w = Writer {
            store,
            segment_max: (max / (MAX_ROTATED as u64 + 1)).max(4096),
            max,
            header: header_bytes.clone(),
            dropped: dropped.clone(),
            gapped: 0,
            failing: false,
            say,
            batch: Vec::new(),
            batch_frames: 0,
            written: 0,
        };
        let thread = std::thread::Builder::new()
            .name("stream-top-record".into())
            .spawn(move || w.run(rx))
            .ok();
        let r = Recorder {
            tx: Some(tx),
            dropped,
            thread,
            tap: None,
        };
        r.send(header_bytes);
        r
    }

    fn send(&self, frame: Vec<u8>) {
        if let Some(tx) = &self.tx
            && let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = tx.try_send(frame)
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Records an engine event at this moment (rounds and the events that change a screen).
    pub fn event(&self, ev: &Event) {
        if let Some(f) = format::event_frame(now_ms(), ev) {
            self.send(f);
        }
    }

    /// Records a host sample at this moment.
    pub fn host(&self, h: &HostSample) {
        self.send(format::host_frame(now_ms(), h));
    }

    /// Records a change of the contention watch at this moment.
    pub(crate) fn watch(&self, w: &WatchWire) {
        self.send(format::watch_frame(now_ms(), w));
    }

    /// Records the live monitor's watch's changes on cells, with its episodes as they stand
    /// (`wall` gives an instant's wall-clock time).
    pub(crate) fn changes(
        &self,
        watch: &Watch,
        changes: Vec<(CellId, Change)>,
        wall: &dyn Fn(Instant) -> SystemTime,
    ) {
        let ms = |t: Instant| super::watch::epoch_ms(wall(t));
        for (cell, c) in changes {
            if let Some(w) = WatchWire::of(watch, cell, c, &ms) {
                self.watch(&w);
            }
        }
    }

    /// Runs a contention watch of the recorder's own, whose changes are recorded (`judged`).
    pub(crate) fn with_watch(mut self, thresholds: Thresholds, window: usize) -> Recorder {
        self.tap = Some(RefCell::new(Tap::new(thresholds, window)));
        self
    }

    /// After `board` took an event: what the recorder's own watch (`with_watch`) makes of it,
    /// recorded. Nothing without one.
    pub fn judged(&self, ev: &Event, board: &Board) {
        let Some(tap) = &self.tap else {
            return;
        };
        for w in tap.borrow_mut().on_event(ev, board, Instant::now()) {
            self.watch(&w);
        }
    }

    /// Frames dropped so far (for `stream_top_record_dropped_total`).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Writer {
    store: Box<dyn Store>,
    segment_max: u64,
    max: u64,
    /// Written again at the start of each new file.
    header: Vec<u8>,
    dropped: Arc<AtomicU64>,
    /// Drops already said in a gap frame.
    gapped: u64,
    failing: bool,
    say: Say,
    batch: Vec<u8>,
    batch_frames: u64,
    /// Bytes written since the start, for the rate.
    written: u64,
}

impl Writer {
    fn run(&mut self, rx: Receiver<Vec<u8>>) {
        let started = Instant::now();
        let mut rate_said = false;
        let mut last_write = Instant::now();
        loop {
            let wait = FLUSH_EVERY.saturating_sub(last_write.elapsed());
            let end = match rx.recv_timeout(wait) {
                Ok(frame) => {
                    self.add(frame);
                    false
                }
                Err(RecvTimeoutError::Timeout) => false,
                Err(RecvTimeoutError::Disconnected) => true,
            };
            if end || self.batch.len() >= BATCH_BYTES || last_write.elapsed() >= FLUSH_EVERY {
                self.write();
                last_write = Instant::now();
            }
            if !rate_said && started.elapsed() >= RATE_AFTER {
                rate_said = true;
                let per_hour = self.written as f64 * 3600.0 / started.elapsed().as_secs_f64();
                (self.say)(&format!(
                    "recording {}/h: the bound of {} holds {:.1} hours",
                    format_bytes(per_hour as u64),
                    format_bytes(self.max),
                    self.max as f64 / per_hour.max(1.0)
                ));
            }
            if end {
                break;
            }
        }
    }

    /// Adds a frame to the batch, after a gap frame for drops not said yet, rotating first
    /// when the segment would grow past its bound.
    fn add(&mut self, frame: Vec<u8>) {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > self.gapped {
            let gap = format::gap_frame(now_ms(), dropped - self.gapped);
            self.gapped = dropped;
            self.push(gap);
        }
        self.push(frame);
    }

    fn push(&mut self, frame: Vec<u8>) {
        let grown = self.store.segment_len() + (self.batch.len() + frame.len()) as u64;
        if grown > self.segment_max
            && self.store.segment_len() + self.batch.len() as u64 > self.header.len() as u64 + 8
        {
            self.write();
            match self.store.rotate() {
                Ok(()) => {
                    let header = self.header.clone();
                    self.batch.extend_from_slice(&header);
                    self.batch_frames += 1;
                }
                Err(e) => (self.say)(&format!("recording: cannot rotate: {e}")),
            }
        }
        self.batch.extend_from_slice(&frame);
        self.batch_frames += 1;
    }

    /// Writes the batch; on a failure its frames are counted as dropped.
    fn write(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        match self.store.append(&self.batch) {
            Ok(()) => {
                self.written += self.batch.len() as u64;
                if self.failing {
                    self.failing = false;
                    (self.say)(&format!(
                        "recording: writing again ({} frames dropped so far)",
                        self.dropped.load(Ordering::Relaxed)
                    ));
                }
            }
            Err(e) => {
                let n = self.dropped.fetch_add(self.batch_frames, Ordering::Relaxed);
                if !self.failing {
                    self.failing = true;
                    (self.say)(&format!(
                        "recording: cannot write: {e}; dropping frames until it can ({} dropped)",
                        n + self.batch_frames
                    ));
                }
            }
        }
        self.batch.clear();
        self.batch_frames = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::record::format::{Body, header_frame};
    use crate::show::record::reader;
    use std::sync::Mutex;

    use crate::show::record::format::tests::header;

    type Said = Arc<Mutex<Vec<String>>>;

    fn lines() -> (Said, Say) {
        let said = Arc::new(Mutex::new(Vec::new()));
        let s = said.clone();
        (
            said,
            Box::new(move |l: &str| s.lock().unwrap().push(l.to_string())),
        )
    }

    /// A disk that takes nothing: every write fails as a full disk does.
    struct FullDisk;

    impl Store for FullDisk {
        fn append(&mut self, _: &[u8]) -> io::Result<()> {
            Err(io::Error::from_raw_os_error(28)) // ENOSPC
        }
        fn segment_len(&self) -> u64 {
            MAGIC.len() as u64
        }
        fn rotate(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_counts_its_drops_and_says_so_once() {
        let (said, say) = lines();
        let r = Recorder::with_store(Box::new(FullDisk), 1 << 20, &header(), say);
        for _ in 0..10 {
            r.event(&Event::Paused);
        }
        let counter = r.dropped.clone();
        drop(r);
        // The header and the ten events, all dropped, none lost without a count.
        assert_eq!(counter.load(Ordering::Relaxed), 11);
        let said = said.lock().unwrap();
        let drops: Vec<_> = said.iter().filter(|l| l.contains("cannot write")).collect();
        assert_eq!(drops.len(), 1, "{said:?}");
    }

    #[test]
    fn the_bound_rotates_the_files_and_drops_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec");
        let (_, say) = lines();
        let h = header();
        let max = 5 * (header_frame(0, &h).len() as u64 + 4096);
        let r = Recorder::start(&path, max, &h, say).unwrap();
        for _ in 0..3000 {
            r.event(&Event::Error("x".repeat(40)));
            // The writer takes its time: a full queue would drop, which is not what this tests.
            if r.tx.as_ref().is_some_and(|t| t.len() > QUEUE / 2) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        drop(r);
        let mut total = 0;
        for n in 1..=MAX_ROTATED {
            let p = rotated(&path, n);
            assert!(p.is_file(), "{} missing", p.display());
            total += fs::metadata(&p).unwrap().len();
        }
        assert!(!rotated(&path, MAX_ROTATED + 1).exists());
        total += fs::metadata(&path).unwrap().len();
        assert!(total <= max, "{total} > {max}");
        // Every file starts with the header, so each replays on its own.
        for p in with_rotated(&path) {
            let mut d = reader::Damage::default();
            let frames = reader::frames_of(&fs::read(&p).unwrap(), &mut d).unwrap();
            assert!(matches!(frames[0].body, Body::Header(_)), "{}", p.display());
            assert_eq!(d, reader::Damage::default());
        }
    }

    #[test]
    fn a_torn_tail_is_cut_before_a_new_session_is_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec");
        let h = header();
        let r = Recorder::start(&path, 1 << 20, &h, lines().1).unwrap();
        r.event(&Event::Paused);
        drop(r);
        // The first half of a frame, as a crash leaves it.
        let torn = format::gap_frame(now_ms(), 1);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&torn[..torn.len() / 2]).unwrap();
        drop(f);
        let (said, say) = lines();
        let r = Recorder::start(&path, 1 << 20, &h, say).unwrap();
        r.event(&Event::Resumed);
        drop(r);
        let cut = format!("cut a torn tail of {} bytes", torn.len() / 2);
        assert!(said.lock().unwrap()[0].contains(&cut), "{said:?}");
        let mut d = reader::Damage::default();
        let frames = reader::frames_of(&fs::read(&path).unwrap(), &mut d).unwrap();
        assert_eq!(d, reader::Damage::default());
        let headers = frames
            .iter()
            .filter(|f| matches!(f.body, Body::Header(_)))
            .count();
        assert_eq!(headers, 2, "both sessions read");
        use crate::show::record::format::EventWire;
        let events: Vec<_> = frames
            .iter()
            .filter_map(|f| match &f.body {
                Body::Event(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(events, [EventWire::Paused, EventWire::Resumed]);
    }
}
