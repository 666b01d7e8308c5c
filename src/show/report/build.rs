//! A snapshot of the running table, built from the run's description, the grid and the
//! statistics board: the one place where the run's own types become the wire model.
//!
//! Each conversion takes its source apart field by field, so a field added to the engine's, the
//! machine's or the statistics' types stops the build here, where someone decides whether the
//! snapshot shows it (and bumps the schema), instead of changing schema 1 behind our back.

use super::cliffs::cliffs;
use super::derived::derive;
use super::lands::landing;
use super::model::{
    self as wire, CellSnapshot, CheckResult, FailedCell, RERUN_SUFFIX, SCHEMA_VERSION, Snapshot,
};
use crate::base::time::{as_rfc3339, parse_rfc3339, parse_utc};
use crate::engine::events::{By, Choice, Placement};
use crate::engine::kernel::{Isa, Kernel, Stores};
use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::{ArraySize, CellId, Grid, HugePages, Level, Loops, WorkingSet};
use crate::judge::groups::{CpuGroups, Group, GroupFigures};
use crate::judge::no_effect::{NoEffect, Setting};
use crate::judge::run_info::RunInfo;
use crate::judge::stats::{Board, Context, CounterFigures, CycleSource, Figures, RoundSummary};
use crate::judge::watch::contention::Episode;
use crate::judge::watch::log::{Entry, Kind};
use crate::judge::watch::narrative;
use crate::judge::watch::suspects::Suspect;
use crate::machine::clock::ClockEstimate;
use crate::machine::counters::Availability;
use crate::machine::host::{HostState, MemPressure};
use crate::machine::topology::{Cache, CacheKind, CoreKind, Cpu, NumaNode, PinPolicy, Topology};
use crate::machine::vendor::{VendorFigure, VendorSource};
use std::time::{Instant, SystemTime};

impl Snapshot {
    /// The table as it stands: every cell of `grid` that has figures, in `grid.sweep_once()`
    /// order (the rerun row last), with the derived table computed from them, and every cell
    /// that could not run, with its reason.
    pub fn build(
        run: &RunInfo,
        grid: &Grid,
        board: &Board,
        host_now: &HostState,
        taken: String,
    ) -> Snapshot {
        let ctx = run.context();
        let groups = CpuGroups::of(&run.topology);
        let cells: Vec<CellSnapshot> = grid
            .sweep_once()
            .into_iter()
            .filter_map(|id| cell_snapshot(grid, board, id, ctx, &groups))
            .collect();
        let taken = as_rfc3339(&taken);
        let failed: Vec<FailedCell> = grid
            .sweep_once()
            .into_iter()
            .filter(|&id| board.figures(id, ctx).is_none())
            .filter_map(|id| failed_cell(grid, board, id))
            .collect();
        let matrix = run.matrix.as_ref().map(|m| matrix(m, grid_ids(&cells)));
        let grid = wire_grid(grid, &run.topology);
        // The matrix's pairs share a size: the seed's ratios between sets mean nothing there.
        let derived = if run.matrix.is_some() {
            Vec::new()
        } else {
            derive(&cells, &grid.sets, ctx.vendor_gbs)
        };
        let run_seconds = match (parse_utc(&run.started), parse_rfc3339(&taken)) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as u64),
            _ => None,
        };
        let mut snapshot = Snapshot {
            schema_version: SCHEMA_VERSION,
            taken,
            run_seconds,
            info: run.into(),
            host_now: host_now.into(),
            grid,
            cells,
            derived,
            failed,
            contention: Vec::new(),
            log: Vec::new(),
            matrix,
            cliffs: Vec::new(),
        };
        snapshot.cliffs = cliffs(&snapshot);
        snapshot
    }

    /// Adds what the live monitor saw: its contention episodes (times from `wall`, durations
    /// of open ones to `now`) and its event log.
    pub fn with_events<'a>(
        mut self,
        grid: &Grid,
        episodes: impl IntoIterator<Item = &'a Episode>,
        log: impl IntoIterator<Item = &'a Entry>,
        wall: impl Fn(Instant) -> SystemTime,
        now: Instant,
    ) -> Snapshot {
        let utc = |t: Instant| crate::base::time::rfc3339_at(wall(t));
        self.contention = episodes
            .into_iter()
            // Contention only: a disturbance is not judged against a reference.
            .filter_map(|e| Some((e, e.against()?)))
            .map(|(e, reference)| wire::Episode {
                set_label: grid
                    .sets
                    .get(e.cell.set)
                    .map(|s| s.label())
                    .unwrap_or_default(),
                threads: e.cell.threads,
                rerun: e.cell.rerun,
                start: utc(e.started),
                end: e.ended.map(utc),
                duration_s: e.duration(now).as_secs_f64(),
                cut_short: e.cut_short,
                reference_gbs: reference.gbs,
                reference_source: reference.source.name().into(),
                mean_gbs: e.mean_gbs(),
                worst_gbs: e.worst_gbs,
                depth: e.depth(),
                worst_depth: e.worst_depth(),
                rounds: e.rounds,
                basis: narrative::basis(&e.suspects).into(),
                suspects: e.suspects.iter().map(Into::into).collect(),
            })
            .collect();
        self.log = log
            .into_iter()
            .map(|e| wire::LogLine {
                time: e.time.clone(),
                kind: kind_name(e.kind).into(),
                text: e.text.clone(),
                count: e.count,
            })
            .collect();
        self
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Info => "info",
        Kind::Late => "late",
        Kind::Contention => "contention",
        Kind::Checksum => "checksum",
        Kind::Export => "export",
        Kind::Error => "error",
    }
}

impl From<&Suspect> for wire::Suspect {
    fn from(s: &Suspect) -> wire::Suspect {
        let Suspect {
            pid,
            comm,
            user,
            stream_top,
            cpu_before_pct,
            cpu_pct,
            faults_per_s,
            rss_growth_per_s,
            on_our_cpus,
            on_our_node,
            measured_bytes_per_s,
            group,
            score,
        } = s;
        wire::Suspect {
            pid: *pid,
            comm: comm.clone(),
            user: user.clone(),
            stream_top: *stream_top,
            cpu_before_cores: *cpu_before_pct / 100.0,
            cpu_cores: *cpu_pct / 100.0,
            faults_per_s: *faults_per_s,
            rss_growth_bytes_per_s: *rss_growth_per_s,
            on_our_cpus: *on_our_cpus,
            on_our_node: *on_our_node,
            measured_bytes_per_s: *measured_bytes_per_s,
            resctrl_group: group.clone(),
            score: *score,
        }
    }
}

/// The median of each set's cell (the matrix's pairs are its sets, one cell each).
fn grid_ids(cells: &[CellSnapshot]) -> impl Fn(usize) -> Option<f64> + '_ {
    move |set| {
        cells
            .iter()
            .find(|c| c.set == set && !c.rerun)
            .map(|c| c.figures.median_gbs)
    }
}

/// The matrix from its plan and its pairs' medians.
fn matrix(m: &MatrixPlan, median: impl Fn(usize) -> Option<f64>) -> wire::Matrix {
    let mut cpu_nodes: Vec<usize> = m.pairs.iter().map(|p| p.cpu_node).collect();
    let mut mem_nodes: Vec<usize> = m.pairs.iter().map(|p| p.mem_node).collect();
    for v in [&mut cpu_nodes, &mut mem_nodes] {
        v.sort_unstable();
        v.dedup();
    }
    wire::Matrix {
        threads: m.threads,
        cpu_nodes,
        mem_nodes,
        cells: m
            .pairs
            .iter()
            .enumerate()
            .map(|(set, p)| wire::MatrixCell {
                cpu_node: p.cpu_node,
                mem_node: p.mem_node,
                set,
                median_gbs: median(set),
            })
            .collect(),
        note: m.note.clone(),
    }
}

/// The row label: the set's label, with `, run again last` on the rerun row.
fn row_label(set: &WorkingSet, id: CellId) -> String {
    if id.rerun {
        format!("{}{RERUN_SUFFIX}", set.label())
    } else {
        set.label()
    }
}

fn failed_cell(grid: &Grid, board: &Board, id: CellId) -> Option<FailedCell> {
    let set = grid.sets.get(id.set)?;
    let reason = board.cell(id)?.failure.clone()?;
    Some(FailedCell {
        label: row_label(set, id),
        set: id.set,
        set_label: set.label(),
        threads: id.threads,
        rerun: id.rerun,
        reason,
    })
}

fn cell_snapshot(
    grid: &Grid,
    board: &Board,
    id: CellId,
    ctx: Context,
    groups: &CpuGroups,
) -> Option<CellSnapshot> {
    let set = grid.sets.get(id.set)?;
    let figures = board.figures(id, ctx)?;
    let stats = board.cell(id)?;
    Some(CellSnapshot {
        label: row_label(set, id),
        set: id.set,
        set_label: set.label(),
        set_name: set.name.clone(),
        level: set.level.map(Into::into),
        size: set.size.into(),
        threads: id.threads,
        rerun: id.rerun,
        figures: figures.into(),
        history: stats.window.iter().map(Into::into).collect(),
        checksum: stats.checksum.as_ref().map(|c| CheckResult {
            expected: c.expected,
            actual: c.actual,
            ok: c.ok,
        }),
        checksum_failures: stats.checksum_failures,
        cpus: stats.cpus.iter().copied().collect(),
        migrations: stats.migrations,
        array_bytes: stats.array_bytes,
        huge_bytes: stats.huge_bytes,
        choice: board.choice(id.set).map(Into::into),
        pages: match &stats.pages {
            Some(Placement::Sampled(p)) => Some(wire::Pages {
                sampled: p.sampled,
                meant: p.meant,
                on_meant: p.on_meant,
                by_node: p.by_node.clone(),
                absent: p.absent,
            }),
            Some(Placement::Unknown(_)) | None => None,
        },
        groups: groups
            .figures(&stats.window)
            .iter()
            .map(Into::into)
            .collect(),
    })
}

impl From<&Choice> for wire::CellChoice {
    fn from(c: &Choice) -> wire::CellChoice {
        let Choice {
            set: _,
            kept,
            kernel_by,
            layout_by,
            runner_up,
            trial,
        } = c;
        wire::CellChoice {
            variant: kept.variant.name.to_string(),
            huge_pages: kept.huge_pages,
            kernel_by: (*kernel_by).into(),
            layout_by: (*layout_by).into(),
            runner_up: runner_up
                .as_ref()
                .filter(|(_, ratio)| ratio.is_finite())
                .map(|(p, ratio)| wire::RunnerUp {
                    variant: p.variant.name.to_string(),
                    huge_pages: p.huge_pages,
                    ratio: *ratio,
                }),
            trial: trial.as_ref().map(|t| wire::Trial {
                threads: t.threads.clone(),
                candidates: t.candidates,
                rounds: t.rounds,
                seconds: t.took_ns as f64 / 1e9,
                margin: if t.margin.is_finite() { t.margin } else { 0.0 },
            }),
        }
    }
}

impl From<By> for wire::ChoiceBy {
    fn from(b: By) -> wire::ChoiceBy {
        match b {
            By::Trial => wire::ChoiceBy::Trial,
            By::Rule => wire::ChoiceBy::Rule,
            By::Pinned => wire::ChoiceBy::Pinned,
            By::Only => wire::ChoiceBy::Only,
        }
    }
}

/// `--kernel` and `--huge-pages` for the snapshot: None for an instruction set with huge pages
/// on, the one setting files from before the choice could have (and so still byte for byte).
fn selection(kernel: Kernel, loops: Loops, huge_pages: HugePages) -> Option<wire::Selection> {
    (loops != Loops::Default || huge_pages != HugePages::On).then(|| wire::Selection {
        kernel: loops.setting(kernel),
        huge_pages: huge_pages.to_string(),
    })
}

impl From<&GroupFigures> for wire::ThreadGroup {
    fn from(g: &GroupFigures) -> wire::ThreadGroup {
        let GroupFigures {
            group,
            threads,
            gbs,
            per_thread_gbs,
        } = *g;
        wire::ThreadGroup {
            group: match group {
                Group::Node(n) => wire::GroupKey::Node(n),
                Group::Performance => wire::GroupKey::CoreType(wire::CoreKind::Performance),
                Group::Efficiency => wire::GroupKey::CoreType(wire::CoreKind::Efficiency),
            },
            threads,
            gbs: finite(gbs),
            per_thread_gbs: finite(per_thread_gbs),
        }
    }
}

impl From<&RunInfo> for wire::RunInfo {
    fn from(run: &RunInfo) -> wire::RunInfo {
        let RunInfo {
            version,
            name,
            command_line,
            hostname,
            started,
            topology,
            kernel,
            loops,
            huge_pages_flag,
            pin,
            clock,
            vendor,
            host_start,
            rounds,
            round_ms,
            duty,
            container,
            placement,
            huge_pages,
            no_effect,
            counters,
            numa,
            matrix: _,
            not_a_measurement,
            threads_note,
        } = run;
        wire::RunInfo {
            version: version.clone(),
            name: name.clone(),
            command_line: command_line.clone(),
            hostname: hostname.clone(),
            started: as_rfc3339(started),
            topology: topology.into(),
            kernel: (*kernel).into(),
            selection: selection(*kernel, *loops, *huge_pages_flag),
            pin: (*pin).into(),
            clock: clock.into(),
            vendor: vendor.into(),
            host_start: host_start.into(),
            rounds: *rounds,
            round_ms: *round_ms,
            duty: f64::from(*duty) / 100.0,
            container: container.map(|c| wire::Container {
                memory_limit: c.memory_limit,
                cpu_quota: c.cpu_quota,
            }),
            placement: placement.map(str::to_string),
            huge_pages: huge_pages.map(str::to_string),
            no_effect: no_effect.iter().map(Into::into).collect(),
            counters: counters.as_ref().map(counter_info),
            numa: numa.clone(),
            not_a_measurement: not_a_measurement.clone(),
            threads_note: threads_note.clone(),
        }
    }
}

impl From<&NoEffect> for wire::NoEffect {
    fn from(n: &NoEffect) -> wire::NoEffect {
        let NoEffect { setting, text } = n;
        wire::NoEffect {
            setting: match setting {
                Setting::Pin => wire::Setting::Pin,
                Setting::HugePages => wire::Setting::HugePages,
            },
            text: text.clone(),
        }
    }
}

fn counter_info(a: &Availability) -> wire::CounterInfo {
    let names = |cs: &[crate::machine::counters::Counter]| {
        cs.iter().map(|c| c.name().to_string()).collect::<Vec<_>>()
    };
    wire::CounterInfo {
        counted: names(&a.counted),
        missing: a
            .missing
            .iter()
            .map(|(cs, why)| wire::MissingCounters {
                counters: names(cs),
                reason: why.clone(),
            })
            .collect(),
    }
}

impl From<&Topology> for wire::Topology {
    fn from(t: &Topology) -> wire::Topology {
        // Whether the last-level cache is hidden shows in the dram set's size and note.
        let Topology {
            model,
            cpus,
            caches,
            nodes,
            llc_hidden: _,
        } = t;
        wire::Topology {
            model: model.clone(),
            cpus: cpus.iter().map(Into::into).collect(),
            caches: caches.iter().map(Into::into).collect(),
            nodes: nodes.iter().map(Into::into).collect(),
        }
    }
}

impl From<&Cpu> for wire::Cpu {
    fn from(c: &Cpu) -> wire::Cpu {
        let Cpu {
            id,
            package,
            core,
            node,
            smt_siblings,
            kind,
        } = c;
        wire::Cpu {
            id: *id,
            package: *package,
            core: *core,
            node: *node,
            smt_siblings: smt_siblings.clone(),
            kind: match kind {
                CoreKind::Uniform => wire::CoreKind::Uniform,
                CoreKind::Performance => wire::CoreKind::Performance,
                CoreKind::Efficiency => wire::CoreKind::Efficiency,
            },
        }
    }
}

impl From<&Cache> for wire::Cache {
    fn from(c: &Cache) -> wire::Cache {
        let Cache {
            level,
            kind,
            size,
            cpus,
        } = c;
        wire::Cache {
            level: *level,
            kind: match kind {
                CacheKind::Data => wire::CacheKind::Data,
                CacheKind::Instruction => wire::CacheKind::Instruction,
                CacheKind::Unified => wire::CacheKind::Unified,
            },
            size: *size,
            cpus: cpus.clone(),
        }
    }
}

impl From<&NumaNode> for wire::NumaNode {
    fn from(n: &NumaNode) -> wire::NumaNode {
        let NumaNode { id, cpus } = n;
        wire::NumaNode {
            id: *id,
            cpus: cpus.clone(),
        }
    }
}

impl From<Kernel> for wire::Kernel {
    fn from(k: Kernel) -> wire::Kernel {
        let Kernel { isa, stores } = k;
        wire::Kernel {
            isa: match isa {
                Isa::Avx512 => wire::Isa::Avx512,
                Isa::Avx2 => wire::Isa::Avx2,
                Isa::Sse2 => wire::Isa::Sse2,
                Isa::Neon => wire::Isa::Neon,
                Isa::Portable => wire::Isa::Portable,
            },
            stores: match stores {
                Stores::Normal => wire::Stores::Normal,
                Stores::Nt => wire::Stores::Nt,
            },
        }
    }
}

impl From<PinPolicy> for wire::PinPolicy {
    fn from(p: PinPolicy) -> wire::PinPolicy {
        match p {
            PinPolicy::Spread => wire::PinPolicy::Spread,
            PinPolicy::Compact => wire::PinPolicy::Compact,
            PinPolicy::None => wire::PinPolicy::None,
        }
    }
}

impl From<&ClockEstimate> for wire::ClockEstimate {
    fn from(c: &ClockEstimate) -> wire::ClockEstimate {
        let ClockEstimate {
            ghz,
            check_ghz,
            agree,
            method,
            counted_ghz,
        } = c;
        wire::ClockEstimate {
            ghz: *ghz,
            check_ghz: *check_ghz,
            agree: *agree,
            method: method.clone(),
            counted_ghz: counted_ghz.filter(|g| g.is_finite()),
        }
    }
}

impl From<&VendorFigure> for wire::VendorFigure {
    fn from(v: &VendorFigure) -> wire::VendorFigure {
        let VendorFigure { gbs, kind, source } = v;
        wire::VendorFigure {
            gbs: *gbs,
            source: match kind {
                VendorSource::Flag => wire::VendorSource::Flag,
                VendorSource::Smbios => wire::VendorSource::Smbios,
                VendorSource::Table => wire::VendorSource::Table,
                VendorSource::None => wire::VendorSource::None,
            },
            source_text: source.clone(),
        }
    }
}

impl From<&HostState> for wire::HostState {
    fn from(h: &HostState) -> wire::HostState {
        let HostState {
            load,
            mem_total,
            mem_available,
            swap_total,
            swap_used,
            anon_huge,
            compressor,
            mem_pressure,
        } = *h;
        wire::HostState {
            load,
            mem_total,
            mem_available,
            swap_total,
            swap_used,
            anon_huge,
            compressor,
            mem_pressure: mem_pressure.map(|p| match p {
                MemPressure::Normal => wire::MemPressure::Normal,
                MemPressure::Warning => wire::MemPressure::Warning,
                MemPressure::Critical => wire::MemPressure::Critical,
            }),
        }
    }
}

/// The grid, each explicit set with the level it lands in on `topo`.
fn wire_grid(g: &Grid, topo: &Topology) -> wire::Grid {
    let Grid { sets, threads } = g;
    wire::Grid {
        sets: sets
            .iter()
            .map(|s| {
                let mut set = wire::WorkingSet::from(s);
                if set.level.is_none() {
                    set.lands_in = landing(set.size, topo).map(|l| l.level);
                }
                set
            })
            .collect(),
        threads: threads.clone(),
    }
}

/// A set without the machine: `lands_in` is left for `wire_grid` to fill.
impl From<&WorkingSet> for wire::WorkingSet {
    fn from(s: &WorkingSet) -> wire::WorkingSet {
        let WorkingSet {
            name,
            level,
            size,
            note,
        } = s;
        wire::WorkingSet {
            name: name.clone(),
            level: level.map(Into::into),
            size: (*size).into(),
            note: note.clone(),
            lands_in: None,
        }
    }
}

impl From<Level> for wire::Level {
    fn from(l: Level) -> wire::Level {
        match l {
            Level::L1 => wire::Level::L1,
            Level::L2 => wire::Level::L2,
            Level::L3 => wire::Level::L3,
            Level::Dram => wire::Level::Dram,
        }
    }
}

impl From<ArraySize> for wire::ArraySize {
    fn from(s: ArraySize) -> wire::ArraySize {
        match s {
            ArraySize::PerThread(b) => wire::ArraySize::PerThread(b),
            ArraySize::Split(b) => wire::ArraySize::Split(b),
        }
    }
}

/// A rate that must be a finite number in the snapshot (0 when it was not).
fn finite(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// Figures with every value finite, so the JSON always reads back: a rate that is not a number
/// (a round with no threads) becomes 0, an optional one None.
impl From<Figures> for wire::Figures {
    fn from(f: Figures) -> wire::Figures {
        let Figures {
            median_gbs,
            best_gbs,
            cv,
            fastest_thread_gbs,
            slowest_thread_gbs,
            late_rounds,
            disturbed_rounds,
            rounds,
            scaling,
            vendor_fraction,
            bytes_per_cycle,
            bytes_per_cycle_source,
            checksum_ok,
            median_ci,
            counters,
            noisy,
        } = f;
        let opt = |v: Option<f64>| v.filter(|x| x.is_finite());
        let CounterFigures {
            ghz,
            ipc,
            switches_per_round,
            migrations_per_round,
            page_faults_per_round,
            llc_misses_per_kib,
        } = counters;
        let counters = wire::CellCounters {
            ghz: opt(ghz),
            ipc: opt(ipc),
            switches_per_round: opt(switches_per_round),
            migrations_per_round: opt(migrations_per_round),
            page_faults_per_round: opt(page_faults_per_round),
            llc_misses_per_kib: opt(llc_misses_per_kib),
        };
        wire::Figures {
            median_gbs: finite(median_gbs),
            best_gbs: finite(best_gbs),
            cv: finite(cv),
            fastest_thread_gbs: finite(fastest_thread_gbs),
            slowest_thread_gbs: finite(slowest_thread_gbs),
            late_rounds,
            rounds,
            scaling: opt(scaling),
            vendor_fraction: opt(vendor_fraction),
            bytes_per_cycle: opt(bytes_per_cycle),
            checksum_ok,
            disturbed_rounds,
            bytes_per_cycle_from: bytes_per_cycle
                .is_some_and(f64::is_finite)
                .then_some(bytes_per_cycle_source)
                .flatten()
                .map(|s| match s {
                    CycleSource::Counted => wire::CycleSource::Counted,
                    CycleSource::ClockEstimate => wire::CycleSource::ClockEstimate,
                }),
            median_ci_gbs: median_ci
                .filter(|(l, h)| l.is_finite() && h.is_finite())
                .map(|(l, h)| [l, h]),
            counters: (counters != wire::CellCounters::default()).then_some(counters),
            noisy,
        }
    }
}

impl From<&RoundSummary> for wire::Round {
    fn from(r: &RoundSummary) -> wire::Round {
        let RoundSummary {
            span_ns,
            bytes,
            gbs,
            fastest_thread_gbs,
            slowest_thread_gbs,
            late,
            disturbed,
            ref cause,
            ref threads,
            thread_ns: _,
            // The cell's figures per node and core type say what they showed.
            cpus: _,
            steal,
            throttled,
        } = *r;
        wire::Round {
            span_ns,
            bytes,
            gbs,
            fastest_thread_gbs,
            slowest_thread_gbs,
            late,
            disturbed,
            cause: cause.clone(),
            switches: if threads.is_empty() {
                None
            } else {
                threads.iter().map(|(_, c)| c.switches).sum()
            },
            steal: steal.filter(|v| v.is_finite()),
            throttled: throttled.filter(|v| v.is_finite()),
        }
    }
}
