"""A frozen leader, Riverlet beside Fluss's own Java client: is the stall the client's or Fluss's?

The failover check (failover.py, RELIABILITY.md) finds that while the tablet server leading most
buckets is frozen (SIGSTOP), appends to its buckets wait ~30 s, although their leadership moves
after ~10 s. This script runs both clients through the same freeze of the same cluster, so the
question is answered by Fluss's own client (the project's rule before calling anything upstream):

- a 3-tablet-server Apache Fluss 0.9.1 cluster (tests/fluss-cluster, `--tablets 3`), two log
  tables of 6 buckets (replication 3), one per client, round-robin bucket assignment;
- Riverlet (the Python package, one connection) and Fluss's Java client (fluss-client from Maven
  Central, peer/FlussAppendProbe.java, one connection), each with `--threads` threads appending
  one row at a time and waiting for its acknowledgement before the next;
- after `--warmup` s the server leading most buckets of both tables is frozen for `--freeze` s,
  then thawed; both clients go on for `--after` s;
- per client: appends acknowledged before / during / after the freeze, failed appends, and the
  stall: the longest wait of an append started during the freeze, and when the last append
  started in the freeze's first second was acknowledged (its bucket served again);
- the leaders' move, as `bucket_leaders()` saw it (once a second).

Prints a table and exits 0; it asserts nothing about either client's speed (a measurement, not a
test). Exits 1 when a client lost its connection entirely (no acknowledgement after the thaw) or
the harness failed.

    .venv/bin/python tests/reliability/freeze_peer.py [--threads 6] [--freeze 40] [--keep]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pyarrow as pa

import riverlet

sys.path.insert(0, str(Path(__file__).resolve().parent))
from failover import Cluster, HarnessError  # noqa: E402 - the script directory, not a package

HERE = Path(__file__).resolve().parent
DB = "fp"
SCHEMA = pa.schema([("w", pa.int32()), ("seq", pa.int64()), ("payload", pa.string())])
BUCKETS = 6
PROPS = {"client.writer.bucket.no-key-assigner": "round_robin"}


@dataclass
class Calls:
    """Finished appends of one client: (start, end) epoch seconds, and failures."""

    acks: list[tuple[float, float]] = field(default_factory=list)
    errors: list[tuple[float, float, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def riverlet_load(bootstrap: str, table: str, threads: int, until: float, calls: Calls) -> None:
    """`threads` Python threads sharing one Riverlet connection, one row per blocking append."""
    conn = riverlet.connect(bootstrap, properties=PROPS)
    t = conn.table(table)

    def body(w: int) -> None:
        seq = 0
        while time.time() < until:
            rows = pa.record_batch([pa.array([w], pa.int32()), pa.array([seq], pa.int64()),
                                    pa.array([f"riverlet-{w}-{seq}"])], schema=SCHEMA)
            start = time.time()
            try:
                t.append(rows)
                with calls.lock:
                    calls.acks.append((start, time.time()))
            except riverlet.RiverletError as e:
                with calls.lock:
                    calls.errors.append((start, time.time(), f"{type(e).__name__}: {e}"))
            seq += 1

    workers = [threading.Thread(target=body, args=(w,), daemon=True) for w in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    conn.close()


def fluss_classpath() -> str:
    """fluss-client's classpath, through Maven (peer/pom.xml)."""
    with tempfile.NamedTemporaryFile("r", suffix=".cp") as f:
        r = subprocess.run(["mvn", "-B", "-q", "-f", str(HERE / "peer" / "pom.xml"),
                            "dependency:build-classpath", f"-Dmdep.outputFile={f.name}"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise HarnessError(f"mvn could not resolve fluss-client:\n{r.stdout[-2000:]}")
        return f.read().strip()


def fluss_load(bootstrap: str, table: str, threads: int, seconds: float, calls: Calls,
               classpath: str) -> subprocess.Popen:
    """Fluss's Java client in a JVM of its own; a thread parses its lines into `calls`."""
    # The probe sets round-robin bucket assignment itself, as PROPS does for Riverlet.
    proc = subprocess.Popen(
        ["java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", classpath, str(HERE / "peer" / "FlussAppendProbe.java"), bootstrap,
         table, str(threads), str(seconds)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def parse() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.rstrip("\n").split(" ", 5)
            if parts[0] == "ack":
                with calls.lock:
                    calls.acks.append((int(parts[3]) / 1000, int(parts[4]) / 1000))
            elif parts[0] == "err":
                with calls.lock:
                    calls.errors.append((int(parts[3]) / 1000, int(parts[4]) / 1000,
                                         parts[5] if len(parts) > 5 else ""))

    threading.Thread(target=parse, daemon=True).start()
    return proc


def wait_for_leaders(conn: riverlet.Connection, table: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if all(d["leader_id"] is not None for d in conn.table(table).bucket_leaders()):
                return
        except riverlet.RiverletError:
            pass
        time.sleep(0.3)
    raise HarnessError(f"{table}: buckets without a leader after {limit:.0f} s")


def leaders(conn: riverlet.Connection, tables: list[str]) -> list[Optional[int]]:
    return [d["leader_id"] for t in tables for d in conn.table(t).bucket_leaders()]


def summarize(name: str, calls: Calls, t_freeze: float, t_thaw: float) -> dict[str, object]:
    with calls.lock:
        acks = list(calls.acks)
        errors = list(calls.errors)
    before = sum(1 for _, e in acks if e < t_freeze)
    during = sum(1 for _, e in acks if t_freeze <= e < t_thaw)
    after = sum(1 for _, e in acks if e >= t_thaw)
    # Every append that was waiting at some moment of the freeze, wherever it started.
    in_freeze = [(s, e) for s, e in acks if s < t_thaw and e > t_freeze]
    longest = max((e - s for s, e in in_freeze), default=0.0)
    # The appends waiting when the freeze began or started in its first second: the last of
    # them acknowledged is when every bucket was served again.
    first_second = [e for s, e in acks if s < t_freeze + 1 and e > t_freeze]
    served = (max(first_second) - t_freeze) if first_second else None
    # Acknowledgements per 2 s from 4 s before the freeze to 10 s after the thaw.
    bins = [0] * int((t_thaw - t_freeze + 14) // 2 + 1)
    for _, e in acks:
        i = int((e - (t_freeze - 4)) // 2)
        if 0 <= i < len(bins):
            bins[i] += 1
    calm = [e - s for s, e in acks if e < t_freeze]
    return {
        "client": name, "before": before, "during": during, "after": after,
        "failed": len(errors), "longest_wait_s": longest,
        "first_second_served_s": served,
        "median_ack_ms_before": 1000 * statistics.median(calm) if calm else None,
        "errors": Counter(m.split(":")[0] for _, _, m in errors).most_common(3),
        "timeline": bins,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=6)
    ap.add_argument("--warmup", type=float, default=15)
    ap.add_argument("--freeze", type=float, default=40)
    ap.add_argument("--after", type=float, default=20)
    ap.add_argument("--conf", action="append", default=[],
                    help="a server option 'key: value' for start.sh (repeatable), e.g. "
                         "'log.replica.max-lag-time: 10 s'")
    ap.add_argument("--clients", default="riverlet,fluss",
                    help="which clients run: riverlet, fluss or both (comma-separated)")
    ap.add_argument("--keep", action="store_true", help="keep the cluster's WORKDIR (logs)")
    a = ap.parse_args()
    clients = {c for c in a.clients.split(",") if c}
    if not clients or clients - {"riverlet", "fluss"}:
        ap.error(f"--clients takes riverlet, fluss or both; got {a.clients!r}")
    workdir = tempfile.mkdtemp(prefix="riverlet-freeze-peer-")
    cluster = Cluster(workdir)
    status = 0
    try:
        classpath = fluss_classpath() if "fluss" in clients else ""
        up = cluster.start(a.conf)
        print(f"freeze-peer: 3 tablet servers up in {up:.0f} s ({cluster.bootstrap}); "
              f"{a.threads} threads per client", flush=True)
        tables = [f"{DB}.riverlet", f"{DB}.fluss"]
        with riverlet.connect(cluster.bootstrap) as conn:
            conn.create_database(DB, if_not_exists=True)
            for t in tables:
                conn.create_table(t, SCHEMA, buckets=BUCKETS)
                wait_for_leaders(conn, t)
        total = a.warmup + a.freeze + a.after
        until = time.time() + total
        rv, fl = Calls(), Calls()
        java = (fluss_load(cluster.bootstrap, tables[1], a.threads, total, fl, classpath)
                if "fluss" in clients else None)
        rv_thread = threading.Thread(target=riverlet_load,
                                     args=(cluster.bootstrap, tables[0], a.threads, until, rv),
                                     daemon=True)
        if "riverlet" in clients:
            rv_thread.start()
        time.sleep(a.warmup)
        with riverlet.connect(cluster.bootstrap) as conn:
            view = leaders(conn, tables)
            per_server = Counter(x for x in view if x is not None)
            target = max(sorted(per_server), key=lambda i: per_server[i])
            print(f"freeze-peer: leaders before {view}; freezing tablet-{target} "
                  f"({per_server[target]} of {len(view)} buckets) for {a.freeze:.0f} s", flush=True)
            t_freeze = time.time()
            cluster.ctl("freeze", f"tablet-{target}")
            moved_at = None
            while time.time() < t_freeze + a.freeze:
                time.sleep(1.0)
                try:
                    now = leaders(conn, tables)
                except riverlet.RiverletError:
                    continue
                if moved_at is None and all(x is not None and x != target for x in now):
                    moved_at = time.time() - t_freeze
            cluster.ctl("thaw", f"tablet-{target}")
            t_thaw = time.time()
        if rv_thread.is_alive():
            rv_thread.join(a.after + 120)
        try:
            if java is not None:
                java.wait(a.after + 120)
        except subprocess.TimeoutExpired:
            java.kill()
            print("freeze-peer: the Java probe did not end; killed", flush=True)
        moved = f"{moved_at:.1f} s" if moved_at is not None else "not within the freeze"
        print(f"freeze-peer: every bucket had a leader other than tablet-{target} after {moved}")
        print(f"{'client':<22}{'acked before':>13}{'during':>8}{'after':>8}{'failed':>8}"
              f"{'median ack':>12}{'longest wait':>14}{'1st s served':>14}")
        for name, calls in (("riverlet (python)", rv), ("fluss java client", fl)):
            if name.split()[0] not in clients:
                continue
            s = summarize(name, calls, t_freeze, t_thaw)
            med = s["median_ack_ms_before"]
            served = s["first_second_served_s"]
            print(f"{name:<22}{s['before']:>13}{s['during']:>8}{s['after']:>8}{s['failed']:>8}"
                  f"{(f'{med:.0f} ms' if med is not None else '-'):>12}"
                  f"{s['longest_wait_s']:>12.1f} s"
                  f"{(f'{served:.1f} s' if served is not None else '-'):>14}")
            print(f"  acks per 2 s from 4 s before the freeze: {s['timeline']}")
            if s["errors"]:
                print(f"  {name} errors: {s['errors']}")
            if s["after"] == 0:
                print(f"freeze-peer: {name} acknowledged nothing after the thaw")
                status = 1
    except HarnessError as e:
        print(f"freeze-peer: harness failed: {e}", flush=True)
        status = 1
    finally:
        cluster.stop(clean=not a.keep)
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"freeze-peer: kept {workdir}")
    return status


if __name__ == "__main__":
    sys.exit(main())
