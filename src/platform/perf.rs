//! Linux: counters of the calling thread through `perf_event_open(2)`, read as one group, and
//! the thread's involuntary context switches through `getrusage(RUSAGE_THREAD)`.
//!
//! A group is opened on the calling thread (pid 0) on whatever CPU it runs (cpu -1), enabled
//! from the start and read with `PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING`,
//! so one `read` gives every value of the group and the times needed to scale them when the
//! PMU multiplexed the group with others. Reading allocates nothing.

use super::{GroupReading, MAX_GROUP, PerfEvent, PerfRefusal};
use perf_event_open_sys as sys;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use sys::bindings as b;

/// Counters of the calling thread, read together (the first descriptor leads the group).
#[derive(Debug)]
pub(crate) struct PerfGroup {
    fds: Vec<OwnedFd>,
}

fn attr_of(event: PerfEvent, kernel: bool) -> b::perf_event_attr {
    let (type_, config) = match event {
        PerfEvent::TaskClock => (b::PERF_TYPE_SOFTWARE, b::PERF_COUNT_SW_TASK_CLOCK as u64),
        PerfEvent::PageFaults => (b::PERF_TYPE_SOFTWARE, b::PERF_COUNT_SW_PAGE_FAULTS as u64),
        PerfEvent::Migrations => (
            b::PERF_TYPE_SOFTWARE,
            b::PERF_COUNT_SW_CPU_MIGRATIONS as u64,
        ),
        PerfEvent::Cycles => (b::PERF_TYPE_HARDWARE, b::PERF_COUNT_HW_CPU_CYCLES as u64),
        PerfEvent::Instructions => (b::PERF_TYPE_HARDWARE, b::PERF_COUNT_HW_INSTRUCTIONS as u64),
        // The generic last-level-cache read-miss event (`LLC-load-misses`), where the PMU
        // driver maps one.
        PerfEvent::LlcReadMisses => (
            b::PERF_TYPE_HW_CACHE,
            b::PERF_COUNT_HW_CACHE_LL as u64
                | (b::PERF_COUNT_HW_CACHE_OP_READ as u64) << 8
                | (b::PERF_COUNT_HW_CACHE_RESULT_MISS as u64) << 16,
        ),
    };
    let mut attr = b::perf_event_attr::default();
    attr.type_ = type_;
    attr.size = std::mem::size_of::<b::perf_event_attr>() as u32;
    attr.config = config;
    attr.read_format = (b::PERF_FORMAT_GROUP
        | b::PERF_FORMAT_TOTAL_TIME_ENABLED
        | b::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;
    attr.set_disabled(0);
    attr.set_exclude_kernel(u64::from(!kernel));
    attr.set_exclude_hv(1);
    attr
}

/// The refusal an errno stands for.
fn refusal(e: &io::Error) -> PerfRefusal {
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV) => PerfRefusal::NoSuchEvent,
        Some(libc::EACCES) => PerfRefusal::Paranoid,
        Some(libc::EPERM) => PerfRefusal::NotPermitted,
        Some(libc::ENOSYS) => PerfRefusal::NoSyscall,
        _ => PerfRefusal::Other(e.to_string()),
    }
}

impl PerfGroup {
    /// Opens `events` (at most [`MAX_GROUP`]) as one group on the calling thread, counting
    /// user space only unless `kernel` (which needs CAP_PERFMON or kernel.perf_event_paranoid
    /// ≤ 1). The first event that is refused is returned with the reason.
    pub(crate) fn open(
        events: &[PerfEvent],
        kernel: bool,
    ) -> Result<PerfGroup, (PerfEvent, PerfRefusal)> {
        assert!(!events.is_empty() && events.len() <= MAX_GROUP);
        let mut fds: Vec<OwnedFd> = Vec::with_capacity(events.len());
        for &event in events {
            let mut attr = attr_of(event, kernel);
            let group_fd = fds.first().map_or(-1, |l| l.as_raw_fd());
            // SAFETY: attr is a fully initialised perf_event_attr whose size field is its own
            // size; pid 0 / cpu -1 count the calling thread anywhere; group_fd is -1 or a
            // descriptor we opened and still own.
            let fd = unsafe {
                sys::perf_event_open(
                    &mut attr,
                    0,
                    -1,
                    group_fd,
                    b::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
                )
            };
            if fd < 0 {
                return Err((event, refusal(&io::Error::last_os_error())));
            }
            // SAFETY: fd is a new descriptor that nothing else owns.
            fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        Ok(PerfGroup { fds })
    }

    /// The group's counts since it was opened, in the order of the events it was opened with.
    pub(crate) fn read(&self) -> io::Result<GroupReading> {
        // nr, time_enabled, time_running, then one value per event.
        let mut buf = [0u64; 3 + MAX_GROUP];
        let want = (3 + self.fds.len()) * 8;
        // SAFETY: buf is valid for writes of its whole size, which is at least `want` bytes.
        let n = unsafe {
            libc::read(
                self.fds[0].as_raw_fd(),
                buf.as_mut_ptr().cast(),
                std::mem::size_of_val(&buf),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n as usize != want || buf[0] as usize != self.fds.len() {
            return Err(io::Error::other(format!(
                "a counter group of {} read {n} bytes for {} events",
                self.fds.len(),
                buf[0]
            )));
        }
        let mut values = [0u64; MAX_GROUP];
        values[..self.fds.len()].copy_from_slice(&buf[3..3 + self.fds.len()]);
        Ok(GroupReading {
            enabled_ns: buf[1],
            running_ns: buf[2],
            values,
        })
    }
}

/// The calling thread's involuntary context switches so far (it was preempted, not blocked).
pub(crate) fn involuntary_switches() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid rusage to write into; RUSAGE_THREAD is the calling thread.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (rc == 0).then_some(ru.ru_nivcsw as u64)
}

/// Runs the calling thread under SCHED_FIFO at `priority` (1..=99), or back under SCHED_OTHER
/// with 0. Needs CAP_SYS_NICE (or root) for a real-time class.
pub fn set_realtime_priority(priority: u8) -> io::Result<()> {
    let policy = if priority == 0 {
        libc::SCHED_OTHER
    } else {
        libc::SCHED_FIFO
    };
    // SAFETY: sched_param is plain data, valid all zero; musl's has sporadic-server fields that
    // glibc's lacks, so it is built field by field rather than as a literal.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = i32::from(priority);
    // The system call, not libc's wrapper: musl's wrapper only answers ENOSYS (the call is per
    // thread, POSIX's is per process), glibc's passes straight through.
    // SAFETY: param is a valid sched_param that outlives the call; pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setscheduler, 0, policy, &raw const param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_map_to_refusals_a_user_can_act_on() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(refusal(&e(libc::ENOENT)), PerfRefusal::NoSuchEvent);
        assert_eq!(refusal(&e(libc::EOPNOTSUPP)), PerfRefusal::NoSuchEvent);
        assert_eq!(refusal(&e(libc::ENODEV)), PerfRefusal::NoSuchEvent);
        assert_eq!(refusal(&e(libc::EACCES)), PerfRefusal::Paranoid);
        assert_eq!(refusal(&e(libc::EPERM)), PerfRefusal::NotPermitted);
        assert_eq!(refusal(&e(libc::ENOSYS)), PerfRefusal::NoSyscall);
        assert!(matches!(refusal(&e(libc::EMFILE)), PerfRefusal::Other(_)));
    }

    #[test]
    fn a_software_group_counts_this_thread_and_reads_without_multiplexing() {
        // Software events count on every kernel that has perf_event_open; a sandbox that
        // refuses the call has nothing to test here.
        let Ok(g) = PerfGroup::open(&[PerfEvent::TaskClock, PerfEvent::PageFaults], false) else {
            return;
        };
        let a = g.read().unwrap();
        let v: Vec<u64> = (0..1 << 22).collect();
        std::hint::black_box(&v);
        let b = g.read().unwrap();
        assert!(b.values[0] > a.values[0], "task clock moves: {a:?} {b:?}");
        assert!(
            b.values[1] > a.values[1],
            "16 MiB of new pages fault: {a:?} {b:?}"
        );
        // Software events are never multiplexed.
        assert_eq!(b.enabled_ns, b.running_ns);
    }

    #[test]
    fn a_thread_can_go_back_to_the_normal_class_without_privileges() {
        // SCHED_OTHER at priority 0 needs no capability, so this fails only where the call
        // itself is missing (as musl's wrapper is).
        std::thread::spawn(|| set_realtime_priority(0))
            .join()
            .unwrap()
            .unwrap();
    }

    #[test]
    fn involuntary_switches_are_read() {
        assert!(involuntary_switches().is_some());
    }
}
