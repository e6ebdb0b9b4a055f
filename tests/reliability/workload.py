"""The Jepsen-style workload and checks shared by kill9.py and failover.py.

Writers (each its own connection and idempotent client writers) append (w, seq) rows to a log
table and upsert/delete their own keys of a primary-key table, recording what they attempted,
what was acknowledged (the call returned without an error) and what failed. `check` reads both
tables back and holds them to that record:
- every acknowledged log row present exactly once, no row (acknowledged or not) twice, no row
  never written, each writer's rows in the order it wrote them;
- the primary-key table, read through the KV scan, through lookups of every key and as the
  fold of its changelog, equals the fold of the acknowledged upserts and deletes; a key may
  instead hold the result of a failed call (the server may have applied it) when no
  acknowledged write of that key followed it; the outcome is settled at the check and held to
  afterwards;
- offsets strictly increase and commit timestamps never decrease in both changelogs, and what
  an earlier check saw is still there unchanged.

Not a test module: imported by the scripts of this directory (which put it on sys.path).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any, Optional

import pyarrow as pa

import riverlet

LOG_SCHEMA = pa.schema([("w", pa.int32()), ("seq", pa.int64())])
PK_SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), nullable=False), ("w", pa.int32()), ("seq", pa.int64())]
)
KEYS_PER_WRITER = 16
ABSENT = None  # the value of a deleted or never-written key
# A paused writer finishes the call it is in; a call retries for at most the client's delivery
# timeout (120 s), so a writer still busy after this is stuck: a finding, not a wait.
PAUSE_LIMIT_S = 150.0

# Fluss's retriable error codes (its RetriableException subclasses; core/src/error/codes.rs):
# Fluss's own Java client retries these instead of raising them.
RETRIABLE_CODES = {
    "NETWORK_EXCEPTION", "CORRUPT_MESSAGE", "NOT_LEADER_OR_FOLLOWER", "CORRUPT_RECORD_EXCEPTION",
    "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", "REQUEST_TIME_OUT",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION", "NOT_ENOUGH_REPLICAS_EXCEPTION",
    "LEADER_NOT_AVAILABLE_EXCEPTION", "RETRIABLE_AUTHENTICATE_EXCEPTION",
    "NOT_COORDINATOR_LEADER_EXCEPTION", "TOO_MANY_SCANNERS", "STORAGE_BACKPRESSURE_EXCEPTION",
    "HISTORICAL_PARTITION_THROTTLED",
}


def is_retriable(e: BaseException) -> bool:
    """Whether an error is one a client should retry (network, timeout, a retriable code)."""
    code_name = getattr(e, "code_name", None)
    if code_name is not None:
        return code_name in RETRIABLE_CODES
    return getattr(e, "kind", None) in ("network", "timeout")


class PeerCallError(Exception):
    """A write that failed in another process (failover.py's writers through the Java binding):
    the error's kind (`network`, `timeout`, ... as the Python binding names them) and Fluss code
    name, so `is_retriable` judges it as it judges the Python binding's errors."""

    def __init__(self, kind: str, code_name: Optional[str], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.code_name = code_name


# What a writer's call may raise: the Python binding's errors, or another binding's, relayed.
WRITE_ERRORS = (riverlet.RiverletError, PeerCallError)


def describe(e: BaseException) -> str:
    """`ClassName: message` of an error, on one line."""
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


class Pausable(threading.Thread):
    """A thread looping over `step` while not paused (the writers' pause/resume protocol)."""

    def __init__(self, name: str) -> None:
        super().__init__(daemon=True, name=name)
        self.run_flag = threading.Event()
        self.idle = threading.Event()
        self.stopped = False
        self.error: Optional[str] = None

    def setup(self) -> None:
        pass

    def step(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            self.setup()
        except riverlet.RiverletError as e:
            self.error = f"{self.name} could not start: {describe(e)}"
            self.idle.set()
            return
        while True:
            if not self.run_flag.is_set():
                self.idle.set()
                self.run_flag.wait()
                if self.stopped:
                    return
            self.idle.clear()
            self.step()

    def pause(self, limit: float = PAUSE_LIMIT_S) -> bool:
        self.run_flag.clear()
        return self.idle.wait(limit)

    def resume(self) -> None:
        self.idle.clear()
        self.run_flag.set()

    def finish(self) -> None:
        self.stopped = True
        self.run_flag.set()


class Writer(Pausable):
    """Appends (w, seq) rows and upserts/deletes keys w*K .. w*K+K-1, recording each outcome.

    `acked` and `attempted` hold log rows; for each key, `pk_acked` holds the value of the last
    acknowledged write (ABSENT for a delete) and `pk_maybe` the values of the failed writes
    since then (each may or may not have been applied); `pk_attempted` every value ever sent
    for a key. `acks` lists (monotonic time, op, log rows) per acknowledged call and `errors`
    (monotonic time, op, exception) per failed one.
    """

    def __init__(self, w: int, bootstrap: str, seed: int, idempotent: bool = True,
                 request_timeout: float = 5.0, log_name: str = "rel.log",
                 pk_name: str = "rel.pk", properties: Optional[dict[str, str]] = None) -> None:
        super().__init__(name=f"writer-{w}")
        self.w, self.bootstrap, self.rnd = w, bootstrap, random.Random(seed)
        self.props = {} if idempotent else {"client.writer.enable-idempotence": "false"}
        self.props.update(properties or {})
        self.request_timeout = request_timeout
        self.log_name, self.pk_name = log_name, pk_name
        self.seq = 0
        self.attempted: set[tuple[int, int]] = set()
        self.acked: set[tuple[int, int]] = set()
        self.pk_acked: dict[int, Optional[int]] = {}
        self.pk_maybe: dict[int, list[Optional[int]]] = {}
        self.pk_attempted: dict[int, set[Optional[int]]] = {}
        self.acks: list[tuple[float, str, list[tuple[int, int]]]] = []
        self.errors: list[tuple[float, str, BaseException]] = []
        self.ops = {"append": 0, "upsert": 0, "delete": 0, "failed": 0}

    def setup(self) -> None:
        conn = riverlet.connect(self.bootstrap, request_timeout=self.request_timeout,
                                properties=self.props)
        self.log, self.pk = conn.table(self.log_name), conn.table(self.pk_name)

    # The three calls, through the Python binding; failover.py's JavaWriter makes them through
    # the Java binding instead. Each returns once acknowledged or raises one of WRITE_ERRORS.
    def call_append(self, log: Any, rows: list[dict[str, int]]) -> None:
        log.append(rows)

    def call_upsert(self, pk: Any, keys: list[int], value: Optional[int]) -> None:
        pk.upsert([{"k": k, "w": self.w, "seq": value} for k in keys])

    def call_delete(self, pk: Any, keys: list[int]) -> None:
        pk.delete(keys)

    def step(self) -> None:
        if self.rnd.random() < 0.5:
            self.append(self.log)
        else:
            self.upsert_or_delete(self.pk)

    def append(self, log: riverlet.Table) -> None:
        rows = []
        for _ in range(self.rnd.randint(1, 4)):
            rows.append({"w": self.w, "seq": self.seq})
            self.attempted.add((self.w, self.seq))
            self.seq += 1
        try:
            self.call_append(log, rows)
        except WRITE_ERRORS as e:
            self.ops["failed"] += 1
            self.errors.append((time.monotonic(), "append", e))
            return
        pairs = [(r["w"], r["seq"]) for r in rows]
        self.acks.append((time.monotonic(), "append", pairs))
        self.acked.update(pairs)
        self.ops["append"] += 1

    def upsert_or_delete(self, pk: riverlet.Table) -> None:
        # distinct keys per call: the fold of one call does not depend on the order within it
        keys = self.rnd.sample(range(KEYS_PER_WRITER), self.rnd.randint(1, 3))
        keys = [self.w * KEYS_PER_WRITER + k for k in keys]
        delete = self.rnd.random() < 0.2
        value: Optional[int] = ABSENT if delete else self.seq
        self.seq += 1
        for k in keys:
            self.pk_attempted.setdefault(k, set()).add(value)
        try:
            if delete:
                self.call_delete(pk, keys)
            else:
                self.call_upsert(pk, keys, value)
        except WRITE_ERRORS as e:
            self.ops["failed"] += 1
            self.errors.append((time.monotonic(), "delete" if delete else "upsert", e))
            for k in keys:
                self.pk_maybe.setdefault(k, []).append(value)
            return
        self.acks.append((time.monotonic(), "delete" if delete else "upsert", []))
        for k in keys:
            self.pk_acked[k] = value
            self.pk_maybe.pop(k, None)
        self.ops["delete" if delete else "upsert"] += 1

    def keys(self) -> range:
        return range(self.w * KEYS_PER_WRITER, (self.w + 1) * KEYS_PER_WRITER)



def monotone(name: str, t: pa.Table, findings: list[str]) -> list[tuple]:
    offsets = t.column("_log_offset").to_pylist()
    ts = t.column("_commit_timestamp").to_pylist()
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
        findings.append(f"{name}: changelog offsets not strictly increasing")
    if any(b < a for a, b in zip(ts, ts[1:])):
        findings.append(f"{name}: commit timestamps decrease")
    cols = [t.column(c).to_pylist() for c in t.column_names]
    return list(zip(*cols))


def check(bootstrap: str, writers: list[Writer], history: dict, *, log_name: str = "rel.log",
          pk_name: str = "rel.pk", request_timeout: float = 30.0,
          multi_bucket: bool = False) -> tuple[int, list[str], dict[str, Any]]:
    """The checks of the module docstring; returns (rows checked, findings, what was read).

    With `multi_bucket` the tables have several buckets, whose changelogs are each in offset
    order but interleave in a full read (which does not say which bucket a row is of). Then:
    what an earlier check saw must still be there (every entry, in any order) instead of being
    the same prefix; offsets are not checked here (the caller, knowing each row's bucket from a
    subscription, can); and each writer's rows must have non-decreasing commit timestamps in
    their write order (a writer sends a call only after the previous one returned, so a row
    committed before an earlier row of the same writer was stored out of order, whatever the
    buckets). What was read: `log` (the log table's changelog), `pk_log`, `kv`, `lookup`.
    """
    findings: list[str] = []
    attempted = set().union(*(w.attempted for w in writers))
    acked = set().union(*(w.acked for w in writers))
    with riverlet.connect(bootstrap, request_timeout=request_timeout) as conn:
        log_table, pk_table = conn.table(log_name), conn.table(pk_name)
        log = log_table.changelog()
        pk_log = pk_table.changelog()
        kv = pk_table.read()
        all_keys = [k for w in writers for k in w.keys()]
        looked_up = pk_table.lookup_many(all_keys)

    # --- the changelogs: order and history
    for name, t in ((log_name, log), (pk_name, pk_log)):
        if not multi_bucket:
            rows = monotone(name, t, findings)
            before = history.get(name, [])
            if rows[: len(before)] != before:
                at = next((i for i, (a, b) in enumerate(zip(rows, before)) if a != b), len(rows))
                findings.append(f"{name}: changelog seen by the last check changed at entry {at}")
            history[name] = rows
        else:
            cols = [t.column(c).to_pylist() for c in t.column_names]
            now = Counter(zip(*cols))
            gone = history.get(name, Counter()) - now
            if gone:
                findings.append(f"{name}: {sum(gone.values())} changelog entries seen by the last "
                                f"check are gone or changed, e.g. {sorted(gone)[:2]}")
            history[name] = now

    # --- the log table
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
    if not multi_bucket:
        last_seq: dict[int, int] = {}
        for w, s in pairs:
            if s < last_seq.get(w, -1):
                findings.append(f"writer {w}: row seq {s} stored after seq {last_seq[w]}")
            last_seq[w] = max(s, last_seq.get(w, -1))
    else:
        stamps = sorted(zip(log.column("w").to_pylist(), log.column("seq").to_pylist(),
                            log.column("_commit_timestamp").to_pylist()))
        for (w0, s0, t0), (w1, s1, t1) in zip(stamps, stamps[1:]):
            if w0 == w1 and t1 < t0:
                findings.append(f"writer {w1}: row seq {s1} committed at {t1}, before seq {s0} "
                                f"({t0})")

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
            for k in w.keys():
                allowed = [w.pk_acked.get(k, ABSENT), *w.pk_maybe.get(k, [])]
                if got.get(k, ABSENT) not in allowed:
                    findings.append(f"{view}: key {k} = {got.get(k, ABSENT)}, expected one of "
                                    f"{allowed} (acknowledged first)")
        strangers = set(got) - set(all_keys)
        if strangers:
            findings.append(f"{view}: keys {sorted(strangers)[:5]} were never written")
    # The outcome of a failed write is now known (the writers are paused): settle it, so that
    # the next check holds the server to it.
    for w in writers:
        for k in list(w.pk_maybe):
            w.pk_acked[k] = views["KV scan"].get(k, ABSENT)
            del w.pk_maybe[k]
    read = {"log": log, "pk_log": pk_log, "kv": kv, "lookup": looked_up}
    return len(pairs) + len(pk_log) + len(kv) + len(looked_up), findings, read
