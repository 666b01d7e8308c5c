#!/usr/bin/env bash
# stream-top headless against likwid-bench, cell by cell, same per-thread working set.
#
# For threads 1 and all CPUs and sets l1, l2, dram, runs `stream-top --headless` and
# likwid-bench alternately REPS times and prints, per cell, stream-top's median, likwid-bench's
# median over the same repetitions, and the ratio.
#
#   bench/vs_likwid.sh                  # both sides
#   bench/vs_likwid.sh --likwid-only    # likwid-bench's half only
#   REPS=9 STORES=nt bench/vs_likwid.sh # non-temporal stores against likwid's stream_mem_*
#
# Environment: REPS (default 5), STORES (normal | nt), THREADS (default "1 <online CPUs>"),
# SETS (default "l1 l2 dram"), STREAM_TOP (the binary; default target/release/stream-top, built
# if missing), LIKWID_KERNEL (likwid-bench kernels to compare against, space-separated; default
# the FMA and plain triads of the CPU's best ISA), LIKWID_DOMAIN (default S0),
# EXTRA (more stream-top flags).
#
# Working sets, the same on both sides. likwid-bench's `-w DOMAIN:SIZE:THREADS` takes the total
# of the three arrays over all threads. stream-top's l1 and l2 give each thread one slice per
# array of (that cache's share per CPU) / 2 / 3, rounded down to 128 bytes; its dram set is
# 4 × all last-level cache per array, split across the threads. The script computes the same
# from sysfs; once stream-top's JSON reports the per-thread array size, that figure is used
# instead (see per_thread_from_json).

set -euo pipefail

REPS=${REPS:-5}
STORES=${STORES:-normal}
SETS=${SETS:-"l1 l2 dram"}
NCPU=$(nproc --all 2>/dev/null || nproc)
THREADS=${THREADS:-"1 $NCPU"}
LIKWID_DOMAIN=${LIKWID_DOMAIN:-S0}
EXTRA=${EXTRA:-}
LIKWID_ONLY=0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STREAM_TOP=${STREAM_TOP:-$ROOT/target/release/stream-top}

for arg in "$@"; do
    case $arg in
        --likwid-only) LIKWID_ONLY=1 ;;
        -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "vs_likwid.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done
case $STORES in normal | nt) ;; *) echo "vs_likwid.sh: STORES must be normal or nt" >&2; exit 2 ;; esac

# --- likwid-bench: install, pick the kernel -------------------------------------------------

if ! command -v likwid-bench > /dev/null; then
    echo "likwid-bench not found: installing the Debian package likwid" >&2
    if ! { apt-get update -qq && apt-get install -y -qq likwid; } > /dev/null 2>&1; then
        echo "vs_likwid.sh: could not install likwid (apt-get install -y likwid)" >&2
        exit 1
    fi
fi

flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }

# likwid-bench's triads for the ISA stream-top dispatches to on this CPU, FMA and plain: which
# is faster depends on the core (on Zen 3, stream_avx beats stream_avx_fma by a tenth in L1),
# so both run and each cell compares against the one with the better median.
if [[ -n ${LIKWID_KERNEL:-} ]]; then
    KERNELS=$LIKWID_KERNEL
elif has avx512f; then
    if [[ $STORES == nt ]]; then KERNELS="stream_mem_avx512"; else KERNELS="stream_avx512_fma stream_avx512"; fi
elif has avx2 && has fma; then
    if [[ $STORES == nt ]]; then KERNELS="stream_mem_avx_fma stream_mem_avx"; else KERNELS="stream_avx_fma stream_avx"; fi
else
    if [[ $STORES == nt ]]; then KERNELS="stream_mem_sse"; else KERNELS="stream_sse"; fi
fi
kernels=$(likwid-bench -a 2> /dev/null || true)
for KERNEL in $KERNELS; do
    if ! grep -q "^$KERNEL " <<< "$kernels"; then
        echo "likwid-bench has no kernel $KERNEL on this build; nothing to compare against" >&2
        exit 1
    fi
    need=""
    case $KERNEL in
        *avx512*) need=avx512f ;;
        *avx_fma*) need=fma ;;
        *avx*) need=avx ;;
        *sse*) need=sse2 ;;
    esac
    if [[ -n $need ]] && ! has "$need"; then
        echo "this CPU lacks $need: likwid-bench's $KERNEL cannot run here" >&2
        exit 1
    fi
done

# --- working sets, as stream-top sizes them ---------------------------------------------------

cache=/sys/devices/system/cpu/cpu0/cache
cpu_list_len() { # "0-3,8-11" -> 8
    local n=0 part
    IFS=, read -ra parts <<< "$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then n=$((n + ${part#*-} - ${part%-*} + 1)); else n=$((n + 1)); fi
    done
    echo $n
}
size_bytes() { # "32K" -> 32768
    local s=$1
    case $s in
        *K) echo $((${s%K} * 1024)) ;;
        *M) echo $((${s%M} * 1024 * 1024)) ;;
        *G) echo $((${s%G} * 1024 * 1024 * 1024)) ;;
        *) echo "$s" ;;
    esac
}
# One CPU's share of cache level $1 (data or unified), bytes.
share_per_cpu() {
    local idx
    for idx in "$cache"/index*; do
        [[ $(cat "$idx/level") == "$1" && $(cat "$idx/type") != Instruction ]] || continue
        echo $(($(size_bytes "$(cat "$idx/size")") / $(cpu_list_len "$(cat "$idx/shared_cpu_list")")))
        return
    done
    echo 0
}
# All last-level cache, bytes: one instance's size × instances.
llc_total() {
    local idx level=0 size=0 sharing=1
    for idx in "$cache"/index*; do
        [[ $(cat "$idx/type") != Instruction ]] || continue
        if (($(cat "$idx/level") > level)); then
            level=$(cat "$idx/level")
            size=$(size_bytes "$(cat "$idx/size")")
            sharing=$(cpu_list_len "$(cat "$idx/shared_cpu_list")")
        fi
    done
    echo $((size * ((NCPU + sharing - 1) / sharing)))
}
# Bytes per array per thread for set $1 with $2 threads.
per_thread_array() {
    case $1 in
        l1) echo $(($(share_per_cpu 1) / 2 / 3 / 128 * 128)) ;;
        l2) echo $(($(share_per_cpu 2) / 2 / 3 / 128 * 128)) ;;
        l3) echo $(($(share_per_cpu 3) / 2 / 3 / 128 * 128)) ;;
        dram) echo $((4 * $(llc_total) / $2 / 128 * 128)) ;;
        *) echo "vs_likwid.sh: unknown set '$1' (l1, l2, l3, dram)" >&2; exit 2 ;;
    esac
}

# --- the two sides -----------------------------------------------------------------------------

# likwid-bench once: GB/s (decimal; likwid's MByte/s / 1000).
likwid_once() { # kernel threads per_thread_array_bytes
    local total=$((3 * $3 * $2)) out
    out=$(likwid-bench -t "$1" -w "$LIKWID_DOMAIN:${total}B:$2" 2>&1) || {
        echo "likwid-bench failed: $(tail -n 3 <<< "$out")" >&2
        echo nan
        return
    }
    awk '/^MByte\/s:/ { printf "%.3f\n", $2 / 1000 }' <<< "$out"
}

# stream-top once: the JSON of one headless run of one cell.
stream_top_json() { # threads set
    local stores=()
    [[ $STORES == nt ]] && stores=(--stores nt)
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    "$STREAM_TOP" --headless --threads "$1" --sets "$2" --format json "${stores[@]}" $EXTRA \
        2> /dev/null
}

# ADAPT when headless lands: where the JSON keeps a cell's median, thread count, set name and
# per-thread array size. The parser walks the document for objects that have `median_gbs` and
# `threads`, and takes the set name from the first of `set`, `set_name`, `working_set`, `name`.
JSON_CELL_PY='
import json, sys
doc = json.load(sys.stdin)
threads, set_name, field = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def cells(o):
    if isinstance(o, dict):
        if "median_gbs" in o and "threads" in o:
            yield o
        for v in o.values():
            yield from cells(v)
    elif isinstance(o, list):
        for v in o:
            yield from cells(v)
def name(c):
    for k in ("set", "set_name", "working_set", "name"):
        v = c.get(k)
        if isinstance(v, dict):
            v = v.get("name")
        if isinstance(v, str):
            return v
for c in cells(doc):
    if c["threads"] == threads and name(c) == set_name:
        keys = {"median": ["median_gbs"],
                "array": ["per_thread_array_bytes", "array_bytes_per_thread", "bytes_per_array_per_thread"]}
        for k in keys[field]:
            if k in c:
                print(c[k]); sys.exit(0)
        sys.exit(3)
sys.exit(4)
'
json_cell() { python3 -c "$JSON_CELL_PY" "$@" 2> /dev/null; }

median() { # numbers on stdin (blank lines and nan skipped)
    awk 'NF && $1 != "nan"' | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# One stream-top run of the cell $t, $set: appends its median to st_runs.
st_once() {
    local json m p
    if json=$(stream_top_json "$t" "$set") &&
        m=$(json_cell "$t" "$set" median <<< "$json"); then
        st_runs+=("$m")
        # Prefer stream-top's own per-thread array size once it reports one.
        if p=$(json_cell "$t" "$set" array <<< "$json") && [[ $p != "$per" ]]; then
            echo "note: stream-top reports $p bytes per array per thread for $set," \
                "the script computed $per; using stream-top's" >&2
            per=$p
        fi
    else
        echo "stream-top --headless failed or gave no cell for $t threads, $set" >&2
        LIKWID_ONLY=1
    fi
}

# --- run -------------------------------------------------------------------------------------------

if [[ $LIKWID_ONLY == 0 && ! -x $STREAM_TOP ]]; then
    echo "building stream-top (cargo build --release)" >&2
    (cd "$ROOT" && cargo build --release -q)
fi

echo "# stream-top vs likwid-bench ($KERNELS), stores $STORES, $REPS repetitions, alternating"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
if grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null; then
    echo "note: THP is madvise-only: stream-top's arrays get huge pages, likwid-bench's do not," \
        "which favours stream-top at dram (docs/kernels.md)"
fi
echo
echo "| threads | set | per-thread array | stream-top median GB/s | likwid-bench kernel | likwid-bench median GB/s | ratio |"
echo "|---|---|---|---:|---|---:|---:|"

for t in $THREADS; do
    for set in $SETS; do
        per=$(per_thread_array "$set" "$t")
        st_runs=()
        declare -A lk_runs=()
        for ((rep = 0; rep < REPS; rep++)); do
            # Alternate which side goes first.
            if ((rep % 2 == 0)) && ((LIKWID_ONLY == 0)); then st_once; fi
            for k in $KERNELS; do
                lk_runs[$k]+="$(likwid_once "$k" "$t" "$per") "
            done
            if ((rep % 2 == 1)) && ((LIKWID_ONLY == 0)); then st_once; fi
        done
        # The likwid-bench kernel with the best median in this cell.
        lk=nan
        lk_kernel=-
        for k in $KERNELS; do
            m=$(tr ' ' '\n' <<< "${lk_runs[$k]}" | median)
            if [[ $lk == nan ]] || awk -v a="$m" -v b="$lk" 'BEGIN { exit !(a > b) }'; then
                lk=$m
                lk_kernel=$k
            fi
        done
        unset lk_runs
        if ((${#st_runs[@]} > 0)); then
            st=$(printf '%s\n' "${st_runs[@]}" | median)
            ratio=$(awk -v a="$st" -v b="$lk" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
        else
            st="-"
            ratio="-"
        fi
        human=$(awk -v b="$per" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576; else printf "%.2f KiB", b / 1024 }')
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$set" "$human" "$st" "$lk_kernel" "$lk" "$ratio"
    done
done
echo
echo "likwid-bench runs '-t KERNEL -w $LIKWID_DOMAIN:<3 × per-thread array × threads>B:<threads>';" \
    "each cell compares against the kernel with the better median."
