#!/usr/bin/env bash
# One role of a cluster that start.sh started: crash it, freeze it, thaw it, stop it or start it
# again on its own configuration, data directory and port. The failover tests drive the cluster
# through this script.
#
# Usage: ctl.sh ACTION ROLE [WORKDIR]
#   ROLE      zookeeper, coordinator, tablet-ID (tablet-0, tablet-1, ...)
#   ACTION    kill     SIGKILL: a crash, no controlled shutdown
#             freeze   SIGSTOP: the process stays, its sockets stay open, nothing answers
#             thaw     SIGCONT after freeze
#             stop     SIGTERM (controlled shutdown: leaders move first), wait until gone
#             start    launch run/ROLE.sh again and wait until it is ready: ZooKeeper answers
#                      ruok; the coordinator has initialized; a tablet server has registered
#                      with the coordinator again
#             restart  stop, then start
#             status   one line per role: ROLE PID running|frozen|down   (ROLE may be 'all')
#   WORKDIR   default: $FLUSS_CLUSTER_DIR or /tmp/riverlet-fluss-cluster
# Only the pids recorded in WORKDIR/pids are signalled, and only while they are our JVMs.
#
# Environment: FLUSS_START_TIMEOUT (default 120 s) bounds start; FLUSS_STOP_TIMEOUT (default
# 30 s) bounds stop before it sends SIGKILL.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

say() { echo "ctl.sh: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

[ $# -ge 1 ] && [[ "$1" == -h || "$1" == --help ]] && { usage; exit 0; }
[ $# -ge 2 ] && [ $# -le 3 ] || { usage >&2; exit 2; }
action="$1" role="$2"
dir="${3:-${FLUSS_CLUSTER_DIR:-/tmp/riverlet-fluss-cluster}}"
[ -d "$dir" ] || die "no such cluster workdir '$dir'"
cluster_paths "$dir"

state() { # role -> running | frozen | down
  if ! role_alive "$1"; then echo down; return; fi
  case "$(awk '{print $3}' "/proc/$(role_pid "$1")/stat" 2>/dev/null)" in
    T|t) echo frozen ;;
    *) echo running ;;
  esac
}

if [ "$action" = status ]; then
  roles=("$role")
  [ "$role" = all ] && roles=(zookeeper coordinator $(tablet_roles))
  for r in "${roles[@]}"; do echo "$r $(role_pid "$r" || echo -) $(state "$r")"; done
  exit 0
fi

[ -f "$run_dir/$role.sh" ] || die "no role '$role' in $workdir (roles: zookeeper coordinator $(tablet_roles | tr '\n' ' '))"

signal() { # SIG
  role_alive "$role" || die "$role is not running in $workdir"
  kill -"$1" "$(role_pid "$role")"
  say "sent SIG$1 to $role (pid $(role_pid "$role"))"
}

do_stop() {
  if ! role_alive "$role"; then say "$role is not running"; return 0; fi
  local pid waited=0 limit=$(( ${FLUSS_STOP_TIMEOUT:-30} * 10 ))
  pid="$(role_pid "$role")"
  kill -CONT "$pid" 2>/dev/null || true # a frozen process cannot shut down
  kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$limit" ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    say "$role (pid $pid) still alive after ${FLUSS_STOP_TIMEOUT:-30}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  say "stopped $role (pid $pid)"
}

do_start() {
  if role_alive "$role"; then die "$role is already running (pid $(role_pid "$role"))"; fi
  # A SIGKILLed JVM can take a moment to release its port; wait for it to be gone entirely.
  local old; old="$(role_pid "$role" || true)"
  if [[ "$old" =~ ^[0-9]+$ ]]; then while kill -0 "$old" 2>/dev/null; do sleep 0.1; done; fi
  local deadline=$(( $(date +%s) + ${FLUSS_START_TIMEOUT:-120} )) port before=0 id=""
  port="$(role_port "$role")"
  if [[ "$role" == tablet-* ]]; then id="${role#tablet-}"; before="$(registrations "$id")"; fi
  launch_role "$role"
  say "started $role (pid $(role_pid "$role")), log $logs/$role.log"
  ready() {
    case "$role" in
      zookeeper) zk_ok "$port" ;;
      coordinator) port_open "$port" && log_has coordinator "End initializing coordinator context" ;;
      *) port_open "$port" && [ "$(registrations "$id")" -gt "$before" ] ;;
    esac
  }
  while ! ready; do
    role_alive "$role" || { tail -n 20 "$logs/$role.out" "$logs/$role.log" >&2 2>/dev/null || true; die "$role exited while starting"; }
    [ "$(date +%s)" -lt "$deadline" ] || die "$role not ready after ${FLUSS_START_TIMEOUT:-120}s (log $logs/$role.log)"
    sleep 0.2
  done
  say "$role is ready"
}

case "$action" in
  kill) signal KILL ;;
  freeze) signal STOP ;;
  thaw) signal CONT ;;
  stop) do_stop ;;
  start) do_start ;;
  restart) do_stop; do_start ;;
  *) usage >&2; exit 2 ;;
esac
