#!/usr/bin/env bash
# Fluss's own Java client (fluss-client 0.9.1, Maven Central) calling the ACL API against
# `riverlet serve` with the authorizer on: FlussAclProbe.java, one line per check.
#   tests/acl-java/run.sh              (builds the riverlet CLI; needs java 17 and mvn)
#   tests/acl-java/run.sh --fluss      the same probe against an Apache Fluss 0.9.1 cluster
#                                      (tests/fluss-cluster/start.sh --sasl, authorizer on):
#                                      what the probe expects is Fluss's behaviour too
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../java-probe.sh
. "$ROOT/tests/java-probe.sh"
probe_init acl-java "${1:-}"
if [ "$FLUSS" = 1 ]; then
  FLUSS_SASL_USERS="alice:alice-pw" "$ROOT/tests/fluss-cluster/start.sh" --sasl \
    --conf 'authorizer.enabled: true' --conf 'super.users: User:admin' "$WORK/fluss" >"$WORK/fluss.env"
  # shellcheck disable=SC1091
  . "$WORK/fluss.env"
  ACL_PROBE_PASSWORD_ADMIN="$FLUSS_SASL_PASSWORD" run_probe "$HERE/FlussAclProbe.java" "$FLUSS_SASL_BOOTSTRAP"
  exit $?
fi
serve_riverlet --sasl-user admin:admin-pw --sasl-user alice:alice-pw \
  --set authorizer.enabled=true --set super.users=User:admin
run_probe "$HERE/FlussAclProbe.java" "$BOOTSTRAP"
