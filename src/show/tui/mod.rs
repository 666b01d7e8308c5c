//! The live terminal monitor: the engine's rounds as a grid of cells that fill in as they are
//! measured, the selected cell in detail, the host beside it, and keys that steer the engine.
//!
//! The files stand in layers, each importing only those below it: `view` (what the screen
//! remembers between frames: scroll offsets, the click map, the log view) and `app` (the
//! state, in parts, and the replay's speeds) at the bottom; `ui` (the widgets) above them;
//! `intake` and `input` that change the state; `event_loop` and `replay` that drive it all.
//!
//! `app` holds the state, in parts; `intake` feeds it engine events and samples, `input` keys
//! and clicks, and `narration` tells in the log what the contention watch makes of the rounds
//! (the watching, episodes, suspects and event log are `crate::judge::watch`, which snapshots
//! record too); `ui` draws it, a file per panel, and records where it drew the cells
//! (`click_map`) so that `input` can resolve clicks without calling the renderer; `event_loop`
//! turns channels into messages and `pacing` decides when to draw (at most ten times a second,
//! in a gap between rounds when the engine gives one); `terminal` owns the screen and its
//! restoration; `replay` runs the same state and screens on a recording, at a time cursor;
//! this file sets them up around the engine.

pub mod app;
pub(crate) mod click_map;
pub mod event_loop;
pub mod history;
pub(crate) mod host;
pub mod input;
mod intake;
pub mod loaded;
mod narration;
pub(crate) mod pacing;
pub mod probe;
pub mod probe_panel;
pub mod replay;
pub(crate) mod terminal;
pub mod ui;
pub mod view;

use crate::app::cli::ProbeMode;
use crate::base::error::Result;
use crate::engine::Engine;
use crate::engine::latency::probe::ProbeConfig;
use crate::engine::plan::{CellId, Plan, Schedule};
use crate::judge::groups::CpuGroups;
use crate::judge::no_effect::Setting;
use crate::judge::run_info::RunInfo;
use crate::judge::watch::contention::Thresholds;
use crate::machine::host::{HostSampler, HostState};
use crate::machine::procs::ProcSample;
use crate::machine::topology::PinPolicy;
use crate::show::record::Recorder;
use crate::show::report::{self, Baseline, Measure, Snapshot};
use crate::show::serve::Exporter;
use app::{App, Header};
use crossbeam_channel::Sender;
pub use event_loop::Ended;
use event_loop::{Channels, Ports};
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;
pub use terminal::require_terminal;
use view::ViewState;

/// How often the host panel and the other processes are sampled.
const HOST_EVERY: Duration = Duration::from_secs(1);
/// How long the way out waits for the engine (a round on a multi-GiB set can last longer;
/// the end of the process stops it then).
const ENGINE_STOP_WAIT: Duration = Duration::from_millis(100);

/// Everything `run` needs, from the command line.
pub struct Launch {
    /// schedule = Schedule::Sweep { rounds_per_visit }
    pub plan: Plan,
    /// Header: machine, kernel, stores, pin, clock, vendor.
    pub info: RunInfo,
    /// `--rounds`: statistics over the last N rounds of each cell.
    pub window: usize,
    /// Where `e` writes (default results/).
    pub export_dir: PathBuf,
    /// `--baseline A.json`, read and checked before the screen opens.
    pub baseline: Option<Baseline>,
    /// "/" (host sampler root).
    pub root: PathBuf,
    /// When a cell counts as contended (`--contention-drop`, `--contention-rounds`).
    pub thresholds: Thresholds,
    /// `--serve`, `--prom-file`: fed with the events and host samples the loop receives.
    pub exporter: Option<Exporter>,
    /// `--record FILE`: the recorder, started.
    pub recorder: Option<Recorder>,
    /// `--probe`, `--probe-only` (no engine then), and `--probe-cpu`.
    pub probe: ProbeMode,
    pub probe_cpu: Option<usize>,
}

impl Header {
    /// The header lines from the run's description.
    fn from_info(info: &RunInfo) -> Header {
        let t = &info.topology;
        let mut vendor = match info.vendor.gbs {
            Some(g) => format!("vendor {g:.1} GB/s ({})", info.vendor.source),
            None => format!("vendor figure unknown ({})", info.vendor.source),
        };
        if let Some(line) = info.container.and_then(|c| c.line()) {
            vendor.push_str(&format!(" · {line}"));
        }
        Header {
            machine: format!("{} · {} · {}", info.hostname, t.model, t.summary()),
            caches: format!("caches {}", t.cache_summary()),
            run: format!(
                "kernel {} · {} stores · pin {}{} · clock {}",
                info.loops.setting(info.kernel),
                info.kernel.stores,
                format!("{:?}", info.pin).to_lowercase(),
                // Said once, as the reports say it beside the table.
                if info.no_effect.iter().any(|n| n.setting == Setting::Pin) {
                    " (no effect here: spread and compact place alike)"
                } else {
                    ""
                },
                info.clock.line(),
            )
            // What the disagreement means is in the log: the header has one line.
            + if info.clock.agree { "" } else { " (see the log)" },
            vendor,
        }
    }
}

/// What it means that the clock's two timing chains disagree, and one thing to try; None when
/// they agree.
fn clock_disagreement(clock: &crate::machine::clock::ClockEstimate) -> Option<String> {
    (!clock.agree).then(|| {
        format!(
            "clock: the two timing chains disagree ({:.2} vs {:.2} GHz), so the CPU's clock \
             changed while it was timed (frequency scaling, or another process on that CPU): \
             the per-cycle figures (B/cycle) rest on an uncertain clock; run again when the machine is \
             idle, or hold the clock still (the performance governor: \
             `cpupower frequency-set -g performance`)",
            clock.ghz, clock.check_ghz
        )
    })
}

/// The monitor's state for `launch`, before the screen opens: header, log lines of the
/// setup, NUMA nodes and core groups, the baseline, and the probe's CPU (an asked one that
/// cannot be had is refused here).
fn app_for(launch: &Launch) -> Result<App> {
    let ctx = launch.info.context();
    let mut app = App::new(
        launch.plan.grid.clone(),
        launch.window,
        ctx,
        Header::from_info(&launch.info),
        launch.plan.duty,
    );
    if let Some(c) = &launch.info.counters {
        app.log_line(
            crate::judge::watch::log::Kind::Info,
            format!("counters: {}", c.line()),
        );
    }
    if let Some(line) = clock_disagreement(&launch.info.clock) {
        app.log_line(crate::judge::watch::log::Kind::Info, line);
    }
    if let Some(line) = &launch.info.numa {
        app.log_line(crate::judge::watch::log::Kind::Info, line.clone());
    }
    if let Some(note) = &launch.info.threads_note {
        app.log_line(crate::judge::watch::log::Kind::Info, note.clone());
    }
    app.setup.matrix = launch.info.matrix.clone();
    app.setup.not_a_measurement = launch.info.not_a_measurement.clone();
    app.set_thresholds(launch.thresholds);
    app.setup.nodes = numa_nodes(&launch.info);
    app.setup.groups = CpuGroups::of(&launch.info.topology);
    if launch.plan.pin != PinPolicy::None {
        app.setup.e_cores_from = launch
            .info
            .topology
            .first_efficiency_thread(&launch.plan.cpu_order);
    }
    if let Some(base) = &launch.baseline {
        use_baseline(&mut app, base);
    }
    let alone = launch.probe == ProbeMode::Only;
    // The probe's CPU, chosen (or an asked one refused) before the screen opens; with the
    // probe off, `P` starts it there.
    app.probe.config =
        match ProbeConfig::for_plan(&launch.plan, &launch.info.topology, launch.probe_cpu, alone) {
            Ok(c) => Some(c),
            Err(_) if launch.probe == ProbeMode::Off => None,
            Err(e) => return Err(e),
        };
    app.probe.alone = alone;
    if alone {
        app.log_line(
            crate::judge::watch::log::Kind::Info,
            "--probe-only: no triad workers and no arrays; the probe alone watches".into(),
        );
    }
    if launch.recorder.is_some() {
        app.narration.unrecorded = Some(Vec::new());
    }
    Ok(app)
}

/// Runs the monitor until `q` or a signal (which it says), or the end of the engine (an error).
pub fn run(mut launch: Launch) -> Result<Ended> {
    terminal::require_terminal()?;
    debug_assert!(matches!(launch.plan.schedule, Schedule::Sweep { .. }));
    let mut app = app_for(&launch)?;
    let alone = launch.probe == ProbeMode::Only;
    let (signals, sig_rx) = crate::platform::Signals::start()?;
    let mut guard = terminal::Guard::enter()?;
    let (input, input_rx) = terminal::Input::start();
    let mut view = ViewState {
        monochrome: ui::monochrome_wanted(
            std::env::var_os("TERM").as_deref(),
            std::env::var_os("NO_COLOR").as_deref(),
        ),
        ..ViewState::default()
    };
    // Draw once before the engine starts: allocation may take a while.
    let _ = event_loop::draw(&mut guard.terminal, &app, &mut view);

    if launch.probe != ProbeMode::Off {
        app.start_probe();
    }
    // `--probe-only`: no engine, and its channel never speaks.
    let (engine, events) = if alone {
        (None, crossbeam_channel::never())
    } else {
        match Engine::start(launch.plan.clone()) {
            Ok((engine, events)) => (Some(engine), events),
            Err(e) => {
                drop(guard);
                return Err(e);
            }
        }
    };
    let (procs_tx, procs_rx) = crossbeam_channel::bounded(2);
    let (host, host_rx) = host::HostThread::start(host_sampler(&launch, procs_tx), HOST_EVERY);
    let exporter = launch.exporter.take().map(RefCell::new);

    let outcome = event_loop::run(
        &mut app,
        &mut guard.terminal,
        &mut view,
        Channels {
            input: input_rx,
            events,
            host: host_rx,
            procs: procs_rx,
            signals: sig_rx,
        },
        &Ports {
            send: &|cmd| {
                if let Some(engine) = &engine {
                    engine.send(cmd);
                }
            },
            export: &|app: &mut App| match export(app, &launch) {
                Ok(paths) => app.exported(&paths),
                Err(why) => app.export_failed(why),
            },
            screen_is_ours: &terminal::active,
            suspend: &terminal::suspend,
            retake: &terminal::retake,
            exporter: exporter.as_ref(),
            recorder: launch.recorder.as_ref(),
        },
    );
    // The screen first, so the shell is back at once; then the engine (which stops within a
    // chunk of a first touch or at the end of the round under way) and the threads.
    drop(guard);
    drop(input);
    if let Some(engine) = engine {
        engine.stop_within(ENGINE_STOP_WAIT);
    }
    // A probe whose chain fails its validation fails the run, as a checksum would.
    let probe = app.end_probe();
    drop(host);
    drop(signals);
    let ended = outcome?;
    probe?;
    Ok(ended)
}

/// CPU → NUMA node, on a machine with more than one node.
fn numa_nodes(info: &RunInfo) -> std::collections::HashMap<u32, u32> {
    let t = &info.topology;
    if t.nodes.len() < 2 {
        return Default::default();
    }
    t.cpus
        .iter()
        .map(|c| (c.id as u32, c.node as u32))
        .collect()
}

/// Writes a snapshot of the table (Markdown, CSV, JSON, SVG) with the report module.
fn export(app: &App, launch: &Launch) -> Result<Vec<PathBuf>> {
    let host_now = HostState::read(&launch.root)?;
    let snap = Snapshot::build(
        &launch.info,
        &app.grid,
        &app.board,
        &host_now,
        crate::base::time::utc_now_string(),
    )
    .with_events(
        &app.grid,
        app.narration.watch.episodes(),
        app.narration.log.iter(),
        |t| app.clock.wall_at(t),
        app.clock.now.max(std::time::Instant::now()),
    );
    report::export(&launch.export_dir, &snap)
}

/// Keeps the baseline's median and rounds for every cell of our grid that measures what one of
/// its cells measured (level or size, and thread count, as `compare` matches them).
fn use_baseline(app: &mut App, base: &Baseline) {
    let mut found = Vec::new();
    for &op in &app.grid.ops {
        for (si, set) in app.grid.sets.iter().enumerate() {
            let wire = report::model::WorkingSet::from(set);
            for &t in &app.grid.threads {
                if let Some(c) = base.cell(Measure::of(wire.level, wire.size), t, false, op) {
                    let id = CellId::of(op, si, t);
                    found.push((id, c.figures.median_gbs));
                    app.baseline.rounds.insert(id, c.rates());
                }
            }
        }
    }
    for (cell, m) in found {
        app.set_baseline(cell, m);
    }
    let path = &base.path;
    app.baseline.name = Some(
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
    );
    if app.baseline.medians.is_empty() {
        let text = format!(
            "--baseline {}: none of its cells is in this grid",
            path.display()
        );
        app.log_line(crate::judge::watch::log::Kind::Error, text);
    }
}

/// The host sampler: one pass over the other processes a second serves both the host panel
/// (the sample it returns) and the suspects (the process sample, sent on `procs`).
fn host_sampler(launch: &Launch, procs: Sender<ProcSample>) -> host::Sampler {
    let mut sampler = HostSampler::new(&launch.root, std::process::id());
    Box::new(move || {
        let (host, processes) = sampler.sample_with_processes();
        // The loop gone means the monitor is ending: nobody wants either sample.
        let _ = procs.send(processes);
        Ok(host)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::clock::ClockEstimate;

    #[test]
    fn chains_that_disagree_say_what_it_means_and_what_to_try() {
        assert_eq!(clock_disagreement(&ClockEstimate::fixed(3.2)), None);
        let c = ClockEstimate {
            check_ghz: 2.78,
            agree: false,
            ..ClockEstimate::fixed(3.2)
        };
        let line = clock_disagreement(&c).unwrap();
        assert!(line.contains("3.20 vs 2.78 GHz"), "{line}");
        assert!(line.contains("changed while it was timed"), "{line}");
        assert!(
            line.contains("run again when the machine is idle"),
            "{line}"
        );
    }
}
