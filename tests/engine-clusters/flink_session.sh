#!/usr/bin/env bash
# Flink as a distributed engine: a Flink 1.20 session cluster (a JobManager and two TaskManagers,
# separate JVMs, from the Maven Central jars tests/engine-clusters/flink/pom.xml names; Central
# serves no flink-dist) on 127.0.0.1, and an Apache Fluss cluster with three tablet servers
# (tests/fluss-cluster/start.sh --tablets 3). For each connector in FLINK_CONNECTORS (default
# "riverlet fluss": Riverlet's riverlet-flink-1.20 shaded JAR and Fluss's own
# org.apache.fluss:fluss-flink-1.20), SqlSubmit creates the tables (flink/setup.sql) in a database
# of its own and submits the streaming job (flink/job.sql: a log table read from the start, a
# lookup join on a primary-key table, two upsert sinks into primary-key tables, one of them
# counting and summing per customer) through the REST endpoint, with the connector JAR shipped
# in the job (pipeline.jars). Both jobs run at once, checkpointing every 3 s, while a feeder per
# job appends orders continuously. Then: kill -9 of one TaskManager (started again at once), and
# kill -9 of one tablet server (started again through tests/fluss-cluster/ctl.sh after the jobs
# have checkpointed without it). Each job must restart from a checkpoint, keep running, and its
# sinks must end up with exactly what the orders written give (a row read twice or lost changes
# a counter). See README.md beside this file.
#
# Usage: tests/engine-clusters/flink_session.sh [WORKDIR]
#   WORKDIR  where the clusters' configs, logs, checkpoints and data go (default: a new directory
#            under ${TMPDIR:-/tmp}); removed at the end unless KEEP_WORKDIR=1 or the run failed.
# Needs the shaded JAR:
#   mvn -T1 -B -q -f java/pom.xml -pl riverlet-flink-1.20 -am package -DskipTests \
#       -Driverlet.cargo.profile=dev -Driverlet.cargo.skip=true   (after cargo build -p riverlet-jni)
# and the repository's .venv with the riverlet Python package (make test builds it), which feeds
# the tables and reads the sinks.
# Environment: FLINK_JAR (Riverlet's connector JAR, e.g. make dist's dist/riverlet-flink-1.20-<v>.jar;
#   default: the shaded JAR in java/riverlet-flink-1.20/target),
#   FLINK_CONNECTORS ("riverlet", "fluss" or both), ENGINE_WAIT (seconds for each
#   wait, default 180), PYTHON (default .venv/bin/python).
{ # read whole before it runs: an edit of this file during a run cannot change the run
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/engine-flink.XXXXXX")}
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
WAIT=${ENGINE_WAIT:-180}
PY=${PYTHON:-$ROOT/.venv/bin/python}
CONNECTORS=${FLINK_CONNECTORS:-riverlet fluss}
FEED="$HERE/flink_feed.py"
say() { echo "flink_session: $*" >&2; }
# On a failure, what a CI log read from its tail needs: where every task is, any task Flink
# reports stuck in a cancel (its thread's top frames), and the disk left.
diagnose() {
  [ -n "${REST:-}" ] || return 0
  local c
  for c in "${!JOB[@]}"; do
    say "$c job ${JOB[$c]}: $(rest state "${JOB[$c]}" 2>&1)"; rest tasks "${JOB[$c]}" >&2 2>&1
  done
  grep -h -A5 "did not react to cancelling signal" "$F"/logs/tm-*.log 2>/dev/null |
    grep -v "^--$" | cut -c1-200 | tail -n 6 >&2
  say "disk: $(df -h --output=avail "$WORK" | tail -1 | tr -d ' ') free in $WORK"
}
die() { diagnose; say "FAILED: $*"; exit 1; }
t0=$(date +%s)
F="$WORK/flink"
mkdir -p "$F/conf" "$F/logs" "$F/pids" "$F/checkpoints"

# --- what the run needs ---
declare -A JAR
for c in $CONNECTORS; do
  case $c in
    riverlet)
      JAR[riverlet]=${FLINK_JAR:-$(ls "$ROOT"/java/riverlet-flink-1.20/target/riverlet-flink-1.20-*.jar 2>/dev/null |
        grep -v /original- | head -n1)}
      [ -n "${JAR[riverlet]}" ] || die "no riverlet-flink-1.20 shaded JAR (build it: see the header)"
      unzip -l "${JAR[riverlet]}" | grep 'native/linux-x86_64/libriverlet_jni.so' >/dev/null ||
        die "${JAR[riverlet]} does not carry native/linux-x86_64/libriverlet_jni.so" ;;
    fluss) ;;
    *) die "unknown connector '$c' in FLINK_CONNECTORS (riverlet, fluss)" ;;
  esac
done
"$PY" -c 'import riverlet, pyarrow' 2>/dev/null ||
  die "$PY cannot import riverlet and pyarrow (build the .venv: make test, or PYTHON=...)"
mvn=(mvn -B -q -f "$HERE/flink/pom.xml")
"${mvn[@]}" compile >"$F/logs/mvn.log" 2>&1 ||
  { cat "$F/logs/mvn.log" >&2; die "could not build tests/engine-clusters/flink (SqlSubmit)"; }
"${mvn[@]}" dependency:build-classpath -Dmdep.outputFile="$F/cp.txt" >"$F/logs/mvn.log" 2>&1 ||
  { cat "$F/logs/mvn.log" >&2; die "could not resolve the Flink class path (mvn dependency:build-classpath)"; }
CP=$(cat "$F/cp.txt")
if [[ " $CONNECTORS " == *" fluss "* ]]; then
  "${mvn[@]}" -Pfluss dependency:build-classpath -Dmdep.outputFile="$F/cp-fluss.txt" >"$F/logs/mvn.log" 2>&1 ||
    { cat "$F/logs/mvn.log" >&2; die "could not resolve org.apache.fluss:fluss-flink-1.20"; }
  JAR[fluss]=$(tr ':' '\n' <"$F/cp-fluss.txt" | grep '/fluss-flink-1.20-[^/]*\.jar$' | head -n1)
  [ -n "${JAR[fluss]}" ] || die "fluss-flink-1.20 is not on the -Pfluss class path"
fi
for c in $CONNECTORS; do say "connector $c: ${JAR[$c]}"; done

FLUSS="$WORK/fluss"
started_fluss=0
ok=0
declare -A JOB DB FEEDER
cleanup() {
  for c in "${!FEEDER[@]}"; do kill "${FEEDER[$c]}" 2>/dev/null; done
  if [ -n "${REST:-}" ]; then
    for c in "${!JOB[@]}"; do "$PY" "$FEED" rest "$REST" cancel "${JOB[$c]}" >/dev/null 2>&1; done
  fi
  ours() { { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -q -- "$WORK"; }
  for f in "$F"/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); ours "$pid" && kill "$pid" 2>/dev/null
  done
  for f in "$F"/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    ours "$pid" && kill -9 "$pid" 2>/dev/null
    rm -f "$f"
  done
  if [ "$started_fluss" = 1 ]; then
    if [ "$ok" = 1 ] && [ "${KEEP_WORKDIR:-0}" != 1 ]; then
      "$ROOT/tests/fluss-cluster/stop.sh" --clean "$FLUSS" >/dev/null 2>&1
    else
      "$ROOT/tests/fluss-cluster/stop.sh" "$FLUSS" >/dev/null 2>&1
    fi
  fi
  if [ "$ok" = 1 ] && [ "${KEEP_WORKDIR:-0}" != 1 ]; then rm -rf "$WORK"; else say "logs kept in $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rest() { "$PY" "$FEED" rest "$REST" "$@"; }

# --- Fluss: three tablet servers ---
say "starting Apache Fluss (3 tablet servers) in $FLUSS"
started_fluss=1
"$ROOT/tests/fluss-cluster/start.sh" --tablets 3 "$FLUSS" >/dev/null ||
  die "tests/fluss-cluster/start.sh --tablets 3 $FLUSS (logs in $FLUSS/logs)"
set -a; . "$FLUSS/bootstrap.env"; set +a

# --- Flink session cluster ---
SLOTS=$(echo "$CONNECTORS" | wc -w)
rport=$(free_port)
REST="http://127.0.0.1:$rport"
cat >"$F/conf/config.yaml" <<EOF
jobmanager.rpc.address: 127.0.0.1
jobmanager.bind-host: 127.0.0.1
jobmanager.rpc.port: $(free_port)
rest.address: 127.0.0.1
rest.bind-address: 127.0.0.1
rest.port: $rport
taskmanager.host: 127.0.0.1
taskmanager.bind-host: 127.0.0.1
taskmanager.numberOfTaskSlots: $SLOTS
cluster.evenly-spread-out-slots: true
jobmanager.memory.process.size: 1024m
taskmanager.memory.process.size: $((768 + 512 * SLOTS))m
taskmanager.memory.managed.size: 64m
parallelism.default: 2
heartbeat.interval: 2000
heartbeat.timeout: 10000
execution.checkpointing.dir: file://$F/checkpoints
web.tmpdir: $F/web
blob.storage.directory: $F/blobs
EOF
cat >"$F/conf/log4j.properties" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
EOF
cat >"$F/conf/client-log4j.properties" <<'EOF'
rootLogger.level = WARN
rootLogger.appenderRef.console.ref = ConsoleAppender
appender.console.name = ConsoleAppender
appender.console.type = CONSOLE
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n
EOF
# What a Flink distribution's config.yaml gives every JVM on Java 17.
OPENS=(--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED)
# The JVM options and dynamic properties flink's jobmanager.sh / taskmanager.sh derive from the
# memory settings (BashJavaUtils, as the scripts do).
resource_params() { # GET_JM_RESOURCE_PARAMS | GET_TM_RESOURCE_PARAMS
  java -cp "$CP" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$F/conf" 2>/dev/null |
    grep '^BASH_JAVA_UTILS_EXEC_RESULT:' | sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://'
}
jm_params=$(resource_params GET_JM_RESOURCE_PARAMS); tm_params=$(resource_params GET_TM_RESOURCE_PARAMS)
[ "$(echo "$jm_params" | wc -l)" = 2 ] && [ "$(echo "$tm_params" | wc -l)" = 2 ] ||
  die "BashJavaUtils gave no memory parameters for $F/conf/config.yaml"
launch() { # NAME CLASS [ARGS...]; java.io.tmpdir in WORKDIR: the native library copies land there
  local name=$1 class=$2 jvm dyn; shift 2
  case $class in
    *Entrypoint) jvm=$(echo "$jm_params" | sed -n 1p); dyn=$(echo "$jm_params" | sed -n 2p) ;;
    *) jvm=$(echo "$tm_params" | sed -n 1p); dyn=$(echo "$tm_params" | sed -n 2p) ;;
  esac
  mkdir -p "$F/tmp-$name"
  # shellcheck disable=SC2086
  nohup java $jvm "${OPENS[@]}" -Djava.io.tmpdir="$F/tmp-$name" -Dlog.file="$F/logs/$name.log" \
    -Dlog4j.configurationFile="file:$F/conf/log4j.properties" -cp "$CP" "$class" \
    --configDir "$F/conf" $dyn "$@" >"$F/logs/$name.out" 2>&1 </dev/null &
  echo $! >"$F/pids/$name.pid"
  disown $!  # no "Killed" line from the shell when the test kills it
}
say "starting the JobManager (REST $REST) and two TaskManagers with $SLOTS slot(s) each"
launch jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint
for t in 1 2; do
  launch "tm-$t" org.apache.flink.runtime.taskexecutor.TaskManagerRunner -D "taskmanager.resource-id=tm-$t"
done
rest wait-slots 2 $((2 * SLOTS)) "$WAIT" || die "the session cluster did not come up (logs in $F/logs)"
say "session cluster up: 2 TaskManagers, $((2 * SLOTS)) slots ($(($(date +%s) - t0)) s so far)"

# --- the jobs ---
submit() { # CONNECTOR SCRIPT: prints JOB_ID=... for a script with INSERTs
  local c=$1 script=$2
  java -Xmx512m "${OPENS[@]}" -Djava.io.tmpdir="$F/tmp-client" \
    -Dlog4j.configurationFile="file:$F/conf/client-log4j.properties" \
    -cp "$HERE/flink/target/classes:${JAR[$c]}:$CP" io.riverlet.engines.SqlSubmit "$script" \
    "var.BOOTSTRAP=$FLUSS_BOOTSTRAP" "var.DB=${DB[$c]}" \
    execution.target=remote rest.address=127.0.0.1 "rest.port=$rport" "pipeline.jars=file://${JAR[$c]}" \
    execution.checkpointing.interval=3s execution.checkpointing.mode=EXACTLY_ONCE \
    "execution.checkpointing.dir=file://$F/checkpoints" state.backend.type=hashmap \
    restart-strategy.type=fixed-delay restart-strategy.fixed-delay.attempts=1000 \
    restart-strategy.fixed-delay.delay=2s parallelism.default=2 "pipeline.name=engine-clusters-$c" \
    2>>"$F/logs/submit-$c.log"
}
mkdir -p "$F/tmp-client"
for c in $CONNECTORS; do
  # Apache Fluss 0.9.1 now and then never assigns a new table's buckets (the create-table race
  # of tests/README.md): then the tables are created again in a new database, up to 3 times.
  for attempt in 1 2 3; do
    DB[$c]="engines_${c}_$(date +%s)_$attempt"
    submit "$c" "$HERE/flink/setup.sql" >/dev/null || die "setup.sql through the $c connector (log: $F/logs/submit-$c.log)"
    "$PY" "$FEED" await-leaders "$FLUSS_BOOTSTRAP" "${DB[$c]}" 20 && break
    [ "$attempt" = 3 ] && die "the $c connector's tables got no leaders in 3 attempts (see $FLUSS/logs/coordinator.log)"
    say "the tables of ${DB[$c]} got no leader for every bucket: creating them again"
  done
  "$PY" "$FEED" customers "$FLUSS_BOOTSTRAP" "${DB[$c]}" || die "writing ${DB[$c]}.customers"
  out=$(submit "$c" "$HERE/flink/job.sql") || die "job.sql through the $c connector (log: $F/logs/submit-$c.log)"
  JOB[$c]=$(echo "$out" | sed -n 's/^JOB_ID=//p')
  [ -n "${JOB[$c]}" ] || die "SqlSubmit printed no JOB_ID for the $c connector"
  say "$c: job ${JOB[$c]} on database ${DB[$c]}"
done
for c in $CONNECTORS; do
  rest wait-running "${JOB[$c]}" "$WAIT" || die "the $c job did not start running"
done
for c in $CONNECTORS; do
  rm -f "$F/stop-feeders"
  "$PY" "$FEED" stream "$FLUSS_BOOTSTRAP" "${DB[$c]}" 0 "$F/stop-feeders" "$F/feeder-$c.count" \
    >"$F/logs/feeder-$c.log" 2>&1 &
  FEEDER[$c]=$!
done
feeders_alive() {
  for c in $CONNECTORS; do
    kill -0 "${FEEDER[$c]}" 2>/dev/null || { cat "$F/logs/feeder-$c.log" >&2; die "the $c feeder stopped"; }
  done
}
checkpoint_all() { # WHY: every job completes one more checkpoint
  for c in $CONNECTORS; do
    n=$(rest completed "${JOB[$c]}") || die "the $c job's checkpoints ($1)"
    rest wait-checkpoint "${JOB[$c]}" "$n" "$WAIT" >/dev/null || die "the $c job completed no checkpoint $1"
  done
}
checkpoint_all "while the feeders write"
checkpoint_all "while the feeders write (a second one)"
feeders_alive

# --- fault 1: kill -9 a TaskManager, start it again ---
declare -A RESTARTS
for c in $CONNECTORS; do RESTARTS[$c]=$(rest restarts "${JOB[$c]}"); done
say "kill -9 TaskManager tm-1 (pid $(cat "$F/pids/tm-1.pid")), then start it again"
kill -9 "$(cat "$F/pids/tm-1.pid")"
launch tm-1 org.apache.flink.runtime.taskexecutor.TaskManagerRunner -D "taskmanager.resource-id=tm-1-again"
for c in $CONNECTORS; do
  rest wait-restarted "${JOB[$c]}" "${RESTARTS[$c]}" "$WAIT" >/dev/null ||
    die "the $c job did not restart after the TaskManager was killed"
  rest wait-running "${JOB[$c]}" "$WAIT" || die "the $c job did not run again after the TaskManager kill"
done
checkpoint_all "after the TaskManager kill"
feeders_alive
for c in $CONNECTORS; do
  s=$(rest summary "${JOB[$c]}"); say "$c after the TaskManager kill: $s"
  echo "$s" | grep -q '"restored": {' || die "the $c job shows no restored checkpoint after restarting: $s"
done

# --- fault 2: kill -9 a tablet server, checkpoint without it, start it again ---
# The one leading the most buckets of the jobs' tables, and at least one bucket of each job's
# source and counting sink.
dbs=(); for c in $CONNECTORS; do dbs+=("${DB[$c]}"); done
ts=$("$PY" "$FEED" leaders "$FLUSS_BOOTSTRAP" "${dbs[@]}" 2>"$F/logs/leaders.log") ||
  { cat "$F/logs/leaders.log" >&2; die "no tablet server leads a bucket of every job's orders and totals"; }
sed 's/^/  /' "$F/logs/leaders.log" >&2
for c in $CONNECTORS; do RESTARTS[$c]=$(rest restarts "${JOB[$c]}"); done
say "kill -9 tablet server $ts"
"$ROOT/tests/fluss-cluster/ctl.sh" kill "tablet-$ts" "$FLUSS" >/dev/null || die "ctl.sh kill tablet-$ts"
checkpoint_all "with tablet server $ts down"
checkpoint_all "with tablet server $ts down (a second one)"
say "starting tablet server $ts again"
"$ROOT/tests/fluss-cluster/ctl.sh" start "tablet-$ts" "$FLUSS" >/dev/null || die "ctl.sh start tablet-$ts"
for c in $CONNECTORS; do rest wait-running "${JOB[$c]}" "$WAIT" || die "the $c job is not running after the tablet server came back"; done
checkpoint_all "after tablet server $ts came back"
feeders_alive
for c in $CONNECTORS; do
  say "$c: restarts while tablet server $ts was down or coming back: $(( $(rest restarts "${JOB[$c]}") - RESTARTS[$c] ))"
done

# --- the sinks must hold exactly what the orders written give ---
touch "$F/stop-feeders"
for c in $CONNECTORS; do
  for _ in $(seq 1 60); do kill -0 "${FEEDER[$c]}" 2>/dev/null || break; sleep 1; done
  wait "${FEEDER[$c]}" || { cat "$F/logs/feeder-$c.log" >&2; die "the $c feeder failed"; }
  unset "FEEDER[$c]"
done
failed=0
for c in $CONNECTORS; do
  n=$(cat "$F/feeder-$c.count")
  say "$c: $n orders written; waiting for the sinks"
  "$PY" "$FEED" check "$FLUSS_BOOTSTRAP" "${DB[$c]}" "$n" "$WAIT" || { failed=1; continue; }
  # Still exact once the job has checkpointed again (nothing replayed late).
  m=$(rest completed "${JOB[$c]}")
  rest wait-checkpoint "${JOB[$c]}" "$m" "$WAIT" >/dev/null || die "the $c job completed no checkpoint at the end"
  "$PY" "$FEED" check "$FLUSS_BOOTSTRAP" "${DB[$c]}" "$n" 30 || failed=1
  s=$(rest summary "${JOB[$c]}"); say "$c at the end: $s"
  echo "$s" | grep -q '"state": "RUNNING"' || { say "the $c job is not RUNNING: $s"; failed=1; }
done
# Riverlet's TaskManagers loaded the native library themselves (extracted into their tmp dir).
if [[ " $CONNECTORS " == *" riverlet "* ]]; then
  for t in 1 2; do
    grep -q libriverlet_jni "/proc/$(cat "$F/pids/tm-$t.pid")/maps" ||
      { say "TaskManager tm-$t has not loaded libriverlet_jni"; failed=1; }
  done
  say "native library copies extracted by the TaskManagers: $(ls "$F"/tmp-tm-*/riverlet_jni-* 2>/dev/null | wc -l)"
fi
[ "$failed" = 0 ] || die "the sinks or the jobs are not as expected (see above)"
for c in $CONNECTORS; do rest cancel "${JOB[$c]}" >/dev/null || say "could not cancel the $c job"; unset "JOB[$c]"; done
ok=1
say "passed in $(($(date +%s) - t0)) s ($CONNECTORS)"
exit
}
