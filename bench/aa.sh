#!/usr/bin/env bash
# Does `compare` cry wolf? (issue 22's A/A and A/B benchmarks)
#
# A/A: M pairs of identical back-to-back invocations, compared pair by pair; every "faster" or
# "slower" verdict is a false positive. Run at --repeat 1 (single runs, judged against the
# run-to-run spread that `stream-top calibrate` measured first, in a private data directory)
# and at --repeat 5 (Welch's test on the repetitions). Prints the false-positive rate per cell
# and overall, with its 95 % Clopper–Pearson interval.
#
# A/B (AB=1): the same, with a real change: --huge-pages off against on at l2, and --threads 1
# against 2 at dram; prints how often the verdict finds the difference (power).
#
# Usage: bench/aa.sh           (M=20 SETS=l2,dram THREADS=1,2 ROUNDS=21 AB=1 CAL_REPEAT=5)
# The kernel is pinned (KERNEL=avx2 by default on x86-64) so that no trial runs: a trial per
# repetition would only add time, and the loop it picks is itself a run-to-run difference.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
M=${M:-20}
SETS=${SETS:-l2,dram}
THREADS=${THREADS:-1,2}
ROUNDS=${ROUNDS:-21}
AB=${AB:-1}
CAL_REPEAT=${CAL_REPEAT:-5}
KERNEL=${KERNEL:-$([ "$(uname -m)" = x86_64 ] && echo avx2 || echo neon)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export STREAM_TOP_DATA_DIR=$TMP/data
[ -x "$BIN" ] || cargo build --release
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }

run() { # run OUT.json ARGS...: one headless run, its snapshot exported to OUT.json
  local out=$1 dir
  shift
  dir=$(mktemp -d "$TMP/run.XXXX")
  "$BIN" --headless --kernel "$KERNEL" --rounds "$ROUNDS" --export "$dir" "$@" >/dev/null 2>&1 ||
    { echo "run failed: $*" >&2; return 1; }
  mv "$dir"/*.json "$out"
  rm -rf "$dir"
}

# verdicts FILE_A FILE_B: one line per compared cell, "label×threads<TAB>verdict word".
verdicts() {
  "$BIN" compare "$1" "$2" | awk -F'|' '
    /^\| per array/ {t=1; next} t && /^\|---/ {next}
    t && /^\|/ {v=$13; gsub(/^ +| +$/, "", v); split(v, w, /[: ]/); l=$2; gsub(/^ +| +$/, "", l);
                n=$3; gsub(/ /, "", n); print l "×" n "\t" w[1]; next}
    t && !/^\|/ {t=0}'
}

# tally NAME EXPECT FILE: rates of verdicts that say EXPECT (a word, or "any" for faster|slower).
tally() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys, collections, math
name, expect, path = sys.argv[1:]
from statistics import NormalDist
def beta_ppf(q, a, b):
    # Clopper-Pearson bounds by bisection on the regularized incomplete beta (via math.lgamma).
    def ibeta(x):
        if x <= 0: return 0.0
        if x >= 1: return 1.0
        # continued fraction (Numerical Recipes)
        lbt = math.lgamma(a+b)-math.lgamma(a)-math.lgamma(b)+a*math.log(x)+b*math.log(1-x)
        def cf(a, b, x):
            qab, qap, qam = a+b, a+1, a-1
            c, d = 1.0, 1-qab*x/qap
            d = 1/(d if abs(d) > 1e-300 else 1e-300); h = d
            for m in range(1, 300):
                m2 = 2*m
                for aa in (m*(b-m)*x/((qam+m2)*(a+m2)), -(a+m)*(qab+m)*x/((a+m2)*(qap+m2))):
                    d = 1+aa*d; d = 1/(d if abs(d) > 1e-300 else 1e-300)
                    c = 1+aa/c; c = c if abs(c) > 1e-300 else 1e-300
                    h *= d*c
            return h
        if x < (a+1)/(a+b+2): return math.exp(lbt)*cf(a, b, x)/a
        return 1-math.exp(lbt)*cf(b, a, 1-x)/b
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo+hi)/2
        if ibeta(mid) < q: lo = mid
        else: hi = mid
    return (lo+hi)/2
def interval(k, n):
    low = 0.0 if k == 0 else beta_ppf(0.025, k, n-k+1)
    high = 1.0 if k == n else beta_ppf(0.975, k+1, n-k)
    return low, high
per = collections.defaultdict(lambda: [0, 0])
for line in open(path):
    cell, word = line.rstrip('\n').split('\t')
    hit = word in ('faster', 'slower') if expect == 'any' else word == expect
    per[cell][0] += hit; per[cell][1] += 1
k = sum(v[0] for v in per.values()); n = sum(v[1] for v in per.values())
for cell, (kk, nn) in sorted(per.items()):
    lo, hi = interval(kk, nn)
    print(f"{name}  {cell:28s} {kk:3d}/{nn:<3d} = {kk/nn*100:5.1f} %  (95 % CI {lo*100:.1f}–{hi*100:.1f} %)")
lo, hi = interval(k, n)
print(f"{name}  {'all cells':28s} {k:3d}/{n:<3d} = {k/n*100:5.1f} %  (95 % CI {lo*100:.1f}–{hi*100:.1f} %)")
PY
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "calibrating: stream-top calibrate --repeat $CAL_REPEAT --sets $SETS --threads $THREADS"
"$BIN" calibrate --repeat "$CAL_REPEAT" --kernel "$KERNEL" --rounds "$ROUNDS" --sets "$SETS" \
  --threads "$THREADS" 2>&1 | grep -E "spread|written" || true

for repeat in 1 5; do
  : >"$TMP/aa-$repeat.tsv"
  for i in $(seq "$M"); do
    run "$TMP/a.json" --sets "$SETS" --threads "$THREADS" --repeat "$repeat"
    run "$TMP/b.json" --sets "$SETS" --threads "$THREADS" --repeat "$repeat"
    verdicts "$TMP/a.json" "$TMP/b.json" >>"$TMP/aa-$repeat.tsv"
  done
  echo "A/A, --repeat $repeat, $M pairs: false positives (faster or slower verdicts)"
  tally "A/A r=$repeat" any "$TMP/aa-$repeat.tsv"
done

if [ "$AB" = 1 ]; then
  : >"$TMP/hp.tsv"
  : >"$TMP/th.tsv"
  for i in $(seq "$M"); do
    run "$TMP/a.json" --sets l2 --threads 1 --huge-pages on --repeat 5
    run "$TMP/b.json" --sets l2 --threads 1 --huge-pages off --repeat 5
    verdicts "$TMP/a.json" "$TMP/b.json" >>"$TMP/hp.tsv"
    run "$TMP/a.json" --sets dram --threads 1 --repeat 5
    run "$TMP/b.json" --sets dram --threads 2 --repeat 5
    # Different thread counts are different cells: compare them as one by the binary's rule
    # for a cell, so the dram rows are matched by set alone here.
    python3 - "$TMP/a.json" "$TMP/b.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for c in b["cells"]:
    c["threads"] = 1
json.dump(b, open(sys.argv[2], "w"))
PY
    verdicts "$TMP/a.json" "$TMP/b.json" >>"$TMP/th.tsv"
  done
  echo "A/B, --repeat 5, $M pairs: how often the real difference is found"
  tally "huge pages off vs on, l2" any "$TMP/hp.tsv"
  tally "2 threads vs 1, dram" faster "$TMP/th.tsv"
fi
