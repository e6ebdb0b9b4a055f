#!/usr/bin/env bash
# `make dist`: every installable artifact into dist/, each stamped with packaging/version.sh.
#   packaging/c-sdk.sh   the C/C++ SDK tarball (header, shared + static library, pkg-config, CMake)
#   packaging/wheel.sh   the Python wheel (abi3) and sdist
#   packaging/jars.sh    the Java API JAR and the shaded Spark and Flink connector JARs
# Each script also runs alone; DIST_DIR (default dist/) says where they write.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
export DIST_DIR="${DIST_DIR:-$ROOT/dist}"
mkdir -p "$DIST_DIR"
echo "dist: version $(bash "$HERE/version.sh") into $DIST_DIR"
for part in c-sdk wheel jars; do
  if [ -f "$HERE/$part.sh" ]; then
    bash "$HERE/$part.sh"
  fi
done
ls -l "$DIST_DIR"
