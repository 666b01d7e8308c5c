//! Contention: a cell whose rounds fall well below its own median for several rounds in a row is
//! sharing the machine with something. Each cell keeps a streak of slow rounds; the log hears
//! when a streak reaches the threshold and when it ends.

use crate::engine::plan::CellId;
use std::collections::HashMap;

/// A round is slow when its rate is below this fraction of the cell's median (15 % below).
pub(crate) const SLOW_FRACTION: f64 = 0.85;
/// Slow rounds in a row that make contention.
pub(crate) const STREAK: u32 = 3;
/// Rounds a cell's window must hold before its median is trusted as a reference.
pub(crate) const MIN_ROUNDS: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Contention {
    /// The streak reached `STREAK`: the median it fell from and the mean of the slow rounds.
    Began { median: f64, recent: f64 },
    /// A round at speed after a reported streak: how long it lasted and the rate now.
    Ended { rounds: u32, now: f64 },
}

#[derive(Debug, Clone, Copy, Default)]
struct Streak {
    slow: u32,
    sum: f64,
    /// The median when the streak began: what the drop is measured against.
    median: f64,
    reported: bool,
}

/// Slow-round streaks per cell.
#[derive(Debug, Clone, Default)]
pub(crate) struct Streaks {
    cells: HashMap<CellId, Streak>,
}

impl Streaks {
    /// Takes a timed round's rate and the cell's median before it (None while the window is too
    /// short to judge); says when contention begins or ends.
    pub fn round(&mut self, cell: CellId, gbs: f64, median: Option<f64>) -> Option<Contention> {
        let median = median.filter(|m| *m > 0.0)?;
        let s = self.cells.entry(cell).or_default();
        if gbs < SLOW_FRACTION * median {
            if s.slow == 0 {
                s.median = median;
            }
            s.slow += 1;
            s.sum += gbs;
            if s.slow == STREAK && !s.reported {
                s.reported = true;
                return Some(Contention::Began {
                    median: s.median,
                    recent: s.sum / s.slow as f64,
                });
            }
            None
        } else {
            let ended = s.reported.then_some(Contention::Ended {
                rounds: s.slow,
                now: gbs,
            });
            *s = Streak::default();
            ended
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_slow_rounds_in_a_row_begin_contention_once() {
        let mut s = Streaks::default();
        let c = CellId::new(0, 2);
        let m = Some(10.0);
        assert_eq!(s.round(c, 8.0, m), None);
        assert_eq!(s.round(c, 8.0, m), None);
        assert_eq!(
            s.round(c, 8.0, m),
            Some(Contention::Began {
                median: 10.0,
                recent: 8.0
            })
        );
        assert_eq!(s.round(c, 7.0, m), None, "reported once per streak");
        assert_eq!(
            s.round(c, 9.9, m),
            Some(Contention::Ended {
                rounds: 4,
                now: 9.9
            })
        );
    }

    #[test]
    fn a_round_at_speed_breaks_the_streak_and_15_percent_is_not_enough() {
        let mut s = Streaks::default();
        let c = CellId::new(0, 1);
        let m = Some(10.0);
        s.round(c, 8.0, m);
        s.round(c, 8.0, m);
        assert_eq!(s.round(c, 9.0, m), None);
        s.round(c, 8.0, m);
        assert_eq!(s.round(c, 8.6, m), None, "exactly 14 % below is not slow");
        assert_eq!(s.round(c, 8.0, m), None);
        // No median yet: nothing is judged.
        assert_eq!(s.round(CellId::new(1, 1), 0.1, None), None);
    }

    #[test]
    fn the_drop_is_against_the_median_when_the_streak_began() {
        let mut s = Streaks::default();
        let c = CellId::new(0, 1);
        s.round(c, 7.0, Some(10.0));
        s.round(c, 7.0, Some(9.0));
        assert_eq!(
            s.round(c, 7.0, Some(8.5)),
            Some(Contention::Began {
                median: 10.0,
                recent: 7.0
            })
        );
    }

    #[test]
    fn streaks_are_per_cell() {
        let mut s = Streaks::default();
        let a = CellId::new(0, 1);
        let b = CellId::new(0, 2);
        s.round(a, 1.0, Some(10.0));
        s.round(b, 1.0, Some(10.0));
        s.round(a, 1.0, Some(10.0));
        s.round(b, 1.0, Some(10.0));
        assert!(s.round(a, 1.0, Some(10.0)).is_some());
        assert!(s.round(b, 1.0, Some(10.0)).is_some());
    }
}
