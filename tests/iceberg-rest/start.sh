#!/usr/bin/env bash
# Starts Apache Iceberg's REST catalog test server (org.apache.iceberg.rest.RESTCatalogServer
# from iceberg-open-api 1.10.0's test-fixtures jar; classpath from pom.xml next to this script)
# on a free port, with a JdbcCatalog on SQLite as its backend and a local warehouse, both under
# DIR (default: a new temporary directory). Prints the catalog's URI (http://127.0.0.1:PORT) once
# it answers GET /v1/config, and nothing else on stdout. The server runs in the background; its
# process id is in DIR/server.pid and its log in DIR/server.log. Stop it with
#   kill "$(cat DIR/server.pid)"
# Needs java (17+), mvn (the first run downloads the jars), curl and python3 (for a free port).
# core/tests/lake_reads.rs (trades_lake_through_an_iceberg_rest_catalog) runs against it when RIVERLET_ICEBERG_REST is set to the URI.
# Environment (for variants such as tests/lake/iceberg-rest-s3/start.sh): ICEBERG_REST_POM_DIR,
# the directory of the pom.xml giving the classpath (default: this one's; a child pom of it),
# ICEBERG_REST_WAREHOUSE (default file://DIR/warehouse), and any CATALOG_* variable, a catalog
# property of the server (RCKUtils: "__" -> "-", "_" -> ".", lower case).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$(mktemp -d -t riverlet-iceberg-rest.XXXXXX)}
mkdir -p "$DIR/warehouse"
DIR=$(cd "$DIR" && pwd)
POM_DIR=${ICEBERG_REST_POM_DIR:-$HERE}
CP_FILE="$POM_DIR/target/classpath.txt"
if [ ! -s "$CP_FILE" ] || [ "$POM_DIR/pom.xml" -nt "$CP_FILE" ] || [ "$HERE/pom.xml" -nt "$CP_FILE" ]; then
  mkdir -p "$POM_DIR/target"
  mvn -B -q -f "$POM_DIR/pom.xml" dependency:build-classpath -Dmdep.outputFile="$CP_FILE" >&2
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# RCKUtils maps CATALOG_* variables to catalog properties: CATALOG_REST_PORT -> rest.port,
# CATALOG_WAREHOUSE -> warehouse, CATALOG_URI -> uri, CATALOG_JDBC_SCHEMA__VERSION -> jdbc.schema-version.
CATALOG_REST_PORT=$PORT \
CATALOG_WAREHOUSE="${ICEBERG_REST_WAREHOUSE:-file://$DIR/warehouse}" \
CATALOG_URI="jdbc:sqlite:$DIR/catalog.db" \
CATALOG_JDBC_SCHEMA__VERSION=V1 \
  nohup java -cp "$(cat "$CP_FILE")" org.apache.iceberg.rest.RESTCatalogServer \
  >"$DIR/server.log" 2>&1 </dev/null &
echo $! >"$DIR/server.pid"
URI="http://127.0.0.1:$PORT"
for _ in $(seq 1 240); do
  if curl -sf "$URI/v1/config" >/dev/null 2>&1; then
    echo "$URI"
    exit 0
  fi
  if ! kill -0 "$(cat "$DIR/server.pid")" 2>/dev/null; then
    echo "the Iceberg REST server exited; its log:" >&2
    cat "$DIR/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
echo "the Iceberg REST server did not answer $URI/v1/config in 120 s; log in $DIR/server.log" >&2
exit 1
