#!/usr/bin/env bash
# Starts Apache Iceberg's REST catalog test server (org.apache.iceberg.rest.RESTCatalogServer, as
# tests/iceberg-rest/start.sh does) with its warehouse on S3: io-impl S3FileIO against the
# S3-compatible ENDPOINT (moto's server in core/tests/lake_iceberg_s3.rs), path-style access,
# region us-east-1 and the access key "testing"/"testing", warehouse s3://BUCKET/warehouse (the
# bucket must exist). The backend catalog is a JdbcCatalog on SQLite under DIR.
#   usage: start.sh DIR ENDPOINT BUCKET
# Prints the catalog's URI (http://127.0.0.1:PORT) once it answers GET /v1/config, and nothing
# else on stdout. The server runs in the background: its process id is in DIR/server.pid, its
# log in DIR/server.log. Stop it with kill "$(cat DIR/server.pid)".
# Needs java (17+), mvn (the first run downloads the jars, iceberg-aws-bundle included), curl and
# python3 (for a free port).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$1
ENDPOINT=$2
BUCKET=$3
ROOT=$(cd "$HERE/../../.." && pwd)
export ICEBERG_REST_POM_DIR="$HERE" ICEBERG_REST_WAREHOUSE="s3://$BUCKET/warehouse" \
  CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO \
  CATALOG_S3_ENDPOINT="$ENDPOINT" \
  CATALOG_S3_PATH__STYLE__ACCESS=true \
  CATALOG_S3_ACCESS__KEY__ID=testing \
  CATALOG_S3_SECRET__ACCESS__KEY=testing \
  CATALOG_CLIENT_REGION=us-east-1 \
  AWS_REGION=us-east-1
exec bash "$ROOT/tests/iceberg-rest/start.sh" "$DIR"
