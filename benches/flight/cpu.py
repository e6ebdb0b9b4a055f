#!/usr/bin/env python3
"""Where the Flight SQL gateway's time goes (issue 34): the same whole-table scan as
benches/flight/run.py, with each process's CPU seconds beside the wall time. Per scan: the
client's CPU (the worker process: Python, pyarrow, the ADBC driver's Go runtime), the
gateway's (`riverlet-flight`) and the server's (`riverlet serve`; these two are averaged over
every scan of the worker process, its warm-up included). On a machine shared with
other work, CPU seconds move far less than wall seconds, so they say which process does the
work; the wall time says how much of it overlaps.

    python3 benches/flight/cpu.py --rows 2000000 --no-build
    python3 benches/flight/cpu.py --gateways split=131072,split=0 --contenders direct,adbc

Contenders: direct (the Python binding), pyarrow.flight (endpoints in 2 threads, as run.py),
adbc (as run.py), adbc-q (ADBC with `adbc.rpc.result_queue_size` 200: every endpoint read
ahead, to tell the driver's ordering from its decoding). Gateways: `split=N` runs
`riverlet-flight --split-records N` (0: one endpoint per bucket), `uncompressed` adds
`--ipc-bodies uncompressed`; each gateway runs alone while its contenders are measured, all on
the same server and data. Nothing here is a test; figures are printed, not recorded.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
from bench_support import RiverletServe, target_dir  # noqa: E402

_spec = importlib.util.spec_from_file_location("flight_run", HERE / "run.py")
flight_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flight_run)

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def worker(who: str, bootstrap: str, uri: str, runs: int) -> None:
    import pyarrow as pa

    sql = f"SELECT * FROM {flight_run.TABLE.split('.')[1]}"
    endpoints = [0]
    if who == "direct":
        import riverlet
        table = riverlet.connect(bootstrap).table(flight_run.TABLE)
        scan = table.read
    elif who in ("adbc", "adbc-q"):
        import adbc_driver_flightsql.dbapi as flight_sql
        conn = flight_sql.connect(uri)

        def scan() -> pa.Table:
            with conn.cursor() as cur:
                if who == "adbc-q":
                    cur.adbc_statement.set_options(**{"adbc.rpc.result_queue_size": "200"})
                cur.execute(sql)
                return cur.fetch_arrow_table()
    else:
        import pyarrow.flight as flight
        from concurrent.futures import ThreadPoolExecutor
        client = flight.connect(uri)
        pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        descriptor = flight.FlightDescriptor.for_command(flight_run.flight_sql_command(sql))

        def scan() -> pa.Table:
            info = client.get_flight_info(descriptor)
            endpoints[0] = len(info.endpoints)
            parts = pool.map(lambda e: client.do_get(e.ticket).read_all(), info.endpoints)
            return pa.concat_tables(list(parts))
    for i in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        result = scan()
        print(json.dumps({"run": i, "seconds": time.perf_counter() - t0,
                          "cpu": time.process_time() - c0, "rows": result.num_rows,
                          "endpoints": endpoints[0]}), flush=True)
        del result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=4, help="scans per process, the first a warm-up")
    ap.add_argument("--rounds", type=int, default=2, help="processes per contender and gateway")
    ap.add_argument("--contenders", default="direct,pyarrow.flight,adbc,adbc-q")
    ap.add_argument("--gateways", default="split=131072,split=0")
    ap.add_argument("--profile", choices=["release", "dev"], default="release")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        who, bootstrap, uri, runs = args.worker
        worker(who, bootstrap, uri, int(runs))
        return
    release = args.profile == "release"
    if not args.no_build:
        flight_run.sh(["cargo", "build", "-q", *(["--release"] if release else []),
                       "-p", "riverlet-cli", "-p", "riverlet-sql"])
    bin_dir = target_dir() / ("release" if release else "debug")
    contenders = args.contenders.split(",")
    load = os.getloadavg()[0]
    rows_out = []
    with tempfile.TemporaryDirectory(prefix="riverlet-flight-cpu-") as tmp:
        server = RiverletServe(Path(tmp) / "data", exe=bin_dir / "riverlet")
        try:
            flight_run.load(server.bootstrap, args.rows, args.python)
            for gw in args.gateways.split(","):
                flags = []
                for part in gw.split("+"):
                    if part.startswith("split="):
                        flags += ["--split-records", part.split("=", 1)[1]]
                    elif part == "uncompressed":
                        flags += ["--ipc-bodies", "uncompressed"]
                    else:
                        sys.exit(f"unknown gateway setting {part!r}")
                gateway = subprocess.Popen(
                    [str(bin_dir / "riverlet-flight"), "--bootstrap", server.bootstrap,
                     "--port", "0", "--database", "bench", "--stop-on-stdin-eof", *flags],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    text=True)
                line = gateway.stdout.readline()
                uri = line.split("listening on ", 1)[1].split()[0]
                try:
                    got: dict[str, list[dict]] = {c: [] for c in contenders}
                    for rnd in range(args.rounds):
                        order = contenders if rnd % 2 == 0 else list(reversed(contenders))
                        for who in order:
                            if who == "direct" and gw != args.gateways.split(",")[0]:
                                continue  # the direct read does not go through a gateway
                            s0, g0 = cpu_seconds(server.proc.pid), cpu_seconds(gateway.pid)
                            out = subprocess.run(
                                [args.python, __file__, "--worker", who, server.bootstrap, uri,
                                 str(args.runs)],
                                check=True, text=True, stdout=subprocess.PIPE, cwd=ROOT).stdout
                            s1, g1 = cpu_seconds(server.proc.pid), cpu_seconds(gateway.pid)
                            runs = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
                            for r in runs:
                                if r["rows"] != args.rows:
                                    sys.exit(f"{who} read {r['rows']} rows, not {args.rows}")
                                r["server"] = (s1 - s0) / len(runs)
                                r["gateway"] = (g1 - g0) / len(runs) if who != "direct" else 0.0
                            got[who].extend(runs[1:])
                    for who, runs in got.items():
                        if not runs:
                            continue
                        med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
                        rows_out.append((gw if who != "direct" else "-", who, med("seconds"),
                                         med("cpu"), med("gateway"), med("server"),
                                         runs[0]["endpoints"]))
                finally:
                    gateway.stdin.close()
                    gateway.wait(60)
        finally:
            server.stop()
    print(f"{args.rows:,} rows; load average at start {load:.1f}, at end "
          f"{os.getloadavg()[0]:.1f}; medians per scan")
    print("| gateway | contender | wall s | client CPU s | gateway CPU s | server CPU s | "
          "endpoints |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for gw, who, wall, cpu, g, s, n in rows_out:
        print(f"| {gw} | {who} | {wall:.3f} | {cpu:.3f} | {g:.3f} | {s:.3f} | "
              f"{n if who == 'pyarrow.flight' else ''} |")


if __name__ == "__main__":
    main()
