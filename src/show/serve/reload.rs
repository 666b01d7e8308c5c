//! `--web-config` re-read when it changes: on a new connection, at most once a second, the
//! file and every file it names (certificate, key, client CA) are looked at (modification time
//! and length); when one changed, the whole config is loaded again. A good one serves the next
//! connection (a rotated certificate without a restart); a bad one keeps the old config, says
//! so on stderr, and the two reload metrics show it, as exporter-toolkit users expect.

use super::web_config::WebConfig;
use crate::base::output;
use prometheus::{Encoder, Gauge, Registry, TextEncoder};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The least time between two looks at the files.
const EVERY: Duration = Duration::from_secs(1);

/// What a file looked like when last read.
type Stamp = Option<(SystemTime, u64)>;

/// The config in use and what its files looked like when it was read.
pub(super) struct Watched {
    pub(super) config: WebConfig,
    stamps: Vec<(PathBuf, Stamp)>,
    looked: Instant,
    /// The last reload's outcome and when it was (seconds since 1970): the start counts.
    ok: bool,
    at: f64,
}

impl Watched {
    pub(super) fn new(config: WebConfig) -> Watched {
        Watched {
            stamps: stamps(&config),
            config,
            looked: Instant::now(),
            ok: true,
            at: now_s(),
        }
    }

    /// Loads the config again if a file changed and a second has passed since the last look;
    /// true when a new config is in use.
    pub(super) fn refresh(&mut self) -> bool {
        if self.looked.elapsed() < EVERY {
            return false;
        }
        self.looked = Instant::now();
        let changed = self.stamps.iter().any(|(p, s)| stamp(p) != *s);
        if !changed {
            return false;
        }
        let path = self.config.path.clone();
        self.at = now_s();
        match WebConfig::load(&path) {
            Ok(config) => {
                self.stamps = stamps(&config);
                self.config = config;
                self.ok = true;
                output::stderr(&format!(
                    "stream-top: --web-config {}: reloaded",
                    path.display()
                ));
                true
            }
            Err(e) => {
                // Looked at again only when a file changes once more.
                self.stamps = self
                    .stamps
                    .iter()
                    .map(|(p, _)| (p.clone(), stamp(p)))
                    .collect();
                self.ok = false;
                output::stderr(&format!("stream-top: {e}; kept the previous config"));
                false
            }
        }
    }

    /// The reload metrics, in the text format, to follow the exposition.
    pub(super) fn render(&self) -> String {
        let registry = Registry::new();
        let gauge = |name: &str, help: &str, value: f64| {
            if let Ok(g) = Gauge::new(name, help) {
                g.set(value);
                let _ = registry.register(Box::new(g));
            }
        };
        gauge(
            "stream_top_web_config_last_reload_success",
            "Whether the last load of --web-config succeeded (1) or kept the previous config (0).",
            if self.ok { 1.0 } else { 0.0 },
        );
        gauge(
            "stream_top_web_config_last_reload_timestamp_seconds",
            "When --web-config was last loaded or tried, seconds since 1970.",
            self.at,
        );
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

fn stamps(config: &WebConfig) -> Vec<(PathBuf, Stamp)> {
    config.files.iter().map(|p| (p.clone(), stamp(p))).collect()
}

fn stamp(path: &PathBuf) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
