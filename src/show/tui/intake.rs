//! Event intake: the engine's events and the host's and the other processes' samples, taken
//! into the monitor's state (the board, `Live`, the timeline's history) with a log line where a
//! person should hear of one. What a round means for contention is handed to `narration`.

use super::app::{App, Progress};
use crate::base::units::format_bytes;
use crate::engine::events::{Event, RoundRecord};
use crate::engine::plan::CellId;
use crate::judge::watch::contention::{Disturbed, OffCpu};
use crate::judge::watch::log::{Kind, Round};
use crate::judge::watch::probe::PROBE_CELL;
use crate::machine::host::HostSample;
use crate::machine::procs::ProcSample;
use crate::platform;
use std::time::Instant;

impl App {
    /// Takes in an engine event now; returns whether the screen changed.
    pub fn on_event(&mut self, ev: &Event) -> bool {
        self.on_event_at(ev, Instant::now())
    }

    /// Takes in an engine event that came at `at`.
    pub fn on_event_at(&mut self, ev: &Event, at: Instant) -> bool {
        self.clock.advance(at);
        // First, so that the watch hears whether the board judged the round disturbed.
        self.board.record(ev);
        match ev {
            Event::Round(r) => {
                self.view.heard_round(r.cell);
                if !r.warmup {
                    let gbs = r.gbs();
                    let disturbed = self
                        .board
                        .cell(r.cell)
                        .is_some_and(|c| c.last_finding.disturbed);
                    let change = self.narration.watch.round(
                        r.cell,
                        gbs,
                        Disturbed::judged(r, disturbed),
                        at,
                    );
                    let second = self.clock.second(at);
                    self.live.history.round(r.cell, second, gbs);
                    for c in change {
                        self.contention(r.cell, c, at);
                    }
                    self.announce_waiting(at);
                }
                self.live.current = Some(r.cell);
                self.live.progress_done(r.cell);
            }
            Event::Checksum(c) => {
                if !c.ok {
                    let text = format!(
                        "CHECKSUM FAILED on {}: sum of a is {}, expected {}",
                        self.cell_name(c.cell),
                        c.actual,
                        c.expected
                    );
                    self.note(Kind::Checksum, Some(c.cell), text);
                }
            }
            Event::Progress {
                cell,
                stage,
                done_bytes,
                total_bytes,
            } => {
                self.live.progress = Some(Progress {
                    cell: *cell,
                    stage: *stage,
                    done_bytes: *done_bytes,
                    total_bytes: *total_bytes,
                });
            }
            Event::Allocated {
                cell,
                bytes,
                huge_bytes,
            } => self.arrays_in_place(*cell, *bytes, *huge_bytes),
            // Kept by the board; the detail panel shows it.
            Event::Placement { .. } => {}
            Event::CellFailed { cell, reason } => {
                self.live.progress_done(*cell);
                let text = format!("{} could not run: {reason}", self.cell_name(*cell));
                // Said on exit should the engine end next (a worker died in the cell). For want
                // of a cell that can run it waits for `R` or a focus instead.
                self.live.last_error = Some(text.clone());
                self.note(Kind::Error, Some(*cell), text);
            }
            // The board took its failed mark off; it comes back should the cell fail again.
            Event::CellRetry { cell, tries } => {
                let text = format!("{} tried again (try {tries})", self.cell_name(*cell));
                self.note(Kind::Info, Some(*cell), text);
            }
            Event::Trial(p) => {
                // No round runs while a trial does: no cell is measured now.
                self.live.current = None;
                self.live.trial = Some(*p);
            }
            Event::Choice(c) => {
                self.live.trial = None;
                let set = self
                    .grid
                    .sets
                    .get(c.set)
                    .map_or_else(|| format!("set {}", c.set), |s| s.label());
                self.note(Kind::Choice, None, format!("{set} runs {}", c.describe()));
            }
            Event::Visit { cell, .. } => {
                self.live.trial = None;
                self.live.current = Some(*cell);
                self.live.progress_done(*cell);
            }
            Event::Paused => {
                self.live.paused = true;
                self.note(Kind::Info, None, "paused: workers parked".into());
            }
            Event::Resumed => {
                self.live.paused = false;
                self.note(Kind::Info, None, "resumed".into());
            }
            Event::Error(msg) => {
                self.live.last_error = Some(msg.clone());
                self.note(Kind::Error, None, msg.clone());
            }
            // The event loop answers gaps; nothing to show. What the arrays hold is the
            // exporter's.
            Event::Gap => return false,
            Event::ArraysHeld(bytes) => self.live.arrays_held = Some(*bytes),
            Event::Finished => {
                self.live.finished = true;
                self.live.current = None;
                self.live.trial = None;
                self.note(Kind::Info, None, "the engine ended".into());
            }
        }
        if let Event::Round(r) = ev {
            self.log_disturbed(r);
        }
        true
    }

    /// A cell's arrays are in place: how large, and how much of them on huge pages.
    fn arrays_in_place(&mut self, cell: CellId, bytes: u64, huge_bytes: Option<u64>) {
        self.live.progress_done(cell);
        let text = format!(
            "arrays for {} in place: {}, {} on huge pages",
            self.cell_name(cell),
            format_bytes(bytes),
            huge_bytes.map_or_else(
                || platform::HUGE_PAGES_NOTE.unwrap_or("unknown").to_string(),
                format_bytes
            )
        );
        self.note(Kind::Info, Some(cell), text);
    }

    /// Logs a late or disturbed round, with its cause where the counters show one: into its
    /// cell's line of the minute (`EventLog::round`).
    fn log_disturbed(&mut self, r: &RoundRecord) {
        let finding = self
            .board
            .cell(r.cell)
            .map(|c| c.last_finding.clone())
            .unwrap_or_default();
        let name = self.cell_name(r.cell);
        let mut text = if r.late {
            let slowest = r.threads.iter().map(|t| t.ns()).max().unwrap_or(1);
            format!(
                "late{} round on {name}: span {:.2}× its slowest thread",
                if finding.disturbed {
                    " and disturbed"
                } else {
                    ""
                },
                r.span_ns as f64 / slowest as f64
            )
        } else if finding.disturbed {
            format!("disturbed round on {name}")
        } else {
            return;
        };
        let throttling = self.live.host.as_ref().and_then(|h| h.throttling_note());
        if let Some(c) = &finding.cause {
            text.push_str(&format!(": {c}"));
        }
        if let Some(t) = &throttling {
            text.push_str(&format!("; {t}"));
        }
        let cause = match (finding.cause, throttling) {
            (Some(c), Some(t)) => Some(format!("{c}; {t}")),
            (c, t) => c.or(t),
        };
        let round = Round {
            name,
            late: r.late,
            disturbed: finding.disturbed,
            off_cpu: OffCpu::of(r),
            cause,
            text,
        };
        let time = self.clock.stamp_now();
        let now = self.clock.now;
        self.narration.log.round(now, time, r.cell, round);
    }

    /// Takes in a host sample.
    pub fn on_host(&mut self, h: HostSample) {
        self.board.record_host(&h);
        self.live.host = Some(h);
    }

    /// Takes in a sample of the other processes, taken now.
    pub fn on_procs(&mut self, p: ProcSample) {
        self.on_procs_at(p, Instant::now());
    }

    /// Takes in a sample of the other processes, taken at `at`: the timeline's CPU shares,
    /// and new evidence for the suspects of every open episode.
    pub fn on_procs_at(&mut self, p: ProcSample, at: Instant) {
        self.clock.advance(at);
        let second = self.clock.second(at);
        self.live
            .history
            .cpu(second, p.processes.iter().map(|p| (p.pid, p.cpu_pct)));
        let n = &mut self.narration;
        let watch = &n.watch;
        let probe = &self.probe.watch;
        n.suspects.sample(p, at, |c| {
            if c == PROBE_CELL {
                probe.recovering()
            } else {
                watch.recovering(c)
            }
        });
        let open: Vec<CellId> = n
            .watch
            .open_ids()
            .into_iter()
            .filter_map(|id| n.watch.episode(id).map(|e| e.cell))
            .collect();
        for cell in open {
            self.rank(cell);
        }
        self.probe_rank();
        self.announce_waiting(at);
    }
}
