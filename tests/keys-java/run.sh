#!/usr/bin/env bash
# Do Fluss's own Java client and Riverlet put the same key in the same bucket? Fluss's Java
# client (fluss-client 0.9.1, Maven Central) creates 15 primary-key tables (INT, BIGINT, STRING,
# composite and prefix-bucketed keys; 3, 4 and 7 buckets) on `riverlet serve` and upserts its
# keys; Riverlet's Python package upserts its own and finds every row of both (lookups,
# lookup_many, prefix lookups); then the Java client finds every row of both and reads each
# table's changelog to check that every row sits in the bucket Fluss's own bucketing function
# gives it. FlussKeysProbe.java and keys.py say what is checked.
#   tests/keys-java/run.sh           (builds the riverlet CLI; needs java 17, mvn and a Python
#                                     with the riverlet package: RIVERLET_PYTHON, default
#                                     .venv/bin/python as python/run-tests.sh makes it)
#   tests/keys-java/run.sh --fluss   the same against an Apache Fluss 0.9.1 cluster
#                                    (tests/fluss-cluster/start.sh)
# PYFLUSS_PYTHON=.venv-interop/bin/python adds pyfluss as a third writer and reader; its
# results are printed ("PEER BUG" lines: tests/README.md), never a failure.
# KEYS_VERBOSE=1 prints every row's bucket and Fluss's bucket for it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${RIVERLET_PYTHON:-$ROOT/.venv/bin/python}
"$PY" -c "import riverlet" || { echo "no riverlet package in $PY (set RIVERLET_PYTHON)" >&2; exit 1; }
# shellcheck source=../java-probe.sh
. "$ROOT/tests/java-probe.sh"
probe_init keys-java "${1:-}"
if [ "$FLUSS" = 1 ]; then
  "$ROOT/tests/fluss-cluster/start.sh" "$WORK/fluss" >"$WORK/fluss.env"
  # shellcheck disable=SC1091
  . "$WORK/fluss.env"
  BOOTSTRAP=$FLUSS_BOOTSTRAP
else
  serve_riverlet
fi
DB=keys_$$_$RANDOM
run_probe "$HERE/FlussKeysProbe.java" "$BOOTSTRAP" "$DB" create
run_probe "$HERE/FlussKeysProbe.java" "$BOOTSTRAP" "$DB" write
WRITERS=java
if [ -n "${PYFLUSS_PYTHON:-}" ]; then
  "$PYFLUSS_PYTHON" "$HERE/keys.py" "$BOOTSTRAP" "$DB" pyfluss "$WRITERS"
  WRITERS=$WRITERS,pyfluss
fi
status=0
"$PY" "$HERE/keys.py" "$BOOTSTRAP" "$DB" riverlet "$WRITERS" || status=1
WRITERS=$WRITERS,riverlet
run_probe "$HERE/FlussKeysProbe.java" "$BOOTSTRAP" "$DB" check "$WRITERS" \
  ${KEYS_VERBOSE:+--verbose} || status=1
exit $status
