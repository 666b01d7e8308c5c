#!/usr/bin/env bash
# stream-top's four STREAM ops against McCalpin's STREAM itself, cell by cell, interleaved.
#
# For each thread count in THREADS and working set in SETS, runs `stream-top --headless --op
# stream --format json` and STREAM built for that cell's arrays alternately (the order reversed
# every other repetition), REPS times, and prints one table: per op (Copy, Scale, Add, Triad),
# thread count and set, the median over the repetitions of each side's best rate (STREAM's "Best
# Rate MB/s", the best of its NTIMES passes; stream-top's best round, figures.best_gbs, as
# `--format stream` prints it), their ratio, and the fraction of the core's own port limit.
#
#   STREAM_C=path/to/stream.c bench/vs_stream.sh
#   STREAM_C=stream.c THREADS=1 SETS="l1 l2" REPS=3 bench/vs_stream.sh
#
# stream.c is McCalpin's, from https://github.com/jeffhammond/STREAM (or www.cs.virginia.edu/stream);
# it is not in this repository, and nothing else stands in for it.
#
# Working sets: stream-top's own (l1, l2, l3: per thread; dram: split; or a size), read from
# the cell's first stream-top run; STREAM's arrays are then stream-top's bytes per array over
# all threads (a per-thread set × threads: STREAM's OpenMP loops give each thread its share of
# every array).
# STREAM's arrays are compile-time, so each cell gets its own binary, `gcc -O3 -march=native
# -fopenmp -DSTREAM_ARRAY_SIZE=<elements> -DNTIMES=<passes>`. NTIMES is the passes over the
# arrays in stream-top's timed rounds (median over the four ops; at least 20, at most
# NTIMES_MAX): at cache sizes one STREAM pass lasts microseconds, and STREAM's default of 10
# passes would set the best of a few microseconds against the best of rounds of milliseconds;
# with this NTIMES both sides' timed parts last about as long. STREAM's own check values grow
# 15× a pass and overflow past about 260 passes, so its "Solution Validates" line fails at
# large NTIMES; only its rates are read.
# STREAM times each pass on its own with its own clock and asks for at least 20 clock ticks per
# test; where its estimate ("(= N clock ticks)") is under 20 (a cache-sized array with its
# microsecond clock), the row says so and its ratio is in brackets: there STREAM's figure is its
# timer's granularity and OpenMP's fork and join, not the memory; a best pass under one tick
# reads as an infinite rate and is shown as –.
# Of port limit: bytes per cycle per thread over what this core's L1 load and store ports allow
# the op at the vector width of stream-top's chosen loop (figures.port_limit in stream-top's
# JSON, its median round; docs/cpu-limits.md); STREAM's is its best rate per thread over the
# same limit × the clock stream-top measured. An L1 ceiling: at l2 and dram an upper bound far
# above what those levels deliver.
#
# Environment: STREAM_C (required), REPS (5), THREADS ("1 <online CPUs>"), SETS ("l1 l2 dram";
# stream-top --sets names or sizes), ELEMS (if set, the dram set is arrays of ELEMS doubles),
# ROUNDS (stream-top --rounds, 21), NTIMES_MAX (1000000), STREAM_TOP (target/release/stream-top),
# PRIO (a prefix for both sides, e.g. "chrt -f 10"; default none).
set -euo pipefail
: "${STREAM_C:?set STREAM_C to stream.c by McCalpin, https://github.com/jeffhammond/STREAM}"
[[ -r $STREAM_C ]] || { echo "vs_stream.sh: cannot read STREAM_C=$STREAM_C" >&2; exit 2; }
command -v python3 > /dev/null || { echo "vs_stream.sh: needs python3 to read stream-top's JSON" >&2; exit 1; }
NCPU=$(nproc --all 2> /dev/null || nproc)
REPS=${REPS:-5}
THREADS=${THREADS:-"1 $NCPU"}
SETS=${SETS:-"l1 l2 dram"}
ROUNDS=${ROUNDS:-21}
NTIMES_MAX=${NTIMES_MAX:-1000000}
STREAM_TOP=${STREAM_TOP:-target/release/stream-top}
PRIO=${PRIO:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mcmodel=()
# STREAM's static arrays pass 2 GiB at dram on a large L3.
[[ $(uname -m) == x86_64 ]] && mcmodel=(-mcmodel=medium)

# One stream-top JSON document → one line per op:
#   op best_gbs port_fraction port_bytes_per_cycle ghz per_array_bytes passes why median_gbs
# (per_array_bytes: one array over all threads; passes: the timed rounds' bytes over one pass;
# nan where unknown; why: the port limit's reason, spaces as _, or -.)
CELLS_PY='
import json, sys
doc = json.load(sys.stdin)
threads = int(sys.argv[1])
moved = {"copy": 2, "scale": 2, "add": 3, "triad": 3}
for c in doc["cells"]:
    if c["threads"] != threads or c.get("rerun") or c["op"] not in moved:
        continue
    f, size = c["figures"], c["size"]
    per_array = size["bytes"] * (threads if size["kind"] == "per_thread" else 1)
    passes = sum(r["bytes"] for r in c["history"]) / (moved[c["op"]] * per_array)
    pl = f.get("port_limit") or {"unknown": {"reason": "the JSON records no CPU design"}}
    known = pl.get("known")
    frac = known.get("fraction") if known else None
    if f.get("bytes_per_cycle_from") == "counted":
        ghz = f["counters"]["ghz"]
    else:
        ghz = (doc["info"].get("clock") or {}).get("ghz")
    why = pl["unknown"]["reason"] if not known else ("-" if frac is not None else "no measured bytes per cycle")
    nan = lambda v: "nan" if v is None else v
    print(c["op"], f["best_gbs"], nan(frac), nan(known and known["bytes_per_cycle"]), nan(ghz),
          per_array, round(passes), why.replace(" ", "_"), f["median_gbs"])
'

st_once() { # threads set -> appends the cell's lines to $work/st.$1.$2
    local json
    # shellcheck disable=SC2086 # PRIO is a command prefix
    json=$($PRIO "$STREAM_TOP" --headless --op stream --threads "$1" --sets "$(st_set "$2")" \
        --rounds "$ROUNDS" --format json 2> /dev/null) &&
        python3 -c "$CELLS_PY" "$1" <<< "$json" >> "$work/st.$1.$2" ||
        echo "stream-top --headless failed or gave no cell for $1 threads, $2" >&2
}
st_set() { if [[ $1 == dram && -n ${ELEMS:-} ]]; then echo "$((ELEMS * 8))B"; else echo "$1"; fi; }

stream_build() { # threads set: STREAM for the cell's arrays, from its first stream-top run
    local elems ntimes
    elems=$(awk 'NR == 1 { printf "%d", $6 / 8 }' "$work/st.$1.$2")
    ntimes=$(awk '{ print $7 }' "$work/st.$1.$2" | sort -g | awk -v max="$NTIMES_MAX" '
        { v[NR] = $1 } END { n = v[int((NR + 1) / 2)]; if (n < 20) n = 20; if (n > max) n = max; print n }')
    gcc -O3 -march=native -fopenmp "${mcmodel[@]}" -DSTREAM_ARRAY_SIZE="$elems" -DNTIMES="$ntimes" \
        "$STREAM_C" -o "$work/stream.$1.$2"
    echo "$elems $ntimes" > "$work/build.$1.$2"
}

stream_once() { # threads set -> appends STREAM's output to $work/s.$1.$2
    local ntimes
    read -r _ ntimes < "$work/build.$1.$2"
    # STREAM keeps its pass times on main's stack, 32 bytes a pass: room for them above 8 MiB.
    # shellcheck disable=SC2086 # PRIO is a command prefix
    (ulimit -s $((8192 + ntimes * 32 / 1024)) &&
        OMP_NUM_THREADS=$1 OMP_PROC_BIND=spread $PRIO "$work/stream.$1.$2") >> "$work/s.$1.$2" ||
        echo "STREAM failed for $1 threads, $2" >&2
}

median() { awk 'NF && $1 != "nan"' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "nan" && b != "nan" && b > 0) printf "%.3f", a / b; else print "–" }'; }
num() { awk -v a="$1" -v d="$2" 'BEGIN { if (a == "nan") print "–"; else printf "%.*f", d, a }'; }
percent() { awk -v a="$1" 'BEGIN { if (a == "nan") print "–"; else printf "%.1f %%", 100 * a }'; }

echo "# stream-top vs STREAM ($STREAM_C), $REPS repetitions, alternating"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $NCPU CPUs; $(gcc --version | head -n 1)"
echo "stream-top: $STREAM_TOP --headless --op stream --threads T --sets S --rounds $ROUNDS --format json"
echo "STREAM: gcc -O3 -march=native -fopenmp ${mcmodel[*]} -DSTREAM_ARRAY_SIZE=<stream-top's bytes per array over all threads / 8> -DNTIMES=<passes in stream-top's timed rounds>; OMP_NUM_THREADS=T OMP_PROC_BIND=spread"
[[ -n $PRIO ]] && echo "both sides under $PRIO"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

for t in $THREADS; do
    for set in $SETS; do
        for ((rep = 0; rep < REPS; rep++)); do
            if ((rep % 2)); then
                stream_once "$t" "$set"
                st_once "$t" "$set"
            else
                st_once "$t" "$set"
                [[ -s $work/st.$t.$set ]] || continue 2
                [[ -e $work/stream.$t.$set ]] || stream_build "$t" "$set"
                stream_once "$t" "$set"
            fi
        done
        echo "done: $t threads, $set (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
done

footnotes=()
echo "| op | threads | set | array | NTIMES | STREAM best MB/s | stream-top best MB/s | ratio | STREAM clock ticks per test | of port limit, stream-top (median round) / STREAM (best) |"
echo "|---|---:|---|---|---:|---:|---:|---:|---:|---:|"
for t in $THREADS; do
    for set in $SETS; do
        [[ -s $work/st.$t.$set && -s $work/s.$t.$set ]] || { footnotes+=("$t threads, $set: no figures"); continue; }
        read -r elems ntimes < "$work/build.$t.$set"
        ticks=$(sed -n 's/.*(= \([0-9]*\) clock ticks).*/\1/p' "$work/s.$t.$set" | median)
        awk -v n="$ticks" 'BEGIN { exit !(n != "nan" && n < 20) }' && footnotes+=("$t threads, $set: a STREAM test lasts $ticks ticks of its clock, under the 20 it asks for; its rate there is its timer's (and OpenMP's fork and join), not the memory's, so the ratio is in brackets and compares nothing")
        for op in copy scale add triad; do
            label=${op^}
            # A pass under one clock tick reads as an infinite rate: no figure.
            s=$(awk -v op="$label:" '$1 == op { print ($2 ~ /inf/ ? "nan" : $2) }' "$work/s.$t.$set" | median)
            m=$(awk -v op="$op" '$1 == op { print $2 * 1000 }' "$work/st.$t.$set" | median)
            stp=$(awk -v op="$op" '$1 == op { print $3 }' "$work/st.$t.$set" | median)
            lim=$(awk -v op="$op" '$1 == op { print $4 }' "$work/st.$t.$set" | median)
            ghz=$(awk -v op="$op" '$1 == op { print $5 }' "$work/st.$t.$set" | median)
            why=$(awk -v op="$op" '$1 == op && $8 != "-" { print $8; exit }' "$work/st.$t.$set" | tr '_' ' ')
            [[ -n $why ]] && footnotes+=("port limit – for $op: $why")
            sp=$(awk -v s="$s" -v t="$t" -v l="$lim" -v c="$ghz" 'BEGIN {
                if (s == "nan" || l == "nan" || c == "nan" || l * c <= 0) print "nan"; else print s / 1000 / t / (l * c) }')
            printf '| %s | %s | %s | %s | %s | %s | %s | **%s** | %s | %s / %s |\n' "$label" "$t" "$set" \
                "$(awk -v b="$((elems * 8))" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576; else printf "%.2f KiB", b / 1024 }')" \
                "$ntimes" "$(num "$s" 1)" "$(num "$m" 1)" \
                "$(awk -v r="$(ratio "$m" "$s")" -v n="$ticks" 'BEGIN { if (r != "–" && n != "nan" && n < 20) printf "(%s)", r; else print r }')" \
                "$(awk -v n="$ticks" 'BEGIN { if (n == "nan") print "–"; else if (n < 20) printf "%d (under 20)", n; else printf "%d", n }')" \
                "$(percent "$stp")" "$(percent "$sp")"
        done
    done
done
echo
echo "Medians over the $REPS repetitions of each side's best rate, – where STREAM's best pass was under one tick of its clock; MB/s are 10⁶ bytes a second, STREAM's bytes (copy and scale 2 arrays, add and triad 3); array: one array over all threads."
grep -m1 'clock granularity' "$work"/s.* 2> /dev/null | head -n 1 | sed 's/^[^:]*: *//; s/^/STREAM: /' || true
printf '%s\n' "${footnotes[@]}" | awk 'NF && !seen[$0]++'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
