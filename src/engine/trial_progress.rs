//! A trial's progress for whoever watches: which candidate runs, how far along, and about how
//! long is left. Kept apart from the trial itself, which only says what it is doing between
//! its steps; this throttles and estimates. A DRAM trial spends most of its time in the first
//! touch of its arrays (seconds), then at most `timed` in rounds.

use super::events::{Pick, TrialProgress};
use std::time::{Duration, Instant};

/// At most this often (the first report goes at once, so the screen says so from the start).
const EVERY: Duration = Duration::from_millis(100);

pub(super) struct Reporter<F: FnMut(TrialProgress)> {
    send: F,
    set: usize,
    candidates: usize,
    /// The widest thread count (the arrays' first touch runs on it).
    widest: usize,
    start: Instant,
    /// Bytes to first touch (every copy), and those of copies touched whole.
    touch_total: u64,
    touch_before: u64,
    /// When the first touch ended and the rounds began.
    timing_from: Option<Instant>,
    /// The rounds' bound: the trial's time limit, its warm-up and calibration.
    timed: Duration,
    last: Option<Instant>,
}

impl<F: FnMut(TrialProgress)> Reporter<F> {
    pub(super) fn new(
        send: F,
        set: usize,
        candidates: usize,
        widest: usize,
        touch_total: u64,
        timed: Duration,
    ) -> Self {
        Reporter {
            send,
            set,
            candidates,
            widest,
            start: Instant::now(),
            touch_total,
            touch_before: 0,
            timing_from: None,
            timed,
            last: None,
        }
    }

    /// `bytes` of the copy being touched now are in place.
    pub(super) fn touched(&mut self, bytes: u64) {
        if self.due() {
            let done = self.touch_before + bytes;
            let elapsed = self.start.elapsed();
            let left = if done == 0 {
                // No rate yet: the rounds' bound alone, until the first chunk says more.
                self.timed
            } else {
                let rest = self.touch_total.saturating_sub(done) as f64 / done as f64;
                elapsed.mul_f64(rest) + self.timed
            };
            self.report(self.widest, None, elapsed, left);
        }
    }

    /// A copy of the arrays of `bytes` is touched whole.
    pub(super) fn copy_touched(&mut self, bytes: u64) {
        self.touch_before += bytes;
    }

    /// Candidate `index` (`pick`) is about to run a round of `threads` (between rounds).
    pub(super) fn round(&mut self, threads: usize, index: usize, pick: Pick) {
        let from = *self.timing_from.get_or_insert_with(Instant::now);
        if self.due() {
            let left = self.timed.saturating_sub(from.elapsed());
            self.report(threads, Some((index, pick)), self.start.elapsed(), left);
        }
    }

    fn due(&mut self) -> bool {
        let now = Instant::now();
        if self.last.is_some_and(|l| now < l + EVERY) {
            return false;
        }
        self.last = Some(now);
        true
    }

    fn report(
        &mut self,
        threads: usize,
        candidate: Option<(usize, Pick)>,
        elapsed: Duration,
        left: Duration,
    ) {
        let whole = (elapsed + left).as_secs_f64();
        let done = if whole > 0.0 {
            elapsed.as_secs_f64() / whole
        } else {
            0.0
        };
        (self.send)(TrialProgress {
            set: self.set,
            threads,
            candidate,
            candidates: self.candidates,
            done: done.clamp(0.0, 1.0),
            left_ns: left.as_nanos() as u64,
        });
    }
}
