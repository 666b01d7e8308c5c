//! Every call into the operating system, behind one interface: the clock, where a thread runs
//! and may run, anonymous memory and its advice, the host's name, the local time. The rest of
//! the crate names neither `libc::` nor `target_os`; a platform that lacks something says so
//! through `None` or an error, never through a made-up value.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;

pub(crate) use os::{
    Mapping, PinnedThread, allowed_cpus, clock_ticks_per_second, current_cpu, hostname, local_hms,
    now_ns, pin_current_thread,
};

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
        let allowed = allowed_cpus().expect("the affinity mask is readable");
        assert!(!allowed.is_empty());
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_pinned_and_is_let_go_after() {
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
    }

    #[test]
    fn names_and_times_are_read() {
        assert!(hostname().is_some_and(|h| !h.is_empty()));
        assert!(clock_ticks_per_second().is_some_and(|hz| hz > 0));
        let (h, m, s) = local_hms(0).unwrap();
        assert!(h < 24 && m < 60 && s < 61);
    }
}
