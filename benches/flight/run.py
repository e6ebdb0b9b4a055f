#!/usr/bin/env python3
"""The cost of the Flight SQL gateway (issue 21): a whole-table scan into a pyarrow Table
through `riverlet flight` (Flight SQL, read by the ADBC driver and by pyarrow.flight) vs the
same scan through the direct Python binding, on one `riverlet serve`, same machine.

    python3 benches/flight/run.py                          # 10M rows, release builds
    python3 benches/flight/run.py --rows 1000000 --profile dev --no-build

Needs the virtualenv of the Python suite (.venv: riverlet, pyarrow, adbc-driver-flightsql);
`--no-build` skips `cargo build --release -p riverlet-cli -p riverlet-sql` and `maturin develop
--release`. Each contender runs in fresh processes, alternating; each process scans `--runs`
times and its first scan is a warm-up left out of the medians. Prints the figures and writes
them into benches/RESULTS.md between the markers below. Nothing here is a test.
"""

from __future__ import annotations

import argparse
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
START = "<!-- flight-sql: written by benches/flight/run.py -->"
END = "<!-- /flight-sql -->"
TABLE = "bench.flight_scan"
CONTENDERS = ("direct", "adbc", "pyarrow.flight")


def log(msg: str) -> None:
    print(f"[flight-bench] {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> str:
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, cwd=ROOT, **kw).stdout


# --- worker side (a fresh process per contender and round) ----------------------------------

def flight_sql_command(sql: str) -> bytes:
    """A Flight SQL CommandStatementQuery in a protobuf Any (field 1: the query)."""
    def varint(n: int) -> bytes:
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            if not n:
                return out + bytes([b])
            out += bytes([b | 0x80])
    query = sql.encode()
    inner = b"\x0a" + varint(len(query)) + query
    url = b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery"
    return b"\x0a" + varint(len(url)) + url + b"\x12" + varint(len(inner)) + inner


def worker(who: str, bootstrap: str, uri: str, runs: int) -> None:
    import pyarrow as pa

    sql = f"SELECT * FROM {TABLE.split('.')[1]}"
    if who == "direct":
        import riverlet
        conn = riverlet.connect(bootstrap)
        table = conn.table(TABLE)
        scan = table.read
    elif who == "adbc":
        import adbc_driver_flightsql.dbapi as flight_sql
        conn = flight_sql.connect(uri)

        def scan() -> pa.Table:
            with conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table()
    else:
        import pyarrow.flight as flight
        from concurrent.futures import ThreadPoolExecutor
        client = flight.connect(uri)
        pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        descriptor = flight.FlightDescriptor.for_command(flight_sql_command(sql))

        def scan() -> pa.Table:
            # One endpoint per bucket, fetched in parallel as a Flight client would.
            info = client.get_flight_info(descriptor)
            parts = pool.map(lambda e: client.do_get(e.ticket).read_all(), info.endpoints)
            return pa.concat_tables(list(parts))
    for i in range(runs):
        t0 = time.perf_counter()
        result = scan()
        seconds = time.perf_counter() - t0
        print(json.dumps({"run": i, "seconds": seconds, "rows": result.num_rows,
                          "bytes": result.nbytes}), flush=True)
        del result


# --- driver side ------------------------------------------------------------------------------

def load(bootstrap: str, rows: int, python: str) -> None:
    """Creates the table (6 columns, 4 buckets) and appends `rows` rows with the binding."""
    code = f"""
import numpy as np, pyarrow as pa, riverlet
conn = riverlet.connect({bootstrap!r})
conn.create_database("bench", if_not_exists=True)
schema = pa.schema([("id", pa.int64()), ("event_time", pa.timestamp("us")),
                    ("user_id", pa.int32()), ("amount", pa.float64()),
                    ("category", pa.string()), ("flag", pa.bool_())])
t = conn.create_table({TABLE!r}, schema, buckets=4)
rng = np.random.default_rng(7)
cats = np.array(["books", "games", "garden", "music", "tools", "toys"], dtype=object)
step = 1_000_000
for lo in range(0, {rows}, step):
    n = min(step, {rows} - lo)
    ids = np.arange(lo, lo + n, dtype=np.int64)
    t.append(pa.table({{
        "id": ids,
        "event_time": pa.array(1_767_225_600_000_000 + ids * 1000, pa.timestamp("us")),
        "user_id": rng.integers(0, 100_000, n, dtype=np.int32),
        "amount": rng.random(n) * 100,
        "category": pa.array(cats[rng.integers(0, len(cats), n)], pa.string()),
        "flag": rng.random(n) < 0.5,
    }}, schema=schema))
conn.close()
"""
    subprocess.run([python, "-c", code], check=True, cwd=ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=4, help="scans per process, the first a warm-up")
    ap.add_argument("--rounds", type=int, default=3, help="processes per contender, alternating")
    ap.add_argument("--profile", choices=["release", "dev"], default="release",
                    help="which build of riverlet, riverlet-flight and the extension to use")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benches" / "RESULTS.md"))
    ap.add_argument("--worker", nargs=4, metavar=("WHO", "BOOTSTRAP", "URI", "RUNS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        who, bootstrap, uri, runs = args.worker
        worker(who, bootstrap, uri, int(runs))
        return

    t_start = time.monotonic()
    load_start = os.getloadavg()
    release = args.profile == "release"
    if not args.no_build:
        sh(["cargo", "build", "-q", *(["--release"] if release else []),
            "-p", "riverlet-cli", "-p", "riverlet-sql"])
        sh([str(Path(args.python).parent / "maturin"), "develop", "-q",
            *(["--release"] if release else []), "-m", "python/Cargo.toml"],
           env={**os.environ, "VIRTUAL_ENV": str(Path(args.python).parent.parent)})
    bin_dir = target_dir() / ("release" if release else "debug")

    with tempfile.TemporaryDirectory(prefix="riverlet-flight-bench-") as tmp:
        server = RiverletServe(Path(tmp) / "data", exe=bin_dir / "riverlet")
        gateway = None
        try:
            t0 = time.monotonic()
            load(server.bootstrap, args.rows, args.python)
            log(f"loaded {args.rows:,} rows in {time.monotonic() - t0:.1f} s")
            gateway = subprocess.Popen(
                [str(bin_dir / "riverlet-flight"), "--bootstrap", server.bootstrap, "--port", "0",
                 "--database", "bench", "--stop-on-stdin-eof"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True)
            line = gateway.stdout.readline()
            if "listening on " not in line:
                sys.exit(f"riverlet-flight did not start: {line!r}")
            uri = line.split("listening on ", 1)[1].split()[0]
            res: dict[str, list[dict]] = {k: [] for k in CONTENDERS}
            for rnd in range(args.rounds):
                order = CONTENDERS if rnd % 2 == 0 else tuple(reversed(CONTENDERS))
                for who in order:
                    out = sh([args.python, __file__, "--worker", who, server.bootstrap, uri,
                              str(args.runs)])
                    runs = [json.loads(x) for x in out.splitlines() if x.startswith('{"run"')]
                    for r in runs:
                        if r["rows"] != args.rows:
                            sys.exit(f"{who} scanned {r['rows']} rows, expected {args.rows}")
                    res[who].extend(runs[1:])
                    log(f"{who}: " + ", ".join(f"{r['seconds']:.3f}" for r in runs)
                        + " s (first = warm-up)")
        finally:
            if gateway is not None:
                gateway.stdin.close()
                gateway.wait(60)
            server.stop()

    med = {k: statistics.median(r["seconds"] for r in v) for k, v in res.items()}
    lo = {k: min(r["seconds"] for r in v) for k, v in res.items()}
    hi = {k: max(r["seconds"] for r in v) for k, v in res.items()}
    arrow_mb = res["direct"][0]["bytes"] / 1e6
    load_end = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE).stdout.strip()
    build = ("release builds" if release else
             "**dev-profile builds** (dependencies at opt-level 1, workspace crates unoptimized: "
             "not representative of release speed)")
    lines = [
        START,
        "## Flight SQL gateway: a whole-table scan through `riverlet flight` vs the direct Python binding",
        "",
        f"Generated by `python3 benches/flight/run.py` on {time.strftime('%Y-%m-%d %H:%M')} at "
        f"commit {commit}; {os.cpu_count()} cores, {platform.platform()}; load average at start "
        f"{load_start[0]:.2f}, at end {load_end[0]:.2f} (above ~0: other processes shared the "
        f"cores). {args.rows:,} rows, 6 columns, 4 buckets, Fluss's default ZSTD; {build} of "
        "`riverlet serve --fsync never`, `riverlet-flight` and the extension, all on loopback. "
        "direct: `riverlet.connect(...).table(...).read()`; adbc: `SELECT *` through "
        "adbc-driver-flightsql into `fetch_arrow_table()`; pyarrow.flight: GetFlightInfo, then "
        "the per-bucket endpoints fetched in parallel threads and concatenated. "
        f"{args.rounds} processes per contender, alternating, {args.runs - 1} measured scans "
        "each after one warm-up.",
        "",
        "| contender | median s | min–max s | rows/s | MB/s (Arrow) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for k in CONTENDERS:
        lines.append(f"| {k} | {med[k]:.3f} | {lo[k]:.3f}–{hi[k]:.3f} | "
                     f"{args.rows / med[k] / 1e6:.2f} M | {arrow_mb / med[k]:.0f} |")
    lines += [
        "",
        f"**Ratio:** scan speed through the gateway / direct: ADBC {med['direct'] / med['adbc']:.2f}x, "
        f"pyarrow.flight {med['direct'] / med['pyarrow.flight']:.2f}x (a plain read goes through "
        "the core's Arrow IPC messages, `ScanBuilder::execute_ipc`, with the gateway's "
        "`IPC_BODIES` choice, over a second loopback hop).",
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
