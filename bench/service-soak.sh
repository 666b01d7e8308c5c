#!/usr/bin/env bash
# Are a service's figures fresh and its memory small? (issue 24, item 3)
#
# Runs `stream-top --headless --serve 127.0.0.1:PORT` (the default grid, the service's default
# duty) for MINUTES minutes and every INTERVAL seconds prints one line: elapsed seconds, RSS
# (KiB, VmRSS), the arrays it holds (stream_top_arrays_bytes), the oldest cell's age and every
# cell's age (stream_top_cell_age_seconds, set×threads=seconds; `-` before its first round).
# At the end: the largest age seen once every cell had a figure, the largest RSS, the largest RSS
# while it held no arrays (between visits), and the remaps its log counted.
#
# Needs curl. Usage: bench/service-soak.sh > service-soak.tsv   (MINUTES=30 INTERVAL=30 PORT=19287)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
MINUTES=${MINUTES:-30}
INTERVAL=${INTERVAL:-30}
PORT=${PORT:-19287}
NICE=${NICE:-0}
TMP=$(mktemp -d)
SERVICE=
cleanup() {
  [ -n "$SERVICE" ] && kill "$SERVICE" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

[ -x "$BIN" ] || cargo build --release
command -v curl >/dev/null || { echo "needs curl" >&2; exit 2; }

nice -n "$NICE" "$BIN" --headless --serve "127.0.0.1:$PORT" ${ARGS:-} >"$TMP/service.log" 2>&1 &
SERVICE=$!
start=$SECONDS
printf 'seconds\trss_kib\tarrays_bytes\tmax_age_s\tages\n'
max_age=0 max_rss=0 max_idle_rss=0
while [ $((SECONDS - start)) -lt $((MINUTES * 60)) ]; do
  sleep "$INTERVAL"
  kill -0 "$SERVICE" 2>/dev/null || { echo "the service ended:" >&2; cat "$TMP/service.log" >&2; exit 1; }
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SERVICE/status")
  m=$(curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" || true)
  held=$(awk '/^stream_top_arrays_bytes / {printf "%d", $2}' <<<"$m")
  ages=$(awk '/^stream_top_cell_age_seconds\{/ {
      match($0, /set="[^"]*"/); s = substr($0, RSTART + 5, RLENGTH - 6)
      match($0, /threads="[^"]*"/); t = substr($0, RSTART + 9, RLENGTH - 10)
      printf "%s%s×%s=%.0f", sep, s, t, $2; sep = " " }' <<<"$m")
  cells=$(grep -c '^stream_top_rounds_total{' <<<"$m" || true)
  aged=$(grep -c '^stream_top_cell_age_seconds{' <<<"$m" || true)
  oldest=$(awk '/^stream_top_cell_age_seconds\{/ { if ($2 > m) m = $2 } END { printf "%.0f", m }' <<<"$m")
  printf '%s\t%s\t%s\t%s\t%s\n' $((SECONDS - start)) "$rss" "${held:--}" "$oldest" "$ages"
  # Ages count once every cell has had a round (the first sweep builds up).
  if [ "$aged" -ge "$cells" ] && [ "$cells" -gt 0 ] && [ "$oldest" -gt "$max_age" ]; then max_age=$oldest; fi
  [ "$rss" -gt "$max_rss" ] && max_rss=$rss
  if [ "${held:-1}" = 0 ] && [ "$rss" -gt "$max_idle_rss" ]; then max_idle_rss=$rss; fi
done
kill -TERM "$SERVICE"
wait "$SERVICE" 2>/dev/null || true
SERVICE=
remaps=$(grep -o 'arrays mapped and first-touched [0-9]* times' "$TMP/service.log" | tail -1 || true)
echo "# oldest cell once all had a figure: ${max_age} s; largest RSS ${max_rss} KiB; largest RSS holding no arrays ${max_idle_rss} KiB; log: ${remaps:-no remap count}"
