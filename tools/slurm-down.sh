#!/usr/bin/env bash
# Stops the single-node Slurm started by tools/slurm-up.sh: slurmd and
# slurmctld, by the process ids in their pid files (and munged, by its pid
# file, with --munge).  Jobs still running are ended by slurmd's exit.
#   tools/slurm-down.sh [--munge]
set -uo pipefail
run=/run/kmaha-slurm
stop() {
  local pid
  [ -f "$1" ] || return 0
  pid=$(cat "$1" 2>/dev/null)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && echo "slurm-down: $2 (pid $pid) did not stop" >&2
  fi
  rm -f "$1"
}
stop "$run/slurmd.pid" slurmd
stop "$run/slurmctld.pid" slurmctld
if [ "${1:-}" = "--munge" ]; then
  stop /run/munge/munged.pid munged
fi
echo "Slurm stopped"
