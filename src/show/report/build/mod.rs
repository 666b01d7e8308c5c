//! A snapshot of the running table, built from the run's description, the grid and the
//! statistics board: the one place where the run's own types become the wire model.
//!
//! Each conversion takes its source apart field by field, so a field added to the engine's, the
//! machine's or the statistics' types stops the build here, where someone decides whether the
//! snapshot shows it (and bumps the schema), instead of changing schema 1 behind our back.
//!
//! By part of the snapshot: run.rs (the run's description), grid.rs (the grid and the matrix),
//! cells.rs (each cell's figures, rounds and choice) and events.rs (what the live monitor saw).
//! The types that the wording in lines.rs maps back the other way (topology, host, sets, the
//! plain enums) are mapped in both directions in mirror.rs.

mod cells;
mod events;
mod grid;
mod latency;
mod run;

use crate::base::time::{as_rfc3339, parse_rfc3339, parse_utc};
use crate::engine::matrix::MatrixPlan;
use crate::engine::plan::{CellId, Grid};
use crate::judge::groups::CpuGroups;
use crate::judge::run_info::RunInfo;
use crate::judge::stats::{Board, Context};
use crate::machine::cpu_id::CpuId;
use crate::machine::host::HostState;
use crate::machine::uarch::Core;
use crate::show::report::cliffs::cliffs;
use crate::show::report::derived::derive;
use crate::show::report::model::{SCHEMA_VERSION, Snapshot};
use cells::{cell_snapshot, failed_cell};
use grid::{grid_ids, matrix, wire_grid};

impl Snapshot {
    /// Each cell's repetition medians from `medians_of` (by the engine's cell), where it gives
    /// some; a cell it gives none keeps its one median.
    pub(crate) fn set_repetitions(&mut self, medians_of: impl Fn(CellId) -> Vec<f64>) {
        for c in &mut self.cells {
            let medians = medians_of(CellId {
                op: c.op.parse().unwrap_or_default(),
                set: c.set,
                threads: c.threads,
                rerun: c.rerun,
            });
            if !medians.is_empty() {
                c.repetitions = medians;
            }
        }
    }

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
        let frame = Snapshot {
            schema_version: SCHEMA_VERSION,
            taken: as_rfc3339(&taken),
            run_seconds: None,
            info: run.into(),
            host_now: host_now.into(),
            grid: wire_grid(grid, &run.topology),
            cells: Vec::new(),
            derived: Vec::new(),
            failed: Vec::new(),
            contention: Vec::new(),
            log: Vec::new(),
            matrix: None,
            cliffs: Vec::new(),
            latency: Vec::new(),
            loaded_latency: Vec::new(),
            partial: None,
        };
        frame.with_cells(grid, board, ctx, &groups, run.matrix.as_ref())
    }

    /// This snapshot's frame (the run's description, grid and times) with the cells of
    /// `board`: what `build` makes of a run, and what a replay makes of a recording's frame.
    pub(crate) fn with_cells(
        mut self,
        grid: &Grid,
        board: &Board,
        ctx: Context,
        groups: &CpuGroups,
        matrix_plan: Option<&MatrixPlan>,
    ) -> Snapshot {
        // The port limit only where the snapshot records the CPU design.
        let core = self
            .info
            .topology
            .cpu
            .as_ref()
            .map(|cpu| Core::of(Some(&CpuId::from(cpu))));
        let core = core.as_ref().map(|c| c.as_ref().copied());
        self.cells = grid
            .sweep_once()
            .into_iter()
            .filter_map(|id| cell_snapshot(grid, board, id, ctx, groups, core))
            .collect();
        self.failed = grid
            .sweep_once()
            .into_iter()
            .filter(|&id| board.figures(id, ctx).is_none())
            .filter_map(|id| failed_cell(grid, board, id))
            .collect();
        self.matrix = matrix_plan.map(|m| matrix(m, grid_ids(&self.cells)));
        // The matrix's pairs share a size: the derived ratios between sets mean nothing there.
        // Of several ops, the derived ratios are the triad's (or the first op's).
        self.derived = if self.matrix.is_some() {
            Vec::new()
        } else {
            let primary = self.of_op(&self.primary_op());
            derive(&primary.cells, &self.grid.sets, ctx.vendor_gbs)
        };
        self.run_seconds = match (
            parse_rfc3339(&self.info.started).or_else(|| parse_utc(&self.info.started)),
            parse_rfc3339(&self.taken),
        ) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as u64),
            _ => None,
        };
        self.cliffs = cliffs(&self.of_op(&self.primary_op()));
        self
    }
}
