#!/usr/bin/env bash
# A lake that Apache Fluss itself tiered, read by Riverlet (issue #31 item 5), in Iceberg or in
# Paimon (--format; the steps are the same):
#   1. resolves Fluss's lake tiering service and Flink connector from Maven Central
#      (tests/fluss-lake/pom.xml, profile iceberg or paimon: fluss-flink-tiering,
#      fluss-flink-1.20, Flink 1.20, and iceberg-flink-runtime + hadoop-apache, or paimon-bundle
#      1.3.1 + paimon-flink-1.20 + flink-shaded-hadoop-2-uber; fluss-lake-iceberg /
#      fluss-lake-paimon by dependency:copy, their parent POM is not on Central) and builds
#      tests/flink-compare's StatementRunner;
#   2. starts a 1-tablet-server Apache Fluss 0.9.1 cluster with that lake (start.sh
#      --iceberg-lake: a Hadoop catalog in WORKDIR/iceberg-warehouse; --paimon-lake: a
#      filesystem catalog in WORKDIR/paimon-warehouse);
#   3. runs Fluss's tiering job (FlussLakeTieringEntrypoint, a local Flink MiniCluster in one
#      JVM) with the same datalake.<format>.* options;
#   4. tests/fluss-lake/lake_check.py writes a log table and a primary-key table
#      (table.datalake.enabled, freshness 3 s; with Paimon also `pkdv`, the same primary-key
#      rows in a deletion-vector table the tiering compacts, whose union reads take the
#      READABLE lake snapshot Fluss derives) with Riverlet, waits until the tiering job has
#      committed a lake snapshot (Iceberg or Paimon) holding every record and Fluss reports it (its
#      GetLakeSnapshot answer to the tiering job), updates and deletes keys of the PK table and
#      waits again, stops the tiering job, then writes more rows (log only);
#   5. reads both tables and their `$lake` tables with Fluss's Flink connector in batch mode
#      (tests/fluss-lake/reads.sql) and with Riverlet: Python, Java (JavaRead.java on the
#      riverlet-java JAR and target/debug/libriverlet_jni.so; LAKE_JAVA=0 skips it) and Spark
#      (SparkRead.java: Riverlet's catalog in a local Spark 3.5.7 session, tests/fluss-lake/spark/
#      pom.xml, on the riverlet-spark-3.5 shaded JAR; LAKE_SPARK=0 skips it): union
#      read, `$lake`; checks that they equal the rows written and each other; exits non-zero
#      on any mismatch; then, with one lake data file of the log table (with Paimon, also of
#      the PK table) moved away, Riverlet's union read must fail naming it (it reads the lake,
#      not only the log, which still holds the same rows);
#   6. stops the tiering job and the cluster (logs kept when something failed).
#
#   bash tests/fluss-cluster/run-fluss-tiered-lake.sh [--format iceberg|paimon] [WORKDIR]
#                                                       (~2.5-4 min on 2 busy cores)
# --format: the lake format (default $LAKE_FORMAT, else iceberg). WORKDIR: default a new
# /tmp/flake-run.XXXXXX. Needs the repository's .venv with the riverlet package built (make
# test, or .venv/bin/maturin develop -m python/Cargo.toml) and Java 17.
{ # read whole before it runs: an edit of this file during a run cannot change the run
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
LAKE="$ROOT/tests/fluss-lake"
PY=${PYTHON:-$ROOT/.venv/bin/python}
WAIT=${LAKE_WAIT:-240}
cd "$ROOT"
say() { echo "run-fluss-tiered-lake: $*" >&2; }
t0=$(date +%s)

FORMAT=${LAKE_FORMAT:-iceberg}
WORKDIR=
while [ $# -gt 0 ]; do
  case "$1" in
    --format) [ $# -ge 2 ] || { say "--format needs iceberg or paimon"; exit 2; }
              FORMAT=$2; shift ;;
    --format=*) FORMAT=${1#--format=} ;;
    -*) say "unknown option '$1' (usage: [--format iceberg|paimon] [WORKDIR])"; exit 2 ;;
    *) [ -z "$WORKDIR" ] || { say "only one WORKDIR"; exit 2; }
       WORKDIR=$1 ;;
  esac
  shift
done
case "$FORMAT" in
  iceberg | paimon) ;;
  *) say "the lake format is iceberg or paimon, not '$FORMAT'"; exit 2 ;;
esac
own_workdir=0
if [ -z "$WORKDIR" ]; then WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/flake-run.XXXXXX"); own_workdir=1; fi
mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
T="$WORKDIR/tiering"
mkdir -p "$T"
rc=1
started=0
stop_tiering() {
  local pid
  [ -f "$T/job.pid" ] || return 0
  pid=$(cat "$T/job.pid")
  if { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$WORKDIR"; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$T/job.pid"
}
cleanup() {
  stop_tiering
  if [ "$started" = 1 ]; then
    local keep=(--clean)
    [ "$rc" -eq 0 ] || keep=()
    bash "$HERE/stop.sh" "${keep[@]}" "$WORKDIR" >&2 || say "WARNING: stop.sh failed"
  fi
  if [ "$rc" -eq 0 ] && [ "$own_workdir" = 1 ]; then rm -rf "$WORKDIR"; fi
  [ "$rc" -eq 0 ] || say "logs kept in $WORKDIR (logs/, tiering/)"
  say "$([ "$rc" -eq 0 ] && echo PASS || echo FAIL) after $(($(date +%s) - t0)) s"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { say "FAILED: $*"; exit 1; }

"$PY" -c 'import riverlet, pyarrow' 2>/dev/null ||
  die "$PY cannot import riverlet and pyarrow (build the .venv: make test, or PYTHON=...)"

# --- 1. class paths -------------------------------------------------------------------------
mvn -B -q -f "$LAKE/pom.xml" -P "$FORMAT" dependency:build-classpath \
  -Dmdep.outputFile="$T/cp.txt" >"$T/mvn.log" 2>&1 ||
  { cat "$T/mvn.log" >&2; die "could not resolve tests/fluss-lake/pom.xml (profile $FORMAT)"; }
FLUSS_VERSION_=$(sed -n 's:.*<fluss.version>\(.*\)</fluss.version>.*:\1:p' "$LAKE/pom.xml" | head -n1)
mvn -B -q dependency:copy -Dartifact="org.apache.fluss:fluss-lake-$FORMAT:$FLUSS_VERSION_" \
  -DoutputDirectory="$T/jars" >"$T/mvn.log" 2>&1 ||
  { cat "$T/mvn.log" >&2; die "could not fetch fluss-lake-$FORMAT $FLUSS_VERSION_"; }
mvn -B -q -f "$ROOT/tests/flink-compare/pom.xml" compile >"$T/mvn.log" 2>&1 ||
  { cat "$T/mvn.log" >&2; die "could not build tests/flink-compare (StatementRunner)"; }
LAKE_JAR="$T/jars/fluss-lake-$FORMAT-$FLUSS_VERSION_.jar"
# The tiering job without the format's Flink runtime (only the `$lake` reads need it): it writes
# with the Iceberg fluss-lake-iceberg shades (the same 1.10.1), or with paimon-bundle, the jar
# Fluss's distribution ships next to fluss-lake-paimon in plugins/paimon.
if [ "$FORMAT" = iceberg ]; then flink_runtime=/iceberg-flink-runtime-; else flink_runtime=/paimon-flink-1.20-; fi
TIER_CP="$(tr ':' '\n' <"$T/cp.txt" | grep -v -- "$flink_runtime" | paste -sd:):$LAKE_JAR"
READ_CP="$ROOT/tests/flink-compare/target/classes:$(cat "$T/cp.txt"):$LAKE_JAR"
cat >"$T/log4j2.properties" <<'P'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = File
appender.file.name = File
appender.file.type = File
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p [%t] %c - %m%n
P
JVM=(java -Xmx768m -XX:+IgnoreUnrecognizedVMOptions
  --add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED "-Dlog4j.configurationFile=file:$T/log4j2.properties")

# --- 2. the cluster -------------------------------------------------------------------------
started=1
bash "$HERE/start.sh" "--$FORMAT-lake" "$WORKDIR" >/dev/null ||
  die "the Apache Fluss cluster did not start (logs in $WORKDIR/logs)"
# shellcheck disable=SC1091
. "$WORKDIR/bootstrap.env"
[ "${FLUSS_DATALAKE:-}" = "$FORMAT" ] || die "start.sh --$FORMAT-lake wrote no FLUSS_DATALAKE=$FORMAT"
# The tiering job takes the catalog options the servers have (start.sh), as `--datalake.<k> v`.
if [ "$FORMAT" = iceberg ]; then
  WAREHOUSE=$FLUSS_ICEBERG_WAREHOUSE
  LAKE_ARGS=(--datalake.iceberg.type hadoop --datalake.iceberg.warehouse "$WAREHOUSE")
else
  WAREHOUSE=$FLUSS_PAIMON_WAREHOUSE
  LAKE_ARGS=(--datalake.paimon.metastore filesystem --datalake.paimon.warehouse "$WAREHOUSE")
fi
say "cluster up at $FLUSS_BOOTSTRAP, $FORMAT warehouse $WAREHOUSE"

# --- 3. Fluss's tiering service -------------------------------------------------------------
"${JVM[@]}" "-Dlog.file=$T/tiering.log" -Djava.io.tmpdir="$T" -cp "$TIER_CP" \
  org.apache.fluss.flink.tiering.FlussLakeTieringEntrypoint \
  --fluss.bootstrap.servers "$FLUSS_BOOTSTRAP" --fluss.tiering.poll.table.interval 1s \
  --datalake.format "$FORMAT" "${LAKE_ARGS[@]}" >"$T/tiering.out" 2>&1 </dev/null &
echo $! >"$T/job.pid"
for _ in $(seq 1 120); do
  grep -q 'switched from INITIALIZING to RUNNING' "$T/tiering.log" 2>/dev/null && break
  kill -0 "$(cat "$T/job.pid")" 2>/dev/null || { cat "$T/tiering.out" >&2; die "the tiering job exited"; }
  sleep 1
done
grep -q "Starting data tiering service from Fluss to $FORMAT" "$T/tiering.out" ||
  { cat "$T/tiering.out" >&2; die "the tiering job did not start"; }
say "tiering job running ($(grep -o 'jobId is [0-9a-f]*' "$T/tiering.out"))"

# --- 4. rows, tiered -------------------------------------------------------------------------
DB=lk
check() { "$PY" "$LAKE/lake_check.py" "$@"; }
wait_lake() { check wait "$FORMAT" "$FLUSS_BOOTSTRAP" "$DB" "$1" "$WAREHOUSE" "$T/tiering.log" "$WAIT"; }
# With Paimon also pkdv, the Paimon guide's deletion-vector table (lake_check.py).
PK_TABLES=(pk)
[ "$FORMAT" = paimon ] && PK_TABLES+=(pkdv)
check write "$FLUSS_BOOTSTRAP" "$DB" 1 "$FORMAT" || die "phase 1 writes"
wait_lake logs || die "the log table was not tiered"
for t in "${PK_TABLES[@]}"; do wait_lake "$t" || die "the primary-key table $t was not tiered"; done
check write "$FLUSS_BOOTSTRAP" "$DB" 2 "$FORMAT" || die "phase 2 writes"
for t in "${PK_TABLES[@]}"; do
  wait_lake "$t" || die "the primary-key table $t's updates and deletes were not tiered"
done
grep -E ' ERROR ' "$T/tiering.log" | head -n 5 >&2
stop_tiering
say "tiering job stopped; writing rows the lake will not have"
check write "$FLUSS_BOOTSTRAP" "$DB" 3 "$FORMAT" || die "phase 3 writes"

# --- 5. reads ------------------------------------------------------------------------------
say "reading with Fluss's Flink connector (batch)"
# reads.sql names logs and pk; pkdv gets the same two reads as pk.
cp "$LAKE/reads.sql" "$T/reads.sql"
if [ "$FORMAT" = paimon ]; then
  printf -- '-- query batch\nSELECT * FROM pkdv\n-- query batch\nSELECT * FROM `pkdv$lake`\n' >>"$T/reads.sql"
fi
READ_TABLES=(logs 'logs$lake')
for t in "${PK_TABLES[@]}"; do READ_TABLES+=("$t" "$t\$lake"); done
"${JVM[@]}" -Xmx1g "-Dlog.file=$T/flink-read.log" -Djava.io.tmpdir="$T" -cp "$READ_CP" \
  io.riverlet.compare.StatementRunner "$FLUSS_BOOTSTRAP" "$DB" "$T/reads.sql" \
  "$T/flink.txt" >"$T/flink-read.out" 2>&1 || die "StatementRunner failed (see $T/flink-read.out)"
sed 's/^/    flink: /' "$T/flink.txt" | grep -E 'ERROR|###' >&2
read_outs=()
JAVA_JAR=$(ls "$ROOT"/java/riverlet-java/target/riverlet-java-*.jar 2>/dev/null |
  grep -v -e sources -e javadoc | head -n1)
JNI_DIR=${CARGO_TARGET_DIR:-$ROOT/target}/debug
if [ "${LAKE_JAVA:-1}" = 1 ]; then
  [ -n "$JAVA_JAR" ] && [ -f "$JNI_DIR/libriverlet_jni.so" ] ||
    die "no riverlet-java JAR or $JNI_DIR/libriverlet_jni.so (make test builds both; LAKE_JAVA=0 skips the Java read)"
  mvn -B -q -f "$ROOT/java/pom.xml" -pl riverlet-java dependency:build-classpath \
    -Dmdep.includeScope=runtime -Dmdep.outputFile="$T/java-cp.txt" >"$T/mvn.log" 2>&1 ||
    { cat "$T/mvn.log" >&2; die "could not resolve riverlet-java's dependencies"; }
  say "reading with Riverlet's Java binding ($JAVA_JAR)"
  java -Djava.library.path="$JNI_DIR" --add-opens=java.base/java.nio=ALL-UNNAMED \
    -cp "$JAVA_JAR:$(cat "$T/java-cp.txt")" "$LAKE/JavaRead.java" "$FLUSS_BOOTSTRAP" "$DB" \
    "$T/java.txt" "${READ_TABLES[@]}" >"$T/java-read.out" 2>&1 ||
    { cat "$T/java-read.out" >&2; die "JavaRead failed"; }
  read_outs=("$T/java.txt")
fi
if [ "${LAKE_SPARK:-1}" = 1 ]; then
  SPARK_JAR=$(ls "$ROOT"/java/riverlet-spark-3.5/target/riverlet-spark-3.5_2.12-*.jar 2>/dev/null |
    grep -v -e /original- -e sources -e javadoc | head -n1)
  [ -n "$SPARK_JAR" ] ||
    die "no riverlet-spark-3.5 shaded JAR under java/riverlet-spark-3.5/target (tests/engine-clusters/spark_standalone.sh says how to build it; LAKE_SPARK=0 skips the Spark read)"
  mvn -B -q -f "$LAKE/spark/pom.xml" dependency:build-classpath \
    -Dmdep.outputFile="$T/spark-cp.txt" >"$T/mvn.log" 2>&1 ||
    { cat "$T/mvn.log" >&2; die "could not resolve tests/fluss-lake/spark/pom.xml (Spark 3.5.7)"; }
  say "reading with Riverlet's Spark catalog, a local Spark 3.5.7 session ($SPARK_JAR)"
  # Spark 3.5 on Java 17 needs these opens (its launcher adds them the same way).
  java -Xmx1g -Djava.io.tmpdir="$T" --add-opens=java.base/java.nio=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
    --add-opens=java.base/sun.util.calendar=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED \
    --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    -cp "$SPARK_JAR:$(cat "$T/spark-cp.txt")" "$LAKE/SparkRead.java" "$FLUSS_BOOTSTRAP" "$DB" \
    "$T/spark.txt" "${READ_TABLES[@]}" >"$T/spark-read.out" 2>&1 ||
    { tail -n 40 "$T/spark-read.out" >&2; die "SparkRead failed (see $T/spark-read.out)"; }
  read_outs+=("$T/spark.txt")
fi
say "asking Fluss's own client for the tables' latest and readable lake snapshots"
"${JVM[@]}" "-Dlog.file=$T/lake-snapshots.log" -cp "$READ_CP" "$LAKE/FlussLakeSnapshots.java" \
  "$FLUSS_BOOTSTRAP" "$DB" \
  "$T/lake-snapshots.txt" logs "${PK_TABLES[@]}" >"$T/lake-snapshots.out" 2>&1 ||
  { tail -n 40 "$T/lake-snapshots.out" >&2; die "FlussLakeSnapshots failed"; }
sed 's/^/    fluss client: /' "$T/lake-snapshots.txt" >&2
export LAKE_SNAPSHOTS="$T/lake-snapshots.txt"
say "reading with Riverlet (Python) and comparing"
check check "$FORMAT" "$FLUSS_BOOTSTRAP" "$DB" "$T/flink.txt" "${read_outs[@]}" || die "the reads differ"
# The lake rows are still in the Fluss log too: a union read must fail without a lake file.
check lake-used "$FORMAT" "$FLUSS_BOOTSTRAP" "$DB" "$WAREHOUSE" && rc=0
exit "$rc"
}
