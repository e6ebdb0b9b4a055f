#!/usr/bin/env bash
# The Rust tests that kill and freeze tablet servers of a real Apache Fluss cluster
# (core/tests/peer_bugs_cluster.rs: an idempotent writer through a leader's death and freeze,
# apache/fluss#4125/#4238; a new table created while a server is frozen, #4149), on a
# 3-tablet-server cluster of their own: their faults move leaders and restart servers, so they
# never share a cluster with the interop suites. Starts the cluster (start.sh --tablets 3),
# runs `cargo test -p riverlet --test integration peer_bugs_cluster::` with RIVERLET_TEST_BOOTSTRAP and
# RIVERLET_TEST_FLUSS_CLUSTER_DIR, stops the cluster (always). A test that reports itself NOT
# APPLICABLE here is a failure: this script exists to run them.
#
#   bash tests/fluss-cluster/run-fault-tests.sh        (~2 min on 2 cores)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
say() { echo "run-fault-tests: $*" >&2; }

WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-fault-tests.XXXXXX")"
rc=1
cleanup() {
  local keep=(--clean)
  [ "$rc" -eq 0 ] || keep=()  # logs are kept when something failed
  bash "$HERE/stop.sh" "${keep[@]}" "$WORKDIR" >&2 || say "WARNING: stop.sh failed"
  [ "$rc" -eq 0 ] || say "cluster logs kept in $WORKDIR/logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! bash "$HERE/start.sh" --tablets 3 "$WORKDIR" >/dev/null; then
  say "the Apache Fluss cluster did not start (logs in $WORKDIR/logs)"
  exit 1
fi
# shellcheck disable=SC1091
. "$WORKDIR/bootstrap.env"
log="$WORKDIR/peer-bugs-cluster.log"
say "running cargo test -p riverlet --test integration peer_bugs_cluster:: against $FLUSS_BOOTSTRAP"
RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" RIVERLET_TEST_FLUSS_CLUSTER_DIR="$WORKDIR" \
  timeout 900 cargo test -p riverlet --test integration peer_bugs_cluster:: 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The filter picks tests out of the one integration binary: a renamed module must not turn
# this run into zero tests that pass.
if [ "$rc" -eq 0 ] && ! grep -Eq '^test result: ok\. [1-9][0-9]* passed' "$log"; then
  say "no peer_bugs_cluster:: test ran (cargo test --test integration peer_bugs_cluster::)"
  rc=1
fi
if [ "$rc" -eq 0 ] && grep -q "NOT APPLICABLE" "$log"; then
  say "a test reported itself NOT APPLICABLE against the cluster it was given"
  rc=1
fi
exit "$rc"
