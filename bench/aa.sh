#!/usr/bin/env bash
# Does `compare` cry wolf, and does it find the wolf? (A/A and A/B benchmarks)
#
# A/A: M pairs of identical sides, compared pair by pair; every "faster" or "slower" verdict is
# a false positive. At R=1 (one run a side, judged against the run-to-run spread that
# `stream-top calibrate` measured first across separate processes, in a private data
# directory) and at R=5 (Welch's test on the repetitions, two-sided at 1 % per cell; in
# MODE=sides, one process a side, with calibrate's spread between processes added). Prints the false-positive rate per cell and
# overall, with its 95 % Clopper–Pearson interval. At R >= 3 (separate processes a side, as
# docs/ci-recipe.sh takes them) it also runs the regression gate, `compare --fail-if-slower
# GATE` (default 5), on each pair and prints its false-failure rate (exit 1 on identical sides;
# target <= 1 %) beside how often it was undecided (exit 3) and passed (exit 0).
#
# A/B (AB=1): the same with a real change, at R=5: --threads 2 against 1 at dram, and
# --huge-pages off against on at l2 (with the difference measured); prints how often the
# verdict finds it (power) and the median B/A over the pairs.
#
# How a side's R repetitions are taken (MODE):
#   interleave (default): each repetition its own process (`--repeat 1`), the two sides'
#     processes alternating in time, A B A B … (B A B A … in every other pair), compared as
#     `compare A1 … A5 -- B1 … B5`. The machine drifts (other work starts and stops); back to
#     back, A's five runs and B's five see different machines and the drift reads as a
#     difference (12 of 100 cells in an earlier A/A here). Interleaved, both sides see the same
#     drift, and a process's own state (its address space, where the scheduler put it) counts
#     in the spread as it does between a user's before and after.
#   sides: one `--repeat R` process a side, A then B (B then A in every other pair): what a
#     user who runs `--repeat 5` before and after a change gets, drift included.
# Every timed process runs under `chrt -f 10` (real-time priority, the same for both sides)
# where that is allowed, so that compile jobs do not preempt the workers.
#
# Usage: bench/aa.sh   (M=20 SETS=l2,dram THREADS=1 ROUNDS=11 MODE=interleave AA=1 AB=1
#                       REPEATS="1 5" CAL_REPEAT=10 CAL_SPAN=5m AB_CASES="threads pages" M_AB=$M)
# The kernel and the page layout are pinned (KERNEL=avx2 on x86-64, PAGES=on) so that no trial
# runs in the A/A: a trial per repetition only adds time, and the loop it picks is itself a
# run-to-run difference (compare flags a cell whose loop differs).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
M=${M:-20}
SETS=${SETS:-l2,dram}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-11}
MODE=${MODE:-interleave}
AA=${AA:-1}
AB=${AB:-1}
REPEATS=${REPEATS:-1 5}
CAL_REPEAT=${CAL_REPEAT:-10}
CAL_SPAN=${CAL_SPAN:-5m}
AB_CASES=${AB_CASES:-threads pages}
M_AB=${M_AB:-$M}
GATE=${GATE:-5}
PAGES=${PAGES:-on}
KERNEL=${KERNEL:-$([ "$(uname -m)" = x86_64 ] && echo avx2 || echo neon)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export STREAM_TOP_DATA_DIR=$TMP/data
[ -x "$BIN" ] || cargo build --release
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }
case $MODE in interleave | sides) ;; *) echo "MODE is interleave or sides" >&2; exit 2 ;; esac
RT=()
if chrt -f 10 true 2>/dev/null; then RT=(chrt -f 10); fi

run() { # run OUT.json ARGS...: one headless run, its snapshot exported to OUT.json
  local out=$1 dir
  shift
  dir=$(mktemp -d "$TMP/run.XXXX")
  "${RT[@]}" "$BIN" --headless --kernel "$KERNEL" --rounds "$ROUNDS" --export "$dir" "$@" \
    >/dev/null 2>&1 || { echo "run failed: $*" >&2; return 1; }
  mv "$dir"/*.json "$out"
  rm -rf "$dir"
}

# pair I R "A ARGS" "B ARGS": R repetitions a side into $TMP/pair/{a,b}N.json, taken as MODE
# says, the first side alternating with the pair's parity.
pair() {
  local i=$1 r=$2 a=$3 b=$4 k first second
  rm -rf "$TMP/pair" && mkdir -p "$TMP/pair"
  if ((i % 2)); then first=a second=b; else first=b second=a; fi
  # shellcheck disable=SC2086 # the sides' arguments are word lists
  if [ "$MODE" = interleave ]; then
    for k in $(seq "$r"); do
      for s in $first $second; do
        if [ "$s" = a ]; then run "$TMP/pair/a$k.json" $a; else run "$TMP/pair/b$k.json" $b; fi
      done
    done
  else
    for s in $first $second; do
      if [ "$s" = a ]; then run "$TMP/pair/a1.json" $a --repeat "$r"; else
        run "$TMP/pair/b1.json" $b --repeat "$r"
      fi
    done
  fi
}

# verdicts: one line per compared cell of the pair, "label×threads<TAB>verdict word<TAB>B/A".
verdicts() {
  "$BIN" compare "$TMP"/pair/a*.json -- "$TMP"/pair/b*.json | awk -F'|' '
    /^\| per array/ {t=1; next} t && /^\|---/ {next}
    t && /^\|/ {v=$13; gsub(/^ +| +$/, "", v); split(v, w, /[: ]/); l=$2; gsub(/^ +| +$/, "", l);
                n=$3; gsub(/ /, "", n); r=$8; gsub(/ /, "", r); print l "×" n "\t" w[1] "\t" r; next}
    t && !/^\|/ {t=0}'
}

# gate_outcome: the regression gate on the pair, as a line "gate<TAB>passed|failed|undecided|refused".
gate_outcome() {
  local code=0 word
  "$BIN" compare --fail-if-slower "$GATE" "$TMP"/pair/a*.json -- "$TMP"/pair/b*.json \
    >/dev/null 2>&1 || code=$?
  case $code in 0) word=passed ;; 1) word=failed ;; 3) word=undecided ;; *) word=refused ;; esac
  printf 'gate --fail-if-slower %s\t%s\t-\n' "$GATE" "$word"
}

# as_one_thread: B's cells read as 1 thread, so that 2 threads (B) and 1 (A) at dram are
# matched as one cell (compare matches cells by level and thread count).
as_one_thread() {
  python3 - "$TMP"/pair/b*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    s = json.load(open(path))
    for c in s["cells"]:
        c["threads"] = 1
    json.dump(s, open(path, "w"))
PY
}

# tally NAME EXPECT FILE: rates of verdicts that say EXPECT (a word, or "any" for faster|slower).
tally() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys, collections, math, statistics
name, expect, path = sys.argv[1:]
def ibeta(a, b, x):
    # the regularized incomplete beta, by its continued fraction (Numerical Recipes)
    if x <= 0: return 0.0
    if x >= 1: return 1.0
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
def beta_ppf(q, a, b):
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo+hi)/2
        if ibeta(a, b, mid) < q: lo = mid
        else: hi = mid
    return (lo+hi)/2
def interval(k, n):  # Clopper–Pearson, 95 %
    low = 0.0 if k == 0 else beta_ppf(0.025, k, n-k+1)
    high = 1.0 if k == n else beta_ppf(0.975, k+1, n-k)
    return low, high
per = collections.defaultdict(lambda: [0, 0, []])
for line in open(path):
    cell, word, ratio = line.rstrip('\n').split('\t')
    hit = word in ('faster', 'slower') if expect == 'any' else word == expect
    per[cell][0] += hit; per[cell][1] += 1
    try: per[cell][2].append(float(ratio))
    except ValueError: pass
def row(cell, k, n, ratios):
    lo, hi = interval(k, n)
    r = f"  B/A median {statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})" if ratios else ""
    print(f"{name}  {cell:30s} {k:3d}/{n:<3d} = {k/n*100:5.1f} %  (95 % CI {lo*100:.1f}–{hi*100:.1f} %){r}")
for cell, (k, n, ratios) in sorted(per.items()):
    row(cell, k, n, ratios)
if len(per) > 1:
    row('all cells', sum(v[0] for v in per.values()), sum(v[1] for v in per.values()), [])
PY
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "mode $MODE; timed processes under: ${RT[*]:-normal priority (chrt not allowed)}"
echo "kernel $KERNEL, --huge-pages $PAGES, --rounds $ROUNDS; $M pairs"
START=$(date +%s)

if [ "$AA" = 1 ]; then
  # Single runs are judged against calibrate's spread; so are one-process sides (MODE=sides).
  if [[ " $REPEATS " == *" 1 "* ]] || [ "$MODE" = sides ]; then
    echo "calibrating: stream-top calibrate --repeat $CAL_REPEAT --span $CAL_SPAN --sets $SETS --threads $THREADS"
    "${RT[@]}" "$BIN" calibrate --repeat "$CAL_REPEAT" --span "$CAL_SPAN" --kernel "$KERNEL" --huge-pages "$PAGES" \
      --rounds "$ROUNDS" --sets "$SETS" --threads "$THREADS" 2>&1 | grep -iE "run-to-run spread" || true
  fi
  for r in $REPEATS; do
    : >"$TMP/aa-$r.tsv"
    : >"$TMP/gate-$r.tsv"
    for i in $(seq "$M"); do
      same="--sets $SETS --threads $THREADS --huge-pages $PAGES"
      pair "$i" "$r" "$same" "$same"
      verdicts >>"$TMP/aa-$r.tsv"
      if [ "$MODE" = interleave ] && [ "$r" -ge 3 ]; then gate_outcome >>"$TMP/gate-$r.tsv"; fi
    done
    echo "A/A, $r repetition(s) a side, $M pairs: false positives (faster or slower verdicts)"
    tally "A/A r=$r" any "$TMP/aa-$r.tsv"
    if [ -s "$TMP/gate-$r.tsv" ]; then
      echo "A/A, $r processes a side, $M pairs: the gate's false failures (exit 1; target <= 1 %), undecided (exit 3), passed (exit 0)"
      for word in failed undecided passed; do tally "A/A r=$r $word" "$word" "$TMP/gate-$r.tsv"; done
    fi
    echo "  ($(($(date +%s) - START)) s so far; load $(cut -d' ' -f1-3 /proc/loadavg))"
  done
fi

if [ "$AB" = 1 ]; then
  : >"$TMP/th.tsv"
  : >"$TMP/hp.tsv"
  for i in $(seq "$M_AB"); do
    if [[ " $AB_CASES " == *" threads "* ]]; then
      pair "$i" 5 "--sets dram --threads 1 --huge-pages $PAGES" "--sets dram --threads 2 --huge-pages $PAGES"
      as_one_thread
      verdicts >>"$TMP/th.tsv"
    fi
    if [[ " $AB_CASES " == *" pages "* ]]; then
      pair "$i" 5 "--sets l2 --threads 1 --huge-pages on" "--sets l2 --threads 1 --huge-pages off"
      verdicts >>"$TMP/hp.tsv"
    fi
  done
  echo "A/B, 5 repetitions a side, $M_AB pairs: how often the real difference is found"
  [ -s "$TMP/th.tsv" ] && tally "2 threads (B) vs 1 (A), dram" faster "$TMP/th.tsv"
  [ -s "$TMP/hp.tsv" ] && tally "huge pages off (B) vs on (A), l2" any "$TMP/hp.tsv"
  echo "  ($(($(date +%s) - START)) s in all; load $(cut -d' ' -f1-3 /proc/loadavg))"
fi
