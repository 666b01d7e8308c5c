#!/bin/sh
# Slurm prolog (Prolog=/etc/slurm/prolog.d/stream-top.sh in slurm.conf), or a Node Health
# Check command: a short all-core DRAM triad and the DRAM latency (about 10 s at most) against
# this node's class reference, written by
# `stream-top fleet /shared/stream-top --export-reference /shared/stream-top/reference.json`
# (with deploy/slurm/fleet.sbatch's snapshots, it carries the class's latency too).
# Exit 0 ok; 1 SLOW (slow in two readings), so Slurm drains the node with the line as its reason;
# 3 UNSURE (slow in one reading only), 2 when it cannot check: Slurm drains on these too; a site
# that would rather requeue the job than drain on one reading runs check without exec and maps
# 3 to its requeue.
STREAM_TOP=${STREAM_TOP:-/usr/local/bin/stream-top}
# STREAM_TOP_CHECK replaces the reference (e.g. "--min-gbs 300").
# shellcheck disable=SC2086
exec "$STREAM_TOP" check ${STREAM_TOP_CHECK:---against /shared/stream-top/reference.json}
