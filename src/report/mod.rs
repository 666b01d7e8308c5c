//! Snapshots of the table and their writers.
