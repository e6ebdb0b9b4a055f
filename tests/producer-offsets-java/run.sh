#!/usr/bin/env bash
# Fluss's own Java client (fluss-client 0.9.1, Maven Central) calling the producer-offset API
# (Register/Get/DeleteProducerOffsets, what Fluss's Flink sink calls for aggregation-engine
# tables) against `riverlet serve`: FlussProducerOffsetsProbe.java, one line per check.
#   tests/producer-offsets-java/run.sh          (builds the riverlet CLI; needs java 17 and mvn)
#   tests/producer-offsets-java/run.sh --fluss  the same probe against an Apache Fluss 0.9.1
#                                               cluster (tests/fluss-cluster/start.sh): what
#                                               the probe expects is Fluss's behaviour too
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../java-probe.sh
. "$ROOT/tests/java-probe.sh"
probe_init producer-offsets-java "${1:-}"
if [ "$FLUSS" = 1 ]; then
  "$ROOT/tests/fluss-cluster/start.sh" "$WORK/fluss" >"$WORK/fluss.env"
  # shellcheck disable=SC1091
  . "$WORK/fluss.env"
  run_probe "$HERE/FlussProducerOffsetsProbe.java" "$FLUSS_BOOTSTRAP"
  exit $?
fi
serve_riverlet
run_probe "$HERE/FlussProducerOffsetsProbe.java" "$BOOTSTRAP"
