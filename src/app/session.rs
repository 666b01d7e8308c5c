//! From a validated command line to what runs: the machine read, the working sets sized, the
//! kernel chosen, the clock measured, and the plan and the run's description built.

use crate::app::cli::{Config, KernelArg};
use crate::base::error::{Error, Result};
use crate::base::time::utc_now_string;
use crate::base::units::threads_phrase;
use crate::engine::kernel::{Kernel, Stores, Variant};
use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::{
    Grid, Level, Loops, MemPolicy, MemoryBudget, Numa, Plan, Schedule, SetSpec, size_sets,
};
use crate::judge::no_effect::{self, NoEffect};
use crate::judge::run_info::RunInfo;
use crate::machine::cgroup::{Cgroup, CpuQuota, Limits, quota_text};
use crate::machine::clock::ClockEstimate;
use crate::machine::counters::{self, Availability, ThreadCounters};
use crate::machine::fingerprint;
use crate::machine::host::HostState;
use crate::machine::thp::ThpMode;
use crate::machine::topology::{PinPolicy, Topology};
use crate::machine::vendor::VendorFigure;
use crate::platform;

/// Everything a run needs before the engine starts.
pub struct Session {
    pub plan: Plan,
    pub info: RunInfo,
}

impl Session {
    /// Reads the machine under `config.root`, sizes the sets and measures the clock. `schedule`
    /// says how the engine will walk the grid. Nothing is allocated here.
    pub fn prepare(config: &Config, schedule: Schedule) -> Result<Session> {
        let topo = Topology::read(&config.root)?;
        let host = HostState::read(&config.root)?;
        let (kernel, loops) = resolve_kernel(config.kernel, config.stores)?;
        // Only the CPUs this process may run on (a container's cpuset, `taskset`) are used.
        let allowed = platform::allowed_cpus();
        let order_of = |pin| usable_order(topo.cpu_order(pin), allowed.clone());
        let cpu_order = order_of(config.pin);
        // In a cgroup, its limits: the memory budget is the least of MemAvailable and the
        // room the limit leaves, and default thread counts stay within the CPU quota.
        let cgroup = Cgroup::find(&config.root);
        let quota = cgroup.cpu_quota();
        let memory =
            MemoryBudget::new(host.mem_available, cgroup.memory()).capped(config.max_memory);
        let policy = memory_policy(config, &topo)?;
        let Chosen {
            grid,
            matrix,
            cpu_order,
            threads_note,
        } = choose_grid(config, &topo, &memory, cpu_order, quota.as_ref())?;
        let no_effect = no_effect_notes(config, order_of, &grid.threads);
        let not_a_measurement = config.oversubscribe.then(|| {
            format!(
                "--oversubscribe: up to {} threads share {} usable CPUs, so every figure is the \
                 scheduler's sharing of them, not the memory's bandwidth",
                grid.max_threads(),
                cpu_order.len().max(1)
            )
        });
        let numa = Numa {
            node_of_cpu: topo.cpus.iter().map(|c| (c.id, c.node)).collect(),
            matrix: matrix.as_ref().map(|m| m.pairs.clone()).unwrap_or_default(),
            policy,
        };
        let numa_line = numa_line(&numa.policy, &topo, matrix.as_ref());
        let clock = ClockEstimate::measure(cpu_order.first().copied());
        let vendor = VendorFigure::find(&config.root, config.vendor_gbs);
        let plan = Plan {
            grid,
            kernel,
            loops,
            pin: config.pin,
            cpu_order,
            round_ms: config.round_ms,
            schedule,
            duty: config.duty,
            huge_pages: config.huge_pages,
            memory_budget: memory.bytes,
            counters: config.counters,
            numa,
            reused: None,
        };
        let hostname = platform::hostname().unwrap_or_else(|| "unknown".into());
        let node = config.node.clone().unwrap_or_else(|| hostname.clone());
        let fingerprint = fingerprint::read(&config.root, &node, &topo.model, topo.packages());
        let info = RunInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            name: config.name.clone(),
            command_line: command_line(),
            hostname,
            started: utc_now_string(),
            topology: topo,
            kernel,
            loops,
            huge_pages_flag: config.huge_pages,
            // Set with the plan's loops by `reuse_choices`, once the grid is known.
            choices_from: None,
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
            numa: numa_line,
            matrix,
            not_a_measurement,
            threads_note,
            fingerprint: Some(fingerprint),
        };
        Ok(Session { plan, info })
    }
}

/// The grid a run walks, the NUMA matrix's pairs when `--matrix`, the CPUs in order, and what
/// a CPU quota did to the thread counts.
struct Chosen {
    grid: Grid,
    matrix: Option<MatrixPlan>,
    cpu_order: Vec<usize>,
    threads_note: Option<String>,
}

/// The grid of thread counts × working sets sized for this machine (or the matrix's one dram
/// set on each CPU node's cores).
fn choose_grid(
    config: &Config,
    topo: &Topology,
    memory: &MemoryBudget,
    cpu_order: Vec<usize>,
    quota: Option<&CpuQuota>,
) -> Result<Chosen> {
    if config.matrix {
        if config.pin == PinPolicy::None && platform::HAS_AFFINITY {
            return Err(Error::usage(
                "--matrix: each pair's threads are pinned to its CPU node (not with --pin none)",
            ));
        }
        let m = MatrixPlan::new(topo, &cpu_order);
        let dram = size_sets(&[SetSpec::Level(Level::Dram)], topo, memory, m.threads)?;
        let order = m.pairs[0].cpus.clone();
        let grid = Grid {
            ops: config.ops.clone(),
            ..m.grid(&dram[0])
        };
        return Ok(Chosen {
            grid,
            matrix: Some(m),
            cpu_order: order,
            threads_note: None,
        });
    }
    let threads = config.thread_counts(
        cpu_order.len(),
        quota.map(|q| q.whole_cpus()),
        &topo.domain_counts(&cpu_order),
    )?;
    let threads_note = quota_note(
        config.threads.is_some(),
        &threads,
        cpu_order.len(),
        quota.map(|q| (q.cpus(), q.whole_cpus())),
    );
    let max_threads = threads.iter().copied().max().unwrap_or(1);
    let sets = size_sets(&config.sets, topo, memory, max_threads)?;
    let ops = config.ops.clone();
    Ok(Chosen {
        grid: Grid { sets, threads, ops },
        matrix: None,
        cpu_order,
        threads_note,
    })
}

/// The flags that would have no effect on this machine (placement, huge pages), as notes.
fn no_effect_notes(
    config: &Config,
    order_of: impl Fn(PinPolicy) -> Vec<usize>,
    threads: &[usize],
) -> Vec<NoEffect> {
    let pin_note = if platform::HAS_AFFINITY {
        no_effect::pin_note(config.pin, order_of, threads)
    } else {
        Some(no_effect::unpinned_note(config.pin, platform::PLACEMENT))
    };
    [
        pin_note,
        no_effect::huge_pages_note(
            config.huge_pages,
            ThpMode::read(&config.root),
            platform::HUGE_PAGES_NOTE,
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `--kernel` against this CPU: the kernel (instruction set and stores) and the loops the cells
/// may run. `auto` times every loop of the widest kernel's stores; an instruction set pins its
/// default loops; a loop's name pins that loop. Refused, as usage errors, when the CPU lacks it.
fn resolve_kernel(arg: KernelArg, stores: Stores) -> Result<(Kernel, Loops)> {
    Ok(match arg {
        KernelArg::Auto => (Kernel::resolve(None, stores)?, Loops::Auto),
        KernelArg::Isa(isa) => (Kernel::resolve(Some(isa), stores)?, Loops::Default),
        KernelArg::Loop(name) => {
            let v = Variant::named(name, stores)
                .ok_or_else(|| Error::usage(format!("--kernel '{name}': no such loop")))?;
            if !(v.available)() {
                return Err(Error::usage(format!(
                    "--kernel '{}': this CPU does not support it",
                    v.name
                )));
            }
            (Kernel::resolve(Some(v.isa), stores)?, Loops::Named(v))
        }
    })
}

/// `--membind NODE` or `--interleave` as a policy: refused where the OS has no NUMA API
/// (macOS) and for a node the machine does not have (exit 2, one line).
fn memory_policy(config: &Config, topo: &Topology) -> Result<MemPolicy> {
    let flag = match (config.membind, config.interleave) {
        (Some(n), _) => format!("--membind {n}"),
        (None, true) => "--interleave".to_string(),
        (None, false) => return Ok(MemPolicy::FirstTouch),
    };
    if let Some(why) = platform::NUMA_NOTE {
        return Err(Error::usage(format!("{flag}: {why}")));
    }
    let nodes: Vec<usize> = topo.nodes.iter().map(|n| n.id).collect();
    match config.membind {
        Some(n) if !nodes.contains(&n) => {
            let list: Vec<String> = nodes.iter().map(usize::to_string).collect();
            Err(Error::usage(format!(
                "{flag}: no such NUMA node (this machine has {} {})",
                if nodes.len() == 1 { "node" } else { "nodes" },
                list.join(", ")
            )))
        }
        Some(n) => Ok(MemPolicy::Bind(n)),
        None => Ok(MemPolicy::Interleave(nodes)),
    }
}

/// What is said beside the table about where pages come from, starting "pages …": a chosen
/// policy, the matrix, or a machine whose pages could go elsewhere than first touch puts them.
/// None where there is nothing to say (one node, first touch).
fn numa_line(policy: &MemPolicy, topo: &Topology, matrix: Option<&MatrixPlan>) -> Option<String> {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    if let Some(m) = matrix {
        let cpu_nodes = m
            .pairs
            .iter()
            .map(|p| p.cpu_node)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let pages = if topo.nodes.len() < 2 {
            "pages on node 0"
        } else {
            "pages bound to each pair's memory node"
        };
        let mut line = format!(
            "{pages}: a NUMA matrix of {} × {}, {} per pair",
            plural(cpu_nodes, "CPU node"),
            plural(topo.nodes.len(), "memory node"),
            threads_phrase(m.threads)
        );
        if let Some(note) = &m.note {
            line.push_str(&format!("; {note}"));
        }
        return Some(line);
    }
    let flag = match policy {
        MemPolicy::FirstTouch if topo.nodes.len() < 2 => return None,
        MemPolicy::FirstTouch => {
            return Some(
                "pages by first touch, each partition on its thread's node (moved there when a \
                 working set is partitioned for another thread count)"
                    .to_string(),
            );
        }
        MemPolicy::Bind(n) => format!("--membind {n}"),
        MemPolicy::Interleave(_) => "--interleave".to_string(),
    };
    let mut line = format!("pages {policy} ({flag})");
    if topo.nodes.len() < 2 {
        line.push_str(
            ": this machine has one NUMA node, so every page is on node 0 as it would be anyway",
        );
    }
    Some(line)
}

/// What a CPU quota (its CPUs and whole CPUs) did to the thread counts, said beside the table:
/// the default counts it capped below the `usable` CPUs, or the `asked` counts above its whole
/// CPUs, which it throttles. None without a quota or where it changed nothing.
fn quota_note(
    asked: bool,
    threads: &[usize],
    usable: usize,
    quota: Option<(f64, usize)>,
) -> Option<String> {
    let (cpus, whole) = quota?;
    let quota = quota_text(cpus);
    if !asked {
        return (whole < usable)
            .then(|| format!("threads capped at {whole} by the CPU quota {quota}"));
    }
    let over: Vec<String> = threads
        .iter()
        .filter(|&&n| n > whole)
        .map(|n| n.to_string())
        .collect();
    // Every count in `over` is above a whole CPU, so more than one: "threads".
    (!over.is_empty()).then(|| {
        format!(
            "warning: the CPU quota {quota} runs at most {} at once, so the cells of {} threads \
             are throttled: their figures measure the quota, not the memory",
            threads_phrase(whole),
            over.join(", "),
        )
    })
}

/// The pinning order restricted to the CPUs the process may use (all of it when the mask is
/// unknown or shares no CPU with the order, e.g. a fixture root).
fn usable_order(order: Vec<usize>, allowed: Option<Vec<usize>>) -> Vec<usize> {
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

    fn fixture(name: &str) -> Topology {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        Topology::read(&root).unwrap()
    }

    #[test]
    fn the_note_beside_the_table_says_where_pages_come_from() {
        let one = fixture("vm-2core");
        let two = fixture("server-2s");
        assert_eq!(numa_line(&MemPolicy::FirstTouch, &one, None), None);
        let ft = numa_line(&MemPolicy::FirstTouch, &two, None).unwrap();
        assert!(ft.starts_with("pages by first touch"), "{ft}");
        let bind = numa_line(&MemPolicy::Bind(0), &one, None).unwrap();
        assert_eq!(
            bind,
            "pages bound to node 0 (--membind 0): this machine has one NUMA node, so every \
             page is on node 0 as it would be anyway"
        );
        let inter = numa_line(&MemPolicy::Interleave(vec![0, 1]), &two, None).unwrap();
        assert_eq!(inter, "pages interleaved across nodes 0,1 (--interleave)");
        let all: Vec<usize> = two.cpus.iter().map(|c| c.id).collect();
        let m = MatrixPlan::new(&two, &all);
        let line = numa_line(&MemPolicy::FirstTouch, &two, Some(&m)).unwrap();
        assert!(
            line.contains("a NUMA matrix of 2 CPU nodes × 2 memory nodes, 16 threads per pair"),
            "{line}"
        );
    }

    #[test]
    fn a_quota_says_what_it_did_to_the_thread_counts() {
        // Defaults capped: a 0.5-CPU quota on 2 CPUs.
        assert_eq!(
            quota_note(false, &[1], 2, Some((0.5, 1))).as_deref(),
            Some("threads capped at 1 by the CPU quota 0.5 CPUs")
        );
        assert_eq!(quota_note(false, &[1, 2], 2, Some((2.0, 2))), None);
        assert_eq!(quota_note(false, &[1, 2], 2, None), None);
        let w = quota_note(true, &[1, 2, 4], 8, Some((1.5, 1))).unwrap();
        assert_eq!(
            w,
            "warning: the CPU quota 1.5 CPUs runs at most 1 thread at once, so the cells of 2, 4 \
             threads are throttled: their figures measure the quota, not the memory"
        );
        assert_eq!(quota_note(true, &[1], 8, Some((1.5, 1))), None);
    }

    #[test]
    fn the_order_keeps_only_allowed_cpus() {
        assert_eq!(usable_order(vec![0, 2, 1, 3], Some(vec![1, 2])), vec![2, 1]);
        assert_eq!(usable_order(vec![0, 1], None), vec![0, 1]);
        assert_eq!(usable_order(vec![0, 1], Some(vec![7])), vec![0, 1]);
    }
}
