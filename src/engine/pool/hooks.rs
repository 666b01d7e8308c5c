//! The test hooks: what the tests set to reach the error, preemption and retry paths, kept
//! apart from the protocol so that a reader finds in one place what a test can make a worker
//! do (the round's injected panic itself is `worker`'s, under the `test-hooks` feature).

use super::Pool;
use std::sync::atomic::Ordering::SeqCst;

/// Test hooks for the error, preemption and retry paths: a worker that panics in its first
/// round, a worker that yields its CPU inside every round's span, a service's first wait
/// before it tries a failed cell again (30 s is long for a test). They act only in a build
/// with the `test-hooks` feature (what the tests build): a user's environment must never make
/// a worker panic, and the release binary neither reads the variables nor holds the panic.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Hooks {
    pub(crate) panic_worker: Option<usize>,
    pub(crate) yield_worker: Option<usize>,
    pub(crate) retry_first: Option<std::time::Duration>,
}

impl Hooks {
    /// `STREAM_TOP_PANIC_WORKER=N`, `STREAM_TOP_YIELD_WORKER=N` and
    /// `STREAM_TOP_RETRY_FIRST_MS=N`.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn from_env() -> Hooks {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let worker = |name: &str| number(name).and_then(|n| usize::try_from(n).ok());
        Hooks {
            panic_worker: worker("STREAM_TOP_PANIC_WORKER"),
            yield_worker: worker("STREAM_TOP_YIELD_WORKER"),
            retry_first: number("STREAM_TOP_RETRY_FIRST_MS").map(std::time::Duration::from_millis),
        }
    }

    /// Without the `test-hooks` feature: none, whatever the environment holds.
    #[cfg(not(feature = "test-hooks"))]
    pub(crate) fn from_env() -> Hooks {
        Hooks::default()
    }
}

impl Pool {
    /// Test hook: worker `index` panics in its next round.
    pub(crate) fn inject_panic(&self, index: usize) {
        self.shared.panic_worker.store(index, SeqCst);
    }

    /// Test hook: worker `index` yields its CPU inside the span of each round.
    pub(crate) fn inject_yield(&self, index: usize) {
        self.shared.yield_worker.store(index, SeqCst);
    }
}
