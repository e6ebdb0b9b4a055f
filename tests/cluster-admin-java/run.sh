#!/usr/bin/env bash
# Fluss's own Java client (fluss-client 0.9.1, Maven Central) calling the cluster-config and
# KV-snapshot-lease APIs (Admin.describeClusterConfigs / alterClusterConfigs,
# Admin.createKvSnapshotLease: acquire, release, drop) against `riverlet serve`:
# FlussClusterAdminProbe.java, one line per check.
#   tests/cluster-admin-java/run.sh     (builds the riverlet CLI; needs java 17 and mvn)
# Not run against Apache Fluss 0.9.1: it changes kv.snapshot.interval at run time, which Fluss
# allows only after 0.9.1 (0.9.1's dynamic options are datalake.* and
# kv.rocksdb.shared-rate-limiter.bytes-per-sec).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../java-probe.sh
. "$ROOT/tests/java-probe.sh"
probe_init cluster-admin-java
serve_riverlet --set log.segment.file-size=1mb
run_probe "$HERE/FlussClusterAdminProbe.java" "$BOOTSTRAP"
