//! What Linux and macOS share through POSIX: anonymous mappings, the host's name, `sysconf`,
//! `localtime_r`, `getloadavg`. Each OS module adds what differs (clock, placement, advice).

use std::io;
use std::mem;

/// An anonymous private mapping whose start is aligned as asked, unmapped on drop. Nothing is
/// touched: pages land where the first thread that writes them runs.
pub struct Mapping {
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
                libc::MAP_PRIVATE | libc::MAP_ANON | super::os::MAP_EXTRA,
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
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.start
    }

    /// The whole mapping's address range, as /proc/self/smaps lists it.
    fn address_range(&self) -> (usize, usize) {
        (self.map as usize, self.map as usize + self.map_len)
    }

    /// Advises transparent huge pages for the aligned range, or against them, where the OS has
    /// such advice (Linux); elsewhere nothing happens. Advice that
    /// fails only means the kernel's default applies.
    pub fn advise_huge_pages(&mut self, on: bool) {
        super::os::advise_huge_pages(self.start, self.len, on);
    }

    /// Takes the aligned range's pages from `nodes` only, or round-robin across them
    /// (`interleave`), where the OS has a NUMA API (Linux); an error elsewhere. Call it before
    /// anything touches the range.
    pub fn bind(&self, nodes: &[usize], interleave: bool) -> io::Result<()> {
        super::os::bind_range(self.start, self.len, nodes, interleave)
    }

    /// Bytes of the aligned range that sit on transparent huge pages now, or `None` where the
    /// OS has none (macOS) or does not say.
    pub(crate) fn huge_page_bytes(&self) -> Option<u64> {
        super::os::huge_page_bytes(self.address_range()).map(|b| b.min(self.len as u64))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: map and map_len are exactly what mmap returned; nothing uses the memory after.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}

/// The host's name.
pub(crate) fn hostname() -> Option<String> {
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

/// The base page size, bytes (4 KiB on x86-64; 4, 16 or 64 KiB on aarch64).
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf takes no pointers and only reads a configuration value.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

/// `USER_HZ`, the unit of /proc/PID/stat times.
pub(crate) fn clock_ticks_per_second() -> Option<u64> {
    // SAFETY: sysconf takes no pointers and only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).ok().filter(|&hz| hz > 0)
}

/// Hours, minutes and seconds of the local time at `unix_secs`.
pub(crate) fn local_hms(unix_secs: i64) -> Option<(u8, u8, u8)> {
    // The cast's type is the one localtime_r takes: naming libc::time_t warns on musl, whose
    // libc crate marks it for widening on 32-bit targets.
    let t = unix_secs as _;
    // SAFETY: an all-zero tm is valid plain data that localtime_r fills; both pointers are
    // valid for the call.
    let tm = unsafe {
        let mut tm: libc::tm = mem::zeroed();
        (!libc::localtime_r(&t, &mut tm).is_null()).then_some(tm)
    }?;
    Some((tm.tm_hour as u8, tm.tm_min as u8, tm.tm_sec as u8))
}

/// The 1, 5 and 15 minute load averages.
pub(crate) fn load_average() -> Option<[f64; 3]> {
    let mut load = [0.0f64; 3];
    // SAFETY: the buffer holds the three doubles asked for.
    let n = unsafe { libc::getloadavg(load.as_mut_ptr(), 3) };
    (n == 3).then_some(load)
}

/// Bytes an unprivileged process may still write on the filesystem that holds `path`
/// (`statvfs`: available blocks times the fragment size); None when it cannot be read.
pub(crate) fn free_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is valid plain data; the name is NUL-terminated and both
    // pointers are valid for the call, which only fills the struct.
    let st = unsafe {
        let mut st: libc::statvfs = mem::zeroed();
        (libc::statvfs(name.as_ptr(), &mut st) == 0).then_some(st)
    }?;
    // The block count is 64 bits on Linux and 32 on macOS: one conversion for both.
    #[allow(clippy::useless_conversion)]
    let (blocks, size) = (u64::from(st.f_bavail), u64::from(st.f_frsize));
    blocks.checked_mul(size)
}
