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
  idle       connects and sends nothing;
  trickle    sends one byte of a request head that never ends, every TRICKLE_S seconds;
  reconnect  sends half a request head at once, then nothing.

Loopback only; bounded: N <= 1024, SECS <= 120, and every process it starts is stopped at the
end (the hostile one also ends by itself SECS + 30 s after it starts).

Usage: bench/hostile-scrape.py
  env: BIN (target/release/stream-top, else target/debug/stream-top), NS="20 64 512",
       KINDS="idle trickle reconnect", SECS=20, EVERY=0.25, ARGS="--sets l1 --threads 1",
       ADDR=127.0.0.1:PORT (scrape a service already running instead; no SIGTERM then)
"""
import os
import resource
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASE = os.path.join(HERE, "..", "target", "release", "stream-top")
DEBUG = os.path.join(HERE, "..", "target", "debug", "stream-top")
BIN = os.environ.get("BIN", RELEASE if os.path.exists(RELEASE) else DEBUG)
NS = [int(n) for n in os.environ.get("NS", "20 64 512").split()]
KINDS = os.environ.get("KINDS", "idle trickle reconnect").split()
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

def hostile(kind, n, addr, secs):
    """N clients of `kind` against `addr` for `secs` seconds; prints what happened."""
    raise_fd_limit(n + 256)
    target = loopback(addr)
    sel = selectors.DefaultSelector()
    stats = {"connects": 0, "drops": 0}
    # A client: [socket or None, bytes sent, when to send next, when to connect next]
    clients = [[None, 0, 0.0, 0.0] for _ in range(n)]

    def connect(c, now):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(target)
        sel.register(s, selectors.EVENT_READ, c)
        c[0], c[1], c[2] = s, 0, now + (TRICKLE_S if kind == "trickle" else 0.05)
        stats["connects"] += 1

    def drop(c, now):
        sel.unregister(c[0])
        c[0].close()
        c[0], c[3] = None, now + RECONNECT_S
        stats["drops"] += 1

    try:
        attack(kind, secs, clients, sel, connect, drop)
    except KeyboardInterrupt:
        pass
    print(f"hostile {kind} x{n}: {stats['connects']} connections, "
          f"{stats['drops']} dropped by the server", flush=True)


def attack(kind, secs, clients, sel, connect, drop):
    end = time.monotonic() + secs
    announced = False
    while time.monotonic() < end:
        now = time.monotonic()
        for c in clients:
            if c[0] is None and now >= c[3]:
                connect(c, now)
        if not announced:
            print("ready", flush=True)
            announced = True
        for key, _ in sel.select(timeout=0.02):
            c = key.data
            try:
                data = c[0].recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:  # closed or reset by the server: come back
                drop(c, time.monotonic())
        now = time.monotonic()
        for c in clients:
            if c[0] is None or now < c[2]:
                continue
            chunk = b""
            if kind == "trickle":
                chunk, c[2] = ENDLESS[c[1]:c[1] + 1], now + TRICKLE_S
            elif kind == "reconnect" and c[1] == 0:
                chunk, c[2] = HALF_HEAD, float("inf")
            else:
                c[2] = float("inf")
            if chunk:
                try:
                    c[1] += c[0].send(chunk)
                except BlockingIOError:
                    c[2] = now + 0.05  # still connecting
                except OSError:
                    drop(c, now)


# ---- the scraper and the service -------------------------------------------------------------

def scrape(addr):
    """One normal scrape: (seconds, ok)."""
    t0 = time.monotonic()
    deadline = t0 + TIMEOUT
    try:
        s = socket.create_connection(loopback(addr), timeout=TIMEOUT)
        with s:
            s.sendall(f"GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAccept: text/plain\r\n"
                      "User-Agent: Prometheus/2\r\n\r\n".encode())
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
    p = subprocess.Popen([BIN, "--headless", "--serve", "127.0.0.1:0"] + ARGS,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    addr = None
    for line in p.stderr:
        if line.startswith("stream-top: serving http://"):
            addr = line.split("http://", 1)[1].split("/", 1)[0]
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
                    if code != 0:
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
    print(f"{kind:>9} {n:4d}  {len(lat):7d} {failed:6d}  {ms(statistics.median(lat))} "
          f"{ms(pct(lat, 0.99))} {ms(max(lat))}  {term_s:>9}   # {said}", flush=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--hostile":
        _, _, kind, n, addr, secs = sys.argv
        hostile(kind, min(int(n), 1024), addr, min(float(secs), 150.0))
        return
    global SECS
    SECS = min(SECS, 120.0)
    if any(k not in ("idle", "trickle", "reconnect") for k in KINDS):
        sys.exit("KINDS: idle, trickle, reconnect")
    if any(not 0 < n <= 1024 for n in NS):
        sys.exit("NS: 1 to 1024 clients")
    raise_fd_limit(max(NS) + 256)
    print(f"# {BIN} {' '.join(ARGS)}; a scrape every {EVERY} s for {SECS:g} s, 10 s timeout")
    print("     kind    N  scrapes failed    p50 ms   p99 ms   max ms  SIGTERM s")
    for kind in KINDS:
        for n in NS:
            run(kind, n)


if __name__ == "__main__":
    main()
