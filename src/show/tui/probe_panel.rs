//! The probe's part of the monitor's state: what `P` starts, the running probe, its watch and
//! its timeline. `probe` changes it (and the log); the panels read it.

use super::history::CellHistory;
use crate::engine::latency::probe::{Probe, ProbeConfig, ProbeEvent};
use crate::judge::watch::probe::ProbeWatch;
use crossbeam_channel::Receiver;

/// The probe's part of the monitor.
#[derive(Default)]
pub struct ProbePanel {
    /// What `P` starts; None where no probe can run (a test's app).
    pub config: Option<ProbeConfig>,
    pub(crate) running: Option<Probe>,
    /// `--probe-only`: no triad runs, the probe alone watches.
    pub alone: bool,
    pub watch: ProbeWatch,
    /// Its samples (ns) per second, for the timeline.
    pub(crate) history: CellHistory,
    /// The chain's size and share on huge pages, once the probe said.
    pub(crate) chain: Option<(u64, Option<f64>)>,
}

/// A copy of the panel without its running probe (a replay keeps copies of the monitor's
/// state; no probe runs in a replay).
impl Clone for ProbePanel {
    fn clone(&self) -> Self {
        ProbePanel {
            config: self.config.clone(),
            running: None,
            alone: self.alone,
            watch: self.watch.clone(),
            history: self.history.clone(),
            chain: self.chain,
        }
    }
}

impl ProbePanel {
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    /// Whether the screen shows the probe: while it runs, or has samples not yet forgotten
    /// (stopping it forgets them).
    pub(crate) fn shown(&self) -> bool {
        self.running() || self.watch.latency_ns().is_some()
    }

    /// The running probe's events.
    pub(crate) fn events(&self) -> Option<Receiver<ProbeEvent>> {
        self.running.as_ref().map(Probe::events)
    }

    /// `probe CPU 1 95 ns, ref 90 ns, calm`: the header's item, or None when it is off (no
    /// parentheses: a narrow header drops those first, and the state must stay).
    pub(crate) fn header_item(&self) -> Option<String> {
        if !self.shown() {
            return None;
        }
        let cpu = self.config.as_ref()?.cpu.cpu;
        let Some(ns) = self.watch.latency_ns() else {
            return Some(format!("probe CPU {cpu}: starting"));
        };
        let reference = self
            .watch
            .reference_ns()
            .map_or("no reference yet".into(), |r| format!("ref {r:.0} ns"));
        Some(format!(
            "probe CPU {cpu} {ns:.0} ns, {reference}, {}",
            self.watch.state().word()
        ))
    }
}
