#!/usr/bin/env python3
"""What do the per-worker counters cost the figure? Counters on against off.

N interleaved pairs of `stream-top --headless --format json` runs over the same cells, one with
`--counters on` and one with `--counters off` (which goes first alternates). Each run gives each
cell's median GB/s; for each cell the script prints the ratio of the medians over the runs
(on / off) and the per-pair ratios' median. The counters are read outside the timed span, so the
expected ratio is 1 within the noise; the target is ≥ 0.995.

The machine is shared and noisy: compare side by side, interleaved, and read the ratios.

Usage: bench/counters-overhead.py   (N=10 SETS=l2,dram THREADS=1,2 ROUNDS=21 BIN=target/release/stream-top)
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("BIN", os.path.join(HERE, "..", "target", "release", "stream-top"))
N = int(os.environ.get("N", "10"))
SETS = os.environ.get("SETS", "l2,dram")
THREADS = os.environ.get("THREADS", "1,2")
ROUNDS = os.environ.get("ROUNDS", "21")


def run(counters):
    out = subprocess.run(
        [BIN, "--headless", "--format", "json", "--sets", SETS, "--threads", THREADS,
         "--rounds", ROUNDS, "--counters", counters],
        check=True, capture_output=True, text=True,
    ).stdout
    snap = json.loads(out)
    cells = {
        f"{c['set_name']} x{c['threads']}{' again' if c['rerun'] else ''}": c["figures"]["median_gbs"]
        for c in snap["cells"]
    }
    return snap["info"]["topology"]["model"], snap["info"].get("counters"), cells


def main():
    on, off = [], []
    model, info = None, None
    for i in range(N):
        for kind in (("on", "off") if i % 2 == 0 else ("off", "on")):
            m, c, cells = run(kind)
            (on if kind == "on" else off).append(cells)
            if kind == "on":
                model, info = m, c
        print(f"pair {i + 1}/{N} done", file=sys.stderr)
    print(f"CPU: {model.strip()}")
    if info:
        print(f"counted: {', '.join(info['counted'])}")
        for m in info["missing"]:
            print(f"not counted: {', '.join(m['counters'])} — {m['reason']}")
    print(f"{N} interleaved pairs, --sets {SETS} --threads {THREADS} --rounds {ROUNDS}")
    print(f"{'cell':<16} {'median on':>10} {'median off':>10} {'on/off':>8} {'pairs: median':>14}")
    for cell in on[0]:
        a = [r[cell] for r in on if cell in r]
        b = [r[cell] for r in off if cell in r]
        pairs = [x / y for x, y in zip(a, b) if y > 0]
        print(f"{cell:<16} {statistics.median(a):>10.2f} {statistics.median(b):>10.2f} "
              f"{statistics.median(a) / statistics.median(b):>8.3f} {statistics.median(pairs):>14.3f}")


if __name__ == "__main__":
    main()
