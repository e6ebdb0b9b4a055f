#!/usr/bin/env python3
"""Riverlet benchmarks: Riverlet Python vs pyfluss vs a plain loopback socket, in one run.

    make bench                                   # = .venv-bench/bin/python benches/run.py
    .venv-bench/bin/python benches/run.py --rows 1000000 --no-build

What it does (issue 9):
  0. builds what it needs in release mode (riverlet-server, the Python binding through
     `maturin develop --release`, the std-only loopback helper benches/tcp_ceiling.rs via rustc -O);
  1. generates the data once, deterministically (numpy seed 9): ROWS rows x 6 columns
     (int64 id, timestamp[us], int32, float64 with 1% nulls, string, bool) in 8192-row batches,
     kept in an Arrow IPC file that every worker memory-maps;
  2. starts the embedded server (release binary, `--fsync never`) on a fresh data dir and loads
     the data once into a log table of BUCKETS buckets (with pyfluss), plus for each contender a
     primary-key table of PK_ROWS rows for its lookups, loaded by its own client;
  3. measures, each run in a fresh worker process (benches/worker.py) and interleaving the
     contenders run by run (the order flips every run): full scan into a pyarrow Table, the
     loopback ceiling for the same bytes, 8k-row appends, a 1% time-range read, point lookups,
     and the peak RSS of a streaming scan (os.wait4 on the worker);
  4. writes benches/RESULTS.md and prints every ratio. Numbers are reported, never asserted;
     but every looked-up key exists, so a lookup that finds nothing is a miss: misses are
     reported per contender and make the run exit 1 (after writing RESULTS.md) unless
     --allow-lookup-misses, since a benchmark of misses measures no lookup.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
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
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
SERVER_BIN = Path(os.environ.get("BENCH_SERVER_BIN", TARGET / "release" / "riverlet-server"))
CEILING_BIN = TARGET / "bench" / "tcp_ceiling"
# the decode ceiling: core/examples/scan_throughput.rs `decode` (release)
DECODE_BIN = TARGET / "release" / "examples" / "scan_throughput"
SECTIONS = ("scan", "decode", "between", "append", "upsert", "lookup", "stream")
WORKER = HERE / "worker.py"
# numpy's OpenBLAS threads (pyarrow imports numpy) otherwise spin on the 2 cores in every worker
WORKER_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
BOOTSTRAP_RE = re.compile(r"bootstrap:\s*(\S+:\d+)")

T_START = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T_START:7.1f}s] {msg}", flush=True)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run(cmd, **kw)


# ------------------------------------------------------------------------------------------
# build
# ------------------------------------------------------------------------------------------


def build(args) -> dict:
    """Builds the server, the loopback helper and (when present) the Python binding."""
    notes: dict = {}
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET))
    if not args.no_build:
        r = sh(["cargo", "build", "--release", "-q", "-p", "riverlet-server"], cwd=REPO, env=env)
        if r.returncode != 0:
            sys.exit("cargo build --release -p riverlet-server failed")
        if "decode" in args.sections:
            r = sh(["cargo", "build", "--release", "-q", "-p", "riverlet", "--example",
                    "scan_throughput"], cwd=REPO, env=env)
            if r.returncode != 0:
                notes["decode_build"] = "cargo build --release --example scan_throughput failed"
    if not SERVER_BIN.exists():
        sys.exit(f"{SERVER_BIN} is missing (run without --no-build)")
    src = HERE / "tcp_ceiling.rs"
    if not CEILING_BIN.exists() or CEILING_BIN.stat().st_mtime < src.stat().st_mtime:
        CEILING_BIN.parent.mkdir(parents=True, exist_ok=True)
        r = sh(["rustc", "-O", "--edition", "2021", "-o", str(CEILING_BIN), str(src)])
        if r.returncode != 0:
            sys.exit("rustc benches/tcp_ceiling.rs failed")
    if "riverlet" in args.contenders and not args.no_build:
        if (REPO / "python" / "Cargo.toml").exists():
            maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or shutil.which(
                "maturin"
            )
            if maturin is None:
                notes["riverlet_build"] = "maturin not installed in the bench venv"
            else:
                venv_env = dict(env, VIRTUAL_ENV=sys.prefix)
                venv_env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
                r = sh([maturin, "develop", "--release", "-q"], cwd=REPO, env=venv_env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0:
                    tail = "\n".join(r.stdout.splitlines()[-15:])
                    log("maturin develop --release failed:\n" + tail)
                    notes["riverlet_build"] = "maturin develop --release failed"
        else:
            notes["riverlet_build"] = "no python/ binding in this checkout"
    return notes


def riverlet_available() -> tuple[bool, str]:
    code = "import riverlet, sys; riverlet.connect; print(getattr(riverlet, '__version__', '?'))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode != 0:
        return False, (r.stderr.strip().splitlines() or ["import failed"])[-1]
    return True, r.stdout.strip()


# ------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------


def generate(path: Path, rows: int) -> dict:
    """Writes the deterministic bench data to an Arrow IPC file; returns its shape."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(9)
    words = np.array(
        ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(n)))
         for n in rng.integers(6, 15, size=1000)]
    )
    base_us = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("event_time", pa.timestamp("us")),
            ("user_id", pa.int32()),
            ("amount", pa.float64()),
            ("category", pa.string()),
            ("flag", pa.bool_()),
        ]
    )
    step = 1 << 20
    nbytes = 0
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as w:
        for start in range(0, rows, step):
            n = min(step, rows - start)
            ids = np.arange(start, start + n, dtype=np.int64)
            amount = rng.normal(100.0, 30.0, size=n).round(2)
            cols = [
                pa.array(ids),
                pa.array(base_us + ids * 1000 + rng.integers(0, 1000, size=n), pa.timestamp("us")),
                pa.array(rng.integers(0, 1_000_000, size=n, dtype=np.int32)),
                pa.array(amount, mask=rng.random(n) < 0.01),
                pa.array(words).take(pa.array(rng.integers(0, len(words), size=n))),
                pa.array(rng.random(n) < 0.5),
            ]
            t = pa.Table.from_arrays(cols, schema=schema)
            for b in t.to_batches(max_chunksize=8192):
                w.write_batch(b)
                nbytes += b.nbytes
    return {"rows": rows, "arrow_bytes": nbytes, "schema": str(schema).replace("\n", ", ")}


# ------------------------------------------------------------------------------------------
# server and workers
# ------------------------------------------------------------------------------------------


class Server:
    """The embedded server, release build, `--fsync never`, on a fresh data dir."""

    def __init__(self, data_dir: Path, extra_args: tuple[str, ...] = ()):
        self.data_dir = data_dir
        self.proc = subprocess.Popen(
            [str(SERVER_BIN), "--data-dir", str(data_dir), "--port", "0", "--fsync", "never",
             *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, start_new_session=True,
        )
        self.bootstrap = None
        self.lines: list[str] = []
        found = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.lines.append(line.rstrip())
                m = BOOTSTRAP_RE.search(line)
                if m and self.bootstrap is None:
                    self.bootstrap = m.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        found.wait(60)
        if not self.bootstrap:
            self.stop()
            sys.exit("server did not print its bootstrap line:\n" + "\n".join(self.lines[-20:]))

    def peak_rss_kib(self) -> int | None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def cpu_s(self) -> float | None:
        """CPU seconds (user + system) the server process has used so far."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        # fields[0] is the state (stat field 3): utime and stime are stat fields 14 and 15
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def cpu_note(r: dict) -> str:
    """CPU seconds of the client (timed part) and of the server during one write run."""
    def f(v):
        return "n/a" if v is None else f"{v:.2f}s"
    return f"client cpu {f(r.get('timed_cpu_s'))}, server cpu {f(r.get('server_cpu_s'))}"


def cpu_delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def run_worker(spec: dict, timeout: float) -> dict:
    """Runs one measurement in a fresh process; adds its peak RSS (KiB) from os.wait4."""
    proc = subprocess.Popen(
        [sys.executable, str(WORKER)],
        env=WORKER_ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    proc.stdin.write(json.dumps(spec))
    proc.stdin.close()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    err_chunks: list[str] = []
    err_reader = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
    err_reader.start()
    out_text = proc.stdout.read()
    err_reader.join()
    err_text = "".join(err_chunks)
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    last = (out_text.strip().splitlines() or [""])[-1]
    try:
        result = json.loads(last)
    except json.JSONDecodeError:
        result = None
    if result is None:
        raise RuntimeError(
            f"worker {spec['contender']}/{spec['op']} failed (exit {proc.returncode}):\n"
            + "\n".join(err_text.strip().splitlines()[-12:])
        )
    if proc.returncode != 0:
        # the measurement finished and printed its figures; the process died afterwards
        # (seen with pyfluss at interpreter exit): keep the figures, say so
        log(f"note: worker {spec['contender']}/{spec['op']} exited with {proc.returncode} "
            "after reporting its result")
        result["exit_code"] = proc.returncode
    # VmHWM as the worker read it for itself just before exiting; wait4's ru_maxrss as fallback
    # (it may include the parent's pages shared before exec).
    result["wait4_maxrss_kib"] = usage.ru_maxrss
    result["maxrss_kib"] = result.get("vm_hwm_kib", usage.ru_maxrss)
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    return result


def run_ceiling(nbytes: int, mode: str) -> dict:
    r = subprocess.run([str(CEILING_BIN), str(nbytes), str(1 << 20), mode],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def log_bytes(data_dir: Path, table_id: int) -> int:
    """Bytes of the table's log segments: what a full scan fetches (less RPC framing)."""
    root = data_dir / "tablets" / str(table_id)
    return sum(p.stat().st_size for p in root.glob("*/log/*.log"))


# ------------------------------------------------------------------------------------------
# statistics and formatting
# ------------------------------------------------------------------------------------------


def summary(values: list[float]) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0}
    med = statistics.median(values)
    return {
        "n": len(values), "median": med, "min": min(values), "max": max(values),
        "spread_pct": (max(values) - min(values)) / med * 100 if med else 0.0,
    }


def med_of(runs: list[dict], key: str) -> str:
    """The median of `key` over the runs that have it, as seconds with 2 decimals."""
    values = [r[key] for r in runs if r.get(key) is not None]
    return f"{statistics.median(values):.2f}" if values else "n/a"


def fmt_rate(v: float | None, unit: str = "") -> str:
    if v is None:
        return "n/a"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.2f} {suf}{unit}"
    return f"{v:.1f} {unit}"


def versions(riverlet_version: str | None) -> dict:
    import importlib.metadata as md

    def ver(pkg):
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"

    def cmd(c):
        try:
            return subprocess.run(c, capture_output=True, text=True, cwd=REPO).stdout.strip()
        except OSError:
            return "?"

    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "riverlet (python)": f"{ver('riverlet')} (import reports {riverlet_version})"
        if riverlet_version else "not available",
        "riverlet-server": cmd([str(SERVER_BIN), "--version"]),
        "riverlet git commit": cmd(["git", "rev-parse", "--short", "HEAD"]),
        "pyfluss": ver("pyfluss"),
        "pyarrow": ver("pyarrow"),
        "numpy": ver("numpy"),
        "python": platform.python_version(),
        "rustc": cmd(["rustc", "--version"]),
        "kernel": platform.release(),
        "cpu": cpu,
        "cores (os.cpu_count)": str(os.cpu_count()),
        "memory": cmd(["sh", "-c", "free -g | awk '/Mem:/{print $2\" GiB\"}'"]),
    }


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=int(os.environ.get("BENCH_ROWS", 10_000_000)))
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5,
                    help="runs per contender: full scan, ceiling, time-range window")
    ap.add_argument("--append-runs", type=int, default=3)
    ap.add_argument("--append-rows", type=int, default=None,
                    help="rows per append run (default: all rows)")
    ap.add_argument("--upsert-runs", type=int, default=3)
    ap.add_argument("--upsert-rows", type=int, default=None,
                    help="rows per upsert run (default: min(rows, 1M); pyfluss upserts row by row)")
    ap.add_argument("--pk-rows", type=int, default=None,
                    help="rows of the lookup table (default: min(rows, 1M))")
    ap.add_argument("--lookup-keys", type=int, default=20_000)
    ap.add_argument("--lookup-batch", type=int, default=1000)
    ap.add_argument("--latency-keys", type=int, default=200)
    ap.add_argument("--lookup-runs", type=int, default=2)
    ap.add_argument("--allow-lookup-misses", action="store_true",
                    help="exit 0 even when lookups miss keys that exist (still reported)")
    ap.add_argument("--pyfluss-lookupers", type=int, default=128,
                    help="pyfluss Lookuper objects in flight for the batched lookups")
    ap.add_argument("--contenders", default="riverlet,pyfluss")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--work-dir", default=None, help="default: a fresh temp dir, removed at the end")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--worker-timeout", type=float, default=240)
    ap.add_argument("--stream-runs", type=int, default=2)
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help="comma-separated subset of " + ",".join(SECTIONS) + " (default: all); "
                         "scan is always measured")
    args = ap.parse_args()
    args.sections = {x.strip() for x in args.sections.split(",") if x.strip()} | {"scan"}
    args.contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    append_rows = args.append_rows or args.rows
    pk_rows = args.pk_rows or min(args.rows, 1_000_000)
    upsert_rows = args.upsert_rows or min(args.rows, 1_000_000)

    load_before = os.getloadavg()
    build_notes = build(args)
    contenders = []
    missing: dict[str, str] = {}
    riverlet_version = None
    for c in args.contenders:
        if c == "riverlet":
            ok, info = riverlet_available()
            if ok:
                riverlet_version = info
                contenders.append(c)
            else:
                missing[c] = build_notes.get("riverlet_build", "") + f" ({info})"
        else:
            contenders.append(c)
    if missing:
        log(f"contenders not available: {missing}")
    log(f"contenders: {contenders}")
    t_build = time.monotonic() - T_START

    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="riverlet-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    data_file = work / "data.arrow"
    data_dir = work / "server"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    log(f"generating {args.rows:,} rows into {data_file}")
    # generated in a child process so this parent stays small (its pages would otherwise be
    # shared into every forked worker before exec)
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--generate-only",
                        str(data_file), str(args.rows)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("data generation failed:\n" + r.stderr)
    shape = json.loads(r.stdout.strip().splitlines()[-1])
    log(f"data: {shape['arrow_bytes'] / 1e6:.1f} MB of Arrow buffers")

    server = Server(data_dir)
    log(f"server at {server.bootstrap} (release, --fsync never), data dir {data_dir}")
    results: dict = {"missing": missing, "shape": shape}
    timeout = args.worker_timeout
    base = {"bootstrap": server.bootstrap, "buckets": args.buckets, "data": str(data_file)}
    try:
        # -- one load of the shared data set ------------------------------------------------
        load = run_worker(dict(base, op="create_load", contender="pyfluss", table="bench.scan"),
                          timeout=max(timeout, 600))
        log(f"loaded {load['rows']:,} rows with pyfluss in {load['seconds']:.1f}s")
        wire = log_bytes(data_dir, load["table_id"])
        log(f"log segments of the table: {wire / 1e6:.1f} MB")
        results["load"] = load
        results["wire_bytes"] = wire
        if "lookup" in args.sections:
            # Each contender looks up a table its own client loaded: pyfluss 1.0.0 puts some
            # keys in another bucket than Fluss's Java client and Riverlet do (tests/README.md,
            # "Bugs found in peer clients"), so in a table loaded by the other client it would
            # time misses. The tables hold the same rows.
            loads = {}
            for c in contenders:
                loads[c] = run_worker(dict(base, op="create_load_pk", contender=c,
                                           table=pk_table(c), rows=pk_rows),
                                      timeout=max(timeout, 600))
                log(f"loaded the lookup table {pk_table(c)}: {loads[c]['rows']:,} rows with {c} "
                    f"in {loads[c]['seconds']:.1f}s")
            results["pk_load"] = dict(next(iter(loads.values())),
                                      loader="each contender's own client, a table each")

        def order(run: int) -> list[str]:
            return contenders if run % 2 == 0 else contenders[::-1]

        # -- 1 + 2: full scan into a pyarrow Table, interleaved with the loopback ceiling ----
        scan: dict[str, list] = {c: [] for c in contenders}
        ceiling: dict[str, list] = {"fresh": [], "reuse": []}
        for run in range(args.runs):
            for mode in ("fresh", "reuse"):
                ceiling[mode].append(run_ceiling(wire, mode))
            for c in order(run):
                r = run_worker(dict(base, op="scan", contender=c, table="bench.scan"), timeout)
                scan[c].append(r)
                if r["rows"] != args.rows:
                    results.setdefault("warnings", []).append(
                        f"scan {c} run {run} returned {r['rows']:,} rows, expected {args.rows:,}")
                log(f"scan {c} run {run}: {r['rows']:,} rows in {r['seconds']:.2f}s "
                    f"(peak RSS {r['maxrss_kib'] / 1024:.0f} MiB)")
            log("ceiling run {}: fresh {:.2f}s, reuse {:.2f}s".format(
                run, ceiling["fresh"][-1]["seconds"], ceiling["reuse"][-1]["seconds"]))
        results["scan"] = scan
        results["ceiling"] = ceiling

        # -- 2b: the decode ceiling: the same record bytes decoded from memory, all cores -----
        if "decode" in args.sections:
            if DECODE_BIN.exists():
                tablet_dir = data_dir / "tablets" / str(load["table_id"])
                r = subprocess.run([str(DECODE_BIN), "decode", server.bootstrap, "bench.scan",
                                    str(args.runs), str(tablet_dir)],
                                   capture_output=True, text=True, env=WORKER_ENV)
                if r.returncode == 0:
                    runs_out = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
                    results["decode"] = {m: [x for x in runs_out if x["mode"] == m]
                                         for m in ("keep", "drop")}
                    for m, xs in results["decode"].items():
                        log(f"decode ceiling ({m}): " + ", ".join(f"{x['seconds']:.3f}s" for x in xs)
                            + f" ({xs[0]['batches']} batches, {xs[0]['threads']} threads)")
                else:
                    results.setdefault("warnings", []).append(
                        "decode ceiling failed: " + (r.stderr.strip().splitlines() or ["?"])[-1])
            else:
                results.setdefault("warnings", []).append(
                    f"decode ceiling not measured: {DECODE_BIN} is missing")

        # -- 4: 1% time-range window vs the full scan (riverlet) -----------------------------
        # the load wrote 100 slices of 1% each, stamped before each started: the window is the
        # middle slice, [stamp 49, stamp 50)
        stamps = load["slice_ts"]
        mid = len(load["slice_rows"]) // 2 - 1
        w_start, w_end = stamps[mid], stamps[mid + 1]
        results["window"] = {"start_ms": w_start, "end_ms": w_end,
                             "span_ms": stamps[-1] - stamps[0],
                             "expected_rows": load["slice_rows"][mid], "slice": mid}
        between: dict[str, list] = {c: [] for c in contenders}
        for run in range(args.runs if "between" in args.sections else 0):
            for c in order(run):
                r = run_worker(dict(base, op="between", contender=c, table="bench.scan",
                                    start_ms=w_start, end_ms=w_end), timeout)
                between[c].append(r)
                if r["rows"] != results["window"]["expected_rows"]:
                    results.setdefault("warnings", []).append(
                        f"time-range {c} run {run} returned {r['rows']:,} rows, expected "
                        f"{results['window']['expected_rows']:,}")
                log(f"between {c} run {run}: {r['rows']:,} rows in {r['seconds']:.3f}s")
        results["between"] = between

        # -- 3: appends of 8k-row batches into a fresh table per run -------------------------
        append: dict[str, list] = {c: [] for c in contenders}
        for run in range(args.append_runs if "append" in args.sections else 0):
            for c in order(run):
                server_cpu0 = server.cpu_s()
                r = run_worker(dict(base, op="append", contender=c, table=f"bench.append_{c}_{run}",
                                    rows=append_rows), timeout)
                r["server_cpu_s"] = cpu_delta(server_cpu0, server.cpu_s())
                append[c].append(r)
                log(f"append {c} run {run}: {r['rows']:,} rows in {r['seconds']:.2f}s "
                    f"({cpu_note(r)})")
        results["append"] = append

        # -- 3b: upserts of 8k-row Arrow batches into a fresh primary-key table per run -------
        upsert: dict[str, list] = {c: [] for c in contenders}
        for run in range(args.upsert_runs if "upsert" in args.sections else 0):
            for c in order(run):
                server_cpu0 = server.cpu_s()
                r = run_worker(dict(base, op="upsert", contender=c, table=f"bench.upsert_{c}_{run}",
                                    rows=upsert_rows), max(timeout, 600))
                r["server_cpu_s"] = cpu_delta(server_cpu0, server.cpu_s())
                upsert[c].append(r)
                log(f"upsert {c} run {run}: {r['rows']:,} rows in {r['seconds']:.2f}s "
                    f"({cpu_note(r)})")
        results["upsert"] = upsert

        # -- 5: point lookups -----------------------------------------------------------------
        import random

        rnd = random.Random(9)
        keys = [rnd.randrange(pk_rows) for _ in range(args.lookup_keys)]
        lat_keys = [rnd.randrange(pk_rows) for _ in range(args.latency_keys)]
        lookup: dict[str, list] = {c: [] for c in contenders}
        for run in range(args.lookup_runs if "lookup" in args.sections else 0):
            for c in order(run):
                r = run_worker(dict(base, op="lookup", contender=c, table=pk_table(c), keys=keys,
                                    latency_keys=lat_keys, key_column="id",
                                    batch=args.lookup_batch,
                                    pyfluss_lookupers=args.pyfluss_lookupers), timeout)
                lookup[c].append(r)
                log(f"lookup {c} run {run}: {r['batched_keys'] / r['batched_seconds']:,.0f} keys/s "
                    f"batched, p50 {r['p50_ms']:.3f} ms, p99 {r['p99_ms']:.3f} ms")
                miss = lookup_misses(r)
                if miss:
                    log(f"LOOKUP MISSES {c} run {run}: {miss}")
        results["lookup"] = lookup

        # -- 6: peak RSS of a streaming scan --------------------------------------------------
        stream: dict[str, list] = {c: [] for c in contenders}
        idle: dict[str, list] = {c: [] for c in contenders}
        for run in range(args.stream_runs if "stream" in args.sections else 0):
            for c in order(run):
                r = run_worker(dict(base, op="stream", contender=c, table="bench.scan"), timeout)
                stream[c].append(r)
                if r["rows"] != args.rows:
                    results.setdefault("warnings", []).append(
                        f"stream {c} run {run} returned {r['rows']:,} rows, expected {args.rows:,}")
                log(f"stream {c} run {run}: {r['rows']:,} rows in {r['seconds']:.2f}s, "
                    f"peak RSS {r['maxrss_kib'] / 1024:.0f} MiB")
        for c in contenders if "stream" in args.sections else []:
            idle[c].append(run_worker(dict(base, op="idle", contender=c, table="bench.scan"), timeout))
        results["stream"] = stream
        results["idle"] = idle
        results["server_peak_rss_kib"] = server.peak_rss_kib()
    finally:
        server.stop()
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)

    results["elapsed_s"] = time.monotonic() - T_START
    results["generated"] = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    results["loadavg"] = {"start": load_before, "end": os.getloadavg()}
    results["build_s"] = t_build
    results["versions"] = versions(riverlet_version)
    results["args"] = {"rows": args.rows, "buckets": args.buckets, "runs": args.runs,
                       "append_runs": args.append_runs, "append_rows": append_rows,
                       "upsert_runs": args.upsert_runs, "upsert_rows": upsert_rows,
                       "pk_rows": pk_rows, "lookup_keys": args.lookup_keys,
                       "lookup_batch": args.lookup_batch, "latency_keys": args.latency_keys,
                       "lookup_runs": args.lookup_runs, "pyfluss_lookupers": args.pyfluss_lookupers}
    text, ratios = report(results, contenders)
    write_results(Path(args.out), text)
    (Path(args.out).with_suffix(".json")).write_text(json.dumps(results, indent=1, default=str))
    print()
    print("Ratios:")
    for line in ratios:
        print("  " + line)
    log(f"wrote {args.out} (total {results['elapsed_s']:.0f}s)")
    missed = {c: lookup_misses(r) for c, runs in (results.get("lookup") or {}).items()
              for r in runs if lookup_misses(r)}
    if missed:
        for c, m in missed.items():
            log(f"LOOKUP MISSES {c}: {m}: its lookup figures time misses, not lookups")
        if not args.allow_lookup_misses:
            sys.exit(1)


def pk_table(contender: str) -> str:
    """The primary-key table a contender's lookups read: one its own client loaded."""
    return f"bench.pk_{contender}"


def lookup_misses(r: dict) -> str:
    """'' when a lookup run found every key (all exist), else what it missed. Runs recorded
    before hits were counted have no `found` and pass."""
    out = []
    if "found" in r and r["found"] != r["batched_keys"]:
        out.append(f"batched found {r['found']:,} of {r['batched_keys']:,} keys")
    if "latency_found" in r and r["latency_found"] != r["latency_n"]:
        out.append(f"single lookups found {r['latency_found']:,} of {r['latency_n']:,}")
    return ", ".join(out)


def report(res: dict, contenders: list[str]) -> tuple[str, list[str]]:
    """RESULTS.md text, and the ratio lines also printed to stdout."""
    a = res["args"]
    arrow_bytes = res["shape"]["arrow_bytes"]
    wire = res["wire_bytes"]
    rows = a["rows"]
    ratios: list[str] = []
    md: list[str] = []
    p = md.append
    p("# Riverlet benchmark results")
    p("")
    p(f"Generated by `make bench` (benches/run.py) on {res.get('generated', '?')}; "
      f"whole run {res['elapsed_s']:.0f} s (of which build check {res['build_s']:.0f} s). "
      "Numbers are measurements of this run on this machine, never test assertions.")
    p("")
    p(f"- Machine: {res['versions']['cores (os.cpu_count)']} cores ({res['versions']['cpu']}), "
      f"{res['versions']['memory']}, Linux {res['versions']['kernel']}.")
    la = res.get("loadavg")
    if la:
        p(f"- Load average (1/5/15 min) at start {la['start'][0]:.2f}/{la['start'][1]:.2f}/{la['start'][2]:.2f}, "
          f"at end {la['end'][0]:.2f}/{la['end'][1]:.2f}/{la['end'][2]:.2f}: anything above ~0 means other "
          "processes shared the cores during the run and widened the spreads.")
    p("- Server: `riverlet-server` release build, **`--fsync never`** (no fsync on the write path), "
      "on loopback, same machine as the clients (they share the 2 cores).")
    p(f"- Data: {rows:,} rows, 6 columns ({res['shape']['schema']}), {res['args']['buckets']} buckets, "
      f"{arrow_bytes / 1e6:.1f} MB of Arrow buffers, {wire / 1e6:.1f} MB of log segments on the server. "
      f"Loaded once by pyfluss in {res['load']['seconds']:.1f} s (100 acknowledged slices, see section 4).")
    p("- Every run is a fresh worker process; contenders alternate run by run (order flips each run). "
      "Medians with min–max and spread = (max−min)/median. MB = 10^6 bytes; MB/s counts the Arrow "
      "bytes of the result, 'wire MB/s' the log-segment bytes fetched.")
    for w in res.get("warnings", []):
        p(f"- **Warning**: {w}")
    if res["missing"]:
        for c, why in res["missing"].items():
            p(f"- **{c} not measured**: {why}")
    p("")
    p("## Versions")
    p("")
    p("| component | version |")
    p("| --- | --- |")
    for k, v in res["versions"].items():
        p(f"| {k} | {v} |")
    p("")

    def med(runs, key="seconds"):
        return summary([r[key] for r in runs]) if runs else {"n": 0}

    # 1 + 2
    p("## 1. Full scan into a pyarrow Table, and 2. the loopback ceiling")
    p("")
    p("| contender | median s | min–max s | spread | rows/s | MB/s (Arrow) | wire MB/s | share of ceiling (fresh / reuse) | peak RSS MiB |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ceil = {m: summary([r["seconds"] for r in res["ceiling"][m]]) for m in ("fresh", "reuse")}
    ceil_rate = {m: wire / ceil[m]["median"] for m in ceil}
    scan_med = {}
    for c in contenders:
        s = med(res["scan"][c])
        scan_med[c] = s["median"]
        rss = statistics.median(r["maxrss_kib"] for r in res["scan"][c]) / 1024
        share = f"{wire / s['median'] / ceil_rate['fresh'] * 100:.0f}% / {wire / s['median'] / ceil_rate['reuse'] * 100:.0f}%"
        p(f"| {c} | {s['median']:.3f} | {s['min']:.3f}–{s['max']:.3f} | {s['spread_pct']:.0f}% | "
          f"{fmt_rate(rows / s['median'])} | {arrow_bytes / s['median'] / 1e6:.0f} | "
          f"{wire / s['median'] / 1e6:.0f} | {share} | {rss:.0f} |")
        ratios.append(f"scan {c}: {fmt_rate(rows / s['median'], 'rows/s')}, "
                      f"{arrow_bytes / s['median'] / 1e6:.0f} MB/s; share of loopback ceiling "
                      f"{wire / s['median'] / ceil_rate['fresh'] * 100:.0f}% (into fresh memory), "
                      f"{wire / s['median'] / ceil_rate['reuse'] * 100:.0f}% (reused buffer)")
    for m, label in (("fresh", "ceiling: loopback TCP into fresh memory"),
                     ("reuse", "ceiling: loopback TCP into a reused 1 MiB buffer")):
        s = ceil[m]
        p(f"| {label} | {s['median']:.3f} | {s['min']:.3f}–{s['max']:.3f} | {s['spread_pct']:.0f}% | – | – | "
          f"{wire / s['median'] / 1e6:.0f} | 100% | – |")
    dec = res.get("decode") or {}
    dec_med = {m: summary([r["seconds"] for r in dec[m]]) for m in ("keep", "drop") if dec.get(m)}
    for m, label in (("keep", "ceiling: decode from memory, all cores, keeping the batches"),
                     ("drop", "ceiling: decode from memory, all cores, dropping each batch")):
        if m in dec_med:
            s = dec_med[m]
            p(f"| {label} | {s['median']:.3f} | {s['min']:.3f}–{s['max']:.3f} | {s['spread_pct']:.0f}% | "
              f"{fmt_rate(rows / s['median'])} | {arrow_bytes / s['median'] / 1e6:.0f} | "
              f"{wire / s['median'] / 1e6:.0f} | – | – |")
    p("")
    if "riverlet" in scan_med and "pyfluss" in scan_med:
        r = scan_med["pyfluss"] / scan_med["riverlet"]
        line = f"scan speed riverlet / pyfluss: {r:.2f}x"
        ratios.insert(0, line)
        p(f"**Ratio:** {line}.")
        p("")
    # Issue 34, item 1: a read into a table should hold little beyond the Arrow bytes it returns.
    # The process's own idle RSS (interpreter, pyarrow, the extension; section 6's 'idle' run)
    # is shown apart, since no scan can shrink it.
    rss_notes = []
    for c in contenders:
        if not res["scan"][c]:
            continue
        peak = statistics.median(r["maxrss_kib"] for r in res["scan"][c]) * 1024
        idle_runs = (res.get("idle") or {}).get(c) or []
        note = f"{c} {peak / arrow_bytes:.2f}x"
        if idle_runs:
            idle_b = idle_runs[0]["maxrss_kib"] * 1024
            note += (f" ({(peak - idle_b) / arrow_bytes:.2f}x above its idle process of "
                     f"{idle_b / 2**20:.0f} MiB)")
        rss_notes.append(note)
    if rss_notes:
        line = "full-scan peak RSS / Arrow bytes returned: " + ", ".join(rss_notes)
        ratios.append(line)
        p(f"**Memory:** {line}.")
        p("")
    p("The ceiling program (benches/tcp_ceiling.rs, std only, `rustc -O`) pushes exactly the "
      f"{wire / 1e6:.1f} MB of the table's log segments from one thread to another over 127.0.0.1 "
      "in 1 MiB writes, no framing and no decoding; 'fresh' receives into one newly mapped buffer "
      "of that size (so it pays the page faults a client pays to hold its result), 'reuse' into "
      "one 1 MiB buffer (the socket alone).")
    p("")
    if "keep" in dec_med:
        d = dec["keep"][0]
        p("**The decode ceiling** (`scan_throughput decode`, core/examples/scan_throughput.rs, "
          "release): the table's log segments, read from the server's data dir into memory once "
          f"({d['batches']:,} log batches, {d['wire_bytes'] / 1e6:.1f} MB: the record bytes a full "
          "scan fetches), checked and decoded (CRC-32C, ZSTD, Arrow IPC) by Riverlet's record "
          f"decoder on {d['threads']} threads with no network; 'keeping' holds every batch to the "
          "end of the run (the work of a read into a table, page faults included), 'dropping' "
          "frees each (the work of a streaming read). Share of the decode ceiling = ceiling time "
          "/ contender time: the full scan against 'keeping', the streaming scan (section 6) "
          "against 'dropping'.")
        p("")
        p("| contender | full scan s | share of decode ceiling (keep) | streaming s | share of decode ceiling (drop) |")
        p("| --- | --- | --- | --- | --- |")
        for c in contenders:
            fs = med(res["scan"][c])["median"]
            st_runs = (res.get("stream") or {}).get(c) or []
            st = med(st_runs)["median"] if st_runs else None
            keep_share = dec_med["keep"]["median"] / fs * 100
            drop_share = (dec_med["drop"]["median"] / st * 100) if st and "drop" in dec_med else None
            p(f"| {c} | {fs:.3f} | {keep_share:.0f}% | {f'{st:.3f}' if st else 'n/a'} | "
              f"{f'{drop_share:.0f}%' if drop_share is not None else 'n/a'} |")
            line = f"scan {c}: {keep_share:.0f}% of the decode ceiling (full scan)"
            if drop_share is not None:
                line += f", {drop_share:.0f}% (streaming)"
            ratios.append(line)
        p("")

    # 3
    p("## 3. Append, 8192-row Arrow batches, into a fresh table per run")
    p("")
    p("CPU: seconds of CPU (user + system, all threads) of the client worker during the timed "
      "write and of the server process during the whole worker run (table creation and drop "
      "included), medians over the runs; on 2 cores the wall time cannot be below "
      "(client + server CPU) / 2.")
    p("")
    p("| contender | rows | median s | min–max s | spread | rows/s | MB/s (Arrow) | client CPU s | server CPU s |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    app_rate = {}
    for c in contenders:
        runs = (res.get("append") or {}).get(c) or []
        if not runs:
            continue
        s = med(runs)
        n = runs[0]["rows"]
        app_rate[c] = n / s["median"]
        p(f"| {c} | {n:,} | {s['median']:.3f} | {s['min']:.3f}–{s['max']:.3f} | {s['spread_pct']:.0f}% | "
          f"{fmt_rate(n / s['median'])} | {arrow_bytes * n / rows / s['median'] / 1e6:.0f} | "
          f"{med_of(runs, 'timed_cpu_s')} | {med_of(runs, 'server_cpu_s')} |")
        ratios.append(f"append {c}: {fmt_rate(n / s['median'], 'rows/s')}")
    if "riverlet" in app_rate and "pyfluss" in app_rate:
        line = f"append speed riverlet / pyfluss: {app_rate['riverlet'] / app_rate['pyfluss']:.2f}x"
        ratios.insert(1, line)
        p("")
        p(f"**Ratio:** {line}.")
    p("")

    # 3b
    if res.get("upsert"):
        p("## 3b. Upsert into a primary-key table (key `id`), into a fresh table per run")
        p("")
        p("Riverlet: `Table.upsert` of 8192-row Arrow batches. pyfluss: `UpsertWriter.upsert(row)` "
          "for every row (its only upsert API; rows from `RecordBatch.to_pylist()`, not timed "
          "separately). Every key is new, so each run inserts all rows.")
        p("")
        p("| contender | rows | median s | min–max s | spread | rows/s | client CPU s | server CPU s |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- |")
        up_rate = {}
        for c in contenders:
            runs = res["upsert"].get(c) or []
            if not runs:
                continue
            s = med(runs)
            n = runs[0]["rows"]
            up_rate[c] = n / s["median"]
            p(f"| {c} | {n:,} | {s['median']:.3f} | {s['min']:.3f}–{s['max']:.3f} | "
              f"{s['spread_pct']:.0f}% | {fmt_rate(n / s['median'])} | "
              f"{med_of(runs, 'timed_cpu_s')} | {med_of(runs, 'server_cpu_s')} |")
            ratios.append(f"upsert {c}: {fmt_rate(n / s['median'], 'rows/s')}")
        if "riverlet" in up_rate and "pyfluss" in up_rate:
            line = f"upsert speed riverlet / pyfluss: {up_rate['riverlet'] / up_rate['pyfluss']:.2f}x"
            ratios.insert(2, line)
            p("")
            p(f"**Ratio:** {line}.")
        p("")

    # 4
    p("## 4. Time-range read of a 1% window vs a full scan")
    p("")
    w = res["window"]
    p("The load wrote the data in 100 slices of 1% each, every slice acknowledged before the next "
      "began and stamped with the wall-clock ms just before it began; the server's commit timestamps "
      f"of a slice lie between its stamp and the next. Window: [{w['start_ms']}, {w['end_ms']}) ms = "
      f"slice {w['slice']}, {w['expected_rows']:,} rows expected, of a {w['span_ms']} ms load.")
    p("")
    p("| contender | read | rows | median s | min–max s | spread | full scan / window |")
    p("| --- | --- | --- | --- | --- | --- | --- |")
    win = {}
    for c in contenders:
        runs = (res.get("between") or {}).get(c) or []
        if not runs or c not in scan_med:
            continue
        s = med(runs)
        got = runs[0]["rows"]
        win[c] = s["median"]
        how = ("`read_between(start, end)`" if c == "riverlet" else
               "by hand: list_offsets by timestamp, subscribe, poll to the end offsets")
        fs = med(res["scan"][c])
        p(f"| {c} | 1% window, {how} | {got:,} ({got / rows * 100:.2f}% of rows) | {s['median']:.4f} | "
          f"{s['min']:.4f}–{s['max']:.4f} | {s['spread_pct']:.0f}% | {fs['median'] / s['median']:.0f}x |")
        p(f"| {c} | full scan (section 1) | {rows:,} | {fs['median']:.4f} | {fs['min']:.4f}–{fs['max']:.4f} | "
          f"{fs['spread_pct']:.0f}% | 1x |")
        line = (f"time-range 1% window vs full scan ({c}): the window takes "
                f"{s['median'] / scan_med[c] * 100:.2f}% of the full-scan time "
                f"({scan_med[c] / s['median']:.0f}x faster) for {got / rows * 100:.2f}% of the rows")
        ratios.append(line)
    p("")
    if "riverlet" in win and "pyfluss" in win:
        line = f"time-range window riverlet / pyfluss (hand-written) speed: {win['pyfluss'] / win['riverlet']:.2f}x"
        ratios.append(line)
        p(f"**Ratio:** {line}.")
    if "riverlet" not in win:
        p("Riverlet's `read_between` was not measured (Riverlet contender unavailable).")
        ratios.append("time-range 1% window (riverlet): not measured (riverlet unavailable)")
    p("")

    # 5
    if res.get("pk_load"):
        lookup_section(res, contenders, p, ratios)
    stream_section(res, contenders, p, ratios)
    notes = HERE / "PROFILE.md"
    if notes.exists():
        p(notes.read_text().strip())
        p("")
    p("## All ratios")
    p("")
    for line in ratios:
        p(f"- {line}")
    p("")
    p("Raw per-run figures: benches/RESULTS.json (written next to this file).")
    return "\n".join(md) + "\n", ratios


def lookup_section(res: dict, contenders: list[str], p, ratios: list[str]) -> None:
    a = res["args"]
    p("## 5. Point lookups")
    p("")
    p(f"Primary-key table of {res['pk_load']['rows']:,} rows (the first rows of the data, key `id`, "
      f"{a['buckets']} buckets; loaded by {res['pk_load']['loader']}). Batched: {a['lookup_keys']:,} "
      f"random keys in groups of {a['lookup_batch']} (pyfluss: the group spread over "
      f"{a['pyfluss_lookupers']} Lookuper objects in flight through asyncio.gather, since one pyfluss "
      "Lookuper holds a lock across each call and its queue waits up to 100 ms for a batch to fill; "
      "Riverlet: one `lookup_many` call per group). Latency: "
      f"{a['latency_keys']:,} single lookups one after another.")
    p("")
    p("| contender | batched keys/s (median) | min–max | p50 ms | p99 ms | misses |")
    p("| --- | --- | --- | --- | --- | --- |")
    lk = {}
    missed = {}
    for c in contenders:
        runs = (res.get("lookup") or {}).get(c) or []
        if not runs:
            continue
        rate = summary([r["batched_keys"] / r["batched_seconds"] for r in runs])
        p50 = statistics.median(r["p50_ms"] for r in runs)
        p99 = statistics.median(r["p99_ms"] for r in runs)
        lk[c] = (rate["median"], p50, p99)
        miss = "; ".join(dict.fromkeys(m for m in (lookup_misses(r) for r in runs) if m))
        if miss:
            missed[c] = miss
        p(f"| {c} | {fmt_rate(rate['median'])} | {fmt_rate(rate['min'])}–{fmt_rate(rate['max'])} | "
          f"{p50:.3f} | {p99:.3f} | {miss or 'none'} |")
        ratios.append(f"lookup {c}: {fmt_rate(rate['median'], 'keys/s')} batched, p50 {p50:.3f} ms, p99 {p99:.3f} ms")
    for c, miss in missed.items():
        p("")
        p(f"**{c}'s lookups missed keys that exist ({miss}): its figures time misses, not "
          "lookups, and no ratio is given.**")
        ratios.append(f"lookup {c}: MISSED keys ({miss})")
    if "riverlet" in lk and "pyfluss" in lk and not missed:
        line = (f"lookup riverlet / pyfluss: batched throughput {lk['riverlet'][0] / lk['pyfluss'][0]:.2f}x, "
                f"p50 latency {lk['riverlet'][1] / lk['pyfluss'][1]:.4f}x ({lk['pyfluss'][1] / lk['riverlet'][1]:.0f}x lower), "
                f"p99 latency {lk['riverlet'][2] / lk['pyfluss'][2]:.4f}x ({lk['pyfluss'][2] / lk['riverlet'][2]:.0f}x lower)")
        ratios.insert(2, line)
        p("")
        p(f"**Ratio:** {line} (latency: lower is better).")
    p("")


def stream_section(res: dict, contenders: list[str], p, ratios: list[str]) -> None:
    if not res.get("stream") or not any(res["stream"].values()):
        return
    a = res["args"]
    rows = a["rows"]
    arrow_bytes = res["shape"]["arrow_bytes"]

    def med(runs, key="seconds"):
        return summary([r[key] for r in runs]) if runs else {"n": 0}

    p("## 6. Peak RSS of a streaming scan of the whole table")
    p("")
    p("Peak resident set (VmHWM from /proc, read by the worker itself at its end) of the worker process that iterates the whole table "
      "as a RecordBatchReader and drops each batch (Riverlet `t.scan()`, pyfluss "
      "`to_arrow_batch_reader()`); 'idle' is the same process that only imports, connects and opens "
      f"the table. The table is {arrow_bytes / 1e6:.0f} MB of Arrow data.")
    p("")
    p("| contender | peak RSS MiB (median) | idle RSS MiB | streaming s | rows/s |")
    p("| --- | --- | --- | --- | --- |")
    rss = {}
    for c in contenders:
        runs = res["stream"].get(c) or []
        if not runs:
            continue
        peak = statistics.median(r["maxrss_kib"] for r in runs) / 1024
        idle = res["idle"][c][0]["maxrss_kib"] / 1024
        s = med(runs)
        rss[c] = peak
        p(f"| {c} | {peak:.0f} | {idle:.0f} | {s['median']:.3f} | {fmt_rate(rows / s['median'])} |")
        ratios.append(f"streaming scan {c}: peak RSS {peak:.0f} MiB (idle {idle:.0f} MiB), "
                      f"{fmt_rate(rows / s['median'], 'rows/s')}")
    if "riverlet" in rss and "pyfluss" in rss:
        line = f"streaming peak RSS riverlet / pyfluss: {rss['riverlet'] / rss['pyfluss']:.2f}x"
        ratios.insert(3, line)
        p("")
        p(f"**Ratio:** {line} (lower is better).")
    if res.get("server_peak_rss_kib"):
        p("")
        p(f"Server peak RSS over the whole run: {res['server_peak_rss_kib'] / 1024:.0f} MiB.")
    p("")


KEPT_SECTIONS = [("<!-- jvm-boundary", "<!-- /jvm-boundary -->"),
                 ("<!-- server-vs-fluss", "<!-- /server-vs-fluss -->"),
                 ("<!-- spark-connector", "<!-- /spark-connector -->"),
                 ("<!-- flink-connector", "<!-- /flink-connector -->"),
                 ("<!-- flight-sql", "<!-- /flight-sql -->"),
                 ("<!-- scale", "<!-- /scale -->"),
                 ("<!-- curves", "<!-- /curves -->")]


def write_results(out: Path, text: str) -> None:
    """Writes RESULTS.md, keeping the sections other runners own (benches/jvm, server_vs_fluss.py, benches/spark,
    benches/flink, benches/flight, benches/scale.py, benches/curves.py)."""
    old = out.read_text() if out.exists() else ""
    for start, end in KEPT_SECTIONS:
        if start in old and end in old:
            kept = start + old.split(start, 1)[1].split(end, 1)[0] + end
            text = text.rstrip("\n") + "\n\n" + kept + "\n"
    out.write_text(text)


def report_only(json_path: Path, out: Path) -> None:
    """Rewrites RESULTS.md from a RESULTS.json (e.g. after editing PROFILE.md); no measuring."""
    res = json.loads(json_path.read_text())
    contenders = [c for c in ("riverlet", "pyfluss") if c in res["scan"]]
    text, ratios = report(res, contenders)
    write_results(out, text)
    for line in ratios:
        print("  " + line)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--report-only":
        report_only(Path(sys.argv[2]), Path(sys.argv[2]).with_suffix(".md"))
    elif len(sys.argv) == 4 and sys.argv[1] == "--generate-only":
        print(json.dumps(generate(Path(sys.argv[2]), int(sys.argv[3]))))
    else:
        main()
