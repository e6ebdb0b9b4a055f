#!/usr/bin/env python3
"""How cost grows, drawn (issue 34, item 4): Riverlet's Python binding and pyfluss measured over
sweeps of one size at a time, plotted, and the shape of every curve named from its figures.

    make bench-curves                                     # every sweep; prints its estimate first
    .venv-bench/bin/python benches/curves.py --quick      # smoke test: small sizes, 1 run a point
    .venv-bench/bin/python benches/curves.py --sweeps rows,lookup --no-build

The sweeps (default points; `--points SWEEP=a,b,...` replaces them, `k`/`M` suffixes allowed):
  rows     full scan into a pyarrow Table and append of 8192-row batches, against rows
           (1M..50M, 4 buckets; points above --single-run-above get one run per contender);
  buckets  the same two against buckets (1..64) at --buckets-rows rows;
  columns  the same two against columns (2..200) at --columns-rows rows: the id column, then
           the other 5 columns of benches/run.py's data repeated under new names (each column's
           buffers are compressed on their own, so a repeat does not compress better);
  window   a time-range read against the window's width (0.1%..100% of --window-rows rows,
           loaded in 1000 acknowledged slices as benches/run.py loads its 100): Riverlet's
           `read_between`, pyfluss's hand-written equivalent (benches/worker.py `between`);
  lookup   single-key lookup latency, p50 and p99 of --latency-keys lookups one after another,
           against the primary-key table's size (10k..10M keys);
  rss      the embedded server's resident memory (VmRSS, and VmHWM reset through
           /proc/PID/clear_refs before each step) as one table grows to 50M rows: after each
           append, peak during it, and peak during a full scan of the grown table. One fresh
           server per contender, the contender doing the appends and scans.
Every measurement is a fresh benches/worker.py process (benches/run.py's run_worker), the
contenders alternating run by run; a point's figure is the median of its runs. The tables the
scans and reads use are loaded once per point by pyfluss, as benches/run.py loads its table;
each contender looks up a primary-key table its own client upserted (each finds only about a
quarter of the keys the other client upserted, see lookup_sweep).

Written: one PNG per sweep and the raw figures (curves.json) into --out-dir (default
benches/curves/), and a section between `<!-- curves:` markers in --out (default
benches/RESULTS.md; benches/run.py keeps it). `--quick` writes into a temporary directory
unless --out-dir/--out say otherwise, so a smoke test never replaces the recorded figures.
Each curve's shape is computed: a least-squares slope in log-log space (~1 linear, ~0 flat),
the best two-segment fit (where the slope changes), and a fit of fixed + per-unit cost. The
"why" of a curve comes from benches/curves/WHY.md when it has an entry (`- \\`rows/scan_s\\`: ...`),
else from the data when a fixed cost explains a bend, else a marked placeholder.
Numbers are reported, never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import bench_support  # noqa: E402
import run as bench  # noqa: E402  (benches/run.py: data generator, server, workers, versions)

MARK_START = "<!-- curves: written by benches/curves.py -->"
MARK_END = "<!-- /curves -->"
OUT_DIR = HERE / "curves"
WHY_FILE = OUT_DIR / "WHY.md"
CONTENDERS = ("riverlet", "pyfluss")
LABEL = {"riverlet": "Riverlet (Python)", "pyfluss": "pyfluss"}
SWEEPS = ("rows", "buckets", "columns", "window", "lookup", "rss")

FULL_POINTS = {
    "rows": [1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000],
    "buckets": [1, 2, 4, 8, 16, 32, 64],
    "columns": [2, 6, 20, 60, 200],
    "window": [0.1, 0.3, 1, 3, 10, 30, 100],
    "lookup": [10_000, 100_000, 1_000_000, 10_000_000],
    "rss": [1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000],
}
QUICK_POINTS = {
    "rows": [100_000, 300_000, 1_000_000],
    "buckets": [1, 4, 16],
    "columns": [2, 20, 200],
    "window": [0.1, 1, 10, 100],
    "lookup": [10_000, 100_000],
    "rss": [100_000, 300_000, 1_000_000],
}

# What each sweep measures: (metric key, what it is, unit of the figure).
METRICS = {
    "rows": [("scan_s", "full scan into a Table", "s"), ("append_s", "append", "s")],
    "buckets": [("scan_s", "full scan into a Table", "s"), ("append_s", "append", "s")],
    "columns": [("scan_s", "full scan into a Table", "s"), ("append_s", "append", "s")],
    "window": [("read_s", "time-range read", "s")],
    "lookup": [("p50_ms", "lookup latency p50", "ms"), ("p99_ms", "lookup latency p99", "ms")],
    "rss": [("steady_mib", "server RSS after the append", "MiB"),
            ("append_peak_mib", "server peak RSS during the append", "MiB"),
            ("scan_peak_mib", "server peak RSS during a full scan", "MiB")],
}
# The x of each sweep: (column heading, unit word of a per-unit cost, scale of that unit).
X_AXIS = {
    "rows": ("rows", "M rows", 1e6),
    "buckets": ("buckets", "bucket", 1),
    "columns": ("columns", "column", 1),
    "window": ("window, % of the table", "% of the table", 1),
    "lookup": ("keys in the table", "M keys", 1e6),
    "rss": ("rows stored", "M rows", 1e6),
}
# Log axes where the sweep spans decades; RSS stays linear in y (a flat line is the question).
LOG_Y = {"rows": True, "buckets": True, "columns": True, "window": True, "lookup": True,
         "rss": False}

# The cost model of the estimate printed before measuring. Rates of the quiet 2-core `make bench`
# recorded in RESULTS.md (2026-12-05, 10M rows): rows/s of a full scan and of an append, of
# pyfluss's sliced load, of each client's upsert load; a single lookup's time; a fresh worker's
# start-up (imports, connect, opening the table) and the data generator's rows/s.
RATE = {("scan", "riverlet"): 17.9e6, ("scan", "pyfluss"): 9.7e6,
        ("append", "riverlet"): 7.7e6, ("append", "pyfluss"): 4.8e6}
LOAD_RATE = 3.6e6
PK_LOAD_RATE = {"riverlet": 0.5e6, "pyfluss": 0.26e6}
LOOKUP_S = {"riverlet": 0.0005, "pyfluss": 0.102}
BATCHED_RATE = {"riverlet": 125e3, "pyfluss": 5.9e3}
WORKER_S = 0.6  # seen 0.2-0.5 s on 2 busy cores
SLICE_S = 0.05  # one acknowledged slice of pyfluss's sliced load (seen 50 ms on 2 busy cores)
GENERATE_RATE = 2e6
SERVER_S = 2.0
BASE_COLUMNS = 6  # benches/run.py's data: id + 5 columns

T_START = time.monotonic()


def log(msg: str) -> None:
    bench.log(msg)


def parse_count(text: str) -> float:
    """`1M`, `300k`, `0.1`, `64` -> a number; SystemExit naming the text otherwise."""
    t = text.strip()
    mult = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6}.get(t[-1:], 1)
    try:
        v = float(t[:-1] if mult != 1 else t) * mult
    except ValueError:
        sys.exit(f"not a number: {text!r}")
    if v <= 0:
        sys.exit(f"a point must be positive: {text!r}")
    return int(v) if v == int(v) else v


def fmt_x(v: float) -> str:
    """1000000 -> 1M, 300000 -> 300k, 3.84e6 -> 3.84M, 0.1 -> 0.1."""
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


def key(x: float) -> str:
    return repr(x)


# ------------------------------------------------------------------------------------------
# the plan and its estimate
# ------------------------------------------------------------------------------------------


def make_plan(args) -> dict:
    points = dict(QUICK_POINTS if args.quick else FULL_POINTS)
    for spec in args.points:
        name, _, values = spec.partition("=")
        if name not in SWEEPS or not values:
            sys.exit(f"--points {spec!r}: expected SWEEP=a,b,... with SWEEP one of {', '.join(SWEEPS)}")
        points[name] = sorted(parse_count(v) for v in values.split(","))
    if any(w > 100 for w in points["window"]):
        sys.exit(f"--points window: widths are % of the table, at most 100: {points['window']}")
    if any(c < 2 for c in points["columns"]):
        sys.exit(f"--points columns: at least 2 columns (id and one more): {points['columns']}")
    q = args.quick
    plan = {
        "sweeps": [s for s in SWEEPS if s in args.sweeps],
        "points": {s: points[s] for s in SWEEPS if s in args.sweeps},
        "runs": args.runs or (1 if q else 3),
        "single_run_above": args.single_run_above,
        "buckets": args.buckets,
        "buckets_rows": args.buckets_rows or (200_000 if q else 5_000_000),
        "columns_rows": args.columns_rows or (20_000 if q else 500_000),
        "window_rows": args.window_rows or (1_000_000 if q else 10_000_000),
        "window_slices": 1000,
        "lookup_runs": args.lookup_runs or (1 if q else 2),
        "latency_keys": args.latency_keys or (50 if q else 200),
        "batched_keys": 1000,
        "lookup_batch": 1000,
        "pyfluss_lookupers": 128,
    }
    return plan


def runs_at(plan: dict, sweep: str, x: float) -> int:
    if sweep == "rows" and x > plan["single_run_above"]:
        return 1
    return plan["runs"]


def base_rows(plan: dict) -> int:
    """Rows of the one generated data file every sweep takes a prefix of."""
    need = [1]
    p = plan["points"]
    for s in ("rows", "rss", "lookup"):
        if s in p:
            need.append(int(max(p[s])))
    if "buckets" in p:
        need.append(plan["buckets_rows"])
    if "columns" in p:
        need.append(plan["columns_rows"])
    if "window" in p:
        need.append(plan["window_rows"])
    return max(need)


def estimate(plan: dict, contenders: list[str]) -> dict[str, float]:
    """Seconds each part of the run should take on a quiet 2-core machine (the RATE figures)."""
    est = {"generate": base_rows(plan) / GENERATE_RATE}
    p = plan["points"]

    def scan_append(rows_bytes: float, runs: int) -> float:
        t = rows_bytes / LOAD_RATE + WORKER_S
        for c in contenders:
            t += runs * (rows_bytes / RATE["scan", c] + rows_bytes / RATE["append", c] + 2 * WORKER_S)
        return t

    if "rows" in p:
        est["rows"] = SERVER_S + sum(scan_append(n, runs_at(plan, "rows", n)) for n in p["rows"])
    if "buckets" in p:
        est["buckets"] = SERVER_S + len(p["buckets"]) * scan_append(plan["buckets_rows"], plan["runs"])
    if "columns" in p:
        # the cost follows the bytes: a column holds a sixth of a base row's bytes on average
        est["columns"] = SERVER_S + sum(
            scan_append(plan["columns_rows"] * c / BASE_COLUMNS, plan["runs"]) + WORKER_S
            for c in p["columns"])
    if "window" in p:
        n = plan["window_rows"]
        est["window"] = SERVER_S + n / LOAD_RATE + plan["window_slices"] * SLICE_S + sum(
            plan["runs"] * (WORKER_S + n * w / 100 / RATE["scan", c])
            for w in p["window"] for c in contenders)
    if "lookup" in p:
        est["lookup"] = SERVER_S + sum(
            n / PK_LOAD_RATE[c] + WORKER_S for n in p["lookup"] for c in contenders) + sum(
            plan["lookup_runs"] * (WORKER_S + plan["latency_keys"] * LOOKUP_S[c]
                                   + plan["batched_keys"] / BATCHED_RATE[c])
            for _ in p["lookup"] for c in contenders)
    if "rss" in p:
        top = max(p["rss"])
        est["rss"] = sum(
            SERVER_S + top / RATE["append", c] + sum(n / RATE["scan", c] for n in p["rss"])
            + len(p["rss"]) * (2 * WORKER_S + 2)
            for c in contenders)
    return est


# ------------------------------------------------------------------------------------------
# measuring
# ------------------------------------------------------------------------------------------


def proc_status_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (KiB) of a process, from /proc/PID/status."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(rest.split()[0])
    return out


def reset_peak(pid: int) -> bool:
    """Resets the process's VmHWM to its current RSS (Linux >= 4.0); False when refused."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


class Run:
    """One measuring run: the plan, the data files, the figures gathered so far."""

    def __init__(self, plan: dict, contenders: list[str], work: Path, timeout: float):
        self.plan = plan
        self.contenders = contenders
        self.work = work
        self.timeout = timeout
        self.data = work / "data.arrow"
        self.res: dict = {"sweeps": {}, "warnings": []}

    def warn(self, text: str) -> None:
        log("warning: " + text)
        self.res["warnings"].append(text)

    def order(self, run: int) -> list[str]:
        """The contenders, the order flipped every other run."""
        return self.contenders if run % 2 == 0 else self.contenders[::-1]

    def worker(self, spec: dict) -> dict | None:
        """One measurement in a fresh worker; a failure is recorded and the sweep goes on."""
        try:
            return bench.run_worker(spec, self.timeout)
        except RuntimeError as e:
            self.warn(str(e).splitlines()[0] + ": " + " | ".join(str(e).splitlines()[-3:]))
            return None

    def sweep(self, name: str, fixed: dict) -> dict:
        s = {"points": self.plan["points"][name], "fixed": fixed,
             "values": {m: {c: {} for c in self.contenders} for m, _, _ in METRICS[name]},
             "extra": {}}
        self.res["sweeps"][name] = s
        return s

    @staticmethod
    def record(s: dict, metric: str, c: str, x: float, value: float) -> None:
        s["values"][metric][c].setdefault(key(x), []).append(value)

    def server(self, name: str) -> bench.Server:
        d = self.work / name
        shutil.rmtree(d, ignore_errors=True)
        srv = bench.Server(d)
        log(f"{name}: server at {srv.bootstrap}")
        return srv

    @staticmethod
    def stop(srv: bench.Server) -> None:
        srv.stop()
        shutil.rmtree(srv.data_dir, ignore_errors=True)

    def load(self, srv: bench.Server, table: str, data: Path, rows: int, buckets: int) -> bool:
        """The table the scans read: pyfluss appends it once and keeps it (as run.py loads)."""
        r = self.worker({"op": "append", "contender": "pyfluss", "bootstrap": srv.bootstrap,
                         "table": table, "data": str(data), "rows": rows, "buckets": buckets,
                         "keep": True})
        if r is not None:
            log(f"  loaded {table}: {r['rows']:,} rows in {r['seconds']:.2f}s")
        return r is not None

    def reads(self, s: dict, metric: str, x: float, runs: int, spec: dict, expected: int,
              what: str) -> None:
        """`runs` runs of the read `spec` by every contender, each checked for `expected` rows."""
        for run in range(runs):
            for c in self.order(run):
                r = self.worker(dict(spec, contender=c))
                if r is None:
                    continue
                if r["rows"] != expected:
                    self.warn(f"{what} {c} run {run}: {r['rows']:,} rows, expected {expected:,}")
                self.record(s, metric, c, x, r["seconds"])
                log(f"  {what} {c} run {run}: {r['rows']:,} rows in {r['seconds']:.4f}s")

    # -- scan and append against rows, buckets, columns -------------------------------------

    def scan_append(self, name: str, fixed: dict, point) -> None:
        """`point(x)` -> (data file, rows, buckets) of the point x."""
        s = self.sweep(name, fixed)
        srv = self.server(name)
        try:
            for i, x in enumerate(s["points"]):
                data, rows, buckets = point(x)
                table = f"curves.{name}_{i}"
                if not self.load(srv, table, data, rows, buckets):
                    continue
                base = {"bootstrap": srv.bootstrap, "data": str(data), "buckets": buckets}
                runs = runs_at(self.plan, name, x)
                self.reads(s, "scan_s", x, runs, dict(base, op="scan", table=table), rows,
                           f"{name}={fmt_x(x)} scan")
                for run in range(runs):
                    for c in self.order(run):
                        r = self.worker(dict(base, op="append", contender=c, rows=rows,
                                             table=f"curves.{name}_{i}_{c}_{run}"))
                        if r is None:
                            continue
                        self.record(s, "append_s", c, x, r["seconds"])
                        log(f"  {name}={fmt_x(x)} append {c} run {run}: {r['seconds']:.3f}s")
        finally:
            self.stop(srv)

    def rows_sweep(self) -> None:
        b = self.plan["buckets"]
        self.scan_append("rows", {"buckets": b, "columns": BASE_COLUMNS},
                         lambda x: (self.data, int(x), b))

    def buckets_sweep(self) -> None:
        n = self.plan["buckets_rows"]
        self.scan_append("buckets", {"rows": n, "columns": BASE_COLUMNS},
                         lambda x: (self.data, n, int(x)))

    def columns_sweep(self) -> None:
        n, b = self.plan["columns_rows"], self.plan["buckets"]
        files, nbytes = {}, {}
        for c in self.plan["points"]["columns"]:
            path = self.work / f"wide_{int(c)}.arrow"
            r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--make-wide",
                                str(self.data), str(path), str(n), str(int(c))],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"making the {c}-column data failed:\n{r.stderr[-2000:]}")
            files[c] = path
            nbytes[key(c)] = json.loads(r.stdout.strip().splitlines()[-1])["arrow_bytes"]
        self.scan_append("columns", {"rows": n, "buckets": b}, lambda x: (files[x], n, b))
        self.res["sweeps"]["columns"]["extra"]["arrow_bytes"] = nbytes

    # -- time-range read against the window's width -----------------------------------------

    def window_sweep(self) -> None:
        n, b, slices = self.plan["window_rows"], self.plan["buckets"], self.plan["window_slices"]
        s = self.sweep("window", {"rows": n, "buckets": b, "slices": slices})
        srv = self.server("window")
        try:
            load = self.worker({"op": "create_load", "contender": "pyfluss", "table": "curves.window",
                                "bootstrap": srv.bootstrap, "data": str(self.data), "rows": n,
                                "buckets": b, "slices": slices})
            if load is None:
                return
            log(f"  loaded curves.window: {n:,} rows in {slices} slices, {load['seconds']:.1f}s")
            stamps, slice_rows = load["slice_ts"], load["slice_rows"]
            windows = s["extra"]["windows"] = {}
            for w in s["points"]:
                # the window of `k` whole slices in the middle of the load
                k = max(1, min(slices, round(w / 100 * slices)))
                first = (slices - k) // 2
                expected = sum(slice_rows[first:first + k])
                windows[key(w)] = {"start_ms": stamps[first], "end_ms": stamps[first + k],
                                   "rows": expected}
                self.reads(s, "read_s", w, self.plan["runs"],
                           {"op": "between", "table": "curves.window", "bootstrap": srv.bootstrap,
                            "buckets": b, "data": str(self.data), "start_ms": stamps[first],
                            "end_ms": stamps[first + k]}, expected, f"window {w}%")
        finally:
            self.stop(srv)

    # -- lookup latency against the table's size --------------------------------------------

    def lookup_sweep(self) -> None:
        plan, b = self.plan, self.plan["buckets"]
        s = self.sweep("lookup", {"buckets": b, "latency_keys": plan["latency_keys"]})
        batched = s["extra"]["batched_keys_per_s"] = {c: {} for c in self.contenders}
        srv = self.server("lookup")
        rnd = random.Random(9)
        try:
            for i, n in enumerate(s["points"]):
                n = int(n)
                # Each contender looks up a table its own client upserted: on the embedded
                # server (2026-12-06) pyfluss found only ~1/4 of the keys of a table Riverlet
                # upserted and Riverlet ~1/4 of pyfluss's (their buckets of a BIGINT key differ),
                # and a missed key is not a lookup's cost.
                tables = {}
                for c in self.contenders:
                    tables[c] = f"curves.pk_{i}_{c}"
                    r = self.worker({"op": "create_load_pk", "contender": c, "rows": n,
                                     "bootstrap": srv.bootstrap, "table": tables[c],
                                     "buckets": b, "data": str(self.data)})
                    if r is None:
                        tables.pop(c)
                        continue
                    log(f"  loaded {tables[c]}: {n:,} keys by {c} in {r['seconds']:.1f}s")
                keys = [rnd.randrange(n) for _ in range(plan["batched_keys"])]
                lat_keys = [rnd.randrange(n) for _ in range(plan["latency_keys"])]
                for run in range(plan["lookup_runs"]):
                    for c in self.order(run):
                        if c not in tables:
                            continue
                        r = self.worker({"op": "lookup", "contender": c, "table": tables[c],
                                         "bootstrap": srv.bootstrap, "buckets": b,
                                         "keys": keys, "latency_keys": lat_keys,
                                         "key_column": "id", "batch": plan["lookup_batch"],
                                         "pyfluss_lookupers": plan["pyfluss_lookupers"]})
                        if r is None:
                            continue
                        if r["found"] != len(keys):
                            self.warn(f"lookup {n:,} keys {c} run {run}: found {r['found']} "
                                      f"of {len(keys)} present keys")
                        self.record(s, "p50_ms", c, n, r["p50_ms"])
                        self.record(s, "p99_ms", c, n, r["p99_ms"])
                        batched[c].setdefault(key(n), []).append(
                            r["batched_keys"] / r["batched_seconds"])
                        log(f"  lookup {fmt_x(n)} keys {c} run {run}: p50 {r['p50_ms']:.3f} ms, "
                            f"p99 {r['p99_ms']:.3f} ms")
        finally:
            self.stop(srv)

    # -- server memory against the data it holds --------------------------------------------

    def rss_sweep(self) -> None:
        b = self.plan["buckets"]
        s = self.sweep("rss", {"buckets": b})
        extra = s["extra"]
        extra.update({"log_mb": {}, "idle_mib": {}, "peak_reset": True})
        for c in self.contenders:
            srv = self.server(f"rss_{c}")
            pid = srv.proc.pid
            try:
                extra["idle_mib"][c] = proc_status_kib(pid)["VmRSS"] / 1024
                extra["log_mb"][c] = {}
                stored = 0
                base = {"bootstrap": srv.bootstrap, "data": str(self.data), "buckets": b,
                        "contender": c, "table": "curves.rss"}
                for n in s["points"]:
                    n = int(n)
                    # append the next n - stored rows (the data's first rows again: the bytes,
                    # not the values, are what the server holds)
                    extra["peak_reset"] &= reset_peak(pid)
                    r = self.worker(dict(base, op="append", rows=n - stored, keep=True,
                                         existing=stored > 0))
                    if r is None:
                        break
                    stored = n
                    time.sleep(1)  # let the server finish what it does after the last ack
                    mem = proc_status_kib(pid)
                    self.record(s, "steady_mib", c, n, mem["VmRSS"] / 1024)
                    self.record(s, "append_peak_mib", c, n, mem["VmHWM"] / 1024)
                    extra["peak_reset"] &= reset_peak(pid)
                    r = self.worker(dict(base, op="scan"))
                    if r is not None:
                        if r["rows"] != n:
                            self.warn(f"rss {c}: scan of {r['rows']:,} rows, expected {n:,}")
                        self.record(s, "scan_peak_mib", c, n, proc_status_kib(pid)["VmHWM"] / 1024)
                    extra["log_mb"][c][key(n)] = sum(
                        bench.log_bytes(srv.data_dir, int(t.name))
                        for t in (srv.data_dir / "tablets").iterdir() if t.name.isdigit()) / 1e6
                    log(f"  rss {c} {fmt_x(n)} rows ({extra['log_mb'][c][key(n)]:.0f} MB of log): "
                        f"after append {mem['VmRSS'] / 1024:.0f} MiB, "
                        f"peak append {mem['VmHWM'] / 1024:.0f} MiB")
            finally:
                self.stop(srv)


def make_wide(src: Path, dst: Path, rows: int, cols: int) -> None:
    """The columns sweep's data: `id`, then the base data's other columns in turn, renamed."""
    import pyarrow as pa

    with pa.memory_map(str(src), "r") as f:
        base = pa.ipc.open_file(f).read_all().slice(0, rows)
    names, arrays = ["id"], [base.column(0)]
    others = base.column_names[1:]
    for j in range(1, cols):
        k = (j - 1) % len(others)
        names.append(f"{others[k]}_{j}")
        arrays.append(base.column(k + 1))
    wide = pa.Table.from_arrays(arrays, names=names)
    with pa.OSFile(str(dst), "wb") as sink, pa.ipc.new_file(sink, wide.schema) as w:
        w.write_table(wide, max_chunksize=8192)
    print(json.dumps({"rows": wide.num_rows, "columns": cols, "arrow_bytes": wide.nbytes}))


# ------------------------------------------------------------------------------------------
# shapes
# ------------------------------------------------------------------------------------------


def slope_fit(lx: list[float], ly: list[float]) -> tuple[float, float]:
    """Least-squares slope and the sum of squared residuals of ly against lx."""
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    slope = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx if sxx else 0.0
    sse = sum((b - my - slope * (a - mx)) ** 2 for a, b in zip(lx, ly))
    return slope, sse


def affine_fit(xs: list[float], ys: list[float]) -> tuple[float, float, float] | None:
    """y = fixed + per_unit * x, least squares of the relative error (every point counts alike
    on log-spaced x); (fixed, per_unit, relative RMS residual), None if degenerate."""
    # minimise sum((fixed/y + per_unit*x/y - 1)^2): normal equations of 2 unknowns
    u = [1 / y for y in ys]
    v = [x / y for x, y in zip(xs, ys)]
    suu, suv, svv = sum(a * a for a in u), sum(a * b for a, b in zip(u, v)), sum(b * b for b in v)
    su, sv = sum(u), sum(v)
    det = suu * svv - suv * suv
    if abs(det) < 1e-300:
        return None
    fixed = (su * svv - sv * suv) / det
    per_unit = (sv * suu - su * suv) / det
    rms = math.sqrt(statistics.fmean(((fixed + per_unit * x) / y - 1) ** 2 for x, y in zip(xs, ys)))
    return fixed, per_unit, rms


def slope_word(s: float) -> str:
    if abs(s) < 0.15:
        return "flat"
    if 0.85 <= s <= 1.15:
        return "linear"
    if 0.15 <= s < 0.85:
        return "sub-linear"
    if s > 1.15:
        return "super-linear"
    return "falling"


def fmt_val(v: float, unit: str) -> str:
    if unit == "s" and abs(v) < 1:
        return f"{v * 1e3:.3g} ms"
    return f"{v:.3g} {unit}"


def shape(sweep: str, xs: list[float], ys: list[float], unit: str) -> dict:
    """The shape of one curve, named from its medians.

    First a fit of a fixed cost plus a cost per unit (y = fixed + per_unit * x): when it holds
    (within 10% RMS) the curve is flat where the fixed part dominates and linear where the
    per-unit part does, and they are equal at x = fixed / per_unit, the bend. Otherwise the
    log-log slope names it, and the two-segment log-log fit with the least error says where the
    slope changes."""
    out: dict = {"points": len(xs)}
    if len(xs) < 2 or min(ys) <= 0:
        out["text"] = "too few points to name a shape"
        return out
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    overall, _ = slope_fit(lx, ly)
    first, _ = slope_fit(lx[:2], ly[:2])
    last, _ = slope_fit(lx[-2:], ly[-2:])
    out.update(slope=overall, first_slope=first, last_slope=last)
    slopes = (f"log-log slope {overall:.2f} overall, {first:.2f} between the first two points, "
              f"{last:.2f} between the last two")
    _, unit_word, scale = X_AXIS[sweep]
    fit = affine_fit(xs, ys)
    head = None
    if fit is not None:
        fixed, per_unit, rms = fit
        out["fit"] = {"fixed": fixed, "per_unit": per_unit, "rms": rms}
        fit_text = (f"fixed + per-unit fit {fmt_val(fixed, unit)} + "
                    f"{fmt_val(per_unit * scale, unit)} per {unit_word}, within {rms * 100:.0f}% RMS")
        # two points fit any line exactly: a shape needs a third
        if len(xs) >= 3 and fixed > 0 and per_unit > 0 and rms < 0.1:
            cross = out["crossover"] = fixed / per_unit
            if cross <= xs[0]:
                head = (f"linear (the growing part is larger than the fixed part from the first "
                        f"point; they are equal at {fmt_x(cross)})")
            elif cross >= xs[-1]:
                head = (f"flat (the growing part stays under the fixed part up to "
                        f"{fmt_x(xs[-1])}; they would be equal at {fmt_x(cross)})")
            else:
                head = f"flat, then linear: bends at {fmt_x(cross)}"
                out["bend"] = {"x": cross}
                if len(xs) >= 4:
                    out["why"] = (f"from the data: a part that does not grow with the size "
                                  f"({fmt_val(fixed, unit)}) dominates below {fmt_x(cross)}, the "
                                  f"{fmt_val(per_unit * scale, unit)} per {unit_word} above it.")
    if head is None:
        head = slope_word(overall)
        if len(xs) >= 4:
            best = None
            for k in range(1, len(xs) - 1):  # both segments share the point k
                left, e1 = slope_fit(lx[:k + 1], ly[:k + 1])
                right, e2 = slope_fit(lx[k:], ly[k:])
                if best is None or e1 + e2 < best[0]:
                    best = (e1 + e2, k, left, right)
            _, k, left, right = best
            if abs(left - right) >= 0.3:
                out["bend"] = {"x": xs[k], "below": left, "above": right}
                head += (f", bends at {fmt_x(xs[k])}: {slope_word(left)} below (slope {left:.2f}), "
                         f"{slope_word(right)} above (slope {right:.2f})")
    parts = [head, slopes] + ([fit_text] if fit is not None and len(xs) >= 3 else [])
    out["text"] = "; ".join(parts)
    return out


def why_notes() -> dict[str, str]:
    """benches/curves/WHY.md: `- \\`sweep/metric\\`: text` or `- \\`sweep/metric/contender\\`: text`."""
    if not WHY_FILE.exists():
        return {}
    out = {}
    for line in WHY_FILE.read_text().splitlines():
        m = re.match(r"^- `([\w/]+)`: (.+)$", line.rstrip())  # indented lines are examples
        if m:
            out[m.group(1)] = m.group(2)
    return out


# ------------------------------------------------------------------------------------------
# report and plots
# ------------------------------------------------------------------------------------------


def series(s: dict, metric: str, c: str) -> tuple[list[float], list[float], list[float], list[float]]:
    """x, median, min, max of the points of one curve that have figures."""
    xs, med, lo, hi = [], [], [], []
    for x in s["points"]:
        v = s["values"][metric].get(c, {}).get(key(x))
        if v:
            xs.append(x)
            med.append(statistics.median(v))
            lo.append(min(v))
            hi.append(max(v))
    return xs, med, lo, hi


def minor_label(v: float, _pos) -> str:
    """A log axis's minor ticks labelled at 2 and 5 times a power of ten only (legible)."""
    if v <= 0:
        return ""
    lead = v / 10 ** math.floor(math.log10(v))
    return f"{v:.3g}" if round(lead) in (2, 5) else ""


def plot(res: dict, out_dir: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    pngs = {}
    colors = {"riverlet": "tab:blue", "pyfluss": "tab:orange"}
    for name, s in res["sweeps"].items():
        metrics = METRICS[name]
        width = max(7.0, 5.2 * len(metrics))
        fig, axes = plt.subplots(1, len(metrics), figsize=(width, 4.4), squeeze=False)
        for ax, (metric, what, unit) in zip(axes[0], metrics):
            for c in res["contenders"]:
                xs, med, lo, hi = series(s, metric, c)
                if not xs:
                    continue
                if name == "rss":  # against the bytes the server holds, per contender
                    xs = [s["extra"]["log_mb"][c][key(x)] for x in xs]
                ax.errorbar(xs, med, yerr=[[m - a for m, a in zip(med, lo)],
                                           [b - m for m, b in zip(med, hi)]],
                            marker="o", capsize=3, color=colors.get(c), label=LABEL.get(c, c))
            ax.set_xscale("log")
            if name != "rss":  # ticks at the measured sizes, written as 1M, 64, 0.1
                ax.set_xticks(s["points"], [fmt_x(x) for x in s["points"]])
                ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            else:
                ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
                ax.xaxis.set_minor_formatter(ticker.FuncFormatter(minor_label))
            if LOG_Y[name]:
                ax.set_yscale("log")
                ax.yaxis.set_minor_formatter(ticker.FuncFormatter(minor_label))
            else:
                ax.set_ylim(bottom=0)
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
            xlabel = "MB of log segments on the server" if name == "rss" else X_AXIS[name][0]
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"{what} ({unit})")
            ax.set_title(f"{what} ({unit})", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        title = f"{SWEEP_TITLE[name]}: {fixed_text(name, s['fixed'])} (median of runs, bars min–max)"
        fig.suptitle(textwrap.fill(title, int(width * 13)), fontsize=10)
        fig.tight_layout()
        path = out_dir / f"{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        pngs[name] = path
    return pngs


def fixed_text(name: str, fixed: dict) -> str:
    words = {"rows": "rows", "buckets": "buckets", "columns": "columns", "slices": "load slices",
             "latency_keys": "single lookups a run"}
    return ", ".join(f"{fmt_x(v)} {words.get(k, k)}" for k, v in fixed.items())


def cell(v: list[float] | None) -> str:
    if not v:
        return "–"
    m = statistics.median(v)
    text = f"{m:.4g}"
    if len(v) > 1:
        text += f" ({min(v):.3g}–{max(v):.3g})"
    return text


SWEEP_TITLE = {
    "rows": "Scan and append time against rows",
    "buckets": "Scan and append time against buckets",
    "columns": "Scan and append time against columns",
    "window": "Time-range read against the window's width",
    "lookup": "Lookup latency against the table's size",
    "rss": "Server memory against the data it holds",
}


def report(res: dict, pngs: dict[str, Path], out: Path, json_path: Path) -> str:
    md: list[str] = []
    p = md.append
    contenders = res["contenders"]
    notes = why_notes()
    la, ver = res["loadavg"], res["versions"]
    p(MARK_START)
    p("## How cost grows (benches/curves.py)")
    p("")
    p(f"Generated by `make bench-curves` on {res['generated']} ({'--quick, ' if res['quick'] else ''}"
      f"{res['elapsed_s'] / 60:.1f} min, estimated {sum(res['estimate_s'].values()) / 60:.1f} min; "
      f"commit {ver.get('riverlet git commit', '?')}, {ver.get('cores (os.cpu_count)', '?')} cores, "
      f"load average {la['start'][0]:.2f} at start, {la['end'][0]:.2f} at end). Every figure is the "
      "median of a point's runs (min–max in brackets), each run a fresh worker process, the "
      "contenders alternating; release `riverlet-server --fsync never`. Raw figures: "
      f"{os.path.relpath(json_path, out.parent)}. pyfluss {ver.get('pyfluss', '?')}, "
      f"riverlet {ver.get('riverlet (python)', '?')}.")
    p("")
    p("Shapes are computed from the medians: the least-squares slope of log(time) against "
      "log(size) (~1 linear, ~0 flat), the two-segment fit that leaves the least error (a bend "
      "where its slopes differ by 0.3 or more), and a fit of a fixed cost plus a cost per unit.")
    for w in res.get("warnings", []):
        p(f"- **Warning**: {w}")
    for c, why in res.get("missing", {}).items():
        p(f"- **{c} not measured**: {why}")
    p("")
    for name, s in res["sweeps"].items():
        p(f"### {SWEEP_TITLE[name]}")
        p("")
        p(f"{fixed_text(name, s['fixed'])}.")
        p("")
        head = [X_AXIS[name][0]]
        if name == "rss":
            head += [f"MB of log ({LABEL[c]})" for c in contenders]
        for metric, what, unit in METRICS[name]:
            head += [f"{LABEL[c]} {what} {unit}" for c in contenders]
            if len(contenders) == 2:
                head.append(f"{contenders[1]} / {contenders[0]}")
        p("| " + " | ".join(head) + " |")
        p("|" + " --- |" * len(head))
        for x in s["points"]:
            row = [fmt_x(x)]
            if name == "rss":
                row += [f"{s['extra']['log_mb'].get(c, {}).get(key(x), float('nan')):.0f}"
                        for c in contenders]
            for metric, _, _ in METRICS[name]:
                vals = [s["values"][metric].get(c, {}).get(key(x)) for c in contenders]
                row += [cell(v) for v in vals]
                if len(contenders) == 2:
                    row.append(f"{statistics.median(vals[1]) / statistics.median(vals[0]):.2f}x"
                               if all(vals) else "–")
            p("| " + " | ".join(row) + " |")
        p("")
        if name == "lookup":
            bk = s["extra"].get("batched_keys_per_s", {})
            per = []
            for c in contenders:
                rates = [f"{fmt_x(x)}: {bench.fmt_rate(statistics.median(v), 'keys/s')}"
                         for x in s["points"] if (v := bk.get(c, {}).get(key(x)))]
                per.append(f"{LABEL[c]} " + ", ".join(rates))
            p("Batched lookups of the same runs (1000 keys a group, as benches/run.py): "
              + "; ".join(per) + ".")
            p("")
        if name == "rss":
            idle = s["extra"].get("idle_mib", {})
            p("Idle server before the first append: " + ", ".join(
                f"{idle[c]:.0f} MiB ({LABEL[c]}'s server)" for c in contenders if c in idle)
              + (". Peaks are per step (VmHWM reset before each)." if s["extra"].get("peak_reset")
                 else ". VmHWM could not be reset: peaks are since the server started."))
            p("")
        if name in pngs:
            p(f"![{SWEEP_TITLE[name]}]({os.path.relpath(pngs[name], out.parent)})")
            p("")
        for metric, what, unit in METRICS[name]:
            for c in contenders:
                xs, med, _, _ = series(s, metric, c)
                sh = shape(name, xs, med, unit)
                s.setdefault("shapes", {})[f"{metric}/{c}"] = sh
                why = (notes.get(f"{name}/{metric}/{c}") or notes.get(f"{name}/{metric}")
                       or sh.get("why")
                       or f"**placeholder: the lead writes why from the full run** (an entry "
                          f"`- \\`{name}/{metric}\\`: ...` in benches/curves/WHY.md).")
                p(f"- {LABEL[c]}, {what}: {sh['text']}. Why: {why}")
        p("")
    p(MARK_END)
    return "\n".join(md)


def finish(res: dict, out_dir: Path, out: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    pngs = plot(res, out_dir)
    json_path = out_dir / "curves.json"
    text = report(res, pngs, out, json_path)
    json_path.write_text(json.dumps(res, indent=1) + "\n")
    bench_support.replace_section(out, MARK_START, MARK_END, text)
    print(text)
    log(f"wrote {', '.join(str(p) for p in pngs.values())}, {out_dir / 'curves.json'} and the "
        f"curves section of {out}")


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, 1 run a point (smoke test)")
    ap.add_argument("--sweeps", default=",".join(SWEEPS), help=f"subset of {','.join(SWEEPS)}")
    ap.add_argument("--points", action="append", default=[], metavar="SWEEP=a,b,...",
                    help="the points of one sweep (repeatable), e.g. rows=1M,10M buckets=1,64")
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--runs", type=int, default=None, help="runs a point (default 3, --quick 1)")
    ap.add_argument("--single-run-above", type=int, default=20_000_000,
                    help="rows sweep: one run a contender above this many rows (default 20M)")
    ap.add_argument("--buckets", type=int, default=4, help="buckets outside the buckets sweep")
    ap.add_argument("--buckets-rows", type=int, default=None, help="default 5M (--quick 200k)")
    ap.add_argument("--columns-rows", type=int, default=None, help="default 500k (--quick 20k)")
    ap.add_argument("--window-rows", type=int, default=None, help="default 10M (--quick 1M)")
    ap.add_argument("--latency-keys", type=int, default=None, help="default 200 (--quick 50)")
    ap.add_argument("--lookup-runs", type=int, default=None, help="default 2 (--quick 1)")
    ap.add_argument("--no-build", action="store_true", help="measure the builds as they are")
    ap.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    ap.add_argument("--out-dir", default=None,
                    help="PNGs and curves.json (default benches/curves, --quick a temp dir)")
    ap.add_argument("--out", default=None,
                    help="the markdown file of the section (default benches/RESULTS.md, "
                         "--quick RESULTS.md in --out-dir)")
    ap.add_argument("--worker-timeout", type=float, default=900)
    ap.add_argument("--report-only", metavar="JSON",
                    help="redraw the plots and rewrite the section from a curves.json")
    args = ap.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("matplotlib is not installed in this venv (make bench-curves installs it)")

    if args.report_only:
        res = json.loads(Path(args.report_only).read_text())
        out_dir = Path(args.out_dir) if args.out_dir else Path(args.report_only).parent
        finish(res, out_dir, Path(args.out) if args.out else HERE / "RESULTS.md")
        return

    args.sweeps = [s.strip() for s in args.sweeps.split(",") if s.strip()]
    for s in args.sweeps:
        if s not in SWEEPS:
            sys.exit(f"unknown sweep {s!r} (one of {', '.join(SWEEPS)})")
    wanted = [c.strip() for c in args.contenders.split(",") if c.strip()]
    for c in wanted:
        if c not in CONTENDERS:
            sys.exit(f"unknown contender {c!r} (one of {', '.join(CONTENDERS)})")
    plan = make_plan(args)
    est = estimate(plan, wanted)
    log("estimated duration on a quiet 2-core machine (release builds not counted): "
        f"{sum(est.values()) / 60:.1f} min (" + ", ".join(f"{k} {v:.0f}s" for k, v in est.items()) + ")")
    for s in plan["sweeps"]:
        log(f"  {s}: points {', '.join(fmt_x(x) for x in plan['points'][s])}")
    if args.estimate_only:
        return
    if args.quick and args.out_dir is None:  # a smoke test never replaces the recorded figures
        args.out_dir = tempfile.mkdtemp(prefix="riverlet-curves-quick-")
    out_dir = Path(args.out_dir) if args.out_dir else OUT_DIR
    out = Path(args.out) if args.out else (
        out_dir / "RESULTS.md" if args.quick else HERE / "RESULTS.md")

    def on_signal(signum, _frame):  # the finally blocks stop the servers
        raise KeyboardInterrupt(f"signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    load_start = os.getloadavg()
    notes = bench.build(SimpleNamespace(no_build=args.no_build, sections=set(), contenders=wanted))
    contenders, missing, version = [], {}, None
    for c in wanted:
        if c == "riverlet":
            ok, info = bench.riverlet_available()
            if not ok:
                missing[c] = notes.get("riverlet_build", "") + f" ({info})"
                continue
            version = info
        contenders.append(c)
    r = subprocess.run([sys.executable, "-c", "import fluss"], capture_output=True, text=True)
    if r.returncode != 0:  # pyfluss loads the tables, whoever measures
        sys.exit("pyfluss is not importable in this venv (make bench-curves installs it):\n"
                 + r.stderr[-500:])
    if not contenders:
        sys.exit(f"no contender to measure: {missing}")

    work = Path(tempfile.mkdtemp(prefix="riverlet-curves-"))
    run = Run(plan, contenders, work, args.worker_timeout)
    res = run.res
    res.update({"quick": args.quick, "plan": plan, "contenders": contenders, "missing": missing,
                "estimate_s": est, "actual_s": {},
                "generated": dt.datetime.now().strftime("%Y-%m-%d %H:%M")})
    log(f"work dir {work}; contenders {contenders}; load average {load_start}")
    try:
        t0 = time.monotonic()
        rows = base_rows(plan)
        log(f"generating {rows:,} rows (benches/run.py's data) into {run.data}")
        g = subprocess.run([sys.executable, str(HERE / "run.py"), "--generate-only", str(run.data),
                            str(rows)], capture_output=True, text=True)
        if g.returncode != 0:
            sys.exit("data generation failed:\n" + g.stderr[-2000:])
        res["shape"] = json.loads(g.stdout.strip().splitlines()[-1])
        res["actual_s"]["generate"] = time.monotonic() - t0
        for s in plan["sweeps"]:
            t0 = time.monotonic()
            log(f"sweep {s} (estimated {est[s]:.0f}s)")
            getattr(run, f"{s}_sweep")()
            res["actual_s"][s] = time.monotonic() - t0
            log(f"sweep {s} took {res['actual_s'][s]:.0f}s (estimated {est[s]:.0f}s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["loadavg"] = {"start": load_start, "end": os.getloadavg()}
    res["elapsed_s"] = time.monotonic() - T_START
    res["versions"] = bench.versions(version)
    finish(res, out_dir, out)
    log(f"total {res['elapsed_s'] / 60:.1f} min, estimated {sum(est.values()) / 60:.1f} min")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--make-wide":
        make_wide(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
