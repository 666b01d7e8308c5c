#!/usr/bin/env python3
"""How much later does the first figure come with the kernel and layout chosen by trial?

N interleaved pairs of `stream-top --headless --sets SETS --threads THREADS`: one with its
defaults (--kernel auto --huge-pages auto, which time each working set's candidates first) and
one pinned to what the default was before the trial existed: the widest ISA this CPU runs, on
huge pages (PINNED). Which goes first alternates. For each run, the time from starting the
process to the first figure on stderr (the first "× T: … GB/s" progress line); the run is then
stopped. Prints each pair, the medians and worst of each side, and the median of the pairs'
differences (auto − pinned).

The machine is shared and noisy: compare side by side, interleaved, and read the differences.

Usage: bench/first-figure.py   (N=7 SETS=l1,l2,dram THREADS=1,2 BIN=target/release/stream-top
                               PINNED="--kernel avx2 --huge-pages on")
"""
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("BIN", os.path.join(HERE, "..", "target", "release", "stream-top"))
N = int(os.environ.get("N", "7"))
SETS = os.environ.get("SETS", "l1,l2,dram")
THREADS = os.environ.get("THREADS", "1,2")
FIGURE = re.compile(r"× \d+: [0-9.]+ GB/s")


def widest_isa():
    """The widest kernel ISA this CPU runs: the default before the trial."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        pass
    if " avx512f" in flags:
        return "avx512"
    if " avx2" in flags:
        return "avx2"
    if " sse2" in flags:
        return "sse2"
    return "neon"


PINNED = os.environ.get("PINNED", f"--kernel {widest_isa()} --huge-pages on").split()


def first_figure(extra):
    """Seconds from the start to the first figure on stderr; None if none came."""
    cmd = [BIN, "--headless", "--sets", SETS, "--threads", THREADS] + extra
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = None
    for line in p.stderr:
        if FIGURE.search(line):
            took = time.monotonic() - t0
            break
    p.terminate()
    p.wait()
    return took


def main():
    if not os.path.exists(BIN):
        sys.exit(f"first-figure: no binary at {BIN}: run `cargo build --release` first")
    print(f"# time to the first figure: defaults against {' '.join(PINNED)}; "
          f"--sets {SETS} --threads {THREADS}; {N} interleaved pairs")
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}")
    auto, pinned = [], []
    for i in range(N):
        order = [("auto", []), ("pinned", PINNED)]
        if i % 2:
            order.reverse()
        got = {name: first_figure(extra) for name, extra in order}
        if got["auto"] is None or got["pinned"] is None:
            print(f"pair {i}: a run gave no figure ({got})", file=sys.stderr)
            continue
        auto.append(got["auto"])
        pinned.append(got["pinned"])
        print(f"pair {i}: auto {got['auto']:.2f} s, pinned {got['pinned']:.2f} s, "
              f"later by {got['auto'] - got['pinned']:+.2f} s")
    if not auto:
        sys.exit("first-figure: no pair gave figures")
    diffs = [a - p for a, p in zip(auto, pinned)]
    print(f"auto: median {statistics.median(auto):.2f} s, worst {max(auto):.2f} s")
    print(f"pinned: median {statistics.median(pinned):.2f} s, worst {max(pinned):.2f} s")
    print(f"auto − pinned: median {statistics.median(diffs):+.2f} s, worst {max(diffs):+.2f} s")
    print(f"load average at end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
