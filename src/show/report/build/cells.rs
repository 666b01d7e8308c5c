//! Each cell for the snapshot: its figures made finite, its rounds, checksum, pages, the loop
//! and pages chosen for its set and its per-group figures; or why it could not run.

use crate::engine::events::{Choice, Placement};
use crate::engine::kernel::Op;
use crate::engine::plan::{CellId, Grid, WorkingSet};
use crate::judge::groups::{CpuGroups, Group, GroupFigures};
use crate::judge::stats::{Board, Context, CounterFigures, Figures, RoundSummary};
use crate::machine::uarch::{Core, Unknown, vector_width};
use crate::show::report::model::{
    self as wire, CellSnapshot, CheckResult, FailedCell, RERUN_SUFFIX,
};

/// The row label: the set's label, with `, run again last` on the rerun row.
fn row_label(set: &WorkingSet, id: CellId) -> String {
    if id.rerun {
        format!("{}{RERUN_SUFFIX}", set.label())
    } else {
        set.label()
    }
}

pub(super) fn failed_cell(grid: &Grid, board: &Board, id: CellId) -> Option<FailedCell> {
    let set = grid.sets.get(id.set)?;
    let reason = board.cell(id)?.failure.clone()?;
    Some(FailedCell {
        op: id.op.name().to_string(),
        label: row_label(set, id),
        set: id.set,
        set_label: set.label(),
        threads: id.threads,
        rerun: id.rerun,
        reason,
    })
}

pub(super) fn cell_snapshot(
    grid: &Grid,
    board: &Board,
    id: CellId,
    ctx: Context,
    groups: &CpuGroups,
    core: Option<Result<&Core, &Unknown>>,
) -> Option<CellSnapshot> {
    let set = grid.sets.get(id.set)?;
    let figures = board.figures(id, ctx)?;
    let stats = board.cell(id)?;
    let choice: Option<wire::CellChoice> = board.choice(id.op, id.set).map(Into::into);
    let mut figures: wire::Figures = figures.into();
    figures.port_limit = core.map(|core| {
        let variant = choice.as_ref().map(|c| c.variant.as_str());
        port_limit(core, id.op, variant, figures.bytes_per_cycle)
    });
    Some(CellSnapshot {
        op: id.op.name().to_string(),
        label: row_label(set, id),
        set: id.set,
        set_label: set.label(),
        set_name: set.name.clone(),
        level: set.level.map(Into::into),
        size: set.size.into(),
        threads: id.threads,
        rerun: id.rerun,
        repetitions: vec![figures.median_gbs],
        figures,
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
        choice,
        pages: match &stats.pages {
            Some(Placement::Sampled(p)) => Some(p.into()),
            Some(Placement::Unknown(_)) | None => None,
        },
        groups: groups
            .figures(&stats.window)
            .iter()
            .map(Into::into)
            .collect(),
    })
}

/// What `core`'s load and store ports allow `op`'s loop `variant` per cycle, with `measured`
/// bytes per cycle as a fraction of it; or why that cannot be said.
fn port_limit(
    core: Result<&Core, &Unknown>,
    op: Op,
    variant: Option<&str>,
    measured: Option<f64>,
) -> wire::PortLimit {
    let arrays = |a: [bool; 3]| a.iter().filter(|&&x| x).count() as u32;
    let limit = || -> Result<(&Core, f64), Unknown> {
        let core = core.map_err(Clone::clone)?;
        let variant = variant.ok_or_else(|| Unknown("the cell records no loop".into()))?;
        let width = vector_width(variant)?;
        let limit = core
            .bytes_per_cycle(width, arrays(op.reads()), arrays(op.writes()))
            .ok_or_else(|| {
                Unknown(format!(
                    "{} has no {width}-byte loads and stores in the table",
                    core.name
                ))
            })?;
        Ok((core, limit))
    };
    match limit() {
        Ok((core, limit)) => wire::PortLimit::Known {
            bytes_per_cycle: limit,
            fraction: measured.map(|m| m / limit).filter(|f| f.is_finite()),
            core: core.name.to_string(),
            source: core.source.to_string(),
        },
        Err(Unknown(reason)) => wire::PortLimit::Unknown { reason },
    }
}

impl From<&Choice> for wire::CellChoice {
    fn from(c: &Choice) -> wire::CellChoice {
        let Choice {
            op: _,
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
                .map(Into::into),
            median_ci_gbs: median_ci
                .filter(|(l, h)| l.is_finite() && h.is_finite())
                .map(|(l, h)| [l, h]),
            counters: (counters != wire::CellCounters::default()).then_some(counters),
            noisy,
            // Filled by the cell, which knows its loop and the machine's core.
            port_limit: None,
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
