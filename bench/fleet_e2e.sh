#!/usr/bin/env bash
# Does `fleet` find the one slow node in a class, on real runs? NODES (10) headless runs on
# this machine, named node-01 … node-10 with `--node`, each repeated REPS times with the nodes
# interleaved in time (node-01 … node-10, then again), so that the machine's own drift falls on
# every node alike. While the HOG node runs, a memory hog (`stress-ng --vm`) runs on the
# worker's CPU. Then `fleet` judges the NODES × REPS snapshots at its defaults; the script
# prints its summary, the other nodes' run-to-run spread (what the fleet's simulation assumes),
# and exits 1 unless exactly the hog's node is flagged. fleet accuses only a node slow on three
# or more occasions (runs 10 minutes or more apart): GAP=600 waits that long between rounds, so
# that each round is an occasion; with the default GAP=0 the rounds are one burst and the
# hog's node can only be a suspect.
#
# Usage: bench/fleet_e2e.sh   (NODES=10 REPS=3 GAP=0 HOG=node-07 SET=dram THREADS=1 ROUNDS=21
#                              CPU=0 PRIO=0 OUT=a temporary directory, removed unless KEEP=1)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
NODES=${NODES:-10}
REPS=${REPS:-3}
HOG=${HOG:-node-07}
SET=${SET:-dram}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-21}
CPU=${CPU:-0}
GAP=${GAP:-0}
# PRIO=1 runs every timed process under `chrt -f 10`, where that is allowed, so that compile
# jobs do not preempt the workers (a hog on the worker's CPU then mostly waits: use CPU=1).
RUN=()
[ "${PRIO:-0}" = 1 ] && chrt -f 10 true 2>/dev/null && RUN=(chrt -f 10)
[[ $NODES =~ ^[0-9]+$ ]] && [ "$NODES" -ge 3 ] && [ "$NODES" -le 99 ] ||
    { echo "fleet_e2e: NODES must be a number from 3 to 99, not '$NODES'" >&2; exit 2; }
[[ $HOG =~ ^node-[0-9][0-9]$ ]] && [ "$((10#${HOG#node-}))" -ge 1 ] && [ "$((10#${HOG#node-}))" -le "$NODES" ] ||
    { echo "fleet_e2e: HOG must be one of node-01 … node-$(printf %02d "$NODES"), not '$HOG'" >&2; exit 2; }
command -v stress-ng >/dev/null || { echo "fleet_e2e: stress-ng is needed (apt-get install stress-ng)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "fleet_e2e: build $BIN first (cargo build --release)" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT/logs"
hog_pid=
cleanup() {
    [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null && wait "$hog_pid" 2>/dev/null
    [ "${KEEP:-0}" = 1 ] || rm -rf "$OUT"
}
trap cleanup EXIT

echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$REPS"); do
    [ "$rep" -gt 1 ] && [ "$GAP" -gt 0 ] && sleep "$GAP"
    for n in $(seq -f %02g 1 "$NODES"); do
        node=node-$n
        if [ "$node" = "$HOG" ]; then
            # The worker of a one-thread run sits on the first CPU of the placement.
            stress-ng --vm 1 --vm-bytes 1G --taskset "$CPU" --quiet &
            hog_pid=$!
            sleep 1
        fi
        "${RUN[@]}" "$BIN" --headless --threads "$THREADS" --sets "$SET" --rounds "$ROUNDS" \
            --node "$node" --export "$OUT/$node" >/dev/null 2>"$OUT/logs/$node.$rep.err"
        if [ -n "$hog_pid" ]; then
            kill "$hog_pid"; wait "$hog_pid" 2>/dev/null || true; hog_pid=
        fi
    done
done

set +e
"$BIN" fleet --format json "$OUT"/node-*/ >"$OUT/fleet.json"
"$BIN" fleet --fail-on-outlier "$OUT"/node-*/ | tee "$OUT/fleet.md"
fleet_code=${PIPESTATUS[0]}
set -e

python3 - "$OUT/fleet.json" "$HOG" <<'EOF'
import json, statistics, sys
fleet = json.load(open(sys.argv[1]))
hog = sys.argv[2]
flagged = sorted({n["node"] for c in fleet["classes"] for cell in c["cells"]
                  for n in cell["nodes"] if n["outlier"]})
suspects = sorted({s["node"] for c in fleet["classes"] for s in c.get("suspects", [])})
print(f"flagged: {flagged or 'none'}; expected: ['{hog}']; suspects: {suspects or 'none'}")
# Each node's figure (the median of its repetitions) against the class median: the spread of
# the nodes that ran alone is the run-to-run noise the simulation must cover.
for c in fleet["classes"]:
    for cell in c["cells"]:
        ratios = {n["node"]: n["ratio"] for n in cell["nodes"]}
        calm = [r for node, r in ratios.items() if node != hog]
        if len(calm) > 2:
            name = "{op} {set} × {threads}".format(**cell["cell"])
            print(f"{name}: calm nodes' ratio to the median {min(calm):.3f}–{max(calm):.3f}, "
                  f"sd {statistics.stdev(calm) * 100:.1f} %; {hog} {ratios.get(hog, float('nan')):.3f}")
sys.exit(0 if flagged == [hog] else 1)
EOF
echo "fleet exit code $fleet_code (1: an outlier found)"
