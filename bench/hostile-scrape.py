#!/usr/bin/env python3
"""Does a normal scrape get its answer while hostile clients hold connections to the target?

For each KIND in KINDS and each N in NS: one `stream-top --headless --serve 127.0.0.1:0` service
(light settings: ARGS), N hostile clients of that kind against it (in a second process, so they
do not share the scraper's interpreter), and meanwhile a normal scrape (`GET /metrics`, the
whole answer within 10 s, Prometheus's default scrape timeout) every EVERY seconds for SECS
seconds, one after the other. Prints per run: scrapes, failed ones (no answer, not 200, or no
exposition within 10 s), p50, p99 and the worst latency (connection set-up included; a failed
scrape counts as 10 s, as lost to Prometheus as one that timed out), and how
long the service took to end after SIGTERM with the hostile clients still at it.

The hostile kinds (each client holds one connection, and when the server drops it, connects
again after RECONNECT_S, so N connections press on the server for the whole run):
  idle               connects and sends nothing;
  trickle            sends one byte of a request head that never ends, every TRICKLE_S seconds;
  reconnect          sends half a request head at once, then nothing;
and with TLS=1 also
  handshake-stall    sends the first half of a TLS ClientHello, then nothing;
  handshake-trickle  sends a ClientHello one byte every TRICKLE_S seconds;
  tls-idle           completes the TLS handshake, then sends no request.
Under TLS the plain kinds' bytes are not TLS: the server refuses them at once and they come
back after RECONNECT_S, a flood of connections.

TLS=1: the service gets a `--web-config` with a throwaway CA and certificate (tlsfixture.py,
`openssl`) and basic auth (bcrypt, cost 10), and the scrape is `https` with the password,
checking the certificate against that CA and the name 127.0.0.1: what Prometheus with
`scheme: https`, `tls_config.ca_file` and `basic_auth` does (a new connection, so a full
handshake, each scrape: the server answers one request per connection).

Loopback only; bounded: N <= 1024, SECS <= 120, and every process it starts is stopped at the
end (the hostile one also ends by itself SECS + 30 s after it starts).

Usage: bench/hostile-scrape.py
  env: BIN (target/release/stream-top, else target/debug/stream-top), NS="20 64 512",
       KINDS="idle trickle reconnect" (with TLS=1: also the three TLS kinds), SECS=20,
       EVERY=0.25, ARGS="--sets l1 --threads 1", TLS=1 (see above),
       ADDR=127.0.0.1:PORT (scrape a plain service already running instead; no SIGTERM then)
"""
import os
import resource
import secrets
import selectors
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import tlsfixture

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASE = os.path.join(HERE, "..", "target", "release", "stream-top")
DEBUG = os.path.join(HERE, "..", "target", "debug", "stream-top")
BIN = os.environ.get("BIN", RELEASE if os.path.exists(RELEASE) else DEBUG)
NS = [int(n) for n in os.environ.get("NS", "20 64 512").split()]
TLS = os.environ.get("TLS", "") == "1"
PLAIN_KINDS = ["idle", "trickle", "reconnect"]
TLS_KINDS = ["handshake-stall", "handshake-trickle", "tls-idle"]
KINDS = os.environ.get("KINDS", " ".join(PLAIN_KINDS + (TLS_KINDS if TLS else []))).split()
SECS = float(os.environ.get("SECS", "20"))
EVERY = float(os.environ.get("EVERY", "0.25"))
ARGS = os.environ.get("ARGS", "--sets l1 --threads 1").split()
ADDR = os.environ.get("ADDR")
TIMEOUT = 10.0
TRICKLE_S = 1.0
RECONNECT_S = 0.05
HALF_HEAD = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n"
ENDLESS = b"GET /metrics HTTP/1.1\r\nX-Trickle: " + b"a" * 100_000


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def loopback(addr):
    host, port = addr.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost"):
        sys.exit(f"{addr}: loopback (127.0.0.1) only")
    return ("127.0.0.1", int(port))


# ---- the hostile clients (a process of their own) -------------------------------------------

def client_hello():
    """The first flight of a TLS client: a ClientHello, as Python's ssl sends it."""
    obj, _, outgoing = tls_object()
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def tls_object():
    """A client TLS session on memory buffers, and the buffers: what comes in, what goes out
    (a hostile client checks nothing)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    return ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1"), incoming, outgoing


class Client:
    """One hostile connection: its socket, what it sends and when, and for `tls-idle` its
    TLS session."""

    def __init__(self):
        self.sock = None
        self.payload = b""
        self.sent = 0
        self.send_at = 0.0
        self.connect_at = 0.0
        self.tls = None
        self.incoming = None
        self.outgoing = None
        self.done = False


def payload(kind, hello):
    """What a client of `kind` sends on a new connection, and how many bytes at a time
    (None: all at once)."""
    return {
        "idle": (b"", None),
        "trickle": (ENDLESS, 1),
        "reconnect": (HALF_HEAD, None),
        "handshake-stall": (hello[:len(hello) // 2], None),
        "handshake-trickle": (hello, 1),
        "tls-idle": (hello, None),
    }[kind]


def hostile(kind, n, addr, secs):
    """N clients of `kind` against `addr` for `secs` seconds; prints what happened."""
    raise_fd_limit(n + 256)
    target = loopback(addr)
    sel = selectors.DefaultSelector()
    stats = {"connects": 0, "drops": 0, "handshakes": 0}
    clients = [Client() for _ in range(n)]
    hello = client_hello()
    step = payload(kind, hello)[1]

    def connect(c, now):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(target)
        sel.register(s, selectors.EVENT_READ, c)
        c.sock, c.sent, c.done = s, 0, False
        c.send_at = now + (TRICKLE_S if step == 1 else 0.05)
        c.payload = payload(kind, hello)[0]
        if kind == "tls-idle":
            c.tls, c.incoming, c.outgoing = tls_object()
            try:
                c.tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            c.payload = c.outgoing.read()
        stats["connects"] += 1

    def drop(c, now):
        sel.unregister(c.sock)
        c.sock.close()
        c.sock, c.connect_at = None, now + RECONNECT_S
        stats["drops"] += 1

    try:
        attack(secs, clients, step, sel, connect, drop, stats)
    except KeyboardInterrupt:
        pass
    done = f", {stats['handshakes']} handshakes completed" if kind == "tls-idle" else ""
    print(f"hostile {kind} x{n}: {stats['connects']} connections, "
          f"{stats['drops']} dropped by the server{done}", flush=True)


def attack(secs, clients, step, sel, connect, drop, stats):
    end = time.monotonic() + secs
    announced = False
    while time.monotonic() < end:
        now = time.monotonic()
        for c in clients:
            if c.sock is None and now >= c.connect_at:
                connect(c, now)
        if not announced:
            print("ready", flush=True)
            announced = True
        for key, _ in sel.select(timeout=0.02):
            c = key.data
            try:
                data = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:  # closed or reset by the server: come back
                drop(c, time.monotonic())
            elif c.tls is not None:
                handshake(c, data, stats)
        now = time.monotonic()
        for c in clients:
            if c.sock is not None and now >= c.send_at:
                send(c, step, now, drop)


def handshake(c, data, stats):
    """Feeds the server's bytes to a `tls-idle` client's session; its replies go out next.
    Once the handshake is done, what comes (session tickets) is left unread."""
    if c.done:
        return
    c.incoming.write(data)
    try:
        c.tls.do_handshake()
        c.done = True
        stats["handshakes"] += 1
    except ssl.SSLWantReadError:
        pass
    except ssl.SSLError:
        return
    more = c.outgoing.read()
    if more:
        c.payload += more
        c.send_at = 0.0


def send(c, step, now, drop):
    """Sends the next bytes of a client's payload: a byte at a time, or all that is left."""
    left = c.payload[c.sent:]
    if not left:
        c.send_at = float("inf")
        return
    chunk = left[:step] if step else left
    try:
        c.sent += c.sock.send(chunk)
        if step:
            c.send_at = now + TRICKLE_S
        elif c.sent == len(c.payload):
            c.send_at = float("inf")
    except BlockingIOError:
        c.send_at = now + 0.05  # still connecting
    except OSError:
        drop(c, now)


# ---- the scraper and the service -------------------------------------------------------------

class Secure:
    """TLS=1: the throwaway web config, and how the scraper connects and proves who it is."""

    def __init__(self, d):
        password = secrets.token_urlsafe(12)
        self.config = tlsfixture.make(d, {"prometheus": password})
        self.context = tlsfixture.client_context(d)
        self.authorization = tlsfixture.authorization("prometheus", password)


SECURE = None


def scrape(addr):
    """One normal scrape: (seconds, ok)."""
    t0 = time.monotonic()
    deadline = t0 + TIMEOUT
    try:
        s = socket.create_connection(loopback(addr), timeout=TIMEOUT)
        if SECURE:
            s = SECURE.context.wrap_socket(s, server_hostname="127.0.0.1")
        auth = SECURE.authorization if SECURE else ""
        with s:
            s.sendall(f"GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAccept: text/plain\r\n"
                      f"User-Agent: Prometheus/2\r\n{auth}\r\n".encode())
            raw = b""
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return time.monotonic() - t0, False
                s.settimeout(left)
                chunk = s.recv(65536)
                if not chunk:
                    break
                raw += chunk
    except OSError:
        return time.monotonic() - t0, False
    ok = raw.startswith(b"HTTP/1.1 200") and b"# TYPE stream_top_info gauge" in raw
    return time.monotonic() - t0, ok


def start_service():
    web = ["--web-config", SECURE.config] if SECURE else []
    p = subprocess.Popen([BIN, "--headless", "--serve", "127.0.0.1:0"] + web + ARGS,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    addr = None
    for line in p.stderr:
        if line.startswith("stream-top: serving http"):
            addr = line.split("://", 1)[1].split("/", 1)[0]
            break
    if addr is None:
        p.kill()
        sys.exit("stream-top did not start serving")
    threading.Thread(target=lambda: p.stderr.read(), daemon=True).start()
    return p, addr


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def run(kind, n):
    service, addr = (None, ADDR) if ADDR else start_service()
    try:
        # The service answers before the attack starts.
        for _ in range(50):
            if scrape(addr)[1]:
                break
            time.sleep(0.1)
        attack = subprocess.Popen([sys.executable, __file__, "--hostile", kind, str(n), addr,
                                   str(SECS + 30)], stdout=subprocess.PIPE, text=True)
        try:
            attack.stdout.readline()  # "ready": every client has tried to connect
            time.sleep(0.5)
            lat, failed = [], 0
            end = time.monotonic() + SECS
            while time.monotonic() < end:
                t, ok = scrape(addr)
                lat.append(t if ok else TIMEOUT)
                failed += not ok
                time.sleep(max(0.0, EVERY - t))
            term = None
            if service:
                t0 = time.monotonic()
                service.send_signal(signal.SIGTERM)
                try:
                    code = service.wait(timeout=60)
                    term = time.monotonic() - t0
                    # 128 + SIGTERM's number is how the service says it stopped on it.
                    if code != 128 + signal.SIGTERM:
                        print(f"# the service exited {code} after SIGTERM", flush=True)
                except subprocess.TimeoutExpired:
                    term = False
        finally:
            attack.send_signal(signal.SIGINT)
            try:
                said = attack.communicate(timeout=10)[0].strip()
            except subprocess.TimeoutExpired:
                attack.kill()
                said = attack.communicate()[0].strip()
    finally:
        if service and service.poll() is None:
            service.kill()
            service.wait()
    ms = lambda s: f"{s * 1000:8.1f}"
    term_s = "-" if term is None else ("> 60" if term is False else f"{term:.2f}")
    print(f"{kind:>17} {n:4d}  {len(lat):7d} {failed:6d}  {ms(statistics.median(lat))} "
          f"{ms(pct(lat, 0.99))} {ms(max(lat))}  {term_s:>9}   # {said}", flush=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--hostile":
        _, _, kind, n, addr, secs = sys.argv
        hostile(kind, min(int(n), 1024), addr, min(float(secs), 150.0))
        return
    global SECS, SECURE
    SECS = min(SECS, 120.0)
    kinds = PLAIN_KINDS + (TLS_KINDS if TLS else [])
    if any(k not in kinds for k in KINDS):
        sys.exit(f"KINDS: {', '.join(kinds)}" + ("" if TLS else " (TLS=1 for the TLS kinds)"))
    if TLS and ADDR:
        sys.exit("TLS=1 starts a service of its own: leave ADDR out")
    if any(not 0 < n <= 1024 for n in NS):
        sys.exit("NS: 1 to 1024 clients")
    raise_fd_limit(max(NS) + 256)
    with tempfile.TemporaryDirectory(prefix="hostile-scrape-") as d:
        if TLS:
            SECURE = Secure(d)
        how = "https + basic auth, a new TLS connection each" if TLS else "http"
        print(f"# {BIN} {' '.join(ARGS)}; a scrape ({how}) every {EVERY} s for {SECS:g} s, "
              "10 s timeout")
        print("             kind    N  scrapes failed    p50 ms   p99 ms   max ms  SIGTERM s")
        for kind in KINDS:
            for n in NS:
                run(kind, n)


if __name__ == "__main__":
    main()
