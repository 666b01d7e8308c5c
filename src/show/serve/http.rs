//! The endpoint: `GET /metrics` (the exposition), `GET /` (a page naming it), HEAD of both,
//! 405 for every other method, 404 for every other path. No file is ever served.
//!
//! A slow or hostile client must not stall the engine, the UI or a scrape, and must not grow
//! our memory. A thread per connection (or a few behind a queue, as before) can be held by as
//! many clients as there are threads: 20 that send half a request head and reconnect shut every
//! scrape out. So one thread serves every connection, event-driven (mio: epoll, kqueue), each
//! socket non-blocking: a connection only costs a slot in a table of at most
//! [`MAX_CONNECTIONS`] and the bytes of its head, and it never waits on another. Each
//! connection has a deadline: its request head, at most [`MAX_HEAD`] bytes (parsed by
//! httparse), must arrive within [`READ_TIME`], and the response must be taken within
//! [`WRITE_TIME`]. When the table is full, the oldest connection still sending its head is
//! dropped to make room, so a fresh scrape always gets in: an attacker must open
//! [`MAX_CONNECTIONS`] connections between a scrape's connect and its head (microseconds on a
//! LAN) to push it out. One request per connection. The figures come from the [`Shared`] slot;
//! nothing here waits on the engine or makes it wait. Stopping wakes the thread at once.
//!
//! With `--web-config` (`web_config`), the same loop serves TLS: each connection's bytes go
//! through its own rustls session (`wire`), and the handshake is part of the head, so its
//! deadline and the eviction of the oldest head cover a handshake that never finishes. Basic
//! auth is checked once the head is read, its bcrypt work on another thread (`auth`); the
//! config is re-read when its files change (`reload`), and its headers go on every response.

use super::auth::{Auth, Verdict};
use super::exposition::{self, CONTENT_TYPE};
use super::reload::Watched;
use super::scrape::Shared;
use super::web_config::WebConfig;
use super::wire::Wire;
use crate::base::error::{Error, Result};
use mio::net::{TcpListener as MioListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The request line and headers together, bytes (Prometheus sends about 300).
const MAX_HEAD: usize = 8 * 1024;
/// The whole request head must arrive within this.
const READ_TIME: Duration = Duration::from_secs(2);
/// The whole response must be taken within this.
const WRITE_TIME: Duration = Duration::from_secs(5);
/// Connections held at once (half the usual limit of 1024 open files): one more drops the
/// oldest still sending its head. Under a lower limit, half of it ([`table_cap`]).
const MAX_CONNECTIONS: usize = 512;
/// How long a closed response waits for the client to close its side.
const LINGER: Duration = Duration::from_millis(500);
/// What a lingering connection may still send (a body we did not want) before it is closed.
const LINGER_BYTES: usize = 64 * 1024;
/// Connections accepted in one turn of the loop, so that a flood of connects cannot hold up the
/// heads of those already in (the loop comes back at once for the rest).
const ACCEPT_BATCH: usize = 64;
/// The loop's longest sleep; after a failed accept (out of files), the wait before the next try.
const TICK: Duration = Duration::from_millis(500);
const RETRY: Duration = Duration::from_millis(20);

const LISTENER: Token = Token(0);
const WAKE: Token = Token(1);
/// The first connection's token; each later one takes the next, so the lowest is the oldest.
const FIRST: usize = 2;

const INDEX: &str = "stream-top: memory bandwidth, live (the STREAM triad over thread counts x \
working sets).\n\nGET /metrics  the figures in the Prometheus text format\n";

/// A bound listening socket: bound before anything is measured, so a taken port is a usage
/// error at once.
#[derive(Debug)]
pub struct Listener {
    inner: TcpListener,
    addr: SocketAddr,
    /// `--web-config`, loaded and checked.
    web: Option<WebConfig>,
}

/// Binds `addr` (`--serve`). Errors are one line naming the address, exit 2.
pub fn bind(addr: SocketAddr) -> Result<Listener> {
    let inner = TcpListener::bind(addr)
        .map_err(|e| Error::usage(format!("--serve {addr}: cannot listen there: {e}")))?;
    let addr = inner
        .local_addr()
        .map_err(|e| Error::usage(format!("--serve {addr}: {e}")))?;
    Ok(Listener {
        inner,
        addr,
        web: None,
    })
}

impl Listener {
    /// The address bound (with the port the OS chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves with `web` (`--web-config`): TLS, basic auth, headers, reloaded on change.
    pub fn secured(self, web: WebConfig) -> Listener {
        Listener {
            web: Some(web),
            ..self
        }
    }
}

/// The running endpoint; dropping it stops it at once (open connections are closed).
pub struct Server {
    addr: SocketAddr,
    /// `https` where the web config gives TLS, else `http`.
    scheme: &'static str,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves the latest figures in `shared` on `listener`.
    pub fn start(listener: Listener, shared: Shared) -> Result<Server> {
        let cap = table_cap(crate::platform::open_files_limit());
        Server::start_holding(listener, shared, cap)
    }

    /// Serves, holding at most `cap` connections at once.
    fn start_holding(listener: Listener, shared: Shared, cap: usize) -> Result<Server> {
        let fail = |e: io::Error| Error::machine(format!("cannot start the server: {e}"));
        listener.inner.set_nonblocking(true).map_err(fail)?;
        let mut socket = MioListener::from_std(listener.inner);
        let poll = Poll::new().map_err(fail)?;
        poll.registry()
            .register(&mut socket, LISTENER, Interest::READABLE)
            .map_err(fail)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE).map_err(fail)?);
        let stop = Arc::new(AtomicBool::new(false));
        let scheme = match &listener.web {
            Some(web) if web.tls.is_some() => "https",
            _ => "http",
        };
        let auth = match &listener.web {
            Some(web) => {
                let mut auth = Auth::start(waker.clone()).map_err(fail)?;
                auth.set_users(&web.users);
                Some(auth)
            }
            None => None,
        };
        let mut table = Table {
            poll,
            listener: socket,
            shared,
            conns: BTreeMap::new(),
            next: FIRST,
            cap,
            web: listener.web.map(Watched::new),
            auth,
        };
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("serve".into())
                .spawn(move || table.run(&stop))
                .map_err(fail)?
        };
        Ok(Server {
            addr: listener.addr,
            scheme,
            stop,
            waker,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where a scraper finds the figures, its scheme included.
    pub fn metrics_url(&self) -> String {
        format!("{}://{}/metrics", self.scheme, self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The loop sees the flag as soon as it wakes; a failed wake leaves it running (it ends
        // with the process) rather than make the caller wait on it.
        if self.waker.wake().is_ok()
            && let Some(t) = self.thread.take()
        {
            let _ = t.join();
        }
    }
}

/// The most connections to hold under a limit of `open_files`: half of it, and at most
/// [`MAX_CONNECTIONS`]. The other half is the rest of the process's: a table that took every
/// free file would make whatever opens one next fail, and some of that ends the run (the signal
/// handlers' socket pair at start: a flood of connects under `ulimit -n 64` killed the service
/// with "cannot install signal handlers: Too many open files").
fn table_cap(open_files: Option<u64>) -> usize {
    open_files.map_or(MAX_CONNECTIONS, |n| {
        usize::try_from(n / 2).map_or(MAX_CONNECTIONS, |half| half.clamp(1, MAX_CONNECTIONS))
    })
}

/// A request head, read.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    asked: Asked,
    /// Its `Authorization` header.
    authorization: Option<String>,
}

/// What a request asked for, once its head is read.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    Get { head_only: bool, path: String },
    OtherMethod,
    Malformed,
    TooLarge,
}

/// Where a connection stands.
enum Stage {
    /// Its request head so far (a TLS handshake comes first).
    Head(Vec<u8>),
    /// Its head, waiting on the verdict on its credentials.
    Verify(Asked),
    /// The response, and how much of it the client has taken.
    Answer(Vec<u8>, usize),
    /// Answered and shut for writing; what it still sent, read and thrown away.
    Linger(usize),
}

struct Conn {
    stream: TcpStream,
    /// Plain or TLS.
    wire: Wire,
    stage: Stage,
    /// When it is dropped, whatever its stage.
    until: Instant,
}

/// What a turn of a connection came to.
enum Turn {
    Waiting,
    Done,
}

/// The loop's state: the poll, the listening socket and the connections, by token.
struct Table {
    poll: Poll,
    listener: MioListener,
    shared: Shared,
    conns: BTreeMap<usize, Conn>,
    next: usize,
    /// The most connections held at once.
    cap: usize,
    /// `--web-config`, as last (re)loaded.
    web: Option<Watched>,
    /// Basic auth's verifier (with `--web-config`).
    auth: Option<Auth>,
}

impl Table {
    fn run(&mut self, stop: &AtomicBool) {
        let mut events = Events::with_capacity(1024);
        let mut wait = Duration::ZERO;
        while !stop.load(Ordering::SeqCst) {
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // The poll itself failed: nothing can be served any more.
                Err(_) => return,
            }
            if stop.load(Ordering::SeqCst) {
                return;
            }
            for ev in events.iter() {
                if let Token(t @ FIRST..) = ev.token() {
                    self.turn(t);
                }
            }
            self.take_verdicts();
            // Accepting in every turn, not only on the listener's event: a batch cut short, or
            // an accept that failed for want of files, leaves connections waiting without a
            // new event to say so.
            let more = self.accept();
            let now = Instant::now();
            let expired: Vec<usize> = self
                .conns
                .iter()
                .filter(|(_, c)| c.until <= now)
                .map(|(&t, _)| t)
                .collect();
            for t in expired {
                self.close(t);
            }
            let next_deadline = self.conns.values().map(|c| c.until).min();
            wait = match more {
                Some(d) => d,
                None => next_deadline.map_or(TICK, |d| d.saturating_duration_since(now).min(TICK)),
            };
        }
    }

    /// Accepts up to a batch; None when the backlog is empty, else how soon to come back.
    fn accept(&mut self) -> Option<Duration> {
        for _ in 0..ACCEPT_BATCH {
            match self.listener.accept() {
                Ok((stream, _)) => self.admit(stream),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                // Out of files or memory: free a slot and try again (shortly, when there was
                // none to free).
                Err(_) => {
                    if !self.evict() {
                        return Some(RETRY);
                    }
                }
            }
        }
        Some(Duration::ZERO)
    }

    fn admit(&mut self, mut stream: TcpStream) {
        if self.conns.len() >= self.cap {
            let _ = self.evict();
        }
        let Some(wire) = self.wire() else {
            return;
        };
        let token = self.next;
        self.next += 1;
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(&mut stream, Token(token), interest)
            .is_err()
        {
            return;
        }
        let conn = Conn {
            stream,
            wire,
            stage: Stage::Head(Vec::new()),
            until: Instant::now() + READ_TIME,
        };
        self.conns.insert(token, conn);
        // Its head may be here already.
        self.turn(token);
    }

    /// How a new connection's bytes go, with the config as it stands now (re-read when its
    /// files changed); None when its TLS session cannot be made.
    fn wire(&mut self) -> Option<Wire> {
        let Some(web) = &mut self.web else {
            return Some(Wire::Plain);
        };
        if web.refresh()
            && let Some(auth) = &mut self.auth
        {
            auth.set_users(&web.config.users);
        }
        match &web.config.tls {
            None => Some(Wire::Plain),
            #[cfg(web_tls)]
            Some(tls) => rustls::ServerConnection::new(tls.config.clone())
                .ok()
                .map(|c| Wire::Tls(Box::new(c))),
            #[cfg(not(web_tls))]
            Some(never) => match *never {},
        }
    }

    /// Answers the connections whose credentials the verifier has judged.
    fn take_verdicts(&mut self) {
        let Some(auth) = &mut self.auth else {
            return;
        };
        for (token, ok) in auth.verdicts() {
            let Some(c) = self.conns.get_mut(&token) else {
                continue;
            };
            if let Stage::Verify(asked) = &c.stage {
                let out = if ok {
                    respond(asked, &self.shared, self.web.as_ref())
                } else {
                    refuse(Refusal::Unauthorized, self.web.as_ref())
                };
                c.stage = Stage::Answer(out, 0);
                c.until = Instant::now() + WRITE_TIME;
                self.turn(token);
            }
        }
    }

    /// Drops the oldest connection still sending its head (else the oldest of all); false
    /// when there was none.
    fn evict(&mut self) -> bool {
        let oldest = self
            .conns
            .iter()
            .find(|(_, c)| matches!(c.stage, Stage::Head(_) | Stage::Verify(_)))
            .or_else(|| self.conns.iter().next())
            .map(|(&t, _)| t);
        if let Some(t) = oldest {
            self.close(t);
        }
        oldest.is_some()
    }

    fn close(&mut self, token: usize) {
        if let Some(mut c) = self.conns.remove(&token) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
    }

    /// Moves a connection on as far as its socket allows.
    fn turn(&mut self, token: usize) {
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        let served = Serving {
            token,
            shared: &self.shared,
            web: self.web.as_ref(),
            auth: self.auth.as_mut(),
        };
        if let Turn::Done = advance(c, served).unwrap_or(Turn::Done) {
            self.close(token);
        }
    }
}

/// What a connection's turn may use: its token, the figures, the config and the verifier.
struct Serving<'a> {
    token: usize,
    shared: &'a Shared,
    web: Option<&'a Watched>,
    auth: Option<&'a mut Auth>,
}

/// Reads, answers, writes and lingers until the socket would block or the connection is done.
fn advance(c: &mut Conn, mut served: Serving) -> io::Result<Turn> {
    loop {
        match &mut c.stage {
            Stage::Head(head) => {
                let Some(request) = read_head(&mut c.wire, &c.stream, head)? else {
                    return Ok(Turn::Waiting);
                };
                let (shared, web) = (served.shared, served.web);
                let out = match verdict(&request, &mut served) {
                    Verdict::Allowed => respond(&request.asked, shared, web),
                    Verdict::Denied => refuse(Refusal::Unauthorized, web),
                    Verdict::Busy => refuse(Refusal::Busy, web),
                    Verdict::Pending => {
                        c.stage = Stage::Verify(request.asked);
                        return Ok(Turn::Waiting);
                    }
                };
                c.stage = Stage::Answer(out, 0);
                c.until = Instant::now() + WRITE_TIME;
            }
            // Its verdict wakes the loop (`Table::take_verdicts`).
            Stage::Verify(_) => return Ok(Turn::Waiting),
            Stage::Answer(out, sent) => {
                while *sent < out.len() {
                    match c.wire.write(&c.stream, &out[*sent..]) {
                        Ok(0) => return Ok(Turn::Done),
                        Ok(n) => *sent += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            return Ok(Turn::Waiting);
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                match c.wire.finish(&c.stream) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Turn::Waiting),
                    other => other?,
                }
                // Tell the client we are done, then read what it may still send (a body we
                // did not want) for a moment: closing with unread data resets the
                // connection, which can throw away the response before the client has read it.
                c.stream.shutdown(std::net::Shutdown::Write)?;
                c.stage = Stage::Linger(0);
                c.until = Instant::now() + LINGER;
            }
            Stage::Linger(drained) => {
                let mut sink = [0u8; 4096];
                loop {
                    match (&c.stream).read(&mut sink) {
                        Ok(0) => return Ok(Turn::Done),
                        Ok(n) if *drained + n >= LINGER_BYTES => return Ok(Turn::Done),
                        Ok(n) => *drained += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            return Ok(Turn::Waiting);
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
}

/// Whether `request` may be answered: always without basic auth, and a head too large or
/// malformed is answered as such (there is nothing to serve it).
fn verdict(request: &Request, served: &mut Serving) -> Verdict {
    match (&request.asked, served.auth.as_deref_mut()) {
        (Asked::Malformed | Asked::TooLarge, _) => Verdict::Allowed,
        (_, Some(auth)) if auth.required() => {
            auth.check(served.token, request.authorization.as_deref())
        }
        _ => Verdict::Allowed,
    }
}

/// Reads what has come of a request head, at most `MAX_HEAD` bytes in all. None while it is
/// incomplete; a closed connection is an error (nothing is answered); a head too large or
/// malformed is answered.
fn read_head(
    wire: &mut Wire,
    stream: &TcpStream,
    head: &mut Vec<u8>,
) -> io::Result<Option<Request>> {
    let mut chunk = [0u8; MAX_HEAD];
    loop {
        let room = MAX_HEAD - head.len();
        let n = match wire.read(stream, &mut chunk[..room]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&chunk[..n]);
        if let Some(request) = parse(head) {
            return Ok(Some(request));
        }
    }
}

/// What a head asks for, or None while it is incomplete and under `MAX_HEAD`.
fn parse(head: &[u8]) -> Option<Request> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let asked = match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => match req.method {
            Some(m @ ("GET" | "HEAD")) => Asked::Get {
                head_only: m == "HEAD",
                path: req.path.unwrap_or("/").to_string(),
            },
            _ => Asked::OtherMethod,
        },
        Ok(httparse::Status::Partial) if head.len() >= MAX_HEAD => Asked::TooLarge,
        Ok(httparse::Status::Partial) => return None,
        Err(httparse::Error::TooManyHeaders) => Asked::TooLarge,
        Err(_) => Asked::Malformed,
    };
    let authorization = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("authorization"))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .map(str::to_string);
    Some(Request {
        asked,
        authorization,
    })
}

/// The whole response to `asked`: status line, headers and (but for HEAD) the body.
fn respond(asked: &Asked, shared: &Shared, web: Option<&Watched>) -> Vec<u8> {
    let (status, body, content_type, head_only) = match asked {
        Asked::Get { head_only, path } => {
            let path = path.split('?').next().unwrap_or("");
            match path {
                "/metrics" => {
                    let mut body = exposition::render(&shared.latest(), crate::platform::now_ns());
                    if let Some(web) = web {
                        body.push_str(&web.render());
                    }
                    ("200 OK", body, CONTENT_TYPE, *head_only)
                }
                "/" => (
                    "200 OK",
                    INDEX.to_string(),
                    "text/plain; charset=utf-8",
                    *head_only,
                ),
                _ => (
                    "404 Not Found",
                    "not found: see /metrics\n".into(),
                    "text/plain",
                    *head_only,
                ),
            }
        }
        Asked::OtherMethod => (
            "405 Method Not Allowed",
            "only GET and HEAD\n".into(),
            "text/plain",
            false,
        ),
        Asked::Malformed => (
            "400 Bad Request",
            "bad request\n".into(),
            "text/plain",
            false,
        ),
        Asked::TooLarge => (
            "431 Request Header Fields Too Large",
            "request head too large\n".into(),
            "text/plain",
            false,
        ),
    };
    let allow = if *asked == Asked::OtherMethod {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    response(status, content_type, allow, &body, head_only, web)
}

/// Why a request is not served.
enum Refusal {
    /// No, malformed or wrong credentials.
    Unauthorized,
    /// The verifier's queue is full.
    Busy,
}

fn refuse(why: Refusal, web: Option<&Watched>) -> Vec<u8> {
    let (status, extra, body) = match why {
        Refusal::Unauthorized => (
            "401 Unauthorized",
            "WWW-Authenticate: Basic realm=\"stream-top\", charset=\"UTF-8\"\r\n",
            "unauthorized\n",
        ),
        Refusal::Busy => (
            "503 Service Unavailable",
            "Retry-After: 1\r\n",
            "too many credentials to check: try again\n",
        ),
    };
    response(status, "text/plain", extra, body, false, web)
}

/// A response: its status line, its headers (`extra`, then the config's), and its body.
fn response(
    status: &str,
    content_type: &str,
    extra: &str,
    body: &str,
    head_only: bool,
    web: Option<&Watched>,
) -> Vec<u8> {
    let configured = web.map_or("", |w| w.config.headers.as_str());
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n{extra}{configured}\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpStream;

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
    fn silent_clients_do_not_hold_up_others() {
        let s = server();
        // More silent connections than the old design had threads and queue (4 + 16): each
        // is only a slot in the table, and a scrape among them gets its answer.
        let silent: Vec<TcpStream> = (0..40)
            .map(|_| TcpStream::connect(s.addr()).unwrap())
            .collect();
        let r = ask(&s, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        drop(silent);
    }

    /// Whether the server has closed `s` (EOF or reset), waiting up to 10 s.
    fn closed(s: &mut TcpStream) -> bool {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        matches!(s.read(&mut [0u8; 1]), Ok(0) | Err(_))
    }

    #[test]
    fn a_full_table_drops_its_oldest_head_for_a_new_connection() {
        let l = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let s = Server::start_holding(l, Shared::default(), 8).unwrap();
        let mut silent: Vec<TcpStream> = Vec::new();
        for _ in 0..8 {
            let mut c = TcpStream::connect(s.addr()).unwrap();
            // A byte each, in order, so each is in the table before the next connects.
            c.write_all(b"G").unwrap();
            silent.push(c);
            std::thread::sleep(Duration::from_millis(20));
        }
        // The table is full: the scrape takes the oldest one's slot and is answered.
        let r = ask(&s, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(closed(&mut silent[0]), "the oldest was not dropped");
        // The newest is still held: it can finish its head and be answered.
        let last = silent.last_mut().unwrap();
        last.write_all(b"ET / HTTP/1.1\r\n\r\n").unwrap();
        let mut out = String::new();
        last.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let _ = last.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    }

    #[test]
    fn stopping_with_connections_open_returns() {
        let s = server();
        let held: Vec<TcpStream> = (0..50)
            .map(|_| TcpStream::connect(s.addr()).unwrap())
            .collect();
        let addr = s.addr();
        drop(s);
        let mut held = held;
        assert!(closed(&mut held[0]), "still held after the server stopped");
        assert!(TcpStream::connect(addr).is_err(), "still listening");
    }

    #[test]
    fn the_table_leaves_half_the_open_files_to_the_rest_of_the_process() {
        assert_eq!(table_cap(Some(64)), 32);
        assert_eq!(table_cap(Some(1024)), MAX_CONNECTIONS);
        assert_eq!(table_cap(Some(1 << 20)), MAX_CONNECTIONS);
        assert_eq!(table_cap(None), MAX_CONNECTIONS);
        assert_eq!(table_cap(Some(1)), 1);
    }

    #[test]
    fn a_taken_port_is_a_usage_error() {
        let first = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let e = bind(first.addr()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("--serve 127.0.0.1:"), "{e}");
    }
}
