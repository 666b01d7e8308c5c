//! Every call into the operating system, behind one interface: the clock, where a thread runs
//! and may run, anonymous memory and its advice, the NUMA node its pages sit on or are bound to, the host's name, the local time, and on macOS
//! the `sysctl` values, VM counters, process times and `system_profiler`'s memory listing the
//! machine readers build on. The rest
//! of the crate names neither `libc::` nor `target_os`; a platform that lacks something says so
//! through `None` or an error, never through a made-up value.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("stream-top runs on Linux and macOS");

#[cfg(target_os = "linux")]
mod perf;
mod posix;
mod process;
mod readings;
pub mod signals;
pub use signals::{Signals, signal_name};

pub(crate) use os::{
    PerfGroup, PinnedThread, allowed_cpus, current_cpu, involuntary_switches, memory_profile,
    move_pages_to, now_ns, page_nodes, process_times, sysctl_bytes, vm_counters,
};
pub use os::{pin_current_thread, set_realtime_priority};
pub use posix::Mapping;
pub(crate) use posix::free_bytes;
pub(crate) use posix::{clock_ticks_per_second, hostname, load_average, local_hms, page_size};
pub use process::{
    die_with_parent, open_files_limit, process_alive, send_signal, stdout_closed_at_start,
    watch_parent,
};
pub(crate) use readings::{
    GroupReading, MAX_GROUP, PerfEvent, PerfRefusal, ProcessTimes, VmCounters,
};

/// Whether threads can be pinned to CPUs on this OS. Where they cannot (macOS), "pinning"
/// raises the thread to the highest quality-of-service class instead: see [`PLACEMENT`].
pub(crate) const HAS_AFFINITY: bool = os::HAS_AFFINITY;

/// Where the OS has no transparent huge pages (macOS), saying so for reports.
pub(crate) const HUGE_PAGES_NOTE: Option<&str> = os::HUGE_PAGES_NOTE;

/// Where the OS has no NUMA API (macOS), saying so: `--membind` and `--interleave` are refused
/// there, and where pages sit is unknown.
pub(crate) const NUMA_NOTE: Option<&str> = os::NUMA_NOTE;

/// How `--pin spread|compact` places a thread on this OS, in words for reports.
pub(crate) const PLACEMENT: &str = os::PLACEMENT;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_moves_forward() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a && a > 0);
    }

    #[test]
    fn this_process_may_run_somewhere() {
        let allowed = allowed_cpus();
        assert_eq!(
            allowed.is_some(),
            HAS_AFFINITY,
            "the affinity mask is readable"
        );
        assert!(allowed.is_none_or(|a| !a.is_empty()));
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_pinned_and_is_let_go_after() {
        if !HAS_AFFINITY {
            // Only the quality of service changes: it must be settable and restorable.
            std::thread::spawn(|| drop(PinnedThread::to(0).unwrap()))
                .join()
                .unwrap();
            assert_eq!(current_cpu(), None);
            return;
        }
        let cpu = allowed_cpus().unwrap()[0];
        std::thread::spawn(move || {
            let before = allowed_cpus().unwrap();
            {
                let _pin = PinnedThread::to(cpu).unwrap();
                assert_eq!(allowed_cpus().unwrap(), vec![cpu]);
                assert_eq!(current_cpu(), Some(cpu));
            }
            assert_eq!(allowed_cpus().unwrap(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_mapping_is_aligned_writable_and_advisable() {
        let mut m = Mapping::new(3 << 20, 2 << 20).unwrap();
        assert_eq!(m.as_mut_ptr() as usize % (2 << 20), 0);
        m.advise_huge_pages(true);
        // SAFETY: the mapping holds at least 3 MiB.
        unsafe { *m.as_mut_ptr().add((3 << 20) - 1) = 7 };
        // SAFETY: as above.
        assert_eq!(unsafe { *m.as_mut_ptr().add((3 << 20) - 1) }, 7);
        // Linux reports the share on transparent huge pages; macOS has none (nor affinity).
        assert_eq!(m.huge_page_bytes().is_some(), HAS_AFFINITY);
    }

    #[test]
    fn pages_are_found_on_a_node_and_bound_where_the_os_has_numa() {
        let m = Mapping::new(4 * page_size(), page_size()).unwrap();
        let base = m.as_mut_ptr() as usize;
        if NUMA_NOTE.is_some() {
            assert!(page_nodes(&[base]).is_err());
            assert!(m.bind(&[0], false).is_err());
            return;
        }
        // Every machine has node 0; a node beyond the mask is refused. A kernel built without
        // NUMA, and qemu-user (which does not pass mbind on), answer ENOSYS: nothing to test.
        match m.bind(&[0], false) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => return,
            r => r.unwrap(),
        }
        assert!(m.bind(&[1 << 20], true).is_err());
        // SAFETY: the mapping holds 4 pages; only the first is touched.
        unsafe { *m.as_mut_ptr() = 1 };
        let pages = [base, base + page_size()];
        let nodes = page_nodes(&pages).unwrap();
        assert_eq!(nodes[0], 0, "a touched page bound to node 0 is on node 0");
        assert_eq!(nodes[1], -libc::ENOENT, "an untouched page is not present");
        assert_eq!(move_pages_to(&pages[..1], 0).unwrap(), vec![0]);
    }

    #[test]
    fn names_times_and_load_are_read() {
        assert!(hostname().is_some_and(|h| !h.is_empty()));
        assert!(clock_ticks_per_second().is_some_and(|hz| hz > 0));
        let (h, m, s) = local_hms(0).unwrap();
        assert!(h < 24 && m < 60 && s < 61);
        assert!(load_average().is_some_and(|l| l.iter().all(|v| *v >= 0.0)));
    }

    #[test]
    fn what_only_macos_has_is_absent_elsewhere_and_present_there() {
        let mac = PLACEMENT.contains("QoS");
        assert_eq!(mac, !HAS_AFFINITY);
        assert_eq!(sysctl_bytes("hw.memsize").is_some(), mac);
        assert_eq!(vm_counters().is_some(), mac);
        assert_eq!(process_times(std::process::id()).is_some(), mac);
        assert_eq!(memory_profile().is_some(), mac);
    }
}
