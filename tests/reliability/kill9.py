"""Crash safety, measured: kill -9 of `riverlet serve` during concurrent acknowledged writes.

One `riverlet serve` (`--fsync` at its default, `always`) on one data directory and one port.
Several writer threads (each its own connection and idempotent client writers) run for the whole
test, each mixing appends of (w, seq) rows to a log table with upserts and deletes of its own
keys of a primary-key table; a call counts as acknowledged when it returned without error. Each
cycle lets them write for a random time, SIGKILLs the server, restarts it on the same directory
and port (the writers' retries reach the restarted server, so a batch the dead server may or may
not have stored is sent again and must be deduplicated), lets them write on, pauses them and
checks:
- every acknowledged log row is present exactly once, no row (acknowledged or not) twice, no
  row that was never written, and each writer's rows in the order it wrote them;
- the primary-key table, read through the KV scan, through lookups of every key and as the fold
  of its changelog, equals the fold of the acknowledged upserts and deletes; a key may instead
  hold the result of a write whose call failed (the server may have applied it: "in flight")
  when no acknowledged write of that key followed it;
- offsets strictly increase and commit timestamps never decrease in both changelogs, and what an
  earlier check saw is still there unchanged (a restart never rewrites acknowledged history).
Prints one report line per cycle and a summary; exits 1 on any finding. The writers and the
checks are in workload.py (shared with failover.py).

    .venv/bin/python tests/reliability/kill9.py [--cycles 20] [--writers 4] [--seed N]
        [--server target/debug/riverlet]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import riverlet

# The workload and its checks, shared with failover.py (the script's directory is on sys.path).
from workload import LOG_SCHEMA, PAUSE_LIMIT_S, PK_SCHEMA, Writer, check  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Server:
    """`riverlet serve` (or the standalone `riverlet-server`, same flags) on a fixed data dir."""

    def __init__(self, binary: str, data_dir: str, env: Optional[dict[str, str]] = None) -> None:
        self.binary, self.data_dir, self.port = binary, data_dir, 0
        self.env = None if env is None else {**os.environ, **env}
        self.proc: Optional[subprocess.Popen] = None
        self.bootstrap = ""

    def start(self) -> float:
        sub = [] if Path(self.binary).name.startswith("riverlet-server") else ["serve"]
        t0 = time.monotonic()
        # the first start picks a free port; restarts take the same one, so clients reconnect
        for _ in range(50):
            p = subprocess.Popen(
                [self.binary, *sub, "--data-dir", self.data_dir, "--port", str(self.port)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=self.env,
            )
            line = p.stdout.readline().strip() if p.stdout else ""
            if line.startswith("bootstrap: "):
                self.proc, self.bootstrap = p, line.removeprefix("bootstrap: ")
                self.port = int(self.bootstrap.rsplit(":", 1)[1])
                return time.monotonic() - t0
            p.kill()
            p.wait()
            time.sleep(0.1)  # the port may still be held by the process just killed
        raise SystemExit(f"server did not start on port {self.port}: {line!r}")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--server", default=str(ROOT / "target" / "debug" / "riverlet"))
    ap.add_argument("--max-run", type=float, default=3.0,
                    help="longest seconds of writing before the kill (at least 0.5)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-idempotence", action="store_true",
                    help="non-idempotent writers: the checks should then find duplicates")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)
    total_rows = total_findings = 0
    t_start = time.monotonic()
    print(f"kill9: {a.cycles} cycles, {a.writers} writers, seed {seed}, server {a.server}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="riverlet-kill9-") as d:
        server = Server(a.server, d)
        server.start()
        try:
            with riverlet.connect(server.bootstrap) as conn:
                conn.create_database("rel", if_not_exists=True)
                conn.create_table("rel.log", LOG_SCHEMA, buckets=1)
                conn.create_table("rel.pk", PK_SCHEMA, primary_key=["k"], buckets=1)
            writers = [Writer(w, server.bootstrap, rnd.randrange(1 << 30), not a.no_idempotence)
                       for w in range(a.writers)]
            for w in writers:
                w.start()
            history: dict = {}
            known: set[str] = set()  # a finding stays true in later cycles: count it once
            for cycle in range(1, a.cycles + 1):
                t0 = time.monotonic()
                acked0 = sum(len(w.acked) for w in writers)
                for w in writers:
                    w.resume()
                run_s = rnd.uniform(0.5, max(0.5, a.max_run))
                time.sleep(run_s)  # the kill lands mid-write by design
                server.kill9()
                acked_at_kill = sum(len(w.acked) for w in writers)
                time.sleep(rnd.uniform(0.0, 0.5))
                down_s = server.start()
                time.sleep(rnd.uniform(0.2, 1.0))  # writes after the restart, retries first
                stuck = [w.w for w in writers if not w.pause()]
                errors = [w.error for w in writers if w.error]
                rows, findings, _ = check(server.bootstrap, writers, history)
                findings += [f"writer {s} still busy {PAUSE_LIMIT_S:.0f} s after pause"
                             for s in stuck]
                findings += errors
                total_rows += rows
                findings = [f for f in findings if f not in known]
                known.update(findings)
                total_findings += len(findings)
                ops = {k: sum(w.ops[k] for w in writers) for k in writers[0].ops}
                print(f"cycle {cycle}/{a.cycles}: ran {run_s:.1f} s, acked appends "
                      f"{acked_at_kill - acked0} before the kill and "
                      f"{sum(len(w.acked) for w in writers) - acked_at_kill} after the restart "
                      f"(restart {down_s:.1f} s); total rows acked "
                      f"{sum(len(w.acked) for w in writers)}, "
                      f"upserts {ops['upsert']}, deletes {ops['delete']}, failed calls "
                      f"{ops['failed']}; rows checked {rows}; new findings {len(findings)}"
                      f" ({time.monotonic() - t0:.1f} s)"
                      + ("" if not findings else ": " + "; ".join(findings[:5])), flush=True)
                if stuck or errors:
                    break
            for w in writers:
                w.finish()
        finally:
            server.stop()
    acked = sum(len(w.acked) for w in writers)
    print(f"kill9: {a.cycles} cycles, {acked} acknowledged appended rows, "
          f"{sum(w.ops['upsert'] + w.ops['delete'] for w in writers)} acknowledged upsert/delete "
          f"calls, {total_rows} rows checked, {total_findings} findings, "
          f"{time.monotonic() - t_start:.0f} s")
    return 1 if total_findings else 0


if __name__ == "__main__":
    sys.exit(main())
