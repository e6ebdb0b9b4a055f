# Shared by start.sh, ctl.sh and stop.sh (sourced, not run): where a cluster's files live, how a
# role is launched from the script start.sh wrote for it, and the readiness checks.
#
# Roles: zookeeper, coordinator, tablet-0 .. tablet-(N-1). start.sh writes WORKDIR/run/ROLE.sh
# (the full java command line, ending in exec), so a role restarted by ctl.sh comes back with
# the same configuration, data directory and port as the first time.

# cluster_paths WORKDIR: sets workdir (absolute), conf, logs, data, pids_dir, run_dir.
cluster_paths() {
  workdir="$(cd "$1" && pwd)"
  conf="$workdir/conf" logs="$workdir/logs" data="$workdir/data"
  pids_dir="$workdir/pids" run_dir="$workdir/run"
}

# The tablet roles of this WORKDIR, by id (from the launch scripts start.sh wrote).
tablet_roles() {
  local f
  for f in "$run_dir"/tablet-*.sh; do
    [ -f "$f" ] || continue
    f="${f##*/}"
    echo "${f%.sh}"
  done | sort -t- -k2 -n
}

role_pid() { cat "$pids_dir/$1.pid" 2>/dev/null; }

# Whether ROLE's recorded pid is alive and is still our JVM (its command line names WORKDIR).
role_alive() {
  local pid
  pid="$(role_pid "$1")" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$workdir"
}

# launch_role ROLE: starts WORKDIR/run/ROLE.sh in the background. The script execs the JVM, so
# the pid recorded is the JVM's own (signals reach it, not a wrapper). The previous run's logs
# are kept as *.prev so readiness greps never see a stale line.
launch_role() {
  local role="$1" f
  for f in "$logs/$role.log" "$logs/$role.out"; do [ -f "$f" ] && mv -f "$f" "$f.prev"; done
  ( cd "$workdir" && exec bash "$run_dir/$role.sh" ) >"$logs/$role.out" 2>&1 </dev/null &
  echo "$!" >"$pids_dir/$role.pid"
}

port_open() { # port
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

zk_ok() { # port
  local reply=""
  reply="$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf ruok >&3 && head -c 4 <&3" 2>/dev/null || true)"
  [ "$reply" = "imok" ]
}

log_has() { grep -q -- "$2" "$logs/$1.log" 2>/dev/null; }

# How many times the coordinator's current log says tablet server ID registered.
registrations() {
  grep -cE -- "New tablet server callback for tablet server $1([^0-9]|\$)" "$logs/coordinator.log" 2>/dev/null || true
}

# The port a role listens on (the FLUSS listener of its server.yaml; ZooKeeper's clientPort).
role_port() {
  case "$1" in
    zookeeper) sed -n 's/^clientPort=//p' "$conf/zookeeper.properties" ;;
    *) sed -n 's/^bind.listeners: FLUSS:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$conf/$1/server.yaml" ;;
  esac
}
