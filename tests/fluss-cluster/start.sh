#!/usr/bin/env bash
# Start an Apache Fluss cluster (ZooKeeper + CoordinatorServer + N TabletServers,
# one JVM each) on loopback ports, from the Maven Central jars that fetch.sh
# resolves. Riverlet's interop and failover tests run against it.
#
# Usage: start.sh [--sasl] [--tablets N] [--replication R] [--conf 'key: value']...
#                 [--metrics] [--paimon-lake | --iceberg-lake] [WORKDIR]
#   WORKDIR        where configs, data, logs and pid files go
#                  (default: $FLUSS_CLUSTER_DIR or /tmp/riverlet-fluss-cluster)
#   --sasl         also open a SASL/PLAIN listener (user admin / admin-secret,
#                  plus any in FLUSS_SASL_USERS="user:pass user2:pass2")
#   --tablets N    N tablet servers, ids 0..N-1 (default 1); with N > 1 the
#                  ZooKeeper session timeout is 8 s, so a killed server's
#                  buckets get new leaders within seconds, not after 60 s
#   --replication R  default.replication.factor (default: N, at most 3)
#   --conf 'k: v'  extra server.yaml line for every server (repeatable; it
#                  comes last, so it overrides the lines above)
#   --metrics      each tablet server reports its metrics through Fluss's
#                  Prometheus reporter (fluss-metrics-prometheus from Maven
#                  Central, a plugin) on a port of its own:
#                  FLUSS_METRICS=0=127.0.0.1:PORT,... (GET /metrics)
#   --paimon-lake  the cluster has a Paimon lake (datalake.format: paimon, a
#                  filesystem catalog whose warehouse is WORKDIR/paimon-warehouse),
#                  so tables get table.datalake.format paimon and may set
#                  table.datalake.enabled; the coordinator loads Fluss's Paimon
#                  lake plugin (fluss-lake-paimon, paimon-bundle and
#                  flink-shaded-hadoop-2-uber from Maven Central, as Fluss's
#                  distribution ships them in plugins/paimon):
#                  FLUSS_DATALAKE=paimon, FLUSS_PAIMON_WAREHOUSE=DIR
#   --iceberg-lake the cluster has an Iceberg lake (datalake.format: iceberg, a
#                  Hadoop catalog whose warehouse is WORKDIR/iceberg-warehouse),
#                  so tables get table.datalake.format iceberg and may set
#                  table.datalake.enabled; the coordinator loads Fluss's Iceberg
#                  lake plugin (fluss-lake-iceberg and hadoop-apache 3.3.5-2 from
#                  Maven Central, as Fluss's Iceberg page says for plugins/iceberg):
#                  FLUSS_DATALAKE=iceberg, FLUSS_ICEBERG_WAREHOUSE=DIR
# ctl.sh kills, freezes, thaws, stops and restarts one role of the cluster.
#
# On success prints, and writes to WORKDIR/bootstrap.env:
#   FLUSS_BOOTSTRAP=127.0.0.1:PORT          plaintext coordinator address
#   FLUSS_SASL_BOOTSTRAP=127.0.0.1:PORT     (with --sasl) SASL/PLAIN address
#   (plus FLUSS_SASL_USERNAME / FLUSS_SASL_PASSWORD / FLUSS_ZOOKEEPER / FLUSS_VERSION)
#   FLUSS_TABLETS=0=127.0.0.1:PORT,...      (--tablets > 1) the tablet servers
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
# shellcheck source=lib.sh
. "$HERE/lib.sh"

orig_args=("$@")  # for a second attempt (below); the parsing shifts them away
sasl=0
metrics=0
paimon_lake=0
iceberg_lake=0
n_tablets=1
replication=""
extra_conf=()
workdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sasl) sasl=1 ;;
    --metrics) metrics=1 ;;
    --conf) [ $# -ge 2 ] || { echo "start.sh: --conf needs a value" >&2; exit 2; }
            extra_conf+=("$2"); shift ;;
    --conf=*) extra_conf+=("${1#--conf=}") ;;
    --tablets) [ $# -ge 2 ] || { echo "start.sh: --tablets needs a number" >&2; exit 2; }
               n_tablets="$2"; shift ;;
    --replication) [ $# -ge 2 ] || { echo "start.sh: --replication needs a number" >&2; exit 2; }
               replication="$2"; shift ;;
    --paimon-lake) paimon_lake=1 ;;
    --iceberg-lake) iceberg_lake=1 ;;
    -h|--help) sed -n '2,53p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "start.sh: unknown option '$1'" >&2; exit 2 ;;
    *) [ -z "$workdir" ] || { echo "start.sh: only one WORKDIR" >&2; exit 2; }
       workdir="$1" ;;
  esac
  shift
done
[ "$paimon_lake" = 1 ] && [ "$iceberg_lake" = 1 ] \
  && { echo "start.sh: --paimon-lake and --iceberg-lake exclude each other (one datalake.format)" >&2; exit 2; }
[[ "$n_tablets" =~ ^[1-9][0-9]?$ ]] || { echo "start.sh: --tablets takes 1 to 99, not '$n_tablets'" >&2; exit 2; }
[ -n "$replication" ] || replication=$(( n_tablets < 3 ? n_tablets : 3 ))
[[ "$replication" =~ ^[1-9][0-9]?$ ]] && [ "$replication" -le "$n_tablets" ] \
  || { echo "start.sh: --replication takes 1 to the number of tablet servers ($n_tablets), not '$replication'" >&2; exit 2; }
workdir="${workdir:-${FLUSS_CLUSTER_DIR:-/tmp/riverlet-fluss-cluster}}"
mkdir -p "$workdir"
cluster_paths "$workdir"
TIMEOUT="${FLUSS_START_TIMEOUT:-120}"

say() { echo "start.sh: $*" >&2; }

# --- a port taken between picking it and binding it -----------------------
# The ports are picked free (bound to port 0 and released), then the JVMs bind them seconds
# later; another process (a client's outgoing connection, another cluster starting) can take
# one in between. The JVM then dies with "Address already in use": start again with new ports,
# up to 3 times. Any other failure is final.
if [ -z "${FLUSS_START_ATTEMPT:-}" ]; then
  for attempt in 1 2 3; do
    rc=0
    FLUSS_START_ATTEMPT=$attempt "$0" "${orig_args[@]}" || rc=$?
    [ "$rc" -eq 0 ] && exit 0
    if [ "$attempt" -lt 3 ] \
      && grep -qs "Address already in use" "$logs"/*.log "$logs"/*.out; then
      say "a port was taken before its server bound it (Address already in use):" \
        "starting again with new ports (attempt $((attempt + 1)) of 3)"
      continue
    fi
    exit "$rc"
  done
fi

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
command -v "$JAVA" >/dev/null 2>&1 || { say "ERROR: java not found"; exit 1; }
java_major="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n1)"
java_major="${java_major#1.}"

# --- refuse to start twice in one WORKDIR ---------------------------------
mkdir -p "$pids_dir"
for pf in "$pids_dir"/*.pid; do
  [ -f "$pf" ] || continue
  role="$(basename "$pf" .pid)"
  if role_alive "$role"; then
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
per_server=1; [ "$sasl" = 1 ] && per_server=2
n_ports=$(( 1 + per_server * (1 + n_tablets) + metrics * n_tablets ))
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
# ports: ZooKeeper, the coordinator, each tablet server; then the SASL ones in the same order.
zk_port="${ports[0]}" cs_port="${ports[1]}"
ts_ports=("${ports[@]:2:$n_tablets}")
cs_sasl_port="" ts_sasl_ports=()
if [ "$sasl" = 1 ]; then
  cs_sasl_port="${ports[$((2 + n_tablets))]}"
  ts_sasl_ports=("${ports[@]:$((3 + n_tablets)):$n_tablets}")
fi
# then, with --metrics, each tablet server's Prometheus port
metrics_ports=()
[ "$metrics" = 1 ] && metrics_ports=("${ports[@]:$((n_ports - n_tablets)):$n_tablets}")

# --- directories and configuration ----------------------------------------
mkdir -p "$conf/coordinator" "$logs" "$data/zookeeper" "$data/remote" "$workdir/plugins" "$run_dir"
rm -f "$run_dir"/*.sh
for ((id = 0; id < n_tablets; id++)); do mkdir -p "$conf/tablet-$id" "$data/tablet-$id"; done
# Fluss looks for filesystem/lake/metrics plugins here, one directory each; empty is fine.
export FLUSS_PLUGINS_DIR="$workdir/plugins"
if [ "$metrics" = 1 ]; then
  reporter_dir="$workdir/plugins/metrics-prometheus"
  mkdir -p "$reporter_dir"
  if ! ls "$reporter_dir"/fluss-metrics-prometheus-*.jar >/dev/null 2>&1; then
    say "fetching org.apache.fluss:fluss-metrics-prometheus:$fluss_version through Maven"
    mvn -B -q dependency:copy -Dartifact="org.apache.fluss:fluss-metrics-prometheus:$fluss_version" \
      -DoutputDirectory="$reporter_dir" >&2 \
      || { say "ERROR: could not fetch fluss-metrics-prometheus $fluss_version (--metrics)"; exit 1; }
  fi
fi

if [ "$paimon_lake" = 1 ]; then
  # The jars of Fluss's distribution's plugins/paimon (fluss-dist's plugins.xml), in the
  # versions Fluss 0.9.1 builds with (paimon.version 1.3.1).
  lake_dir="$workdir/plugins/paimon"
  mkdir -p "$lake_dir" "$workdir/paimon-warehouse"
  for artifact in "org.apache.fluss:fluss-lake-paimon:$fluss_version" \
      org.apache.paimon:paimon-bundle:1.3.1 org.apache.flink:flink-shaded-hadoop-2-uber:2.8.3-10.0; do
    jar="$(cut -d: -f2 <<<"$artifact")-$(cut -d: -f3 <<<"$artifact").jar"
    [ -f "$lake_dir/$jar" ] && continue
    say "fetching $artifact through Maven (--paimon-lake)"
    mvn -B -q dependency:copy -Dartifact="$artifact" -DoutputDirectory="$lake_dir" >&2 \
      || { say "ERROR: could not fetch $artifact (--paimon-lake)"; exit 1; }
  done
  extra_conf=("datalake.format: paimon" "datalake.paimon.metastore: filesystem"
              "datalake.paimon.warehouse: $workdir/paimon-warehouse" "${extra_conf[@]}")
fi

if [ "$iceberg_lake" = 1 ]; then
  # The jars Fluss's Iceberg page puts in plugins/iceberg for a Hadoop catalog: the plugin
  # (it shades Iceberg 1.10.1) and the pre-bundled Hadoop classes the catalog needs.
  lake_dir="$workdir/plugins/iceberg"
  mkdir -p "$lake_dir" "$workdir/iceberg-warehouse"
  for artifact in "org.apache.fluss:fluss-lake-iceberg:$fluss_version" \
      io.trino.hadoop:hadoop-apache:3.3.5-2; do
    jar="$(cut -d: -f2 <<<"$artifact")-$(cut -d: -f3 <<<"$artifact").jar"
    [ -f "$lake_dir/$jar" ] && continue
    say "fetching $artifact through Maven (--iceberg-lake)"
    mvn -B -q dependency:copy -Dartifact="$artifact" -DoutputDirectory="$lake_dir" >&2 \
      || { say "ERROR: could not fetch $artifact (--iceberg-lake)"; exit 1; }
  done
  extra_conf=("datalake.format: iceberg" "datalake.iceberg.type: hadoop"
              "datalake.iceberg.warehouse: $workdir/iceberg-warehouse" "${extra_conf[@]}")
fi

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
for c in "$conf/coordinator" "$conf"/tablet-*; do cp "$conf/log4j2.properties" "$c/log4j2.properties"; done

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
    echo "default.replication.factor: $replication"
    # Several tablet servers: a killed one loses its ZooKeeper node (and its buckets get new
    # leaders) after 8 s instead of the default 60 s.
    if [ "$n_tablets" -gt 1 ]; then echo "zookeeper.client.session-timeout: 8 s"; fi
    # Replicated writes (acks=all) wait for a follower's next fetch, and an idle follower's
    # fetch waits out log.replica.fetch.wait-max-time (default 500 ms): a test that flushes
    # often waited ~300 ms per flush. At 100 ms the Rust suite against 3 tablet servers took
    # 58 s instead of 113 s (2026-12-07); nothing the tests check depends on the wait.
    if [ "$replication" -gt 1 ]; then echo "log.replica.fetch.wait-max-time: 100 ms"; fi
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
[ "$sasl" = 1 ] && cs_listeners="$cs_listeners, CLIENT://127.0.0.1:$cs_sasl_port"
write_server_yaml "$conf/coordinator/server.yaml" "$cs_listeners"
tablets_line="" metrics_line=""
for ((id = 0; id < n_tablets; id++)); do
  ts_listeners="FLUSS://127.0.0.1:${ts_ports[$id]}"
  [ "$sasl" = 1 ] && ts_listeners="$ts_listeners, CLIENT://127.0.0.1:${ts_sasl_ports[$id]}"
  metrics_lines=()
  if [ "$metrics" = 1 ]; then
    metrics_lines=("metrics.reporters: prometheus" "metrics.reporter.prometheus.port: ${metrics_ports[$id]}")
    metrics_line="$metrics_line${metrics_line:+,}$id=127.0.0.1:${metrics_ports[$id]}"
  fi
  write_server_yaml "$conf/tablet-$id/server.yaml" "$ts_listeners" \
    "tablet-server.id: $id" "data.dir: $data/tablet-$id" "${metrics_lines[@]}"
  tablets_line="$tablets_line${tablets_line:+,}$id=127.0.0.1:${ts_ports[$id]}"
done

cat >"$workdir/ports.env" <<EOF
ZK_PORT=$zk_port
COORDINATOR_PORT=$cs_port
TABLET_PORT=${ts_ports[0]}
TABLET_PORTS="${ts_ports[*]}"
COORDINATOR_SASL_PORT=$cs_sasl_port
TABLET_SASL_PORT=${ts_sasl_ports[0]:-}
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

# write_role_script ROLE LOG4J-CONF-DIR JVM-OPTS-NAME MAIN-CLASS ARGS...: run/ROLE.sh, the exact
# command line of the role, so ctl.sh restarts it as it was first started.
write_role_script() {
  local role="$1" cdir="$2" optsname="$3" main="$4"; shift 4
  local -n opts="$optsname"
  {
    echo "# Written by Riverlet tests/fluss-cluster/start.sh: starts $role (ctl.sh runs it again)."
    printf 'export FLUSS_PLUGINS_DIR=%q\n' "$FLUSS_PLUGINS_DIR"
    printf 'exec'
    printf ' %q' "$JAVA" "${jvm_common[@]}" "${opts[@]}" \
      "-Dlog.file=$logs/$role.log" \
      "-Dlog4j.configurationFile=file:$cdir/log4j2.properties" \
      -Dlog4j2.shutdownHookEnabled=false -Dzookeeper.jmx.log4j.disable=true \
      -cp "$FLUSS_CLASSPATH" "$main" "$@"
    echo
  } >"$run_dir/$role.sh"
}

launch() { # role
  launch_role "$1"
  say "started $1 (pid $(role_pid "$1")), log $logs/$1.log"
}

deadline=$(( $(date +%s) + TIMEOUT ))
t0=$(date +%s.%N)

fail() {
  say "ERROR: $*"
  local r
  for r in zookeeper coordinator $(tablet_roles); do
    if [ -f "$logs/$r.log" ] || [ -f "$logs/$r.out" ]; then
      say "---- last lines of $r logs ----"
      tail -n 15 "$logs/$r.out" "$logs/$r.log" 2>/dev/null | sed 's/^/    /' >&2 || true
    fi
  done
  say "stopping what was started"
  "$HERE/stop.sh" "$workdir" >&2 || true
  exit 1
}

wait_for() { # role description check-command...
  local role="$1" what="$2"; shift 2
  while ! "$@"; do
    role_alive "$role" || fail "$role exited before $what"
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${TIMEOUT}s waiting for $what"
    sleep 0.2
  done
}

write_role_script zookeeper "$conf" zk_opts \
  org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain \
  "$conf/zookeeper.properties"
write_role_script coordinator "$conf/coordinator" fluss_opts \
  org.apache.fluss.server.coordinator.CoordinatorServer --configDir "$conf/coordinator"
for ((id = 0; id < n_tablets; id++)); do
  write_role_script "tablet-$id" "$conf/tablet-$id" fluss_opts \
    org.apache.fluss.server.tablet.TabletServer --configDir "$conf/tablet-$id"
done

launch zookeeper
wait_for zookeeper "ZooKeeper on 127.0.0.1:$zk_port" zk_ok "$zk_port"

launch coordinator
wait_for coordinator "the coordinator port $cs_port" port_open "$cs_port"
wait_for coordinator "the coordinator to finish initializing" \
  log_has coordinator "End initializing coordinator context"

# The tablet servers start together; each is up once its port is open and the coordinator has
# logged that it registered in ZooKeeper.
for ((id = 0; id < n_tablets; id++)); do launch "tablet-$id"; done
registered() { [ "$(registrations "$1")" -ge 1 ]; }
for ((id = 0; id < n_tablets; id++)); do
  wait_for "tablet-$id" "the tablet server $id port ${ts_ports[$id]}" port_open "${ts_ports[$id]}"
  wait_for "tablet-$id" "tablet server $id to register with the coordinator" registered "$id"
  if [ "$sasl" = 1 ]; then
    wait_for "tablet-$id" "the tablet server $id SASL port ${ts_sasl_ports[$id]}" port_open "${ts_sasl_ports[$id]}"
  fi
done
if [ "$sasl" = 1 ]; then
  wait_for coordinator "the coordinator SASL port $cs_sasl_port" port_open "$cs_sasl_port"
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
  if [ "$n_tablets" -gt 1 ]; then echo "FLUSS_TABLETS=$tablets_line"; fi
  if [ "$metrics" = 1 ]; then echo "FLUSS_METRICS=$metrics_line"; fi
  if [ "$paimon_lake" = 1 ]; then
    echo "FLUSS_DATALAKE=paimon"
    echo "FLUSS_PAIMON_WAREHOUSE=$workdir/paimon-warehouse"
  fi
  if [ "$iceberg_lake" = 1 ]; then
    echo "FLUSS_DATALAKE=iceberg"
    echo "FLUSS_ICEBERG_WAREHOUSE=$workdir/iceberg-warehouse"
  fi
} >"$workdir/bootstrap.env"
say "Fluss $fluss_version cluster with $n_tablets tablet server(s) up in ${elapsed}s (workdir $workdir)"
cat "$workdir/bootstrap.env"
