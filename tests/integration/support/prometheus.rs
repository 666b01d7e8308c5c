//! A real Prometheus server on loopback for the end to end tests: started with a scrape config
//! of the test's own, asked through its HTTP API, stopped when dropped. CI installs it
//! (.ci/run), and there a missing server fails the test; elsewhere it is skipped with the
//! reason printed.

use super::serve::{PATIENCE, http_get, wait_bounded};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `stream_top_bandwidth_bytes_per_second > 0`, URL-encoded: the query that shows a figure
/// came through.
pub const BANDWIDTH_QUERY: &str = "stream_top_bandwidth_bytes_per_second%20%3E%200";

/// Whether `prometheus` can be run; false (with the reason printed) only outside CI.
pub fn have_prometheus() -> bool {
    super::tools::have(
        "prometheus",
        "apt-get install prometheus; .ci/run installs it",
    )
}

/// Prometheus, stopped with SIGTERM (then SIGKILL after `PATIENCE`) when dropped; its
/// config and data live in a temporary directory removed with it.
pub struct Prometheus {
    child: Child,
    /// Where its HTTP API listens.
    pub web: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts it with `scrape_configs` (YAML list items, indented two spaces) under a global
    /// scrape interval of one second.
    pub fn start(scrape_configs: &str) -> Prometheus {
        Prometheus::start_with_rules(scrape_configs, &[])
    }

    /// Starts it as `start` does, with `rules` (file name, contents) written into its directory
    /// and loaded as rule files, evaluated every second like the scrapes.
    pub fn start_with_rules(scrape_configs: &str, rules: &[(&str, &str)]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let mut rule_files = String::new();
        for (name, text) in rules {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            rule_files.push_str(&format!("  - '{}'\n", path.display()));
        }
        if !rule_files.is_empty() {
            rule_files = format!("rule_files:\n{rule_files}");
        }
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 {rule_files}scrape_configs:\n{scrape_configs}"
            ),
        )
        .unwrap();
        let web = free_loopback_addr();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus");
        Prometheus {
            child,
            web,
            _dir: dir,
        }
    }

    /// The API's JSON answer to `path` now; else why not (it does not listen yet, or its
    /// answer other than 200).
    pub fn get_json(&self, path: &str) -> Result<serde_json::Value, String> {
        TcpStream::connect_timeout(&self.web, Duration::from_secs(1))
            .map_err(|e| format!("not listening: {e}"))?;
        let (status, body) = http_get(self.web, path);
        if !status.contains(" 200 ") {
            return Err(format!("{status}: {body}"));
        }
        Ok(serde_json::from_str(&body).expect("JSON"))
    }

    /// The alerts pending or firing now (/api/v1/alerts: a resolved alert is no longer
    // Only the fleet end to end loads rules and asks for alerts, and it pins its processes
    // with Linux's taskset.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    /// listed); empty while it does not answer yet.
    pub fn alerts(&self) -> Vec<serde_json::Value> {
        self.get_json("/api/v1/alerts")
            .ok()
            .and_then(|v| v["data"]["alerts"].as_array().cloned())
            .unwrap_or_default()
    }

    /// The instant query `encoded` (URL-encoded) now: its result vector, empty while it does
    // Only the fleet end to end loads rules and asks for alerts, and it pins its processes
    // with Linux's taskset.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    /// not answer yet.
    pub fn query(&self, encoded: &str) -> Vec<serde_json::Value> {
        self.get_json(&format!("/api/v1/query?query={encoded}"))
            .ok()
            .and_then(|v| v["data"]["result"].as_array().cloned())
            .unwrap_or_default()
    }

    /// Asks the API `path` until `done` finds what it awaits in the JSON answer, within
    /// `PATIENCE`: refused until Prometheus listens, and empty until it has scraped.
    pub fn wait_for(
        &self,
        path: &str,
        what: &str,
        done: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let last = match self.get_json(path) {
                Ok(v) if done(&v) => return v,
                Ok(v) => v.to_string(),
                Err(why) => why,
            };
            assert!(
                Instant::now() < deadline,
                "Prometheus never said {what}: {last}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Waits until the query `encoded` (URL-encoded) has a result; the first one.
    pub fn wait_for_query(&self, encoded: &str) -> serde_json::Value {
        let path = format!("/api/v1/query?query={encoded}");
        let answer = self.wait_for(&path, &format!("a result for `{encoded}`"), |v| {
            v["data"]["result"]
                .as_array()
                .is_some_and(|r| !r.is_empty())
        });
        answer["data"]["result"][0].clone()
    }

    /// Waits until the active target of `job` has been scraped (health no longer `unknown`);
    /// that target as /api/v1/targets gives it.
    // Only the TLS test asks for a target's health, and TLS is Linux-only.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn wait_for_target(&self, job: &str) -> serde_json::Value {
        let of_job = |v: &serde_json::Value| {
            v["data"]["activeTargets"]
                .as_array()
                .and_then(|ts| {
                    ts.iter()
                        .find(|t| t["labels"]["job"] == job && t["health"] != "unknown")
                })
                .cloned()
        };
        let answer = self.wait_for("/api/v1/targets", &format!("how job {job} went"), |v| {
            of_job(v).is_some()
        });
        of_job(&answer).unwrap()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        wait_bounded(&mut self.child);
    }
}

fn free_loopback_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}
