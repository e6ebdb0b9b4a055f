#!/usr/bin/env bash
# The interop suite against a REAL Apache Fluss cluster: fetches the server through Maven
# (fetch.sh), starts one cluster of three tablet servers (replication factor 3) with a plaintext
# and a SASL/PLAIN listener each (start.sh --sasl --tablets 3), runs
#   1. the Rust integration tests:  cargo test -p riverlet --tests   with RIVERLET_TEST_BOOTSTRAP
#      (+ RIVERLET_TEST_SASL_BOOTSTRAP/_USERNAME/_PASSWORD) pointing at it;
#   2. the pyfluss suite:           python -m pytest tests/interop   with RIVERLET_BOOTSTRAP;
#      then (with pyfluss or the suite name routing) Riverlet's own routing tests: Python,
#      tests/fluss-cluster/test_routing.py, in .venv (the riverlet package, built by
#      python/run-tests.sh or maturin develop): every server leads buckets, one connection per
#      server, the rows read back are the rows written; C, c-api/tests/test_routing.c against
#      target/debug/libriverlet.so;
#   3. the Java API's JUnit tests that take a server (ServerTestBase: tables, time ranges,
#      subscriptions, admin, data types, seed scenarios, routing) with RIVERLET_TEST_BOOTSTRAP
#      and FLUSS_TABLETS, through
#      Maven, reusing target/debug's JNI library (cargo is not run again);
#   4. the Spark connector's suite on Spark 3.5 and Spark 4 (SparkTestBase: local[2] sessions;
#      database names get a per-JVM suffix there) with RIVERLET_TEST_BOOTSTRAP;
#   5. the Flink connector's MiniCluster ITs on Flink 1.20 and Flink 2.x (FlinkTestBase) with
#      RIVERLET_TEST_BOOTSTRAP: the Flink pages' database names (my_db, finance, ...) get a
#      suffix unique to each test JVM there, so both versions (and reruns) share one cluster;
#   6. tests/flink-compare: Fluss's own Flink connector and ours on the same statements;
# stops the cluster (always, through a trap), prints a summary (pass counts, the tests that are
# not applicable to the real server and why) and exits non-zero if anything failed.
#
# If the Maven download is impossible (no network, no Maven, no JDK) it fails loudly: it never
# skips. Usage: tests/fluss-cluster/run-interop.sh   (from anywhere; no arguments)
#
# Environment:
#   FLUSS_VERSION             fluss-server version (default: pinned in pom.xml, 0.9.1-incubating)
#   FLUSS_INTEROP_DIR         cluster WORKDIR (default: a fresh mktemp dir, removed at the end)
#   FLUSS_INTEROP_KEEP=1      keep WORKDIR (logs) after the run
#   RIVERLET_INTEROP_PY       python for the pyfluss venv (default: python3.11, else python3)
#   RIVERLET_INTEROP_TIMEOUT  seconds allowed for each suite (default 900, including the build)
#   RIVERLET_INTEROP_SUITES   the suites to run (default: "rust pyfluss java spark flink compare";
#                             "routing" runs the Python and C routing tests alone, pyfluss runs
#                             them too)
#   RIVERLET_INTEROP_SPARK    the Spark connector versions the spark suite runs (default "3.5 4.x";
#                             make test runs 3.5 here, and both against the embedded server)
#   FLUSS_INTEROP_TIERING=0   start the cluster with Fluss's default 1 GiB segments and no tiering
#                             (default: 1 MiB segments tiered to WORKDIR/data/remote every 5 s, so
#                             core/tests/tiered_log_cluster.rs reads segments Fluss uploaded; it
#                             is not applicable without them)
#   CARGO_TARGET_DIR          as usual
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
TIMEOUT="${RIVERLET_INTEROP_TIMEOUT:-900}"
SUITES=" ${RIVERLET_INTEROP_SUITES:-rust pyfluss java spark flink compare} "
want() { [[ "$SUITES" == *" $1 "* ]]; }
say() { echo "run-interop: $*" >&2; }
die() {
  echo "run-interop: ERROR: $*" >&2
  exit 1
}

t_start=$SECONDS

# --- 1. the server jars, through Maven ---------------------------------------------------------
say "fetching Apache Fluss ${FLUSS_VERSION:-(pinned version)} through Maven"
if ! classpath="$(bash "$HERE/fetch.sh")" || [ -z "$classpath" ]; then
  die "could not fetch the Apache Fluss server through Maven (see fetch.sh's messages above); \
the interop suite cannot run without it and is NOT skipped"
fi
export FLUSS_CLASSPATH="$classpath"

# --- 2. the cluster (stopped by the trap whatever happens) ------------------------------------
if [ -n "${FLUSS_INTEROP_DIR:-}" ]; then
  WORKDIR="$FLUSS_INTEROP_DIR"
  mkdir -p "$WORKDIR"
else
  WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-interop.XXXXXX")"
fi
failed=()
cleanup() {
  local keep=()
  # WORKDIR (configs, logs, test logs) is kept when asked or when something failed.
  if [ "${FLUSS_INTEROP_KEEP:-0}" != 1 ] && [ "${#failed[@]}" -eq 0 ]; then keep=(--clean); fi
  say "stopping the cluster in $WORKDIR"
  bash "$HERE/stop.sh" "${keep[@]}" "$WORKDIR" >&2 || say "WARNING: stop.sh failed"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Small segments and a short tiering interval: what a test writes rolls segments, and Fluss
# uploads them to remote.data.dir (start.sh sets WORKDIR/data/remote, a local path the client
# reads too) within seconds. RIVERLET_TEST_TIERED_SEGMENT_BYTES tells the Rust tests so.
TIER_SEGMENT_BYTES=1048576
# Three tablet servers (start.sh: replication factor 3): every suite's requests go to each
# bucket's leader, spread over the servers (tests/fluss-cluster/test_routing.py, RoutingTest).
TABLETS=3
# --metrics: each tablet server's Prometheus endpoint, for the routing test's server-side check.
cluster_conf=(--sasl --tablets "$TABLETS" --metrics)
if [ "${FLUSS_INTEROP_TIERING:-1}" != 0 ]; then
  cluster_conf+=(--conf "log.segment.file-size: ${TIER_SEGMENT_BYTES}b"
    --conf 'remote.log.task-interval-duration: 5 s')
else
  TIER_SEGMENT_BYTES=
fi
say "starting the cluster in $WORKDIR"
if ! bash "$HERE/start.sh" "${cluster_conf[@]}" "$WORKDIR" >/dev/null; then
  failed+=("cluster start")
  die "the Apache Fluss cluster did not start (logs in $WORKDIR/logs)"
fi
# shellcheck disable=SC1091
. "$WORKDIR/bootstrap.env"
say "Apache Fluss $FLUSS_VERSION up: plaintext $FLUSS_BOOTSTRAP, SASL $FLUSS_SASL_BOOTSTRAP"

summary=()
na_log="$WORKDIR/not-applicable.txt"
: >"$na_log"
# The JNI library of the workspace build is reused by the Maven suites when there is one (a
# per-package cargo build would compile the dependency tree again with other features); without
# one, Maven runs cargo.
cargo_skip=false
[ -f "${CARGO_TARGET_DIR:-$ROOT/target}/debug/libriverlet_jni.so" ] && cargo_skip=true

# Apache Fluss 0.9.1's coordinator can wedge for good: when the create-table race of
# tests/README.md hits a PARTITIONED table (the coordinator never registers it) and a partition
# of it is then created, building the partition's NotifyLeaderAndIsr fails (NullPointerException
# on the table path), the coordinator's request batch stays non-empty, and from then on every
# bucket state change fails with the message below: no table or partition created afterwards
# ever gets a leader, whoever the client is, until the coordinator restarts.
WEDGED='NotifyLeaderAndIsr batch request from coordinator to tablet server is not empty'
coordinator_wedged() { grep -q "$WEDGED" "$WORKDIR/logs/coordinator.log" 2>/dev/null; }
restarts=0
restart_cluster() {
  restarts=$((restarts + 1))
  cp "$WORKDIR/logs/coordinator.log" "$WORKDIR/logs/coordinator-wedged-$restarts.log"
  say "the Fluss coordinator is wedged (\"$WEDGED\", see tests/README.md; log kept as \
logs/coordinator-wedged-$restarts.log): restarting the cluster"
  bash "$HERE/stop.sh" "$WORKDIR" >&2 || say "WARNING: stop.sh failed"
  bash "$HERE/start.sh" "${cluster_conf[@]}" "$WORKDIR" >/dev/null || die "the cluster did not restart"
  # shellcheck disable=SC1091
  . "$WORKDIR/bootstrap.env"
}

# retry_if_wedged LOG STEP: runs the function STEP (which writes LOG and returns its exit
# status); when it failed and the coordinator wedged meanwhile, keeps LOG as LOG.wedged, restarts
# the cluster and runs STEP once more (STEP reads FLUSS_BOOTSTRAP & co. when it runs, so the
# second run goes to the new cluster). Sets wedge_note for the step's summary line.
wedge_note=""
retry_if_wedged() {
  local log=$1 step=$2 rc=0
  wedge_note=""
  "$step" || rc=$?
  if [ "$rc" -ne 0 ] && coordinator_wedged; then
    cp "$log" "$log.wedged"
    restart_cluster
    wedge_note=" (re-run after the coordinator wedged in the first run: $log.wedged)"
    rc=0
    "$step" || rc=$?
  fi
  return "$rc"
}

# --- 3. the Rust integration tests ------------------------------------------------------------
if want rust; then
rust_log="$WORKDIR/rust-tests.log"
say "running cargo test -p riverlet --tests against $FLUSS_BOOTSTRAP"
t0=$SECONDS
rust_step() {
  RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" \
    RIVERLET_TEST_SASL_BOOTSTRAP="$FLUSS_SASL_BOOTSTRAP" \
    RIVERLET_TEST_SASL_USERNAME="$FLUSS_SASL_USERNAME" \
    RIVERLET_TEST_SASL_PASSWORD="$FLUSS_SASL_PASSWORD" \
    RIVERLET_TEST_NOT_APPLICABLE_LOG="$na_log" \
    RIVERLET_TEST_TIERED_SEGMENT_BYTES="$TIER_SEGMENT_BYTES" \
    RIVERLET_TEST_REPLICATION_FACTOR="$TABLETS" \
    timeout "$TIMEOUT" cargo test -p riverlet --tests --no-fail-fast 2>&1 | tee "$rust_log"
  return "${PIPESTATUS[0]}"
}
rust_rc=0
retry_if_wedged "$rust_log" rust_step || rust_rc=$?
read -r r_pass r_fail r_ign < <(awk '/^test result:/ {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) ~ /^passed/) p += $i
      if ($(i + 1) ~ /^failed/) f += $i
      if ($(i + 1) ~ /^ignored/) g += $i
    }
  } END { print p + 0, f + 0, g + 0 }' "$rust_log")
n_na=$(sort -u "$na_log" | grep -c . || true)
summary+=("rust integration tests (cargo test -p riverlet --tests) vs Apache Fluss $FLUSS_VERSION: \
$r_pass passed ($n_na of them not applicable, see below), $r_fail failed, $r_ign ignored, \
exit $rust_rc, $((SECONDS - t0)) s$wedge_note")
[ "$rust_rc" -eq 0 ] || failed+=("rust integration tests")

fi

# --- 4. the pyfluss suite -----------------------------------------------------------------------
if want pyfluss; then
VENV="$ROOT/.venv-interop"
PY="$VENV/bin/python"
t0=$SECONDS
py_rc=0
if [ ! -x "$PY" ]; then
  base_py="${RIVERLET_INTEROP_PY:-}"
  if [ -z "$base_py" ]; then
    if command -v python3.11 >/dev/null 2>&1; then base_py=python3.11; else base_py=python3; fi
  fi
  say "creating $VENV with $base_py"
  "$base_py" -m venv "$VENV" || py_rc=1
fi
if [ "$py_rc" -eq 0 ]; then
  "$PY" -m pip install -q --disable-pip-version-check -r tests/requirements-interop.txt || py_rc=1
fi
py_log="$WORKDIR/pyfluss-tests.log"
if [ "$py_rc" -eq 0 ]; then
  say "running the pyfluss suite against $FLUSS_BOOTSTRAP"
  pyfluss_step() {
    RIVERLET_BOOTSTRAP="$FLUSS_BOOTSTRAP" timeout "$TIMEOUT" "$PY" -m pytest -q tests/interop 2>&1 |
      tee "$py_log"
    return "${PIPESTATUS[0]}"
  }
  retry_if_wedged "$py_log" pyfluss_step || py_rc=$?
  summary+=("pyfluss suite (tests/interop) vs Apache Fluss $FLUSS_VERSION: \
$(grep -E '(passed|failed|error)' "$py_log" | tail -n1 | sed 's/=//g; s/^ *//'), exit $py_rc, $((SECONDS - t0)) s$wedge_note")
else
  summary+=("pyfluss suite: could not set up $VENV (pip install -r tests/requirements-interop.txt failed)")
fi
[ "$py_rc" -eq 0 ] || failed+=("pyfluss suite")

fi

# The routing tests of Riverlet's Python package and C API against the tablet servers (with the
# pyfluss step, or the suite name routing): every server leads buckets of each table, the rows
# read back are the rows written, and (Python) the process holds one connection per server.
if want pyfluss || want routing; then
  t0=$SECONDS
  rt_log="$WORKDIR/routing-tests.log"
  RPY="$ROOT/.venv/bin/python"
  if "$RPY" -c 'import riverlet' 2>/dev/null; then
    say "running tests/fluss-cluster/test_routing.py against $FLUSS_BOOTSTRAP"
    routing_step() {
      FLUSS_BOOTSTRAP="$FLUSS_BOOTSTRAP" FLUSS_TABLETS="${FLUSS_TABLETS:-}" \
        FLUSS_METRICS="${FLUSS_METRICS:-}" timeout "$TIMEOUT" \
        "$RPY" -m pytest -q -s -p no:cacheprovider tests/fluss-cluster/test_routing.py 2>&1 |
        tee "$rt_log"
      return "${PIPESTATUS[0]}"
    }
    rt_rc=0
    retry_if_wedged "$rt_log" routing_step || rt_rc=$?
    summary+=("riverlet Python routing test (tests/fluss-cluster/test_routing.py) vs Apache Fluss \
$FLUSS_VERSION: $(grep -E '(passed|failed|error)' "$rt_log" | tail -n1 | sed 's/=//g; s/^ *//'), \
exit $rt_rc, $((SECONDS - t0)) s$wedge_note")
  else
    rt_rc=1
    summary+=("riverlet Python routing test: $RPY has no riverlet package (build it: \
bash python/run-tests.sh, or maturin develop into .venv)")
  fi
  [ "$rt_rc" -eq 0 ] || failed+=("python routing test")

  # The C API the same way (c-api/tests/test_routing.c, built as c-api/tests/run.sh builds it,
  # against target/debug/libriverlet.so): writes, reads per bucket, lookups, a subscription, and
  # riverlet_table_bucket_leaders naming every server.
  t0=$SECONDS
  c_log="$WORKDIR/c-routing-tests.log"
  c_lib="${CARGO_TARGET_DIR:-$ROOT/target}/debug"
  c_rc=0
  if [ ! -f "$c_lib/libriverlet.so" ]; then
    say "building the C library (cargo build -p riverlet-c)"
    cargo build -q -p riverlet-c || c_rc=1
  fi
  c_routing_step() {
    say "running c-api/tests/test_routing.c against $FLUSS_BOOTSTRAP"
    { "${CC:-gcc}" -std=c11 -g -O1 -Wall -Wextra -Werror -Wpedantic -fno-omit-frame-pointer \
        -fsanitize=address,undefined -fno-sanitize-recover=undefined -Ic-api/include \
        -Ic-api/examples c-api/tests/test_routing.c -o "$WORKDIR/test_routing" -L"$c_lib" \
        -lriverlet -Wl,-rpath,"$c_lib" -ldl -lpthread -lm &&
      RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" FLUSS_TABLETS="${FLUSS_TABLETS:-}" \
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
        LSAN_OPTIONS="suppressions=$ROOT/c-api/tests/lsan.supp:print_suppressions=0" \
        timeout "$TIMEOUT" "$WORKDIR/test_routing"; } 2>&1 | tee "$c_log"
    return "${PIPESTATUS[0]}"
  }
  wedge_note=""
  if [ "$c_rc" -eq 0 ]; then
    retry_if_wedged "$c_log" c_routing_step || c_rc=$?
  fi
  summary+=("C routing test (c-api/tests/test_routing.c) vs Apache Fluss $FLUSS_VERSION: \
$(grep -o '[0-9]* passed, [0-9]* failed' "$c_log" 2>/dev/null | tail -n1) checks, exit $c_rc, \
$((SECONDS - t0)) s$wedge_note")
  [ "$c_rc" -eq 0 ] || failed+=("C routing test")
fi

# --- 5. the Java API's tests -------------------------------------------------------------------
if want java; then
java_log="$WORKDIR/java-tests.log"
java_tests='TableTest,TimeRangeTest,SubscriptionTest,AdminTest,DataTypesTest,SeedScenarioTest,RoutingTest' # the interop-tagged classes + the seed scenarios
t0=$SECONDS
java_reports="$ROOT/java/riverlet-java/target/surefire-reports"
rm -rf "$java_reports" # counted below: only this run's reports
say "running the Java API's tests ($java_tests) against $FLUSS_BOOTSTRAP"
java_step() {
  rm -rf "$java_reports" # counted below: only this run's reports
  RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" FLUSS_TABLETS="${FLUSS_TABLETS:-}" timeout "$TIMEOUT" \
    mvn -T1 -B -q -f java/pom.xml -pl riverlet-java test -Driverlet.cargo.profile=dev \
    -Driverlet.cargo.skip="$cargo_skip" -Dtest="$java_tests" \
    2>&1 | tee "$java_log"
  return "${PIPESTATUS[0]}"
}
java_rc=0
retry_if_wedged "$java_log" java_step || java_rc=$?
cp -r "$java_reports" "$WORKDIR/java-reports" 2>/dev/null
read -r j_tests j_fail j_err < <(cat "$WORKDIR"/java-reports/TEST-*.xml 2>/dev/null |
  grep -o 'tests="[0-9]*" errors="[0-9]*" skipped="[0-9]*" failures="[0-9]*"' |
  tr -dc '0-9 \n' | awk '{ t += $1; e += $2; f += $4 } END { print t + 0, f + 0, e + 0 }')
summary+=("Java API tests ($java_tests) vs Apache Fluss $FLUSS_VERSION: $j_tests run, \
$j_fail failed, $j_err errors, exit $java_rc, $((SECONDS - t0)) s$wedge_note")
[ "$java_rc" -eq 0 ] && [ "$j_tests" -gt 0 ] || failed+=("java tests")

fi

# --- 6. the Spark and Flink connectors' suites ---------------------------------------------------
# run_maven SLUG NAME REPORT_DIRS... -- MAVEN_ARGS...: runs one Maven suite against the cluster
# (log: WORKDIR/SLUG-tests.log), counts its JUnit reports, and collects the "NOT APPLICABLE"
# lines it printed. When the suite failed and the coordinator wedged meanwhile (above), the
# cluster is restarted and the suite runs once more; the summary says so.
run_maven() {
  local log="$WORKDIR/$1-tests.log" name=$2 reports=() xml=() t0=$SECONDS rc tests fail err skip d
  local attempt note=""
  shift 2
  while [ "$1" != "--" ]; do reports+=("$ROOT/$1"); shift; done
  shift
  for attempt in 1 2; do
    rm -rf "${reports[@]}" # counted below: only this run's reports
    say "running the $name against $FLUSS_BOOTSTRAP"
    RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" \
      RIVERLET_TEST_SASL_BOOTSTRAP="$FLUSS_SASL_BOOTSTRAP" \
      RIVERLET_TEST_SASL_USERNAME="$FLUSS_SASL_USERNAME" \
      RIVERLET_TEST_SASL_PASSWORD="$FLUSS_SASL_PASSWORD" \
      timeout "$TIMEOUT" mvn -T1 -B -q -f java/pom.xml -Driverlet.cargo.profile=dev -Driverlet.cargo.skip="$cargo_skip" \
      "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ] || [ "$attempt" -eq 2 ] || ! coordinator_wedged; then break; fi
    cp "$log" "$log.wedged"
    restart_cluster
    note=" (re-run after the coordinator wedged in the first run: $log.wedged)"
  done
  for d in "${reports[@]}"; do xml+=("$d"/TEST-*.xml); done
  read -r tests fail err skip < <(cat "${xml[@]}" 2>/dev/null |
    grep -o 'tests="[0-9]*" errors="[0-9]*" skipped="[0-9]*" failures="[0-9]*"' |
    tr -dc '0-9 \n' | awk '{ t += $1; e += $2; s += $3; f += $4 } END { print t + 0, f + 0, e + 0, s + 0 }')
  grep -o 'NOT APPLICABLE to the server at .*' "$log" | sort -u >>"$na_log"
  summary+=("$name vs Apache Fluss $FLUSS_VERSION: $tests run, $fail failed, $err errors, \
$skip skipped, exit $rc, $((SECONDS - t0)) s$note")
  [ "$rc" -eq 0 ] && [ "$tests" -gt 0 ] || failed+=("$name")
}
if want spark; then
spark_versions=${RIVERLET_INTEROP_SPARK:-3.5 4.x}
spark_modules=() spark_reports=()
for v in $spark_versions; do
  spark_modules+=("riverlet-spark-$v"); spark_reports+=("java/riverlet-spark-$v/target/surefire-reports")
done
run_maven spark "Spark connector suite (${spark_versions// / + })" "${spark_reports[@]}" -- \
  -pl "$(IFS=,; echo "${spark_modules[*]}")" -am test \
  -Dtest='io.riverlet.spark.**.*Test' -Dsurefire.failIfNoSpecifiedTests=false
fi
if want flink; then
run_maven flink "Flink connector ITs (1.20 + 2.x)" java/riverlet-flink-1.20/target/failsafe-reports \
  java/riverlet-flink-2.x/target/failsafe-reports -- \
  -pl riverlet-flink-1.20,riverlet-flink-2.x -am -fae verify -Dtest=NoSuchTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='io.riverlet.flink.*IT' \
  -Dfailsafe.failIfNoSpecifiedTests=false
fi
# Fluss's own Flink connector and ours on the same statements (uses the JAR the Flink step built).
if want compare; then
  t0=$SECONDS
  say "running tests/flink-compare against $FLUSS_BOOTSTRAP"
  timeout "$TIMEOUT" bash tests/flink-compare/compare.sh "$FLUSS_BOOTSTRAP" "$WORKDIR/flink-compare" \
    2>&1 | tee "$WORKDIR/compare-tests.log"
  cmp_rc=${PIPESTATUS[0]}
  summary+=("Fluss's Flink connector vs ours (tests/flink-compare): \
$(grep -o '[0-9]* statements with equal.*' "$WORKDIR/compare-tests.log" | tail -n1), exit $cmp_rc, \
$((SECONDS - t0)) s")
  [ "$cmp_rc" -eq 0 ] || failed+=("flink-compare")
fi
n_na=$(sort -u "$na_log" | grep -c . || true)

# --- 7. summary ---------------------------------------------------------------------------------
echo
tiering="no tiering"
[ -n "$TIER_SEGMENT_BYTES" ] && tiering="$TIER_SEGMENT_BYTES-byte segments tiered every 5 s"
echo "=== interop summary (Apache Fluss $FLUSS_VERSION, $TABLETS tablet servers, plaintext + SASL/PLAIN, \
$tiering)"
for s in "${summary[@]}"; do echo "  $s"; done
if [ "$n_na" -gt 0 ]; then
  echo "  not applicable to the real server (they return early there; they run on the embedded one):"
  sort -u "$na_log" | sed 's/^NOT APPLICABLE to the server at [^:]*:[0-9]*: /    /'
fi
echo "  total $((SECONDS - t_start)) s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]} (kept for inspection: $WORKDIR: logs/, *tests.log)"
  exit 1
fi
echo "interop: all passed"
