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

# Disk left and the build's size, printed at the start and after the big steps so a run that
# runs out of space says where it went.
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

# The whole run's output also goes to a file, so the end can repeat where each failed suite
# stopped and which suites took the time: a CI log is often read from its tail only.
RUN_LOG=$(mktemp "${TMPDIR:-/tmp}/riverlet-run-all.XXXXXX")
exec > >(tee "$RUN_LOG") 2>&1

# What a run from a clean clone takes at its peak: 14 GB measured on 2026-12-07 (target/ 8.4 GB,
# the venvs, the Fluss and Flink clusters' files under /tmp) plus ~4 GB of caches it fills from
# nothing (~/.m2, ~/.cargo, pip). With less free, say so first: the suites that run out of space
# fail later with messages about other things (a missing Python package, a Maven copy).
CLEAN_RUN_NEEDS_GB=18
free_gb=$(df -BG --output=avail "$ROOT" | tail -1 | tr -dc '0-9')
if [ "${free_gb:-0}" -lt "$CLEAN_RUN_NEEDS_GB" ]; then
  echo "run-all: WARNING: ${free_gb} GB free on $(df --output=target "$ROOT" | tail -1);" \
    "a run from a clean clone needs about $CLEAN_RUN_NEEDS_GB GB and may fail with 'No space left on device'" >&2
fi
report_disk
run_start=$SECONDS
suite_times=()
failed_tails=()

run_suite() {
  local name=$1
  shift
  echo
  echo "=== suite: $name"
  local t0=$SECONDS first
  first=$(wc -l <"$RUN_LOG")
  if "$@"; then
    passed=$((passed + 1))
    echo "=== suite: $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "=== suite: $name: FAILED ($((SECONDS - t0)) s; $(df -h --output=avail "$ROOT" | tail -1 | tr -d ' ') disk free)"
    sleep 0.2 # tee writes the last lines
    failed_tails+=("--- $name, its last lines:"$'\n'"$(tail -n +"$((first + 1))" "$RUN_LOG" | tail -n 12)")
  fi
  suite_times+=("$((SECONDS - t0)) ${name%% (*}")
}

# The suites that took longest, on one line, and every failed suite's last lines.
report_run() {
  echo "time: $((SECONDS - run_start)) s in all; longest: $(printf '%s\n' "${suite_times[@]}" |
    sort -rn | head -n 12 | awk '{ n = $1; $1 = ""; printf "%s%s %ss", (NR > 1 ? "; " : ""), substr($0, 2, 28), n }')"
  local t
  for t in "${failed_tails[@]}"; do echo "$t"; done
}

setup_interop_venv() {
  if [ ! -x "$PY" ]; then
    python3 -m venv "$INTEROP_VENV" || return 1
  fi
  "$PY" -m pip install -q --disable-pip-version-check -r tests/requirements-interop.txt
}

# A tool's own virtualenv $1 (made if missing) with the pinned requirements file $2 installed.
setup_venv() {
  if [ ! -x "$1/bin/python" ]; then
    python3 -m venv "$1" || return 1
  fi
  "$1/bin/python" -m pip install -q --disable-pip-version-check -r "$2"
}

# moto's S3 server for the tiered-storage tests on S3 (core/tests/tiered_log.rs); without it
# those tests report themselves skipped.
MOTO_VENV=$ROOT/.venv-moto
run_suite "moto venv (S3 endpoint of the tiering tests)" setup_venv "$MOTO_VENV" tests/requirements-moto.txt
if [ -x "$MOTO_VENV/bin/moto_server" ]; then
  export RIVERLET_MOTO_SERVER="$MOTO_VENV/bin/moto_server"
fi

# pyiceberg, the independent reader of the Iceberg tables the embedded server tiers lake-enabled
# tables to (server/tests/lake_tables.rs); without it that check reports itself skipped.
LAKE_VENV=$ROOT/.venv-lake
run_suite "lake venv (pyiceberg reader of the lake tests)" setup_venv "$LAKE_VENV" \
  tests/requirements-lake.txt
if [ -x "$LAKE_VENV/bin/python" ]; then
  export RIVERLET_LAKE_PYTHON="$LAKE_VENV/bin/python"
fi

# pypaimon, Apache Paimon's Python reader (pins pyarrow<20, pandas<3: a venv of its own), the
# second independent reader of the Paimon tables of server/tests/lake_paimon.rs; without it
# that check reports itself skipped.
PAIMON_VENV=$ROOT/.venv-paimon
run_suite "paimon venv (pypaimon reader of the lake tests)" setup_venv "$PAIMON_VENV" \
  tests/requirements-paimon.txt
if [ -x "$PAIMON_VENV/bin/python" ]; then
  export RIVERLET_PAIMON_PYTHON="$PAIMON_VENV/bin/python"
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
trap '[ -f "$ICEBERG_REST_DIR/server.pid" ] && kill "$(cat "$ICEBERG_REST_DIR/server.pid")" 2>/dev/null; rm -f "$RUN_LOG"' EXIT
run_suite "iceberg REST catalog server (REST lake test)" start_iceberg_rest

# Apache Paimon's Java reader (paimon-bundle 1.3.1 from Maven Central, tests/paimon-java): the
# independent reader of the Paimon tables the embedded server tiers to
# (server/tests/lake_paimon.rs), which reports its Java checks skipped without it.
paimon_java_classpath() {
  RIVERLET_PAIMON_JAVA_CP=$(bash tests/paimon-java/run.sh --classpath) || return 1
  export RIVERLET_PAIMON_JAVA_CP
}
run_suite "paimon-bundle classpath (Paimon's Java reader of the lake tests)" paimon_java_classpath

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
# The documentation site (mkdocs, tools pinned in docs/requirements.txt, venv .venv-docs), rustdoc
# and Javadoc copied in; every internal link and anchor checked (no network).
run_suite "documentation site (make docs + link check)" bash docs/check.sh

# The C ABI: header drift is checked by the Rust tests; this builds and runs the C tests and
# the example under ASan/UBSan/LSan.
run_suite "c-api (gcc ASan/UBSan/LSan + example)" bash c-api/tests/run.sh
# The C/C++ SDK tarball of `make dist` (dev profile: the library above), unpacked and used with
# pkg-config (shared, static) and CMake's find_package; nothing may reach into the repository.
run_suite "c-api SDK tarball (pkg-config + CMake against the unpacked SDK)" bash c-api/tests/sdk.sh

# Python: the riverlet package (its own virtualenv .venv) and the official client's interop
# suite (pyfluss pins pandas 3, so it gets .venv-interop).
run_suite "python package (pytest + examples + stubtest)" bash python/run-tests.sh
# The package as a wheel (built like the suite above, so nothing recompiles), installed into a
# fresh venv with no cargo or rustc on PATH: the README's quickstart, pandas/polars/DuckDB.
# (`make dist`'s manylinux2014 zig build is `WHEEL_ZIG=1 bash tests/dist/wheel.sh`: ~15 min cold
# before vendored-openssl; with OpenSSL compiled by zig too it took 79 min on 2 heavily loaded
# cores on 2026-12-06, not measured on a quiet machine.)
run_suite "python wheel in a fresh venv without Rust (README quickstart, pandas/polars/DuckDB)" \
  bash tests/dist/wheel.sh
# Flight SQL (sql/: `riverlet flight`) with real clients from PyPI, pyarrow.flight and the ADBC
# Flight SQL driver (in .venv from the suite above), against `riverlet serve`.
run_suite "flight sql (pyarrow.flight + adbc + riverlet.flight_server)" \
  "$ROOT/.venv/bin/python" -m pytest -q tests/flight
# The Flight SQL JDBC driver (Maven Central) against `riverlet serve --flight-port`.
run_suite "flight sql jdbc (JUnit)" mvn_suite tests/flight/jdbc -T1 -B -q -f tests/flight/jdbc/pom.xml test
# Fluss's own Java client (fluss-client 0.9.1) makes its ACL calls against `riverlet serve`
# with the authorizer on: created, listed, enforced, dropped.
run_suite "Fluss Java client ACL calls against riverlet serve" bash tests/acl-java/run.sh
# Fluss's Java client registers, reads and deletes producer offsets (Fluss's Flink connector
# writing aggregation-engine tables runs after the flink suite, which builds ours).
# Fluss's Java client describes and alters cluster configs and leases KV snapshots.
run_suite "Fluss Java client cluster configs and KV snapshot leases against riverlet serve" \
  bash tests/cluster-admin-java/run.sh
run_suite "Fluss Java client producer-offset calls against riverlet serve" \
  bash tests/producer-offsets-java/run.sh
# Fluss's Java client and Riverlet's Python package put every key in the bucket Fluss's own
# bucketing function gives it, and each finds every row of the other (15 primary-key tables).
run_suite "Fluss Java client and Riverlet put every key in the same bucket (riverlet serve)" \
  bash tests/keys-java/run.sh
# Reliability scripts (tests/reliability, RELIABILITY.md), short runs: the riverlet package in
# .venv from the suite above, `riverlet serve` from the cargo build.
run_suite "kill -9 crash safety (3 cycles)" \
  "$ROOT/.venv/bin/python" tests/reliability/kill9.py --cycles 3 --server "$ROOT/target/debug/riverlet"
# Failover on a real 3-tablet-server Apache Fluss cluster (tests/fluss-cluster, Maven jars):
# kill -9 of the leader of most buckets, then a coordinator restart, under idempotent writers,
# a subscription and lookups (RELIABILITY.md). The freeze fault is left to the long run
# (tests/reliability/failover.py --cycles 20): the servers hold every write for ~30-46 s while a
# leader is frozen (RELIABILITY.md: Fluss's own Java client stalls as long), which this suite
# would report as a finding.
# Writers of all three binding families at once: writer w calls Python, Java (JNI, one JVM over
# the riverlet-java JAR of the java suite) or C (a process each, compiled against the cdylib of
# the c-api suite) in turn.
run_suite "failover on 3 Fluss tablet servers (kill -9, coordinator restart; Python, Java, C writers)" \
  "$ROOT/.venv/bin/python" tests/reliability/failover.py --cycles 2 --faults kill,coordinator \
  --client python,java,c --writers 6
# The Rust tests that kill and freeze tablet servers (core/tests/peer_bugs_cluster.rs:
# apache/fluss#4125/#4238 through a leader's death and freeze, #4149), on a cluster of their own.
run_suite "leader faults on 3 Fluss tablet servers (Rust peer-bug tests)" \
  bash tests/fluss-cluster/run-fault-tests.sh
# Read-optimized reads and the latest view from Fluss's RocksDB KV snapshots once the changelog
# head is deleted (core feature kv-snapshot, Debian's librocksdb-dev installed by the script).
run_suite "KV snapshots of Apache Fluss read through RocksDB (kv-snapshot feature)" \
  bash tests/fluss-cluster/run-kv-snapshot-tests.sh
# The embedded server's own KV snapshots as RocksDB files (riverlet-server feature kv-snapshot):
# core's reader and Fluss's own Java client (KvSnapshotBatchScanner) read the exact rows.
run_suite "KV snapshots of riverlet-server as RocksDB files (Fluss's Java client and core's reader)" \
  bash tests/kv-snapshot-java/run.sh
# Keyed writes and lookups on paimon- and iceberg-format primary-key tables: rows written by
# Fluss's Java client are found by Riverlet's lookups and the other way round, on a cluster
# with a Paimon lake of its own (start.sh --paimon-lake).
run_suite "lake-format bucketing against Apache Fluss (Paimon lake; Fluss's Java client)" \
  bash tests/fluss-cluster/run-lake-bucketing-tests.sh
run_suite "soak (30 s)" \
  "$ROOT/.venv/bin/python" tests/reliability/soak.py --seconds 30 --server "$ROOT/target/debug/riverlet"
run_suite "interop venv" setup_interop_venv
run_suite "pyfluss interop (official client vs embedded server)" \
  env RIVERLET_SERVE_CMD="$ROOT/target/debug/riverlet serve --data-dir {data_dir} --port 0" \
  "$PY" -m pytest -q tests/interop
# The same Rust and pyfluss suites and the Java API's interop-tagged JUnit classes against the
# real Apache Fluss server (Maven Central jars).
# Spark, Flink and the side-by-side comparison with Fluss's connector run against the cluster
# too (RIVERLET_INTEROP_SUITES="spark flink compare" bash tests/fluss-cluster/run-interop.sh),
# but not here: Flink and the comparison add ~15 min, and Fluss 0.9.1's coordinator now and
# then never elects a leader for a new table (tests/README.md), which would make this run flaky.
# Spark (42 s) reaches the server only through the Java API, whose tests run here; its SQL runs
# against the embedded server below, and on this kind of cluster in the Spark standalone suite.
run_suite "real Apache Fluss interop (Rust + pyfluss + Java)" \
  env RIVERLET_INTEROP_SUITES="${RIVERLET_INTEROP_SUITES:-rust pyfluss java}" \
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

# The aggregation merge engine's documented functions and delete behaviours through Fluss's
# Flink connector (which also registers, reads and deletes producer offsets) and through ours
# (the JAR the flink suite above built), side by side against `riverlet serve`; --quick is a
# subset (32 statements) of the page's 89 (the full run: without --quick).
run_suite "aggregation engine through Fluss's and Riverlet's Flink connectors (riverlet serve)" \
  bash tests/producer-offsets-java/flink-agg.sh --quick

# Spark and Flink as distributed engines on a 3-tablet-server cluster (tests/engine-clusters):
# a Spark 3.5 standalone cluster (master + 2 workers, pyspark from PyPI) reading one partition
# per bucket in its executors, and a Flink 1.20 session cluster (JobManager + 2 TaskManagers)
# whose job survives a TaskManager kill and a tablet server kill with exact sink totals, each
# with the dist JAR below as a user gets it. Fluss's own Flink connector beside ours is the long
# run (FLINK_CONNECTORS unset).
# The JARs of `make dist` (packaging/jars.sh, dev profile, packaged in place so the Maven
# suites' classes are reused) into dist/, then tests/dist/jars.sh: no class the engines ship,
# nothing third-party unrelocated, and with only --jars the Spark 3.5 JAR on pyspark 3.5 and the
# Spark 4 JAR on pyspark 4 (PyPI, tests/engine-clusters/.venv-spark4): writes, a pushed-down
# read, the TVF. The standalone Spark and Flink session clusters below run the 3.5 and 1.20 JARs.
DIST_VERSION=$(bash packaging/version.sh)
run_suite "dist JARs (packaging/jars.sh; class check; Spark 3.5 and 4 JARs with only --jars)" \
  bash -c 'DIST_DIR="$PWD/dist" RIVERLET_CARGO_PROFILE=dev RIVERLET_CARGO_SKIP=true \
    bash packaging/jars.sh && DIST_JARS_DIR="$PWD/dist" \
    SPARK4_VENV="$PWD/tests/engine-clusters/.venv-spark4" bash tests/dist/jars.sh'
run_suite "Spark standalone cluster (master + 2 workers) on 3 Fluss tablet servers" \
  env SPARK_JAR="$PWD/dist/riverlet-spark-3.5_2.12-$DIST_VERSION.jar" \
  bash tests/engine-clusters/spark_standalone.sh
run_suite "Flink session cluster (JobManager + 2 TaskManagers) on 3 Fluss tablet servers" \
  env FLINK_CONNECTORS=riverlet FLINK_JAR="$PWD/dist/riverlet-flink-1.20-$DIST_VERSION.jar" \
  bash tests/engine-clusters/flink_session.sh

echo
report_run
report_disk
if [ "$failed" -gt 0 ]; then
  echo "failed suites: ${failed_names[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
