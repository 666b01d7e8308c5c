//! The probe in the live monitor (`--probe`, `P`, `--probe-only`; its state is `probe_panel`):
//! this file starts and stops the engine's probe (`engine::latency::probe`), takes its samples
//! into the probe's watch (`judge::watch::probe`) and its timeline, and tells in the log what
//! the watch makes of them, with suspects ranked as for a cell (the probe's CPU is "ours").
//!
//! The probe is not the engine: its own thread and channel, which the event loop listens to
//! beside the engine's. Stopping it (`P`, or the end of the monitor) waits for its burst and
//! the validation of its chain, a walk of every line: a fraction of a second.

use super::app::{Action, App};
use crate::base::error::{Error, Result};
use crate::base::units::format_bytes;
use crate::engine::latency::probe::{Probe, ProbeEvent};
use crate::judge::watch::contention::Change;
use crate::judge::watch::log::Kind;
use crate::judge::watch::narrative;
use crate::judge::watch::probe::{self as watch, PROBE_CELL};
use crate::judge::watch::suspects::Placement;
use std::time::Instant;

impl App {
    /// Starts the probe (where there is a configuration and it is not running), and says so.
    pub fn start_probe(&mut self) {
        let Some(config) = self.probe.config.clone() else {
            return;
        };
        if self.probe.running() {
            return;
        }
        let line = config.line();
        match Probe::start(config) {
            Ok(p) => {
                self.probe.running = Some(p);
                self.log_line(Kind::Info, line);
            }
            Err(e) => self.log_line(Kind::Error, format!("probe: {e}")),
        }
    }

    /// Stops the probe and validates its chain: what it did, or why the chain failed (an
    /// error). Its open episode ends, cut short, and its reference is learned again when it
    /// comes back.
    pub fn stop_probe(&mut self) -> Option<Result<String>> {
        let probe = self.probe.running.take()?;
        let now = self.clock.now.max(Instant::now());
        if let Some(id) = self.probe.watch.relearn(now) {
            self.probe_episode_ended(id, now);
        }
        Some(probe.stop().map(|s| s.line()))
    }

    /// `P`: the probe on or off (nothing where it cannot run).
    pub(crate) fn toggle_probe(&mut self) -> Action {
        if self.probe.config.is_none() {
            self.view.guard.notice = Some("no probe here: it needs a CPU to run on".into());
            return Action::Redraw;
        }
        if self.probe.running() {
            match self.stop_probe() {
                Some(Ok(line)) => self.log_line(Kind::Info, format!("{line}; probe off")),
                Some(Err(e)) => self.log_line(Kind::Error, format!("probe: {e}")),
                None => {}
            }
        } else {
            self.start_probe();
        }
        Action::Redraw
    }

    /// Takes in the probe's event now; returns whether the screen changed.
    pub fn on_probe(&mut self, ev: ProbeEvent) -> bool {
        self.on_probe_at(ev, Instant::now())
    }

    /// Takes in the probe's event that came at `at`.
    pub fn on_probe_at(&mut self, ev: ProbeEvent, at: Instant) -> bool {
        self.clock.advance(at);
        match ev {
            ProbeEvent::Ready { bytes, huge_share } => {
                self.probe.chain = Some((bytes, huge_share));
                if huge_share.is_some_and(|s| s < 0.5) {
                    let text = format!(
                        "probe: {:.0} % of its {} chain on huge pages: its latency includes \
                         TLB misses",
                        huge_share.unwrap_or(0.0) * 100.0,
                        format_bytes(bytes)
                    );
                    self.log_line(Kind::Info, text);
                }
            }
            ProbeEvent::Sample(s) => {
                let second = self.clock.second(s.at);
                self.probe.history.push(second, s.ns);
                for c in self.probe.watch.sample(s.ns, s.at) {
                    self.probe_change(c, s.at);
                }
            }
            ProbeEvent::Failed(why) => {
                // The thread ended: what it did is lost with it, the error is what counts.
                let _ = self.probe.running.take().map(Probe::stop);
                self.log_line(Kind::Error, format!("probe stopped: {why}"));
            }
        }
        true
    }

    /// Logs what a sample did to the probe's state, with suspects as for a cell.
    fn probe_change(&mut self, c: Change, at: Instant) {
        match c {
            Change::Learned(_) => {
                let text = format!(
                    "probe reference: {:.0} ns, the median of its first {} calm samples",
                    self.probe.watch.reference_ns().unwrap_or(f64::NAN),
                    watch::LEARN
                );
                self.note(Kind::Info, None, text);
            }
            Change::Began(id) => {
                let Some((started, evidence)) = self
                    .probe
                    .watch
                    .episode(id)
                    .map(|e| (e.started, e.kind.evidence()))
                else {
                    return;
                };
                self.narration.suspects.open(PROBE_CELL, started, evidence);
                self.probe_rank();
                let Some(ep) = self.probe.watch.episode(id) else {
                    return;
                };
                let sampled = !ep.suspects.is_empty();
                let who = narrative::suspects(&ep.suspects, 3, sampled);
                let text = watch::began(&self.clock.time_of_day(started), ep, &who);
                self.note(Kind::Contention, None, text);
            }
            Change::Lasting(id) => {
                self.probe_rank();
                if let Some(ep) = self.probe.watch.episode(id) {
                    let text = watch::lasting(ep, ep.duration(at));
                    self.note(Kind::Contention, None, text);
                }
            }
            Change::Ended(id) => self.probe_episode_ended(id, at),
        }
    }

    fn probe_episode_ended(&mut self, id: u64, at: Instant) {
        let sampled = self.narration.suspects.has_evidence(PROBE_CELL);
        self.narration.suspects.close(PROBE_CELL);
        let Some(ep) = self.probe.watch.episode(id) else {
            return;
        };
        let span = self.episode_span(ep, at);
        let who = narrative::suspects(&ep.suspects, 3, sampled || !ep.suspects.is_empty());
        let text = watch::ended(&span, ep, ep.duration(at), &who);
        self.note(Kind::Contention, None, text);
    }

    /// Ranks the suspects of the probe's open episode: its CPU is ours.
    pub(crate) fn probe_rank(&mut self) {
        if !self.narration.suspects.has_evidence(PROBE_CELL) {
            return;
        }
        let placement = Placement {
            our_cpus: self
                .probe
                .config
                .iter()
                .filter_map(|c| u32::try_from(c.cpu.cpu).ok())
                .collect(),
            nodes: self.setup.nodes.clone(),
        };
        let ranked = self
            .narration
            .suspects
            .rank(PROBE_CELL, &placement, self.setup.own_pid);
        let w = &mut self.probe.watch;
        if let Some(id) = w.open().map(|e| e.id)
            && let Some(ep) = w.episode_mut(id)
        {
            ep.suspects = ranked;
        }
    }

    /// The monitor ends: the probe stops, and a chain that failed its validation is an error.
    pub(crate) fn end_probe(&mut self) -> Result<()> {
        match self.stop_probe() {
            Some(Err(e)) => Err(Error::engine(format!("probe: {e}"))),
            _ => Ok(()),
        }
    }
}
