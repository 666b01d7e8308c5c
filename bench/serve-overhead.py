#!/usr/bin/env python3
"""Does serving Prometheus disturb what stream-top measures, and how fast are scrapes?

1. Figures with a scrape every second against none: for each cell (SET:THREADS), one
   `stream-top --headless --serve 127.0.0.1:0 --duty 100` on that one cell, and N interleaved
   pairs of blocks of BLOCK_S seconds in it: one block scraped every second, one not (which goes
   first alternates). A block's figure is the cell's median over its last ROUNDS rounds, read by
   one scrape at the block's end (the same in both kinds of block). Within one process and in
   blocks seconds apart, the two sides share the placement, the pages and the neighbours' load,
   which move the figure far more than 1 % from one process to the next on a shared machine.
   Prints each pair's ratio and the ratio of the medians (scraped / none).
2. Scrape latency while a sweep runs: the default grid at --duty DUTY (100: the workers hold
   every CPU), scraped every 100 ms for LAT_S seconds; p50, p99 and the worst, connection set-up
   included.

The machine is shared and noisy: compare side by side, interleaved, and read the ratios.

Usage: bench/serve-overhead.py   (N=20 BLOCK_S=6 ROUNDS=101 CELLS="l2:1 dram:1 l2:2" LAT_S=60 DUTY=100)
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("BIN", os.path.join(HERE, "..", "target", "release", "stream-top"))
N = int(os.environ.get("N", "20"))
BLOCK_S = float(os.environ.get("BLOCK_S", "6"))
ROUNDS = os.environ.get("ROUNDS", "101")
CELLS = os.environ.get("CELLS", "l2:1 dram:1 l2:2").split()
LAT_S = float(os.environ.get("LAT_S", "60"))
DUTY = os.environ.get("DUTY", "100")


def start(args):
    p = subprocess.Popen([BIN, "--headless", "--serve", "127.0.0.1:0"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    addr = None
    for line in p.stderr:
        if line.startswith("stream-top: serving http://"):
            addr = line.split("http://", 1)[1].split("/", 1)[0]
            break
    if addr is None:
        p.kill()
        sys.exit("stream-top did not start serving")
    # Keep reading stderr so the service never blocks on a full pipe.
    threading.Thread(target=lambda: p.stderr.read(), daemon=True).start()
    return p, addr


def scrape(addr):
    t = time.perf_counter()
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as r:
        body = r.read()
    return time.perf_counter() - t, body


def stop(p):
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=60)
    return out


def median_of(exposition):
    for line in exposition.decode().splitlines():
        if line.startswith("stream_top_bandwidth_bytes_per_second{") and 'stat="median"' in line:
            return float(line.rsplit(" ", 1)[1]) / 1e9
    return None


def block(addr, scraped):
    end = time.monotonic() + BLOCK_S
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(1.0, left))
        if scraped and end - time.monotonic() > 0.5:
            scrape(addr)
    return median_of(scrape(addr)[1])


def overhead():
    print(f"1. figures with a scrape every second / none ({N} interleaved pairs of {BLOCK_S:.0f} s "
          f"blocks in one process per cell, median of the last {ROUNDS} rounds, --duty 100)")
    for cell in CELLS:
        set_name, threads = cell.split(":")
        p, addr = start(["--threads", threads, "--sets", set_name, "--duty", "100",
                         "--rounds", ROUNDS])
        # Until the window is full of timed rounds.
        while block(addr, False) is None:
            pass
        block(addr, False)
        with_s, without, ratios = [], [], []
        for i in range(N):
            order = [True, False] if i % 2 == 0 else [False, True]
            got = {s: block(addr, s) for s in order}
            with_s.append(got[True])
            without.append(got[False])
            ratios.append(got[True] / got[False])
        stop(p)
        print(f"   {set_name} x {threads}: pair ratios " + " ".join(f"{r:.3f}" for r in ratios))
        ratio = statistics.median(with_s) / statistics.median(without)
        print(f"   {set_name} x {threads}: ratio of medians {ratio:.4f} (scraped "
              f"{statistics.median(with_s):.2f}, none {statistics.median(without):.2f} GB/s; "
              f"median pair ratio {statistics.median(ratios):.4f})", flush=True)


def latency():
    p, addr = start(["--duty", DUTY])
    times = []
    end = time.monotonic() + LAT_S
    size = 0
    while time.monotonic() < end:
        dt, body = scrape(addr)
        times.append(dt)
        size = len(body)
        time.sleep(0.1)
    stop(p)
    times.sort()
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    print(f"2. scrape latency during a sweep of the default grid at --duty {DUTY}: "
          f"{len(times)} scrapes of {size} bytes: p50 {statistics.median(times) * 1e3:.2f} ms, "
          f"p99 {p99 * 1e3:.2f} ms, worst {times[-1] * 1e3:.2f} ms")


if __name__ == "__main__":
    if not os.access(BIN, os.X_OK):
        subprocess.run(["cargo", "build", "--release"], check=True, cwd=os.path.join(HERE, ".."))
    if N > 0:
        overhead()
    if LAT_S > 0:
        latency()
