#!/usr/bin/env bash
# Read-optimized reads and the latest view of primary-key tables whose changelog head Apache
# Fluss has already deleted: Riverlet reads Fluss's KV snapshots (RocksDB checkpoints in
# remote.data.dir) through core's `kv-snapshot` feature (core/tests/kv_snapshot_cluster.rs).
#   1. installs Debian's librocksdb-dev and libclang-dev when missing (apt, as root: the feature
#      links the system RocksDB 7.8 instead of compiling RocksDB's C++, ~15 min on 2 cores);
#   2. starts a 1-tablet-server cluster that snapshots KV state every second and rolls and
#      tiers small log segments (start.sh --conf ...), so a short table.log.ttl empties the
#      changelog's head within seconds;
#   3. runs `cargo test -p riverlet --features kv-snapshot --test kv_snapshot_cluster` against it
#      (one more build of the riverlet crate with the feature; its dependencies are shared);
#   4. stops the cluster (always). A test reporting itself NOT APPLICABLE here is a failure.
#
#   bash tests/fluss-cluster/run-kv-snapshot-tests.sh     (~3 min on 2 cores after the workspace build)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
say() { echo "run-kv-snapshot-tests: $*" >&2; }

# shellcheck source=../rocksdb-env.sh
. "$ROOT/tests/rocksdb-env.sh"
rocksdb_env

WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-kv-snapshots.XXXXXX")"
rc=1
cleanup() {
  local keep=(--clean)
  [ "$rc" -eq 0 ] || keep=()
  bash "$HERE/stop.sh" "${keep[@]}" "$WORKDIR" >&2 || say "WARNING: stop.sh failed"
  [ "$rc" -eq 0 ] || say "cluster logs kept in $WORKDIR/logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! bash "$HERE/start.sh" --conf 'kv.snapshot.interval: 1s' --conf 'log.segment.file-size: 4kb' \
  --conf 'remote.log.task-interval-duration: 1s' "$WORKDIR" >/dev/null; then
  say "the Apache Fluss cluster did not start (logs in $WORKDIR/logs)"
  exit 1
fi
# shellcheck disable=SC1091
. "$WORKDIR/bootstrap.env"
log="$WORKDIR/kv-snapshot-tests.log"
say "running cargo test -p riverlet --features kv-snapshot --test kv_snapshot_cluster against $FLUSS_BOOTSTRAP (ROCKSDB_LIB_DIR=$ROCKSDB_LIB_DIR)"
RIVERLET_TEST_BOOTSTRAP="$FLUSS_BOOTSTRAP" RIVERLET_TEST_FLUSS_KV_SNAPSHOTS=1 \
  timeout 1200 cargo test -p riverlet --features kv-snapshot --test kv_snapshot_cluster 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && grep -q "NOT APPLICABLE" "$log"; then
  say "a test reported itself NOT APPLICABLE against the cluster it was given"
  rc=1
fi
exit "$rc"
