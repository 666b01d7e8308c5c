//! End to end with a real Prometheus server on loopback: it scrapes
//! `stream-top --headless --serve 127.0.0.1:PORT`, and its HTTP API must then answer
//! `stream_top_bandwidth_bytes_per_second > 0`. CI installs Prometheus (.ci/run), and there a
//! missing server fails the test; elsewhere it is skipped with the reason printed.

use crate::support::serve::{PATIENCE, QUICK, Service, http_get, wait_bounded};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The query the test asks Prometheus, URL-encoded below.
const QUERY: &str = "stream_top_bandwidth_bytes_per_second > 0";

/// Prometheus, stopped with SIGTERM (then SIGKILL after `PATIENCE`) when dropped.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        wait_bounded(&mut self.0);
    }
}

fn free_loopback_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn prometheus_scrapes_the_service_and_answers_the_bandwidth_query() {
    if Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "prometheus is not installed, but CI must have it (.ci/run installs it)"
        );
        eprintln!("skipped: prometheus is not installed (apt-get install prometheus)");
        return;
    }
    let svc = Service::start(QUICK);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: stream-top\n    static_configs:\n      - targets: ['{}']\n",
            svc.addr
        ),
    )
    .unwrap();
    let web: SocketAddr = format!("127.0.0.1:{}", free_loopback_port())
        .parse()
        .unwrap();
    let _prometheus = Prometheus(
        Command::new("prometheus")
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
            .expect("start prometheus"),
    );
    let path = "/api/v1/query?query=stream_top_bandwidth_bytes_per_second%20%3E%200";
    let deadline = Instant::now() + PATIENCE;
    let answer = loop {
        // Refused until Prometheus listens; empty until it has scraped a figure.
        if std::net::TcpStream::connect_timeout(&web, Duration::from_secs(1)).is_ok() {
            let (status, body) = http_get(web, path);
            if status.contains(" 200 ") {
                let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
                let result = &v["data"]["result"];
                if result.as_array().is_some_and(|r| !r.is_empty()) {
                    break v;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never answered `{QUERY}`"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let first = &answer["data"]["result"][0];
    let value: f64 = first["value"][1].as_str().unwrap().parse().unwrap();
    assert!(value > 0.0, "{answer}");
    assert_eq!(first["metric"]["job"], "stream-top");
    println!("Prometheus answered `{QUERY}`: {first}");
    let (code, _, err) = svc.terminate();
    assert_eq!(code, Some(143), "{err}");
}
