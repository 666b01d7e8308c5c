//! What the rounds mean: per-cell statistics (`stats`), the intervals and tests they rest on
//! (`inference`), rounds a neighbour disturbed (`disturbance`), figures per node and core type
//! (`groups`), settings that changed nothing (`no_effect`), the live contention watch
//! (`watch`) and the run's own description (`run_info`). It reads the engine's records and
//! the machine's description; it draws and writes nothing.

pub mod confirm;
pub mod disturbance;
pub mod fleet;
pub mod groups;
pub mod inference;
pub mod no_effect;
pub mod run_info;
pub mod stats;
pub mod verdict;
pub mod watch;
