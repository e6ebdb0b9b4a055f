#!/usr/bin/env bash
# Resolve the jars of an Apache Fluss server (fluss-server fat jar + log4j2)
# from Maven Central into the local Maven repository, using mvn only, and
# print the Java classpath on stdout (one line). Everything else goes to stderr.
#
# Usage: fetch.sh [--latest] [--offline] [--quiet]
#   --latest   ask Maven for the newest fluss-server release instead of the
#              pinned FLUSS_VERSION (resolves the range [0.9.1-incubating,)).
#   --offline  do not touch the network (mvn -o); fails if not cached.
#   --quiet    no progress messages on stderr.
#
# Environment:
#   FLUSS_VERSION       fluss-server version (default: the one pinned in pom.xml)
#   LOG4J_VERSION       log4j2 version (default: pinned in pom.xml)
#   MAVEN_REPO_LOCAL    local repository (default: Maven's, ~/.m2/repository)
#   FLUSS_CLUSTER_CACHE where the resolved classpath is remembered
#                       (default: ~/.cache/riverlet/fluss-cluster)
#   MVN                 the mvn command (default: mvn)
#
# Exit status: 0 on success; non-zero, with an ERROR line on stderr, if Maven
# cannot resolve the artifacts or the result does not look like a Fluss server.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/pom.xml"
MVN="${MVN:-mvn}"
CACHE_DIR="${FLUSS_CLUSTER_CACHE:-${HOME}/.cache/riverlet/fluss-cluster}"
MIN_FLUSS_VERSION="0.9.1-incubating"

latest=0 offline=0 quiet=0
for arg in "$@"; do
  case "$arg" in
    --latest) latest=1 ;;
    --offline) offline=1 ;;
    --quiet|-q) quiet=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch.sh: ERROR: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

say() { [ "$quiet" = 1 ] || echo "fetch.sh: $*" >&2; }
die() { echo "fetch.sh: ERROR: $*" >&2; exit 1; }

command -v "$MVN" >/dev/null 2>&1 || die "'$MVN' not found; install Maven (apt-get install maven)"
command -v java >/dev/null 2>&1 || die "java not found; a JDK 17 is needed"

mvn_args=(-B -f "$POM" --no-transfer-progress -Dstyle.color=never)
[ "$offline" = 1 ] && mvn_args+=(-o)
[ -n "${MAVEN_REPO_LOCAL:-}" ] && mvn_args+=("-Dmaven.repo.local=${MAVEN_REPO_LOCAL}")
[ -n "${LOG4J_VERSION:-}" ] && mvn_args+=("-Dlog4j.version=${LOG4J_VERSION}")
if [ "$latest" = 1 ]; then
  mvn_args+=("-Dfluss.version=[${MIN_FLUSS_VERSION},)")
  say "resolving the newest org.apache.fluss:fluss-server >= ${MIN_FLUSS_VERSION}"
elif [ -n "${FLUSS_VERSION:-}" ]; then
  mvn_args+=("-Dfluss.version=${FLUSS_VERSION}")
fi

mkdir -p "$CACHE_DIR"
tmp_cp="$(mktemp "$CACHE_DIR/cp.XXXXXX")"
mvn_log="$(mktemp "$CACHE_DIR/mvn-log.XXXXXX")"
trap 'rm -f "$tmp_cp" "$mvn_log"' EXIT

start_s=$(date +%s.%N)
say "running: $MVN ${mvn_args[*]} dependency:build-classpath"
if ! "$MVN" "${mvn_args[@]}" \
      dependency:build-classpath \
      -Dmdep.outputFile="$tmp_cp" -Dmdep.includeScope=runtime \
      >"$mvn_log" 2>&1; then
  echo "fetch.sh: ERROR: Maven could not resolve the Fluss server jars:" >&2
  if grep -qE '^\[ERROR\] .' "$mvn_log"; then
    grep -E '^\[(ERROR|WARNING)\] .' "$mvn_log" | grep -v -E 'Re-run Maven|full stack trace|^\[ERROR\] \[Help|possible solutions' \
      | awk '!seen[$0]++' | head -n 10 >&2
  else
    tail -n 20 "$mvn_log" >&2
  fi
  exit 1
fi
end_s=$(date +%s.%N)

classpath="$(tr -d '\n' <"$tmp_cp")"
[ -n "$classpath" ] || die "Maven produced an empty classpath"

# Sanity checks: exactly one fluss-server jar, every entry present, log4j-core there.
server_jar="" total_bytes=0
IFS=':' read -r -a entries <<<"$classpath"
for jar in "${entries[@]}"; do
  [ -f "$jar" ] || die "classpath entry missing on disk: $jar"
  total_bytes=$(( total_bytes + $(stat -c %s "$jar") ))
  case "$(basename "$jar")" in
    fluss-server-*.jar)
      [ -z "$server_jar" ] || die "more than one fluss-server jar: $server_jar $jar"
      server_jar="$jar" ;;
  esac
done
[ -n "$server_jar" ] || die "no fluss-server jar in the classpath: $classpath"
case "$classpath" in *log4j-core-*) ;; *) die "log4j-core missing from the classpath" ;; esac
if command -v unzip >/dev/null 2>&1; then
  unzip -l "$server_jar" 'org/apache/fluss/server/tablet/TabletServer.class' >/dev/null 2>&1 \
    || die "$server_jar has no TabletServer class; not a Fluss server jar?"
fi

version="$(basename "$server_jar" .jar)"; version="${version#fluss-server-}"
say "fluss-server ${version}: ${#entries[@]} jars, $(( total_bytes / 1024 / 1024 )) MiB, mvn took $(awk -v a="$start_s" -v b="$end_s" 'BEGIN{printf "%.1f", b-a}') s"

# Remember it for start.sh (keyed by version, plus a 'last' pointer).
printf '%s\n' "$classpath" >"$CACHE_DIR/classpath-${version}.txt"
printf '%s\n' "$version" >"$CACHE_DIR/last-version.txt"

printf '%s\n' "$classpath"
