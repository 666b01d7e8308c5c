#!/bin/sh
# A regression gate for CI: is the change (B, "after") slower than before (A) by more than
# GATE per cent in any cell? Each side is measured as REPETITIONS separate processes, the two
# sides in turn (A B A B ...), so that what drifts on the host lands on both sides alike and
# the gate's one-sided test at 1 % holds. Each cell's loop and page layout is settled once, by
# the trial of the first BEFORE process, and every other process of both sides takes them from
# its snapshot (`--choices-from`): two trials may settle differently, and then a cell would
# differ by more than the change.
#
# Exit codes: 0 passed (every cell shown not slower by more than GATE %), 1 failed (a cell is
# slower by more than GATE %), 3 undecided (the spread is too wide to tell: the output names
# the cells and how many processes a side would decide them), 2 a mistake in the command.
#
# BEFORE and AFTER are the two commands (the old and the new binary, or one binary with the
# setting changed); GRID is the grid both measure.
set -u
BEFORE=${BEFORE:-stream-top}
AFTER=${AFTER:-stream-top}
GRID=${GRID:---sets l2,dram --threads 1}
REPETITIONS=${REPETITIONS:-5}
GATE=${GATE:-5}
OUT=${OUT:-gate}

CHOICES="$OUT/choices.json"

rm -rf "$OUT/before" "$OUT/after" "$CHOICES"
mkdir -p "$OUT/before" "$OUT/after"
# shellcheck disable=SC2086 # GRID is a list of flags
$BEFORE --headless $GRID --name before --export "$OUT/before" --format json >"$CHOICES" || exit
i=1
while [ "$i" -le "$REPETITIONS" ]; do
    if [ "$i" -gt 1 ]; then
        # shellcheck disable=SC2086
        $BEFORE --headless $GRID --choices-from "$CHOICES" --name before \
            --export "$OUT/before" >/dev/null || exit
    fi
    # shellcheck disable=SC2086
    $AFTER --headless $GRID --choices-from "$CHOICES" --name after \
        --export "$OUT/after" >/dev/null || exit
    i=$((i + 1))
done
exec $AFTER compare --fail-if-slower "$GATE" "$OUT/before" -- "$OUT/after"
