//! The live terminal monitor.
