//! The endpoint: `GET /metrics` (the exposition), `GET /` (a page naming it), HEAD of both,
//! 405 for every other method, 404 for every other path. No file is ever served.
//!
//! A slow or hostile client must not stall the engine, the UI or other scrapes, and must not
//! grow our memory. tiny_http's own server reads request heads without a size or time bound,
//! so connections are taken here: a few answering threads behind a short queue (a connection
//! that finds it full is closed at once), one request per connection, a request head of at
//! most [`MAX_HEAD`] bytes that must arrive within [`READ_TIME`] (parsed by httparse), and a
//! response that must be taken within [`WRITE_TIME`] (written by tiny_http). The figures come
//! from the [`Shared`] slot; nothing here waits on the engine or makes it wait.

use super::exposition::{self, CONTENT_TYPE};
use super::scrape::Shared;
use crate::base::error::{Error, Result};
use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The request line and headers together, bytes (Prometheus sends about 300).
pub const MAX_HEAD: usize = 8 * 1024;
/// The whole request head must arrive within this.
pub const READ_TIME: Duration = Duration::from_secs(2);
/// The whole response must be taken within this.
pub const WRITE_TIME: Duration = Duration::from_secs(5);
/// How long a closed response waits for the client to close its side.
const LINGER: Duration = Duration::from_millis(500);
/// Threads answering requests, and connections that may wait for one.
const ANSWERERS: usize = 4;
const QUEUE: usize = 16;

const INDEX: &str = "stream-top: memory bandwidth, live (the STREAM triad over thread counts x \
working sets).\n\nGET /metrics  the figures in the Prometheus text format\n";

/// A bound listening socket: bound before anything is measured, so a taken port is a usage
/// error at once.
#[derive(Debug)]
pub struct Listener {
    inner: TcpListener,
    addr: SocketAddr,
}

/// Binds `addr` (`--serve`). Errors are one line naming the address, exit 2.
pub fn bind(addr: SocketAddr) -> Result<Listener> {
    let inner = TcpListener::bind(addr)
        .map_err(|e| Error::usage(format!("--serve {addr}: cannot listen there: {e}")))?;
    let addr = inner
        .local_addr()
        .map_err(|e| Error::usage(format!("--serve {addr}: {e}")))?;
    Ok(Listener { inner, addr })
}

impl Listener {
    /// The address bound (with the port the OS chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// The running endpoint; dropping it stops it (within [`READ_TIME`] + [`WRITE_TIME`]).
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
    answerers: Vec<JoinHandle<()>>,
}

impl Server {
    /// Serves the latest figures in `shared` on `listener`.
    pub fn start(listener: Listener, shared: Shared) -> Result<Server> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = crossbeam_channel::bounded::<TcpStream>(QUEUE);
        let spawn_err = |e: io::Error| Error::machine(format!("cannot start the server: {e}"));
        let mut answerers = Vec::new();
        for i in 0..ANSWERERS {
            let (rx, shared) = (rx.clone(), shared.clone());
            answerers.push(
                std::thread::Builder::new()
                    .name(format!("serve-{i}"))
                    .spawn(move || answer_all(rx, shared))
                    .map_err(spawn_err)?,
            );
        }
        let acceptor = {
            let stop = stop.clone();
            let inner = listener.inner;
            std::thread::Builder::new()
                .name("serve-accept".into())
                .spawn(move || accept_all(inner, tx, stop))
                .map_err(spawn_err)?
        };
        Ok(Server {
            addr: listener.addr,
            stop,
            acceptor: Some(acceptor),
            answerers,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // accept() blocks: a connection of our own wakes it to see the flag.
        let wake = SocketAddr::new(reachable(self.addr.ip()), self.addr.port());
        let woke = TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok();
        if let Some(t) = self.acceptor.take()
            && woke
        {
            // The acceptor drops the queue's sender; the answerers finish what they hold.
            let _ = t.join();
            for t in self.answerers.drain(..) {
                let _ = t.join();
            }
        }
    }
}

/// The address to connect to for a socket bound to `ip` (the wildcard is reached on loopback).
fn reachable(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v) if v.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v) if v.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    }
}

fn accept_all(listener: TcpListener, queue: Sender<TcpStream>, stop: Arc<AtomicBool>) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = conn else { continue };
        match queue.try_send(stream) {
            Ok(()) => {}
            // Every answerer busy and the queue full: close this one rather than wait.
            Err(TrySendError::Full(s)) => drop(s),
            Err(TrySendError::Disconnected(_)) => return,
        }
    }
}

fn answer_all(queue: Receiver<TcpStream>, shared: Shared) {
    for stream in queue {
        let _ = answer(&stream, &shared);
    }
}

/// What a request asked for, once its head is read.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    Get { head_only: bool, path: String },
    OtherMethod,
    Malformed,
    TooLarge,
}

fn answer(stream: &TcpStream, shared: &Shared) -> io::Result<()> {
    let asked = read_head(stream, Instant::now() + READ_TIME)?;
    let (status, body, content_type, head_only) = match &asked {
        Asked::Get { head_only, path } => {
            let path = path.split('?').next().unwrap_or("");
            match path {
                "/metrics" => (
                    200,
                    exposition::render(&shared.latest(), crate::platform::now_ns()),
                    CONTENT_TYPE,
                    *head_only,
                ),
                "/" => (
                    200,
                    INDEX.to_string(),
                    "text/plain; charset=utf-8",
                    *head_only,
                ),
                _ => (
                    404,
                    "not found: see /metrics\n".into(),
                    "text/plain",
                    *head_only,
                ),
            }
        }
        Asked::OtherMethod => (405, "only GET and HEAD\n".into(), "text/plain", false),
        Asked::Malformed => (400, "bad request\n".into(), "text/plain", false),
        Asked::TooLarge => (431, "request head too large\n".into(), "text/plain", false),
    };
    let mut response = tiny_http::Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", content_type))
        .with_header(header("Connection", "close"));
    if asked == Asked::OtherMethod {
        response.add_header(header("Allow", "GET, HEAD"));
    }
    let mut out = Deadline {
        stream,
        until: Instant::now() + WRITE_TIME,
    };
    response.raw_print(&mut out, tiny_http::HTTPVersion(1, 1), &[], head_only, None)?;
    out.flush()?;
    // Tell the client we are done, then read what it may still send (a body we did not
    // want) for a moment: closing with unread data resets the connection, which can throw
    // away the response before the client has read it.
    stream.shutdown(std::net::Shutdown::Write)?;
    stream.set_read_timeout(Some(LINGER))?;
    let _ = io::copy(&mut stream.take(64 * 1024), &mut io::sink());
    Ok(())
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("an ASCII header")
}

/// Reads a request head of at most `MAX_HEAD` bytes until `until`. Timeouts and a closed
/// connection are errors (nothing is answered); a head too large or malformed is answered.
fn read_head(stream: &TcpStream, until: Instant) -> io::Result<Asked> {
    let mut buf = vec![0u8; MAX_HEAD];
    let mut len = 0;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        let n = (&*stream).read(&mut buf[len..])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        len += n;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => {
                return Ok(match req.method {
                    Some(m @ ("GET" | "HEAD")) => Asked::Get {
                        head_only: m == "HEAD",
                        path: req.path.unwrap_or("/").to_string(),
                    },
                    _ => Asked::OtherMethod,
                });
            }
            Ok(httparse::Status::Partial) if len == MAX_HEAD => return Ok(Asked::TooLarge),
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => return Ok(Asked::TooLarge),
            Err(_) => return Ok(Asked::Malformed),
        }
    }
}

/// Writes to the stream until a deadline, however slowly the client reads.
struct Deadline<'a> {
    stream: &'a TcpStream,
    until: Instant,
}

impl Write for Deadline<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_write_timeout(Some(left))?;
        (&*self.stream).write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self.stream).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(server: &Server, request: &[u8]) -> String {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    fn server() -> Server {
        let l = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        Server::start(l, Shared::default()).unwrap()
    }

    #[test]
    fn get_head_and_everything_else() {
        let s = server();
        let r = ask(&s, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.contains("text/plain; version=0.0.4"), "{r}");
        assert!(r.contains("# TYPE stream_top_info gauge"), "{r}");
        let r = ask(&s, b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(
            r.starts_with("HTTP/1.1 200") && !r.contains("# TYPE"),
            "{r}"
        );
        let r = ask(&s, b"GET / HTTP/1.0\r\n\r\n");
        assert!(r.contains("GET /metrics"), "{r}");
        let r = ask(&s, b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi");
        assert!(
            r.starts_with("HTTP/1.1 405") && r.contains("Allow: GET, HEAD"),
            "{r}"
        );
        let r = ask(&s, b"GET /etc/passwd HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 404"), "{r}");
        let r = ask(&s, b"GET /../../etc/passwd HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 404"), "{r}");
        let r = ask(&s, b"\x16\x03\x01 garbage\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 400"), "{r}");
    }

    #[test]
    fn a_head_past_the_limit_is_refused() {
        let s = server();
        let mut req = b"GET /metrics HTTP/1.1\r\nX-Long: ".to_vec();
        req.resize(MAX_HEAD, b'a');
        let r = ask(&s, &req);
        assert!(r.starts_with("HTTP/1.1 431"), "{r}");
    }

    #[test]
    fn a_silent_client_does_not_hold_up_others() {
        let s = server();
        // More silent connections than answerers: each is dropped after READ_TIME, and a
        // scrape behind them still gets its answer.
        let silent: Vec<TcpStream> = (0..ANSWERERS + 2)
            .map(|_| TcpStream::connect(s.addr()).unwrap())
            .collect();
        let r = ask(&s, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        drop(silent);
    }

    #[test]
    fn a_taken_port_is_a_usage_error() {
        let first = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let e = bind(first.addr()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("--serve 127.0.0.1:"), "{e}");
    }
}
