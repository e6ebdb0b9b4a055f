#!/usr/bin/env python3
"""The embedded server (`riverlet serve`) against Apache Fluss 0.9.1, same client, same data.

    .venv-bench/bin/python benches/server_vs_fluss.py                 # 2M rows, 3 runs per server
    .venv-bench/bin/python benches/server_vs_fluss.py --rows 500000 --runs 2 --out /tmp/s.md

Issue 17, item 4. Both servers run on this machine at the same time, on loopback:
  - riverlet: the release `riverlet-server` binary (the server `riverlet serve` runs), on a
    fresh data dir, `--fsync never` (Fluss does not fsync on its write path either: it leaves
    flushing to the OS, like Kafka);
  - Fluss: the real cluster of tests/fluss-cluster/start.sh (ZooKeeper, CoordinatorServer,
    TabletServer: three JVMs, its default heap options), on a fresh work dir.
The client is Riverlet's Python binding for both (benches/worker.py, one fresh process per
run): produce = `Table.append` of the bench data in 8192-row Arrow batches into a fresh
4-bucket log table, fetch = `Table.read()` of that table into a pyarrow Table. Servers
alternate run by run. Reported: rows/s of each, peak RSS (VmHWM) of every server process over
the whole run, and the cold start: process start to the first answered request
(`list_databases` through the same client, retried every 10 ms). Numbers are reported, never
asserted; the machine's load average is printed next to them.

Writes its section between `<!-- server-vs-fluss` markers into benches/RESULTS.md (kept by
benches/run.py) unless --out says otherwise; --no-write only prints.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import run as bench  # noqa: E402  (benches/run.py: data generator, workers, server binary)

CLUSTER = REPO / "tests" / "fluss-cluster"
MARK_START = "<!-- server-vs-fluss: written by benches/server_vs_fluss.py -->"
MARK_END = "<!-- /server-vs-fluss -->"


def log(msg: str) -> None:
    bench.log(msg)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(bootstrap: str, deadline_s: float) -> float:
    """Monotonic time at which `list_databases` through Riverlet's client first succeeded (the
    module is imported by main() before any server starts, so its import is not counted)."""
    import riverlet

    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        try:
            conn = riverlet.connect(bootstrap, connect_timeout=0.5, request_timeout=5.0)
            try:
                conn.list_databases()
                return time.monotonic()
            finally:
                conn.close()
        except Exception as e:  # noqa: BLE001 - any failure means "not answering yet"
            last = e
            time.sleep(0.01)
    raise RuntimeError(f"no answer from {bootstrap} within {deadline_s}s: {last}")


def vm_hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pids) -> float:
    """User + system CPU seconds the processes `pids` used so far (all their threads)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


class RiverletServer:
    def __init__(self, data_dir: Path):
        self.port = free_port()
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [str(bench.SERVER_BIN), "--data-dir", str(data_dir), "--port", str(self.port),
             "--fsync", "never"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.cold_start_s = first_answer(self.bootstrap, 60) - t0

    def rss(self) -> dict:
        return {"riverlet-server": vm_hwm_kib(self.proc.pid)}

    def server_pids(self) -> list[int]:
        return [self.proc.pid]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class FlussCluster:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        t0 = time.monotonic()
        r = subprocess.run(["bash", str(CLUSTER / "start.sh"), str(workdir)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("tests/fluss-cluster/start.sh failed:\n" + r.stderr[-3000:])
        self.start_script_s = time.monotonic() - t0
        env = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        self.bootstrap = env["FLUSS_BOOTSTRAP"]
        self.version = env.get("FLUSS_VERSION", "?")
        self.cold_start_s = first_answer(self.bootstrap, 120) - t0
        self.pids = {role: int((workdir / "pids" / f"{role}.pid").read_text().strip())
                     for role in ("zookeeper", "coordinator", "tablet-0")}

    def rss(self) -> dict:
        return {f"fluss {role}": vm_hwm_kib(pid) for role, pid in self.pids.items()}

    def server_pids(self) -> list[int]:
        """The JVMs a produce or fetch can make work: coordinator and tablet server."""
        return [self.pids["coordinator"], self.pids["tablet-0"]]

    def stop(self) -> None:
        subprocess.run(["bash", str(CLUSTER / "stop.sh"), "--clean", str(self.workdir)],
                       capture_output=True, text=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--worker-timeout", type=float, default=600)
    args = ap.parse_args()
    if not bench.SERVER_BIN.exists():
        sys.exit(f"{bench.SERVER_BIN} is missing: cargo build --release -p riverlet-server")
    ok, info = bench.riverlet_available()
    if not ok:
        sys.exit(f"the riverlet Python binding is not importable: {info}")
    import riverlet  # noqa: F401  (imported here so no cold start counts the import)

    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="riverlet-vs-fluss-"))
    servers: dict = {}
    res: dict = {"args": vars(args), "generated": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
                 "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                          capture_output=True, text=True).stdout.strip()}
    try:
        data_file = work / "data.arrow"
        r = subprocess.run([sys.executable, str(HERE / "run.py"), "--generate-only",
                            str(data_file), str(args.rows)], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("data generation failed:\n" + r.stderr)
        shape = json.loads(r.stdout.strip().splitlines()[-1])
        res["shape"] = shape
        log(f"data: {args.rows:,} rows, {shape['arrow_bytes'] / 1e6:.1f} MB of Arrow buffers")

        servers["riverlet"] = RiverletServer(work / "riverlet-data")
        log(f"riverlet-server: first answer {servers['riverlet'].cold_start_s * 1000:.0f} ms "
            "after spawn")
        servers["fluss"] = FlussCluster(work / "fluss")
        log(f"Fluss {servers['fluss'].version}: start.sh {servers['fluss'].start_script_s:.1f}s, "
            f"first answer {servers['fluss'].cold_start_s:.1f}s after start.sh began")

        produce: dict = {k: [] for k in servers}
        fetch: dict = {k: [] for k in servers}
        names = list(servers)
        for run in range(args.runs):
            for name in (names if run % 2 == 0 else names[::-1]):
                s = servers[name]
                base = {"bootstrap": s.bootstrap, "buckets": args.buckets, "data": str(data_file),
                        "contender": "riverlet"}
                table = f"vs.t_{run}"
                c0 = cpu_seconds(s.server_pids())
                w = bench.run_worker(dict(base, op="append", table=table, rows=args.rows,
                                          keep=True), args.worker_timeout)
                c1 = cpu_seconds(s.server_pids())
                w["server_cpu_s"] = c1 - c0
                produce[name].append(w)
                f = bench.run_worker(dict(base, op="scan", table=table), args.worker_timeout)
                f["server_cpu_s"] = cpu_seconds(s.server_pids()) - c1
                if f["rows"] != args.rows:
                    res.setdefault("warnings", []).append(
                        f"{name} run {run}: read {f['rows']:,} rows, wrote {args.rows:,}")
                fetch[name].append(f)
                log(f"{name} run {run}: produce {w['seconds']:.2f}s, fetch {f['seconds']:.2f}s "
                    f"({f['rows']:,} rows)")
        res["produce"] = produce
        res["fetch"] = fetch
        res["rss_kib"] = {k: s.rss() for k, s in servers.items()}
        res["cold_start_s"] = {k: s.cold_start_s for k, s in servers.items()}
        res["fluss_start_script_s"] = servers["fluss"].start_script_s
        res["fluss_version"] = servers["fluss"].version
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(work, ignore_errors=True)
    res["loadavg"] = {"start": load_start, "end": os.getloadavg()}
    text, ratios = report(res)
    print(text)
    if not args.no_write:
        write(Path(args.out), text)
        log(f"wrote the server-vs-fluss section of {args.out}")
    print("Ratios:")
    for line in ratios:
        print("  " + line)


def report(res: dict) -> tuple[str, list[str]]:
    a = res["args"]
    rows = a["rows"]
    mb = res["shape"]["arrow_bytes"] / 1e6
    md: list[str] = []
    p = md.append
    ratios: list[str] = []
    la = res["loadavg"]
    p(MARK_START)
    p("## The embedded server vs Apache Fluss (issue 17, item 4)")
    p("")
    p(f"Generated by `benches/server_vs_fluss.py --rows {rows} --runs {a['runs']}` on "
      f"{res['generated']} (commit {res['commit']}), {os.cpu_count()} cores; load average "
      f"(1/5/15 min) at start {la['start'][0]:.2f}/{la['start'][1]:.2f}/{la['start'][2]:.2f}, at end "
      f"{la['end'][0]:.2f}/{la['end'][1]:.2f}/{la['end'][2]:.2f} (above ~0: other processes shared "
      "the cores). Both servers ran at the same time on loopback, runs alternating between them: "
      "the release `riverlet-server` (what `riverlet serve` runs) with `--fsync never`, and Apache "
      f"Fluss {res['fluss_version']} as tests/fluss-cluster/start.sh starts it (ZooKeeper, "
      "coordinator and tablet server JVMs, `-Xms128m -Xmx1g` each server, ZooKeeper `-Xmx256m`). "
      "Same client for both: Riverlet's Python binding, a fresh process per run; produce = "
      f"`Table.append` of {rows:,} rows ({mb:.0f} MB of Arrow) in 8192-row batches into a fresh "
      f"{a['buckets']}-bucket log table (Fluss's default ZSTD), fetch = `Table.read()` of it.")
    for w in res.get("warnings", []):
        p(f"- **Warning**: {w}")
    p("")
    p("| server | produce median s (min–max) | produce rows/s | fetch median s (min–max) | fetch rows/s |")
    p("| --- | --- | --- | --- | --- |")
    rate = {}
    for name in ("riverlet", "fluss"):
        ps = bench.summary([r["seconds"] for r in res["produce"][name]])
        fs = bench.summary([r["seconds"] for r in res["fetch"][name]])
        rate[name] = (rows / ps["median"], rows / fs["median"])
        p(f"| {name} | {ps['median']:.2f} ({ps['min']:.2f}–{ps['max']:.2f}) | "
          f"{bench.fmt_rate(rate[name][0])} | {fs['median']:.2f} ({fs['min']:.2f}–{fs['max']:.2f}) | "
          f"{bench.fmt_rate(rate[name][1])} |")
    p("")
    # The client is the same for both servers, so the wall-time ratios above are capped by the
    # client's own work (its ZSTD on produce, its decoding on fetch); the servers' CPU is what
    # each server itself spends on the same requests.
    cpu = {}
    p("| server | server CPU s per produce, median (min–max) | per fetch |")
    p("| --- | --- | --- |")
    for name in ("riverlet", "fluss"):
        pc = bench.summary([r.get("server_cpu_s") for r in res["produce"][name]])
        fc = bench.summary([r.get("server_cpu_s") for r in res["fetch"][name]])
        cpu[name] = (pc.get("median", 0.0), fc.get("median", 0.0))

        def cell(c: dict) -> str:
            return f"{c['median']:.2f} ({c['min']:.2f}–{c['max']:.2f})" if c["n"] else "n/a"
        p(f"| {name} | {cell(pc)} | {cell(fc)} |")
    p("")
    p("Server CPU: user + system seconds of the server processes during the worker run "
      "(`/proc/PID/stat`; Riverlet: its one process; Fluss: the coordinator and tablet-server "
      "JVMs, GC and JIT threads included), from the worker's start to its exit, table "
      "creation included.")
    p("")
    rss = res["rss_kib"]
    p("| process | peak RSS MiB (VmHWM over the whole run) |")
    p("| --- | --- |")
    fluss_total = 0
    for name in ("riverlet", "fluss"):
        for proc, kib in rss[name].items():
            p(f"| {proc} | {kib / 1024:.0f} |" if kib else f"| {proc} | n/a |")
            if name == "fluss" and kib:
                fluss_total += kib
    p(f"| fluss, all three JVMs | {fluss_total / 1024:.0f} |")
    p("")
    cs = res["cold_start_s"]
    p("| server | cold start to the first answered request |")
    p("| --- | --- |")
    p(f"| riverlet | {cs['riverlet'] * 1000:.0f} ms (process spawn to `list_databases` answered) |")
    p(f"| fluss | {cs['fluss']:.1f} s (start.sh began to `list_databases` answered; start.sh "
      f"itself took {res['fluss_start_script_s']:.1f} s, waiting for the tablet server to "
      "register) |")
    p("")
    riv_rss = rss["riverlet"]["riverlet-server"] or 0
    ratios.append(f"produce riverlet-server / Fluss: {rate['riverlet'][0] / rate['fluss'][0]:.2f}x")
    ratios.append(f"fetch riverlet-server / Fluss: {rate['riverlet'][1] / rate['fluss'][1]:.2f}x")
    if cpu["riverlet"][0] > 0 and cpu["riverlet"][1] > 0:
        ratios.append(f"server CPU per produce Fluss / riverlet-server: "
                      f"{cpu['fluss'][0] / cpu['riverlet'][0]:.1f}x; per fetch: "
                      f"{cpu['fluss'][1] / cpu['riverlet'][1]:.1f}x")
    if fluss_total:
        ratios.append(f"peak RSS riverlet-server / Fluss (all JVMs): {riv_rss / fluss_total:.3f}x "
                      f"({riv_rss / 1024:.0f} vs {fluss_total / 1024:.0f} MiB); vs the tablet "
                      f"server alone: {riv_rss / (rss['fluss']['fluss tablet-0'] or 1):.3f}x")
    ratios.append(f"cold start riverlet-server / Fluss: {cs['riverlet'] / cs['fluss']:.4f}x "
                  f"({cs['fluss'] / cs['riverlet']:.0f}x faster)")
    p("**Ratios:**")
    p("")
    for line in ratios:
        p(f"- {line}")
    p("")
    p(MARK_END)
    return "\n".join(md) + "\n", ratios


def write(out: Path, text: str) -> None:
    old = out.read_text() if out.exists() else ""
    if MARK_START.split(":")[0] in old and MARK_END in old:
        head, rest = old.split(MARK_START.split(":")[0], 1)
        tail = rest.split(MARK_END, 1)[1]
        new = head + text.rstrip("\n") + tail
    else:
        new = old.rstrip("\n") + "\n\n" + text
    out.write_text(new)


if __name__ == "__main__":
    main()
