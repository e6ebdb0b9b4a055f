#!/usr/bin/env bash
# Runs every test suite of the repository; the README's test command (`make test`) calls this.
# Each suite's result is collected; the script exits non-zero if any failed and ends with one
# summary line.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failed_names=()

run_suite() {
  local name=$1
  shift
  echo "=== suite: $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failed_names+=("$name")
  fi
}

run_suite "cargo fmt" cargo fmt --all -- --check
run_suite "cargo clippy" cargo clippy --workspace --all-targets -- -D warnings
run_suite "rust tests" cargo test --workspace --all-targets

echo
if [ "$failed" -gt 0 ]; then
  echo "failed suites: ${failed_names[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
