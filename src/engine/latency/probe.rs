//! The probe: a pointer chase that watches the memory system without loading it. One thread,
//! pinned to one CPU, follows a DRAM-sized chain ([`Chain`], huge pages) in short bursts with
//! a pause between them; each burst is one sample (ns per load) sent on the probe's own
//! channel. Its latency rises as soon as anything else loads the memory system, long before
//! its own traffic could matter: see [`Pacing`] for the count.
//!
//! Nothing in a burst allocates, locks or calls the OS (two clock reads around the walk; the
//! send comes after, and never blocks: a sample no one takes in time is dropped and counted).
//! After each burst the walker must have ended on a line of the buffer (a free check: `walk`
//! says so); the whole chain is validated when the probe stops, as [`super::measure`] does
//! after its runs. A periodic full validation would walk every line at full speed, which is
//! the very load the probe exists to avoid (a 128 MiB chain is 2 M DRAM loads in a row).

use super::chain::{Chain, LINE, Pages};
use super::hops::{UNROLL, Walker};
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::engine::plan::Plan;
use crate::machine::topology::{PinPolicy, Topology};
use crate::platform::{PinnedThread, now_ns};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How hard the probe chases: `burst_hops` dependent loads, then a pause until `period` after
/// the burst began.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    burst_hops: u64,
    period: Duration,
}

/// The probe's pacing: 4096 hops every 100 ms. A full-speed DRAM chase is about 10^7 lines/s
/// (640 MB/s); this is 40 960 lines/s, 2.6 MB/s (5.2 MB/s if the adjacent-line prefetcher
/// fetched the other half of every 128-byte pair): under 0.03 % of even a single DDR4
/// channel's 19.2 GB/s; and 4096 loads average over enough lines that one sample is a figure
/// (ten a second: a rise is seen within a second or two).
/// A burst lasts 0.4–0.8 ms at 100–200 ns per load: under 1 % of the probe's CPU.
pub const PACING: Pacing = Pacing {
    burst_hops: 4096,
    period: Duration::from_millis(100),
};

/// The most of the machine's DRAM bandwidth the probe may take: a watcher that costs more than
/// a hundredth would be a disturbance of its own.
pub const MAX_SHARE: f64 = 0.01;

impl Pacing {
    /// Lines loaded per second.
    pub fn lines_per_s(&self) -> f64 {
        self.burst_hops as f64 / self.period.as_secs_f64().max(1e-9)
    }

    /// Bytes per second from memory: a line per load.
    pub fn bytes_per_s(&self) -> f64 {
        self.lines_per_s() * LINE as f64
    }

    /// The probe's traffic as a share of `dram_bytes_per_s` (the triad's DRAM figure).
    pub fn share_of(&self, dram_bytes_per_s: f64) -> f64 {
        self.bytes_per_s() / dram_bytes_per_s
    }

    /// `2.6 MB/s (40960 lines/s × 64 B)`.
    pub fn traffic(&self) -> String {
        format!(
            "{:.1} MB/s ({:.0} lines/s × {LINE} B)",
            self.bytes_per_s() / 1e6,
            self.lines_per_s()
        )
    }

    /// Whole blocks of hops per burst.
    fn blocks(&self) -> u64 {
        self.burst_hops.div_ceil(UNROLL).max(1)
    }
}

/// The probe's buffer: one DRAM array of STREAM's rule, 4 × all last-level cache (at least
/// 64 MiB), so that most loads miss every cache; not the triad's three arrays, as the buffer
/// is what a service holds all day.
pub fn probe_bytes(llc_total: u64) -> u64 {
    (4 * llc_total).max(64 << 20)
}

/// How the probe's CPU was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuChoice {
    /// `--probe-cpu N`.
    Asked,
    /// No worker of the grid runs on it.
    Free,
    /// Every usable CPU has a worker: the last one, shared with a worker.
    Shared,
}

/// The CPU the probe runs on, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeCpu {
    pub cpu: usize,
    pub choice: CpuChoice,
    /// A worker of the grid may run on it too.
    pub shared: bool,
}

impl ProbeCpu {
    /// `CPU 1 (no worker uses it)`, `CPU 1 (shared with a worker: every CPU has one)`.
    pub fn describe(&self) -> String {
        let why = match (self.choice, self.shared) {
            (CpuChoice::Free, _) => "no worker uses it",
            (CpuChoice::Shared, _) => "shared with a worker: every CPU has one",
            (CpuChoice::Asked, false) => "--probe-cpu, no worker uses it",
            (CpuChoice::Asked, true) => "--probe-cpu, shared with a worker",
        };
        format!("CPU {} ({why})", self.cpu)
    }
}

/// Chooses the probe's CPU among the `usable` ones (the process's, in pinning order): `asked`
/// when given (an error naming the usable CPUs otherwise); else the last usable CPU no worker
/// runs on (`workers`: the CPUs the grid's threads are pinned to; every usable CPU when they
/// are not pinned); else the last usable CPU, shared.
pub fn choose_cpu(usable: &[usize], workers: &[usize], asked: Option<usize>) -> Result<ProbeCpu> {
    if let Some(cpu) = asked {
        if !usable.contains(&cpu) {
            let mut list = usable.to_vec();
            list.sort_unstable();
            let list: Vec<String> = list.iter().map(|c| c.to_string()).collect();
            return Err(Error::usage(format!(
                "--probe-cpu {cpu}: not a CPU this process may run on (usable: {})",
                list.join(",")
            )));
        }
        return Ok(ProbeCpu {
            cpu,
            choice: CpuChoice::Asked,
            shared: workers.contains(&cpu),
        });
    }
    let last = |free: bool| {
        usable
            .iter()
            .copied()
            .filter(|c| !free || !workers.contains(c))
            .max()
    };
    if let Some(cpu) = last(true) {
        return Ok(ProbeCpu {
            cpu,
            choice: CpuChoice::Free,
            shared: false,
        });
    }
    let cpu = last(false).ok_or_else(|| Error::usage("no CPU to run the probe on"))?;
    Ok(ProbeCpu {
        cpu,
        choice: CpuChoice::Shared,
        shared: true,
    })
}

/// What the probe is told.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeConfig {
    pub(crate) cpu: ProbeCpu,
    /// The chain's size.
    bytes: u64,
    pacing: Pacing,
    seed: u64,
    walker: Walker,
}

impl ProbeConfig {
    pub fn new(cpu: ProbeCpu, bytes: u64) -> ProbeConfig {
        ProbeConfig {
            cpu,
            bytes,
            pacing: PACING,
            seed: super::SEED,
            walker: Walker::native(),
        }
    }

    /// The probe beside `plan`'s workers (none when `alone`: `--probe-only`), on the CPU
    /// `asked` or chosen by [`choose_cpu`], with a chain of [`probe_bytes`] for the machine's
    /// last-level cache. A CPU asked for that this process may not use is the person's error
    /// (exit 2).
    pub fn for_plan(
        plan: &Plan,
        topology: &Topology,
        asked: Option<usize>,
        alone: bool,
    ) -> Result<ProbeConfig> {
        let usable = &plan.cpu_order;
        let workers: Vec<usize> = match (alone, plan.pin) {
            (true, _) => Vec::new(),
            // Unpinned workers may run anywhere.
            (false, PinPolicy::None) => usable.clone(),
            (false, _) => {
                let most = plan.grid.threads.iter().copied().max().unwrap_or(0);
                usable.iter().copied().take(most).collect()
            }
        };
        let cpu = choose_cpu(usable, &workers, asked)?;
        let llc = topology
            .last_level()
            .map_or(0, |level| topology.cache_total(level));
        // The arrays' budget is the room less an eighth; the probe takes at most an eighth
        // of the budget, so arrays and chain together still fit the room (a container's).
        let room = (plan.memory_budget / 8).max(16 << 20);
        Ok(ProbeConfig::new(cpu, probe_bytes(llc).min(room)))
    }

    /// `probe on CPU 1 (no worker uses it): 128 MiB chain, 4096 loads every 100 ms = 2.6 MB/s
    /// (40960 lines/s × 64 B)`.
    pub fn line(&self) -> String {
        format!(
            "probe on {}: {} chain, {} loads every {} ms = {}",
            self.cpu.describe(),
            format_bytes(self.bytes),
            self.pacing.blocks() * UNROLL,
            self.pacing.period.as_millis(),
            self.pacing.traffic()
        )
    }
}

/// One burst: its mean ns per load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeSample {
    pub at: Instant,
    pub ns: f64,
}

/// What the probe says on its channel.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeEvent {
    /// The chain is built on its CPU: its size and share on huge pages (where the OS says).
    Ready {
        bytes: u64,
        huge_share: Option<f64>,
    },
    Sample(ProbeSample),
    /// It stopped on an error (a pin refused, a map failed, a walk off the chain).
    Failed(String),
}

/// What a probe did, once stopped and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSummary {
    bursts: u64,
    hops: u64,
    /// Samples no one took in time.
    dropped: u64,
    elapsed: Duration,
    /// The pacing's period: each burst owns one.
    period: Duration,
}

impl ProbeSummary {
    /// Lines per second over its life, as run (the bursts it made, not the plan): over the
    /// time it ran, or the periods its bursts own where that is longer (a run shorter than a
    /// period made one burst, at 0 s, not a burst per its few milliseconds).
    pub fn lines_per_s(&self) -> f64 {
        let owned = self.period.as_secs_f64() * self.bursts as f64;
        self.hops as f64 / self.elapsed.as_secs_f64().max(owned).max(1e-9)
    }

    /// `probe: 312 bursts, 1277952 loads in 31.2 s = 40960 lines/s × 64 B = 2.6 MB/s; chain
    /// validated`.
    pub fn line(&self) -> String {
        let lps = self.lines_per_s();
        format!(
            "probe: {} bursts, {} loads in {:.1} s = {lps:.0} lines/s × {LINE} B = {:.2} MB/s; \
             chain validated",
            self.bursts,
            self.hops,
            self.elapsed.as_secs_f64(),
            lps * LINE as f64 / 1e6
        )
    }
}

/// A running probe: its thread and channel. Stop it with [`Probe::stop`] (dropping it stops
/// it too, without the validation's word).
pub struct Probe {
    pub config: ProbeConfig,
    events: Receiver<ProbeEvent>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<Result<ProbeSummary>>>,
}

/// Samples held for a loop that is busy: a minute's worth.
const QUEUE: usize = 600;

impl Probe {
    /// Starts the probe's thread: it pins itself, builds the chain there (first touch on its
    /// node), says `Ready`, then chases a burst per period until stopped.
    pub fn start(config: ProbeConfig) -> Result<Probe> {
        let (tx, events) = crossbeam_channel::bounded(QUEUE);
        let (stop, stop_rx) = crossbeam_channel::bounded(1);
        let c = config.clone();
        let thread = std::thread::Builder::new()
            .name("stream-top-probe".into())
            .spawn(move || {
                let out = chase(&c, &tx, &stop_rx);
                if let Err(e) = &out {
                    let _ = tx.try_send(ProbeEvent::Failed(e.to_string()));
                }
                out
            })
            .map_err(|e| Error::engine(format!("cannot start the probe's thread: {e}")))?;
        Ok(Probe {
            config,
            events,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The probe's events (a clone: select on it).
    pub fn events(&self) -> Receiver<ProbeEvent> {
        self.events.clone()
    }

    /// Stops the probe (within a burst), and returns what it did once its chain validated.
    pub fn stop(mut self) -> Result<ProbeSummary> {
        self.stop_thread()
            .unwrap_or_else(|| Err(Error::engine("the probe was already stopped")))
    }

    fn stop_thread(&mut self) -> Option<Result<ProbeSummary>> {
        drop(self.stop.take());
        let thread = self.thread.take()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|_| Err(Error::engine("the probe's thread panicked"))),
        )
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}

/// The probe's thread: see the module's notes.
fn chase(c: &ProbeConfig, tx: &Sender<ProbeEvent>, stop: &Receiver<()>) -> Result<ProbeSummary> {
    let cpu = c.cpu.cpu;
    let _pin = PinnedThread::to(cpu)
        .map_err(|e| Error::machine(format!("cannot pin the probe to CPU {cpu}: {e}")))?;
    let chain = Chain::build(c.bytes, Pages::Huge, c.seed)?;
    let _ = tx.try_send(ProbeEvent::Ready {
        bytes: chain.bytes(),
        huge_share: chain.huge_bytes().map(|h| h as f64 / chain.bytes() as f64),
    });
    let blocks = c.pacing.blocks();
    let started = Instant::now();
    let mut summary = ProbeSummary {
        bursts: 0,
        hops: 0,
        dropped: 0,
        elapsed: Duration::ZERO,
        period: c.pacing.period,
    };
    let mut p = 0;
    let mut next = Instant::now();
    loop {
        let t0 = now_ns();
        p = chain
            .walk(c.walker, p, blocks)
            .ok_or_else(|| Error::engine("the probe's chase left its buffer"))?;
        let t1 = now_ns();
        let at = Instant::now();
        // The first burst runs on lines the build just wrote (some still cached): not a sample.
        if summary.bursts > 0 {
            let ns = t1.saturating_sub(t0) as f64 / Chain::hops(blocks) as f64;
            match tx.try_send(ProbeEvent::Sample(ProbeSample { at, ns })) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => summary.dropped += 1,
                // No one listens any more: stop.
                Err(TrySendError::Disconnected(_)) => break,
            }
        }
        summary.bursts += 1;
        summary.hops += Chain::hops(blocks);
        next += c.pacing.period;
        // Behind (a long stop of the process): the next burst now, not a catch-up run.
        let now = Instant::now();
        if next < now {
            next = now;
        }
        match stop.recv_timeout(next - now) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    summary.elapsed = started.elapsed();
    chain.validate(summary.hops, p, &|| Ok(()))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pacing_keeps_the_traffic_under_one_percent_of_a_slow_machine() {
        // A single DDR3-1600 channel, 12.8 GB/s, is slower than any machine we run on; even
        // with the adjacent-line prefetcher doubling every load, the probe is far under 1 %.
        let slow = 12.8e9;
        assert!(2.0 * PACING.share_of(slow) < MAX_SHARE);
        assert_eq!(PACING.lines_per_s(), 40_960.0);
        assert_eq!(PACING.bytes_per_s(), 40_960.0 * 64.0);
        // A full-speed DRAM chase (10^7 lines/s) would not be: the pause is what keeps it so.
        let flat_out = Pacing {
            burst_hops: 1_000_000,
            period: Duration::from_millis(100),
        };
        assert!(flat_out.share_of(slow) > MAX_SHARE);
        assert_eq!(PACING.traffic(), "2.6 MB/s (40960 lines/s × 64 B)");
        // A burst is whole blocks of the unrolled walker.
        assert_eq!(PACING.blocks() * UNROLL, PACING.burst_hops);
    }

    #[test]
    fn the_cpu_is_a_free_one_when_there_is_one_and_named_otherwise() {
        // 2 CPUs, --threads 1: the worker is on CPU 0, the probe on CPU 1.
        let c = choose_cpu(&[0, 1], &[0], None).unwrap();
        assert_eq!((c.cpu, c.choice, c.shared), (1, CpuChoice::Free, false));
        assert_eq!(c.describe(), "CPU 1 (no worker uses it)");
        // --threads 2: no CPU is free; the last one, shared, and said.
        let c = choose_cpu(&[0, 1], &[0, 1], None).unwrap();
        assert_eq!((c.cpu, c.choice, c.shared), (1, CpuChoice::Shared, true));
        assert_eq!(
            c.describe(),
            "CPU 1 (shared with a worker: every CPU has one)"
        );
        // The last free CPU, whatever the pinning order.
        assert_eq!(choose_cpu(&[0, 4, 2, 6], &[0, 4], None).unwrap().cpu, 6);
        // No worker at all (--probe-only): the last CPU, free.
        assert_eq!(choose_cpu(&[3, 1], &[], None).unwrap().cpu, 3);
        // Asked for: taken, and whether a worker shares it said.
        let c = choose_cpu(&[0, 1], &[0], Some(0)).unwrap();
        assert_eq!((c.cpu, c.choice, c.shared), (0, CpuChoice::Asked, true));
        assert_eq!(c.describe(), "CPU 0 (--probe-cpu, shared with a worker)");
        assert_eq!(
            choose_cpu(&[1, 0], &[0], Some(7)).unwrap_err().to_string(),
            "--probe-cpu 7: not a CPU this process may run on (usable: 0,1)"
        );
        assert!(choose_cpu(&[], &[], None).is_err());
    }

    #[test]
    fn the_buffer_is_four_times_the_last_level_cache() {
        assert_eq!(probe_bytes(32 << 20), 128 << 20);
        assert_eq!(probe_bytes(2 << 20), 64 << 20);
    }

    #[test]
    fn a_probe_sends_samples_and_validates_its_chain_when_stopped() {
        // A small chain, fast bursts: the thread's life, not its figures.
        let cpu = crate::platform::current_cpu().unwrap_or(0);
        let mut config = ProbeConfig::new(
            ProbeCpu {
                cpu,
                choice: CpuChoice::Asked,
                shared: true,
            },
            1 << 20,
        );
        config.pacing = Pacing {
            burst_hops: 256,
            period: Duration::from_millis(1),
        };
        let probe = Probe::start(config).unwrap();
        let events = probe.events();
        let Ok(ProbeEvent::Ready { bytes, .. }) = events.recv() else {
            panic!("no Ready");
        };
        assert_eq!(bytes, 1 << 20);
        for _ in 0..3 {
            match events.recv().unwrap() {
                ProbeEvent::Sample(s) => assert!(s.ns > 0.0, "{s:?}"),
                other => panic!("{other:?}"),
            }
        }
        let summary = probe.stop().unwrap();
        assert!(summary.bursts >= 4, "{summary:?}");
        assert_eq!(summary.hops, summary.bursts * 256);
        assert!(summary.line().ends_with("chain validated"));
        // A probe stopped within its first period counts its one burst over that period.
        let short = ProbeSummary {
            bursts: 1,
            hops: 4096,
            dropped: 0,
            elapsed: Duration::from_millis(3),
            period: PACING.period,
        };
        assert_eq!(short.lines_per_s(), 40_960.0);
    }
}
