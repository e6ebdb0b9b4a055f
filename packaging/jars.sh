#!/usr/bin/env bash
# `make dist`, JVM part: the Java API JAR and the shaded connector JARs, each with the native
# library inside (native/linux-x86_64/libriverlet_jni.so), into $DIST_DIR (default <repo>/dist):
#   riverlet-java-<v>.jar             the Java API (io.riverlet); Arrow Java is its dependency
#   riverlet-spark-3.5_2.12-<v>.jar   Spark 3.5.x, Scala 2.12 (shaded)
#   riverlet-spark-4.x_2.13-<v>.jar   Spark 4.x, Scala 2.13 (shaded)
#   riverlet-flink-1.20-<v>.jar       Flink 1.20.x (shaded)
#   riverlet-flink-2.x-<v>.jar        Flink 2.x (shaded)
# <v> is `packaging/version.sh` (Cargo.toml's workspace version), stamped into the Maven build as
# -Drevision=<v> (java/pom.xml's one version property), so the file names and each JAR's
# META-INF/maven/*/pom.properties carry it. What each shaded JAR bundles and relocates, and why,
# is written in the module POMs; tests/dist/check_jars.py checks it.
#
# Environment:
#   DIST_DIR                where the JARs go (default <repo>/dist)
#   RIVERLET_CARGO_PROFILE  Cargo profile of the native library (default release; `dev` reuses
#                           target/debug, as make test does)
#   RIVERLET_CARGO_SKIP     true: do not run cargo, the library is already built (default false)
#   JARS_BUILD_DIR          if set, build a copy of java/ in this directory instead of java/
#                           itself, so java/*/target is left alone (tests/dist/jars.sh uses it)
#   JARS_MVN_ARGS           extra Maven arguments
#   RIVERLET_VENDORED_OPENSSL  true: build with the feature `vendored-openssl` (default true for
#                           release builds, false for dev/test: those reuse make test's
#                           target/debug, which links the system OpenSSL)
#
# The native library is built with the feature `vendored-openssl` (core/Cargo.toml): paimon's
# HTTP client links OpenSSL (native-tls), and without the feature the library needs the host's
# libssl.so.3/libcrypto.so.3, which a JVM user installs no JAR for; OpenSSL is compiled from
# source and linked in statically instead. The library is built by the host's toolchain, so it
# needs a glibc at least as new as the build machine's (java/README.md). With the feature the
# script fails if the library still names libssl or libcrypto.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
DIST_DIR="${DIST_DIR:-$ROOT/dist}"
PROFILE="${RIVERLET_CARGO_PROFILE:-release}"
SKIP="${RIVERLET_CARGO_SKIP:-false}"
case $PROFILE in dev | test) vendored_default=false ;; *) vendored_default=true ;; esac
VENDORED="${RIVERLET_VENDORED_OPENSSL:-$vendored_default}"
VERSION="$(bash "$HERE/version.sh")"
[ -n "$VERSION" ] || { echo "jars: packaging/version.sh printed no version" >&2; exit 1; }
mkdir -p "$DIST_DIR"
DIST_DIR="$(cd "$DIST_DIR" && pwd)"

JAVA="$ROOT/java"
if [ -n "${JARS_BUILD_DIR:-}" ]; then
  # A copy of the sources and POMs (no target/); riverlet.root still points at this repository
  # (cargo, target/<profile>/libriverlet_jni.so, the riverlet CLI).
  mkdir -p "$JARS_BUILD_DIR"
  JAVA="$(cd "$JARS_BUILD_DIR" && pwd)/java"
  rm -rf "$JAVA"
  mkdir -p "$JAVA"
  tar -C "$ROOT/java" --exclude=./*/target --exclude=./target -cf - . | tar -C "$JAVA" -xf -
fi

# module directory : artifactId (the shaded JAR replaces the module's main artifact)
MODULES=(
  "riverlet-java:riverlet-java"
  "riverlet-spark-3.5:riverlet-spark-3.5_2.12"
  "riverlet-spark-4.x:riverlet-spark-4.x_2.13"
  "riverlet-flink-1.20:riverlet-flink-1.20"
  "riverlet-flink-2.x:riverlet-flink-2.x"
)
pl=""
for m in "${MODULES[@]}"; do pl="$pl${pl:+,}${m%%:*}"; done

echo "jars: version $VERSION, cargo profile $PROFILE (skip cargo: $SKIP), building $pl in $JAVA" >&2
# The native library goes into the JARs without its debug info, as into the C SDK and the wheel:
# the release profile's line tables of every dependency made each JAR ~95 MB instead of ~30 MB.
features=()
[ "$VENDORED" = true ] && features=(--features vendored-openssl)
if [ "$SKIP" != true ]; then
  (cd "$ROOT" && cargo build --profile "$PROFILE" -p riverlet-jni "${features[@]}")
fi
case $PROFILE in dev | test) cargo_dir=debug ;; *) cargo_dir=$PROFILE ;; esac
native="${CARGO_TARGET_DIR:-$ROOT/target}/$cargo_dir/libriverlet_jni.so"
[ -f "$native" ] || { echo "jars: no $native (cargo build --profile $PROFILE -p riverlet-jni ${features[*]})" >&2; exit 1; }
needed="$(readelf -d "$native" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "jars: $native needs: $needed" >&2
if [ "$VENDORED" = true ] && [[ " $needed" =~ \ lib(ssl|crypto)\. ]]; then
  echo "jars: $native needs the system OpenSSL ($needed), though built with vendored-openssl" >&2
  exit 1
fi
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-jars-native.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
strip --strip-debug -o "$STAGE/libriverlet_jni.so" "$native"
# shellcheck disable=SC2086  # JARS_MVN_ARGS is a list of arguments
mvn -T1 -B -q -f "$JAVA/pom.xml" -pl "$pl" -am package -DskipTests \
  "-Drevision=$VERSION" "-Driverlet.root=$ROOT" "-Driverlet.native.dir=$STAGE" \
  "-Driverlet.cargo.profile=$PROFILE" -Driverlet.cargo.skip=true ${JARS_MVN_ARGS:-}

for m in "${MODULES[@]}"; do
  dir=${m%%:*} artifact=${m#*:}
  jar="$JAVA/$dir/target/$artifact-$VERSION.jar"
  [ -f "$jar" ] || { echo "jars: the build left no $jar" >&2; exit 1; }
  unzip -l "$jar" native/linux-x86_64/libriverlet_jni.so >/dev/null ||
    { echo "jars: $jar does not carry native/linux-x86_64/libriverlet_jni.so" >&2; exit 1; }
  got=$(unzip -p "$jar" "META-INF/maven/io.riverlet/$artifact/pom.properties" | sed -n 's/^version=//p' | tr -d '\r')
  [ "$got" = "$VERSION" ] ||
    { echo "jars: $jar says version '$got' in its pom.properties, not $VERSION" >&2; exit 1; }
  cp "$jar" "$DIST_DIR/$artifact-$VERSION.jar"
  echo "jars: $DIST_DIR/$artifact-$VERSION.jar ($(du -h "$jar" | cut -f1))" >&2
done
