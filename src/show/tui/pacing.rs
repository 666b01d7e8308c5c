//! Frame pacing and the gap protocol, as a state machine with no clock and no channels: the
//! event loop says what happened and when, and the pacer says when to ask the engine for a gap,
//! when to draw and when to let the workers go.
//!
//! The protocol: a frame is due 100 ms (`FRAME`) after the last one. When one is due and
//! something changed (or engine events wait unread), ask for a gap between rounds
//! (`RequestGap`); the engine parks its workers and answers `Event::Gap`; draw, then say
//! `GapDone`. If no gap comes within `GAP_WAIT` (arrays being first touched, a long round), draw
//! anyway and keep the request; a request never answered is made again after `GAP_RETRY`. Until
//! a frame is due the loop does not listen to the engine at all: its events wait in the channel,
//! so the UI thread wakes at most about ten times a second however fast the rounds come.
//!
//! A key is answered sooner: its frame is due at once and waits for a gap at most
//! `KEY_GAP_WAIT` (a round or two), so a key never waits long for the engine.

use std::time::{Duration, Instant};

/// Shortest time between two frames.
const FRAME: Duration = Duration::from_millis(100);
/// How long a pending change waits for a gap between rounds before it is drawn anyway.
const GAP_WAIT: Duration = Duration::from_millis(250);
/// How long a frame that answers a key waits for a gap before it is drawn anyway.
const KEY_GAP_WAIT: Duration = Duration::from_millis(50);
/// A request for a gap that was never answered is made again after this long.
const GAP_RETRY: Duration = Duration::from_secs(1);
/// How long the loop sleeps when nothing at all is pending (a message wakes it sooner).
const IDLE: Duration = Duration::from_secs(3600);

/// How the loop waits for its next message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Send `Command::RequestGap` before waiting.
    pub(crate) request_gap: bool,
    /// Listen to the engine's events; when false they wait in the channel.
    pub(crate) listen_to_engine: bool,
    /// Wake up after this long if no message comes.
    pub(crate) timeout: Duration,
}

/// What to do after a message or a timeout, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Step {
    /// Draw the screen (then call `Pacer::drawn`).
    pub(crate) draw: bool,
    /// Send `Command::GapDone`: the workers may go on.
    pub(crate) gap_done: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    last_draw: Instant,
    /// Something changed since the last frame.
    dirty: bool,
    /// When the gap now outstanding was asked for.
    gap_asked: Option<Instant>,
    /// The change answers a key: draw as soon as the engine allows.
    urgent: bool,
}

impl Pacer {
    /// A pacer whose last frame was drawn at `now`.
    pub fn new(now: Instant) -> Pacer {
        Pacer {
            last_draw: now,
            dirty: false,
            gap_asked: None,
            urgent: false,
        }
    }

    /// Something on screen changed: a frame is wanted.
    pub fn changed(&mut self) {
        self.dirty = true;
    }

    /// A key changed the screen: a frame is wanted now.
    pub fn answer(&mut self) {
        self.dirty = true;
        self.urgent = true;
    }

    /// The least time between frames: none for a key.
    fn spacing(&self) -> Duration {
        if self.urgent { Duration::ZERO } else { FRAME }
    }

    /// How long a frame waits for a gap.
    fn gap_wait(&self) -> Duration {
        if self.urgent { KEY_GAP_WAIT } else { GAP_WAIT }
    }

    /// Before waiting: asks for a gap when a frame is due and there is something to draw (a
    /// change, or `engine_pending` events not yet read), and says how to wait.
    pub fn wait(&mut self, now: Instant, engine_pending: bool) -> Wait {
        let due = self.last_draw + self.spacing();
        let gap_wait = self.gap_wait();
        let frame_open = now >= due;
        let request_gap = frame_open && self.gap_asked.is_none() && (self.dirty || engine_pending);
        if request_gap {
            self.gap_asked = Some(now);
        }
        let timeout = if !frame_open {
            due - now
        } else if let Some(t) = self.gap_asked.filter(|t| now < *t + gap_wait) {
            t + gap_wait - now
        } else if self.dirty {
            Duration::ZERO
        } else if let Some(t) = self.gap_asked {
            (t + GAP_RETRY).saturating_duration_since(now)
        } else {
            IDLE
        };
        Wait {
            request_gap,
            listen_to_engine: frame_open || self.gap_asked.is_some(),
            timeout,
        }
    }

    /// After a message or a timeout at `now`; `gap` says the engine answered with a gap (its
    /// workers are parked until `GapDone`).
    pub fn step(&mut self, now: Instant, gap: bool) -> Step {
        let mut step = Step::default();
        if gap {
            // Workers are parked: draw now, then let them go.
            step.draw = self.dirty;
            step.gap_done = true;
            self.gap_asked = None;
        } else {
            // No gap in sight (first touch, a long round): draw anyway, keep the request.
            let waited_out = self.gap_asked.is_some_and(|t| now >= t + self.gap_wait());
            step.draw = self.dirty && waited_out && now >= self.last_draw + self.spacing();
        }
        if self.gap_asked.is_some_and(|t| now >= t + GAP_RETRY) {
            self.gap_asked = None;
        }
        step
    }

    /// A frame was drawn at `now`.
    pub fn drawn(&mut self, now: Instant) {
        self.last_draw = now;
        self.dirty = false;
        self.urgent = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A pacer that drew at `t0`, and `t0`.
    fn pacer() -> (Pacer, Instant) {
        let t0 = Instant::now();
        (Pacer::new(t0), t0)
    }

    #[test]
    fn nothing_changed_no_gap_no_frame_and_a_long_sleep() {
        let (mut p, t0) = pacer();
        let w = p.wait(t0 + ms(500), false);
        assert!(!w.request_gap);
        assert_eq!(w.timeout, IDLE);
        assert_eq!(p.step(t0 + ms(500), false), Step::default());
    }

    #[test]
    fn before_a_frame_is_due_the_engine_is_not_heard_and_no_gap_asked() {
        let (mut p, t0) = pacer();
        p.changed();
        let w = p.wait(t0 + ms(30), true);
        assert!(!w.request_gap);
        assert!(!w.listen_to_engine, "its events wait in the channel");
        assert_eq!(w.timeout, ms(70), "until the frame is due");
        assert_eq!(p.step(t0 + ms(30), false), Step::default());
    }

    #[test]
    fn a_change_asks_for_a_gap_once_due_and_the_gap_draws_then_ends() {
        let (mut p, t0) = pacer();
        p.changed();
        let w = p.wait(t0 + FRAME, false);
        assert!(w.request_gap && w.listen_to_engine);
        assert_eq!(w.timeout, GAP_WAIT, "wait for the gap, at most GAP_WAIT");
        // Asked once: the next wait does not ask again.
        assert!(!p.wait(t0 + ms(150), false).request_gap);
        let s = p.step(t0 + ms(160), true);
        assert_eq!(
            s,
            Step {
                draw: true,
                gap_done: true
            }
        );
        p.drawn(t0 + ms(161));
        // Drawn: nothing more to do until the next change, and the next frame is 100 ms on.
        let w = p.wait(t0 + ms(170), false);
        assert!(!w.request_gap && !w.listen_to_engine);
        p.changed();
        let w = p.wait(t0 + ms(200), false);
        assert!(!w.request_gap, "at most ten frames a second");
        assert_eq!(w.timeout, ms(61));
        assert!(p.wait(t0 + ms(261), false).request_gap);
    }

    #[test]
    fn unread_engine_events_alone_ask_for_a_gap() {
        let (mut p, t0) = pacer();
        let w = p.wait(t0 + ms(120), true);
        assert!(w.request_gap);
        // The events turned out to change nothing: the gap still ends, without a frame.
        assert_eq!(
            p.step(t0 + ms(125), true),
            Step {
                draw: false,
                gap_done: true
            }
        );
    }

    #[test]
    fn without_a_gap_it_draws_anyway_after_gap_wait_and_keeps_the_request() {
        let (mut p, t0) = pacer();
        p.changed();
        let asked = t0 + ms(100);
        assert!(p.wait(asked, false).request_gap);
        // Messages before GAP_WAIT draw nothing.
        assert_eq!(p.step(asked + ms(100), false), Step::default());
        assert_eq!(p.wait(asked + ms(100), false).timeout, ms(150));
        let s = p.step(asked + GAP_WAIT, false);
        assert_eq!(
            s,
            Step {
                draw: true,
                gap_done: false
            }
        );
        p.drawn(asked + GAP_WAIT);
        // The request stands: no second one while it is outstanding, the engine still heard.
        let w = p.wait(asked + ms(400), false);
        assert!(!w.request_gap && w.listen_to_engine);
        // A late gap still ends properly, with no frame if nothing changed since.
        assert_eq!(
            p.step(asked + ms(450), true),
            Step {
                draw: false,
                gap_done: true
            }
        );
    }

    #[test]
    fn a_waited_out_change_draws_at_once_but_not_twice_within_a_frame() {
        let (mut p, t0) = pacer();
        p.changed();
        let asked = t0 + ms(100);
        p.wait(asked, false);
        assert!(p.step(asked + GAP_WAIT, false).draw);
        p.drawn(asked + GAP_WAIT);
        // Another change 10 ms later: not before a frame's time has passed.
        p.changed();
        assert!(!p.step(asked + GAP_WAIT + ms(10), false).draw);
        assert!(p.step(asked + GAP_WAIT + FRAME, false).draw);
    }

    #[test]
    fn a_dirty_screen_with_the_gap_waited_out_does_not_sleep() {
        let (mut p, t0) = pacer();
        p.changed();
        let asked = t0 + ms(100);
        p.wait(asked, false);
        let w = p.wait(asked + GAP_WAIT, false);
        assert_eq!(w.timeout, Duration::ZERO);
    }

    #[test]
    fn an_unanswered_request_is_made_again_after_gap_retry() {
        let (mut p, t0) = pacer();
        p.changed();
        let asked = t0 + ms(100);
        assert!(p.wait(asked, false).request_gap);
        assert!(p.step(asked + GAP_WAIT, false).draw);
        p.drawn(asked + GAP_WAIT);
        // Nothing to draw, request outstanding: sleep until the retry is due.
        let w = p.wait(asked + ms(400), false);
        assert!(!w.request_gap && w.listen_to_engine);
        assert_eq!(w.timeout, GAP_RETRY - ms(400));
        assert!(!p.wait(asked + ms(999), true).request_gap);
        p.step(asked + GAP_RETRY, false);
        assert!(p.wait(asked + GAP_RETRY, true).request_gap, "asked again");
    }

    #[test]
    fn a_key_asks_for_a_gap_at_once_and_waits_for_it_only_briefly() {
        let (mut p, t0) = pacer();
        p.answer();
        // 10 ms after the last frame: no frame spacing for a key.
        let w = p.wait(t0 + ms(10), false);
        assert!(w.request_gap && w.listen_to_engine);
        assert_eq!(w.timeout, KEY_GAP_WAIT);
        // No gap (a first touch): drawn after KEY_GAP_WAIT, not GAP_WAIT.
        assert!(!p.step(t0 + ms(40), false).draw);
        assert!(p.step(t0 + ms(10) + KEY_GAP_WAIT, false).draw);
        p.drawn(t0 + ms(60));
        // The next change that is not a key waits for its frame, 100 ms on, as before.
        p.changed();
        assert_eq!(p.wait(t0 + ms(100), false).timeout, ms(60));
    }

    #[test]
    fn an_unasked_gap_is_ended_too() {
        let (mut p, t0) = pacer();
        assert_eq!(
            p.step(t0 + ms(10), true),
            Step {
                draw: false,
                gap_done: true
            }
        );
    }
}
