//! The core clock, estimated from dependent instruction chains on a pinned thread.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockEstimate {
    /// GHz from the dependent 1-cycle add chain (min time of 7 runs).
    pub ghz: f64,
    /// GHz from a second, different dependent chain, as a check.
    pub check_ghz: f64,
    /// Whether the two agree within 5 %.
    pub agree: bool,
    /// How it was measured, for the header line.
    pub method: String,
}

impl ClockEstimate {
    /// Measures on `cpu` (pinned for the measurement when given).
    pub fn measure(cpu: Option<usize>) -> ClockEstimate {
        let _ = cpu;
        todo!("machine helper")
    }

    /// "3.20 GHz" or "3.20 GHz (add chain) vs 2.10 GHz (check chain): they disagree".
    pub fn line(&self) -> String {
        todo!()
    }
}
