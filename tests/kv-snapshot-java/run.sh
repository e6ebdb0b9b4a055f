#!/usr/bin/env bash
# KV snapshots of the embedded server as RocksDB files Apache Fluss's clients open
# (riverlet-server's `kv-snapshot` feature), with one build of the feature for both steps:
#   1. `cargo test -p riverlet-server --features kv-snapshot --test kv_snapshots_rocksdb` and the
#      server's unit tests of its snapshot store with the feature (Fluss's layout and _METADATA,
#      core's RocksDB reader reads the rows back, retention, restart);
#   2. the `riverlet-server` binary of that build (the same flags as `riverlet serve`; cargo
#      builds it for the tests above, so target/debug/riverlet, which later suites run, keeps
#      its features), snapshots every 200 ms, and Fluss's own Java client (fluss-client 0.9.1,
#      Maven Central) reading every bucket's snapshot with its KvSnapshotBatchScanner:
#      FlussKvSnapshotProbe.java.
# Installs librocksdb-dev and libclang-dev when missing (tests/rocksdb-env.sh); needs java 17
# and mvn. Non-zero on any failure.
#   tests/kv-snapshot-java/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
say() { echo "kv-snapshot-java: $*" >&2; }
# shellcheck source=../rocksdb-env.sh
. "$ROOT/tests/rocksdb-env.sh"
rocksdb_env
# shellcheck source=../java-probe.sh
. "$ROOT/tests/java-probe.sh"

say "cargo test -p riverlet-server --features kv-snapshot (ROCKSDB_LIB_DIR=$ROCKSDB_LIB_DIR)"
cargo test -q -p riverlet-server --features kv-snapshot,lake --manifest-path "$ROOT/Cargo.toml" \
  --test kv_snapshots_rocksdb
cargo test -q -p riverlet-server --features kv-snapshot,lake --manifest-path "$ROOT/Cargo.toml" \
  --lib -- kv_snapshots config_dynamic

cargo build -q -p riverlet-server --features kv-snapshot,lake --manifest-path "$ROOT/Cargo.toml" \
  --bin riverlet-server
probe_init kv-snapshot-java
serve_with "${CARGO_TARGET_DIR:-$ROOT/target}/debug/riverlet-server" --set kv.snapshot.interval=200ms
run_probe "$HERE/FlussKvSnapshotProbe.java" "$BOOTSTRAP"
