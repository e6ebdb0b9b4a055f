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
Prints one report line per cycle and a summary; exits 1 on any finding.

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
import threading
import time
from pathlib import Path
from typing import Optional

import pyarrow as pa

import riverlet

ROOT = Path(__file__).resolve().parents[2]
LOG_SCHEMA = pa.schema([("w", pa.int32()), ("seq", pa.int64())])
PK_SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), nullable=False), ("w", pa.int32()), ("seq", pa.int64())]
)
KEYS_PER_WRITER = 16
ABSENT = None  # the value of a deleted or never-written key
# A paused writer finishes the call it is in; a call retries for at most the client's delivery
# timeout (120 s), so a writer still busy after this is stuck: a finding, not a wait.
PAUSE_LIMIT_S = 150.0


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


class Writer(threading.Thread):
    """Appends (w, seq) rows and upserts/deletes keys w*K .. w*K+K-1, recording each outcome.

    `acked` and `attempted` hold log rows; for each key, `pk_acked` holds the value of the last
    acknowledged write (ABSENT for a delete) and `pk_maybe` the values of the failed writes
    since then (each may or may not have been applied).
    """

    def __init__(self, w: int, bootstrap: str, seed: int, idempotent: bool = True) -> None:
        super().__init__(daemon=True, name=f"writer-{w}")
        self.w, self.bootstrap, self.rnd = w, bootstrap, random.Random(seed)
        self.props = {} if idempotent else {"client.writer.enable-idempotence": "false"}
        self.seq = 0
        self.attempted: set[tuple[int, int]] = set()
        self.acked: set[tuple[int, int]] = set()
        self.pk_acked: dict[int, Optional[int]] = {}
        self.pk_maybe: dict[int, list[Optional[int]]] = {}
        self.ops = {"append": 0, "upsert": 0, "delete": 0, "failed": 0}
        self.run_flag = threading.Event()
        self.idle = threading.Event()
        self.stopped = False
        self.error: Optional[str] = None

    def run(self) -> None:
        try:
            conn = riverlet.connect(self.bootstrap, request_timeout=5.0, properties=self.props)
            log, pk = conn.table("rel.log"), conn.table("rel.pk")
        except riverlet.RiverletError as e:
            self.error = f"writer {self.w} could not start: {e}"
            self.idle.set()
            return
        while True:
            if not self.run_flag.is_set():
                self.idle.set()
                self.run_flag.wait()
                if self.stopped:
                    return
            self.idle.clear()
            if self.rnd.random() < 0.5:
                self.append(log)
            else:
                self.upsert_or_delete(pk)

    def append(self, log: riverlet.Table) -> None:
        rows = []
        for _ in range(self.rnd.randint(1, 4)):
            rows.append({"w": self.w, "seq": self.seq})
            self.attempted.add((self.w, self.seq))
            self.seq += 1
        try:
            log.append(rows)
        except riverlet.RiverletError:
            self.ops["failed"] += 1
            return
        self.acked.update((r["w"], r["seq"]) for r in rows)
        self.ops["append"] += 1

    def upsert_or_delete(self, pk: riverlet.Table) -> None:
        # distinct keys per call: the fold of one call does not depend on the order within it
        keys = self.rnd.sample(range(KEYS_PER_WRITER), self.rnd.randint(1, 3))
        keys = [self.w * KEYS_PER_WRITER + k for k in keys]
        delete = self.rnd.random() < 0.2
        value: Optional[int] = ABSENT if delete else self.seq
        self.seq += 1
        try:
            if delete:
                pk.delete(keys)
            else:
                pk.upsert([{"k": k, "w": self.w, "seq": value} for k in keys])
        except riverlet.RiverletError:
            self.ops["failed"] += 1
            for k in keys:
                self.pk_maybe.setdefault(k, []).append(value)
            return
        for k in keys:
            self.pk_acked[k] = value
            self.pk_maybe.pop(k, None)
        self.ops["delete" if delete else "upsert"] += 1

    def pause(self) -> bool:
        self.run_flag.clear()
        return self.idle.wait(PAUSE_LIMIT_S)

    def resume(self) -> None:
        self.idle.clear()
        self.run_flag.set()

    def finish(self) -> None:
        self.stopped = True
        self.run_flag.set()


def monotone(name: str, t: pa.Table, findings: list[str]) -> list[tuple]:
    offsets = t.column("_log_offset").to_pylist()
    ts = t.column("_commit_timestamp").to_pylist()
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
        findings.append(f"{name}: changelog offsets not strictly increasing")
    if any(b < a for a, b in zip(ts, ts[1:])):
        findings.append(f"{name}: commit timestamps decrease")
    cols = [t.column(c).to_pylist() for c in t.column_names]
    return list(zip(*cols))


def check(bootstrap: str, writers: list[Writer], history: dict) -> tuple[int, list[str]]:
    """The checks of the module docstring; returns (rows checked, findings)."""
    findings: list[str] = []
    attempted = set().union(*(w.attempted for w in writers))
    acked = set().union(*(w.acked for w in writers))
    with riverlet.connect(bootstrap, request_timeout=30.0) as conn:
        log_table, pk_table = conn.table("rel.log"), conn.table("rel.pk")
        log = log_table.changelog()
        pk_log = pk_table.changelog()
        kv = pk_table.read()
        all_keys = [k for w in writers
                    for k in range(w.w * KEYS_PER_WRITER, (w.w + 1) * KEYS_PER_WRITER)]
        looked_up = pk_table.lookup_many(all_keys)

    # --- the log table
    for name, t in (("rel.log", log), ("rel.pk", pk_log)):
        rows = monotone(name, t, findings)
        before = history.get(name, [])
        if rows[: len(before)] != before:
            at = next((i for i, (a, b) in enumerate(zip(rows, before)) if a != b), len(rows))
            findings.append(f"{name}: changelog seen by the last check changed at entry {at}")
        history[name] = rows
    pairs = list(zip(log.column("w").to_pylist(), log.column("seq").to_pylist()))
    seen: dict[tuple[int, int], int] = {}
    for p in pairs:
        seen[p] = seen.get(p, 0) + 1
    for p, n in seen.items():
        if n > 1:
            findings.append(f"log row {p} present {n} times")
        if p not in attempted:
            findings.append(f"log row {p} was never written")
    lost = sorted(acked - seen.keys())
    if lost:
        findings.append(f"{len(lost)} acknowledged log rows lost, e.g. {lost[:3]}")
    last_seq: dict[int, int] = {}
    for w, s in pairs:
        if s < last_seq.get(w, -1):
            findings.append(f"writer {w}: row seq {s} stored after seq {last_seq[w]}")
        last_seq[w] = max(s, last_seq.get(w, -1))

    # --- the primary-key table: KV scan, lookups, changelog fold, against the client's fold
    views: dict[str, dict[int, Optional[int]]] = {
        "KV scan": dict(zip(kv.column("k").to_pylist(), kv.column("seq").to_pylist())),
        "lookup": dict(zip(looked_up.column("k").to_pylist(), looked_up.column("seq").to_pylist())),
    }
    folded: dict[int, Optional[int]] = {}
    for ct, k, s in zip(pk_log.column("_change_type").to_pylist(), pk_log.column("k").to_pylist(),
                        pk_log.column("seq").to_pylist()):
        if ct in ("insert", "update_after"):
            folded[k] = s
        elif ct == "delete":
            folded.pop(k, None)
    views["changelog fold"] = folded
    for view, got in views.items():
        for w in writers:
            for k in range(w.w * KEYS_PER_WRITER, (w.w + 1) * KEYS_PER_WRITER):
                allowed = [w.pk_acked.get(k, ABSENT), *w.pk_maybe.get(k, [])]
                if got.get(k, ABSENT) not in allowed:
                    findings.append(f"{view}: key {k} = {got.get(k, ABSENT)}, expected one of "
                                    f"{allowed} (acknowledged first)")
        strangers = set(got) - set(all_keys)
        if strangers:
            findings.append(f"{view}: keys {sorted(strangers)[:5]} were never written")
    # The outcome of a failed write is now known (the writers are paused): settle it, so that
    # the next cycle holds the server to it.
    for w in writers:
        for k in list(w.pk_maybe):
            w.pk_acked[k] = views["KV scan"].get(k, ABSENT)
            del w.pk_maybe[k]
    return len(pairs) + len(pk_log) + len(kv) + len(looked_up), findings


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
                rows, findings = check(server.bootstrap, writers, history)
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
