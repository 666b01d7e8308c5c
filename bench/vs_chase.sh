#!/usr/bin/env bash
# stream-top's idle-latency chase against an independent C pointer chase (bench/chase.c), at
# the same buffer sizes, on the same CPU, interleaved.
#
# Builds bench/chase.c with `cc -O2` and stream-top's latency bench (`cargo bench --bench
# latency --no-run`), asks the bench for the chase's bytes at l1, l2, l3 and dram (the
# triad's footprint at one thread), then REPS times, for each set: one C run and one
# stream-top run (which goes first alternates with each repetition). Each run prints the
# median ns per load of its 11 timed runs of ~1 ms; per set the script prints the median over
# the repetitions of each side and stream-top / C, and the best (lowest) of each side and
# their ratio. On a shared machine the best is the least disturbed run: another tenant's
# traffic through the last-level cache only ever adds latency.
#
#   bench/vs_chase.sh                 # huge pages (MADV_HUGEPAGE) on both sides
#   PAGES=small bench/vs_chase.sh     # 4 KiB pages on both sides
#
# Environment: REPS (default 5), SETS (default "l1 l2 l3 dram"), CPU (default 0), PAGES
# (huge | small), WALKER (asm | portable, stream-top's hops, default asm), CC (default cc),
# BENCH (the latency bench's binary, already built: no cargo run inside, e.g. under chrt).
# stderr gets one line per run.

set -euo pipefail

REPS=${REPS:-5}
SETS=${SETS:-"l1 l2 l3 dram"}
CPU=${CPU:-0}
PAGES=${PAGES:-huge}
WALKER=${WALKER:-asm}
CC=${CC:-cc}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

case ${1:-} in
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "vs_chase.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

"$CC" -O2 -o "$TMP/chase" "$ROOT/bench/chase.c"
# BENCH: a latency bench binary already built (then no cargo build here, e.g. under chrt).
BENCH=${BENCH:-$(cd "$ROOT" && cargo bench --bench latency --no-run --message-format=json 2> /dev/null |
    grep '"kind":\["bench"\]' | grep '"name":"latency"' |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)}
[ -x "$BENCH" ] || { echo "vs_chase.sh: cannot build the latency bench" >&2; exit 1; }

declare -A BYTES
while read -r name bytes; do BYTES[$name]=$bytes; done < <(CPU=$CPU "$BENCH" sizes)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

c_run() { "$TMP/chase" "${BYTES[$1]}" "$CPU" "$PAGES" | awk '{ print $1 }'; }
st_run() { CPU=$CPU "$BENCH" chase "${BYTES[$1]}" "$PAGES" "$WALKER" | awk '{ print $1 }'; }

for rep in $(seq 1 "$REPS"); do
    for set in $SETS; do
        if [ $((rep % 2)) -eq 1 ]; then
            c=$(c_run "$set"); s=$(st_run "$set")
        else
            s=$(st_run "$set"); c=$(c_run "$set")
        fi
        echo "$c" >> "$TMP/c.$set"
        echo "$s" >> "$TMP/s.$set"
        echo "run: rep $rep $set ${BYTES[$set]} B: chase.c $c ns, stream-top $s ns" >&2
    done
done

echo "# idle latency, ns per load: median of $REPS interleaved runs each; pages $PAGES; cpu $CPU; stream-top walker $WALKER"
printf '%-6s %12s %10s %10s %7s   %10s %10s %7s\n' set bytes chase.c stream-top ratio \
    'best C' 'best s-t' ratio
for set in $SETS; do
    c=$(median < "$TMP/c.$set")
    s=$(median < "$TMP/s.$set")
    bc=$(sort -g "$TMP/c.$set" | head -n 1)
    bs=$(sort -g "$TMP/s.$set" | head -n 1)
    printf '%-6s %12s %10.2f %10.2f %7.3f   %10.2f %10.2f %7.3f\n' "$set" "${BYTES[$set]}" \
        "$c" "$s" "$(echo "$s $c" | awk '{ print $1 / $2 }')" \
        "$bc" "$bs" "$(echo "$bs $bc" | awk '{ print $1 / $2 }')"
done
