#!/usr/bin/env bash
# Spark as a distributed engine: a Spark standalone cluster (one master, two workers with 1 core
# each, separate JVMs, from the pyspark distribution on PyPI pinned in requirements-spark.txt)
# on 127.0.0.1, and an Apache Fluss cluster with three tablet servers
# (tests/fluss-cluster/start.sh --tablets 3). spark_job.py is submitted with
# `spark-submit --master spark://... --jars <riverlet-spark-3.5 shaded JAR>`: the driver ships the
# JAR to the executors, which load Riverlet's native library from it themselves. The job writes a
# 6-bucket log table and a 6-bucket primary-key table from executor tasks and reads them back
# (one input partition per bucket, the rows equal what it wrote, every partition read in an
# executor JVM with libriverlet_jni loaded, at least two executors, the buckets led by all three
# tablet servers). See README.md beside this file.
#
# Usage: tests/engine-clusters/spark_standalone.sh [WORKDIR]
#   WORKDIR  where the Fluss cluster, the Spark daemons' logs and work dirs go
#            (default: a new directory under ${TMPDIR:-/tmp}); removed at the end unless
#            KEEP_WORKDIR=1 or the run failed.
# Needs the shaded JAR:
#   mvn -T1 -B -q -f java/pom.xml -pl riverlet-spark-3.5 -am package -DskipTests \
#       -Driverlet.cargo.profile=dev -Driverlet.cargo.skip=true   (after cargo build -p riverlet-jni)
# Environment: SPARK_JAR (the riverlet-spark-3.5 JAR to submit instead of the one under
#   java/riverlet-spark-3.5/target, e.g. a `make dist` JAR: tests/dist/jars.sh),
#   SPARK_VENV (default tests/engine-clusters/.venv-spark, created from
#   requirements-spark.txt if missing), ENGINE_WAIT (seconds for each readiness wait, default 120),
#   ENGINE_JOB_TIMEOUT (seconds for the job, default 900).
{ # read whole before it runs: an edit of this file during a run cannot change the run
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/engine-spark.XXXXXX")}
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
WAIT=${ENGINE_WAIT:-120}
JOB_TIMEOUT=${ENGINE_JOB_TIMEOUT:-900}
VENV=${SPARK_VENV:-$HERE/.venv-spark}
say() { echo "spark_standalone: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }
t0=$(date +%s)

if [ -n "${SPARK_JAR:-}" ]; then
  jar=$SPARK_JAR
  [ -f "$jar" ] || die "SPARK_JAR=$jar is not a file"
else
  jar=$(ls "$ROOT"/java/riverlet-spark-3.5/target/riverlet-spark-3.5_2.12-*.jar 2>/dev/null |
    grep -v /original- | head -n1)
  [ -n "$jar" ] || die "no riverlet-spark-3.5 shaded JAR under java/riverlet-spark-3.5/target (build it: see the header)"
fi
unzip -l "$jar" | grep 'native/linux-x86_64/libriverlet_jni.so' >/dev/null ||
  die "$jar does not carry native/linux-x86_64/libriverlet_jni.so"

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV (pyspark from requirements-spark.txt)"
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q -r "$HERE/requirements-spark.txt" ||
    die "could not install $HERE/requirements-spark.txt into $VENV"
fi
SPARK_HOME=$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') ||
  die "pyspark is not importable from $VENV"
export SPARK_HOME PYSPARK_PYTHON="$VENV/bin/python" PYSPARK_DRIVER_PYTHON="$VENV/bin/python"
export SPARK_LOCAL_IP=127.0.0.1 SPARK_LOG_DIR="$WORK/spark/logs" SPARK_CONF_DIR="$WORK/spark/conf"
mkdir -p "$SPARK_LOG_DIR" "$SPARK_CONF_DIR" "$WORK/spark/pids" "$WORK/spark/tmp-driver" "$WORK/spark/tmp-executors"
say "Spark $("$VENV/bin/python" -c 'import pyspark; print(pyspark.__version__)') from $SPARK_HOME; JAR $jar"

FLUSS="$WORK/fluss"
started_fluss=0
ok=0
cleanup() {
  for f in "$WORK"/spark/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    # Only a JVM whose command line names this WORKDIR is ours.
    if { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$WORK"; then kill "$pid" 2>/dev/null; fi
  done
  for f in "$WORK"/spark/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$WORK"; then kill -9 "$pid" 2>/dev/null; fi
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
wait_for() { # DESCRIPTION COMMAND...: polls COMMAND every second for up to $WAIT s
  local what=$1; shift
  for _ in $(seq 1 "$WAIT"); do "$@" && return 0; sleep 1; done
  die "waited ${WAIT}s for $what"
}

# --- Fluss: three tablet servers ---
say "starting Apache Fluss (3 tablet servers) in $FLUSS"
started_fluss=1
"$ROOT/tests/fluss-cluster/start.sh" --tablets 3 "$FLUSS" >/dev/null ||
  die "tests/fluss-cluster/start.sh --tablets 3 $FLUSS (logs in $FLUSS/logs)"
set -a; . "$FLUSS/bootstrap.env"; set +a
[ -n "${FLUSS_TABLETS:-}" ] || die "no FLUSS_TABLETS in $FLUSS/bootstrap.env"

# --- Spark standalone: a master and two workers, each its own JVM ---
mport=$(free_port); mweb=$(free_port)
MASTER="spark://127.0.0.1:$mport"
daemon() { # NAME CLASS ARGS...: spark-class execs the JVM, so $! is the JVM's pid
  local name=$1; shift
  SPARK_DAEMON_MEMORY=512m SPARK_DAEMON_JAVA_OPTS="-Dengine.workdir=$WORK" nohup "$SPARK_HOME/bin/spark-class" "$@" \
    >"$SPARK_LOG_DIR/$name.out" 2>&1 </dev/null &
  echo $! >"$WORK/spark/pids/$name.pid"
}
master_json() { curl -sf "http://127.0.0.1:$mweb/json/"; }
alive_workers() {
  master_json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(w["state"]=="ALIVE" for w in d["workers"]))' 2>/dev/null
}
say "starting the Spark master at $MASTER (web UI port $mweb)"
daemon master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$mport" \
  --webui-port "$mweb"
master_alive() { master_json | grep -q '"status" *: *"ALIVE"'; }
wait_for "the Spark master's /json/ to say ALIVE (log: $SPARK_LOG_DIR/master.out)" master_alive
for w in 1 2; do
  mkdir -p "$WORK/spark/work-$w"
  daemon "worker-$w" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --port 0 \
    --webui-port "$(free_port)" --cores 1 --memory 1g --work-dir "$WORK/spark/work-$w" "$MASTER"
done
two_workers() { [ "$(alive_workers)" = 2 ]; }
wait_for "two ALIVE workers registered with the master (logs: $SPARK_LOG_DIR/worker-*.out)" two_workers
say "master and 2 workers up ($(($(date +%s) - t0)) s so far)"

# --- the job ---
say "submitting spark_job.py to $MASTER with --jars $(basename "$jar")"
timeout "$JOB_TIMEOUT" "$SPARK_HOME/bin/spark-submit" --master "$MASTER" --deploy-mode client \
  --name riverlet-engine-clusters \
  --driver-memory 512m --executor-memory 512m --executor-cores 1 \
  --conf spark.cores.max=2 \
  --conf spark.scheduler.minRegisteredResourcesRatio=1.0 \
  --conf spark.scheduler.maxRegisteredResourcesWaitingTime=120s \
  --conf spark.ui.enabled=false \
  --conf spark.local.dir="$WORK/spark/local" \
  --driver-java-options "-Djava.io.tmpdir=$WORK/spark/tmp-driver" \
  --conf spark.executor.extraJavaOptions="-Djava.io.tmpdir=$WORK/spark/tmp-executors" \
  --conf spark.sql.catalog.fluss_catalog=io.riverlet.spark.SparkCatalog \
  --conf spark.sql.catalog.fluss_catalog.bootstrap.servers="$FLUSS_BOOTSTRAP" \
  --jars "$jar" \
  "$HERE/spark_job.py" "$FLUSS_BOOTSTRAP" "$FLUSS_TABLETS" "$WORK/spark/tmp-executors" 2>"$WORK/spark/job.err" |
  tee "$WORK/spark/job.out"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && die "the job did not finish within ${JOB_TIMEOUT}s (stderr: $WORK/spark/job.err)"
[ "$rc" = 0 ] || { tail -n 40 "$WORK/spark/job.err" >&2; die "the job exited $rc (stderr: $WORK/spark/job.err)"; }
# The executors' own logs: each fetched the JAR from the driver.
for w in 1 2; do
  grep -rqs "Fetching spark://.*riverlet-spark-3.5" "$WORK/spark/work-$w" ||
    die "worker $w's executor log does not show the JAR fetched from the driver"
done
ok=1
say "passed in $(($(date +%s) - t0)) s"
exit
}
