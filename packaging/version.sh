#!/usr/bin/env bash
# Prints the release version: the workspace's `[workspace.package] version` in Cargo.toml, the one
# place every artifact of `make dist` (wheel, JARs, C SDK) takes its version from.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
awk '/^\[workspace.package\]/{p=1; next} /^\[/{p=0} p && $1=="version" {gsub(/"/,"",$3); print $3; exit}' \
  "$ROOT/Cargo.toml"
