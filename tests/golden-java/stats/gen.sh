#!/usr/bin/env bash
# Checks core/tests/golden/stats/statistics_block.hex against Apache Fluss's own Java classes.
# No released Fluss jar has the statistics classes (0.9.1 predates them), so this needs
# fluss-common built from the Fluss source and installed in ~/.m2 (not part of `make test`):
#   git -C <apache/fluss checkout> checkout 545c55390   # a main-line commit with those classes
#   (drop fluss-common's test-scoped dependencies from its pom.xml: one is not on Maven Central)
#   mvn -B -q install -pl fluss-common -am -Dmaven.test.skip=true -Drat.skip=true \
#     -Dspotless.check.skip=true -Dcheckstyle.skip=true -Denforcer.skip=true
# Usage: tests/golden-java/stats/gen.sh   (exit 0 when Java writes exactly the golden bytes)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
M2=${M2_REPO:-$HOME/.m2/repository}/org/apache/fluss
cp=$(find "$M2/fluss-common/1.0-SNAPSHOT" "$M2"/fluss-shaded-* -name '*.jar' | tr '\n' ':')
[ -n "$cp" ] || { echo "fluss-common 1.0-SNAPSHOT is not in ~/.m2 (see the top of $0)" >&2; exit 2; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
javac --release 17 -d "$out" -cp "$cp" "$HERE/GoldenStats.java"
java_hex=$(java -cp "$cp:$out" GoldenStats)
golden_hex=$(grep -v '^#' "$ROOT/core/tests/golden/stats/statistics_block.hex" | tr -d ' \n')
if [ "$java_hex" = "$golden_hex" ]; then
  echo "statistics_block.hex: Fluss's LogRecordBatchStatisticsCollector writes the same ${#java_hex} hex digits"
else
  printf 'MISMATCH\njava:   %s\ngolden: %s\n' "$java_hex" "$golden_hex" >&2
  exit 1
fi
