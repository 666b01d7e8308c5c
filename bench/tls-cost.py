#!/usr/bin/env python3
"""What TLS and basic auth cost a scrape: plain HTTP, TLS, and TLS with basic auth, side by side.

Four `stream-top --headless --serve 127.0.0.1:0` services with the same light settings (ARGS),
running at once, one per side:
  plain       no --web-config;
  tls         --web-config with a certificate (tlsfixture.py: a throwaway CA, ECDSA P-256);
  tls+auth    the same and basic auth, one user: the server verifies its bcrypt hash (cost
              10) once and answers later requests from its cache of verified credentials;
  tls+bcrypt  the same with USERS users scraped in turn, more than that cache holds, so every
              request waits for a bcrypt verification: what a first request costs.
Then N rounds; in each, one scrape of each side, in an order that turns round by round, EVERY
seconds apart. A scrape is what Prometheus does on a new connection: connect, a full TLS
handshake checking the certificate and the name 127.0.0.1, `GET /metrics` (with the password),
the whole answer. The server answers one request per connection (`Connection: close`), so
there is no keep-alive side. Prints per side p50, p99 and the worst, their ratios to plain, the
first tls+auth request (its one bcrypt verification), and the CPU the service's `serve` and
`serve-auth` threads spent per scrape (from /proc, Linux).

The machine is shared and noisy: the sides are interleaved so that they share its load; read
the ratios, and run it more than once.

Usage: bench/tls-cost.py   (env: BIN, N=300, EVERY=0.02, USERS=24, ARGS="--sets l1 --threads 1")
"""
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import tlsfixture

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("BIN", os.path.join(HERE, "..", "target", "release", "stream-top"))
N = int(os.environ.get("N", "300"))
EVERY = float(os.environ.get("EVERY", "0.02"))
USERS = int(os.environ.get("USERS", "24"))
ARGS = os.environ.get("ARGS", "--sets l1 --threads 1").split()
TIMEOUT = 10.0
# How many verified credentials the server keeps (src/show/serve/auth.rs): USERS must exceed
# it for every tls+bcrypt request to be verified again.
CACHED = 16


class Side:
    """A service, and how a scrape of it connects and proves who it is."""

    def __init__(self, name, web_config=None, context=None, users=()):
        self.name = name
        self.context = context
        self.users = list(users)
        self.turn = 0
        self.times = []
        self.version = None
        args = ["--web-config", web_config] if web_config else []
        self.proc = subprocess.Popen([BIN, "--headless", "--serve", "127.0.0.1:0"] + args + ARGS,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addr = None
        for line in self.proc.stderr:
            if line.startswith("stream-top: serving http"):
                self.addr = line.split("://", 1)[1].split("/", 1)[0]
                break
        if self.addr is None:
            self.proc.kill()
            sys.exit(f"{name}: stream-top did not start serving")
        threading.Thread(target=lambda: self.proc.stderr.read(), daemon=True).start()

    def scrape(self):
        """One scrape on a new connection: its seconds; exits on anything but a 200."""
        auth = ""
        if self.users:
            user, password = self.users[self.turn % len(self.users)]
            self.turn += 1
            auth = tlsfixture.authorization(user, password)
        host, port = self.addr.rsplit(":", 1)
        t0 = time.perf_counter()
        s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        if self.context:
            s = self.context.wrap_socket(s, server_hostname="127.0.0.1")
        with s:
            s.sendall(f"GET /metrics HTTP/1.1\r\nHost: {self.addr}\r\n{auth}\r\n".encode())
            raw = b""
            while chunk := s.recv(65536):
                raw += chunk
            if self.context:
                self.version = s.version()
        dt = time.perf_counter() - t0
        if not raw.startswith(b"HTTP/1.1 200"):
            sys.exit(f"{self.name}: {raw[:200]!r}")
        return dt

    def server_cpu(self):
        """CPU seconds of the service's serving threads so far (None off Linux)."""
        total, tick = 0, os.sysconf("SC_CLK_TCK")
        try:
            tasks = os.listdir(f"/proc/{self.proc.pid}/task")
            for tid in tasks:
                with open(f"/proc/{self.proc.pid}/task/{tid}/stat") as f:
                    stat = f.read()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                if name in ("serve", "serve-auth"):
                    fields = stat[stat.rindex(")") + 2:].split()
                    total += int(fields[11]) + int(fields[12])  # utime, stime
        except OSError:
            return None
        return total / tick

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def sides(d):
    """The four services: plain, tls, tls+auth (one user), tls+bcrypt (USERS users)."""
    tls_dir, auth_dir, many_dir = (os.path.join(d, n) for n in ("tls", "auth", "many"))
    for p in (tls_dir, auth_dir, many_dir):
        os.mkdir(p)
    one = [("prometheus", secrets.token_urlsafe(12))]
    many = [(f"scraper{i}", secrets.token_urlsafe(12)) for i in range(USERS)]
    return [
        Side("plain"),
        Side("tls", tlsfixture.make(tls_dir), tlsfixture.client_context(tls_dir)),
        Side("tls+auth", tlsfixture.make(auth_dir, dict(one)),
             tlsfixture.client_context(auth_dir), one),
        Side("tls+bcrypt", tlsfixture.make(many_dir, dict(many)),
             tlsfixture.client_context(many_dir), many),
    ]


def report(all_sides, first, cpu):
    ms = lambda s: f"{s * 1e3:8.2f}"
    plain = all_sides[0].times
    print(f"{'side':>10}  scrapes   p50 ms   p99 ms   max ms  p50/plain p99/plain  "
          "serve CPU ms/scrape")
    for side in all_sides:
        t = side.times
        per = "–" if cpu[side.name] is None else f"{cpu[side.name] / len(t) * 1e3:.2f}"
        print(f"{side.name:>10}  {len(t):7d} {ms(statistics.median(t))} {ms(pct(t, 0.99))} "
              f"{ms(max(t))}  {statistics.median(t) / statistics.median(plain):9.2f} "
              f"{pct(t, 0.99) / pct(plain, 0.99):9.2f}  {per:>8}")
    print(f"# the first tls+auth request (its one bcrypt verification): {first * 1e3:.1f} ms; "
          f"TLS version {all_sides[1].version}")


def main():
    if USERS <= CACHED:
        sys.exit(f"USERS: more than {CACHED}, the credentials the server keeps verified")
    print(f"# {BIN} {' '.join(ARGS)}; {N} rounds, one scrape of each side per round, "
          f"{EVERY} s apart, a new connection each")
    with tempfile.TemporaryDirectory(prefix="tls-cost-") as d:
        all_sides = sides(d)
        try:
            # Every side answers before timing starts; tls+auth's first answer is its first
            # verification, timed on its own.
            for side in all_sides:
                if side.name != "tls+auth":
                    side.scrape()
            first = all_sides[2].scrape()
            cpu0 = {s.name: s.server_cpu() for s in all_sides}
            for i in range(N):
                for k in range(len(all_sides)):
                    side = all_sides[(i + k) % len(all_sides)]
                    side.times.append(side.scrape())
                    time.sleep(EVERY)
            cpu = {s.name: None if cpu0[s.name] is None else s.server_cpu() - cpu0[s.name]
                   for s in all_sides}
        finally:
            for side in all_sides:
                side.stop()
    report(all_sides, first, cpu)


if __name__ == "__main__":
    main()
