//! The probe beside a headless run: always beside a service (`--headless --serve`, unless
//! `--no-probe`), where its samples feed the exporter's probe watch and `stream_top_probe_*`,
//! and beside a one-shot sweep when asked (`--headless --probe`), which says at the end what
//! the probe did and saw. Its chain is its only memory between a service's visits.

use super::feed::Exporter;
use crate::app::cli::{Config, ProbeMode};
use crate::base::error::{Error, Result};
use crate::engine::latency::probe::{Probe, ProbeConfig, ProbeEvent};
use crate::engine::plan::Plan;
use crate::judge::run_info::RunInfo;
use crate::judge::watch::probe::ProbeWatch;
use crossbeam_channel::{Receiver, never};
use std::time::Duration;

/// The longest a run waits for the probe to build its chain before the triad starts.
const READY_WAIT: Duration = Duration::from_secs(30);

/// A probe running beside a headless run.
pub struct HeadlessProbe {
    probe: Option<Probe>,
    events: Receiver<ProbeEvent>,
    watch: ProbeWatch,
    failed: Option<String>,
}

impl HeadlessProbe {
    /// The probe `config` asks for (None when off), beside `plan`'s workers: its CPU chosen,
    /// or an asked one refused (exit 2), before anything runs.
    pub fn config(config: &Config, plan: &Plan, info: &RunInfo) -> Result<Option<ProbeConfig>> {
        if config.probe == ProbeMode::Off {
            return Ok(None);
        }
        ProbeConfig::for_plan(plan, &info.topology, config.probe_cpu, false).map(Some)
    }

    /// Starts the probe, and says where and how hard it chases.
    pub fn start(c: Option<ProbeConfig>) -> Result<Option<HeadlessProbe>> {
        let Some(c) = c else {
            return Ok(None);
        };
        let line = c.line();
        let probe = Probe::start(c)?;
        // Building the chain writes every line of it in random order, a burst of DRAM
        // traffic: it ends before the triad starts, so that it overlaps no timed round (a
        // probe slow to build only delays the run by READY_WAIT at most).
        if let Ok(ProbeEvent::Failed(why)) = probe.events().recv_timeout(READY_WAIT) {
            return Err(Error::engine(format!("probe stopped: {why}")));
        }
        crate::base::output::say(&line);
        Ok(Some(HeadlessProbe {
            events: probe.events(),
            probe: Some(probe),
            watch: ProbeWatch::default(),
            failed: None,
        }))
    }

    /// Its events, to select on (never, once it stopped).
    pub fn events(&self) -> Receiver<ProbeEvent> {
        if self.failed.is_some() {
            never()
        } else {
            self.events.clone()
        }
    }

    /// Takes an event from `events` (an error when its channel closed: the thread ended).
    pub fn take(&mut self, ev: Option<ProbeEvent>, exporter: Option<&mut Exporter>) {
        let ev = ev.unwrap_or_else(|| ProbeEvent::Failed("its thread ended".into()));
        if let Some(x) = exporter {
            x.on_probe(&ev);
        }
        match ev {
            ProbeEvent::Sample(s) => {
                self.watch.sample(s.ns, s.at);
            }
            ProbeEvent::Failed(why) => self.failed = Some(why),
            ProbeEvent::Ready { .. } => {}
        }
    }

    /// Stops the probe and validates its chain: the lines that say what it did and saw, or
    /// the error (its thread failed, or its chain did not validate).
    pub fn finish(mut self) -> Result<String> {
        let summary = self.probe.take().map(Probe::stop);
        if let Some(why) = self.failed {
            return Err(Error::engine(format!("probe stopped: {why}")));
        }
        let summary = summary.unwrap_or_else(|| Err(Error::engine("probe never started")))?;
        let latency = match (self.watch.latency_ns(), self.watch.reference_ns()) {
            (Some(ns), Some(r)) => format!(
                "; latency {ns:.1} ns (median of its last second), reference {r:.1} ns, {}",
                self.watch.state().word()
            ),
            (Some(ns), None) => format!("; latency {ns:.1} ns (median of its last second)"),
            _ => String::new(),
        };
        Ok(format!("{}{latency}", summary.line()))
    }
}
