# Sourced by the scripts that run one Java program on Fluss's own client (fluss-client 0.9.1 from
# Maven Central, resolved by the pom.xml beside the script) against `riverlet serve`, or with
# --fluss against an Apache Fluss 0.9.1 cluster: tests/acl-java/run.sh and
# tests/producer-offsets-java/run.sh. The caller sets HERE and ROOT first.

# probe_init NAME [--fluss]: a work directory removed on exit (with the server or cluster
# started below), FLUSS=1 for --fluss, and the probe's classpath in PROBE_CP.
probe_init() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/riverlet-$1.XXXXXX")
  SERVER_PID=
  FLUSS=0
  [ "${2:-}" = "--fluss" ] && FLUSS=1
  trap probe_cleanup EXIT
  mvn -B -q -f "$HERE/pom.xml" dependency:build-classpath -Dmdep.outputFile="$WORK/cp.txt" \
    >"$WORK/mvn.log" 2>&1 || { cat "$WORK/mvn.log"; echo "mvn could not resolve fluss-client" >&2; exit 1; }
  PROBE_CP=$(cat "$WORK/cp.txt")
}

probe_cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  if [ "$FLUSS" = 1 ] && [ -d "$WORK/fluss" ]; then "$ROOT/tests/fluss-cluster/stop.sh" "$WORK/fluss" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}

# run_probe SOURCE ARGS...: runs the single-file Java program SOURCE on the probe's classpath.
run_probe() {
  java --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$PROBE_CP" "$@"
}

# serve_riverlet ARGS...: builds the CLI, starts `riverlet serve ARGS...` on a free port in the
# work directory and sets SERVER_PID and BOOTSTRAP once it printed its bootstrap line.
serve_riverlet() {
  cargo build -q -p riverlet-cli --manifest-path "$ROOT/Cargo.toml"
  serve_with "${CARGO_TARGET_DIR:-$ROOT/target}/debug/riverlet" serve "$@"
}

# serve_with COMMAND...: starts COMMAND (`riverlet serve` or `riverlet-server`, which take the
# same flags) with --data-dir and a free port as serve_riverlet does.
serve_with() {
  "$@" --data-dir "$WORK/data" --port 0 >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    grep -q '^bootstrap: ' "$WORK/serve.out" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/serve.err"; exit 1; }
    sleep 0.1
  done
  BOOTSTRAP=$(sed -n 's/^bootstrap: //p' "$WORK/serve.out" | head -1)
  [ -n "$BOOTSTRAP" ] || { echo "the server printed no bootstrap line" >&2; cat "$WORK/serve.err"; exit 1; }
}
