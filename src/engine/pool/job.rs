//! What a job is: its kind, the op a round runs and how, and the pointers and parts the
//! workers read; kept apart (it names nothing else of the pool) because the coordinator, the
//! shared state and the workers all need it.

use super::super::kernel::{Op, OpFn};
use std::ops::Range;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JobKind {
    /// Write b, c and a = -1 over the partition: the first touch.
    Touch,
    /// a = -1 over the partition.
    ResetA,
    /// a = -1 and b to its values over the partition (after an op that writes b).
    ResetAB,
    /// `passes` passes of the job's op over the partition, timed.
    Round,
    /// Sum a over the partition into the slot.
    SumA,
    /// Move the partition's pages to the worker's node (`Slot::node`).
    Place,
    /// Pin the worker to `Slot::pin` (no arrays).
    Pin,
}

/// What every active worker does next. Written by the coordinator only while no worker reads it.
#[derive(Clone, Copy)]
pub(super) struct Job {
    pub(super) kind: JobKind,
    pub(super) a: *mut f64,
    pub(super) b: *mut f64,
    pub(super) c: *mut f64,
    /// The parts of the active workers (exactly as many as there are).
    pub(super) parts: *const Range<usize>,
    pub(super) passes: u32,
    pub(super) function: OpFn,
    /// The op's scalar `s`.
    pub(super) scalar: f64,
    /// Fence the non-temporal stores once after the passes (inside the timed span).
    pub(super) fence: bool,
}

/// How a round's passes run: the op, its pass function, and whether its stores need a fence
/// at the end.
#[derive(Clone, Copy)]
pub struct Pass {
    pub op: Op,
    pub function: OpFn,
    pub fence: bool,
}

fn noop_pass(_: *mut f64, _: *mut f64, _: *mut f64, _: usize, _: f64) {}

impl Job {
    /// A job on no arrays (Pin), or the pool's first.
    pub(super) const NONE: Job = Job {
        kind: JobKind::Pin,
        a: std::ptr::null_mut(),
        b: std::ptr::null_mut(),
        c: std::ptr::null_mut(),
        parts: std::ptr::null(),
        passes: 0,
        function: noop_pass,
        scalar: 0.0,
        fence: false,
    };
}

impl Pass {
    /// For jobs that run no op (touch, reset, sum).
    pub const NONE: Pass = Pass {
        op: Op::Triad,
        function: noop_pass,
        fence: false,
    };
}
