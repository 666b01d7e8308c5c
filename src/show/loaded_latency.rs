//! `--measure loaded-latency --headless`: the curve measured once, each point said on stderr
//! as it comes, then the table in the chosen format on stdout and the exports, the README and
//! the Prometheus textfile asked for. The engine is `engine::latency::loaded`; the formats are
//! `report::loaded` and the SVG's `loaded_chart`.

use crate::app::cli::Config;
use crate::app::session::Session;
use crate::base::error::Result;
use crate::base::output;
use crate::base::units::{format_bytes, threads_phrase};
use crate::engine::latency::loaded::{
    Delays, LoadPlan, LoadedCurve, LoadedOptions, Progress, loaded_latency,
};
use crate::engine::plan::{Level, Plan};
use crate::judge::stats::Board;
use crate::machine::topology::PinPolicy;
use crate::platform::signals::{self, Asks, Signals, signal_name};
use crate::show::headless::{print_then_save, save, snapshot};
use crate::show::headless_latency::partial_run;
use crate::show::report::loaded::{delay_text, knee_line, points_of};
use crate::show::report::table_text;
use crossbeam_channel::Receiver;

/// Where the chase and the load run for `plan`: the chase on the placement's first CPU with
/// the grid's first set, the load threads (the grid's most threads but the chase's CPU, at
/// least one) on the next CPUs, sharing the grid's `dram` set as their own arrays.
pub fn load_plan(plan: &Plan) -> LoadPlan {
    let grid = &plan.grid;
    let chase = &grid.sets[0];
    let load = grid
        .sets
        .iter()
        .find(|s| s.level == Some(Level::Dram))
        .unwrap_or(chase);
    let threads = grid.threads.iter().copied().max().unwrap_or(1);
    let pinned = crate::platform::HAS_AFFINITY && plan.pin != PinPolicy::None;
    LoadPlan::new(
        chase,
        load,
        &plan.cpu_order,
        pinned,
        threads.saturating_sub(1).max(1),
        plan.kernel,
    )
}

/// The options from the command line: `--delays` or the default ladder.
pub fn options(config: &Config) -> LoadedOptions {
    LoadedOptions {
        delays: config.delays.clone().map_or(Delays::Default, Delays::Ns),
        ..LoadedOptions::default()
    }
}

/// A CPU as the lines say it.
fn cpu_text(cpu: Option<usize>) -> String {
    cpu.map_or("unpinned".into(), |c| format!("CPU {c}"))
}

/// What runs, in one line: the chase, the load, the delays.
pub fn plan_line(plan: &LoadPlan, config: &Config) -> String {
    let cpus: Vec<String> = plan.load_cpus.iter().map(|&c| cpu_text(c)).collect();
    format!(
        "loaded latency: a {} chase on {} against {} ({}) streaming {} of arrays; delays {}",
        format_bytes(plan.chase_bytes),
        cpu_text(plan.chase_cpu),
        threads_phrase(plan.load_cpus.len()).replace("thread", "load thread"),
        cpus.join(", "),
        format_bytes(plan.load_bytes()),
        match &config.delays {
            Some(d) => d
                .iter()
                .map(|&n| delay_text(Some(n)))
                .collect::<Vec<_>>()
                .join(", "),
            None => "0 and 7 more from ¼ to 32 × one chunk's time (the default)".into(),
        }
    ) + if plan.shares_chase_cpu() {
        " · a load thread may share the chase's CPU: its figures are then the scheduler's"
    } else {
        ""
    }
}

/// Runs the curve and writes what was asked for. The exit code: 0, the error's, or 128 + the
/// number of the signal that ended the curve early (the points measured printed, marked
/// partial).
pub fn run(config: &Config, session: Session) -> Result<u8> {
    let Session { plan, info } = session;
    let load = load_plan(&plan);
    output::stderr(&format!(
        "stream-top: {} · kernel {}, {} stores · huge pages {}",
        info.topology.model, info.kernel, info.kernel.stores, info.huge_pages_flag
    ));
    output::say(&plan_line(&load, config));
    let (_signals, signal_rx) = Signals::start()?;
    let mut signal = None;
    let mut planned = 0;
    let curve = loaded_latency(&load, &options(config), |p| {
        if let Progress::Planned { delays_ns } = p {
            planned = delays_ns.len();
        }
        say_progress(p);
        signal = ended_by(&signal_rx);
        signal.is_none()
    })?;
    let mut snap = snapshot(config, &info, &plan.grid, &Board::new(1));
    snap.loaded_latency = points_of(&curve);
    snap.partial =
        signal.map(|sig| partial_run(sig, curve.points.len(), planned.max(1), "loaded point"));
    output::say(&knee_line(&snap.loaded_latency));
    print_then_save(&table_text(config.format, &snap), || {
        save(config, &snap)?;
        save_prom_file(config, &curve)
    })?;
    Ok(signal.map_or(0, signals::exit_code))
}

/// A point of the curve as it comes, on stderr.
fn say_progress(p: Progress<'_>) {
    match p {
        Progress::Planned { .. } => {}
        Progress::Idle(idle) => {
            output::stderr(&format!("  idle (no load): {:.1} ns", idle.latency_ns))
        }
        Progress::Point { index, of, point } => output::stderr(&format!(
            "  {}/{of} delay {}: load {:.1} GB/s, latency {:.1} ns",
            index + 1,
            delay_text(point.delay_ns),
            point.load_gbs,
            point.latency_ns
        )),
    }
}

/// The signal that asks the run to end, if one came since the last look (said on stderr).
fn ended_by(signal_rx: &Receiver<i32>) -> Option<i32> {
    signal_rx.try_iter().find_map(|sig| match Asks::of(sig) {
        Asks::End(sig) => {
            output::stderr(&format!("stream-top: {}: stopping", signal_name(sig)));
            Some(sig)
        }
        _ => None,
    })
}

/// The Prometheus textfile asked for: the curve's own exposition.
fn save_prom_file(config: &Config, curve: &LoadedCurve) -> Result<()> {
    if let Some(path) = &config.prom_file {
        let text = crate::show::serve::exposition::render_loaded_latency(curve);
        crate::base::files::replace_atomically(path, text.as_bytes())
            .map_err(|e| e.context("--prom-file"))?;
        output::stderr(&format!("stream-top: wrote {}", path.display()));
    }
    Ok(())
}
