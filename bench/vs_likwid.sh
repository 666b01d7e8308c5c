#!/usr/bin/env bash
# stream-top headless against likwid-bench, cell by cell, same working set, interleaved.
#
# For threads 1 and all CPUs and sets l1, l2, dram, runs `stream-top --headless` (its defaults:
# --kernel auto, --huge-pages auto) and every likwid-bench triad this CPU runs, alternately,
# REPS times, and prints, per cell, stream-top's median and the loop it chose, the median of
# likwid-bench's best kernel over the same repetitions (best of any instruction set), their
# bests, the ratios, and each side's fraction of the core's own port limit. At dram it also
# runs stream-top with --huge-pages off, interleaved the same way, and prints a second table:
# stream-top's default (huge pages by rule there) against off, and each against likwid-bench
# (which gets no huge pages when THP is madvise-only).
#
#   bench/vs_likwid.sh                  # both sides
#   bench/vs_likwid.sh --likwid-only    # likwid-bench's half only
#   REPS=9 STORES=nt bench/vs_likwid.sh # non-temporal stores against likwid's stream_mem*
#
#   OP=all THREADS=1 SETS="l1 l2" bench/vs_likwid.sh   # every op, one table
#
# OP (default triad) is the stream-top op to compare (`--op`), or several (space- or
# comma-separated; OP:nt is that op with --stores nt; `all`: triad copy scale add read write
# update, then triad copy scale add write update with nt), each run as its own comparison and
# their rows printed in one table with the op first (`nt` marked), their notes once under it:
# triad against likwid-bench's stream*, copy against copy*, read against load* and sum*, write
# against store*, update against update* (the _mem kernels with STORES=nt). likwid-bench has no
# scale or add kernel (nor a non-temporal update): those rows give stream-top's figures and – in
# likwid-bench's columns, with the reason under the table (bench/vs_stream.sh compares scale and
# add against STREAM). The working set given to likwid-bench is the arrays the op touches (copy
# 2, read/write/update 1, triad 3), each as large as stream-top's.
#
# Of port limit: each cell's bytes per cycle per thread over what the core's L1 load and store
# ports allow the op at the vector width of stream-top's chosen loop (figures.port_limit in
# stream-top's JSON; docs/cpu-limits.md). stream-top's is the median over its runs of its own
# fraction; likwid-bench's is its median GB/s per thread ÷ (that limit × the clock stream-top
# measured: the counted clock where counters gave one, else info.clock.ghz). `–` with the
# JSON's reason where the limit is unknown. It is an L1 ceiling: at l2 and dram an upper bound
# far above what those levels deliver.
#
# Environment: REPS (default 5), STORES (normal | nt), OP, THREADS (default "1 <online CPUs>"),
# SETS (default "l1 l2 dram"), ROUNDS (stream-top --rounds, default 21), HUGE_AB (1: the
# dram huge-page comparison, default; 0: skip it), NICE (run both sides under `nice -n NICE`;
# default: not), STREAM_TOP (the binary; default target/release/stream-top, built with
# `cargo build --release` first; a STREAM_TOP given is run as it is), LIKWID_KERNEL
# (likwid-bench kernels to compare against, space-separated; default every double-precision
# kernel of the op this CPU runs), LIKWID_DOMAIN (default S0), EXTRA (more stream-top flags).
#
# Working sets, the same on both sides. stream-top's JSON gives each cell's array size in
# bytes per array, `{"kind": "per_thread", "bytes": B}` or `{"kind": "split", "bytes": B}`;
# likwid-bench's `-w DOMAIN:SIZE:T` takes the total of the three arrays over all threads:
# 3 × B × T, or 3 × B for a split set.
# Durations, the same on both sides. likwid-bench gets `-i N`, N = the bytes of stream-top's
# timed rounds / the bytes of one pass over the three arrays, from the cell's first
# stream-top run, so its timed part lasts about as long as stream-top's timed rounds.
# Figures. One stream-top run gives its median round (figures.median_gbs); one likwid-bench
# run gives one figure (MByte/s / 1000). Per cell: the median over the repetitions of each;
# "best" is the best of those per-run figures. "whole run" is stream-top's bytes over time of
# all its timed rounds together, which is what likwid-bench's single figure is.
# stderr gets one line per run ("run: ..."; stream-top's fields: median best whole-run-GB/s
# timed-s likwid-total array-bytes huge-bytes passes) and one per finished cell.

set -euo pipefail

REPS=${REPS:-5}
STORES=${STORES:-normal}
OP=${OP:-triad}
[[ $OP == all ]] && OP="triad copy scale add read write update triad:nt copy:nt scale:nt add:nt write:nt update:nt"
OP=${OP//,/ }
if [[ $OP == *" "* ]]; then
    # Several ops: this script once per op, the rows of their main tables in one table, and
    # their notes and footnotes once each under it.
    [[ " $* " == *" --help "* || " $* " == *" -h "* ]] && OP=triad exec "$0" --help
    for op in $OP; do
        case ${op%:nt} in
            triad | copy | scale | add | read | write | update) ;;
            *) echo "vs_likwid.sh: OP has '$op', not an op this script compares (triad, copy, scale, add, read, write, update, each optionally :nt)" >&2; exit 2 ;;
        esac
    done
    rows=()
    notes=()
    header=""
    if [[ -z ${STREAM_TOP:-} && " $* " != *" --likwid-only "* ]]; then
        echo "building stream-top (cargo build --release)" >&2
        (cd "$(dirname "$0")/.." && cargo build --release -q)
        STREAM_TOP=$(cd "$(dirname "$0")/.." && pwd)/target/release/stream-top
    fi
    export STREAM_TOP
    for op in $OP; do
        stores=$STORES
        [[ $op == *:nt ]] && stores=nt
        label=${op%:nt}
        [[ $stores == nt ]] && label+=" nt"
        # One op's failed run costs its rows, not the table.
        out=$(OP=${op%:nt} STORES=$stores "$0" "$@") || {
            notes+=("$label: its run failed (exit $?); no rows")
            continue
        }
        if [[ -z $header ]]; then
            echo "# stream-top vs likwid-bench, every op ($OP; \`:nt\` = --stores nt), $REPS repetitions, alternating"
            sed -n '2,/^$/p' <<< "$out" | sed '/^stream-top:\|^likwid-bench:\|^note:/d'
            header=$(grep -m1 '^| threads | set | array |' <<< "$out")
        fi
        while IFS= read -r row; do rows+=("| $label $row"); done < <(
            awk '/^\| threads \| set \| array \|/ { on = 1; next } on && /^\|---/ { next } on && /^\|/ { print; next } on { exit }' <<< "$out")
        while IFS= read -r n; do notes+=("$n"); done < <(grep '^note:\|^footnote:' <<< "$out" | sed "s/^footnote: /$label: /")
    done
    [[ -n $header ]] || { printf '%s\n' "${notes[@]}" >&2; exit 1; }
    echo "| op $header"
    awk -F'|' '{ printf "|"; for (i = 2; i < NF; i++) printf "---|"; print "" }' <<< "| op $header"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Each op's rows from its own run of this script (stream-top --op OP against likwid-bench's kernels for that op, of any instruction set)."
    printf '%s\n' "${notes[@]}" | awk '!seen[$0]++'
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
case $OP in
    triad) LK_BASE=(stream) ARRAYS=3 ;;
    copy) LK_BASE=(copy) ARRAYS=2 ;;
    scale) LK_BASE=() ARRAYS=2 ;;
    add) LK_BASE=() ARRAYS=3 ;;
    read) LK_BASE=(load sum) ARRAYS=1 ;;
    write) LK_BASE=(store) ARRAYS=1 ;;
    update) LK_BASE=(update) ARRAYS=1 ;;
    *) echo "vs_likwid.sh: OP=$OP is not an op this script compares (triad, copy, scale, add, read, write, update)" >&2; exit 2 ;;
esac
SETS=${SETS:-"l1 l2 dram"}
NCPU=$(nproc --all 2> /dev/null || nproc)
THREADS=${THREADS:-"1 $NCPU"}
ROUNDS=${ROUNDS:-21}
HUGE_AB=${HUGE_AB:-1}
NICE=${NICE:-}
LIKWID_DOMAIN=${LIKWID_DOMAIN:-S0}
EXTRA=${EXTRA:-}
LIKWID_ONLY=0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STREAM_TOP_GIVEN=${STREAM_TOP:-}
STREAM_TOP=${STREAM_TOP:-$ROOT/target/release/stream-top}

for arg in "$@"; do
    case $arg in
        --likwid-only) LIKWID_ONLY=1 ;;
        -h | --help) sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "vs_likwid.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done
case $STORES in normal | nt) ;; *) echo "vs_likwid.sh: STORES must be normal or nt" >&2; exit 2 ;; esac
command -v python3 > /dev/null || { echo "vs_likwid.sh: needs python3 to read stream-top's JSON" >&2; exit 1; }
run=()
[[ -n $NICE ]] && run=(nice -n "$NICE")

# --- likwid-bench: install, pick the kernel -------------------------------------------------

if ! command -v likwid-bench > /dev/null; then
    echo "likwid-bench not found: installing the Debian package likwid (apt-get install -y likwid)" >&2
    if ! { apt-get update -qq && apt-get install -y -qq likwid; } > /dev/null 2>&1; then
        echo "vs_likwid.sh: could not install likwid (apt-get install -y likwid)" >&2
        exit 1
    fi
fi

flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }

# likwid-bench's double-precision triads of every instruction set this CPU runs (scalar, SSE,
# AVX, AVX-512, each plain and FMA where likwid has both; the `_mem` ones with non-temporal
# stores): which is fastest depends on the core, the level and the thread count (on Zen 3,
# stream_avx beats stream_avx_fma by a tenth in L1; on Ice Lake the AVX kernels beat AVX-512 in
# L1), so all run and each cell compares against the one with the best median.
kernel_needs() { # the CPU flag a likwid-bench kernel needs
    case $1 in
        *avx512*) echo avx512f ;;
        *fma*) echo fma ;;
        *avx*) echo avx ;;
        *) echo sse2 ;;
    esac
}
isa_notes=()
no_peer=""
all_kernels=$(likwid-bench -a 2> /dev/null || true)
if [[ -n ${LIKWID_KERNEL:-} ]]; then
    KERNELS=$LIKWID_KERNEL
    for k in $KERNELS; do
        if ! grep -q "^$k " <<< "$all_kernels"; then
            echo "likwid-bench has no kernel $k on this build; nothing to compare against" >&2
            exit 1
        fi
        if ! has "$(kernel_needs "$k")"; then
            echo "this CPU lacks $(kernel_needs "$k"): likwid-bench's $k cannot run here" >&2
            exit 1
        fi
    done
else
    KERNELS=""
    want=""
    for base in "${LK_BASE[@]}"; do
        # read's counterparts have no non-temporal stores: its normal kernels either way.
        if [[ $STORES == nt && $base != load && $base != sum ]]; then base+=_mem; fi
        for isa in "" _sse _sse_fma _avx _avx_fma _avx512 _avx512_fma; do want+=" $base$isa"; done
    done
    for k in $want; do
        if ! has "$(kernel_needs "$k")"; then
            isa_notes+=("this CPU lacks $(kernel_needs "$k"): likwid-bench's $k cannot run here")
        elif ! grep -q "^$k " <<< "$all_kernels"; then
            [[ $OP == triad ]] && isa_notes+=("this likwid-bench build has no $k")
        else
            KERNELS+="${KERNELS:+ }$k"
        fi
    done
    # No counterpart: stream-top's figures alone, likwid-bench's columns – with this reason.
    if [[ -z $KERNELS ]]; then
        case $OP in
            scale | add) no_peer="likwid-bench has no scale/add kernel; bench/vs_stream.sh compares them against STREAM" ;;
            *) no_peer="likwid-bench has no ${LK_BASE[*]/%/_mem*} kernel (non-temporal stores) for $OP" ;;
        esac
    fi
fi

# --- working sets from sysfs, for --likwid-only (stream-top's JSON is used otherwise) ----------

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
# likwid-bench's total (three arrays, all threads) for set $1 with $2 threads, as stream-top
# sizes it: l1..l3 per thread, dram split.
sysfs_total() {
    case $1 in
        l1) echo $((ARRAYS * $2 * ($(share_per_cpu 1) / 2 / 3 / 128 * 128))) ;;
        l2) echo $((ARRAYS * $2 * ($(share_per_cpu 2) / 2 / 3 / 128 * 128))) ;;
        l3) echo $((ARRAYS * $2 * ($(share_per_cpu 3) / 2 / 3 / 128 * 128))) ;;
        dram) echo $((ARRAYS * (4 * $(llc_total) / 128 * 128))) ;;
        *) echo "vs_likwid.sh: unknown set '$1' for --likwid-only (l1, l2, l3, dram)" >&2; exit 2 ;;
    esac
}

# --- the two sides -----------------------------------------------------------------------------

# likwid-bench once: "GB/s seconds" (decimal; likwid's MByte/s / 1000), or "nan nan".
likwid_once() { # kernel threads total_bytes iterations (0: likwid's choice)
    local out iarg=()
    (($4 > 0)) && iarg=(-i "$4")
    out=$("${run[@]}" likwid-bench -t "$1" -w "$LIKWID_DOMAIN:${3}B:$2" "${iarg[@]}" 2>&1) || {
        echo "likwid-bench failed: $(tail -n 3 <<< "$out")" >&2
        echo "nan nan"
        return
    }
    awk '/^MByte\/s:/ { g = $2 / 1000 } /^Time:/ { s = $2 + 0 }
        END { if (g > 0) printf "%.3f %.3f\n", g, s; else print "nan nan" }' <<< "$out"
}

# The cell of one stream-top JSON document (the first run, not the rerun) as one line:
#   median best whole_run_gbs timed_seconds likwid_total array_bytes huge_bytes passes loop
#   port_fraction port_bytes_per_cycle ghz why core
# (loop: the loop and layout it ran, spaces as _, e.g. avx2_ymm_mul+add,huge; - if unrecorded.
# port_fraction: figures.port_limit's fraction, the median round's bytes per cycle per thread
# over what the core's load and store ports allow this loop; port_bytes_per_cycle: that limit;
# ghz: the clock those cycles come from (the counted one where counters gave it, otherwise
# info.clock's estimate); nan where unknown, and why: the reason, spaces as _, or -; core: the
# core design and the source of its row, spaces as _, or -.)
JSON_CELL_PY='
import json, sys
doc = json.load(sys.stdin)
threads, set_name, op, arrays = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
for c in doc["cells"]:
    if c["threads"] != threads or c["set_name"] != set_name or c.get("rerun"):
        continue
    if c.get("op", "triad") != op:
        continue
    f, hist, size = c["figures"], c["history"], c["size"]
    b = sum(r["bytes"] for r in hist)
    ns = sum(r["span_ns"] for r in hist)
    per_array = size["bytes"] * (threads if size["kind"] == "per_thread" else 1)
    total = arrays * per_array
    ch = c.get("choice")
    loop = "-" if ch is None else ch["variant"].replace(" ", "_") + ("," + ("huge" if ch["huge_pages"] else "nohuge"))
    pl = f.get("port_limit") or {"unknown": {"reason": "the JSON records no CPU design"}}
    known = pl.get("known")
    frac = known and known.get("fraction")
    limit = known["bytes_per_cycle"] if known else None
    if f.get("bytes_per_cycle_from") == "counted":
        ghz = f["counters"]["ghz"]
    else:
        ghz = (doc["info"].get("clock") or {}).get("ghz")
    why = "-"
    if not known:
        why = pl["unknown"]["reason"]
    elif frac is None:
        why = "no measured bytes per cycle"
    nan = lambda v: "nan" if v is None else v
    print(f["median_gbs"], f["best_gbs"], b / ns, ns / 1e9, total, c.get("array_bytes", 0),
          c.get("huge_bytes", 0), round(b / total), loop, nan(frac), nan(limit), nan(ghz),
          why.replace(" ", "_"),
          (known["core"] + " (" + known["source"] + ")").replace(" ", "_") if known else "-")
    sys.exit(0)
sys.exit(4)
'

# stream-top once for the cell $t, $set, with its defaults ($1 = default) or --huge-pages off
# ($1 = off): the cell's line, or nothing.
st_once() {
    local flags=() json
    [[ $STORES == nt ]] && flags+=(--stores nt)
    [[ $1 == off ]] && flags+=(--huge-pages off)
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    if json=$("${run[@]}" "$STREAM_TOP" --headless --op "$OP" --threads "$t" --sets "$set" \
        --rounds "$ROUNDS" --format json "${flags[@]}" $EXTRA 2> /dev/null) &&
        python3 -c "$JSON_CELL_PY" "$t" "$set" "$OP" "$ARRAYS" <<< "$json"; then
        return
    fi
    echo "stream-top --headless failed or gave no cell for $t threads, $set ($1)" >&2
}

median() { # numbers on stdin (blank lines and nan skipped)
    awk 'NF && $1 != "nan"' | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
best() { awk 'NF && $1 != "nan" { if (!n++ || $1 > m) m = $1 } END { if (n) print m; else print "nan" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "nan" && a != "-" && b != "nan" && b > 0) printf "%.3f", a / b; else print "–" }'; }
gbs() { awk -v a="$1" 'BEGIN { if (a == "nan" || a == "-") print "–"; else printf "%.1f", a }'; }
percent() { awk -v a="$1" 'BEGIN { if (a == "nan") print "–"; else printf "%.1f %%", 100 * a }'; }
col() { awk -v k="$1" '{ print $k }'; } # field k of every line on stdin
human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576; else printf "%.2f KiB", b / 1024 }'; }

# --- run -------------------------------------------------------------------------------------------

if ((LIKWID_ONLY == 0)) && [[ -z $STREAM_TOP_GIVEN ]]; then
    echo "building stream-top (cargo build --release)" >&2
    (cd "$ROOT" && cargo build --release -q)
fi

thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null || true)
echo "# stream-top vs likwid-bench ($KERNELS), stores $STORES, $REPS repetitions, alternating"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $NCPU CPUs; likwid-bench $(likwid-bench -v 2>&1 | grep -om1 'Version [0-9.]*' || echo 'version ?')"
st_flags=""
[[ $STORES == nt ]] && st_flags=" --stores nt"
echo "stream-top: $STREAM_TOP --headless --op $OP --threads T --sets S --rounds $ROUNDS --format json [--huge-pages off]$st_flags${EXTRA:+ $EXTRA}"
echo "likwid-bench: likwid-bench -t KERNEL -w $LIKWID_DOMAIN:<$ARRAYS × bytes per array × threads, or $ARRAYS × split bytes>B:T -i <passes in stream-top's timed rounds>"
[[ -n $NICE ]] && echo "both sides under nice -n $NICE"
for n in "${isa_notes[@]}"; do echo "note: $n"; done
echo "transparent huge pages: ${thp:-unknown}; stream-top madvises its arrays (by trial in cache, huge pages at dram), likwid-bench does not"
echo "of port limit: bytes per cycle per thread over what this core's L1 load and store ports allow the op's arrays at the vector width of stream-top's chosen loop (figures.port_limit in stream-top's JSON; docs/cpu-limits.md); stream-top's is its own median over the runs, likwid-bench's is its GB/s per thread ÷ (that limit × the clock stream-top measured, info.clock or the counted one). It is an L1 ceiling: at l2 and dram an upper bound far above what those levels deliver."
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

rows=()
hp_rows=()
footnotes=()
cores=()
for t in $THREADS; do
    for set in $SETS; do
        ab=0
        [[ $HUGE_AB == 1 && $set == dram && $LIKWID_ONLY == 0 ]] && ab=1
        total=$(sysfs_total "$set" "$t")
        iters=0
        on=()
        off=()
        declare -A lk=() lk_s=()
        # Order in even repetitions: stream-top, the likwid kernels, stream-top without huge
        # pages; odd repetitions run that backwards.
        order=()
        ((LIKWID_ONLY == 0)) && order+=(st)
        for k in $KERNELS; do order+=("lk:$k"); done
        ((ab)) && order+=(st-off)
        for ((rep = 0; rep < REPS; rep++)); do
            seq=("${order[@]}")
            if ((rep % 2)); then
                seq=()
                for ((i = ${#order[@]} - 1; i >= 0; i--)); do seq+=("${order[i]}"); done
            fi
            for step in "${seq[@]}"; do
                case $step in
                    st)
                        line=$(st_once default) || true
                        [[ -n $line ]] || continue
                        on+=("$line")
                        echo "run: $t threads, $set, rep $rep, stream-top: $line" >&2
                        # Sizes and likwid-bench's passes from the cell's first run.
                        if ((iters == 0)); then
                            read -r _ _ _ _ total _ _ iters _ <<< "$line"
                        fi
                        ;;
                    st-off)
                        line=$(st_once off) || true
                        [[ -n $line ]] && off+=("$line")
                        echo "run: $t threads, $set, rep $rep, stream-top --huge-pages off: $line" >&2
                        ;;
                    lk:*)
                        k=${step#lk:}
                        read -r g s <<< "$(likwid_once "$k" "$t" "$total" "$iters")"
                        lk[$k]+="$g "
                        lk_s[$k]+="$s "
                        echo "run: $t threads, $set, rep $rep, $k: $g GB/s, $s s" >&2
                        ;;
                esac
            done
        done
        # The likwid-bench kernel with the best median in this cell; the others for reference.
        lkm=nan
        lkk=–
        declare -A med=()
        for k in $KERNELS; do
            med[$k]=$(tr ' ' '\n' <<< "${lk[$k]}" | median)
            if [[ $lkm == nan ]] || awk -v a="${med[$k]}" -v b="$lkm" 'BEGIN { exit !(a > b) }'; then
                lkm=${med[$k]}
                lkk=$k
            fi
        done
        others=""
        for k in $KERNELS; do
            [[ $k == "$lkk" ]] || others+="${others:+, }$k $(gbs "${med[$k]}")"
        done
        unset med
        lkb=$(tr ' ' '\n' <<< "${lk[$lkk]:-}" | best)
        lks=$(tr ' ' '\n' <<< "${lk_s[$lkk]:-}" | median)
        unset lk lk_s
        if ((${#on[@]} > 0)); then
            stm=$(printf '%s\n' "${on[@]}" | col 1 | median)
            stb=$(printf '%s\n' "${on[@]}" | col 1 | best)
            stw=$(printf '%s\n' "${on[@]}" | col 3 | median)
            sts=$(printf '%s\n' "${on[@]}" | col 4 | median)
            # The loop and layout stream-top chose, most often first (one per run).
            stl=$(printf '%s\n' "${on[@]}" | col 9 | sort | uniq -c | sort -rn |
                awk '{ printf "%s%s %s×", (NR > 1 ? ", " : ""), $2, $1 }' | tr '_' ' ')
            # Of the core's port limit: stream-top's own fraction (median over the runs), and
            # likwid-bench's median per thread over the same limit at stream-top's clock.
            stp=$(printf '%s\n' "${on[@]}" | col 10 | median)
            plim=$(printf '%s\n' "${on[@]}" | col 11 | median)
            ghz=$(printf '%s\n' "${on[@]}" | col 12 | median)
            why=$(printf '%s\n' "${on[@]}" | col 13 | grep -vm1 '^-$' | tr '_' ' ' || true)
            core=$(printf '%s\n' "${on[@]}" | col 14 | grep -vm1 '^-$' | tr '_' ' ' || true)
            [[ -n $core ]] && cores+=("$core")
        else
            stm=- stb=- stw=- sts=- stl=- stp=nan plim=nan ghz=nan why="no stream-top run gave this cell"
        fi
        lkp=$(awk -v g="$lkm" -v t="$t" -v l="$plim" -v c="$ghz" 'BEGIN {
            if (g == "nan" || l == "nan" || c == "nan" || l * c <= 0) print "nan"; else print g / t / (l * c) }')
        [[ -n $why && $stp == nan ]] && footnotes+=("port limit – at $t threads, $set: $why")
        per=$((total / ARRAYS))
        [[ $set == dram ]] || per=$((per / t))
        rows+=("$(printf '| %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s | **%s** | %s | %s | %s / %s | %s | %s | %s |' \
            "$t" "$set" "$(human "$per")" "$([[ $set == dram ]] && echo ' in all' || echo '/thread')" \
            "$stl" "$(gbs "$stm")" "$(gbs "$stb")" "$(gbs "$stw")" "$lkk" "$(gbs "$lkm")" "$(gbs "$lkb")" \
            "$(ratio "$stm" "$lkm")" "$(ratio "$stb" "$lkb")" "$(ratio "$stw" "$lkm")" \
            "$(percent "$stp")" "$(percent "$lkp")" \
            "$(awk -v l="$plim" -v c="$ghz" 'BEGIN { if (l == "nan") print "–"; else if (c == "nan") printf "%g B/cycle", l; else printf "%g B/cycle × %.2f GHz", l, c }')" \
            "$(awk -v a="$sts" -v b="$lks" 'BEGIN { if (a == "-" || b == "nan") print "–"; else printf "%.2f / %.2f", a, b }')" \
            "${others:-–}")")
        if ((ab)); then
            offm=$(printf '%s\n' "${off[@]}" | col 1 | median)
            offb=$(printf '%s\n' "${off[@]}" | col 1 | best)
            hon=$(printf '%s\n' "${on[@]}" | awk '{ a += $6; h += $7 } END { if (a) printf "%.0f %%", 100 * h / a; else print "-" }')
            hoff=$(printf '%s\n' "${off[@]}" | awk '{ a += $6; h += $7 } END { if (a) printf "%.0f %%", 100 * h / a; else print "-" }')
            hp_rows+=("$(printf '| %s | %s | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s / %s |' \
                "$t" "$set" "$(gbs "$stm")" "$(gbs "$stb")" "$(gbs "$offm")" "$(gbs "$offb")" \
                "$(gbs "$lkm")" "$(gbs "$lkb")" \
                "$(ratio "$stm" "$offm")" "$(ratio "$stb" "$offb")" \
                "$(ratio "$stm" "$lkm")" "$(ratio "$stb" "$lkb")" \
                "$(ratio "$offm" "$lkm")" "$(ratio "$offb" "$lkb")" "$hon" "$hoff")")
        fi
        echo "done: $t threads, $set (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
done

echo "| threads | set | array | stream-top loop, pages (runs) | stream-top median GB/s | best | whole run | likwid-bench best kernel | likwid-bench median GB/s | best | ratio of medians | ratio of bests | whole run / likwid median | of port limit, stream-top / likwid | port limit | timed s, stream-top / likwid | other likwid kernels, median |"
echo "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
echo
[[ -n $no_peer ]] && echo "footnote: likwid-bench's columns are – : $no_peer."
printf 'footnote: %s\n' "${footnotes[@]}" | awk '$0 != "footnote: " && !seen[$0]++'
printf 'note: port limit from the row for %s\n' "${cores[@]}" | awk '!/for $/ && !seen[$0]++'
echo "stream-top with its defaults (--kernel auto --huge-pages auto: each working set's loop and layout by trial)." \
    "Per repetition one stream-top run (its median round; whole run = bytes / time" \
    "of all its timed rounds) and one run of each likwid-bench kernel; medians and bests over the $REPS" \
    "repetitions. Each cell compares against the likwid-bench kernel with the best median, of any instruction set."
if ((${#hp_rows[@]} > 0)); then
    echo
    echo "Huge pages at dram (medians, bests in brackets; stream-top's default there is huge pages, by rule;" \
        "likwid-bench's arrays are on 4 KiB pages when THP is madvise-only):"
    echo
    echo "| threads | set | stream-top default (huge pages) | stream-top --huge-pages off | likwid-bench | default / off | default / likwid | off / likwid | arrays on huge pages, default / off |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${hp_rows[@]}"
fi
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
