//! What the OS calls return that the rest of the crate reads, the same on every OS: a
//! counter group's events, readings and refusals, the VM counters and the processes' CPU
//! times. Each OS's module fills them in.

/// An event a thread's counter group can count (`PerfGroup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PerfEvent {
    /// Time the thread was on a CPU, ns (software).
    TaskClock,
    /// Page faults (software; counted in user space too).
    PageFaults,
    /// Moves to another CPU (software; counted in the kernel only).
    Migrations,
    /// Core cycles (hardware).
    Cycles,
    /// Instructions retired (hardware).
    Instructions,
    /// Last-level-cache read misses, where the PMU driver names such an event (hardware).
    LlcReadMisses,
}

/// The most events one counter group holds.
pub(crate) const MAX_GROUP: usize = 4;

/// One read of a counter group: the raw counts (unscaled) and the group's enabled and running
/// times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct GroupReading {
    pub(crate) enabled_ns: u64,
    pub(crate) running_ns: u64,
    pub(crate) values: [u64; MAX_GROUP],
}

/// Why the OS refused a counter, for words a user can act on (each OS constructs only the
/// variants it can meet).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(dead_code)]
pub(crate) enum PerfRefusal {
    /// ENOENT, EOPNOTSUPP, ENODEV: the PMU has no such event, or there is no PMU (a VM that
    /// exposes none).
    NoSuchEvent,
    /// EACCES: kernel.perf_event_paranoid forbids it.
    Paranoid,
    /// EPERM: a seccomp filter or a security module forbids perf_event_open.
    NotPermitted,
    /// ENOSYS: the kernel has no perf_event_open.
    NoSyscall,
    /// The OS is not Linux.
    NotLinux,
    /// Anything else, as the OS words it.
    Other(String),
}

/// The VM counters of `host_statistics64(HOST_VM_INFO64)` that the host figures use (macOS),
/// counts in pages of `page_size` bytes as `vm_stat` prints them (`free` leaves out the
/// `speculative` pages the kernel's free count includes); `swapins` and `swapouts` are pages
/// since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VmCounters {
    pub(crate) page_size: u64,
    pub(crate) free: u64,
    pub(crate) active: u64,
    pub(crate) inactive: u64,
    pub(crate) speculative: u64,
    pub(crate) purgeable: u64,
    pub(crate) wired: u64,
    /// Pages the compressor occupies (holding compressed anonymous memory).
    pub(crate) compressor: u64,
    pub(crate) swapins: u64,
    pub(crate) swapouts: u64,
}

/// One process's CPU time so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcessTime {
    pub(crate) pid: u32,
    pub(crate) name: String,
    /// User plus system time, nanoseconds.
    pub(crate) cpu_ns: u64,
}

/// The processes whose CPU time could be read, and how many could not (another user's
/// processes need privileges on macOS).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProcessTimes {
    pub(crate) readable: Vec<ProcessTime>,
    pub(crate) unreadable: usize,
}
