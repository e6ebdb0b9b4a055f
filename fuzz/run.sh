#!/usr/bin/env bash
# Runs every libFuzzer target for a given number of executions and prints, per target, the
# executions, the time, exec/s and the findings (crash / timeout / oom files), then a summary.
# Exits non-zero when any target found something.
#
#   fuzz/run.sh [EXECUTIONS] [TARGET...]     (default 10000000, every target)
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). One job per target,
# run one after the other under `nice`. The committed seeds (fuzz/corpus/<target>) are read
# but never written: the corpus a run grows lives in fuzz/target/corpus-run/<target> and is
# removed at the end (KEEP_CORPUS=1 keeps it). Findings are written to
# fuzz/artifacts/<target>/. Extra libFuzzer flags: FUZZ_FLAGS="-max_len=65536".
set -uo pipefail
cd "$(dirname "$0")"
EXECS=${1:-10000000}
shift || true
ALL=(rpc_frame log_batch arrow_payload kv_batch compacted_row indexed_row filter_parse
  timestamp_text server_request)
TARGETS=("${@:-${ALL[@]}}")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")

export CARGO_TARGET_DIR=$PWD/target
# cargo-fuzz's default build: optimised, with debug assertions and overflow checks, ASan
# (FUZZ_SANITIZER=none for speed).
if ! nice -n 10 cargo +nightly fuzz build --sanitizer "${FUZZ_SANITIZER:-address}"; then
  echo "fuzz build failed" >&2
  exit 2
fi
BIN=$PWD/target/x86_64-unknown-linux-gnu/release

total_findings=0
summary=()
for t in "${TARGETS[@]}"; do
  work=$PWD/target/corpus-run/$t
  art=$PWD/artifacts/$t
  mkdir -p "$work" "$art"
  log=$PWD/target/$t.log
  before=$(find "$art" -type f | wc -l)
  t0=$(date +%s.%N)
  # -timeout: one input taking longer than this is a finding (a hang); the server target's own
  # limit per request is 20 s, so its budget is higher.
  timeout_s=10
  [ "$t" = server_request ] && timeout_s=60
  nice -n 10 "$BIN/$t" -runs="$EXECS" -timeout=$timeout_s -rss_limit_mb=4096 \
    -artifact_prefix="$art/" -print_final_stats=1 ${FUZZ_FLAGS:-} \
    "$work" "corpus/$t" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  after=$(find "$art" -type f | wc -l)
  found=$((after - before))
  if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then
    found=1 # libFuzzer stopped without writing an artifact (e.g. the process was killed)
  fi
  total_findings=$((total_findings + found))
  line=$(printf '%-15s executions %10s  time %8ss  exec/s %7s  findings %d' \
    "$t" "${execs:-?}" "$secs" "${rate:-?}" "$found")
  echo "$line"
  [ "$found" -gt 0 ] && { echo "  see $log and $art"; grep -m3 -E 'panicked|ERROR:' "$log" | sed 's/^/  /'; }
  summary+=("$line")
  [ "${KEEP_CORPUS:-0}" = 1 ] || rm -rf "$work"
done

echo
echo "=== fuzz summary ($EXECS executions per target requested)"
printf '%s\n' "${summary[@]}"
echo "=== total findings: $total_findings"
[ "$total_findings" -eq 0 ]
