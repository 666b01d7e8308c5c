#!/usr/bin/env bash
# Does anything grow over an hour? (issue 21's soak)
#
# Runs, side by side for MINUTES minutes:
#   - the live monitor with the default grid, in a tmux pane (a real terminal, 160x50);
#   - `--headless --serve` on 127.0.0.1:PORT, scraped once a second (GET /metrics).
# Every INTERVAL seconds it prints one line per process: elapsed seconds, RSS (KiB, VmRSS),
# threads (/proc/PID/task) and open fds (/proc/PID/fd), plus the scrapes that failed so far.
# Both processes run under `nice -n NICE` so that the machine's other work is not starved; the
# figures measured are sizes and counts, which niceness does not change.
#
# Needs tmux and curl. Usage: bench/soak.sh > soak.tsv   (MINUTES=60 INTERVAL=60 PORT=19187)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
MINUTES=${MINUTES:-60}
INTERVAL=${INTERVAL:-60}
PORT=${PORT:-19187}
NICE=${NICE:-10}
SOCK=stream-top-soak-$$
TMP=$(mktemp -d)
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
SERVICE=
cleanup() {
  tm kill-server 2>/dev/null || true
  [ -n "$SERVICE" ] && kill "$SERVICE" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

[ -x "$BIN" ] || cargo build --release
command -v tmux >/dev/null && command -v curl >/dev/null || { echo "needs tmux and curl" >&2; exit 2; }

tm new-session -d -s m -x 160 -y 50 "nice -n $NICE $BIN; sleep 600"
nice -n "$NICE" "$BIN" --headless --serve "127.0.0.1:$PORT" >"$TMP/service.log" 2>&1 &
SERVICE=$!
sleep 2
MONITOR=$(pgrep -n -f "^$BIN\$" || true)
[ -n "$MONITOR" ] || { echo "the live monitor did not start" >&2; exit 1; }

failed=0
scrapes=0
sample() {
  local who=$1 pid=$2 rss threads fds
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo -)
  threads=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
  fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$((SECONDS - start))" "$who" "$rss" "$threads" "$fds" "$failed/$scrapes"
}
printf 'seconds\tprocess\trss_kib\tthreads\tfds\tfailed_scrapes\n'
start=$SECONDS
next=0
while [ $((SECONDS - start)) -lt $((MINUTES * 60)) ]; do
  if [ $((SECONDS - start)) -ge "$next" ]; then
    sample monitor "$MONITOR"
    sample service "$SERVICE"
    next=$((next + INTERVAL))
  fi
  scrapes=$((scrapes + 1))
  curl -s -m 10 -o /dev/null "http://127.0.0.1:$PORT/metrics" || failed=$((failed + 1))
  sleep 1
done
sample monitor "$MONITOR"
sample service "$SERVICE"
kill -0 "$MONITOR" 2>/dev/null || echo "the live monitor ended early" >&2
kill -0 "$SERVICE" 2>/dev/null || echo "the service ended early" >&2
