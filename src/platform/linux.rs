//! Linux: `clock_gettime`, `sched_{get,set}affinity`, `sched_getcpu`, `mmap`/`madvise`,
//! `gethostname`, `sysconf`, `localtime_r`.

use std::io;
use std::mem;

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
pub(crate) fn pin_current_thread(cpu: usize) -> io::Result<()> {
    set_affinity(&single_cpu_set(cpu)?)
}

/// The calling thread pinned to one CPU until this is dropped, when its previous mask returns.
pub(crate) struct PinnedThread {
    old: libc::cpu_set_t,
}

impl PinnedThread {
    pub fn to(cpu: usize) -> io::Result<PinnedThread> {
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

/// An anonymous private mapping whose start is aligned as asked, unmapped on drop. Nothing is
/// touched: pages land where the first thread that writes them runs.
pub(crate) struct Mapping {
    map: *mut libc::c_void,
    map_len: usize,
    start: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value and unmapped once, in Drop; callers that share its
// memory between threads order their accesses themselves.
unsafe impl Send for Mapping {}
// SAFETY: as above; &Mapping only hands out the addresses.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// At least `len` bytes (rounded up to `align`), starting on an `align` boundary (a power
    /// of two, at least the page size).
    pub fn new(len: usize, align: usize) -> io::Result<Mapping> {
        debug_assert!(align.is_power_of_two());
        let len = len.max(1).div_ceil(align) * align;
        let map_len = len + align;
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let offset = (align - map as usize % align) % align;
        // SAFETY: offset < align and the mapping is len + align bytes long.
        let start = unsafe { (map as *mut u8).add(offset) };
        Ok(Mapping {
            map,
            map_len,
            start,
            len,
        })
    }

    /// The aligned start.
    pub(crate) fn as_mut_ptr(&self) -> *mut u8 {
        self.start
    }

    /// The whole mapping's address range, as /proc/self/smaps lists it.
    pub(crate) fn address_range(&self) -> (usize, usize) {
        (self.map as usize, self.map as usize + self.map_len)
    }

    /// Advises transparent huge pages for the aligned range (MADV_HUGEPAGE), or against them
    /// (MADV_NOHUGEPAGE). Advice that fails only means the kernel's default applies.
    pub(crate) fn advise_huge_pages(&mut self, on: bool) {
        let advice = if on {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: the range lies inside the mapping; madvise does not touch the memory.
        unsafe { libc::madvise(self.start as *mut libc::c_void, self.len, advice) };
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: map and map_len are exactly what mmap returned; nothing uses the memory after.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}

/// The host's name.
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it on
    // success.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    match std::str::from_utf8(&buf[..end]) {
        Ok(s) if ok && !s.is_empty() => Some(s.to_string()),
        _ => None,
    }
}

/// `USER_HZ`, the unit of /proc/PID/stat times.
pub(crate) fn clock_ticks_per_second() -> Option<u64> {
    // SAFETY: sysconf takes no pointers and only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).ok().filter(|&hz| hz > 0)
}

/// Hours, minutes and seconds of the local time at `unix_secs`.
pub(crate) fn local_hms(unix_secs: i64) -> Option<(u8, u8, u8)> {
    let t = unix_secs as libc::time_t;
    // SAFETY: an all-zero tm is valid plain data that localtime_r fills; both pointers are
    // valid for the call.
    let tm = unsafe {
        let mut tm: libc::tm = mem::zeroed();
        (!libc::localtime_r(&t, &mut tm).is_null()).then_some(tm)
    }?;
    Some((tm.tm_hour as u8, tm.tm_min as u8, tm.tm_sec as u8))
}
