//! Why a first touch goes in steps. Mapping arrays costs a memory cgroup nothing: each page
//! is charged when it is first written. Sizing checked the cgroup's room once, before anything
//! was mapped, but another process in the same cgroup (a second stream-top started at the same
//! moment) can take that room meanwhile, and past the limit the OOM killer ends the run without
//! a word and without what it measured. So a first touch goes in steps and reads the cgroup's
//! room again before each: a step takes a quarter of the room above `RESERVE` (large while the
//! limit is far, smaller as it nears, never under `STEP_BYTES`), and one that would leave less
//! than `RESERVE` is not taken: the caller fails the cell with the reason instead, so the run
//! keeps the cells it finished and says why this one did not run.
//!
//! Instances in one cgroup also take turns to touch: a lock file per cgroup (an advisory
//! `flock`, under `$XDG_RUNTIME_DIR` or the temp dir) is held for the length of a first touch.
//! Two runs started together then do not each take half the room and both stop short: the
//! second touches after the first, and finds the room left (it fits, or stops at once). The
//! step check alone is what keeps the limit; the lock only makes the outcome the useful one,
//! and where it cannot be had (a read-only temp dir) the touch goes on without it.
//!
//! Without a memory limit the touch is one step, as before, and takes no lock.

use super::plan::{CGROUP_MARGIN_MIN, Layout};
use super::pool::{JobKind, PartitionedArrays, Pass, Pool};
use crate::base::error::Result;
use crate::base::units::format_bytes;
use crate::machine::cgroup::{Cgroup, MemoryRoom};
use std::collections::hash_map::DefaultHasher;
use std::fs::{File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The smallest step, bytes of the three arrays first touched, all threads together: a few
/// milliseconds of writing, so the room read before it is still the room after it.
const STEP_BYTES: u64 = 8 << 20;

/// A step takes at most this share of the room above the reserve: few steps (each a job of the
/// pool, with its barrier) while the limit is far, and instances stepping at the same moment
/// (where the lock could not be had) still fit together.
const STEP_SHARE: u64 = 4;

/// What a step must leave below the limit. Half the smallest margin sizing keeps
/// (`cgroup_margin`), so a run alone has the other half for its own heap, stacks and page
/// tables growing after sizing and is never stopped by itself.
const RESERVE: u64 = CGROUP_MARGIN_MIN / 2;

/// How often a touch waiting for another instance's looks at the stop flag.
const LOCK_POLL: Duration = Duration::from_millis(10);

/// Elements per step are whole 4 KiB pages of each array, so no page is split across steps.
const PAGE_ELEMS: usize = 4096 / 8;

/// The memory cgroup a first touch is checked against.
pub(crate) struct RoomGuard {
    cgroup: Cgroup,
    /// Whether a memory limit applied when the guard was made (else the touch is one step).
    limited: bool,
    /// The lock file instances in this cgroup take turns on; None without a memory cgroup.
    lock: Option<PathBuf>,
}

impl RoomGuard {
    /// The guard of this process's memory cgroup, found under `root` (`/`: the arrays are this
    /// process's real memory, whatever fixture the machine was described from).
    pub(crate) fn find(root: &Path) -> RoomGuard {
        let dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        RoomGuard::with_lock_dir(root, &dir)
    }

    /// As `find`, with the lock file in `dir`.
    fn with_lock_dir(root: &Path, dir: &Path) -> RoomGuard {
        let cgroup = Cgroup::find(root);
        let limited = cgroup.memory().is_some();
        let lock = cgroup.memory_group().map(|group| {
            let mut h = DefaultHasher::new();
            group.hash(&mut h);
            dir.join(format!("stream-top-touch-{:016x}.lock", h.finish()))
        });
        RoomGuard {
            cgroup,
            limited,
            lock,
        }
    }

    /// This cgroup's turn to touch: the lock file, locked (released when dropped), once no
    /// other instance holds it. None where there is no lock to take, it cannot be opened, or a
    /// stop came while waiting.
    fn turn(&self, stopping: &impl Fn() -> bool) -> Option<File> {
        let path = self.lock.as_ref().filter(|_| self.limited)?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .or_else(|_| File::open(path))
            .ok()?;
        loop {
            match file.try_lock() {
                Ok(()) => return Some(file),
                Err(std::fs::TryLockError::WouldBlock) if !stopping() => {
                    std::thread::sleep(LOCK_POLL)
                }
                Err(_) => return None,
            }
        }
    }

    /// How many bytes the next step may touch, to finish at least `want`: see [`allowance`].
    fn next_step(&self, want: u64) -> std::result::Result<u64, Refusal> {
        allowance(self.cgroup.memory(), want)
    }
}

/// What a working set's arrays may take now: the bytes the memory budget has left (what
/// sizing allowed, less the arrays kept) and the cgroup their first touch is checked against.
pub(crate) struct Headroom<'a> {
    pub(crate) budget_left: u64,
    pub(crate) guard: &'a RoomGuard,
}

impl Headroom<'_> {
    /// Whether arrays of `bytes` may be mapped now.
    pub(crate) fn fits(&self, bytes: u64) -> bool {
        bytes <= self.budget_left
    }
}

/// A step of first touch the cgroup's limit does not allow, and why (the text the cell shows).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Refusal(String);

/// Why touching `bytes` more would bring the cgroup too close to its limit (less than
/// `RESERVE` left before the OOM killer); None when it fits or there is no limit.
fn refusal(room: Option<MemoryRoom>, bytes: u64) -> Option<String> {
    let m = room?;
    (m.room_before_oom() < bytes.saturating_add(RESERVE)).then(|| {
        format!(
            "stopped before the container's memory limit: {} in use of its {} (this and other \
             processes), and {} more of first touch would leave less than {}",
            format_bytes(m.usage.saturating_sub(m.reclaimable)),
            format_bytes(m.limit),
            format_bytes(bytes),
            format_bytes(RESERVE)
        )
    })
}

/// Bytes the next step may touch when `want` more are to be touched (`STEP_BYTES` or what is
/// left, if less): a quarter of the room above the reserve, at least `want`; the refusal when
/// not even `want` fits. Unbounded without a limit.
fn allowance(room: Option<MemoryRoom>, want: u64) -> std::result::Result<u64, Refusal> {
    let Some(m) = room else {
        return Ok(u64::MAX);
    };
    match refusal(Some(m), want) {
        Some(why) => Err(Refusal(why)),
        None => Ok(want.max(m.room_before_oom().saturating_sub(RESERVE) / STEP_SHARE)),
    }
}

/// The parts of a step: each of `parts` cut to its `per` elements from `offset` on (empty
/// where a part is shorter).
fn step_parts(parts: &[Range<usize>], offset: usize, per: usize) -> Vec<Range<usize>> {
    parts
        .iter()
        .map(|p| {
            let start = p.start.saturating_add(offset).min(p.end);
            start..start.saturating_add(per).min(p.end)
        })
        .collect()
}

/// First-touches the first `n` parts of `memory`'s layout, each by its own worker (the pool
/// has `n` active), in steps checked by `guard`. Returns the refusal when a step was not taken
/// (what was touched stays touched). A stop ends it at the next chunk, as any untimed job.
/// `progress` gets the elements of each array touched so far. The layout is left as it was.
pub(crate) fn touch_in_steps(
    pool: &mut Pool,
    n: usize,
    memory: &mut PartitionedArrays,
    guard: &RoomGuard,
    stopping: impl Fn() -> bool,
    mut progress: impl FnMut(u64),
) -> Result<Option<String>> {
    let layout = memory.layout().clone();
    let parts = &layout.parts[..n.min(layout.parts.len())];
    let longest = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    // Held to the end of the touch: another instance in the cgroup waits for it.
    let _turn = guard.turn(&stopping);
    let mut offset = 0;
    let mut done = 0u64;
    let mut result = Ok(None);
    while offset < longest {
        if stopping() {
            break;
        }
        let per = if guard.limited {
            let left: usize = parts.iter().map(|p| p.len().saturating_sub(offset)).sum();
            match guard.next_step((24 * left as u64).min(STEP_BYTES)) {
                Ok(bytes) => {
                    let elems = (bytes / 24 / parts.len().max(1) as u64).min(longest as u64);
                    (elems as usize / PAGE_ELEMS).max(1) * PAGE_ELEMS
                }
                Err(Refusal(why)) => {
                    result = Ok(Some(why));
                    break;
                }
            }
        } else {
            longest
        };
        let step = Layout {
            len: layout.len,
            parts: step_parts(parts, offset, per),
        };
        let elems: usize = step.parts.iter().map(|p| p.len()).sum();
        if let Err(e) = memory.set_layout(step).and_then(|()| {
            pool.run(n, JobKind::Touch, memory, 0, Pass::NONE, |e| {
                progress(done + e)
            })
        }) {
            result = Err(e);
            break;
        }
        done += elems as u64;
        offset += per;
    }
    memory.set_layout(layout)?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const MIB: u64 = 1 << 20;

    fn room(limit: u64, usage: u64, reclaimable: u64) -> Option<MemoryRoom> {
        Some(MemoryRoom {
            limit,
            usage,
            reclaimable,
        })
    }

    #[test]
    fn a_step_is_refused_when_it_would_leave_less_than_the_reserve() {
        // No limit: anything goes.
        assert_eq!(refusal(None, 1 << 40), None);
        // 400 MiB limit, 300 MiB in use: 100 MiB left; a 16 MiB step leaves 84.
        assert_eq!(refusal(room(400 * MIB, 300 * MIB, 0), 16 * MIB), None);
        // 375 MiB in use: 25 MiB left; 16 more would leave 9, under the 16 MiB reserve.
        let why = refusal(room(400 * MIB, 375 * MIB, 0), 16 * MIB).unwrap();
        assert_eq!(
            why,
            "stopped before the container's memory limit: 375 MiB in use of its 400 MiB (this \
             and other processes), and 16 MiB more of first touch would leave less than 16 MiB"
        );
        // The same usage, but 100 MiB of it page cache the kernel drops first: it fits.
        assert_eq!(
            refusal(room(400 * MIB, 375 * MIB, 100 * MIB), 16 * MIB),
            None
        );
        // Over the limit already (v1 can briefly be): refused, no underflow.
        assert!(refusal(room(400 * MIB, 410 * MIB, 0), 0).is_some());
    }

    #[test]
    fn steps_take_a_quarter_of_the_room_above_the_reserve_and_shrink_near_the_limit() {
        assert_eq!(allowance(None, STEP_BYTES), Ok(u64::MAX));
        // 400 MiB limit, 16 MiB in use: (384 - 16) / 4 = 92 MiB.
        assert_eq!(
            allowance(room(400 * MIB, 16 * MIB, 0), STEP_BYTES),
            Ok(92 * MIB)
        );
        // 30 MiB left: the smallest step, which leaves 22.
        assert_eq!(
            allowance(room(400 * MIB, 370 * MIB, 0), STEP_BYTES),
            Ok(STEP_BYTES)
        );
        // 20 MiB left: a smallest step would leave 12, under the reserve; 4 MiB still fits.
        assert!(allowance(room(400 * MIB, 380 * MIB, 0), STEP_BYTES).is_err());
        assert_eq!(
            allowance(room(400 * MIB, 380 * MIB, 0), 4 * MIB),
            Ok(4 * MIB)
        );
    }

    #[test]
    fn a_run_alone_is_never_stopped_by_its_own_arrays() {
        use crate::engine::plan::cgroup_margin;
        // Arrays sized to all the budget sizing allows, touched in steps, with the process's
        // own memory grown by up to half the margin since: the last step still fits.
        for room0 in [40 * MIB, 200 * MIB, 390 * MIB, 8 << 30] {
            let margin = cgroup_margin(room0);
            let arrays = room0 - margin;
            let grown = margin / 2 - 1;
            let limit = 16 << 30;
            let used_before_last = limit - room0 + arrays - STEP_BYTES + grown;
            let m = room(limit, used_before_last, 0);
            assert_eq!(refusal(m, STEP_BYTES), None, "room {room0}");
        }
    }

    #[test]
    fn the_guard_reads_the_room_of_the_fixtures_cgroup_each_time() {
        // cgroup-v1: 400 MiB hierarchical limit, 10 MiB in use.
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cgroup-v1");
        let dir = tempfile::tempdir().unwrap();
        copy(&fixture, dir.path());
        let guard = RoomGuard::find(dir.path());
        assert!(guard.limited);
        // 390 MiB left: a step of 300 MiB fits, and a small one may take (390 - 16) / 4.
        assert_eq!(guard.next_step(300 * MIB), Ok(300 * MIB));
        assert_eq!(guard.next_step(8 * MIB), Ok((390 * MIB - RESERVE) / 4));
        // Another process takes 300 MiB: the same step is now refused, read afresh.
        let usage = dir
            .path()
            .join("sys/fs/cgroup/memory/memory.usage_in_bytes");
        fs::write(&usage, format!("{}\n", 310 * MIB)).unwrap();
        let Refusal(why) = guard.next_step(300 * MIB).unwrap_err();
        assert!(why.contains("310 MiB in use of its 400 MiB"), "{why}");
        // No cgroup at all: no limit, one step.
        let none = RoomGuard::find(&dir.path().join("nowhere"));
        assert!(!none.limited);
        assert_eq!(none.next_step(1 << 40), Ok(u64::MAX));
    }

    #[test]
    fn instances_in_one_cgroup_take_turns_on_one_lock_file() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cgroup-v1");
        let locks = tempfile::tempdir().unwrap();
        let a = RoomGuard::with_lock_dir(&fixture, locks.path());
        let b = RoomGuard::with_lock_dir(&fixture, locks.path());
        assert_eq!(a.lock, b.lock);
        let held = a.turn(&|| false).expect("the first turn");
        // While one holds it, the other waits: here it is told to stop, and gets no turn.
        assert!(b.turn(&|| true).is_none());
        drop(held);
        assert!(b.turn(&|| true).is_some());
        // Without a memory cgroup there is nothing to take turns on.
        let none = RoomGuard::with_lock_dir(&locks.path().join("nowhere"), locks.path());
        assert!(none.lock.is_none() && none.turn(&|| false).is_none());
    }

    #[test]
    fn steps_cover_every_part_once_in_page_sized_runs() {
        let parts = [0..5000, 5000..6000, 6000..6000];
        let mut seen = vec![0u8; 6000];
        // Steps of varying length, as the room allows.
        let mut offset = 0;
        for per in [PAGE_ELEMS, 4 * PAGE_ELEMS, 2 * PAGE_ELEMS, 8 * PAGE_ELEMS] {
            for r in step_parts(&parts, offset, per) {
                assert!(r.len() <= per);
                seen[r].iter_mut().for_each(|s| *s += 1);
            }
            offset += per;
        }
        assert!(seen.iter().all(|&s| s == 1));
    }

    fn copy(from: &Path, to: &Path) {
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                fs::create_dir_all(&target).unwrap();
                copy(&entry.path(), &target);
            } else {
                fs::copy(entry.path(), &target).unwrap();
            }
        }
    }
}
