#!/usr/bin/env bash
# Fluss's own Flink connector and Riverlet's, side by side: builds StatementRunner (Maven), runs
# statements.sql once with org.apache.fluss:fluss-flink-1.20 (Maven Central) and once with
# Riverlet's shaded riverlet-flink-1.20 JAR on the class path, against the same server (each in
# its own database), and prints every statement whose results differ. A difference listed in
# divergences.txt (documented in java/README.md) is reported as such; any other fails the run.
# Against Apache Fluss 0.9.1 a run can also fail through the server's create-table race (a new
# table that never gets a leader: "Leader not found", see tests/README.md); run it again then.
#
# Usage: tests/flink-compare/compare.sh BOOTSTRAP [OUTDIR]
#   BOOTSTRAP  host:port of the server (the real Apache Fluss cluster, or `riverlet serve`)
#   OUTDIR     where the two result files go (default: a new temporary directory)
# Needs the connector JAR: mvn -T1 -B -q -f java/pom.xml -pl riverlet-flink-1.20 -am package -DskipTests
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BOOTSTRAP=${1:?usage: compare.sh BOOTSTRAP [OUTDIR]}
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/flink-compare.XXXXXX")}
mkdir -p "$OUT"
say() { echo "flink-compare: $*" >&2; }

jar=$(ls "$ROOT"/java/riverlet-flink-1.20/target/riverlet-flink-1.20-*.jar 2>/dev/null | grep -v original | head -n1)
[ -n "$jar" ] || { say "no riverlet-flink-1.20 JAR: build it first (see the header)"; exit 2; }

mvn=(mvn -B -q -f "$HERE/pom.xml")
"${mvn[@]}" compile || { say "could not build the runner"; exit 2; }
"${mvn[@]}" dependency:build-classpath -Dmdep.outputFile="$OUT/cp-base.txt" >/dev/null || exit 2
"${mvn[@]}" -Pfluss dependency:build-classpath -Dmdep.outputFile="$OUT/cp-fluss.txt" >/dev/null || exit 2

suffix=$(date +%s)
jvm=(java -Xmx1g -XX:+IgnoreUnrecognizedVMOptions
  --add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
  -Dlog4j2.level=ERROR)
run() { # NAME CLASSPATH
  say "running statements.sql with the $1 connector against $BOOTSTRAP"
  "${jvm[@]}" -cp "$HERE/target/classes:$2" io.riverlet.compare.StatementRunner \
    "$BOOTSTRAP" "cmp_$1_$suffix" "$HERE/statements.sql" "$OUT/$1.txt" >"$OUT/$1.log" 2>&1 ||
    say "the $1 run exited non-zero (see $OUT/$1.log)"
}
run fluss "$(cat "$OUT/cp-fluss.txt")"
run riverlet "$jar:$(cat "$OUT/cp-base.txt")"

# One block per statement; error texts differ between connectors, so only ERROR-ness is compared.
python3 - "$OUT/fluss.txt" "$OUT/riverlet.txt" "$HERE/divergences.txt" <<'PY'
import sys
def blocks(path):
    out, head = {}, None
    order = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("### "):
            head = f"#{len(order) + 1} {line[4:]}"
            order.append(head)
            out[head] = []
        elif head is not None:
            out[head].append(line)
    return order, out
order, fluss = blocks(sys.argv[1])
_, ours = blocks(sys.argv[2])
# Comments start with "# "; entries with "#N " (the statement's number).
known = [l.strip() for l in open(sys.argv[3], encoding="utf-8")
         if l.strip() and l.strip() != "#" and not l.startswith("# ")]
norm = lambda rows: ["ERROR" if r.startswith("ERROR") else r for r in rows]
same = documented = undocumented = 0
for head in order:
    a, b = fluss.get(head, ["(missing)"]), ours.get(head, ["(missing)"])
    if norm(a) == norm(b):
        same += 1
        continue
    doc = head in known
    documented += doc
    undocumented += not doc
    print(("DOCUMENTED DIVERGENCE" if doc else "DIFFERENCE") + ": " + head)
    print("  fluss-flink-1.20:    " + " | ".join(a))
    print("  riverlet-flink-1.20: " + " | ".join(b))
print(f"flink-compare: {same} statements with equal results, {documented} documented "
      f"divergences, {undocumented} undocumented differences")
sys.exit(1 if undocumented else 0)
PY
