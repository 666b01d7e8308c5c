#!/usr/bin/env bash
# What does the service cost a co-running, bandwidth-bound application? (issue 24, item 3)
#
# The co-runner is a triad in another process (a small C program compiled here, one thread,
# arrays of 3 x 128 MiB, 4x the 32 MiB L3 of the VM): it runs for SECS seconds and prints the
# bytes it moved over the wall time (not a median of passes, which would hide the seconds the
# service runs). The service (`--headless --serve`, default duty and grid) runs throughout;
# PAIRS times, interleaved, the co-runner runs once with the service stopped (SIGSTOP) and once
# with it running (SIGCONT), in alternating order. It prints every pair and the ratio of the
# medians: the co-runner's throughput beside the service over its throughput alone.
#
# The service's first sweep (trials at full speed) is left out: the pairs start after WARM
# seconds. Needs cc and curl. Usage: bench/corunner.sh   (PAIRS=8 SECS=30 WARM=60 PORT=19387)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stream-top}
PAIRS=${PAIRS:-8}
SECS=${SECS:-30}
WARM=${WARM:-60}
PORT=${PORT:-19387}
MIB=${MIB:-128}
TMP=$(mktemp -d)
SERVICE=
cleanup() {
  [ -n "$SERVICE" ] && { kill -CONT "$SERVICE" 2>/dev/null; kill "$SERVICE" 2>/dev/null; } || true
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
[ -x "$BIN" ] || cargo build --release

cat >"$TMP/triad.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  double secs = atof(argv[1]);
  size_t n = (size_t)atol(argv[2]) * 1024 * 1024 / sizeof(double);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (size_t i = 0; i < n; i++) { a[i] = 0; b[i] = 1; c[i] = 2; }
  double t0 = now(), t = t0; long passes = 0;
  while (t - t0 < secs) {
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    passes++; t = now();
  }
  printf("%.3f\n", 24.0 * n * passes / (t - t0) / 1e9 + a[n / 2] * 0);
  return 0;
}
C
cc -O2 -o "$TMP/triad" "$TMP/triad.c"

"$BIN" --headless --serve "127.0.0.1:$PORT" ${ARGS:-} >"$TMP/service.log" 2>&1 &
SERVICE=$!
sleep "$WARM"
alone=() beside=()
one() { "$TMP/triad" "$SECS" "$MIB"; }
printf 'pair\talone_GBps\tbeside_service_GBps\n'
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then
    kill -STOP "$SERVICE"; a=$(one); kill -CONT "$SERVICE"; b=$(one)
  else
    b=$(one); kill -STOP "$SERVICE"; a=$(one); kill -CONT "$SERVICE"
  fi
  alone+=("$a") beside+=("$b")
  printf '%s\t%s\t%s\n' "$i" "$a" "$b"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ma=$(median "${alone[@]}") mb=$(median "${beside[@]}")
awk -v a="$ma" -v b="$mb" 'BEGIN { printf "# median alone %.3f GB/s, beside the service %.3f GB/s: ratio %.4f (slowdown %.1f %%)\n", a, b, b / a, (1 - b / a) * 100 }'
