#!/usr/bin/env python3
"""Where the time of a full scan goes: perf (cpu-clock sampling) of one scan, client and server.

    .venv/bin/python benches/profile.py --contender riverlet --rows 10000000 --op scan

Starts the release server (`--fsync never`), loads the bench data with pyfluss, then runs one
worker (benches/worker.py) under `perf record -e cpu-clock -g` while a second perf records the
server process for the same time. Prints the top symbols of both (self time) and keeps the
perf.data files in --out (default /tmp/riverlet-profile). Hardware counters are not available on
every VM, which is why it samples the cpu-clock software event.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402


def top(data: Path, n: int) -> str:
    r = subprocess.run(
        ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso,symbol",
         "--percent-limit", "0.7", "-g", "none"],
        capture_output=True, text=True,
    )
    lines = []
    for line in r.stdout.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        line = re.sub(r"\s+-\s+-\s*$", "", line.rstrip())
        lines.append(re.sub(r"\s{3,}", "  ", line)[:160])
    return "\n".join(lines[:n])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--contender", default="riverlet")
    ap.add_argument("--op", default="scan")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--out", default="/tmp/riverlet-profile")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="riverlet-prof-"))
    data = work / "data.arrow"
    shape = run.generate(data, args.rows)
    server = run.Server(work / "server")
    try:
        base = {"bootstrap": server.bootstrap, "buckets": args.buckets, "data": str(data)}
        spec = dict(base, op=args.op, contender=args.contender, table="bench.scan")
        if args.op in ("append", "upsert"):
            # writes make their own table; nothing to load
            spec.update(table=f"bench.{args.op}_profile", rows=args.rows)
        else:
            load = run.run_worker(
                dict(base, op="create_load", contender="pyfluss", table="bench.scan"), 600)
            print(f"loaded {load['rows']:,} rows ({shape['arrow_bytes'] / 1e6:.0f} MB Arrow)")
        if args.op == "between":
            stamps = load["slice_ts"]
            mid = len(load["slice_rows"]) // 2 - 1
            spec.update(start_ms=stamps[mid], end_ms=stamps[mid + 1])
        srv_data = out / f"server-{args.contender}-{args.op}.data"
        cli_data = out / f"client-{args.contender}-{args.op}.data"
        srv = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1999", "-g",
                                "-p", str(server.proc.pid), "-o", str(srv_data)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        cli = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1999", "-g",
                              "-o", str(cli_data), sys.executable, str(run.WORKER)],
                             env=run.WORKER_ENV, input=json.dumps(spec), capture_output=True, text=True)
        srv.send_signal(signal.SIGINT)
        srv.wait(30)
        print("worker:", (cli.stdout.strip().splitlines() or [cli.stderr[-2000:]])[-1])
        print(f"\n== client ({args.contender} {args.op}) self time, top symbols ==")
        print(top(cli_data, args.top))
        print(f"\n== server during that {args.op} ==")
        print(top(srv_data, args.top))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
