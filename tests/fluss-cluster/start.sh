#!/usr/bin/env bash
# Start a single-node Apache Fluss cluster (ZooKeeper + CoordinatorServer +
# one TabletServer, three JVMs) on loopback ports, from the Maven Central jars
# that fetch.sh resolves. Riverlet's interop tests run against it.
#
# Usage: start.sh [--sasl] [--conf 'key: value']... [WORKDIR]
#   WORKDIR        where configs, data, logs and pid files go
#                  (default: $FLUSS_CLUSTER_DIR or /tmp/riverlet-fluss-cluster)
#   --sasl         also open a SASL/PLAIN listener (user admin / admin-secret,
#                  plus any in FLUSS_SASL_USERS="user:pass user2:pass2")
#   --conf 'k: v'  extra server.yaml line for both servers (repeatable)
#
# On success prints, and writes to WORKDIR/bootstrap.env:
#   FLUSS_BOOTSTRAP=127.0.0.1:PORT          plaintext coordinator address
#   FLUSS_SASL_BOOTSTRAP=127.0.0.1:PORT     (with --sasl) SASL/PLAIN address
#   (plus FLUSS_SASL_USERNAME / FLUSS_SASL_PASSWORD / FLUSS_ZOOKEEPER / FLUSS_VERSION)
# The environment lines are the only stdout; progress goes to stderr.
#
# Environment:
#   FLUSS_CLASSPATH       use this classpath instead of running fetch.sh
#   FLUSS_VERSION         passed to fetch.sh
#   FLUSS_START_TIMEOUT   seconds to wait for the cluster (default 120)
#   FLUSS_JAVA_OPTS       extra JVM options for the two Fluss servers
#                         (default: -Xms128m -Xmx1g)
#   ZK_JAVA_OPTS          extra JVM options for ZooKeeper (default: -Xmx256m)
#   JAVA_HOME             JDK to use (default: java on PATH); Java 17 expected
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

sasl=0
extra_conf=()
workdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sasl) sasl=1 ;;
    --conf) [ $# -ge 2 ] || { echo "start.sh: --conf needs a value" >&2; exit 2; }
            extra_conf+=("$2"); shift ;;
    --conf=*) extra_conf+=("${1#--conf=}") ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "start.sh: unknown option '$1'" >&2; exit 2 ;;
    *) [ -z "$workdir" ] || { echo "start.sh: only one WORKDIR" >&2; exit 2; }
       workdir="$1" ;;
  esac
  shift
done
workdir="${workdir:-${FLUSS_CLUSTER_DIR:-/tmp/riverlet-fluss-cluster}}"
mkdir -p "$workdir"
workdir="$(cd "$workdir" && pwd)"
TIMEOUT="${FLUSS_START_TIMEOUT:-120}"

say() { echo "start.sh: $*" >&2; }

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
command -v "$JAVA" >/dev/null 2>&1 || { say "ERROR: java not found"; exit 1; }
java_major="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n1)"
java_major="${java_major#1.}"

# --- refuse to start twice in one WORKDIR ---------------------------------
pids_dir="$workdir/pids"
mkdir -p "$pids_dir"
for role in zookeeper coordinator tablet; do
  pf="$pids_dir/$role.pid"
  if [ -f "$pf" ] && kill -0 "$(cat "$pf")" 2>/dev/null; then
    say "ERROR: $role already running (pid $(cat "$pf")) in $workdir; run stop.sh $workdir first"
    exit 1
  fi
  rm -f "$pf"
done

# --- classpath ------------------------------------------------------------
# Reuse the classpath fetch.sh remembered for this version when every jar is
# still on disk (saves a Maven start, ~5 s); otherwise run fetch.sh.
cached_classpath() {
  local v="${FLUSS_VERSION:-}" f cp jar
  [ -n "$v" ] || v="$(sed -n 's:.*<fluss.version>\(.*\)</fluss.version>.*:\1:p' "$HERE/pom.xml" | head -n1)"
  f="${FLUSS_CLUSTER_CACHE:-${HOME}/.cache/riverlet/fluss-cluster}/classpath-$v.txt"
  [ -f "$f" ] || return 1
  cp="$(head -n1 "$f")"
  [ -n "$cp" ] || return 1
  IFS=':' read -r -a jars <<<"$cp"
  for jar in "${jars[@]}"; do [ -f "$jar" ] || return 1; done
  printf '%s' "$cp"
}
if [ -z "${FLUSS_CLASSPATH:-}" ]; then
  FLUSS_CLASSPATH="$(cached_classpath)" \
    || FLUSS_CLASSPATH="$("$HERE/fetch.sh" --quiet)" \
    || { say "ERROR: fetch.sh failed"; exit 1; }
fi
server_jar="$(tr ':' '\n' <<<"$FLUSS_CLASSPATH" | grep -E '/fluss-server-[^/]*\.jar$' | head -n1 || true)"
[ -n "$server_jar" ] || { say "ERROR: no fluss-server jar in FLUSS_CLASSPATH"; exit 1; }
fluss_version="$(basename "$server_jar" .jar)"; fluss_version="${fluss_version#fluss-server-}"

# --- free loopback ports --------------------------------------------------
# Pick all ports in one go while holding the sockets, so none repeats.
n_ports=3; [ "$sasl" = 1 ] && n_ports=5
pick_ports() {
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
  else
    # Fallback: random ports in 20000-59999 not listed by ss as listening.
    local used picked=() p tries=0
    used="$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)"
    while [ "${#picked[@]}" -lt "$1" ] && [ $tries -lt 1000 ]; do
      tries=$((tries + 1)); p=$(( 20000 + RANDOM % 40000 ))
      grep -qx "$p" <<<"$used" && continue
      [[ " ${picked[*]} " == *" $p "* ]] && continue
      picked+=("$p")
    done
    echo "${picked[*]}"
  fi
}
read -r -a ports <<<"$(pick_ports "$n_ports")"
[ "${#ports[@]}" -eq "$n_ports" ] || { say "ERROR: could not pick $n_ports free ports"; exit 1; }
zk_port="${ports[0]}" cs_port="${ports[1]}" ts_port="${ports[2]}"
cs_sasl_port="" ts_sasl_port=""
[ "$sasl" = 1 ] && { cs_sasl_port="${ports[3]}"; ts_sasl_port="${ports[4]}"; }

# --- directories and configuration ----------------------------------------
conf="$workdir/conf" logs="$workdir/logs" data="$workdir/data"
mkdir -p "$conf/coordinator" "$conf/tablet" "$logs" "$data/zookeeper" "$data/tablet-0" "$data/remote" \
         "$workdir/plugins"
# Fluss looks for filesystem/lake plugins here; an empty directory is fine.
export FLUSS_PLUGINS_DIR="$workdir/plugins"

cat >"$conf/zookeeper.properties" <<EOF
# Written by Riverlet tests/fluss-cluster/start.sh
dataDir=$data/zookeeper
clientPort=$zk_port
clientPortAddress=127.0.0.1
maxClientCnxns=0
tickTime=2000
# No Jetty admin server (it would take port 8080).
admin.enableServer=false
# Let start.sh probe liveness with 'ruok'.
4lw.commands.whitelist=ruok,srvr
EOF

cat >"$conf/log4j2.properties" <<'EOF'
# Written by Riverlet tests/fluss-cluster/start.sh: one plain file per JVM.
rootLogger.level = ${env:FLUSS_LOG_LEVEL:-INFO}
rootLogger.appenderRef.file.ref = File
appender.file.name = File
appender.file.type = File
appender.file.append = true
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%t] %c - %m%n
EOF
for c in "$conf/coordinator" "$conf/tablet"; do cp "$conf/log4j2.properties" "$c/log4j2.properties"; done

sasl_users=("admin:admin-secret")
if [ -n "${FLUSS_SASL_USERS:-}" ]; then read -r -a more <<<"$FLUSS_SASL_USERS"; sasl_users+=("${more[@]}"); fi

# Fluss reads server.yaml line by line as 'key: value' ('#' starts a comment
# anywhere, so values must not contain '#').
write_server_yaml() { # file listeners [tablet-only lines...]
  local file="$1" listeners="$2"; shift 2
  {
    echo "# Written by Riverlet tests/fluss-cluster/start.sh"
    echo "zookeeper.address: 127.0.0.1:$zk_port"
    echo "bind.listeners: $listeners"
    echo "remote.data.dir: $data/remote"
    echo "default.bucket.number: 1"
    echo "default.replication.factor: 1"
    if [ "$sasl" = 1 ]; then
      local entries="" u
      for u in "${sasl_users[@]}"; do entries="$entries user_${u%%:*}=\"${u#*:}\""; done
      echo "security.protocol.map: CLIENT:sasl"
      echo "security.sasl.enabled.mechanisms: PLAIN"
      echo "security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required${entries};"
    fi
    local line
    for line in "$@"; do echo "$line"; done
    for line in "${extra_conf[@]}"; do echo "$line"; done
  } >"$file"
}
# FLUSS is the plaintext listener, also the internal one (the default
# internal.listener.name); CLIENT is the SASL listener when --sasl is given.
cs_listeners="FLUSS://127.0.0.1:$cs_port"
ts_listeners="FLUSS://127.0.0.1:$ts_port"
if [ "$sasl" = 1 ]; then
  cs_listeners="$cs_listeners, CLIENT://127.0.0.1:$cs_sasl_port"
  ts_listeners="$ts_listeners, CLIENT://127.0.0.1:$ts_sasl_port"
fi
write_server_yaml "$conf/coordinator/server.yaml" "$cs_listeners"
write_server_yaml "$conf/tablet/server.yaml" "$ts_listeners" \
  "tablet-server.id: 0" "data.dir: $data/tablet-0"

cat >"$workdir/ports.env" <<EOF
ZK_PORT=$zk_port
COORDINATOR_PORT=$cs_port
TABLET_PORT=$ts_port
COORDINATOR_SASL_PORT=$cs_sasl_port
TABLET_SASL_PORT=$ts_sasl_port
EOF
rm -f "$workdir/bootstrap.env"

# --- launching ------------------------------------------------------------
jvm_common=(-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true)
read -r -a fluss_opts <<<"${FLUSS_JAVA_OPTS:--Xms128m -Xmx1g}"
read -r -a zk_opts <<<"${ZK_JAVA_OPTS:--Xmx256m}"
if [ "${java_major:-0}" -ge 17 ] 2>/dev/null; then
  # Arrow's memory module reflects into java.nio (on the class path the module
  # name is unknown, hence a harmless warning; ALL-UNNAMED is what applies);
  # Netty reflects into sun.nio.ch. ZooKeeper needs none of these.
  fluss_opts+=(--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED
               --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
               --add-opens=java.base/java.lang=ALL-UNNAMED
               --add-opens=java.base/java.util=ALL-UNNAMED)
fi

launch() { # role log4j-conf-dir jvm-opts-name main-class args...
  local role="$1" cdir="$2" optsname="$3" main="$4"; shift 4
  local -n opts="$optsname"
  local log="$logs/$role.log" out="$logs/$role.out" f
  # Keep one previous run's logs; readiness greps must not see stale lines.
  for f in "$log" "$out"; do [ -f "$f" ] && mv -f "$f" "$f.prev"; done
  ( cd "$workdir" && exec "$JAVA" "${jvm_common[@]}" "${opts[@]}" \
      -Dlog.file="$log" \
      -Dlog4j.configurationFile="file:$cdir/log4j2.properties" \
      -Dlog4j2.shutdownHookEnabled=false \
      -Dzookeeper.jmx.log4j.disable=true \
      -cp "$FLUSS_CLASSPATH" "$main" "$@" ) >"$out" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pids_dir/$role.pid"
  say "started $role (pid $pid), log $log"
}

deadline=$(( $(date +%s) + TIMEOUT ))
t0=$(date +%s.%N)

fail() {
  say "ERROR: $*"
  local r
  for r in zookeeper coordinator tablet; do
    if [ -f "$logs/$r.log" ] || [ -f "$logs/$r.out" ]; then
      say "---- last lines of $r logs ----"
      tail -n 15 "$logs/$r.out" "$logs/$r.log" 2>/dev/null | sed 's/^/    /' >&2 || true
    fi
  done
  say "stopping what was started"
  "$HERE/stop.sh" "$workdir" >&2 || true
  exit 1
}

alive() { kill -0 "$(cat "$pids_dir/$1.pid")" 2>/dev/null; }

port_open() { # port
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

zk_ok() {
  local reply=""
  reply="$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$zk_port && printf ruok >&3 && head -c 4 <&3" 2>/dev/null || true)"
  [ "$reply" = "imok" ]
}

wait_for() { # role description check-command...
  local role="$1" what="$2"; shift 2
  while ! "$@"; do
    alive "$role" || fail "$role exited before $what"
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${TIMEOUT}s waiting for $what"
    sleep 0.2
  done
}

log_has() { grep -q -- "$2" "$logs/$1.log" 2>/dev/null; }

launch zookeeper "$conf" zk_opts \
  org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain \
  "$conf/zookeeper.properties"
wait_for zookeeper "ZooKeeper on 127.0.0.1:$zk_port" zk_ok

launch coordinator "$conf/coordinator" fluss_opts \
  org.apache.fluss.server.coordinator.CoordinatorServer --configDir "$conf/coordinator"
wait_for coordinator "the coordinator port $cs_port" port_open "$cs_port"
wait_for coordinator "the coordinator to finish initializing" \
  log_has coordinator "End initializing coordinator context"

launch tablet "$conf/tablet" fluss_opts \
  org.apache.fluss.server.tablet.TabletServer --configDir "$conf/tablet"
wait_for tablet "the tablet server port $ts_port" port_open "$ts_port"
# The coordinator logs this once it has seen tablet server 0 register in ZooKeeper.
wait_for tablet "tablet server 0 to register with the coordinator" \
  log_has coordinator "New tablet server callback for tablet server 0"
if [ "$sasl" = 1 ]; then
  wait_for coordinator "the coordinator SASL port $cs_sasl_port" port_open "$cs_sasl_port"
  wait_for tablet "the tablet server SASL port $ts_sasl_port" port_open "$ts_sasl_port"
fi

elapsed="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')"
{
  echo "FLUSS_BOOTSTRAP=127.0.0.1:$cs_port"
  if [ "$sasl" = 1 ]; then
    echo "FLUSS_SASL_BOOTSTRAP=127.0.0.1:$cs_sasl_port"
    echo "FLUSS_SASL_USERNAME=admin"
    echo "FLUSS_SASL_PASSWORD=admin-secret"
  fi
  echo "FLUSS_ZOOKEEPER=127.0.0.1:$zk_port"
  echo "FLUSS_VERSION=$fluss_version"
} >"$workdir/bootstrap.env"
say "Fluss $fluss_version cluster up in ${elapsed}s (workdir $workdir)"
cat "$workdir/bootstrap.env"
