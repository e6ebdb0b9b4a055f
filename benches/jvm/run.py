#!/usr/bin/env python3
"""The cost of the JNI boundary (issue 14): a whole-table scan through the Java API vs the same
scan through the Rust facade the binding calls, on one release `riverlet serve`, same machine.

    python3 benches/jvm/run.py                     # 10M rows; builds the riverlet-java JAR and the Rust example
    python3 benches/jvm/run.py --rows 1000000 --no-build

Each contender runs in fresh processes, alternating (Rust, Java, Rust, Java, ...); each process
scans `--runs` times and its first scan is a warm-up (JIT, connection, metadata) left out of the
medians. Prints the figures and writes them into benches/RESULTS.md between the markers below
(the rest of the file, written by benches/run.py, is kept). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_support import RiverletServe, replace_section, target_dir  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
START = "<!-- jvm-boundary: written by benches/jvm/run.py -->"
END = "<!-- /jvm-boundary -->"


def log(msg: str) -> None:
    print(f"[jvm-bench] {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> str:
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, cwd=ROOT, **kw).stdout


def build() -> None:
    # The JAR of the Java API with the release native library inside (what `make jar` builds,
    # without the connector modules).
    sh(["mvn", "-T1", "-B", "-q", "-f", "java/pom.xml", "-pl", "riverlet-java", "-DskipTests", "package"])
    sh(["cargo", "build", "--release", "-q", "-p", "riverlet-cli", "-p", "riverlet",
        "--example", "scan_throughput"])


def java_classpath() -> str:
    jars = [j for j in glob.glob(str(ROOT / "java/riverlet-java/target/riverlet-java-*.jar"))
            if not j.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
    if not jars:
        sys.exit("no java/riverlet-java/target/riverlet-java-*.jar: run `make jar` (or drop --no-build)")
    with tempfile.NamedTemporaryFile("r", suffix=".cp") as f:
        sh(["mvn", "-B", "-q", "-f", "java/pom.xml", "-pl", "riverlet-java", "dependency:build-classpath",
            "-Dmdep.includeScope=runtime", f"-Dmdep.outputFile={f.name}"])
        deps = Path(f.name).read_text().strip()
    # The newest: `make dist` leaves release-versioned JARs beside the development build's.
    return os.pathsep.join([max(jars, key=os.path.getmtime), deps])


def runs_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{\"run\"")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=4, help="scans per process, the first a warm-up")
    ap.add_argument("--rounds", type=int, default=3, help="processes per contender, alternating")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benches" / "RESULTS.md"))
    args = ap.parse_args()

    t_start = time.monotonic()
    load_start = os.getloadavg()
    if not args.no_build:
        build()
    cp = java_classpath()
    example = target_dir() / "release" / "examples" / "scan_throughput"
    java = [str(Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "java"),
            "--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED",
            "-XX:+IgnoreUnrecognizedVMOptions", "-cp", cp, str(HERE / "ScanBench.java")]

    with tempfile.TemporaryDirectory(prefix="riverlet-jvm-bench-") as tmp:
        server = RiverletServe(Path(tmp) / "data")
        try:
            table = "bench.scan_10m" if args.rows == 10_000_000 else f"bench.scan_{args.rows}"
            t0 = time.monotonic()
            sh([str(example), "load", server.bootstrap, table, str(args.rows)])
            log(f"loaded {args.rows:,} rows in {time.monotonic() - t0:.1f} s")
            res: dict[str, list[dict]] = {"rust": [], "java": []}
            for rnd in range(args.rounds):
                order = ["rust", "java"] if rnd % 2 == 0 else ["java", "rust"]
                for who in order:
                    cmd = ([str(example), "scan", server.bootstrap, table, str(args.runs)]
                           if who == "rust" else java + [server.bootstrap, table, str(args.runs)])
                    runs = runs_of(sh(cmd))
                    for r in runs:
                        if r["rows"] != args.rows:
                            sys.exit(f"{who} scanned {r['rows']} rows, expected {args.rows}")
                    res[who].extend(runs[1:])
                    log(f"{who}: " + ", ".join(f"{r['seconds']:.3f}" for r in runs) + " s (first = warm-up)")
        finally:
            server.stop()

    med = {k: statistics.median(r["seconds"] for r in v) for k, v in res.items()}
    lo = {k: min(r["seconds"] for r in v) for k, v in res.items()}
    hi = {k: max(r["seconds"] for r in v) for k, v in res.items()}
    ratio = med["rust"] / med["java"]
    arrow_mb = res["rust"][0]["bytes"] / 1e6
    load_end = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE).stdout.strip()
    lines = [
        START,
        "## JVM binding: a whole-table scan through JNI vs the same scan in Rust",
        "",
        f"Generated by `python3 benches/jvm/run.py` on {time.strftime('%Y-%m-%d %H:%M')} at commit "
        f"{commit}; {os.cpu_count()} cores, {platform.platform()}; load average at start "
        f"{load_start[0]:.2f}, at end {load_end[0]:.2f} (above ~0: other processes shared the cores). "
        f"{args.rows:,} rows, 6 columns, 4 buckets, Fluss's default ZSTD, release `riverlet serve "
        f"--fsync never` on loopback. Java: `Table.scan()` into Arrow Java through the C Data "
        f"Interface (riverlet-java JAR, release native library); Rust: `riverlet::blocking::Table::read` "
        f"(core/examples/scan_throughput.rs). {args.rounds} processes per contender, alternating, "
        f"{args.runs - 1} measured scans each after one warm-up.",
        "",
        "| contender | median s | min–max s | rows/s | MB/s (Arrow) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for k in ("rust", "java"):
        lines.append(f"| {k} | {med[k]:.3f} | {lo[k]:.3f}–{hi[k]:.3f} | "
                     f"{args.rows / med[k] / 1e6:.2f} M | {arrow_mb / med[k]:.0f} |")
    lines += ["", f"**Ratio:** Java scan speed / Rust scan speed: {ratio:.2f}x "
              f"(the boundary keeps {ratio * 100:.0f}% of the Rust speed; target >= 90%).", "", END]
    section = "\n".join(lines)
    print(section)

    out = Path(args.out)
    replace_section(out, START, END, section)
    log(f"wrote {out} ({time.monotonic() - t_start:.0f} s in all)")


if __name__ == "__main__":
    main()
