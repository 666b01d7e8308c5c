//! Linux: `clock_gettime`, `sched_{get,set}affinity`, `sched_getcpu`, `madvise`, and the
//! AnonHugePages of our own mappings from /proc/self/smaps.

use std::io;
use std::mem;

pub use super::perf::set_realtime_priority;
pub(crate) use super::perf::{GroupReading, MAX_GROUP, PerfGroup, involuntary_switches};

pub(crate) const HAS_AFFINITY: bool = true;
pub(crate) const HUGE_PAGES_NOTE: Option<&str> = None;
pub(crate) const PLACEMENT: &str = "pinned to one CPU per thread (sched_setaffinity)";

/// Mappings need no swap reservation: the arrays are written before they are read.
pub(crate) const MAP_EXTRA: libc::c_int = libc::MAP_NORESERVE;

/// CLOCK_MONOTONIC_RAW in ns: not slewed by NTP, the clock every stamp of a round uses.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write into; the clock id exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The CPU the calling thread runs on now, where the kernel says.
pub(crate) fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// The calling thread's affinity mask, or None where it cannot be read.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set, which sched_getaffinity fills for
    // the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = mem::zeroed();
        (libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then_some(set)
    }
}

fn set_affinity(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: set is a valid cpu_set_t of the size given; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPUs this thread may run on (a container's cpuset, `taskset`), or None where the mask
/// cannot be read.
pub(crate) fn allowed_cpus() -> Option<Vec<usize>> {
    let set = affinity()?;
    Some(
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: c < CPU_SETSIZE, the bounds of the set.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect(),
    )
}

fn single_cpu_set(cpu: usize) -> io::Result<libc::cpu_set_t> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is beyond the affinity mask"),
        ));
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set; cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        Ok(set)
    }
}

/// Pins the calling thread to `cpu` for good.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    set_affinity(&single_cpu_set(cpu)?)
}

/// The calling thread pinned to one CPU until this is dropped, when its previous mask returns.
pub(crate) struct PinnedThread {
    old: libc::cpu_set_t,
}

impl PinnedThread {
    pub(crate) fn to(cpu: usize) -> io::Result<PinnedThread> {
        let old = affinity().ok_or_else(io::Error::last_os_error)?;
        pin_current_thread(cpu)?;
        Ok(PinnedThread { old })
    }
}

impl Drop for PinnedThread {
    fn drop(&mut self) {
        let _ = set_affinity(&self.old);
    }
}

/// `sysctl` values are a macOS source; Linux has /proc/sys, which nothing here needs.
pub(crate) fn sysctl_bytes(_name: &str) -> Option<Vec<u8>> {
    None
}

/// Host VM counters come from /proc/meminfo and /proc/vmstat under the readers' root on Linux.
pub(crate) fn vm_counters() -> Option<crate::platform::VmCounters> {
    None
}

/// Process times come from /proc/PID/stat under the readers' root on Linux.
pub(crate) fn process_times(_exclude: u32) -> Option<crate::platform::ProcessTimes> {
    None
}

/// Advises transparent huge pages (MADV_HUGEPAGE) for the range, or against them
/// (MADV_NOHUGEPAGE).
pub(crate) fn advise_huge_pages(start: *mut u8, len: usize, on: bool) {
    let advice = if on {
        libc::MADV_HUGEPAGE
    } else {
        libc::MADV_NOHUGEPAGE
    };
    // SAFETY: the caller passes a range inside one of its mappings; madvise does not touch
    // the memory and a refusal only leaves the kernel's default.
    unsafe { libc::madvise(start as *mut libc::c_void, len, advice) };
}

/// AnonHugePages of our mappings inside `range`, from /proc/self/smaps.
pub(crate) fn huge_page_bytes(range: (usize, usize)) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    Some(anon_huge_in(&smaps, range))
}

/// AnonHugePages of the smaps entries that lie inside `range`.
fn anon_huge_in(smaps: &str, range: (usize, usize)) -> u64 {
    let mut inside = false;
    let mut total = 0;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((s, e)) = head.split_once('-')
            && let (Ok(s), Ok(e)) = (usize::from_str_radix(s, 16), usize::from_str_radix(e, 16))
        {
            inside = s >= range.0 && e <= range.1;
            continue;
        }
        if inside && let Some(rest) = line.strip_prefix("AnonHugePages:") {
            let kb: u64 = rest
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0);
            total += kb * 1024;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_anon_huge_pages_of_a_range() {
        let smaps = "7f0000000000-7f0000400000 rw-p 00000000 00:00 0\nRss: 4096 kB\nAnonHugePages:      2048 kB\n7f0000400000-7f0000600000 rw-p 00000000 00:00 0\nAnonHugePages:      2048 kB\n";
        assert_eq!(
            anon_huge_in(smaps, (0x7f0000000000, 0x7f0000400000)),
            2 << 20
        );
        assert_eq!(
            anon_huge_in(smaps, (0x7f0000000000, 0x7f0000600000)),
            4 << 20
        );
        assert_eq!(anon_huge_in(smaps, (0x1000, 0x2000)), 0);
    }
}
