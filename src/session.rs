//! From a validated command line to what runs: the machine read, the working sets sized, the
//! kernel chosen, the clock measured, and the plan and run description built.

use crate::cli::Config;
use crate::engine::kernel::Kernel;
use crate::engine::plan::{Grid, Plan, Schedule, size_sets};
use crate::engine::pool::allowed_cpus;
use crate::machine::clock::ClockEstimate;
use crate::machine::host::HostState;
use crate::machine::topology::Topology;
use crate::machine::vendor::VendorFigure;
use crate::report::model::RunInfo;

/// Everything a run needs before the engine starts.
pub struct Session {
    pub plan: Plan,
    pub info: RunInfo,
}

/// Errors a person caused (exit 2) and errors of the machine (exit 1) are told apart.
#[derive(Debug)]
pub enum SetupError {
    Usage(String),
    Machine(String),
}

impl Session {
    /// Reads the machine under `config.root`, sizes the sets and measures the clock. `schedule`
    /// says how the engine will walk the grid. Nothing is allocated here.
    pub fn prepare(config: &Config, schedule: Schedule) -> Result<Session, SetupError> {
        let topo = Topology::read(&config.root).map_err(SetupError::Machine)?;
        let host = HostState::read(&config.root).map_err(SetupError::Machine)?;
        let kernel = Kernel::resolve(config.kernel, config.stores)
            .map_err(|e| SetupError::Usage(e.to_string()))?;
        // Only the CPUs this process may run on (a container's cpuset, `taskset`) are used.
        let cpu_order = usable_order(topo.cpu_order(config.pin), allowed_cpus());
        let threads = config
            .thread_counts(cpu_order.len())
            .map_err(SetupError::Usage)?;
        let max_threads = threads.iter().copied().max().unwrap_or(1);
        let sets = size_sets(&config.sets, &topo, host.mem_available, max_threads)
            .map_err(SetupError::Usage)?;
        let clock = ClockEstimate::measure(cpu_order.first().copied());
        let vendor = VendorFigure::find(&config.root, config.vendor_gbs);
        let plan = Plan {
            grid: Grid { sets, threads },
            kernel,
            pin: config.pin,
            cpu_order,
            round_ms: config.round_ms,
            schedule,
            duty: config.duty,
            huge_pages: config.huge_pages,
        };
        let info = RunInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            command_line: command_line(),
            hostname: hostname(),
            started: crate::report::utc_now_string(),
            topology: topo,
            kernel,
            pin: config.pin,
            clock,
            vendor,
            host_start: host,
            rounds: config.rounds,
            round_ms: config.round_ms,
            duty: config.duty,
        };
        Ok(Session { plan, info })
    }
}

/// The pinning order restricted to the CPUs the process may use (all of it when the mask is
/// unknown or shares no CPU with the order, e.g. a fixture root).
pub fn usable_order(order: Vec<usize>, allowed: Option<Vec<usize>>) -> Vec<usize> {
    let Some(allowed) = allowed else {
        return order;
    };
    let usable: Vec<usize> = order
        .iter()
        .copied()
        .filter(|c| allowed.contains(c))
        .collect();
    if usable.is_empty() { order } else { usable }
}

/// The command line as given, quoted where a shell would need it.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$\\".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The host's name (`unknown` where it cannot be read).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it on success.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    match std::str::from_utf8(&buf[..end]) {
        Ok(s) if ok && !s.is_empty() => s.to_string(),
        _ => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_keeps_only_allowed_cpus() {
        assert_eq!(usable_order(vec![0, 2, 1, 3], Some(vec![1, 2])), vec![2, 1]);
        assert_eq!(usable_order(vec![0, 1], None), vec![0, 1]);
        assert_eq!(usable_order(vec![0, 1], Some(vec![7])), vec![0, 1]);
    }

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!allowed_cpus().unwrap().is_empty());
    }
}
