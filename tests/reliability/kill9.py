"""Crash safety, measured: kill -9 of `riverlet serve` during concurrent acknowledged writes.

Each cycle starts the server on the same data directory (--fsync at its default, always), runs
several writer threads (each its own connection; idempotent client writers) that append rows to
a log table and upsert keys of a primary-key table, kills the server with SIGKILL at a random
moment, restarts it and checks:
- every acknowledged appended row is present exactly once, no row (acknowledged or not) twice;
- the PK table equals the fold of the acknowledged upserts (a key may instead hold the value of
  the one upsert that was in flight, unacknowledged, when the server died);
- changelog offsets strictly increase and commit timestamps never decrease.
Prints one report line per cycle and a summary; exits 1 on any finding.

    .venv/bin/python tests/reliability/kill9.py [--cycles 20] [--server target/debug/riverlet]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa

import riverlet

ROOT = Path(__file__).resolve().parents[2]
LOG_SCHEMA = pa.schema([("w", pa.int32()), ("seq", pa.int32())])
PK_SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("w", pa.int32()), ("seq", pa.int32())])
KEYS_PER_WRITER = 20


def start(server: str, data_dir: str) -> tuple[subprocess.Popen, str]:
    # `riverlet serve ...` or the standalone `riverlet-server ...` (same flags)
    sub = [] if Path(server).name.startswith("riverlet-server") else ["serve"]
    p = subprocess.Popen(
        [server, *sub, "--data-dir", data_dir, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    line = p.stdout.readline().strip() if p.stdout else ""
    if not line.startswith("bootstrap: "):
        p.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return p, line.removeprefix("bootstrap: ")


class Writer(threading.Thread):
    """Appends (w, seq) rows and upserts key w*K + seq%K := seq until an error."""

    def __init__(self, w: int, bootstrap: str, seq0: int, state: dict) -> None:
        super().__init__(daemon=True)
        self.w, self.bootstrap, self.seq, self.state = w, bootstrap, seq0, state

    def run(self) -> None:
        try:
            conn = riverlet.connect(self.bootstrap, request_timeout=5.0)
            log, pk = conn.table("rel.log"), conn.table("rel.pk")
        except riverlet.RiverletError:
            return
        while True:
            s = self.seq
            self.seq += 1
            try:
                self.state["attempted"].add((self.w, s))
                log.append([{"w": self.w, "seq": s}])
                self.state["acked"].add((self.w, s))
                k = self.w * KEYS_PER_WRITER + s % KEYS_PER_WRITER
                self.state["pk_inflight"][k] = s
                pk.upsert([{"k": k, "w": self.w, "seq": s}])
                self.state["pk_acked"][k] = s
                del self.state["pk_inflight"][k]
            except Exception:  # noqa: BLE001 - any failure means "not acknowledged"
                return


def check(bootstrap: str, state: dict) -> tuple[int, list[str]]:
    findings: list[str] = []
    with riverlet.connect(bootstrap, request_timeout=30.0) as conn:
        log = conn.table("rel.log").changelog()
        pairs = list(zip(log.column("w").to_pylist(), log.column("seq").to_pylist()))
        seen: dict = {}
        for p in pairs:
            seen[p] = seen.get(p, 0) + 1
        for p, n in seen.items():
            if n > 1:
                findings.append(f"log row {p} present {n} times")
            if p not in state["attempted"]:
                findings.append(f"log row {p} was never written")
        for p in state["acked"]:
            if p not in seen:
                findings.append(f"acknowledged log row {p} lost")
        offsets = log.column("_log_offset").to_pylist()
        ts = log.column("_commit_timestamp").to_pylist()
        if any(b <= a for a, b in zip(offsets, offsets[1:])):
            findings.append("log offsets not strictly increasing")
        if any(b < a for a, b in zip(ts, ts[1:])):
            findings.append("commit timestamps decrease")
        pk = conn.table("rel.pk").read()
        got = dict(zip(pk.column("k").to_pylist(), pk.column("seq").to_pylist()))
        for k, s in state["pk_acked"].items():
            if got.get(k) != s and got.get(k) != state["pk_inflight"].get(k):
                findings.append(f"key {k}: {got.get(k)} instead of acknowledged {s}")
        for k in got:
            if k not in state["pk_acked"] and k not in state["pk_inflight"]:
                findings.append(f"key {k} present but never acknowledged")
        # unacknowledged in-flight upserts that were not applied are settled by the next cycle
        state["pk_inflight"] = {k: v for k, v in state["pk_inflight"].items() if got.get(k) == v}
        for k, v in list(state["pk_inflight"].items()):
            state["pk_acked"][k] = v
        state["pk_inflight"] = {}
    return len(pairs) + len(got), findings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--server", default=str(ROOT / "target" / "debug" / "riverlet"))
    ap.add_argument("--max-run", type=float, default=2.0, help="longest seconds before the kill")
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    state: dict = {"attempted": set(), "acked": set(), "pk_acked": {}, "pk_inflight": {}}
    total_rows = 0
    total_findings = 0
    with tempfile.TemporaryDirectory(prefix="riverlet-kill9-") as d:
        p, bootstrap = start(a.server, d)
        with riverlet.connect(bootstrap) as conn:
            conn.create_database("rel", if_not_exists=True)
            conn.create_table("rel.log", LOG_SCHEMA, buckets=1)
            conn.create_table("rel.pk", PK_SCHEMA, primary_key=["k"], buckets=1)
        for cycle in range(1, a.cycles + 1):
            seq0 = cycle * 1_000_000
            ws = [Writer(w, bootstrap, seq0, state) for w in range(a.writers)]
            for w in ws:
                w.start()
            time.sleep(rnd.uniform(0.2, a.max_run))  # the kill lands mid-write by design
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            for w in ws:
                w.join(timeout=60)
            p, bootstrap = start(a.server, d)
            rows, findings = check(bootstrap, state)
            total_rows += rows
            total_findings += len(findings)
            print(f"cycle {cycle}/{a.cycles}: acked appends {len(state['acked'])}, "
                  f"keys {len(state['pk_acked'])}, rows checked {rows}, findings {len(findings)}"
                  + ("" if not findings else ": " + "; ".join(findings[:5])), flush=True)
        p.kill()
        p.wait()
    print(f"kill9: {a.cycles} cycles, {total_rows} rows checked, {total_findings} findings")
    return 1 if total_findings else 0


if __name__ == "__main__":
    sys.exit(main())
