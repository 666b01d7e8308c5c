//! Snapshots of the table and their writers.

pub mod model;
