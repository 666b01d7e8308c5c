#!/usr/bin/env bash
# Does the live monitor disturb what it measures? (point 4 of the TUI issue)
#
# 1. For each working set, at all CPUs, alternately N times: headless's median for the cell, and
#    the live monitor's median for the same cell in focus mode (the cell's window of --rounds
#    rounds, all taken after focus and a reset, read from its `e` export). Prints each pair and
#    the ratio TUI / headless, then the median ratio.
# 2. The UI thread's CPU use (the main thread: it reads events, keeps the state and draws) over
#    CPU_SECONDS of the default sweep and of focus on the first set, from
#    /proc/PID/task/TID/schedstat (ns on CPU), with the other threads of the monitor beside it.
#
# On a shared machine the same headless measurement moves by far more than 1 % from one run to
# the next, so each TUI run is bracketed by two headless runs: their ratio is the noise floor, and
# the runs where they agree within QUIET (5 %) give the ratio that means something.
#
# Needs tmux and jq. Usage: bench/tui-overhead.sh
#   (N=5 SETS="dram l2" ROUNDS=21 QUIET=0.05 CPU_SECONDS=60; CPU_SECONDS=0 skips part 2)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
N=${N:-5}
SETS=${SETS:-"dram l2"}
CPU_SECONDS=${CPU_SECONDS:-60}
ROUNDS=${ROUNDS:-21}
QUIET=${QUIET:-0.05}
THREADS=$(nproc)
SOCK=stream-top-overhead-$$
TMP=$(mktemp -d)
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

[ -x "$BIN" ] || cargo build --release
command -v tmux >/dev/null && command -v jq >/dev/null || { echo "needs tmux and jq" >&2; exit 2; }

# Polls the screen until the extended regex matches (at most 120 s).
wait_screen() {
  local re=$1 i
  for i in $(seq 1200); do
    if tm capture-pane -p -t m 2>/dev/null | grep -Eq -- "$re"; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for /$re/; screen:" >&2; tm capture-pane -p -t m >&2 || true; exit 1
}

median_of() { jq -r --argjson t "$THREADS" '.cells[] | select(.threads == $t and .rerun == false) | .figures.median_gbs'; }

headless_median() {
  "$BIN" --headless --sets "$1" --threads "$THREADS" --rounds "$ROUNDS" --format json 2>/dev/null | median_of
}

# The selected cell's timed rounds since the last reset, from the detail panel (empty if none).
rounds_counted() {
  tm capture-pane -p -t m | grep -Eo '\(([0-9]+) in all\)' | grep -Eo '[0-9]+' | head -1 || true
}

tui_median() {
  local set=$1 dir="$TMP/export-$RANDOM" n
  mkdir -p "$dir"
  tm new-session -d -s m -x 120 -y 40 "$BIN --sets $set --threads $THREADS --rounds $ROUNDS --export $dir"
  wait_screen 'rounds [0-9]+ \([0-9]+ in all\)'
  tm send-keys -t m Enter
  wait_screen 'focus on'
  before=$(rounds_counted)
  tm send-keys -t m r
  # Wait for the reset to show, then until the window holds only rounds taken in focus after it.
  for n in $(seq 1200); do
    total=$(rounds_counted)
    [ -z "$total" ] || [ "$total" -lt "$before" ] && break
    sleep 0.1
  done
  for n in $(seq 1200); do
    total=$(rounds_counted)
    [ -n "$total" ] && [ "$total" -ge $((ROUNDS + 2)) ] && break
    sleep 0.1
  done
  tm send-keys -t m e
  # The file, not the log line: a busy log may scroll it away at once.
  for n in $(seq 1200); do
    ls "$dir"/*.json >/dev/null 2>&1 && break
    sleep 0.1
  done
  tm send-keys -t m q
  while tm has-session -t m 2>/dev/null; do sleep 0.1; done
  median_of < "$(ls "$dir"/*.json | head -1)"
}

# Median, min and max of the numbers on stdin.
summary() {
  sort -g | awk '{ a[NR] = $1 } END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "median %.3f (min %.3f, max %.3f, %d runs)", m, a[1], a[NR], NR }'
}

echo "# TUI focus median vs headless median, $THREADS threads, --rounds $ROUNDS"
echo "# each run: headless, TUI, headless; tui/headless is against the mean of the two headless"
echo "# runs around it, and headless2/headless1 is the same measurement twice: the noise floor"
echo "set  run  headless1_GBs  tui_GBs  headless2_GBs  tui/headless  headless2/headless1"
for set in $SETS; do
  : > "$TMP/ratios"; : > "$TMP/floor"; : > "$TMP/quiet"
  h2=$(headless_median "$set")
  for i in $(seq "$N"); do
    h1=$h2
    t=$(tui_median "$set")
    h2=$(headless_median "$set")
    r=$(awk -v t="$t" -v a="$h1" -v b="$h2" 'BEGIN { printf "%.3f", 2 * t / (a + b) }')
    f=$(awk -v a="$h1" -v b="$h2" 'BEGIN { printf "%.3f", b / a }')
    echo "$r" >> "$TMP/ratios"; echo "$f" >> "$TMP/floor"
    # A quiet run: the two headless runs around the TUI agree within QUIET.
    awk -v f="$f" -v q="$QUIET" 'BEGIN { exit !(f >= 1 - q && f <= 1 + q) }' && echo "$r" >> "$TMP/quiet"
    printf '%s  %d  %.2f  %.2f  %.2f  %s  %s\n' "$set" "$i" "$h1" "$t" "$h2" "$r" "$f"
  done
  echo "$set  tui/headless $(summary < "$TMP/ratios")"
  echo "$set  headless2/headless1 $(summary < "$TMP/floor")"
  if [ -s "$TMP/quiet" ]; then
    echo "$set  tui/headless in quiet runs (headless within ±$QUIET) $(summary < "$TMP/quiet")"
  else
    echo "$set  no quiet run (headless within ±$QUIET)"
  fi
done

# CPU time of each thread of PID, in ns, as "tid comm ns" lines.
thread_times() {
  local pid=$1 t
  for t in /proc/"$pid"/task/*; do
    printf '%s %s %s\n' "${t##*/}" "$(tr ' ' '_' < "$t/comm")" "$(cut -d' ' -f1 "$t/schedstat")"
  done
}

cpu_use() {
  local what=$1 args=$2 keys=$3 pid t0 t1
  tm new-session -d -s m -x 120 -y 40 "$BIN $args"
  wait_screen 'rounds [0-9]+ \([0-9]+ in all\)'
  if [ -n "$keys" ]; then tm send-keys -t m $keys; wait_screen 'focus on'; fi
  pid=$(tm display-message -p -t m '#{pane_pid}')
  thread_times "$pid" > "$TMP/before"; t0=$(date +%s%N)
  sleep "$CPU_SECONDS"
  thread_times "$pid" > "$TMP/after"; t1=$(date +%s%N)
  tm send-keys -t m q
  while tm has-session -t m 2>/dev/null; do sleep 0.1; done
  echo "# CPU use over $(( (t1 - t0) / 1000000000 )) s, $what (percent of one core)"
  join <(sort "$TMP/before") <(sort "$TMP/after") | awk -v wall=$((t1 - t0)) -v main="$pid" '{
    pct = ($5 - $3) / wall * 100
    role = ($1 == main) ? "UI thread (main)" : $2
    printf "  %-22s %7.3f %%\n", role, pct }'
}

[ "$CPU_SECONDS" -gt 0 ] || exit 0
cpu_use "default sweep" "" ""
first=${SETS%% *}
cpu_use "focus on $first × $THREADS" "--sets $first --threads $THREADS" "Enter"
