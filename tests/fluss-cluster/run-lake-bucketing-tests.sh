#!/usr/bin/env bash
# Keys of lake-formatted tables against Apache Fluss 0.9.1 and its own Java client
# (core/tests/lake_bucketing_cluster.rs, issue #31 item 2):
#   1. resolves the peer's classpath (tests/fluss-cluster/peer-lake/pom.xml: fluss-client
#      0.9.1-incubating and paimon-bundle, from Maven Central);
#   2. starts a 1-tablet-server cluster with a Paimon lake of its own (start.sh --paimon-lake:
#      datalake.format paimon, a filesystem catalog in the cluster's directory, Fluss's Paimon
#      lake plugin) under a fresh mktemp directory;
#   3. runs `cargo test -p riverlet --test integration lake_bucketing_cluster::` against it: rows upserted by
#      Fluss's Java client are found by Riverlet's point and prefix lookups and the other way
#      round, on paimon tables (the cluster's default format, and table.datalake.enabled ones)
#      and iceberg ones (table.datalake.format iceberg); keyed appends land in Fluss's buckets;
#   4. stops the cluster (always; its logs are kept when something failed).
# A test reporting itself NOT APPLICABLE here is a failure.
#
#   bash tests/fluss-cluster/run-lake-bucketing-tests.sh     (~3 min on 2 cores after the build)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
say() { echo "run-lake-bucketing-tests: $*" >&2; }

WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-lake-bucketing.XXXXXX")"
rc=1
cleanup() {
  local keep=(--clean)
  [ "$rc" -eq 0 ] || keep=()
  bash "$HERE/stop.sh" "${keep[@]}" "$WORKDIR" >&2 || say "WARNING: stop.sh failed"
  [ "$rc" -eq 0 ] && rm -rf "$WORKDIR"
  [ "$rc" -eq 0 ] || say "cluster logs kept in $WORKDIR/logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp_file="$WORKDIR/peer.classpath"
if ! mvn -B -q -f "$HERE/peer-lake/pom.xml" dependency:build-classpath \
  -Dmdep.outputFile="$cp_file" >&2; then
  say "ERROR: mvn could not resolve fluss-client and paimon-bundle (peer-lake/pom.xml)"
  exit 1
fi
if ! bash "$HERE/start.sh" --paimon-lake "$WORKDIR" >/dev/null; then
  say "the Apache Fluss cluster did not start (logs in $WORKDIR/logs)"
  exit 1
fi
# shellcheck disable=SC1091
. "$WORKDIR/bootstrap.env"
log="$WORKDIR/lake-bucketing-tests.log"
say "running cargo test -p riverlet --test integration lake_bucketing_cluster:: against $FLUSS_BOOTSTRAP (datalake $FLUSS_DATALAKE)"
RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" RIVERLET_TEST_FLUSS_LAKE="$FLUSS_DATALAKE" \
  RIVERLET_LAKE_PEER_CLASSPATH="$(cat "$cp_file")" \
  timeout 1200 cargo test -p riverlet --test integration lake_bucketing_cluster:: 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The filter picks tests out of the one integration binary: a renamed module must not turn
# this run into zero tests that pass.
if [ "$rc" -eq 0 ] && ! grep -Eq '^test result: ok\. [1-9][0-9]* passed' "$log"; then
  say "no lake_bucketing_cluster:: test ran (cargo test --test integration lake_bucketing_cluster::)"
  rc=1
fi
if [ "$rc" -eq 0 ] && grep -q "NOT APPLICABLE" "$log"; then
  say "a test reported itself NOT APPLICABLE against the cluster it was given"
  rc=1
fi
if [ "$rc" -eq 0 ] && ! ls "$FLUSS_PAIMON_WAREHOUSE"/*.db/lake_pk/schema >/dev/null 2>&1; then
  say "the table.datalake.enabled table has no Paimon table in $FLUSS_PAIMON_WAREHOUSE"
  rc=1
fi
exit "$rc"
