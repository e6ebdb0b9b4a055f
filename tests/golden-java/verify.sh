#!/usr/bin/env bash
# Reverse check: Riverlet writes Arrow log batches and table JSON for the golden rows
# (core/tests/golden_java.rs, test write_riverlet_vectors_for_java, only when
# RIVERLET_GOLDEN_JAVA_OUT is set), then the real Fluss 0.9.1 Java readers parse them and
# compare with the rows Java itself was given (GoldenGen --verify).
#
# Usage: tests/golden-java/verify.sh [--offline]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
dir="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-golden-verify.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
(cd "$ROOT" && RIVERLET_GOLDEN_JAVA_OUT="$dir" cargo test -q -p riverlet --test integration \
   golden_java::write_riverlet_vectors_for_java -- --exact >&2)
"$HERE/generate.sh" "$@" --verify "$dir"
