#!/usr/bin/env bash
# Builds the riverlet extension into a virtualenv and runs the Python suite
# (pytest against an in-process LocalServer, the examples, mypy stubtest).
#   python/run-tests.sh [pytest args...]
# RIVERLET_VENV picks the virtualenv (default: .venv at the repository root).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${RIVERLET_VENV:-$ROOT/.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r "$ROOT/tests/requirements-python.txt"
VIRTUAL_ENV=$VENV CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target} \
  "$VENV/bin/maturin" develop -q -m "$ROOT/python/Cargo.toml"
cd "$ROOT"
exec "$VENV/bin/python" -m pytest -q python/tests "$@"
