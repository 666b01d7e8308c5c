//! From a validated command line to what runs: the machine read, the working sets sized, the
//! kernel chosen, the clock measured, and the plan and the run's description built.

use crate::cli::Config;
use crate::engine::kernel::Kernel;
use crate::engine::plan::{Grid, MemoryBudget, Plan, Schedule, size_sets};
use crate::error::Result;
use crate::machine::cgroup::{Cgroup, Limits};
use crate::machine::clock::ClockEstimate;
use crate::machine::counters::{self, Availability, ThreadCounters};
use crate::machine::host::HostState;
use crate::machine::thp::ThpMode;
use crate::machine::topology::{PinPolicy, Topology};
use crate::machine::vendor::VendorFigure;
use crate::no_effect::{self, NoEffect};
use crate::platform;
use crate::report::time::utc_now_string;
use crate::stats::Context;

/// Everything a run needs before the engine starts.
pub struct Session {
    pub plan: Plan,
    pub info: RunInfo,
}

/// Everything about a run that is not a cell's figures: shown above the live table and the
/// reports, and kept in every snapshot (as the report's own wire type).
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// stream-top's version (CARGO_PKG_VERSION).
    pub version: String,
    /// `--name`: the run's label, in the snapshot and the exported file names.
    pub name: Option<String>,
    /// The command line as given.
    pub command_line: String,
    pub hostname: String,
    /// When the run started, UTC, `YYYY-mm-dd HH:MM:SS`.
    pub started: String,
    pub topology: Topology,
    pub kernel: Kernel,
    pub pin: PinPolicy,
    pub clock: ClockEstimate,
    pub vendor: VendorFigure,
    /// Load, memory and swap when the run started.
    pub host_start: HostState,
    /// Timed rounds per cell (`--rounds`).
    pub rounds: u32,
    pub round_ms: u32,
    /// Percentage of the time rounds ran.
    pub duty: u8,
    /// The cgroup limits that applied at the start; None outside a container.
    pub container: Option<Limits>,
    /// Where the OS lets no thread be placed (macOS), what `--pin` does instead.
    pub placement: Option<&'static str>,
    /// Where the OS has no transparent huge pages (macOS), saying so.
    pub huge_pages: Option<&'static str>,
    /// Settings that change nothing on this machine, each said once beside the table.
    pub no_effect: Vec<NoEffect>,
    /// Which per-thread counters the workers have and why the others are missing (opened
    /// once on this thread to find out); None where not asked (tests).
    pub counters: Option<Availability>,
}

impl RunInfo {
    /// What every cell's figures are computed against: the vendor figure, the clock, and the
    /// online CPUs (a cell with more threads is noisy).
    pub fn context(&self) -> Context {
        Context::new(self.vendor.gbs, Some(self.clock.ghz)).with_cpus(self.topology.cpus.len())
    }
}

impl Session {
    /// Reads the machine under `config.root`, sizes the sets and measures the clock. `schedule`
    /// says how the engine will walk the grid. Nothing is allocated here.
    pub fn prepare(config: &Config, schedule: Schedule) -> Result<Session> {
        let topo = Topology::read(&config.root)?;
        let host = HostState::read(&config.root)?;
        let kernel = Kernel::resolve(config.kernel, config.stores)?;
        // Only the CPUs this process may run on (a container's cpuset, `taskset`) are used.
        let allowed = platform::allowed_cpus();
        let order_of = |pin| usable_order(topo.cpu_order(pin), allowed.clone());
        let cpu_order = order_of(config.pin);
        // In a cgroup, its limits: the memory budget is the least of MemAvailable and the
        // room the limit leaves, and default thread counts stay within the CPU quota.
        let cgroup = Cgroup::find(&config.root);
        let quota = cgroup.cpu_quota();
        let threads = config.thread_counts(
            cpu_order.len(),
            quota.as_ref().map(|q| q.whole_cpus()),
            &topo.domain_counts(&cpu_order),
        )?;
        let pin_note = if platform::HAS_AFFINITY {
            no_effect::pin_note(config.pin, order_of, &threads)
        } else {
            Some(no_effect::unpinned_note(config.pin, platform::PLACEMENT))
        };
        let no_effect: Vec<NoEffect> = [
            pin_note,
            no_effect::huge_pages_note(
                config.huge_pages,
                ThpMode::read(&config.root),
                platform::HUGE_PAGES_NOTE,
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        let max_threads = threads.iter().copied().max().unwrap_or(1);
        let memory = MemoryBudget::new(host.mem_available, cgroup.memory());
        let sets = size_sets(&config.sets, &topo, &memory, max_threads)?;
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
            memory_budget: memory.bytes,
            counters: config.counters,
        };
        let info = RunInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            name: config.name.clone(),
            command_line: command_line(),
            hostname: platform::hostname().unwrap_or_else(|| "unknown".into()),
            started: utc_now_string(),
            topology: topo,
            kernel,
            pin: config.pin,
            clock,
            vendor,
            host_start: host,
            rounds: config.rounds,
            round_ms: config.round_ms,
            duty: config.duty,
            container: Some(cgroup.limits()).filter(Limits::any),
            placement: (!platform::HAS_AFFINITY).then_some(platform::PLACEMENT),
            huge_pages: platform::HUGE_PAGES_NOTE,
            no_effect,
            counters: Some(if config.counters {
                ThreadCounters::open(counters::Host::read(&config.root)).1
            } else {
                Availability::off()
            }),
        };
        Ok(Session { plan, info })
    }
}

/// The pinning order restricted to the CPUs the process may use (all of it when the mask is
/// unknown or shares no CPU with the order, e.g. a fixture root).
pub(crate) fn usable_order(order: Vec<usize>, allowed: Option<Vec<usize>>) -> Vec<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_keeps_only_allowed_cpus() {
        assert_eq!(usable_order(vec![0, 2, 1, 3], Some(vec![1, 2])), vec![2, 1]);
        assert_eq!(usable_order(vec![0, 1], None), vec![0, 1]);
        assert_eq!(usable_order(vec![0, 1], Some(vec![7])), vec![0, 1]);
    }
}
