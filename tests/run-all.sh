#!/usr/bin/env bash
# Runs every test suite of the repository; the README's test command (`make test`) calls this.
# It installs what it needs through the package managers only (pinned; Python packages in the
# virtualenv .venv inside the repository), builds everything, runs each suite, exits non-zero
# if any failed, and ends with one summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
INTEROP_VENV=$ROOT/.venv-interop
PY=$INTEROP_VENV/bin/python

passed=0
failed=0
failed_names=()

# A clean clone never reuses cargo's incremental cache; in CI it is only gigabytes of disk.
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL=0
fi

# Disk left and the build's size, printed after the big steps so a run that runs out of space
# says where it went.
report_disk() {
  echo "disk: $(df -h --output=avail "$ROOT" | tail -1 | tr -d ' ') free;" \
    "target/ $(du -sh "$ROOT/target" 2>/dev/null | cut -f1);" \
    "~/.m2 $(du -sh "$HOME/.m2" 2>/dev/null | cut -f1)"
}

# Runs a Maven command for run_suite; when it fails, prints the failing tests' traces from the
# surefire/failsafe reports under $1 (Maven's own output names the test and the message only).
mvn_suite() {
  local dir=$1
  shift
  local marker
  marker=$(mktemp)
  if mvn "$@"; then
    rm -f "$marker"
    return 0
  fi
  bash tests/print-jvm-failures.sh "$dir" "$marker"
  rm -f "$marker"
  return 1
}

run_suite() {
  local name=$1
  shift
  echo
  echo "=== suite: $name"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "=== suite: $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "=== suite: $name: FAILED ($((SECONDS - t0)) s)"
  fi
}

setup_interop_venv() {
  if [ ! -x "$PY" ]; then
    python3 -m venv "$INTEROP_VENV" || return 1
  fi
  "$PY" -m pip install -q --disable-pip-version-check -r tests/requirements-interop.txt
}

setup_moto_venv() {
  if [ ! -x "$MOTO_VENV/bin/python" ]; then
    python3 -m venv "$MOTO_VENV" || return 1
  fi
  "$MOTO_VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/requirements-moto.txt
}

# moto's S3 server for the tiered-storage tests on S3 (core/tests/tiered_log.rs); without it
# those tests report themselves skipped.
MOTO_VENV=$ROOT/.venv-moto
run_suite "moto venv (S3 endpoint of the tiering tests)" setup_moto_venv
if [ -x "$MOTO_VENV/bin/moto_server" ]; then
  export RIVERLET_MOTO_SERVER="$MOTO_VENV/bin/moto_server"
fi

# pyiceberg, the independent reader of the Iceberg tables the embedded server tiers lake-enabled
# tables to (server/tests/lake_tables.rs); without it that check reports itself skipped.
LAKE_VENV=$ROOT/.venv-lake
setup_lake_venv() {
  if [ ! -x "$LAKE_VENV/bin/python" ]; then
    python3 -m venv "$LAKE_VENV" || return 1
  fi
  "$LAKE_VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/requirements-lake.txt
}
run_suite "lake venv (pyiceberg reader of the lake tests)" setup_lake_venv
if [ -x "$LAKE_VENV/bin/python" ]; then
  export RIVERLET_LAKE_PYTHON="$LAKE_VENV/bin/python"
fi

# Apache Iceberg's REST catalog test server (tests/iceberg-rest/start.sh, jars from Maven): the
# REST catalog of core/tests/lake_reads.rs trades_lake_through_an_iceberg_rest_catalog, which
# reports itself skipped without it. Stopped when this script exits.
ICEBERG_REST_DIR=$ROOT/target/iceberg-rest
start_iceberg_rest() {
  rm -rf "$ICEBERG_REST_DIR"
  RIVERLET_ICEBERG_REST=$(bash tests/iceberg-rest/start.sh "$ICEBERG_REST_DIR") || return 1
  export RIVERLET_ICEBERG_REST
}
trap '[ -f "$ICEBERG_REST_DIR/server.pid" ] && kill "$(cat "$ICEBERG_REST_DIR/server.pid")" 2>/dev/null' EXIT
run_suite "iceberg REST catalog server (REST lake test)" start_iceberg_rest

# The Rust side first: lint, build, unit and integration tests against the embedded server.
run_suite "cargo fmt" cargo fmt --all -- --check
run_suite "cargo clippy" cargo clippy --workspace --all-targets -- -D warnings
run_suite "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
run_suite "cargo build" cargo build --workspace --all-targets
report_disk
# The feature pins of hack/ match the dependency graph, so the single-package builds below
# (maturin, -p riverlet-c, -p riverlet --tests, make demo) reuse this build instead of compiling
# arrow and the core again (cargo's unit graph only, nothing is compiled).
run_suite "workspace hack up to date" python3 hack/generate.py --check
# (This includes the fuzz smoke pass, core/tests/fuzz_corpus.rs: the committed fuzz corpus plus
# 3000 mutated inputs per target through each fuzz target body, a few seconds on stable. The
# libFuzzer runs themselves are fuzz/run.sh, nightly, not part of CI.)
run_suite "rust tests" cargo test --workspace --all-targets --no-fail-fast
report_disk
run_suite "rust doctests (README snippets included)" cargo test --workspace --doc
run_suite "rust examples against riverlet serve" bash tests/run-examples.sh

# The JVM binding: the JAR (JNI library from the workspace's debug build above, not rebuilt) and
# its JUnit suites: surefire against the embedded server and `riverlet serve`, then failsafe
# against the packaged JAR (isolated class loader, child JVM with -Xcheck:jni).
run_suite "java (JNI binding + JUnit)" \
  mvn_suite java -T1 -B -q -f java/pom.xml -pl riverlet-java verify -Driverlet.cargo.profile=dev \
  -Driverlet.cargo.skip=true

# The C ABI: header drift is checked by the Rust tests; this builds and runs the C tests and
# the example under ASan/UBSan/LSan.
run_suite "c-api (gcc ASan/UBSan/LSan + example)" bash c-api/tests/run.sh

# Python: the riverlet package (its own virtualenv .venv) and the official client's interop
# suite (pyfluss pins pandas 3, so it gets .venv-interop).
run_suite "python package (pytest + examples + stubtest)" bash python/run-tests.sh
# Flight SQL (sql/: `riverlet flight`) with real clients from PyPI, pyarrow.flight and the ADBC
# Flight SQL driver (in .venv from the suite above), against `riverlet serve`.
run_suite "flight sql (pyarrow.flight + adbc + riverlet.flight_server)" \
  "$ROOT/.venv/bin/python" -m pytest -q tests/flight
# The Flight SQL JDBC driver (Maven Central) against `riverlet serve --flight-port`.
run_suite "flight sql jdbc (JUnit)" mvn_suite tests/flight/jdbc -T1 -B -q -f tests/flight/jdbc/pom.xml test
# Reliability scripts (tests/reliability, RELIABILITY.md), short runs: the riverlet package in
# .venv from the suite above, `riverlet serve` from the cargo build.
run_suite "kill -9 crash safety (3 cycles)" \
  "$ROOT/.venv/bin/python" tests/reliability/kill9.py --cycles 3 --server "$ROOT/target/debug/riverlet"
run_suite "soak (30 s)" \
  "$ROOT/.venv/bin/python" tests/reliability/soak.py --seconds 30 --server "$ROOT/target/debug/riverlet"
run_suite "interop venv" setup_interop_venv
run_suite "pyfluss interop (official client vs embedded server)" \
  env RIVERLET_SERVE_CMD="$ROOT/target/debug/riverlet serve --data-dir {data_dir} --port 0" \
  "$PY" -m pytest -q tests/interop
# The same Rust and pyfluss suites, the Java API's interop-tagged JUnit classes and the Spark
# connector suites against the real Apache Fluss server (Maven Central jars).
# Flink and the side-by-side comparison with Fluss's connector run against the cluster too
# (RIVERLET_INTEROP_SUITES="flink compare" bash tests/fluss-cluster/run-interop.sh), but not
# here: together they add ~15 min, and Fluss 0.9.1's coordinator now and then never elects a
# leader for a new table (tests/README.md), which would make this run flaky.
run_suite "real Apache Fluss interop (Rust + pyfluss + Java + Spark)" \
  env RIVERLET_INTEROP_SUITES="${RIVERLET_INTEROP_SUITES:-rust pyfluss java spark}" \
  bash tests/fluss-cluster/run-interop.sh
# Fluss's own Java readers (from the Maven Central jar) read the batches Riverlet writes.
run_suite "Fluss Java reads Riverlet's batches and JSON" bash tests/golden-java/verify.sh
# The Spark connector on Spark 3.5 (Scala 2.12) and Spark 4 (Scala 2.13): one JVM, one embedded
# server and one local[2] session per Spark version (reuses target/debug of the cargo build).
run_suite "spark (3.5 + 4.x)" mvn_suite java -T1 -B -q -f java/pom.xml \
  -pl riverlet-spark-3.5,riverlet-spark-4.x -am test -Driverlet.cargo.profile=dev -Driverlet.cargo.skip=true \
  -Dtest='io.riverlet.spark.**.*Test' -Dsurefire.failIfNoSpecifiedTests=false
# The Flink connector in a MiniCluster on Flink 1.20 and 2.x, from its shaded JARs (failsafe),
# against the embedded server; the Java API's own tests are left to the java suite.
run_suite "flink (1.20 + 2.x)" mvn_suite java -T1 -B -q -f java/pom.xml \
  -pl riverlet-flink-1.20,riverlet-flink-2.x -am verify -Driverlet.cargo.profile=dev -Driverlet.cargo.skip=true \
  -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='io.riverlet.flink.*IT' -Dfailsafe.failIfNoSpecifiedTests=false

echo
report_disk
if [ "$failed" -gt 0 ]; then
  echo "failed suites: ${failed_names[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
