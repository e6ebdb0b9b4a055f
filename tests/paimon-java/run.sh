#!/usr/bin/env bash
# Paimon tiering checked by Apache Paimon's own Java library: resolves the classpath of
# PaimonLakeProbe.java (paimon-bundle 1.3.1 and the Hadoop classes its Parquet reader loads,
# pom.xml beside this script, Maven Central) and runs server/tests/lake_paimon.rs with it in
# RIVERLET_PAIMON_JAVA_CP, so the test reads every tiered table with Paimon's Java reader as
# well as with the paimon crate. Needs java 17 and mvn. Non-zero on any failure.
#   tests/paimon-java/run.sh              # the test with the Java reader
#   tests/paimon-java/run.sh --classpath  # only print the classpath (for run-all.sh to export)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CP_FILE=$(mktemp "${TMPDIR:-/tmp}/riverlet-paimon-cp.XXXXXX")
trap 'rm -f "$CP_FILE"' EXIT
mvn -B -q -f "$HERE/pom.xml" dependency:build-classpath -Dmdep.outputFile="$CP_FILE" >&2 \
  || { echo "paimon-java: mvn could not resolve paimon-bundle" >&2; exit 1; }
if [ "${1:-}" = "--classpath" ]; then
  cat "$CP_FILE"
  exit 0
fi
RIVERLET_PAIMON_JAVA_CP=$(cat "$CP_FILE")
export RIVERLET_PAIMON_JAVA_CP
cargo test -q -p riverlet-server --features lake --manifest-path "$ROOT/Cargo.toml" \
  --test lake_paimon
