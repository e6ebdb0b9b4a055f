#!/usr/bin/env bash
# Builds the documentation site (`make docs`) and checks every internal link and anchor of it
# (docs/tools/check_links.py; no network). Run by `make test`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make -s docs
.venv-docs/bin/python docs/tools/check_links.py site
