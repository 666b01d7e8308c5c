//! Linux: `clock_gettime`, `sched_{get,set}affinity`, `sched_getcpu`, `madvise`, the
//! AnonHugePages of our own mappings from /proc/self/smaps, and the NUMA calls (`mbind`,
//! `move_pages`) as raw system calls: glibc leaves them to libnuma, which we do not link.

use std::io;
use std::mem;

pub use super::perf::set_realtime_priority;
pub(crate) use super::perf::{PerfGroup, involuntary_switches};

pub(crate) const HAS_AFFINITY: bool = true;
pub(crate) const HUGE_PAGES_NOTE: Option<&str> = None;
pub(crate) const PLACEMENT: &str = "pinned to one CPU per thread (sched_setaffinity)";
pub(crate) const NUMA_NOTE: Option<&str> = None;

/// move_pages(2) and mbind(2): move the pages only this process maps (<linux/mempolicy.h>; the
/// libc crate does not name it).
const MPOL_MF_MOVE: libc::c_int = 1 << 1;
/// Bits of the node masks handed to mbind(2): Linux supports at most 1024 nodes.
const NODE_MASK_BITS: usize = 1024;

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

/// `system_profiler` is macOS's; Linux lists its memory modules in SMBIOS, read under the root.
pub(crate) fn memory_profile() -> Option<String> {
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

/// The node each page (by address) sits on: move_pages(2) in query mode (no target nodes). An
/// entry is the node, or a negative errno for that page (-ENOENT: not present yet, -EFAULT: not
/// mapped). Nothing is read or written through the addresses.
pub(crate) fn page_nodes(pages: &[usize]) -> io::Result<Vec<i32>> {
    move_pages(pages, None)
}

/// Moves the pages (by address) to `node`, those mapped by this process only: move_pages(2).
/// Each entry of the result is the page's node afterwards, or a negative errno for that page.
pub(crate) fn move_pages_to(pages: &[usize], node: usize) -> io::Result<Vec<i32>> {
    let node = i32::try_from(node)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "no such node"))?;
    move_pages(pages, Some(node))
}

fn move_pages(pages: &[usize], node: Option<i32>) -> io::Result<Vec<i32>> {
    let mut status = vec![i32::MIN; pages.len()];
    if pages.is_empty() {
        return Ok(status);
    }
    let nodes = node.map(|n| vec![n; pages.len()]);
    let (nodes_ptr, flags) = match &nodes {
        Some(n) => (n.as_ptr(), MPOL_MF_MOVE),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: pid 0 is this process; `pages`, `nodes` (when given) and `status` hold
    // `pages.len()` entries each. The kernel only looks the addresses up in our page tables
    // (an unmapped one gets -EFAULT in its status) and keeps every page's contents.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::c_int,
            pages.len() as libc::c_ulong,
            pages.as_ptr() as *const *const libc::c_void,
            nodes_ptr,
            status.as_mut_ptr(),
            flags,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(status)
}

/// Sets the memory policy of a range that nothing has touched yet: its pages are taken from
/// `nodes` only (MPOL_BIND), or round-robin across them (MPOL_INTERLEAVE): mbind(2).
pub(crate) fn bind_range(
    start: *mut u8,
    len: usize,
    nodes: &[usize],
    interleave: bool,
) -> io::Result<()> {
    let mut mask = vec![0 as libc::c_ulong; NODE_MASK_BITS / libc::c_ulong::BITS as usize];
    for &n in nodes {
        let word = mask
            .get_mut(n / libc::c_ulong::BITS as usize)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("node {n} is beyond the mask"),
                )
            })?;
        *word |= 1 << (n % libc::c_ulong::BITS as usize);
    }
    let mode = if interleave {
        libc::MPOL_INTERLEAVE
    } else {
        libc::MPOL_BIND
    };
    // SAFETY: the caller passes a range of one of its own mappings; the mask holds
    // NODE_MASK_BITS bits (the kernel reads maxnode - 1 of them, hence the + 1, as libnuma
    // passes it). mbind changes only which node later faults take their pages from.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            start as *mut libc::c_void,
            len as libc::c_ulong,
            mode,
            mask.as_ptr(),
            (NODE_MASK_BITS + 1) as libc::c_ulong,
            0 as libc::c_uint,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
