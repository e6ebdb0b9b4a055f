#!/usr/bin/env python3
"""Spark reads through Riverlet's Spark connector vs Spark reading a local Parquet file (issue 15).

    python3 benches/spark/run.py                    # 10M rows; builds the release server + connector JAR
    python3 benches/spark/run.py --rows 2000000 --no-build

One SparkSession (`local[2]`, the same settings for both sides) generates the rows once and writes
them into a 4-bucket Fluss table in a release `riverlet serve --fsync never` and into a Parquet
file, then runs each query (a projection, a 1% filter, the whole table) to its last row with
Spark's `noop` sink, Riverlet and Parquet alternating round by round; within a round the first
run of a query is a warm-up left out of the medians. Prints the figures and writes them into
benches/RESULTS.md between the markers below (the rest of the file is kept). Nothing here is a
test: figures are never asserted.

Fluss's own Spark connector is a third side only with `--fluss-jar PATH`: Apache Fluss 0.9.1
publishes no Spark connector JAR on Maven Central (`org.apache.fluss:fluss-spark-3.5_2.12:0.9.1-incubating`
is not found there), so it has to be built from Fluss's source release (see benches/README.md);
this repository does not build it. Without the option the script compares Riverlet and Parquet.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
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
START = "<!-- spark-connector: written by benches/spark/run.py -->"
END = "<!-- /spark-connector -->"
MODULE = "riverlet-spark-3.5"
# What spark-submit adds on Java 17 (the same list as the Spark tests' surefire argLine).
JVM_OPENS = [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
    "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs",
    "sun.security.action", "sun.util.calendar")]


def log(msg: str) -> None:
    print(f"[spark-bench] {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> str:
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, cwd=ROOT, **kw).stdout


def build(offline: bool) -> None:
    sh(["cargo", "build", "--release", "-q", "-p", "riverlet-cli", "-p", "riverlet-jni"])
    # The shaded connector JAR with the release native library, and the module's class path
    # (compile scope includes Spark itself, which the connector has as provided).
    sh(["mvn", "-T1", "-B", "-q"] + (["-o"] if offline else []) +
       ["-f", "java/pom.xml", "-pl", MODULE, "-am", "-DskipTests", "-Driverlet.cargo.skip=true",
        "package", "dependency:build-classpath", "-Dmdep.includeScope=compile",
        "-Dmdep.outputFile=target/bench.classpath"])


def classpath() -> str:
    jars = [j for j in glob.glob(str(ROOT / f"java/{MODULE}/target/{MODULE}_*.jar"))
            if not j.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))
            and "original-" not in j]
    cp_file = ROOT / f"java/{MODULE}/target/bench.classpath"
    if not jars or not cp_file.exists():
        sys.exit(f"no java/{MODULE}/target JAR and class path: drop --no-build")
    # The newest: `make dist` leaves release-versioned JARs beside the development build's.
    return os.pathsep.join([max(jars, key=os.path.getmtime), cp_file.read_text().strip()])


def copy_jar(cp: str, tmp: Path) -> str:
    """The class path with the connector JAR copied to `tmp`: a Maven build running meanwhile
    (e.g. with the debug library) cannot swap it under the benchmark."""
    jar, rest = cp.split(os.pathsep, 1)
    copy = tmp / Path(jar).name
    shutil.copy(jar, copy)
    return os.pathsep.join([str(copy), rest])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3, help="runs of each query per round, the first a warm-up")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, the order of the sides alternating")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--online", action="store_true", help="let Maven download (default: -o)")
    ap.add_argument("--out", default=str(ROOT / "benches" / "RESULTS.md"))
    ap.add_argument("--fluss-jar", metavar="JAR",
                    help="Apache Fluss's fluss-spark-3.5_2.12 JAR (built from its source release): "
                         "read the same table through it as a third side")
    args = ap.parse_args()
    if args.fluss_jar and not Path(args.fluss_jar).is_file():
        sys.exit(f"--fluss-jar: no such file: {args.fluss_jar}")

    t_start = time.monotonic()
    load_start = os.getloadavg()
    if not args.no_build:
        build(offline=not args.online)
    cp = classpath()
    java_home = Path(os.environ.get("JAVA_HOME", "/usr"))
    records: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="riverlet-spark-bench-") as tmp:
        cp = copy_jar(cp, Path(tmp))
        # Fluss's JAR goes last, so Spark's own copies of what it bundles (slf4j, lz4, ...) win.
        run_cp = os.pathsep.join([cp] + ([str(Path(args.fluss_jar).resolve())] if args.fluss_jar else []))
        classes = Path(tmp) / "classes"
        sh([str(java_home / "bin" / "javac"), "-d", str(classes), "-cp", cp, "-proc:none",
            str(HERE / "SparkBench.java")])
        server = RiverletServe(Path(tmp) / "data")
        try:
            out = sh([str(java_home / "bin" / "java"), "-Xmx3g", "-XX:+IgnoreUnrecognizedVMOptions",
                      *JVM_OPENS, "-Djdk.reflect.useDirectMethodHandle=false",
                      "-Dio.netty.tryReflectionSetAccessible=true", "-Duser.timezone=UTC",
                      "-cp", os.pathsep.join([str(classes), run_cp]), "SparkBench", server.bootstrap,
                      str(args.rows), str(args.runs), str(args.rounds), str(Path(tmp) / "parquet")]
                     + (["fluss"] if args.fluss_jar else []))
        finally:
            server.stop()
            shutil.rmtree(Path(tmp) / "data", ignore_errors=True)
        records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    for r in records:
        log(json.dumps(r))
    counts = {r["count"]: r for r in records if "count" in r}
    loads = {r["load"]: r["seconds"] for r in records if "load" in r}
    runs = [r for r in records if "query" in r and r["run"] > 0]
    queries = ["projection", "filter", "full"]
    sides = ["riverlet", "parquet"] + (["fluss"] if args.fluss_jar else [])
    med, lo, hi = {}, {}, {}
    for q in queries:
        for w in sides:
            s = [r["seconds"] for r in runs if r["query"] == q and r["who"] == w]
            med[q, w], lo[q, w], hi[q, w] = statistics.median(s), min(s), max(s)
    load_end = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE).stdout.strip()
    describe = {
        "projection": "`SELECT id, amount` (2 of 6 columns)",
        "filter": f"`SELECT * WHERE user_id < 1000` (1%: {counts['riverlet']['filtered']:,} rows)",
        "full": "`SELECT *`",
    }
    fluss = bool(args.fluss_jar)
    lines = [
        START,
        "## Spark connector: Spark SQL over a Riverlet table vs over a local Parquet file (issue 15)",
        "",
        f"Generated by `python3 benches/spark/run.py --rows {args.rows}"
        f"{' --fluss-jar ...' if fluss else ''}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')} at commit {commit}; {os.cpu_count()} cores, "
        f"{platform.platform()}; load average at start {load_start[0]:.2f}, at end {load_end[0]:.2f} "
        f"(above ~0: other processes shared the cores). "
        f"Spark 3.5 (`local[2]`, one SparkSession for both sides, the same settings), {args.rows:,} "
        f"rows of 6 columns (BIGINT, TIMESTAMP_NTZ, INT, DOUBLE, STRING, BOOLEAN) generated once by "
        f"Spark and written to a 4-bucket Fluss log table in release `riverlet serve --fsync never` "
        f"on loopback (Fluss's default ZSTD) and to a Parquet file (Spark's default snappy). Each "
        f"query runs to its last row (`noop` sink); {args.rounds} rounds alternating the sides, "
        f"{args.runs - 1} measured runs per query and side per round after one warm-up.",
        "",
        "| query | Riverlet median s (min–max) | Riverlet rows/s | Parquet median s (min–max) "
        "| Parquet rows/s | Riverlet / Parquet speed |"
        + (" Fluss's connector median s (min–max) | Fluss rows/s | Riverlet / Fluss speed |"
           if fluss else ""),
        "| --- | --- | --- | --- | --- | --- |" + (" --- | --- | --- |" if fluss else ""),
    ]
    for q in queries:
        line = (
            f"| {describe[q]} | {med[q, 'riverlet']:.2f} ({lo[q, 'riverlet']:.2f}–{hi[q, 'riverlet']:.2f}) "
            f"| {args.rows / med[q, 'riverlet'] / 1e6:.2f} M "
            f"| {med[q, 'parquet']:.2f} ({lo[q, 'parquet']:.2f}–{hi[q, 'parquet']:.2f}) "
            f"| {args.rows / med[q, 'parquet'] / 1e6:.2f} M "
            f"| {med[q, 'parquet'] / med[q, 'riverlet']:.2f}x |")
        if fluss:
            line += (
                f" {med[q, 'fluss']:.2f} ({lo[q, 'fluss']:.2f}–{hi[q, 'fluss']:.2f}) "
                f"| {args.rows / med[q, 'fluss'] / 1e6:.2f} M "
                f"| {med[q, 'fluss'] / med[q, 'riverlet']:.2f}x |")
        lines.append(line)
    lines += [
        "",
        f"Writing the rows (once, not repeated): `INSERT INTO` the Riverlet table "
        f"{loads['riverlet']:.1f} s ({args.rows / loads['riverlet'] / 1e6:.2f} M rows/s), "
        f"Parquet {loads['parquet']:.1f} s ({args.rows / loads['parquet'] / 1e6:.2f} M rows/s).",
        "",
        ("Fluss's own Spark connector: `fluss-spark-3.5_2.12` built from Apache Fluss's source "
         "release (tag v0.9.1-incubating, see benches/README.md), reading the same table of the "
         "same `riverlet serve` through a second catalog (`org.apache.fluss.spark.SparkCatalog`); "
         "it pushes down the projection but not the filter, and reads row by row."
         if fluss else
         "Fluss's own Spark connector is absent from this run (no `--fluss-jar`): Apache Fluss "
         "0.9.1 publishes no Spark connector JAR on Maven Central "
         "(`org.apache.fluss:fluss-spark-3.5_2.12:0.9.1-incubating`: \"Could not find "
         "artifact\"); it builds from Fluss's source release, see benches/README.md."),
        "",
        END,
    ]
    section = "\n".join(lines)
    print(section)
    out = Path(args.out)
    replace_section(out, START, END, section)
    log(f"wrote {out} ({time.monotonic() - t_start:.0f} s in all)")


if __name__ == "__main__":
    main()
