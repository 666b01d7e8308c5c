//! stream-top as a Prometheus target: `--serve` answers scrapes with the figures of the live
//! monitor or of a headless service, and `--prom-file` writes the same exposition for
//! node_exporter's textfile collector after each sweep.
//!
//! `feed` copies the figures out of the watching loop, `exposition` renders them, `http` serves
//! them. The engine never waits on any of it.

pub mod exposition;
pub mod feed;
pub mod http;

pub use feed::{Exporter, Scrape, Shared, check_prom_file};
pub use http::{DEFAULT_ADDR, Listener, Server, bind};
