#!/usr/bin/env bash
# The aggregation merge engine's documented functions through Flink: flink-agg.sql (every
# function's Flink SQL example from Apache Fluss 0.9.1's aggregation page, with its null
# handling) run by tests/flink-compare's StatementRunner, each connector in one JVM of its own
# and its own database, the result lines compared with the page's stated results, written in
# the SQL file under each statement (statements.py splits it). Fluss's Flink connector
# (org.apache.fluss:fluss-flink-1.20 0.9.1, Maven Central) also exercises the producer-offset
# APIs: its sink's undo recovery of aggregation tables registers, reads and deletes them.
#   tests/producer-offsets-java/flink-agg.sh
#       against `riverlet serve` (builds the riverlet CLI): Fluss's connector and Riverlet's
#       side by side (java/riverlet-flink-1.20's shaded JAR, which must be built: mvn -T1 -B -q -f
#       java/pom.xml -pl riverlet-flink-1.20 -am package -DskipTests)
#   tests/producer-offsets-java/flink-agg.sh --fluss
#       against an Apache Fluss 0.9.1 cluster it starts and stops (tests/fluss-cluster), with
#       Fluss's connector, plus flink-agg-rbm64.sql (rbm64, which the embedded server refuses)
#   tests/producer-offsets-java/flink-agg.sh --quick   (what `make test` runs; with --fluss too)
#       only the statements marked `-- [quick]`: the first sum/max table, one table per family
#       of functions and every delete-behaviour case (32 statements, 23 of them Flink jobs,
#       instead of 89), the same documented results
#   FLINK_AGG_CONNECTORS="fluss riverlet" picks the connectors, which run side by side
#   (default: both against riverlet serve, fluss with --fluss).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNNER=$ROOT/tests/flink-compare
WORK=$(mktemp -d "${TMPDIR:-/tmp}/riverlet-flink-agg.XXXXXX")
SERVER_PID=
FLUSS=0
QUICK=()
for arg in "$@"; do
  case $arg in
    --fluss) FLUSS=1 ;;
    --quick) QUICK=(--quick) ;;
    *) echo "flink-agg: unknown argument '$arg' (--fluss, --quick)" >&2; exit 2 ;;
  esac
done
if [ "$FLUSS" = 1 ]; then CONNECTORS=${FLINK_AGG_CONNECTORS:-fluss}; else CONNECTORS=${FLINK_AGG_CONNECTORS:-fluss riverlet}; fi
cleanup() {
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  if [ "$FLUSS" = 1 ] && [ -d "$WORK/fluss" ]; then "$ROOT/tests/fluss-cluster/stop.sh" "$WORK/fluss" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
jar=
case " $CONNECTORS " in
  *" riverlet "*)
    jar=$(ls "$ROOT"/java/riverlet-flink-1.20/target/riverlet-flink-1.20-*.jar 2>/dev/null | grep -v original | head -n1 || true)
    [ -n "$jar" ] || { echo "flink-agg: no riverlet-flink-1.20 JAR: build it first (see the header)" >&2; exit 1; } ;;
esac
mvn=(mvn -B -q -f "$RUNNER/pom.xml")
"${mvn[@]}" compile >"$WORK/mvn.log" 2>&1 || { cat "$WORK/mvn.log"; echo "could not build StatementRunner" >&2; exit 1; }
# The two class paths are resolved side by side (each mvn is a JVM start and a resolution).
"${mvn[@]}" -Pfluss dependency:build-classpath -Dmdep.outputFile="$WORK/cp-fluss.txt" >"$WORK/mvn-fluss.log" 2>&1 &
cp_fluss=$!
"${mvn[@]}" dependency:build-classpath -Dmdep.outputFile="$WORK/cp-base.txt" >"$WORK/mvn-base.log" 2>&1 \
  || { cat "$WORK/mvn-base.log"; echo "mvn could not resolve Flink" >&2; exit 1; }
wait "$cp_fluss" || { cat "$WORK/mvn-fluss.log"; echo "mvn could not resolve fluss-flink-1.20" >&2; exit 1; }
FILES=("$HERE/flink-agg.sql")
[ "$FLUSS" = 0 ] || FILES+=("$HERE/flink-agg-rbm64.sql")
python3 "$HERE/statements.py" "${QUICK[@]}" "$WORK/statements.sql" "$WORK/expected.txt" "${FILES[@]}"
if [ "$FLUSS" = 1 ]; then
  "$ROOT/tests/fluss-cluster/start.sh" "$WORK/fluss" >"$WORK/fluss.env"
  # shellcheck disable=SC1091
  . "$WORK/fluss.env"
  BOOTSTRAP=$FLUSS_BOOTSTRAP
else
  cargo build -q -p riverlet-cli --manifest-path "$ROOT/Cargo.toml"
  RIVERLET=${CARGO_TARGET_DIR:-$ROOT/target}/debug/riverlet
  "$RIVERLET" serve --data-dir "$WORK/data" --port 0 >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    grep -q '^bootstrap: ' "$WORK/serve.out" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve.err"; exit 1; }
    sleep 0.1
  done
  BOOTSTRAP=$(sed -n 's/^bootstrap: //p' "$WORK/serve.out" | head -1)
  [ -n "$BOOTSTRAP" ] || { echo "riverlet serve printed no bootstrap line" >&2; cat "$WORK/serve.err"; exit 1; }
fi
# The connectors run side by side (one JVM each, own database), then their results are compared.
failed=0
declare -A PIDS NAMES
for c in $CONNECTORS; do
  case $c in
    fluss) cp="$RUNNER/target/classes:$(cat "$WORK/cp-fluss.txt")"; NAMES[$c]="Fluss's Flink connector (fluss-flink-1.20)" ;;
    riverlet) cp="$RUNNER/target/classes:$jar:$(cat "$WORK/cp-base.txt")"; NAMES[$c]="Riverlet's Flink connector (riverlet-flink-1.20)" ;;
    *) echo "flink-agg: unknown connector '$c' (fluss, riverlet)" >&2; exit 2 ;;
  esac
  java -Xmx1g -XX:+IgnoreUnrecognizedVMOptions \
    --add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
    -Dlog4j2.level=ERROR -Drunner.sharedCluster=true -cp "$cp" \
    io.riverlet.compare.StatementRunner "$BOOTSTRAP" "agg_${c}_$(date +%s)" "$WORK/statements.sql" \
    "$WORK/out-$c.txt" >"$WORK/run-$c.log" 2>&1 &
  PIDS[$c]=$!
done
for c in $CONNECTORS; do
  name=${NAMES[$c]}
  if ! wait "${PIDS[$c]}"; then
    failed=1
    echo "flink-agg: $name: the statement runner failed:" >&2
    cat "$WORK/run-$c.log" >&2
    continue
  fi
  # Result lines only; an error is compared by ERROR-ness (its text is each server's own).
  if diff <(grep -v '^### ' "$WORK/out-$c.txt" | sed 's/^ERROR .*/ERROR/') "$WORK/expected.txt" \
    >"$WORK/diff-$c.txt"; then
    echo "flink-agg: $name gave the documented results against $BOOTSTRAP ($(grep -c '^### ' "$WORK/out-$c.txt") statements)"
  else
    failed=1
    echo "flink-agg: $name: results differ from the documented ones (< got, > expected):" >&2
    cat "$WORK/diff-$c.txt" >&2
    echo "statements and results:" >&2
    cat "$WORK/out-$c.txt" >&2
    grep -i -m5 "exception" "$WORK/run-$c.log" >&2 || true
  fi
done
exit "$failed"
