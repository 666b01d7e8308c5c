//! The bottom layer, used by every other and using none: the one error type, the one writer of
//! the standard streams, the one check and the atomic writes of output files, units and their
//! spelling, time stamps, and outside text made safe to show.

pub mod error;
pub mod files;
pub mod median;
pub mod output;
pub mod quote;
pub mod time;
pub mod units;
