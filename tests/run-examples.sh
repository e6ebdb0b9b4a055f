#!/usr/bin/env bash
# Runs every Rust example in core/examples against a fresh `riverlet serve` (the examples take
# the bootstrap address as their first argument). Fails if any example fails.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p riverlet-cli -p riverlet --examples
data=$(mktemp -d)
log=$(mktemp)
target/debug/riverlet serve --data-dir "$data" --port 0 > "$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data" "$log"' EXIT
for _ in $(seq 100); do
  grep -q '^bootstrap: ' "$log" && break
  sleep 0.1
done
bootstrap=$(sed -n 's/^bootstrap: //p' "$log")
[ -n "$bootstrap" ] || { echo "riverlet serve did not start"; exit 1; }
status=0
for ex in core/examples/*.rs; do
  name=$(basename "$ex" .rs)
  echo "--- example $name"
  if ! target/debug/examples/"$name" "$bootstrap"; then
    echo "example $name FAILED"
    status=1
  fi
done
exit $status
