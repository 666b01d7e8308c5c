#!/usr/bin/env bash
# Does the probe disturb what it watches? (issue 25, "The probe disturbs nothing")
#
# (a) The triad with the probe on against off: N pairs of headless runs of one DRAM cell,
#     interleaved (off on, on off, off on, …: each side runs first half the time), every run
#     under `chrt -f 10` so that compile jobs on the machine do not preempt either side. Prints
#     each run's median GB/s, the median of each side and on ÷ off (the target: ≥ 0.99).
# (b) The probe's traffic, counted from its own figures: the lines per second it chased in the
#     "on" runs (its stderr line: bursts × loads ÷ seconds) × 64 B, against the triad's DRAM
#     figure (the "off" runs' median). The target: under 1 %.
#
# Usage: bench/probe-cost.sh        (N=5 SETS=dram THREADS=1 ROUNDS=21 KERNEL=avx2 on x86-64)
# The kernel is pinned so that no trial runs: the loop a trial picks is itself a run-to-run
# difference. Needs root for chrt -f (or CHRT= to run without it, and say so with the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
N=${N:-5}
SETS=${SETS:-dram}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-21}
KERNEL=${KERNEL:-$([ "$(uname -m)" = x86_64 ] && echo avx2 || echo neon)}
CHRT=${CHRT-chrt -f 10}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -x "$BIN" ] || cargo build --release
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }

run() { # run SIDE I: one headless run; its first row's median GB/s into TMP/SIDE.I.gbs
  local side=$1 i=$2 extra=()
  [ "$side" = on ] && extra=(--probe)
  # shellcheck disable=SC2086
  $CHRT "$BIN" --headless --sets "$SETS" --threads "$THREADS" --rounds "$ROUNDS" \
    --kernel "$KERNEL" --format csv "${extra[@]}" >"$TMP/$side.$i.csv" 2>"$TMP/$side.$i.err" ||
    { echo "run failed ($side $i):" >&2; cat "$TMP/$side.$i.err" >&2; exit 1; }
}

for i in $(seq 1 "$N"); do
  if [ $((i % 2)) = 1 ]; then run off "$i"; run on "$i"; else run on "$i"; run off "$i"; fi
  echo "pair $i of $N done" >&2
done

python3 - "$TMP" "$N" <<'PY'
import csv, glob, os, re, statistics, sys
tmp, n = sys.argv[1], int(sys.argv[2])

def median_gbs(path):
    rows = list(csv.DictReader(open(path)))
    # The first row is the cell itself (the headless rerun of the first cell comes last).
    return float(rows[0]["median_gbs"])

def probe_line(path):
    for line in open(path):
        if "chain validated" in line:
            return line.strip()
    raise SystemExit(f"no probe line in {path}")

off = [median_gbs(f"{tmp}/off.{i}.csv") for i in range(1, n + 1)]
on = [median_gbs(f"{tmp}/on.{i}.csv") for i in range(1, n + 1)]
print("pair  off GB/s  on GB/s")
for i, (a, b) in enumerate(zip(off, on), 1):
    print(f"{i:4}  {a:8.2f}  {b:7.2f}")
m_off, m_on = statistics.median(off), statistics.median(on)
print(f"(a) median off {m_off:.2f} GB/s, on {m_on:.2f} GB/s: on / off = {m_on / m_off:.4f} (target >= 0.99)")

lps = []
for i in range(1, n + 1):
    line = probe_line(f"{tmp}/on.{i}.err")
    m = re.search(r"= ([0-9.]+) lines/s", line)
    lps.append(float(m.group(1)))
    if i == 1:
        print("    probe, first run:", line.removeprefix("stream-top: "))
rate = statistics.median(lps) * 64
print(f"(b) probe traffic: median {statistics.median(lps):.0f} lines/s x 64 B = {rate / 1e6:.2f} MB/s; "
      f"x2 if the adjacent-line prefetcher fetched every pair: {2 * rate / 1e6:.2f} MB/s")
print(f"    against the triad's DRAM figure {m_off:.2f} GB/s: {100 * rate / (m_off * 1e9):.3f} % "
      f"({100 * 2 * rate / (m_off * 1e9):.3f} % with the prefetcher) (target < 1 %)")
PY
