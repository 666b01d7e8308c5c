#!/usr/bin/env bash
# stream-top's four STREAM ops against McCalpin's STREAM itself, interleaved.
#
# Builds STREAM (stream.c from https://github.com/jeffhammond/STREAM, path in STREAM_C) with
# `gcc -O3 -march=native -fopenmp`, arrays of ELEMS doubles (default 20971520 = 160 MiB each,
# ≥ 4× the last-level cache of the machines this runs on; NTIMES 20), and runs it and
# `stream-top --headless --op stream --format stream --sets <same bytes> --threads T`
# alternately, REPS times, for each T in THREADS. Prints, per op and thread count, the median
# over the repetitions of each side's "Best Rate MB/s" (STREAM's figure: the best of its
# NTIMES passes; stream-top's: the best of its timed rounds) and their ratio.
#
#   STREAM_C=path/to/stream.c bench/vs_stream.sh
#
# Environment: STREAM_C (required), REPS (5), THREADS ("1 2"), ELEMS (20971520),
# STREAM_TOP (target/release/stream-top), PRIO (e.g. "chrt -f 10"; default none).
set -euo pipefail
: "${STREAM_C:?set STREAM_C to stream.c}"
REPS=${REPS:-5}
THREADS=${THREADS:-"1 2"}
ELEMS=${ELEMS:-20971520}
STREAM_TOP=${STREAM_TOP:-target/release/stream-top}
PRIO=${PRIO:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O3 -march=native -fopenmp -DSTREAM_ARRAY_SIZE="$ELEMS" -DNTIMES=20 "$STREAM_C" -o "$work/stream"
bytes=$((ELEMS * 8))
best() { awk -v op="$1:" '$1 == op { print $2 }'; }
for t in $THREADS; do
  for r in $(seq "$REPS"); do
    OMP_NUM_THREADS=$t OMP_PROC_BIND=spread $PRIO "$work/stream" > "$work/s.$t.$r"
    $PRIO "$STREAM_TOP" --headless --op stream --format stream --sets "${bytes}B" \
      --threads "$t" 2>/dev/null > "$work/t.$t.$r"
  done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %7s %14s %14s %7s\n' op threads "STREAM MB/s" "stream-top" ratio
for t in $THREADS; do
  for op in Copy Scale Add Triad; do
    s=$(for r in $(seq "$REPS"); do best "$op" < "$work/s.$t.$r"; done | median)
    m=$(for r in $(seq "$REPS"); do best "$op" < "$work/t.$t.$r"; done | median)
    printf '%-8s %7s %14.1f %14.1f %7.3f\n' "$op" "$t" "$s" "$m" "$(echo "$m / $s" | bc -l)"
  done
done
