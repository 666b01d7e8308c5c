#!/usr/bin/env bash
# The resident set of one dram visit, trial included: runs `stream-top --headless --sets dram`
# (ARGS replace those flags) and samples VmRSS of the process every 100 ms until it ends.
# Prints the series (runs of equal 10 MB steps collapsed), the peak, and how often the RSS
# fell by more than 25 % of the peak and rose again (0: one rise, no fall-and-rise).
#
#   bench/rss-visit.sh [BINARY] [ARGS...]   (default target/debug/stream-top --sets dram --threads 2 --rounds 5)
set -euo pipefail
bin=${1:-target/debug/stream-top}
shift || true
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--sets dram --threads 2 --rounds 5)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" --headless "${args[@]}" >"$out/stdout" 2>"$out/stderr" &
pid=$!
t0=$(date +%s%N)
while kill -0 "$pid" 2>/dev/null; do
    kb=$(awk '/^VmRSS:/ {print $2}' /proc/"$pid"/status 2>/dev/null || true)
    [ -n "$kb" ] && echo "$(( ($(date +%s%N) - t0) / 1000000 )) $kb"
    sleep 0.1
done >"$out/series"
wait "$pid" || echo "stream-top exited $?"
grep -i "dram\|trial" "$out/stderr" | head -5 || true
awk '
    { mb = int($2 / 1024 / 10) * 10; t[NR] = $1; r[NR] = $2 / 1024; if (r[NR] > peak) peak = r[NR]
      if (mb != last) { printf "%s%.1fs:%d", sep, $1 / 1000, mb; sep = " "; last = mb } }
    END {
        printf " (MB)\n"
        # falls of more than a quarter of the peak followed by a rise back above it
        low = 0; falls = 0; top = 0
        for (i = 1; i <= NR; i++) {
            if (r[i] > top) top = r[i]
            if (!low && r[i] < top - peak / 4) low = 1
            if (low && r[i] > top - peak / 8) { falls++; low = 0; top = r[i] }
        }
        printf "peak %.0f MB over %d samples; fall-and-rise: %d\n", peak, NR, falls
    }' "$out/series"
