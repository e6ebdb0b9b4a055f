#!/usr/bin/env python3
"""Scale, measured (issue 30, item 8): append and full-scan rows/s against Apache Fluss 0.9.1
with 1 and with 3 tablet servers, three clients side by side in the same run.

    .venv-bench/bin/python benches/scale.py                    # 2M rows, 5 runs (see below)
    .venv-bench/bin/python benches/scale.py --rows 200000 --runs 1 --no-build --out /tmp/scale.md
    .venv-bench/bin/python benches/scale.py --clusters 1x1,3x1,3x3   # also 3 servers, replication 3

Time (2026-12-06, 2 cores at load 20-30 from other jobs): `--rows 1000000 --runs 2` took 3.6 min
(clusters up ~40 s, stopped ~20 s, Fluss's Java client the slowest part: a JVM per measurement);
the default 2M rows x 5 runs takes about 10-15 min, plus the release build of the binding.

Needs the bench venv (`make bench` creates `.venv-bench` with pyfluss, pyarrow, numpy, maturin),
Java 17 and Maven (Fluss's jars from Maven Central: the servers through
tests/fluss-cluster/fetch.sh, the Java client through tests/reliability/peer/pom.xml). Unless
`--no-build`, it first builds the Python binding in release mode into the venv (`maturin develop
--release` under `nice -n 10`, as benches/run.py does); it refuses to while another `cargo` runs
(`--build-anyway` builds all the same; `--no-build` measures the binding as installed, which the
report then says).

What runs:
  - the clusters of `--clusters` (default `1x1,3x1`: TABLETSxREPLICATION), each started by
    tests/fluss-cluster/start.sh in a fresh WORKDIR of its own and stopped (`stop.sh --clean`)
    at the end whatever happens. All of them are up during the whole measurement and the runs
    alternate between them, so a change of the machine's load hits every cluster size alike
    (`--sequential`: one cluster at a time instead, started, measured, stopped). Replication
    factor 1 in both default clusters: every bucket lives on one server, so the 3-server cluster
    spreads the same work over 3 servers instead of tripling it (`3x3` makes every server also
    keep a replica of the other servers' buckets). Every server gets ZooKeeper's session
    timeout of 60 s (Fluss's default; start.sh sets 8 s for several servers, for its failover
    tests), so a loaded machine does not move leaders in the middle of a run;
  - on each fresh cluster, `--warmup` (default 1) unrecorded rounds of the harness appending the
    data through Riverlet and reading it back: the first append on a fresh cluster was seen
    5-10x slower than the next (the servers' JIT), which would penalise whoever runs first;
  - per run, per cluster, per contender: a fresh log table of `--buckets` buckets (default 12),
    created by the harness through Riverlet's Python binding (the same descriptor for every
    client), its leaders read with `Table.bucket_leaders()` and printed per server (checked
    again after the scan: a move is reported); then, each in a fresh process, the contender's
    append of the bench data (timed from the first row handed to the writer to the last
    acknowledgement) and its full scan of that table (timed from the start of the read to the
    last row, which must be every row appended); then the table is dropped;
  - contenders: `riverlet` (Riverlet's Python binding: `Table.append` of the data in 8192-row
    Arrow batches, `Table.read()` into a pyarrow Table; benches/worker.py), `pyfluss` (the
    official Python client: `write_arrow_batch` per batch + flush, a record-batch log scanner's
    `to_arrow()`; benches/worker.py) and `fluss-java` (Fluss's own Java client
    fluss-client 0.9.1-incubating: benches/jvm/FlussClientBench.java, a GenericRow per row and
    AppendWriter.append + flush, a LogScanner polled to the latest offsets). Every client runs
    with its defaults. The contender order rotates run by run, the cluster order alternates;
  - the data: benches/run.py's generator (seed 9: id, event_time, user_id, amount, category,
    flag), written once to an Arrow IPC file that every process reads.

Printed and written (between `<!-- scale:` markers into benches/RESULTS.md, kept by
benches/run.py; `--out FILE` elsewhere, `--no-write` nowhere): rows/s per contender per cluster
(median of the runs, min-max), the ratio of each larger cluster to 1x1 per contender, the ratios
Riverlet/pyfluss and Riverlet/Fluss-Java on each cluster, the client processes' peak RSS, the
bucket leaders, and the machine's load average before and after. The raw figures go to
`--json` (default: next to --out, .json). Numbers are reported, never asserted. All servers and
the clients share this machine's cores: 3 servers bring no hardware here, so the 3/1 ratio shows
whether a client spreads its work over the servers and keeps them all busy (on a real cluster
each server brings its own cores and disks).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import bench_support  # noqa: E402
import run as bench  # noqa: E402  (benches/run.py: data generator, workers, formatting)

CLUSTER = REPO / "tests" / "fluss-cluster"
PEER_POM = REPO / "tests" / "reliability" / "peer" / "pom.xml"
JAVA_SRC = HERE / "jvm" / "FlussClientBench.java"
MARK_START = "<!-- scale: written by benches/scale.py -->"
MARK_END = "<!-- /scale -->"
CONTENDERS = ("riverlet", "pyfluss", "fluss-java")
LABEL = {"riverlet": "Riverlet (Python)", "pyfluss": "pyfluss", "fluss-java": "Fluss Java client"}
LEADER_WAIT_S = 30.0


def log(msg: str) -> None:
    bench.log(msg)


def load1() -> float:
    return os.getloadavg()[0]


# ------------------------------------------------------------------------------------------
# clusters
# ------------------------------------------------------------------------------------------


class Cluster:
    """One Apache Fluss cluster of tests/fluss-cluster/start.sh in a fresh WORKDIR."""

    def __init__(self, tablets: int, replication: int, workdir: Path):
        self.tablets = tablets
        self.replication = replication
        self.key = f"{tablets}x{replication}"
        self.workdir = workdir
        self.started = False
        self.bootstrap = ""
        self.version = "?"
        self.servers: dict[int, str] = {}
        self.start_s = 0.0

    def start(self) -> None:
        t0 = time.monotonic()
        self.started = True  # stop() from here on, even if start.sh fails half-way
        r = subprocess.run(
            ["bash", str(CLUSTER / "start.sh"), "--tablets", str(self.tablets),
             "--replication", str(self.replication),
             "--conf", "zookeeper.client.session-timeout: 60 s", str(self.workdir)],
            capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"start.sh --tablets {self.tablets} failed:\n{r.stderr[-3000:]}")
        self.start_s = time.monotonic() - t0
        env = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        self.bootstrap = env["FLUSS_BOOTSTRAP"]
        self.version = env.get("FLUSS_VERSION", "?")
        ports = dict(line.split("=", 1) for line in
                     (self.workdir / "ports.env").read_text().splitlines() if "=" in line)
        tablet_ports = ports.get("TABLET_PORTS", ports.get("TABLET_PORT", "")).strip('"').split()
        self.servers = {i: f"127.0.0.1:{p}" for i, p in enumerate(tablet_ports)}

    def stop(self) -> None:
        if not self.started:
            return
        r = subprocess.run(["bash", str(CLUSTER / "stop.sh"), "--clean", str(self.workdir)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(f"stop.sh {self.workdir} exited {r.returncode}:\n{r.stderr[-1500:]}")
        self.started = False

    def describe(self) -> str:
        return (f"{self.tablets} tablet server{'s' if self.tablets > 1 else ''}, "
                f"replication {self.replication}")


# ------------------------------------------------------------------------------------------
# the Java client
# ------------------------------------------------------------------------------------------


def java_setup(work: Path) -> tuple[str, str]:
    """fluss-client's classpath (Maven, tests/reliability/peer/pom.xml) and FlussClientBench
    compiled once into `work` (so no run pays for the source launcher's compile)."""
    cp_file = work / "fluss-client.cp"
    r = subprocess.run(["mvn", "-B", "-q", "-f", str(PEER_POM), "dependency:build-classpath",
                        f"-Dmdep.outputFile={cp_file}"], capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0 or not cp_file.exists():
        raise RuntimeError(f"mvn could not resolve fluss-client:\n{(r.stdout + r.stderr)[-2000:]}")
    cp = cp_file.read_text().strip()
    classes = work / "java-classes"
    classes.mkdir()
    r = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", cp, str(JAVA_SRC)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"javac {JAVA_SRC.name} failed:\n{r.stderr[-3000:]}")
    version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    return f"{classes}{os.pathsep}{cp}", (version.splitlines() or ["?"])[0]


def run_java(classpath: str, argv: list[str], timeout: float) -> dict:
    """FlussClientBench in a fresh JVM; its last stdout line is the result (peak RSS added from
    os.wait4, which for an exec'd JVM is the JVM's own)."""
    cmd = ["java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", classpath,
           "FlussClientBench", *argv]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    out = proc.stdout.read()
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    code = os.waitstatus_to_exitcode(status)
    last = (out.strip().splitlines() or [""])[-1]
    try:
        result = json.loads(last)
    except json.JSONDecodeError:
        raise RuntimeError(f"FlussClientBench {argv[0]} failed (exit {code}):\n"
                           + "\n".join("".join(err).strip().splitlines()[-15:])) from None
    result["maxrss_kib"] = usage.ru_maxrss
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    return result


# ------------------------------------------------------------------------------------------
# tables
# ------------------------------------------------------------------------------------------


def wait_for_leaders(table) -> list[dict]:
    deadline = time.monotonic() + LEADER_WAIT_S
    while True:
        leaders = table.bucket_leaders()
        if leaders and all(d["leader_id"] is not None for d in leaders):
            return leaders
        if time.monotonic() > deadline:
            return []
        time.sleep(0.2)


def create_table(conn, name: str, schema, buckets: int) -> list[dict]:
    """Creates the log table and waits until every bucket has a leader. Apache Fluss 0.9.1's
    coordinator now and then never assigns a new table's buckets (the create-table race of
    tests/README.md): then the table is dropped and created again, up to three attempts."""
    for attempt in range(1, 4):
        table = conn.create_table(name, schema, buckets=buckets)
        leaders = wait_for_leaders(table)
        if leaders:
            return leaders
        log(f"table {name} got no leader within {LEADER_WAIT_S:.0f} s (attempt {attempt}): "
            "dropping and creating it again")
        conn.drop_table(name, if_exists=True)
    raise RuntimeError(f"table {name} got no leader in three attempts (see the coordinator log)")


def spread(leaders: list[dict]) -> dict[int, int]:
    """Buckets led per tablet server id."""
    out: dict[int, int] = {}
    for d in leaders:
        out[d["leader_id"]] = out.get(d["leader_id"], 0) + 1
    return dict(sorted(out.items()))


def spread_text(sp: dict) -> str:
    return ", ".join(f"server {k}: {v}" for k, v in sorted(sp.items(), key=lambda kv: int(kv[0])))


# ------------------------------------------------------------------------------------------
# measuring
# ------------------------------------------------------------------------------------------


def measure_one(cluster: Cluster, conn, contender: str, run: int, args, data_file: Path,
                schema, java_cp: str, res: dict) -> None:
    """Creates a fresh table on `cluster`, has `contender` append to it and scan it (a fresh
    process each), records the figures in res, drops the table."""
    table = f"scale.r{run}_{contender.replace('-', '_')}"
    try:
        measure_table(cluster, conn, contender, run, table, args, data_file, schema, java_cp,
                      res)
    except Exception as e:  # noqa: BLE001 - reported; the other measurements go on
        what = f"{cluster.key} run {run} {contender}: not measured: {type(e).__name__}: {e}"
        log(what)
        res["warnings"].append(what.splitlines()[0][:300])


def measure_table(cluster: Cluster, conn, contender: str, run: int, table: str, args,
                  data_file: Path, schema, java_cp: str, res: dict) -> None:
    leaders = create_table(conn, table, schema, args.buckets)
    sp = spread(leaders)
    entry: dict = {"run": run, "table": table, "leaders": [d["leader_id"] for d in leaders],
                   "spread": sp, "load1_before": load1()}
    try:
        if contender == "fluss-java":
            a = run_java(java_cp, ["append", cluster.bootstrap, table, str(data_file),
                                   str(args.rows), *args.java_conf], args.worker_timeout)
            if a.get("failed"):
                raise RuntimeError(f"fluss-java append: {a['failed']} rows failed: {a['error']}")
            s = run_java(java_cp, ["scan", cluster.bootstrap, table, str(args.rows),
                                   *args.java_conf], args.worker_timeout)
            want = args.rows * (args.rows - 1) // 2
            if s.get("id_sum") != want:
                res["warnings"].append(f"{cluster.key} run {run} fluss-java: id sum of the scan "
                                       f"{s.get('id_sum')}, of the rows written {want}")
        else:
            base = {"contender": contender, "bootstrap": cluster.bootstrap, "table": table,
                    "buckets": args.buckets, "data": str(data_file)}
            a = bench.run_worker(dict(base, op="append", rows=args.rows, existing=True, keep=True),
                                 args.worker_timeout)
            s = bench.run_worker(dict(base, op="scan"), args.worker_timeout)
        if a["rows"] != args.rows or s["rows"] != args.rows:
            res["warnings"].append(f"{cluster.key} run {run} {contender}: appended "
                                   f"{a['rows']:,}, scanned {s['rows']:,} of {args.rows:,} rows")
        after = [d["leader_id"] for d in conn.table(table).bucket_leaders()]
        if after != entry["leaders"]:
            res["warnings"].append(f"{cluster.key} run {run} {contender}: bucket leaders moved "
                                   f"during the run: {entry['leaders']} -> {after}")
        entry.update({
            "append_s": a["seconds"], "scan_s": s["seconds"],
            "append_rss_kib": a.get("maxrss_kib"), "scan_rss_kib": s.get("maxrss_kib"),
            "append_cpu_s": a.get("cpu_s"), "scan_cpu_s": s.get("cpu_s"),
            "load1_after": load1(),
            "append": a, "scan": s,  # everything the process reported
        })
    finally:
        try:
            conn.drop_table(table, if_exists=True)
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            log(f"note: dropping {table} on {cluster.key} failed: {e}")
    res["runs"][cluster.key][contender].append(entry)
    log(f"{cluster.key} run {run} {contender:10s}: append {entry['append_s']:6.2f}s "
        f"({args.rows / entry['append_s'] / 1e6:5.2f} M rows/s), scan {entry['scan_s']:6.2f}s "
        f"({args.rows / entry['scan_s'] / 1e6:5.2f} M rows/s); leaders {spread_text(sp)}; "
        f"load {entry['load1_before']:.1f} -> {entry['load1_after']:.1f}")


def warm_up(cluster: Cluster, conn, data_file: Path, args, res: dict) -> None:
    """`--warmup` rounds, not recorded: the harness appends the data to a fresh table through
    Riverlet (in this process) and reads it back, so that no contender's first run pays for the
    fresh servers' JIT warm-up (seen: the first append on a fresh cluster 5-10x slower)."""
    import pyarrow as pa

    with pa.memory_map(str(data_file), "r") as src:
        data = pa.ipc.open_file(src).read_all()
    for i in range(args.warmup):
        name = f"scale.warmup_{i}"
        t0 = time.monotonic()
        try:
            create_table(conn, name, data.schema, args.buckets)
            conn.table(name).append(data)
            got = conn.table(name).read().num_rows
            conn.drop_table(name, if_exists=True)
        except Exception as e:  # noqa: BLE001 - reported; the measurements go on
            res["warnings"].append(f"{cluster.key} warm-up {i} failed: {type(e).__name__}: {e}")
            continue
        log(f"{cluster.key} warm-up {i} (not recorded): append and read of {got:,} rows in "
            f"{time.monotonic() - t0:.1f}s")


def measure(clusters: list[Cluster], run_ids: list[int], args, data_file: Path, schema,
            java_cp: str, res: dict) -> None:
    import riverlet

    conns = {c.key: riverlet.connect(c.bootstrap) for c in clusters}
    try:
        for c in clusters:
            conns[c.key].create_database("scale", if_not_exists=True)
            warm_up(c, conns[c.key], data_file, args, res)
        for run in run_ids:
            order = clusters if run % 2 == 0 else clusters[::-1]
            k = run % len(args.contenders)
            contenders = args.contenders[k:] + args.contenders[:k]
            for c in order:
                for contender in contenders:
                    measure_one(c, conns[c.key], contender, run, args, data_file, schema,
                                java_cp, res)
    finally:
        for conn in conns.values():
            conn.close()


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------


def build_binding(args) -> str:
    """`maturin develop --release` into this venv, as benches/run.py does; a note for the
    report."""
    if args.no_build:
        return "the Python binding as installed (--no-build: not rebuilt by this run)"
    running = subprocess.run(["pgrep", "-x", "cargo"], capture_output=True, text=True).stdout
    if running.strip() and not args.build_anyway:
        sys.exit("another cargo build is running (pgrep -x cargo); wait for it, or pass "
                 "--no-build (binding as installed) or --build-anyway")
    maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or shutil.which(
        "maturin")
    if maturin is None:
        sys.exit("maturin is not installed in this venv (make bench installs it)")
    env = dict(os.environ, VIRTUAL_ENV=sys.prefix, CARGO_TARGET_DIR=str(bench.TARGET))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    r = bench.sh(["nice", "-n", "10", maturin, "develop", "--release", "-q"], cwd=REPO, env=env,
                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("maturin develop --release failed:\n" + "\n".join(r.stdout.splitlines()[-20:]))
    # An editable install is a .pth file, which Python reads only at start: read the venv's
    # site-packages again, so this process (which imports riverlet later) finds the new install.
    import site
    import sysconfig
    site.addsitedir(sysconfig.get_paths()["purelib"])
    return "the Python binding built by this run with `maturin develop --release`"


def parse_clusters(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        t, _, r = part.strip().partition("x")
        tablets, repl = int(t), int(r or 1)
        if repl > tablets:
            sys.exit(f"--clusters {part}: replication {repl} needs at least {repl} servers")
        out.append((tablets, repl))
    if (1, 1) not in out:
        sys.exit("--clusters must include 1x1 (the base of the ratios)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--buckets", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=1,
                    help="unrecorded append+read rounds per fresh cluster (default 1)")
    ap.add_argument("--clusters", default="1x1,3x1",
                    help="TABLETSxREPLICATION, comma-separated; must include 1x1")
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--sequential", action="store_true",
                    help="one cluster at a time (default: all up, runs alternating)")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--json", default=None, help="raw figures (default: --out with .json, or "
                    "benches/scale.json for RESULTS.md)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--build-anyway", action="store_true",
                    help="build the binding even while another cargo runs")
    ap.add_argument("--work-prefix", default="riverlet-scale-",
                    help="prefix of the temporary directory (data and cluster WORKDIRs)")
    ap.add_argument("--java-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Fluss Java client option (repeatable; default: its defaults)")
    ap.add_argument("--worker-timeout", type=float, default=900)
    ap.add_argument("--report-only", metavar="JSON", help="rewrite the section from raw figures")
    args = ap.parse_args()

    if args.report_only:
        res = json.loads(Path(args.report_only).read_text())
        finish(res, args)
        return

    args.contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    for c in args.contenders:
        if c not in CONTENDERS:
            sys.exit(f"unknown contender {c} (one of {', '.join(CONTENDERS)})")
    specs = parse_clusters(args.clusters)

    # SIGTERM/SIGHUP become an exception, so the finally below stops the clusters.
    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    build_note = build_binding(args) if "riverlet" in args.contenders else ""
    ok, info = bench.riverlet_available()
    if not ok:  # the harness creates the tables through it, whoever measures
        sys.exit(f"the riverlet Python binding is not importable: {info}")
    if "pyfluss" in args.contenders:
        r = subprocess.run([sys.executable, "-c", "import fluss"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("pyfluss is not importable in this venv (make bench installs it):\n"
                     + r.stderr[-500:])
    import pyarrow as pa

    work = Path(tempfile.mkdtemp(prefix=args.work_prefix))
    res: dict = {
        "args": {k: v for k, v in vars(args).items() if k != "report_only"},
        "generated": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                 capture_output=True, text=True).stdout.strip(),
        "cores": os.cpu_count(), "binding": build_note, "riverlet_version": info,
        "warnings": [], "loadavg": {"start": os.getloadavg()},
        "runs": {f"{t}x{r}": {c: [] for c in args.contenders} for t, r in specs},
        "clusters": {},
    }
    clusters = [Cluster(t, r, work / f"fluss-{t}x{r}") for t, r in specs]
    log(f"work dir {work}; load average {res['loadavg']['start']}")
    try:
        java_cp = ""
        if "fluss-java" in args.contenders:
            java_cp, res["java"] = java_setup(work)
            log(f"Fluss Java client compiled ({res['java']})")
        data_file = work / "data.arrow"
        r = subprocess.run([sys.executable, str(HERE / "run.py"), "--generate-only",
                            str(data_file), str(args.rows)], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("data generation failed:\n" + r.stderr)
        res["shape"] = json.loads(r.stdout.strip().splitlines()[-1])
        with pa.memory_map(str(data_file), "r") as src:
            schema = pa.ipc.open_file(src).schema
        log(f"data: {args.rows:,} rows, {res['shape']['arrow_bytes'] / 1e6:.1f} MB of Arrow")

        def start(c: Cluster) -> None:
            c.start()
            res["clusters"][c.key] = {"tablets": c.tablets, "replication": c.replication,
                                      "version": c.version, "start_s": c.start_s,
                                      "servers": c.servers}
            log(f"Fluss {c.version} {c.key} ({c.describe()}) up in {c.start_s:.1f}s: "
                f"{c.bootstrap}, tablet servers {c.servers}")
        log("replication factor 1 on 3 servers: each bucket lives on one server, so the "
            "3-server cluster spreads the same work over 3 servers instead of tripling it")
        if args.sequential:
            for c in clusters:
                start(c)
                try:
                    measure([c], list(range(args.runs)), args, data_file, schema, java_cp, res)
                finally:
                    c.stop()
        else:
            for c in clusters:
                start(c)
            measure(clusters, list(range(args.runs)), args, data_file, schema, java_cp, res)
    finally:
        for c in clusters:
            c.stop()
        shutil.rmtree(work, ignore_errors=True)
    res["loadavg"]["end"] = os.getloadavg()
    finish(res, args)


def finish(res: dict, args) -> None:
    text, lines = report(res)
    print(text)
    print("Ratios:")
    for line in lines:
        print("  " + line)
    if args.no_write:
        return
    out = Path(args.out)
    json_path = Path(args.json) if args.json else (
        HERE / "scale.json" if out.resolve() == (HERE / "RESULTS.md").resolve()
        else out.with_suffix(".json"))
    if not args.report_only:
        json_path.write_text(json.dumps(res, indent=1) + "\n")
    bench_support.replace_section(out, MARK_START, MARK_END, text.rstrip("\n"))
    log(f"wrote the scale section of {out} (raw figures: {json_path})")


# ------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------


def rates(res: dict, key: str, contender: str, op: str) -> dict | None:
    rows = res["args"]["rows"]
    runs = [r for r in res["runs"].get(key, {}).get(contender, []) if r.get(f"{op}_s")]
    if not runs:
        return None
    v = [rows / r[f"{op}_s"] for r in runs]
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def report(res: dict) -> tuple[str, list[str]]:
    a = res["args"]
    keys = list(res["runs"])
    contenders = a["contenders"]
    md: list[str] = []
    p = md.append
    ratios: list[str] = []
    la = res["loadavg"]
    end = la.get("end", [float("nan")] * 3)
    p(MARK_START)
    p("## Scale: 1 and 3 tablet servers, three clients (issue 30, item 8)")
    p("")
    cmd = f"benches/scale.py --rows {a['rows']} --runs {a['runs']} --buckets {a['buckets']}"
    if a["clusters"] != "1x1,3x1":
        cmd += f" --clusters {a['clusters']}"
    if a.get("sequential"):
        cmd += " --sequential"
    if a.get("warmup", 1) != 1:
        cmd += f" --warmup {a['warmup']}"
    for kv in a.get("java_conf") or []:
        cmd += f" --java-conf {kv}"
    versions = sorted({c["version"] for c in res["clusters"].values()}) or ["?"]
    p(f"Generated by `{cmd}` on {res['generated']} (commit {res['commit']}), {res['cores']} "
      f"cores; load average (1/5/15 min) at start {la['start'][0]:.2f}/{la['start'][1]:.2f}/"
      f"{la['start'][2]:.2f}, at end {end[0]:.2f}/{end[1]:.2f}/{end[2]:.2f} (above ~0: other "
      "processes shared the cores). Apache Fluss "
      f"{', '.join(versions)} as tests/fluss-cluster/start.sh starts it (ZooKeeper, a coordinator "
      "and N tablet servers, one JVM each, `-Xms128m -Xmx1g`; ZooKeeper session timeout 60 s), "
      + ("one cluster at a time. " if a.get("sequential") else
         "all clusters up at once and the runs alternating between them. ")
      + "Replication factor 1 unless the cluster says otherwise: every bucket lives on one "
      "server, so 3 servers spread the same work over 3 servers instead of tripling it. "
      f"Per run, cluster and client: a fresh {a['buckets']}-bucket log table (created by the "
      f"harness), the client's append of {a['rows']:,} rows "
      f"({res.get('shape', {}).get('arrow_bytes', 0) / 1e6:.0f} MB of Arrow: benches/run.py's "
      "data) in a fresh process, timed from the first row to the last acknowledgement, then its "
      "full scan of that table in another fresh process, timed to the last row. Clients, each "
      "with its defaults: Riverlet's Python binding (`Table.append` of 8192-row Arrow batches, "
      "`Table.read()` into a pyarrow Table; " + (res.get("binding") or "?") + "), pyfluss "
      "(`write_arrow_batch` + `flush`, a record-batch log scanner's `to_arrow()`) and Fluss's "
      "Java client fluss-client 0.9.1-incubating (benches/jvm/FlussClientBench.java: a "
      "`GenericRow` per row, `AppendWriter.append` + `flush`; a `LogScanner` polled up to the "
      "latest offsets, reading each row's id; a fresh JVM per measurement, so its class loading "
      "and JIT warm-up are inside the timing, as for a short-lived Java job). All servers and "
      "clients share this machine's cores: 3 servers bring no hardware here, so the 3/1 ratio "
      "shows whether a client spreads its work over the servers and keeps them all busy, not "
      "what 3 machines would give.")
    if a.get("warmup", 0):
        p("")
        p(f"Each fresh cluster first got {a['warmup']} unrecorded round(s) of the harness "
          "appending the same data through Riverlet and reading it back, so that no client's "
          "first run pays for the servers' JIT warm-up.")
    elif "warmup" in a:
        p("")
        p("No warm-up (`--warmup 0`): the first run on each fresh cluster also warmed its "
          "servers up.")
    if a.get("java_conf"):
        p("")
        p("Fluss's Java client ran with these options instead of its defaults: "
          + ", ".join(f"`{kv}`" for kv in a["java_conf"]) + ".")
    for w in res.get("warnings", []):
        p(f"- **Warning**: {w}")
    p("")
    p("Bucket leaders (`Table.bucket_leaders()`, buckets per tablet server, every table of the "
      "run):")
    p("")
    for key in keys:
        seen: dict[str, int] = {}
        for c in contenders:
            for r in res["runs"][key].get(c, []):
                t = spread_text(r["spread"])
                seen[t] = seen.get(t, 0) + 1
        desc = res["clusters"].get(key, {})
        p(f"- {key} ({desc.get('tablets', '?')} server(s), replication "
          f"{desc.get('replication', '?')}): "
          + "; ".join(f"{t} ({n} table{'s' if n > 1 else ''})" for t, n in seen.items()))
    p("")
    for op, what in (("append", "Append"), ("scan", "Full scan")):
        p(f"**{what}**, rows/s (median of the runs, min–max):")
        p("")
        p("| client | " + " | ".join(keys) + " | " +
          " | ".join(f"{k} / 1x1" for k in keys if k != "1x1") + " |")
        p("| --- " * (1 + len(keys) + len(keys) - 1) + "|")
        for c in contenders:
            cells = []
            base = rates(res, "1x1", c, op)
            for key in keys:
                r = rates(res, key, c, op)
                cells.append("not measured" if r is None else
                             f"{bench.fmt_rate(r['median'])} ({bench.fmt_rate(r['min'])}–"
                             f"{bench.fmt_rate(r['max'])})")
            for key in keys:
                if key == "1x1":
                    continue
                r = rates(res, key, c, op)
                if r and base:
                    x = r["median"] / base["median"]
                    cells.append(f"{x:.2f}x")
                    ratios.append(f"{op} {LABEL[c]}: {key} / 1x1 = {x:.2f}x")
                else:
                    cells.append("n/a")
            p(f"| {LABEL[c]} | " + " | ".join(cells) + " |")
        p("")
        for other in ("pyfluss", "fluss-java"):
            if "riverlet" not in contenders or other not in contenders:
                continue
            parts = []
            for key in keys:
                rv, ro = rates(res, key, "riverlet", op), rates(res, key, other, op)
                if rv and ro:
                    parts.append(f"{key} {rv['median'] / ro['median']:.2f}x")
            if parts:
                line = f"{op} Riverlet / {LABEL[other]}: " + ", ".join(parts)
                ratios.append(line)
                p(f"- {line}")
        p("")
    p("Client peak RSS, MiB (median of the runs; append / scan process):")
    p("")
    p("| client | " + " | ".join(keys) + " |")
    p("| --- " * (1 + len(keys)) + "|")
    for c in contenders:
        cells = []
        for key in keys:
            runs = res["runs"][key].get(c, [])
            ap_ = [r["append_rss_kib"] for r in runs if r.get("append_rss_kib")]
            sc_ = [r["scan_rss_kib"] for r in runs if r.get("scan_rss_kib")]
            cells.append(f"{statistics.median(ap_) / 1024:.0f} / "
                         f"{statistics.median(sc_) / 1024:.0f}" if ap_ and sc_ else "n/a")
        p(f"| {LABEL[c]} | " + " | ".join(cells) + " |")
    p("")
    p("**Ratios:**")
    p("")
    for line in ratios:
        p(f"- {line}")
    p("")
    p(MARK_END)
    return "\n".join(md) + "\n", ratios


if __name__ == "__main__":
    main()
