//! macOS: `clock_gettime_nsec_np(CLOCK_UPTIME_RAW)`, quality-of-service classes instead of
//! affinity, `sysctlbyname`, `host_statistics64`, and `proc_pidinfo` for other processes.
//!
//! macOS has no thread affinity and does not tell a thread which CPU it is on, so
//! [`current_cpu`] is `None` and "pinning" raises the thread to the user-interactive QoS
//! class, which the scheduler keeps on P-cores while there are free ones. Nor are there
//! transparent huge pages to advise (Apple Silicon pages are 16 KiB; superpages are not
//! available to anonymous user memory this way), so the advice is a no-op and the huge-page
//! share is `None`.

use super::readings::{GroupReading, ProcessTime, ProcessTimes, VmCounters};
use std::ffi::CString;
use std::io;

pub(crate) const HAS_AFFINITY: bool = false;
pub(crate) const HUGE_PAGES_NOTE: Option<&str> =
    Some("not applicable on macOS (no transparent huge pages)");
pub(crate) const NUMA_NOTE: Option<&str> =
    Some("macOS has no NUMA API: pages cannot be bound to a node nor asked where they are");
pub(crate) const PLACEMENT: &str = "not controllable on macOS (no thread affinity): workers run at the \
user-interactive QoS class, which prefers P-cores, and the scheduler places them";

/// No extra mapping flags.
pub(crate) const MAP_EXTRA: libc::c_int = 0;

#[allow(non_camel_case_types)]
type qos_class_t = libc::c_uint;
/// `QOS_CLASS_USER_INTERACTIVE` from <sys/qos.h>.
const QOS_CLASS_USER_INTERACTIVE: qos_class_t = 0x21;
/// `QOS_CLASS_DEFAULT`.
const QOS_CLASS_DEFAULT: qos_class_t = 0x15;
/// `QOS_CLASS_UNSPECIFIED`.
const QOS_CLASS_UNSPECIFIED: qos_class_t = 0;

// In libSystem, declared in <pthread/qos.h> and <time.h>; the libc crate does not bind them.
unsafe extern "C" {
    fn pthread_set_qos_class_self_np(
        qos: qos_class_t,
        relative_priority: libc::c_int,
    ) -> libc::c_int;
    fn pthread_get_qos_class_np(
        thread: libc::pthread_t,
        qos: *mut qos_class_t,
        relative_priority: *mut libc::c_int,
    ) -> libc::c_int;
    fn clock_gettime_nsec_np(clock: libc::clockid_t) -> u64;
    // <mach/mach_init.h> and <mach/mach_time.h>; the libc crate's bindings are deprecated.
    fn mach_host_self() -> libc::mach_port_t;
    fn mach_timebase_info(info: *mut MachTimebase) -> libc::c_int;
}

/// `mach_timebase_info_data_t`: mach absolute time units × numer / denom = ns.
#[repr(C)]
struct MachTimebase {
    numer: u32,
    denom: u32,
}

/// The host port, asked for once: every call hands out another send right.
fn host_port() -> libc::mach_port_t {
    static PORT: std::sync::OnceLock<libc::mach_port_t> = std::sync::OnceLock::new();
    // SAFETY: mach_host_self has no preconditions.
    *PORT.get_or_init(|| unsafe { mach_host_self() })
}

/// CLOCK_UPTIME_RAW in ns: mach_absolute_time in nanoseconds, not slewed, not counting sleep.
pub(crate) fn now_ns() -> u64 {
    // SAFETY: takes a clock id and returns a value; the clock exists on every macOS since 10.12.
    unsafe { clock_gettime_nsec_np(libc::CLOCK_UPTIME_RAW) }
}

/// macOS does not say which CPU a thread runs on.
pub(crate) fn current_cpu() -> Option<usize> {
    None
}

/// macOS has no affinity mask: every CPU may run every thread.
pub(crate) fn allowed_cpus() -> Option<Vec<usize>> {
    None
}

fn set_qos(qos: qos_class_t, relative: libc::c_int) -> io::Result<()> {
    // SAFETY: only changes the calling thread's scheduling class; the arguments are plain values.
    let rc = unsafe { pthread_set_qos_class_self_np(qos, relative) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// The calling thread's QoS class and relative priority.
fn qos_of_self() -> io::Result<(qos_class_t, libc::c_int)> {
    let mut qos: qos_class_t = QOS_CLASS_UNSPECIFIED;
    let mut relative: libc::c_int = 0;
    // SAFETY: both out-pointers are valid for the call; pthread_self is the calling thread.
    let rc = unsafe { pthread_get_qos_class_np(libc::pthread_self(), &mut qos, &mut relative) };
    if rc == 0 {
        Ok((qos, relative))
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// No CPU can be chosen: raises the calling thread to the user-interactive QoS class for good,
/// which is as close to "on a P-core" as macOS lets a program ask. `cpu` is not used.
pub fn pin_current_thread(_cpu: usize) -> io::Result<()> {
    set_qos(QOS_CLASS_USER_INTERACTIVE, 0)
}

/// The calling thread at the user-interactive QoS class until this is dropped, when its
/// previous class returns.
pub(crate) struct PinnedThread {
    old: (qos_class_t, libc::c_int),
}

impl PinnedThread {
    pub(crate) fn to(cpu: usize) -> io::Result<PinnedThread> {
        let old = qos_of_self()?;
        pin_current_thread(cpu)?;
        Ok(PinnedThread { old })
    }
}

impl Drop for PinnedThread {
    fn drop(&mut self) {
        let (qos, relative) = match self.old {
            (QOS_CLASS_UNSPECIFIED, _) => (QOS_CLASS_DEFAULT, 0),
            old => old,
        };
        let _ = set_qos(qos, relative);
    }
}

/// No `perf_event_open` on macOS: a group never opens, so nothing is ever read from one.
#[derive(Debug)]
pub(crate) struct PerfGroup {}

impl PerfGroup {
    /// Refuses every event: counters need Linux's perf_event_open.
    pub(crate) fn open(
        events: &[super::PerfEvent],
        _kernel: bool,
    ) -> Result<PerfGroup, (super::PerfEvent, super::PerfRefusal)> {
        match events.first() {
            Some(&e) => Err((e, super::PerfRefusal::NotLinux)),
            None => Ok(PerfGroup {}),
        }
    }

    pub(crate) fn read(&self) -> io::Result<GroupReading> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// macOS has no per-thread count of context switches (getrusage knows no RUSAGE_THREAD).
pub(crate) fn involuntary_switches() -> Option<u64> {
    None
}

/// Real-time scheduling classes are not offered here.
pub fn set_realtime_priority(_priority: u8) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// No transparent huge pages to advise on macOS.
pub(crate) fn advise_huge_pages(_start: *mut u8, _len: usize, _on: bool) {}

/// macOS has no NUMA API: where a page sits cannot be asked.
pub(crate) fn page_nodes(_pages: &[usize]) -> io::Result<Vec<i32>> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Nor can a page be moved.
pub(crate) fn move_pages_to(_pages: &[usize], _node: usize) -> io::Result<Vec<i32>> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Nor bound (the command line refuses `--membind` and `--interleave` here).
pub(crate) fn bind_range(
    _start: *mut u8,
    _len: usize,
    _nodes: &[usize],
    _interleave: bool,
) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Not applicable on macOS.
pub(crate) fn huge_page_bytes(_range: (usize, usize)) -> Option<u64> {
    None
}

/// The raw value of a `sysctl` by name (integers in native byte order, strings with their NUL,
/// structures as laid out in <sys/sysctl.h>), or `None` where it does not exist.
pub(crate) fn sysctl_bytes(name: &str) -> Option<Vec<u8>> {
    let name = CString::new(name).ok()?;
    let mut len: libc::size_t = 0;
    // SAFETY: a size query: no output buffer, a valid length pointer, no new value.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            std::ptr::null_mut(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || len == 0 {
        return None;
    }
    let mut buf = vec![0u8; len];
    // SAFETY: buf is valid for len bytes, which sysctlbyname fills and shortens len to.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr() as *mut libc::c_void,
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    buf.truncate(len);
    Some(buf)
}

/// What `system_profiler SPMemoryDataType` prints: the memory modules (one entry for the
/// memory in an Apple silicon package, each DIMM slot on an Intel Mac), or `None` where it
/// cannot run or fails. It takes about a second, so it is asked once per run.
pub(crate) fn memory_profile() -> Option<String> {
    let out = std::process::Command::new("/usr/sbin/system_profiler")
        .arg("SPMemoryDataType")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `host_statistics64(HOST_VM_INFO64)` and the VM page size.
pub(crate) fn vm_counters() -> Option<VmCounters> {
    // SAFETY: an all-zero vm_statistics64 is valid plain data for the kernel to fill; count says
    // how many integers it holds and comes back as how many were written.
    let (stats, rc) = unsafe {
        let mut stats: libc::vm_statistics64 = std::mem::zeroed();
        let mut count = libc::HOST_VM_INFO64_COUNT;
        let rc = libc::host_statistics64(
            host_port(),
            libc::HOST_VM_INFO64,
            &mut stats as *mut libc::vm_statistics64 as libc::host_info64_t,
            &mut count,
        );
        (stats, rc)
    };
    if rc != libc::KERN_SUCCESS {
        return None;
    }
    let page_size = sysctl_bytes("hw.pagesize")
        .and_then(|b| {
            b.get(..8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
        })
        .filter(|&p| p > 0)?;
    Some(VmCounters {
        page_size,
        // vm_stat's "Pages free": the kernel's free count includes the speculative pages.
        free: stats.free_count.saturating_sub(stats.speculative_count) as u64,
        active: stats.active_count as u64,
        inactive: stats.inactive_count as u64,
        speculative: stats.speculative_count as u64,
        purgeable: stats.purgeable_count as u64,
        wired: stats.wire_count as u64,
        compressor: stats.compressor_page_count as u64,
        swapins: stats.swapins,
        swapouts: stats.swapouts,
    })
}

/// CPU time of every process whose task information this user may read, except `exclude`.
pub(crate) fn process_times(exclude: u32) -> Option<ProcessTimes> {
    let mut timebase = MachTimebase { numer: 0, denom: 0 };
    // SAFETY: timebase is a valid out-pointer.
    if unsafe { mach_timebase_info(&mut timebase) } != 0 || timebase.denom == 0 {
        return None;
    }
    // SAFETY: a size query with no buffer.
    let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    let n = usize::try_from(n).ok()?;
    // Room for processes started between the two calls.
    let mut pids = vec![0 as libc::c_int; n + 64];
    let bytes = libc::c_int::try_from(pids.len() * size_of::<libc::c_int>()).ok()?;
    // SAFETY: pids is valid for `bytes` bytes; the call writes at most that many.
    let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr() as *mut libc::c_void, bytes) };
    pids.truncate(usize::try_from(got).ok()?.min(pids.len()));
    let mut out = ProcessTimes::default();
    for &pid in pids.iter().filter(|&&p| p > 0 && p as u32 != exclude) {
        // SAFETY: an all-zero proc_taskinfo is valid plain data; the size passed is its own.
        let (info, size) = unsafe {
            let mut info: libc::proc_taskinfo = std::mem::zeroed();
            let size = libc::proc_pidinfo(
                pid,
                libc::PROC_PIDTASKINFO,
                0,
                &mut info as *mut libc::proc_taskinfo as *mut libc::c_void,
                size_of::<libc::proc_taskinfo>() as libc::c_int,
            );
            (info, size)
        };
        if size as usize != size_of::<libc::proc_taskinfo>() {
            out.unreadable += 1;
            continue;
        }
        let mut name = [0u8; 256];
        // SAFETY: name is valid for its length; proc_name writes at most that many bytes.
        let len = unsafe { libc::proc_name(pid, name.as_mut_ptr() as *mut libc::c_void, 256) };
        let name = String::from_utf8_lossy(&name[..usize::try_from(len).unwrap_or(0).min(256)])
            .into_owned();
        // Task times are in mach absolute time units: ns × denom / numer.
        let ticks = info.pti_total_user as u128 + info.pti_total_system as u128;
        let cpu_ns = ticks * timebase.numer as u128 / timebase.denom as u128;
        out.readable.push(ProcessTime {
            pid: pid as u32,
            name,
            cpu_ns: u64::try_from(cpu_ns).unwrap_or(u64::MAX),
        });
    }
    Some(out)
}
