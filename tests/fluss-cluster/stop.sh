#!/usr/bin/env bash
# Stop the Fluss cluster that start.sh started in WORKDIR: the tablet servers
# (together), then the coordinator, then ZooKeeper. Each gets SIGTERM, then
# SIGKILL if it is still alive after FLUSS_STOP_TIMEOUT seconds (default 30).
# Only the pids recorded in WORKDIR/pids are signalled.
#
# Usage: stop.sh [--clean] [WORKDIR]
#   WORKDIR  default: $FLUSS_CLUSTER_DIR or /tmp/riverlet-fluss-cluster
#   --clean  afterwards remove WORKDIR's conf, data, logs and env files too
#            (by default only the pid files are removed; data and logs stay)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

clean=0
workdir=""
for arg in "$@"; do
  case "$arg" in
    --clean) clean=1 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "stop.sh: unknown option '$arg'" >&2; exit 2 ;;
    *) workdir="$arg" ;;
  esac
done
workdir="${workdir:-${FLUSS_CLUSTER_DIR:-/tmp/riverlet-fluss-cluster}}"
TIMEOUT="${FLUSS_STOP_TIMEOUT:-30}"

say() { echo "stop.sh: $*" >&2; }

if [ ! -d "$workdir" ]; then
  say "no such workdir $workdir; nothing to stop"
  exit 0
fi
cluster_paths "$workdir"   # absolute, as start.sh recorded it

status=0
stop_one() { # role
  local role="$1" pf="$pids_dir/$1.pid" pid
  [ -f "$pf" ] || return 0
  pid="$(cat "$pf")"
  if ! [[ "$pid" =~ ^[0-9]+$ ]]; then
    say "ignoring malformed pid file $pf"; rm -f "$pf"; return 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    say "$role (pid $pid) was not running"; rm -f "$pf"; return 0
  fi
  # Make sure the pid still belongs to one of our JVMs before signalling it.
  if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$workdir"; then
    say "pid $pid no longer looks like our $role; not signalling it"; rm -f "$pf"; return 0
  fi
  say "stopping $role (pid $pid)"
  local t0; t0=$(date +%s.%N)
  kill -TERM "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $(( TIMEOUT * 10 )) ]; do
    sleep 0.1; waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "$role (pid $pid) still alive after ${TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 50 ]; do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then say "ERROR: $role (pid $pid) survived SIGKILL"; status=1; return; fi
  fi
  say "$role stopped after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')s"
  rm -f "$pf"
}

# Reverse order of start: clients of ZooKeeper first; the tablet servers in parallel (each
# takes a few seconds for its controlled shutdown). A frozen (SIGSTOPped) server is thawed first,
# or it could not even take the SIGKILL's place in the exit path.
status_dir="$(mktemp -d)"
for pf in "$pids_dir"/tablet*.pid; do
  [ -f "$pf" ] || continue
  role="$(basename "$pf" .pid)"
  role_alive "$role" && kill -CONT "$(role_pid "$role")" 2>/dev/null
  ( stop_one "$role"; echo "$status" >"$status_dir/$role" ) &
done
wait
if grep -qx 1 "$status_dir"/* 2>/dev/null; then status=1; fi
rm -rf "$status_dir"
for role in coordinator zookeeper; do
  role_alive "$role" && kill -CONT "$(role_pid "$role")" 2>/dev/null
done
stop_one coordinator
stop_one zookeeper

if [ "$clean" = 1 ] && [ "$status" = 0 ]; then
  say "removing conf, data and logs under $workdir"
  rm -rf "$workdir/conf" "$workdir/data" "$workdir/logs" "$workdir/pids" "$workdir/plugins" \
         "$workdir/run" "$workdir/ports.env" "$workdir/bootstrap.env"
  rmdir "$workdir" 2>/dev/null || true
fi
exit "$status"
