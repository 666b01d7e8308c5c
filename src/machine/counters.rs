//! Counters of one thread: what explains a round. Was the thread switched out, did it move,
//! did it fault, what clock did it run at, how many instructions per cycle, how many
//! last-level-cache misses. Where the OS refuses a counter, why, in words a user can act on.
//!
//! Each worker opens its own set on its own thread and reads it just outside its timed span,
//! before the start stamp and after the end stamp; [`ThreadCounters::delta`] turns two
//! readings into [`Counts`]. Three sources:
//!
//! - a software group (`perf_event_open`): task clock, page faults, and CPU migrations. A
//!   migration is counted inside the scheduler, so it needs kernel-side counting
//!   (CAP_PERFMON, root, or `kernel.perf_event_paranoid` ≤ 1); without it the group counts
//!   user space only and migrations are missing, with the reason.
//! - a hardware group: cycles, instructions and last-level-cache read misses, user space
//!   only, so the default `perf_event_paranoid` of 2 suffices. A PMU that is shared may
//!   multiplex the group: counts are scaled by the time the group was enabled over the time
//!   it ran, and a span in which it never ran has no count.
//! - `getrusage(RUSAGE_THREAD)`: involuntary context switches. A worker never blocks inside a
//!   round (it spins at the barriers, outside the span), so every switch in its span is the
//!   scheduler taking the CPU away, and this count needs no privilege.

use crate::platform::{
    GroupReading, MAX_GROUP, PerfEvent, PerfGroup, PerfRefusal, involuntary_switches,
};
use std::path::Path;

/// What one thread can have counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Counter {
    TaskClock,
    Switches,
    Migrations,
    PageFaults,
    Cycles,
    Instructions,
    LlcMisses,
}

impl Counter {
    pub const ALL: [Counter; 7] = [
        Counter::TaskClock,
        Counter::Switches,
        Counter::Migrations,
        Counter::PageFaults,
        Counter::Cycles,
        Counter::Instructions,
        Counter::LlcMisses,
    ];

    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Counter::TaskClock => "task clock",
            Counter::Switches => "context switches",
            Counter::Migrations => "CPU migrations",
            Counter::PageFaults => "page faults",
            Counter::Cycles => "cycles",
            Counter::Instructions => "instructions",
            Counter::LlcMisses => "LLC misses",
        }
    }

    fn hardware(self) -> bool {
        matches!(
            self,
            Counter::Cycles | Counter::Instructions | Counter::LlcMisses
        )
    }
}

/// Counts over one span of one thread; `None` where not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Time the thread was on a CPU, ns.
    pub task_clock_ns: Option<u64>,
    /// Involuntary context switches: times the thread was switched out.
    pub switches: Option<u64>,
    pub migrations: Option<u64>,
    pub page_faults: Option<u64>,
    /// Core cycles in user space (scaled when multiplexed).
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    pub llc_misses: Option<u64>,
}

/// `Counts` as words for a worker's slot: `u64::MAX` stands for `None`.
pub(crate) const COUNT_WORDS: usize = 7;
const NONE_WORD: u64 = u64::MAX;

impl Counts {
    pub fn get(&self, c: Counter) -> Option<u64> {
        match c {
            Counter::TaskClock => self.task_clock_ns,
            Counter::Switches => self.switches,
            Counter::Migrations => self.migrations,
            Counter::PageFaults => self.page_faults,
            Counter::Cycles => self.cycles,
            Counter::Instructions => self.instructions,
            Counter::LlcMisses => self.llc_misses,
        }
    }

    fn slot(&mut self, c: Counter) -> &mut Option<u64> {
        match c {
            Counter::TaskClock => &mut self.task_clock_ns,
            Counter::Switches => &mut self.switches,
            Counter::Migrations => &mut self.migrations,
            Counter::PageFaults => &mut self.page_faults,
            Counter::Cycles => &mut self.cycles,
            Counter::Instructions => &mut self.instructions,
            Counter::LlcMisses => &mut self.llc_misses,
        }
    }

    pub(crate) fn to_words(self) -> [u64; COUNT_WORDS] {
        Counter::ALL.map(|c| self.get(c).map_or(NONE_WORD, |v| v.min(NONE_WORD - 1)))
    }

    pub(crate) fn from_words(w: [u64; COUNT_WORDS]) -> Counts {
        let mut c = Counts::default();
        for (i, k) in Counter::ALL.into_iter().enumerate() {
            *c.slot(k) = (w[i] != NONE_WORD).then_some(w[i]);
        }
        c
    }

    /// Whether anything was counted.
    pub fn any(&self) -> bool {
        Counter::ALL.iter().any(|&c| self.get(c).is_some())
    }

    /// Effective clock over `own_ns` of the thread's own time: cycles ÷ time, GHz.
    pub fn ghz(&self, own_ns: u64) -> Option<f64> {
        Some(self.cycles? as f64 / own_ns.max(1) as f64)
    }

    /// Instructions per cycle.
    pub fn ipc(&self) -> Option<f64> {
        let cycles = self.cycles.filter(|&c| c > 0)?;
        Some(self.instructions? as f64 / cycles as f64)
    }
}

/// Which counters a thread has, and for each missing one why (one reason per group of
/// counters refused together, in words a user can act on).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Availability {
    pub counted: Vec<Counter>,
    /// The counters refused together, and why.
    pub missing: Vec<(Vec<Counter>, String)>,
}

impl Availability {
    /// Counters turned off (`--counters off`).
    pub fn off() -> Availability {
        Availability {
            counted: Vec::new(),
            missing: vec![(Counter::ALL.to_vec(), "turned off (--counters off)".into())],
        }
    }

    pub fn has(&self, c: Counter) -> bool {
        self.counted.contains(&c)
    }

    /// Why a counter is missing; None when it is counted.
    #[cfg(test)]
    fn why_missing(&self, c: Counter) -> Option<&str> {
        self.missing
            .iter()
            .find(|(cs, _)| cs.contains(&c))
            .map(|(_, why)| why.as_str())
    }

    /// "counted per thread: task clock, context switches, …; not counted: cycles,
    /// instructions, LLC misses — this VM exposes no hardware counters …".
    pub fn line(&self) -> String {
        let names = |cs: &[Counter]| cs.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.counted.is_empty() {
            parts.push(format!("counted per thread: {}", names(&self.counted)));
        }
        for (cs, why) in &self.missing {
            parts.push(format!("not counted: {} — {why}", names(cs)));
        }
        parts.join("; ")
    }
}

/// What the words for a refusal depend on beyond the errno: the paranoid level and whether
/// this is a virtual machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Host {
    paranoid: Option<i32>,
    virtual_machine: bool,
}

impl Host {
    /// Reads `proc/sys/kernel/perf_event_paranoid` and the `hypervisor` CPU flag under `root`.
    pub fn read(root: &Path) -> Host {
        let paranoid = std::fs::read_to_string(root.join("proc/sys/kernel/perf_event_paranoid"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let virtual_machine = std::fs::read_to_string(root.join("proc/cpuinfo"))
            .map(|s| {
                s.lines()
                    .filter(|l| l.starts_with("flags"))
                    .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
            })
            .unwrap_or(false);
        Host {
            paranoid,
            virtual_machine,
        }
    }
}

/// The words for a refusal of `counters`, as a user can act on them.
pub(crate) fn reason(refusal: &PerfRefusal, counters: &[Counter], host: Host) -> String {
    let paranoid = host
        .paranoid
        .map_or("restricted".to_string(), |p| format!("{p}"));
    let hardware = counters.iter().any(|c| c.hardware());
    match refusal {
        PerfRefusal::NoSuchEvent if counters == [Counter::LlcMisses] => {
            "this CPU's PMU driver names no last-level-cache miss event".into()
        }
        PerfRefusal::NoSuchEvent if hardware && host.virtual_machine => {
            "this VM exposes no hardware counters (no virtual PMU: enable one in the \
             hypervisor, e.g. KVM's `-cpu host,pmu=on`)"
                .into()
        }
        PerfRefusal::NoSuchEvent if hardware => {
            "the kernel has no PMU driver for this CPU (perf_event_open: no such event)".into()
        }
        PerfRefusal::NoSuchEvent => "the kernel does not offer this software event".into(),
        PerfRefusal::Paranoid if counters.contains(&Counter::Migrations) => format!(
            "counted inside the kernel, which needs kernel.perf_event_paranoid ≤ 1 (it is \
             {paranoid}) or CAP_PERFMON"
        ),
        PerfRefusal::Paranoid => format!(
            "kernel.perf_event_paranoid is {paranoid}: counting our own threads in user space \
             needs ≤ 2 (sysctl kernel.perf_event_paranoid=2) or CAP_PERFMON"
        ),
        PerfRefusal::NotPermitted => {
            "perf_event_open is not permitted here (EPERM: a seccomp filter such as a \
             container runtime's default profile, or a security module)"
                .into()
        }
        PerfRefusal::NoSyscall => {
            "this kernel has no perf_event_open (built without CONFIG_PERF_EVENTS)".into()
        }
        PerfRefusal::NotLinux => "counters need Linux's perf_event_open".into(),
        PerfRefusal::Other(e) => format!("perf_event_open failed: {e}"),
    }
}

/// Where each counter sits in the groups a thread opened.
#[derive(Debug, Clone, Copy, Default)]
struct Layout {
    /// Index in the software group, per counter of `Counter::ALL`.
    software: [Option<usize>; COUNT_WORDS],
    hardware: [Option<usize>; COUNT_WORDS],
    switches: bool,
}

/// A thread's counters, opened on that thread. Reading allocates nothing.
#[derive(Debug)]
pub(crate) struct ThreadCounters {
    software: Option<PerfGroup>,
    hardware: Option<PerfGroup>,
    layout: Layout,
}

/// One reading of a thread's counters, absolute; two make a [`Counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    software: Option<GroupReading>,
    hardware: Option<GroupReading>,
    switches: Option<u64>,
}

/// Tries `events` in one group, kernel-side too when asked; on a refusal of one of the
/// `optional` events, again without it. The events that opened, or the refusal.
fn open_group(
    events: &[(PerfEvent, Counter)],
    optional: &[Counter],
    kernel: bool,
    host: Host,
    missing: &mut Vec<(Vec<Counter>, String)>,
) -> Option<(PerfGroup, Vec<Counter>)> {
    let mut events: Vec<(PerfEvent, Counter)> = events.to_vec();
    loop {
        let kinds: Vec<PerfEvent> = events.iter().map(|e| e.0).collect();
        match PerfGroup::open(&kinds, kernel) {
            Ok(g) => return Some((g, events.iter().map(|e| e.1).collect())),
            Err((event, refusal)) => {
                let counter = events.iter().find(|e| e.0 == event).map(|e| e.1);
                match counter {
                    Some(c) if optional.contains(&c) && events.len() > 1 => {
                        missing.push((vec![c], reason(&refusal, &[c], host)));
                        events.retain(|e| e.1 != c);
                    }
                    _ => {
                        let all: Vec<Counter> = events.iter().map(|e| e.1).collect();
                        missing.push((all.clone(), reason(&refusal, &all, host)));
                        return None;
                    }
                }
            }
        }
    }
}

impl ThreadCounters {
    /// No counters at all (`--counters off`).
    pub fn none() -> ThreadCounters {
        ThreadCounters {
            software: None,
            hardware: None,
            layout: Layout::default(),
        }
    }

    /// Opens every counter the OS allows on the calling thread, and says which are missing
    /// and why (`host` words the reasons).
    pub fn open(host: Host) -> (ThreadCounters, Availability) {
        let mut missing = Vec::new();
        let mut layout = Layout::default();
        let index = |c: Counter| Counter::ALL.iter().position(|&k| k == c).unwrap_or(0);

        // Software: with kernel-side counting (migrations need it), else user space only.
        let sw_all = [
            (PerfEvent::TaskClock, Counter::TaskClock),
            (PerfEvent::PageFaults, Counter::PageFaults),
            (PerfEvent::Migrations, Counter::Migrations),
        ];
        let mut kernel_side = Vec::new();
        let software = match open_group(
            &sw_all,
            &[Counter::Migrations],
            true,
            host,
            &mut kernel_side,
        ) {
            Some(g) => {
                missing.extend(kernel_side);
                Some(g)
            }
            None => {
                // Refused for counting inside the kernel (paranoid): user space only, where
                // migrations are not seen.
                let mut user = Vec::new();
                match open_group(&sw_all[..2], &[], false, host, &mut user) {
                    Some(g) => {
                        let why = reason(&PerfRefusal::Paranoid, &[Counter::Migrations], host);
                        missing.push((vec![Counter::Migrations], why));
                        Some(g)
                    }
                    None => {
                        let why = user.pop().map(|(_, w)| w).unwrap_or_default();
                        missing.push((sw_all.iter().map(|e| e.1).collect(), why));
                        None
                    }
                }
            }
        };
        let software = software.map(|(g, counters)| {
            for (i, c) in counters.iter().enumerate() {
                layout.software[index(*c)] = Some(i);
            }
            g
        });

        let hw_all = [
            (PerfEvent::Cycles, Counter::Cycles),
            (PerfEvent::Instructions, Counter::Instructions),
            (PerfEvent::LlcReadMisses, Counter::LlcMisses),
        ];
        let hardware = open_group(&hw_all, &[Counter::LlcMisses], false, host, &mut missing).map(
            |(g, counters)| {
                for (i, c) in counters.iter().enumerate() {
                    layout.hardware[index(*c)] = Some(i);
                }
                g
            },
        );

        layout.switches = involuntary_switches().is_some();
        if !layout.switches {
            missing.push((
                vec![Counter::Switches],
                "this OS counts no context switches per thread".into(),
            ));
        }
        let counters = ThreadCounters {
            software,
            hardware,
            layout,
        };
        let counted = Counter::ALL
            .into_iter()
            .filter(|&c| counters.counts(c))
            .collect();
        // Keep the order of Counter::ALL, whatever order the refusals came in.
        missing.sort_by_key(|(cs, _)| cs.first().copied());
        (counters, Availability { counted, missing })
    }

    fn counts(&self, c: Counter) -> bool {
        let i = Counter::ALL.iter().position(|&k| k == c).unwrap_or(0);
        match c {
            Counter::Switches => self.layout.switches,
            _ => self.layout.software[i].is_some() || self.layout.hardware[i].is_some(),
        }
    }

    /// Reads every counter now: up to three system calls, no allocation.
    pub fn read(&self) -> Reading {
        Reading {
            software: self.software.as_ref().and_then(|g| g.read().ok()),
            hardware: self.hardware.as_ref().and_then(|g| g.read().ok()),
            switches: if self.layout.switches {
                involuntary_switches()
            } else {
                None
            },
        }
    }

    /// The counts between two readings of this thread.
    pub(crate) fn delta(&self, before: &Reading, after: &Reading) -> Counts {
        let mut out = Counts::default();
        for (i, c) in Counter::ALL.into_iter().enumerate() {
            let v = match c {
                Counter::Switches => match (before.switches, after.switches) {
                    (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                    _ => None,
                },
                _ => {
                    if let Some(k) = self.layout.software[i] {
                        scaled(before.software, after.software, k)
                    } else if let Some(k) = self.layout.hardware[i] {
                        scaled(before.hardware, after.hardware, k)
                    } else {
                        None
                    }
                }
            };
            *out.slot(c) = v;
        }
        out
    }
}

/// The count of event `k` between two group readings, scaled by enabled over running time
/// when the PMU multiplexed the group; None when it did not run at all in between.
pub(crate) fn scaled(
    before: Option<GroupReading>,
    after: Option<GroupReading>,
    k: usize,
) -> Option<u64> {
    let (a, b) = (before?, after?);
    if k >= MAX_GROUP {
        return None;
    }
    let count = b.values[k].checked_sub(a.values[k])?;
    let enabled = b.enabled_ns.saturating_sub(a.enabled_ns);
    let running = b.running_ns.saturating_sub(a.running_ns);
    if running == 0 {
        return None;
    }
    if running >= enabled {
        return Some(count);
    }
    Some((count as f64 * enabled as f64 / running as f64).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(enabled: u64, running: u64, values: [u64; MAX_GROUP]) -> Option<GroupReading> {
        Some(GroupReading {
            enabled_ns: enabled,
            running_ns: running,
            values,
        })
    }

    #[test]
    fn counts_are_scaled_by_enabled_over_running_time() {
        let a = reading(1000, 1000, [100, 10, 0, 0]);
        // Enabled 1000 ns more but ran only 250 of them: the 50 counted stand for 200.
        let b = reading(2000, 1250, [150, 30, 0, 0]);
        assert_eq!(scaled(a, b, 0), Some(200));
        assert_eq!(scaled(a, b, 1), Some(80));
        // Not multiplexed: as counted.
        let c = reading(2000, 2000, [150, 30, 0, 0]);
        assert_eq!(scaled(a, c, 0), Some(50));
        // Never ran in the span: no count, not zero.
        let d = reading(2000, 1000, [100, 10, 0, 0]);
        assert_eq!(scaled(a, d, 0), None);
        // A missing reading or a counter that went backwards: no count.
        assert_eq!(scaled(None, c, 0), None);
        assert_eq!(scaled(c, a, 0), None);
    }

    #[test]
    fn counts_go_through_slot_words_and_back() {
        let c = Counts {
            task_clock_ns: Some(5),
            switches: Some(0),
            cycles: Some(7),
            ..Counts::default()
        };
        assert_eq!(Counts::from_words(c.to_words()), c);
        assert_eq!(
            Counts::from_words([NONE_WORD; COUNT_WORDS]),
            Counts::default()
        );
        assert!(!Counts::default().any());
        assert_eq!(c.ghz(7), Some(1.0));
        assert_eq!(c.ipc(), None);
    }

    #[test]
    fn refusals_are_worded_for_what_a_user_can_do() {
        let vm = Host {
            paranoid: Some(2),
            virtual_machine: true,
        };
        let hw = [Counter::Cycles, Counter::Instructions, Counter::LlcMisses];
        assert!(reason(&PerfRefusal::NoSuchEvent, &hw, vm).contains("this VM exposes no hardware"));
        let metal = Host {
            paranoid: Some(3),
            virtual_machine: false,
        };
        assert!(reason(&PerfRefusal::NoSuchEvent, &hw, metal).contains("no PMU driver"));
        assert!(
            reason(&PerfRefusal::NoSuchEvent, &[Counter::LlcMisses], metal)
                .contains("no last-level-cache miss event")
        );
        assert!(
            reason(&PerfRefusal::Paranoid, &hw, metal).contains("kernel.perf_event_paranoid is 3")
        );
        assert!(
            reason(&PerfRefusal::Paranoid, &[Counter::Migrations], vm).contains("≤ 1 (it is 2)")
        );
        assert!(reason(&PerfRefusal::NotPermitted, &hw, vm).contains("seccomp"));
        assert!(reason(&PerfRefusal::NotLinux, &hw, vm).contains("Linux"));
    }

    #[test]
    fn availability_says_what_is_counted_and_why_the_rest_is_not() {
        let a = Availability {
            counted: vec![Counter::TaskClock, Counter::Switches],
            missing: vec![(
                vec![Counter::Cycles, Counter::Instructions],
                "this VM exposes no hardware counters".into(),
            )],
        };
        assert!(a.has(Counter::Switches) && !a.has(Counter::Cycles));
        assert_eq!(
            a.why_missing(Counter::Instructions),
            Some("this VM exposes no hardware counters")
        );
        assert_eq!(a.why_missing(Counter::TaskClock), None);
        assert_eq!(
            a.line(),
            "counted per thread: task clock, context switches; not counted: cycles, \
             instructions — this VM exposes no hardware counters"
        );
        assert!(Availability::off().line().contains("--counters off"));
    }

    #[test]
    fn this_thread_opens_what_the_os_allows_and_counts_a_span() {
        let (c, a) = ThreadCounters::open(Host::read(Path::new("/")));
        // Every counter is either counted or missing with a reason, never both or neither.
        for k in Counter::ALL {
            assert_ne!(a.has(k), a.why_missing(k).is_some(), "{k:?}: {a:?}");
        }
        let before = c.read();
        let v: Vec<u64> = (0..1 << 20).collect();
        std::hint::black_box(&v);
        let after = c.read();
        let d = c.delta(&before, &after);
        for k in Counter::ALL {
            assert_eq!(d.get(k).is_some(), a.has(k), "{k:?}: {d:?}");
        }
        if a.has(Counter::TaskClock) {
            assert!(d.task_clock_ns.unwrap() > 0);
        }
    }
}
