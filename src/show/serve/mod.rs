//! stream-top as a Prometheus target: `--serve` answers scrapes with the figures of the live
//! monitor or of a headless service, and `--prom-file` writes the same exposition for
//! node_exporter's textfile collector after each sweep.
//!
//! `feed` copies the figures out of the watching loop into a `scrape`, `exposition` renders it,
//! `http` serves it. The engine never waits on any of it. `web_config` (`--web-config`) secures
//! the endpoint: `tls` and `wire` its TLS, `auth` its basic auth, `reload` its re-reading.

mod auth;
pub mod exposition;
pub mod feed;
pub mod http;
pub mod latency;
pub mod probe;
mod reload;
pub mod scrape;
mod tls;
pub mod web_config;
mod wire;

pub use feed::{Exporter, check_prom_file};
pub use http::{Listener, Server, bind};
pub use scrape::{Scrape, Shared};
pub use web_config::WebConfig;
