//! The binary as a Prometheus service (`--headless --serve 127.0.0.1:0`): started, scraped over
//! plain HTTP and stopped with SIGTERM, every wait bounded. For the serve tests and the end to
//! end test with a real Prometheus server.

use super::binary::BIN;
use super::running::Running;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

pub use super::running::{PATIENCE, wait_bounded};

/// A small, quick grid for a service under test: one cache set, one thread.
pub const QUICK: &[&str] = &[
    "--threads",
    "1",
    "--sets",
    "16KiB/thread",
    "--round-ms",
    "3",
    "--duty",
    "50",
];

/// `stream-top --headless --serve 127.0.0.1:0 …` running; stopped (SIGTERM, then SIGKILL
/// after `PATIENCE`) when dropped.
pub struct Service {
    run: Running,
    pub addr: SocketAddr,
    /// The URL its start line gives, scheme included (read by the Linux-only TLS tests).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub url: String,
}

impl Service {
    pub fn start(extra: &[&str]) -> Service {
        let mut command = Command::new(BIN);
        command
            .args(["--headless", "--serve", "127.0.0.1:0"])
            .args(extra);
        Service::spawn(command)
    }

    /// Starts `command`, a service that says where it serves on stderr.
    pub fn spawn(command: Command) -> Service {
        // `http://` or, under a web config with TLS, `https://`.
        const SERVING: &str = "stream-top: serving ";
        let run = Running::spawn(command);
        let said = run.wait_for_line("where it serves", |l| l.starts_with(SERVING));
        let url = said.last().unwrap().strip_prefix(SERVING).unwrap();
        let (_, rest) = url.split_once("://").unwrap();
        let addr = rest.split('/').next().unwrap().parse().unwrap();
        let url = url.split(' ').next().unwrap().to_string();
        Service { run, addr, url }
    }

    /// GET `path`: the status line and the body.
    pub fn get(&self, path: &str) -> (String, String) {
        http_get(self.addr, path)
    }

    /// Scrapes until some cell has a bandwidth figure above zero; the exposition.
    pub fn wait_for_bandwidth(&self) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let (status, body) = self.get("/metrics");
            assert!(status.contains(" 200 "), "{status}");
            if positive_bandwidth(&body) {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "no bandwidth figure came:\n{body}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Whether it has ended (its exit status) and what it has said on stderr since it said
    /// where it serves: for a test that finds it no longer answering.
    pub fn state(&mut self) -> String {
        // A moment for a process that is ending to end and say why.
        std::thread::sleep(Duration::from_millis(500));
        let status = self.run.exited();
        let err = self.run.lines_so_far();
        format!("exit status {status:?}, stderr:\n{}", err.join("\n"))
    }

    /// SIGTERM, and the exit status, stdout and the rest of stderr.
    pub fn terminate(self) -> (Option<i32>, String, String) {
        self.run.signal("TERM");
        self.run.finish()
    }
}

/// A plain HTTP/1.0 GET (the answer ends when the connection closes): status line and body.
pub fn http_get(addr: SocketAddr, path: &str) -> (String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// Whether an exposition has a `stream_top_bandwidth_bytes_per_second` sample above zero.
pub fn positive_bandwidth(exposition: &str) -> bool {
    exposition.lines().any(|l| {
        l.starts_with("stream_top_bandwidth_bytes_per_second{")
            && l.rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|v| v > 0.0)
    })
}
