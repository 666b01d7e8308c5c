#!/usr/bin/env bash
# The monitor's own CPU at a lowered duty cycle: starts `stream-top --sets l1 --threads 2` in a
# detached tmux session, presses `d` twice (100 % → 50 % → 10 %), lets it settle, then reads
# utime+stime of every task of the process from /proc/PID/task/*/stat before and after a
# 10 s window and prints the CPU used, percent of one CPU, in all and per thread.
#
#   bench/duty-cpu.sh [BINARY] [SECONDS]      (default target/debug/stream-top, 10)
set -euo pipefail
bin=${1:-target/debug/stream-top}
secs=${2:-10}
session=duty-cpu-$$
hz=$(getconf CLK_TCK)
tmux new-session -d -s "$session" -x 160 -y 50 "$bin --sets l1 --threads 2"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT
sleep 4
pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
tmux send-keys -t "$session" d
sleep 0.5
tmux send-keys -t "$session" d
sleep 3
# name ticks, one line per task
ticks() {
    for f in /proc/"$pid"/task/*/stat; do
        # fields after the last ')': state is field 3, utime 14, stime 15
        local line name rest
        line=$(cat "$f" 2>/dev/null) || continue
        name=${line#*(}; name=${name%)*}
        rest=${line##*) }
        set -- $rest
        echo "${f%/stat} $name $(( ${12} + ${13} ))"
    done
}
before=$(ticks)
t0=$(date +%s.%N)
sleep "$secs"
after=$(ticks)
t1=$(date +%s.%N)
tmux capture-pane -p -t "$session" | grep -o 'duty[ a-z]*[0-9]* %\|monitor CPU [^·]*' | sort -u || true
join <(echo "$before" | sort) <(echo "$after" | sort) | awk -v hz="$hz" -v t0="$t0" -v t1="$t1" '
    { d = ($5 - $3) / hz; total += d; by[$2] += d }
    END {
        el = t1 - t0
        for (n in by) printf "  %-16s %6.1f %% of one CPU\n", n, 100 * by[n] / el
        printf "process: %.1f %% of one CPU over %.1f s\n", 100 * total / el, el
    }'
