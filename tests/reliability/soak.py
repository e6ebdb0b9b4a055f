"""Soak: 8 writers and 8 readers against one `riverlet serve` for a given time, then checks.

Writers (each its own connection, idempotent client writers, at most --rate rows/s each) append
(w, seq, payload) rows to a log table and upsert their own keys of a primary-key table with
increasing values. Readers, concurrently: 2 full scans of the log table, 2 time-window reads of
its changelog, 2 lookup loops, 1 scan of the primary-key table, 1 subscription to the log table
from the earliest offset. What each read sees is checked while the load runs:
- a full scan returns at least the rows acknowledged before it started;
- a time-window read returns only rows committed inside the window, and no later read of that
  window returns fewer rows;
- a lookup returns, for each key, a value at least as new as the one acknowledged before it
  started (values only grow), and a key scan never more keys than were written.
After the load: every acknowledged write is readable (log: exactly the acknowledged rows, each
once; primary-key table: exactly the acknowledged value of every key; the subscription: every
row exactly once) and the server's memory is back on its plateau: its RSS is sampled every
0.5 s; the plateau is the median of the second quarter of the run (after warm-up); the median of
the last quarter and the lowest RSS within 20 s of idle must each stay within
`plateau * 1.25 + 32 MiB` (the bound). The idle RSS is watched for up to 20 s, not read once:
the blocking-pool threads that served the final reads keep what they freed in their mimalloc
thread heaps until they exit, after tokio's 10 s keep-alive (a run of 2026-12-07: 91 MiB and
24 threads for 9.5 s, then 51 MiB and 3 threads). The growth check (last quarter) needs a run
long enough to have a plateau: below MIN_PLATEAU_SECONDS (`make test`'s 30 s pass) the tables
and the fetches that read them still grow through the whole run, so it is reported but not
checked. The server runs with the environment of this script minus MALLOC_ARENA_MAX:
`riverlet` uses mimalloc (its default feature `mimalloc`), which returns what the short-lived
threads of the server's blocking pool free; glibc's malloc, with its default of 8 arenas per
core, kept it and the RSS crept up for minutes without anything
leaking (RELIABILITY.md, "Soak"). A binary built without the feature shows that creep.
Prints its figures; exits 1 on any finding.

    .venv/bin/python tests/reliability/soak.py [--seconds 600] [--rate 250]
        [--server target/debug/riverlet]
"""

from __future__ import annotations

import argparse
import bisect
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import pyarrow as pa

import riverlet

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kill9 import Server  # noqa: E402 - the script directory, not a package

ROOT = Path(__file__).resolve().parents[2]
LOG_SCHEMA = pa.schema([("w", pa.int32()), ("seq", pa.int64()), ("payload", pa.string())])
PK_SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), nullable=False), ("w", pa.int32()), ("seq", pa.int64())]
)
WRITERS = 8
KEYS_PER_WRITER = 500
GROWTH_FACTOR = 1.25
GROWTH_SLACK_MIB = 32.0
# How long the idle server's RSS is watched for its return to the plateau.
IDLE_WATCH_SECONDS = 20.0
# The shortest run whose second quarter is a plateau the last quarter can be held to.
MIN_PLATEAU_SECONDS = 120.0


class Shared:
    """What the threads record, and the findings."""

    def __init__(self, writers: int) -> None:
        self.stop = threading.Event()
        # Set once every writer and reader thread has ended: only then is the acknowledged
        # count final, so only then may the subscription judge that it has drained (a writer's
        # last append can be acknowledged after `stop`, with its rows already subscribed).
        self.load_ended = threading.Event()
        self.lock = threading.Lock()
        self.findings: list[str] = []
        self.acked_rows = [0] * writers  # rows acked per writer: seq 0 .. n-1
        self.pk: list[dict[int, int]] = [{} for _ in range(writers)]  # key -> acked seq, per writer
        self.counts: dict[str, int] = {}

    def finding(self, text: str) -> None:
        with self.lock:
            if len(self.findings) < 1000:
                self.findings.append(text)

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def acked_total(self) -> int:
        return sum(self.acked_rows)


def writer(w: int, bootstrap: str, s: Shared, rate: float) -> None:
    rnd = random.Random(w)
    conn = riverlet.connect(bootstrap, request_timeout=30.0)
    log, pk = conn.table("soak.log"), conn.table("soak.pk")
    seq = 0
    value = 0
    t0 = time.monotonic()
    written = 0
    while not s.stop.is_set():
        if rnd.random() < 0.6:
            n = rnd.randint(1, 50)
            rows = {"w": [w] * n, "seq": list(range(seq, seq + n)),
                    "payload": [f"w{w}-{i:012d}-" + "x" * 32 for i in range(seq, seq + n)]}
            log.append(rows)
            seq += n
            s.acked_rows[w] = seq  # one writer per slot: no lock needed for the value
            s.count("append calls")
        else:
            n = rnd.randint(1, 20)
            keys = rnd.sample(range(w * KEYS_PER_WRITER, (w + 1) * KEYS_PER_WRITER), n)
            value += 1
            pk.upsert({"k": keys, "w": [w] * n, "seq": [value] * n})
            for k in keys:
                s.pk[w][k] = value
            s.count("upsert calls")
        written += n
        # at most `rate` rows/s: the soak is about time under load, not about throughput
        ahead = written / rate - (time.monotonic() - t0)
        if ahead > 0:
            s.stop.wait(ahead)
    conn.close()


def reader(name: str, bootstrap: str, s: Shared,
           body: Callable[[riverlet.Connection], None]) -> None:
    with riverlet.connect(bootstrap, request_timeout=60.0) as conn:
        while not s.stop.is_set():
            body(conn)
            s.count(name)


def epoch_ms(col: pa.ChunkedArray) -> list[int]:
    """Commit timestamps as epoch milliseconds (the column is a naive timestamp in UTC)."""
    return col.cast(pa.timestamp("ms", tz=col.type.tz)).cast(pa.int64()).to_pylist()


def full_scan(s: Shared) -> Callable[[riverlet.Connection], None]:
    def body(conn: riverlet.Connection) -> None:
        before = s.acked_total()
        n = conn.table("soak.log").read(columns=["w", "seq"]).num_rows
        if n < before:
            s.finding(f"full scan: {n} rows, but {before} were acknowledged before it started")
    return body


def time_window(s: Shared, windows: list) -> Callable[[riverlet.Connection], None]:
    def body(conn: riverlet.Connection) -> None:
        now = int(time.time() * 1000)
        a = now - random.randint(500, 5000)
        b = a + random.randint(100, 2000)
        t = conn.table("soak.log").changelog(start=a, end=b, columns=["w", "seq"])
        ts = epoch_ms(t.column("_commit_timestamp"))
        outside = [x for x in ts if not a <= x < b]
        if outside:
            s.finding(f"time window [{a}, {b}): {len(outside)} rows outside it, e.g. {outside[0]}")
        with s.lock:
            windows.append((a, b, t.num_rows))
    return body


def lookups(s: Shared) -> Callable[[riverlet.Connection], None]:
    def body(conn: riverlet.Connection) -> None:
        w = random.randrange(len(s.pk))
        keys = random.sample(range(w * KEYS_PER_WRITER, (w + 1) * KEYS_PER_WRITER), 50)
        before = {k: s.pk[w].get(k) for k in keys}
        got = conn.table("soak.pk").lookup_many(keys)
        seen = dict(zip(got.column("k").to_pylist(), got.column("seq").to_pylist()))
        for k, v in before.items():
            if v is not None and (seen.get(k) is None or seen[k] < v):
                s.finding(f"lookup of key {k}: {seen.get(k)}, but {v} was acknowledged before")
    return body


def pk_scan(s: Shared) -> Callable[[riverlet.Connection], None]:
    def body(conn: riverlet.Connection) -> None:
        n = conn.table("soak.pk").read(columns=["k"]).num_rows
        if n > WRITERS * KEYS_PER_WRITER:
            s.finding(f"primary-key scan: {n} keys, more than were ever written")
    return body


def subscription(bootstrap: str, s: Shared, got: dict, done: threading.Event) -> None:
    with riverlet.connect(bootstrap, request_timeout=60.0) as conn:
        sub = conn.table("soak.log").subscribe("earliest", columns=["w", "seq"])
        idle_since = None
        while True:
            batches = sub.poll(0.5)
            for b in batches:
                for p in zip(b.column("w").to_pylist(), b.column("seq").to_pylist()):
                    got[p] = got.get(p, 0) + 1
            s.count("subscription polls")
            if s.load_ended.is_set():
                # drained: everything acknowledged arrived, or nothing more for 30 s
                if len(got) >= s.acked_total():
                    break
                if batches:
                    idle_since = None
                elif idle_since is None:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > 30:
                    break
        sub.close()
    done.set()


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def guarded(s: Shared, name: str, f: Callable[..., None], *args: object) -> threading.Thread:
    def run() -> None:
        try:
            f(*args)
        except Exception as e:  # noqa: BLE001 - any failure of a thread is a finding
            s.finding(f"{name} failed: {type(e).__name__}: {e}")
            s.stop.set()
    t = threading.Thread(target=run, name=name, daemon=True)
    t.start()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--rate", type=float, default=250, help="rows/s per writer, at most")
    ap.add_argument("--server", default=str(ROOT / "target" / "debug" / "riverlet"))
    a = ap.parse_args()
    s = Shared(WRITERS)
    windows: list = []
    sub_got: dict = {}
    sub_done = threading.Event()
    with tempfile.TemporaryDirectory(prefix="riverlet-soak-") as d:
        server = Server(a.server, d)
        # the bound is the allocator's: no arena limit from the caller's environment
        server.env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
        server.start()
        assert server.proc is not None
        pid = server.proc.pid
        try:
            with riverlet.connect(server.bootstrap) as conn:
                conn.create_database("soak", if_not_exists=True)
                conn.create_table("soak.log", LOG_SCHEMA, buckets=4)
                conn.create_table("soak.pk", PK_SCHEMA, primary_key=["k"], buckets=4)
            b = server.bootstrap
            t_start = time.monotonic()
            samples: list[tuple[float, float]] = [(0.0, rss_mib(pid))]
            threads = [guarded(s, f"writer {w}", writer, w, b, s, a.rate) for w in range(WRITERS)]
            readers = [("full scan", full_scan(s)), ("full scan", full_scan(s)),
                       ("time window", time_window(s, windows)),
                       ("time window", time_window(s, windows)),
                       ("lookup", lookups(s)), ("lookup", lookups(s)), ("pk scan", pk_scan(s))]
            threads += [guarded(s, n, reader, n, b, s, body) for n, body in readers]
            sub = guarded(s, "subscription", subscription, b, s, sub_got, sub_done)
            while time.monotonic() - t_start < a.seconds and not s.stop.is_set():
                time.sleep(0.5)
                samples.append((time.monotonic() - t_start, rss_mib(pid)))
            s.stop.set()
            for t in threads:
                t.join(timeout=120)
                if t.is_alive():
                    s.finding(f"{t.name} did not stop within 120 s")
            s.load_ended.set()
            load_s = time.monotonic() - t_start
            sub_done.wait(120)
            sub.join(timeout=5)
            if sub.is_alive():
                s.finding("the subscription did not drain within 120 s")

            # --- every acknowledged write is readable
            with riverlet.connect(b, request_timeout=120.0) as conn:
                log = conn.table("soak.log").read(columns=["w", "seq"])
                pk = conn.table("soak.pk").read()
                windows_now = conn.table("soak.log").changelog(columns=["w"])
            pairs = list(zip(log.column("w").to_pylist(), log.column("seq").to_pylist()))
            expected = {(w, q) for w in range(WRITERS) for q in range(s.acked_rows[w])}
            got = set(pairs)
            if len(pairs) != len(got):
                s.finding(f"log: {len(pairs) - len(got)} rows stored more than once")
            if got != expected:
                s.finding(f"log: {len(expected - got)} acknowledged rows missing, "
                          f"{len(got - expected)} rows never acknowledged")
            want_pk = {k: v for per in s.pk for k, v in per.items()}
            have_pk = dict(zip(pk.column("k").to_pylist(), pk.column("seq").to_pylist()))
            if have_pk != want_pk:
                diff = [k for k in set(want_pk) | set(have_pk) if want_pk.get(k) != have_pk.get(k)]
                s.finding(f"primary-key table: {len(diff)} keys differ from the acknowledged "
                          f"values, e.g. key {diff[0]}: {have_pk.get(diff[0])} instead of "
                          f"{want_pk.get(diff[0])}")
            dup = sum(1 for n in sub_got.values() if n > 1)
            if set(sub_got) != expected or dup:
                s.finding(f"subscription: {len(expected - set(sub_got))} acknowledged rows "
                          f"missing, {len(set(sub_got) - expected)} unacknowledged, {dup} twice")
            ts = sorted(epoch_ms(windows_now.column("_commit_timestamp")))
            shrunk = exact = 0
            for lo, hi, n in windows:
                now_n = bisect.bisect_left(ts, hi) - bisect.bisect_left(ts, lo)
                shrunk += now_n < n
                exact += now_n == n
            if shrunk:
                s.finding(f"time windows: {shrunk} of {len(windows)} hold fewer rows now than "
                          f"when they were read")

            # --- memory back on its plateau
            rss = [r for _, r in samples]
            q = max(1, len(rss) // 4)
            plateau = statistics.median(rss[q:2 * q]) if len(rss) >= 8 else rss[-1]
            tail = statistics.median(rss[-q:])
            bound = plateau * GROWTH_FACTOR + GROWTH_SLACK_MIB
            idle_start = time.monotonic()
            idle_rss = rss_mib(pid)
            while idle_rss > plateau and time.monotonic() - idle_start < IDLE_WATCH_SECONDS:
                time.sleep(0.5)
                idle_rss = min(idle_rss, rss_mib(pid))
            idle_s = time.monotonic() - idle_start
            growth_checked = load_s >= MIN_PLATEAU_SECONDS
            if growth_checked and tail > bound:
                s.finding(f"RSS grew: last-quarter median {tail:.0f} MiB > bound {bound:.0f} MiB")
            if idle_rss > bound:
                s.finding(f"RSS after {idle_s:.0f} s of idle {idle_rss:.0f} MiB > bound "
                          f"{bound:.0f} MiB")
        finally:
            server.stop()
    c = s.counts
    print(f"soak: {load_s:.0f} s of load, {WRITERS} writers, 8 readers")
    print(f"  writes acknowledged: {s.acked_total()} log rows in {c.get('append calls', 0)} "
          f"appends, {len(want_pk)} keys after {c.get('upsert calls', 0)} upserts")
    print(f"  reads: {c.get('full scan', 0)} full scans, {c.get('time window', 0)} time windows "
          f"({exact} still exact at the end), {c.get('lookup', 0)} lookup batches, "
          f"{c.get('pk scan', 0)} key scans, {c.get('subscription polls', 0)} subscription polls "
          f"({sum(sub_got.values())} rows)")
    print(f"  checked: {len(pairs)} log rows, {len(have_pk)} keys, {len(sub_got)} subscribed rows")
    print(f"  server RSS MiB: first {rss[0]:.0f}, plateau {plateau:.0f}, peak {max(rss):.0f}, "
          f"last-quarter median {tail:.0f}"
          f"{'' if growth_checked else f' (not checked: a run under {MIN_PLATEAU_SECONDS:.0f} s has no plateau)'}, "
          f"after idle {idle_rss:.0f} within {idle_s:.1f} s (bound {bound:.0f}); "
          f"{len(rss)} samples")
    print("  server RSS MiB by tenth of the run: "
          + " ".join(f"{rss[min(len(rss) - 1, i * len(rss) // 10)]:.0f}" for i in range(10)))
    print(f"  findings: {len(s.findings)}")
    for f in s.findings[:20]:
        print(f"    {f}")
    return 1 if s.findings else 0


if __name__ == "__main__":
    sys.exit(main())
