#!/usr/bin/env python3
"""Riverlet's Flink 1.20 connector vs Fluss's own (org.apache.fluss:fluss-flink-1.20:0.9.1-incubating)
on the same server and machine (issue 16). Nothing here is a test: figures are never asserted.

    python3 benches/flink/run.py                          # N = 10M rows, M = 1M probe rows, riverlet serve
    python3 benches/flink/run.py --rows 2000000 --probes 200000 --no-build
    python3 benches/flink/run.py --warmup-rows 1000000 --rounds 1  # a 1M-row warm-up per JVM
    python3 benches/flink/run.py --servers riverlet,fluss  # also against Apache Fluss 0.9.1
                                                           # (tests/fluss-cluster/start.sh)

Jobs (benches/flink/FlinkBench.java, a local MiniCluster, parallelism 2): an upsert sink of N rows
into a primary-key table, an append of the same N rows into a log table, a read of that log table
from 'earliest' until its N-th row (streaming mode for both: Fluss 0.9.1 refuses a batch SELECT of
a whole table), and a lookup join of M probe rows against the primary-key table. Each connector
runs in fresh JVMs, alternating (Fluss, Riverlet, Riverlet, Fluss, ...), each in its own database;
a JVM runs the jobs `--runs` times and its first run is a warm-up left out of the medians.
The warm-up runs the same jobs at full size (N rows, M probes) unless `--warmup-rows K` makes it
K rows and K/10 probe rows (keys in 0..K-1), into its own tables as before; the measured runs
always use N and M. The report line says which warm-up ran. `--xmx` sets every bench JVM's heap
(default 2g; Riverlet's connector needed more than that to read 10M rows, see RESULTS.md).
Writes its section of benches/RESULTS.md between the markers below.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
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
COMPARE = ROOT / "tests" / "flink-compare" / "pom.xml"
START = "<!-- flink-connector: written by benches/flink/run.py -->"
END = "<!-- /flink-connector -->"
JOBS = ["upsert", "append", "read", "lookup"]


def log(msg: str) -> None:
    print(f"[flink-bench] {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> str:
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, cwd=ROOT, **kw).stdout


def mvn(offline: bool) -> list[str]:
    return ["mvn", "-T1", "-B", "-q"] + (["-o"] if offline else [])


def build(offline: bool) -> None:
    sh(["cargo", "build", "--release", "-q", "-p", "riverlet-cli", "-p", "riverlet-jni"])
    sh(mvn(offline) + ["-f", "java/pom.xml", "-pl", "riverlet-flink-1.20", "-am", "-DskipTests",
                       "-Driverlet.cargo.skip=true", "package"])


def classpaths(offline: bool, tmp: Path) -> dict[str, str]:
    """Flink 1.20 (+ datagen, connector-base) from tests/flink-compare's POM, plus one connector."""
    jars = [j for j in glob.glob(str(ROOT / "java/riverlet-flink-1.20/target/riverlet-flink-1.20-*.jar"))
            if "original" not in j and not j.endswith(("-sources.jar", "-tests.jar"))]
    if not jars:
        sys.exit("no java/riverlet-flink-1.20/target JAR: drop --no-build")
    # A copy: a Maven build running meanwhile (another module, the debug library) cannot swap it.
    # The newest: `make dist` leaves release-versioned JARs beside the development build's.
    newest = max(jars, key=os.path.getmtime)
    jar = tmp / Path(newest).name
    shutil.copy(newest, jar)
    base, fluss = tmp / "cp-base.txt", tmp / "cp-fluss.txt"
    sh(mvn(offline) + ["-f", str(COMPARE), "dependency:build-classpath", f"-Dmdep.outputFile={base}"])
    sh(mvn(offline) + ["-f", str(COMPARE), "-Pfluss", "dependency:build-classpath",
                       f"-Dmdep.outputFile={fluss}"])
    return {"fluss": fluss.read_text().strip(),
            "riverlet": os.pathsep.join([str(jar), base.read_text().strip()]),
            "base": base.read_text().strip()}


class FlussCluster:
    """Apache Fluss 0.9.1 of tests/fluss-cluster/start.sh: `tablets` tablet servers, tables
    replicated `replication` times (Fluss's default.replication.factor)."""

    def __init__(self, workdir: Path, tablets: int = 1, replication: int = 1):
        self.workdir = workdir
        self.label = (f"Apache Fluss 0.9.1 (tests/fluss-cluster: ZooKeeper, a coordinator and "
                      f"{tablets} tablet server{'s' if tablets > 1 else ''}, one JVM each; "
                      f"replication factor {replication})")
        out = sh(["bash", "tests/fluss-cluster/start.sh", "--tablets", str(tablets),
                  "--replication", str(replication), str(workdir)])
        env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        self.bootstrap = env["FLUSS_BOOTSTRAP"]

    def stop(self) -> None:
        subprocess.run(["bash", "tests/fluss-cluster/stop.sh", "--clean", str(self.workdir)],
                       cwd=ROOT, check=False)


def fluss_shape(name: str) -> tuple[int, int] | None:
    """(tablet servers, replication factor) of `fluss-NxR`; None for any other name."""
    m = re.fullmatch(r"fluss-(\d+)x(\d+)", name)
    if not m:
        return None
    tablets, replication = int(m.group(1)), int(m.group(2))
    return (tablets, replication) if 1 <= replication <= tablets <= 9 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000, help="N: rows upserted, appended and read")
    ap.add_argument("--probes", type=int, default=1_000_000, help="M: probe rows of the lookup join")
    ap.add_argument("--runs", type=int, default=2, help="runs of every job per JVM, the first a warm-up")
    ap.add_argument("--rounds", type=int, default=2, help="JVMs per connector and server, alternating")
    ap.add_argument("--warmup-rows", type=int, metavar="K",
                    help="rows of each JVM's warm-up run (and K/10 probe rows); default N (and M)")
    ap.add_argument("--xmx", default="2g", help="heap of each bench JVM (-Xmx), the same for both")
    ap.add_argument("--servers", default="riverlet",
                    help="comma-separated: riverlet (riverlet serve), fluss (Apache Fluss 0.9.1, one "
                         "tablet server), fluss-NxR (N tablet servers, replication factor R)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--online", action="store_true", help="let Maven download (default: -o)")
    ap.add_argument("--out", default=str(ROOT / "benches" / "RESULTS.md"))
    ap.add_argument("--raw", default=str(HERE / "RESULTS.json"), help="where the raw figures go")
    ap.add_argument("--report-only", metavar="JSON",
                    help="rewrite the RESULTS.md section from raw figures, measuring nothing")
    args = ap.parse_args()
    if args.warmup_rows is not None and args.warmup_rows <= 0:
        ap.error("--warmup-rows must be positive")
    for name in args.servers.split(","):
        if name not in ("riverlet", "fluss") and fluss_shape(name) is None:
            ap.error(f"--servers: {name!r} is not riverlet, fluss or fluss-NxR (e.g. fluss-3x3)")
    if args.report_only:
        write_report(json.loads(Path(args.report_only).read_text()), Path(args.out))
        return

    t_start = time.monotonic()
    load_start = os.getloadavg()
    offline = not args.online
    if not args.no_build:
        build(offline)
    java_bin = Path(os.environ.get("JAVA_HOME", "/usr")) / "bin"
    java = str(java_bin / "java")
    jvm = [java, f"-Xmx{args.xmx}", "-XX:+IgnoreUnrecognizedVMOptions",
           "--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED",
           "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
           "-Dlog4j2.level=ERROR"]
    results: dict[str, dict[str, list[dict]]] = {}
    labels: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="riverlet-flink-bench-") as tmp:
        tmp = Path(tmp)
        cps = classpaths(offline, tmp)
        classes = tmp / "classes"
        sh([str(java_bin / "javac"), "-d", str(classes),
            "-cp", cps["base"], "-proc:none", str(HERE / "FlinkBench.java")])
        for server_name in args.servers.split(","):
            server = (RiverletServe(tmp / "data", remove_data_on_stop=True) if server_name == "riverlet"
                      else FlussCluster(tmp / server_name, *(fluss_shape(server_name) or (1, 1))))
            labels[server_name] = server.label
            res = results.setdefault(server_name, {"fluss": [], "riverlet": []})
            try:
                for rnd in range(args.rounds):
                    order = ["fluss", "riverlet"] if rnd % 2 == 0 else ["riverlet", "fluss"]
                    for who in order:
                        db = f"bench_{who}_{rnd}_{int(time.time())}"
                        try:
                            out = sh(jvm + ["-cp", os.pathsep.join([str(classes), cps[who]]),
                                            "FlinkBench", server.bootstrap, db, str(args.rows),
                                            str(args.probes), str(args.runs)]
                                     + ([str(args.warmup_rows)] if args.warmup_rows else []))
                        except subprocess.CalledProcessError as e:
                            # The jobs it did finish, before the traceback.
                            log(f"{server_name}/{who} failed; its output: {e.stdout}")
                            raise
                        runs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
                        log(f"{server_name}/{who}: " + ", ".join(
                            f"{r['job']}#{r['run']} {r['seconds']:.2f}s" for r in runs))
                        res[who].extend(r for r in runs if r["run"] > 0)
            finally:
                server.stop()

    load_end = os.getloadavg()
    raw = {"args": vars(args), "labels": labels, "results": results,
           "load_start": load_start[0], "load_end": load_end[0],
           "date": time.strftime('%Y-%m-%d %H:%M'),
           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                                    stdout=subprocess.PIPE).stdout.strip()}
    Path(args.raw).write_text(json.dumps(raw, indent=1) + "\n")
    write_report(raw, Path(args.out))
    log(f"wrote {args.out} and {args.raw} ({time.monotonic() - t_start:.0f} s in all)")


def write_report(raw: dict, out: Path) -> None:
    """The RESULTS.md section from the raw figures (`--report-only` redoes it without measuring)."""
    args = argparse.Namespace(**raw["args"])
    labels, results = raw["labels"], raw["results"]
    load_start, load_end = (raw["load_start"],), (raw["load_end"],)
    commit = raw["commit"]
    # Raw figures written before --warmup-rows existed have no such key: full-size warm-ups.
    warmup_rows = getattr(args, "warmup_rows", None)
    if warmup_rows:
        warmup = (f"a warm-up run of {warmup_rows:,} rows and {max(1, warmup_rows // 10):,} probe "
                  f"rows (`--warmup-rows {warmup_rows}`, its own tables)")
    else:
        warmup = f"a full-size warm-up run ({args.rows:,} rows, {args.probes:,} probe rows)"
    flags = "".join(f" --{name} {getattr(args, name)}" for name, default in (("runs", 2), ("rounds", 2))
                    if getattr(args, name) != default)
    if warmup_rows:
        flags += f" --warmup-rows {warmup_rows}"
    xmx = getattr(args, "xmx", "2g")
    if xmx != "2g":
        flags += f" --xmx {xmx}"
    what = {"upsert": f"upsert sink, {args.rows:,} rows into a PK table",
            "append": f"append sink, {args.rows:,} rows into a log table",
            "read": f"read of the {args.rows:,}-row log table (streaming, 'earliest', to the last row)",
            "lookup": f"lookup join, {args.probes:,} probe rows (async, no cache)"}
    lines = [
        START,
        "## Flink connector: Riverlet's riverlet-flink-1.20 vs Fluss's fluss-flink-1.20 0.9.1 (issue 16)",
        "",
        f"Generated by `python3 benches/flink/run.py --rows {args.rows} --probes {args.probes}{flags} "
        f"--servers {args.servers}` on {raw['date']} at commit {commit}; "
        f"{os.cpu_count()} cores, {platform.platform()}; load average at start {load_start[0]:.2f}, "
        f"at end {load_end[0]:.2f} (above ~0: other processes "
        f"shared the cores). Flink 1.20.3 MiniCluster in one JVM per run (-Xmx{xmx}), parallelism 2, "
        f"the same jobs and rows with either connector JAR on the class path (benches/flink/FlinkBench.java); "
        f"4 buckets; wall time from submitting a job to its end (job start-up included); "
        f"{args.rounds} JVM(s) per connector and server, alternating, {args.runs - 1} measured run(s) "
        f"each after {warmup}.",
        "",
    ]
    for server_name, res in results.items():
        lines += [f"Server: {labels[server_name]}.", "",
                  "| job | Fluss's connector median s | rows/s | Riverlet's median s | rows/s "
                  "| Riverlet / Fluss speed |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for job in JOBS:
            med = {}
            for who in ("fluss", "riverlet"):
                s = [r["seconds"] for r in res[who] if r["job"] == job]
                med[who] = statistics.median(s) if s else None
            rows = args.probes if job == "lookup" else args.rows
            cell = lambda w: (f"{med[w]:.2f} | {rows / med[w]:,.0f}" if med[w] else "n/a | n/a")
            ratio = f"{med['fluss'] / med['riverlet']:.2f}x" if med["fluss"] and med["riverlet"] else "n/a"
            lines.append(f"| {what[job]} | {cell('fluss')} | {cell('riverlet')} | {ratio} |")
        lines.append("")
    if raw.get("note"):
        lines += [raw["note"], ""]
    lines.append(END)
    section = "\n".join(lines)
    print(section)
    replace_section(out, START, END, section)


if __name__ == "__main__":
    main()
