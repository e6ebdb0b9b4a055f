#!/usr/bin/env bash
# The JARs of `make dist`, built and checked as a user gets them:
#   1. packaging/jars.sh with Cargo's dev profile, reusing target/debug (as make test does; no
#      cargo run), on a copy of java/ (java/*/target is left alone) into a temporary DIST_DIR;
#   2. tests/dist/check_jars.py: no class outside io/riverlet that the target engine ships, no
#      unrelocated third-party class unless allow-listed with its reason, the native library in
#      every JAR. Engine class lists: Spark 3.5 = the jars of pyspark 3.5 from PyPI (the venv of
#      tests/engine-clusters, created from its requirements-spark.txt if missing); Spark 4.x =
#      spark-sql_2.13 and its dependencies from Maven Central; Flink 1.20 / 2.x = the artifacts
#      of a Flink distribution's lib/ that Maven Central has (flink-clients,
#      flink-table-api-java-bridge, flink-table-planner-loader, flink-table-runtime,
#      flink-connector-files, flink-json, flink-csv) and their dependencies (flink-dist itself
#      is not on Central). Versions are the ones the module POMs build against;
#   3. tests/dist/spark_local.py: the dist riverlet-spark-3.5 JAR on pyspark 3.5
#      (`spark-submit --master local[2] --jars <JAR>`, nothing else added) against
#      `riverlet serve` (target/debug/riverlet): writes, a pushed-down catalog read, the
#      primary-key view, fluss_incremental_between_timestamp; with SPARK4_VENV set (a venv
#      holding pyspark 4.x from PyPI, e.g. pyspark==4.2.0) the riverlet-spark-4.x JAR too;
#   4. with DIST_SPARK_STANDALONE=1 also tests/engine-clusters/spark_standalone.sh with
#      SPARK_JAR=<that JAR> (a Spark standalone cluster and 3 Fluss tablet servers).
# Needs target/debug/libriverlet_jni.so and target/debug/riverlet
# (cargo build -p riverlet-jni -p riverlet-cli). Exit status non-zero on any failure.
# Environment: DIST_JARS_DIR: check the JARs packaging/jars.sh already wrote there instead of
#   building them (make test packages them in place, reusing the Maven suites' classes),
#   SPARK_VENV (default tests/engine-clusters/.venv-spark), SPARK4_VENV (above; created from
#   tests/engine-clusters/requirements-spark4.txt when missing), KEEP_WORKDIR=1 keeps the work directory,
#   DIST_SPARK_STANDALONE=1 (above).
{ # read whole before it runs
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV=${SPARK_VENV:-$ROOT/tests/engine-clusters/.venv-spark}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dist-jars.XXXXXX")
say() { echo "dist/jars: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }
SERVER_PID=""
ok=0
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  if [ "$ok" = 1 ] && [ "${KEEP_WORKDIR:-0}" != 1 ]; then rm -rf "$WORK"; else say "work directory kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)

for f in libriverlet_jni.so riverlet; do
  [ -x "$ROOT/target/debug/$f" ] || [ -f "$ROOT/target/debug/$f" ] ||
    die "no target/debug/$f (cargo build -p riverlet-jni -p riverlet-cli)"
done
VERSION=$(bash "$ROOT/packaging/version.sh") || die "packaging/version.sh"

# --- 1. the JARs ---
if [ -n "${DIST_JARS_DIR:-}" ]; then
  JARS="$(cd "$DIST_JARS_DIR" && pwd)" || die "no DIST_JARS_DIR $DIST_JARS_DIR"
  say "checking the JARs packaging/jars.sh wrote into $JARS"
else
  JARS="$WORK/dist"
  say "building the dist JARs (version $VERSION, dev profile) in $WORK"
  DIST_DIR="$JARS" JARS_BUILD_DIR="$WORK/build" RIVERLET_CARGO_PROFILE=dev \
    RIVERLET_CARGO_SKIP=true bash "$ROOT/packaging/jars.sh" || die "packaging/jars.sh"
fi
t1=$(date +%s)

# --- 2. engine class lists and the check ---
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV (pyspark from tests/engine-clusters/requirements-spark.txt)"
  python3 -m venv "$VENV" &&
    "$VENV/bin/pip" install -q -r "$ROOT/tests/engine-clusters/requirements-spark.txt" ||
    die "could not install pyspark into $VENV"
fi
SPARK_HOME=$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') ||
  die "pyspark is not importable from $VENV"
[ -d "$SPARK_HOME/jars" ] || die "no $SPARK_HOME/jars"

pom_prop() { # FILE NAME: the value of <NAME> in a POM's properties
  sed -n "s:.*<$2>\(.*\)</$2>.*:\1:p" "$1" | head -n1
}
engine_classpath() { # NAME GROUP VERSION ARTIFACT...: class-path file of those and their deps
  local name=$1 group=$2 version=$3; shift 3
  local dir="$WORK/engines/$name" deps="" a
  mkdir -p "$dir"
  for a in "$@"; do
    deps="$deps<dependency><groupId>$group</groupId><artifactId>$a</artifactId><version>$version</version></dependency>"
  done
  cat >"$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>io.riverlet.tests</groupId><artifactId>engine-$name</artifactId><version>0</version>
<packaging>pom</packaging><dependencies>$deps</dependencies></project>
EOF
  mvn -B -q -f "$dir/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
    -Dmdep.includeScope=runtime "-Dmdep.outputFile=$dir/classpath.txt" >"$dir/mvn.log" 2>&1 ||
    { cat "$dir/mvn.log" >&2; die "could not resolve the $name class list (Maven Central)"; }
  echo "$dir/classpath.txt"
}
SPARK4=$(pom_prop "$ROOT/java/riverlet-spark-4.x/pom.xml" spark.version)
FLINK1=$(pom_prop "$ROOT/java/pom.xml" flink1.version)
FLINK2=$(pom_prop "$ROOT/java/pom.xml" flink2.version)
FLINK_LIB=(flink-clients flink-table-api-java-bridge flink-table-planner-loader flink-table-runtime
  flink-connector-files flink-json flink-csv)
say "engine class lists: pyspark $("$VENV/bin/python" -c 'import pyspark; print(pyspark.__version__)'), Spark $SPARK4, Flink $FLINK1 and $FLINK2"
cp_spark4=$(engine_classpath spark-4.x org.apache.spark "$SPARK4" spark-sql_2.13) || exit 1
cp_flink1=$(engine_classpath flink-1.20 org.apache.flink "$FLINK1" "${FLINK_LIB[@]}") || exit 1
cp_flink2=$(engine_classpath flink-2.x org.apache.flink "$FLINK2" "${FLINK_LIB[@]}") || exit 1
python3 "$HERE/check_jars.py" --dist "$JARS" --version "$VERSION" \
  --engine "spark-3.5=$SPARK_HOME/jars" --engine "spark-4.x=$cp_spark4" \
  --engine "flink-1.20=$cp_flink1" --engine "flink-2.x=$cp_flink2" || die "check_jars.py"
t2=$(date +%s)

# --- 3. the Spark JARs on pyspark, against riverlet serve ---
mkdir -p "$WORK/serve"
"$ROOT/target/debug/riverlet" serve --data-dir "$WORK/serve/data" --port 0 \
  >"$WORK/serve/out" 2>"$WORK/serve/err" &
SERVER_PID=$!
for _ in $(seq 1 60); do
  grep -q '^bootstrap: ' "$WORK/serve/out" 2>/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve/err" >&2; die "riverlet serve exited"; }
  sleep 1
done
BOOTSTRAP=$(sed -n 's/^bootstrap: //p' "$WORK/serve/out" | head -n1)
[ -n "$BOOTSTRAP" ] || die "riverlet serve printed no bootstrap line (log: $WORK/serve/err)"
spark_local() { # VENV JAR: spark_local.py on that venv's pyspark with only that JAR added
  local venv=$1 jar=$2 home log
  home=$("$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') ||
    die "pyspark is not importable from $venv"
  log="$WORK/spark-submit-$(basename "$jar" .jar).err"
  say "pyspark $("$venv/bin/python" -c 'import pyspark; print(pyspark.__version__)'): spark-submit --master local[2] --jars $jar (riverlet serve at $BOOTSTRAP)"
  env SPARK_HOME="$home" PYSPARK_PYTHON="$venv/bin/python" PYSPARK_DRIVER_PYTHON="$venv/bin/python" \
    SPARK_LOCAL_IP=127.0.0.1 DIST_JAR="$jar" RIVERLET_BOOTSTRAP="$BOOTSTRAP" \
    "$home/bin/spark-submit" --master 'local[2]' --jars "$jar" \
    --conf spark.driver.extraJavaOptions=-Duser.timezone=UTC \
    "$HERE/spark_local.py" 2>"$log" ||
    { tail -n 40 "$log" >&2; die "spark_local.py with $jar (log: $log)"; }
}
JAR="$JARS/riverlet-spark-3.5_2.12-$VERSION.jar"
spark_local "$VENV" "$JAR"
if [ -n "${SPARK4_VENV:-}" ]; then
  if [ ! -x "$SPARK4_VENV/bin/python" ]; then
    say "creating $SPARK4_VENV (pyspark from tests/engine-clusters/requirements-spark4.txt)"
    python3 -m venv "$SPARK4_VENV" &&
      "$SPARK4_VENV/bin/pip" install -q -r "$ROOT/tests/engine-clusters/requirements-spark4.txt" ||
      die "could not install pyspark 4 into $SPARK4_VENV"
  fi
  spark_local "$SPARK4_VENV" "$JARS/riverlet-spark-4.x_2.13-$VERSION.jar"
fi
kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
t3=$(date +%s)

# --- 4. optional: the standalone cluster with the dist JAR ---
if [ "${DIST_SPARK_STANDALONE:-0}" = 1 ]; then
  SPARK_JAR="$JAR" SPARK_VENV="$VENV" bash "$ROOT/tests/engine-clusters/spark_standalone.sh" \
    "$WORK/standalone" ||
    die "tests/engine-clusters/spark_standalone.sh with SPARK_JAR=$JAR"
fi
ok=1
say "pass: build $((t1 - t0)) s, class check $((t2 - t1)) s, pyspark $((t3 - t2)) s, total $(($(date +%s) - t0)) s"
exit 0
}
