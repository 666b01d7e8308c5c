//! What a frame may say. A checksum proves only that the bytes are the ones written, not that a
//! recorder wrote them: a crafted or corrupted-then-rechecksummed file can hold a time in the
//! year 584556019 or a gap of 10^18 dropped frames. Each decoded frame is held to what a
//! recorder on this planet could have written, and refused with the reason otherwise.

use super::format::{Body, EpisodeWire, Frame};
use super::watch::epoch_ms;
use crate::base::time::rfc3339;
use std::fmt;
use std::time::SystemTime;

/// 2000-01-01T00:00:00Z, ms since the epoch: no recording is older.
const EARLIEST_MS: u64 = 946_684_800_000;

/// A clock a day fast is a clock badly set; past that, the time is damage.
const AHEAD_MS: u64 = 24 * 3600 * 1000;

/// The recorder cannot drop frames faster than the engine makes them, and the engine makes at
/// most one a microsecond (a round takes longer than that): a thousand a millisecond since the
/// session began bounds any count of frames or rounds a frame states.
const PER_MS: u64 = 1000;

/// The most rounds a cell's statistics cover (`--rounds`); a header past it is damage.
const MAX_WINDOW: usize = 1 << 24;

/// Why a frame whose checksum held was refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Implausible {
    /// A time (ms since the epoch) before 2000 or more than a day from now.
    Time(u64),
    /// A count of frames or rounds past what the time since the session began allows.
    Count {
        what: &'static str,
        n: u64,
        most: u64,
    },
    /// A header whose statistics window no `--rounds` gives.
    Window(usize),
}

impl fmt::Display for Implausible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Implausible::Time(ms) => write!(
                f,
                "a time of {ms} ms since 1970, outside {} to a day from now",
                rfc3339((EARLIEST_MS / 1000) as i64)
            ),
            Implausible::Count { what, n, most } => write!(
                f,
                "{n} {what}, more than the {most} the time since the session began allows"
            ),
            Implausible::Window(w) => write!(f, "a window of {w} rounds (at most {MAX_WINDOW})"),
        }
    }
}

/// The bounds frames are held to, and the session they belong to.
#[derive(Debug, Clone)]
pub(crate) struct Plausible {
    latest_ms: u64,
    /// The time of the file's last header (each file starts with its session's header), or of
    /// its first frame when a header is missing.
    session_ms: Option<u64>,
}

impl Plausible {
    /// Bounds as of now.
    pub(crate) fn now() -> Plausible {
        Plausible::until(epoch_ms(SystemTime::now()))
    }

    /// Bounds with "now" at `now_ms` (tests pin it).
    pub(crate) fn until(now_ms: u64) -> Plausible {
        Plausible {
            latest_ms: now_ms.saturating_add(AHEAD_MS),
            session_ms: None,
        }
    }

    /// Whether `t_ms` is a time a recording may hold.
    pub(crate) fn time_ok(&self, t_ms: u64) -> bool {
        (EARLIEST_MS..=self.latest_ms).contains(&t_ms)
    }

    /// Checks a frame read in file order (a header starts its session).
    pub(crate) fn check(&mut self, f: &Frame) -> Result<(), Implausible> {
        self.time(f.t_ms)?;
        if let Body::Header(h) = &f.body {
            if h.window == 0 || h.window > MAX_WINDOW {
                return Err(Implausible::Window(h.window));
            }
            self.session_ms = Some(f.t_ms);
        }
        let since = *self.session_ms.get_or_insert(f.t_ms);
        let most = f
            .t_ms
            .saturating_sub(since)
            .saturating_add(1000)
            .saturating_mul(PER_MS);
        let count = |what: &'static str, n: u64| {
            if n > most {
                Err(Implausible::Count { what, n, most })
            } else {
                Ok(())
            }
        };
        match &f.body {
            Body::Gap(n) => count("dropped frames", *n),
            Body::Watch(w) => match &w.episode {
                Some(e) => self.episode(e, &count),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    fn time(&self, t_ms: u64) -> Result<(), Implausible> {
        if self.time_ok(t_ms) {
            Ok(())
        } else {
            Err(Implausible::Time(t_ms))
        }
    }

    /// An episode's times and its counts of rounds.
    fn episode(
        &self,
        e: &EpisodeWire,
        count: &dyn Fn(&'static str, u64) -> Result<(), Implausible>,
    ) -> Result<(), Implausible> {
        self.time(e.started_ms)?;
        if let Some(end) = e.ended_ms {
            self.time(end)?;
        }
        count("rounds in an episode", e.rounds)?;
        count("disturbed rounds in an episode", e.disturbed_rounds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::record::format::{Body, Frame};

    const NOW: u64 = 1_780_000_000_000;

    fn gap(t_ms: u64, n: u64) -> Frame {
        Frame {
            t_ms,
            body: Body::Gap(n),
        }
    }

    #[test]
    fn a_time_before_2000_or_past_tomorrow_is_refused() {
        let mut p = Plausible::until(NOW);
        assert!(p.check(&gap(NOW, 0)).is_ok());
        assert!(p.check(&gap(NOW + AHEAD_MS, 0)).is_ok());
        // The year 584556019 of a crafted recording, and the epoch itself.
        let far = u64::MAX / 1000;
        assert_eq!(p.check(&gap(far, 0)), Err(Implausible::Time(far)));
        assert_eq!(p.check(&gap(5, 0)), Err(Implausible::Time(5)));
        let said = Implausible::Time(far).to_string();
        assert!(said.contains("2000-01-01"), "{said}");
    }

    #[test]
    fn a_gap_past_a_frame_a_microsecond_since_the_session_began_is_refused() {
        let mut p = Plausible::until(NOW);
        let start = NOW - 60_000;
        // The first frame of the file stands in for its session's start.
        assert!(p.check(&gap(start, 10)).is_ok());
        // A minute later: at most a thousand a millisecond over the minute and a second.
        assert!(p.check(&gap(NOW, 61_000_000)).is_ok());
        let crafted = p.check(&gap(NOW, 1_423_688_023_841_367_807));
        assert!(
            matches!(
                crafted,
                Err(Implausible::Count {
                    most: 61_000_000,
                    ..
                })
            ),
            "{crafted:?}"
        );
    }
}
