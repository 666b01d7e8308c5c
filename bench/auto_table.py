#!/usr/bin/env python3
"""stream-top's automatic choice against every fixed loop and page layout, cell by cell.

For each store kind, runs `stream-top --headless` REPS times in each configuration: its
defaults (--kernel auto --huge-pages auto) and every loop of the kernel table this CPU runs
(--kernel 'LOOP') with --huge-pages on and off, the configurations interleaved (rotated by one
each repetition). Prints, per cell, the median over the repetitions of each configuration's
cell median (and, in a second table, the best of them), the loop and layout auto chose (how
many runs chose each), the best fixed configuration, and auto's figure over it.

    bench/auto_table.py                       # normal and non-temporal stores
    REPS=7 STORES=normal bench/auto_table.py

Environment: REPS (default 5), STORES ("normal nt"), THREADS (default "1,<online CPUs>"),
SETS (default "l1,l2,dram"), ROUNDS (--rounds, default 11), NICE (run under nice -n NICE),
STREAM_TOP (default target/release/stream-top, built first), LOOPS (loops to pin, separated by
commas; default every loop this CPU runs for the stores).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("STREAM_TOP", os.path.join(ROOT, "target/release/stream-top"))
REPS = int(os.environ.get("REPS", "5"))
STORES = os.environ.get("STORES", "normal nt").split()
THREADS = os.environ.get("THREADS", f"1,{os.cpu_count()}")
SETS = os.environ.get("SETS", "l1,l2,dram")
ROUNDS = os.environ.get("ROUNDS", "11")
NICE = os.environ.get("NICE")


def stream_top(args):
    cmd = ([ "nice", "-n", NICE] if NICE else []) + [BIN] + args
    return subprocess.run(cmd, capture_output=True, text=True)


def loops_for(stores):
    """Every loop of the table for these stores that this CPU runs, by name."""
    if os.environ.get("LOOPS"):
        return os.environ["LOOPS"].split(",")
    err = stream_top(["--headless", "--kernel", "?", "--stores", stores]).stderr
    names = re.findall(r"'([^']+)'", err)
    runs = []
    for name in names:
        probe = stream_top(["--headless", "--kernel", name, "--stores", stores, "--threads", "1",
                            "--sets", "16KiB/thread", "--rounds", "1", "--round-ms", "1"])
        if probe.returncode == 0:
            runs.append(name)
    return runs


def run_once(stores, config):
    """One run: {(threads, set name): (median GB/s, loop, huge pages)} of its first-run cells."""
    args = ["--headless", "--threads", THREADS, "--sets", SETS, "--rounds", ROUNDS,
            "--format", "json", "--stores", stores]
    if config != "auto":
        loop, pages = config
        args += ["--kernel", loop, "--huge-pages", pages]
    out = stream_top(args)
    if out.returncode != 0:
        print(f"run failed ({config}): {out.stderr.strip()[-300:]}", file=sys.stderr)
        return {}
    doc = json.loads(out.stdout)
    cells = {}
    for c in doc["cells"]:
        if c["rerun"]:
            continue
        ch = c.get("choice") or {}
        cells[(c["threads"], c["set_name"])] = (
            c["figures"]["median_gbs"], ch.get("variant", "?"), ch.get("huge_pages"))
    return cells


def label(config):
    if config == "auto":
        return "auto"
    loop, pages = config
    return f"{loop}, {'huge' if pages == 'on' else 'no huge'}"


def main():
    if "STREAM_TOP" not in os.environ:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    print(f"# stream-top: auto against every fixed loop and layout, {REPS} interleaved repetitions")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"cpu: {cpu}, {os.cpu_count()} CPUs; load average at start: "
          f"{open('/proc/loadavg').read().split()[:3]}")
    print(f"stream-top --headless --threads {THREADS} --sets {SETS} --rounds {ROUNDS} "
          f"--format json --stores S [--kernel LOOP --huge-pages on|off]"
          + (f", under nice -n {NICE}" if NICE else ""))
    for stores in STORES:
        loops = loops_for(stores)
        configs = ["auto"] + [(l, p) for l in loops for p in ("on", "off")]
        medians = defaultdict(lambda: defaultdict(list))  # cell -> config -> [median]
        chosen = defaultdict(Counter)  # cell -> Counter of auto's (loop, huge)
        for rep in range(REPS):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for config in order:
                for cell, (gbs, loop, huge) in run_once(stores, config).items():
                    medians[cell][config].append(gbs)
                    if config == "auto":
                        chosen[cell][f"{loop}, {'huge' if huge else 'no huge'}"] += 1
            print(f"{stores}: repetition {rep + 1} of {REPS} done "
                  f"(load {open('/proc/loadavg').read().split()[0]})", file=sys.stderr)
        for stat, fn in (("median", statistics.median), ("best", max)):
            print(f"\n## {stores} stores, {stat} over the repetitions of each run's median GB/s\n")
            print("| threads | set | " + " | ".join(label(c) for c in configs)
                  + " | auto chose (runs) | best fixed | auto / best fixed |")
            print("|---|---|" + "---:|" * len(configs) + "---|---|---:|")
            for cell in sorted(medians, key=lambda c: (c[0], SETS.split(",").index(c[1])
                                                      if c[1] in SETS.split(",") else 99)):
                med = {c: fn(v) for c, v in medians[cell].items() if v}
                fixed = {c: m for c, m in med.items() if c != "auto"}
                best = max(fixed, key=fixed.get) if fixed else None
                ratio = med.get("auto", float("nan")) / fixed[best] if best else float("nan")
                cols = []
                for c in configs:
                    v = med.get(c)
                    text = "-" if v is None else f"{v:.1f}"
                    cols.append(f"**{text}**" if c == best else text)
                picks = ", ".join(f"{k} {n}×" for k, n in chosen[cell].most_common())
                print(f"| {cell[0]} | {cell[1]} | " + " | ".join(cols)
                      + f" | {picks} | {label(best) if best else '-'} | {ratio:.3f} |")
            sys.stdout.flush()
    print(f"\nload average at end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
