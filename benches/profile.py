#!/usr/bin/env python3
"""Where the time of a full scan goes: perf (cpu-clock sampling) of one scan, client and server.

    .venv-bench/bin/python benches/profile.py --contender riverlet --rows 10000000 --op scan

Starts the release server (`--fsync never`), loads the bench data with pyfluss, then runs one
worker (benches/worker.py) under `perf record -e cpu-clock -g` while a second perf records the
server process for the same time. Prints the top symbols of both (self time) and keeps the
perf.data files in --out (default /tmp/riverlet-profile). Hardware counters are not available on
every VM, which is why it samples the cpu-clock software event.
"""

from __future__ import annotations

import argparse
import json
import os
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


def scrape(addr: str) -> dict[tuple[str, str], float]:
    """The server's metrics (Prometheus text) as {(name, labels text): value}."""
    import urllib.request

    text = urllib.request.urlopen(f"http://{addr}/metrics", timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z_]+)(\{[^}]*\})?\s+(\S+)$", line)
        if m:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def waits(args, base: dict, work: Path) -> None:
    """One append (or upsert) by Riverlet with the writer's and the server's metrics, no perf:
    where the pipeline waits. Prints the measured counts, sizes and waits."""
    server = run.Server(work / "server-waits", ("--metrics-port", "0"))
    try:
        addr = None
        for _ in range(100):
            addr = next((ln.split("metrics:", 1)[1].strip() for ln in server.lines
                         if ln.startswith("metrics:")), None)
            if addr:
                break
            time.sleep(0.1)
        if not addr:
            sys.exit("the server did not print its metrics address")
        api = "PRODUCE_LOG" if args.op == "append" else "PUT_KV"
        before, cpu0 = scrape(addr), server.cpu_s()
        spec = dict(base, bootstrap=server.bootstrap, op=args.op, contender="riverlet",
                    table=f"bench.{args.op}_waits", rows=args.rows, metrics=True)
        r = run.run_worker(spec, 600)
        after, cpu1 = scrape(addr), server.cpu_s()
    finally:
        server.stop()
    wall = r["seconds"]
    cm = {(m["name"], m["labels"].get("api") or m["labels"].get("on") or ""): m["value"]
          for m in r["metrics"]}

    def c(name, label=""):
        return cm.get((name, label), 0.0)

    def s(name, label):
        key = [k for k in after if k[0] == name and f'api="{label}"' in k[1]]
        return sum(after[k] - before.get(k, 0.0) for k in key)

    reqs = c("riverlet_client_writer_requests_total", api)
    batches = c("riverlet_client_writer_request_batches_total", api)
    nbytes = c("riverlet_client_writer_request_bytes_total", api)
    print(f"{args.op} of {r['rows']:,} rows: {wall:.3f} s wall, client cpu {r['timed_cpu_s']:.2f} s, "
          f"server cpu {cpu1 - cpu0:.2f} s, load average {os.getloadavg()[0]:.2f}")
    print(f"requests {reqs:.0f}, batches {batches:.0f} ({batches / max(reqs, 1):.2f} per request), "
          f"mean batch {nbytes / max(batches, 1) / 1e6:.3f} MB, mean request {nbytes / max(reqs, 1) / 1e6:.3f} MB")
    lat = c("riverlet_client_request_seconds_sum", api)
    infl = c("riverlet_client_writer_batch_in_flight_seconds_sum")
    print(f"mean requests in flight (Little: sum of request times / wall) {lat / wall:.2f}; "
          f"mean batches in flight {infl / wall:.2f} ({infl / wall / args.buckets:.2f} per bucket)")
    bw, bn = c("riverlet_client_writer_buffer_wait_seconds_sum"), c("riverlet_client_writer_buffer_wait_seconds_count")
    print(f"caller blocked on buffer memory: {bw:.3f} s ({bw / wall:.0%} of wall) in {bn:.0f} waits")
    es, en = c("riverlet_client_writer_encode_seconds_sum"), c("riverlet_client_writer_encode_seconds_count")
    print(f"encoding: {en:.0f} batches, {es:.3f} s summed ({es / wall / (os.cpu_count() or 2):.0%} of the encoding slots)")
    for on in ("writes", "encoding", "acks", "encoding_and_acks"):
        w = c("riverlet_client_writer_task_wait_seconds_sum", on)
        print(f"writer task asleep waiting on {on}: {w:.3f} s ({w / wall:.0%} of wall)")
    q = s("riverlet_server_request_queued_seconds_sum", api)
    h = s("riverlet_server_request_seconds_sum", api)
    n = s("riverlet_server_request_seconds_count", api)
    print(f"server {api}: {n:.0f} requests, queued {q:.3f} s summed ({q / max(n, 1) * 1e3:.2f} ms mean), "
          f"handled {h:.3f} s summed ({h / max(n, 1) * 1e3:.2f} ms mean, {h / wall:.0%} of wall)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--contender", default="riverlet")
    ap.add_argument("--op", default="scan")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--out", default="/tmp/riverlet-profile")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--waits", action="store_true",
                    help="no perf: one Riverlet append/upsert with the writer's and server's metrics")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="riverlet-prof-"))
    data = work / "data.arrow"
    shape = run.generate(data, args.rows)
    if args.waits:
        try:
            waits(args, {"buckets": args.buckets, "data": str(data)}, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
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
