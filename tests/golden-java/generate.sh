#!/usr/bin/env bash
# Regenerate the Java golden vectors in core/tests/golden/java/ with the real Apache Fluss
# classes (fluss-server fat jar from Maven Central, resolved by tests/fluss-cluster/fetch.sh).
#
# Usage: tests/golden-java/generate.sh [--offline] [OUTPUT_DIR]
#        tests/golden-java/generate.sh [--offline] --verify RIVERLET_DIR
#   OUTPUT_DIR defaults to core/tests/golden/java. --verify instead reads the batches and table
#   JSON that Riverlet wrote into RIVERLET_DIR (see verify.sh) with Fluss's own readers.
#   Needs a JDK 17 (javac + java) and Maven (only for fetch.sh; no other network use).
# Environment: FLUSS_CLASSPATH skips fetch.sh; JAVA_HOME picks the JDK.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

fetch_args=(--quiet)
outdir="" verify=0
for arg in "$@"; do
  case "$arg" in
    --offline) fetch_args+=(--offline) ;;
    --verify) verify=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "generate.sh: unknown option $arg" >&2; exit 2 ;;
    *) outdir="$arg" ;;
  esac
done
if [ "$verify" = 1 ]; then
  [ -n "$outdir" ] || { echo "generate.sh: --verify needs RIVERLET_DIR" >&2; exit 2; }
  run_args=(--verify "$outdir")
else
  outdir="${outdir:-$ROOT/core/tests/golden/java}"
  run_args=("$outdir")
fi

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
  JAVA="$JAVA_HOME/bin/java"; JAVAC="$JAVA_HOME/bin/javac"
else
  JAVA=java; JAVAC=javac
fi
command -v "$JAVAC" >/dev/null 2>&1 || { echo "generate.sh: javac not found (need a JDK 17)" >&2; exit 1; }

classpath="${FLUSS_CLASSPATH:-$("$ROOT/tests/fluss-cluster/fetch.sh" "${fetch_args[@]}")}"
[ -n "$classpath" ] || { echo "generate.sh: empty Fluss classpath" >&2; exit 1; }

build="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-golden-java.XXXXXX")"
trap 'rm -rf "$build"' EXIT

"$JAVAC" --release 17 -nowarn -cp "$classpath" -d "$build" "$HERE/GoldenGen.java"

[ "$verify" = 1 ] || mkdir -p "$outdir"
# Same JVM flags start.sh gives the Fluss servers (Arrow reflects into java.nio).
timeout 300 "$JAVA" -XX:+IgnoreUnrecognizedVMOptions -Xmx512m \
  --add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-opens=java.base/java.lang=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED \
  -Duser.timezone=UTC \
  -cp "$classpath:$build" GoldenGen "${run_args[@]}" 2> >(grep -v 'Unknown module: org.apache.arrow.memory.core' >&2)
