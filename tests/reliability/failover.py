"""Failover, checked the Jepsen way: leaders that die, freeze and lose their coordinator under
concurrent acknowledged writes, a subscription and lookups, against a real Apache Fluss cluster.

Starts its own cluster (tests/fluss-cluster/start.sh --tablets 3: ZooKeeper, a coordinator, 3
tablet servers, replication 3) in a temporary WORKDIR, stopped at the end whatever happens.
Creates a log table and a primary-key table of 6 buckets each. For the whole run:
- several writer threads (workload.py, shared with kill9.py: own connection each, idempotent
  client writers, the client's 30 s request timeout, appends spread round-robin over the
  buckets) append (w, seq) rows to the log table and upsert/delete their own keys of the
  primary-key table (every key upserted once first: apache/fluss#3997, see seed_keys); a call
  is acknowledged when it returned without an error;
- a subscription thread reads the log table from the earliest offset and records every (w, seq)
  it receives with its bucket and offset (the bucket of each polled batch is the one whose
  position, Subscription.position(), the batch's offsets advance: a poll whose batches do not
  account exactly for the positions' advance, e.g. a poll that raised after moving a position,
  is a gap or a repeat);
- a reader thread looks up random keys (a value never written for a key is a finding);
- a monitor thread asks Table.bucket_leaders() every second (when leadership moved).

Each cycle applies ONE fault, rotating: (a) kill -9 of the tablet server leading most buckets
(of both tables), restart after some seconds (ctl.sh start); (b) freeze (SIGSTOP) of that
server for 40 s, longer than the client's 30 s request timeout, then thaw; (c) restart of the
coordinator. Then it pauses the writers and checks:
- the log table: every acknowledged row present exactly once, no row twice, no row never
  written, each writer's rows committed in its write order; the primary-key table through the
  KV scan, lookups of every key and its changelog fold against the fold of the acknowledged
  operations (a failed call's write may or may not have been applied: workload.py); what an
  earlier check saw is still there;
- each bucket of the log table, read afresh by a subscription of that bucket alone: offsets
  contiguous from 0, each writer's rows in seq order (this also gives each row's bucket);
- the subscription: every row of the log table delivered exactly once, in the bucket and at
  the offset the table holds it at, each bucket's offsets contiguous from 0 (no gap, no
  repeat), each writer's rows in seq order within a bucket; a poll(0.5) blocked for over 5 s
  is a finding (Fluss's LogScanner.poll returns at its timeout);
- errors raised to the caller by any call (writes, polls, lookups, bucket_leaders): each
  retriable one (network, timeout, a retriable Fluss code) is a finding, since Fluss's own Java
  client retries those; others are printed;
- a writer still busy long after the pause, or a subscription that does not catch up, is a
  finding (every wait is bounded), and so is a recovery slower than --max-recovery (for a
  freeze: than the thaw plus --max-recovery, since the servers themselves hold every write
  until about the thaw: tests/reliability/freeze_peer.py).
Recovery time: from the fault to the first acknowledged append with a row in a log bucket that
the faulted server led (the rows' buckets from the per-bucket read; for a coordinator restart:
to the first acknowledged call of any kind). Also printed per cycle: when the monitor saw every
bucket led by another server ("leaders moved") and the longest time without any acknowledged
call from the fault to the pause ("longest ack gap").

One line per cycle (findings and other errors on the lines below it), a total line; exit status
1 on any finding, 2 when the harness fails. Needs the riverlet package in .venv (e.g.
python/run-tests.sh), a JDK 17 and the Fluss jars of tests/fluss-cluster/fetch.sh.

`--client` names the bindings the writers call (writer w the (w mod n)-th; default python). With
`c` a writer's calls go through Riverlet's C API (a process per writer running
peer/riverlet_c_writer.c, compiled here against c-api/include/riverlet.h and the cdylib of the
cargo build, target/debug/libriverlet.so); with `java` through Riverlet's Java binding (JNI,
riverlet-java: one JVM running peer/RiverletJavaWriters.java, a connection and a thread per
writer, each call flushed, that is acknowledged, before its reply); the harness, the reader, the
subscription and the checks stay the same. It needs the riverlet-java JAR
(java/riverlet-java/target, built by `make test`'s java suite or `make jar`) and the JNI library
of the cargo build (target/debug).

    .venv/bin/python tests/reliability/failover.py [--cycles 20] [--writers 4] [--seed N]
        [--faults kill,freeze,coordinator] [--client python,java,c] [--keep] [--max-recovery 20]
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import riverlet

# The workload and its checks, shared with kill9.py (the script's directory is on sys.path).
from workload import (  # noqa: E402
    LOG_SCHEMA, PAUSE_LIMIT_S, PK_SCHEMA, Pausable, PeerCallError, Writer, check, describe,
    is_retriable,
)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CLUSTER = ROOT / "tests" / "fluss-cluster"
DB = "fo"
LOG, PK = f"{DB}.log", f"{DB}.pk"
BUCKETS = 6
TABLETS = 3
REQUEST_TIMEOUT_S = 30.0  # the client's default; a freeze lasts longer
FREEZE_S = 40.0
FAULTS = ("kill", "freeze", "coordinator")
SUB_CATCHUP_S = 120.0  # how long the subscription may take to deliver what the table holds
POLL_TIMEOUT_S = 0.5
# Fluss's LogScanner.poll(timeout) returns after about its timeout whatever the servers do (its
# fetches run in the background); a poll(0.5) blocked longer than this is a finding.
POLL_LIMIT_S = 5.0
CTL_TIMEOUT_S = 300.0  # ctl.sh start waits up to FLUSS_START_TIMEOUT (120 s) itself
CHECK_TIMEOUT_S = 600.0


class HarnessError(Exception):
    """The cluster scripts failed: not a finding about the client."""


class Cluster:
    """A cluster started by tests/fluss-cluster/start.sh in its own WORKDIR."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.env: dict[str, str] = {}
        self.bootstrap = ""
        self.tablets: dict[int, str] = {}
        self.frozen: set[str] = set()

    def start(self, conf: Sequence[str] = ()) -> float:
        """start.sh --tablets TABLETS, with a `--conf 'key: value'` per item of `conf`."""
        t0 = time.monotonic()
        confs = [arg for c in conf for arg in ("--conf", c)]
        r = subprocess.run([str(CLUSTER / "start.sh"), "--tablets", str(TABLETS), *confs,
                            self.workdir],
                           capture_output=True, text=True, timeout=CTL_TIMEOUT_S)
        if r.returncode != 0:
            raise HarnessError(f"start.sh failed ({r.returncode}):\n{r.stderr[-3000:]}")
        for line in r.stdout.splitlines():
            k, _, v = line.partition("=")
            if k.startswith("FLUSS_"):
                self.env[k] = v
        self.bootstrap = self.env["FLUSS_BOOTSTRAP"]
        for part in self.env.get("FLUSS_TABLETS", "").split(","):
            i, _, addr = part.partition("=")
            self.tablets[int(i)] = addr
        return time.monotonic() - t0

    def ctl(self, action: str, role: str) -> float:
        """ctl.sh ACTION ROLE; the seconds it took."""
        t0 = time.monotonic()
        try:
            r = subprocess.run([str(CLUSTER / "ctl.sh"), action, role, self.workdir],
                               capture_output=True, text=True, timeout=CTL_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise HarnessError(f"ctl.sh {action} {role} took over {CTL_TIMEOUT_S:.0f} s") from e
        if r.returncode != 0:
            raise HarnessError(f"ctl.sh {action} {role} failed ({r.returncode}): "
                               f"{r.stderr.strip()[-2000:]}")
        if action == "freeze":
            self.frozen.add(role)
        elif action == "thaw":
            self.frozen.discard(role)
        return time.monotonic() - t0

    def stop(self, clean: bool) -> None:
        for role in list(self.frozen):
            try:
                self.ctl("thaw", role)
            except HarnessError as e:
                print(f"failover: {e}", file=sys.stderr)
        args = [str(CLUSTER / "stop.sh")] + (["--clean"] if clean else []) + [self.workdir]
        try:
            subprocess.run(args, capture_output=True, text=True, timeout=CTL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"failover: stop.sh {self.workdir} took over {CTL_TIMEOUT_S:.0f} s",
                  file=sys.stderr)


def raise_peer_reply(reply: str) -> None:
    """A reply of the Java or C writers (peer/): `ok`, or `err <kind> <Fluss code name or ->
    <message>`, raised as PeerCallError with the kind as the Python binding names it."""
    if reply == "ok":
        return
    _, kind, code, message = (reply.split(" ", 3) + ["", "", ""])[:4]
    raise PeerCallError(kind.lower(), None if code == "-" else code, message)


class JavaWriters:
    """One JVM making the writers' calls through Riverlet's Java binding
    (peer/RiverletJavaWriters.java): `call(w, command)` sends a command for writer w and waits
    for its reply; an error reply raises PeerCallError with the Java error's kind and code."""

    def __init__(self, bootstrap: str, properties: dict[str, str]) -> None:
        jars = [j for j in sorted((ROOT / "java/riverlet-java/target").glob("riverlet-java-*.jar"))
                if not j.name.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
        if not jars:
            raise HarnessError("--client java needs java/riverlet-java/target/riverlet-java-*.jar "
                               "(make jar, or make test's java suite)")
        with tempfile.NamedTemporaryFile("r", suffix=".cp") as f:
            r = subprocess.run(["mvn", "-B", "-q", "-f", str(ROOT / "java/pom.xml"), "-pl",
                                "riverlet-java", "dependency:build-classpath",
                                "-Dmdep.includeScope=runtime", f"-Dmdep.outputFile={f.name}"],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise HarnessError(f"mvn dependency:build-classpath of riverlet-java failed:\n"
                                   f"{r.stdout[-2000:]}")
            deps = f.read().strip()
        lib = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"
        props = {"client.request-timeout": f"{REQUEST_TIMEOUT_S:.0f}s", **properties}
        self.proc = subprocess.Popen(
            ["java", f"-Djava.library.path={lib}",
             "--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED",
             "-cp", os.pathsep.join([str(jars[-1]), deps]),
             str(HERE / "peer" / "RiverletJavaWriters.java"), bootstrap, LOG, PK,
             *[f"{k}={v}" for k, v in props.items()]],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.replies: dict[int, queue.Queue[Optional[str]]] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True, name="java-writers").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            w, _, rest = line.rstrip("\n").partition(" ")
            if w.isdigit():
                self._queue(int(w)).put(rest)
        for q in list(self.replies.values()):
            q.put(None)  # the JVM ended: every waiting call fails

    def _queue(self, w: int) -> "queue.Queue[Optional[str]]":
        with self.lock:
            return self.replies.setdefault(w, queue.Queue())

    def call(self, w: int, command: str) -> None:
        replies = self._queue(w)
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(f"{w} {command}\n")
            self.proc.stdin.flush()
        # The JVM's own calls are bounded by the client's timeouts (delivery timeout 120 s).
        reply = replies.get(timeout=CTL_TIMEOUT_S)
        if reply is None:
            # Recorded as the call's failure; the main loop stops the run with a HarnessError.
            raise PeerCallError("jvm_ended", None,
                                f"the Java writers' JVM ended (exit {self.proc.poll()})")
        raise_peer_reply(reply)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class JavaWriter(Writer):
    """A Writer whose calls go through the Java binding (JavaWriters); same record, same checks."""

    def __init__(self, java: JavaWriters, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.java = java

    def setup(self) -> None:
        self.log = self.pk = None  # the JVM holds this writer's connection

    def call_append(self, log: Any, rows: list[dict[str, int]]) -> None:
        self.java.call(self.w, "append " + ",".join(str(r["seq"]) for r in rows))

    def call_upsert(self, pk: Any, keys: list[int], value: Optional[int]) -> None:
        self.java.call(self.w, f"upsert {value} " + ",".join(map(str, keys)))

    def call_delete(self, pk: Any, keys: list[int]) -> None:
        self.java.call(self.w, "delete " + ",".join(map(str, keys)))


class CWriter(Writer):
    """A Writer whose calls go through Riverlet's C API: a process of its own running
    peer/riverlet_c_writer.c (compiled by `build_c_writer`), one command line and one reply per
    call; same record, same checks."""

    def __init__(self, program: Path, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.program = program
        self.proc: Optional[subprocess.Popen] = None

    def setup(self) -> None:
        self.log = self.pk = None  # the process holds this writer's connection
        props = {"client.request-timeout": f"{self.request_timeout:.0f}s", **self.props}
        self.proc = subprocess.Popen(
            [str(self.program), self.bootstrap, self.log_name, self.pk_name, str(self.w),
             *[f"{k}={v}" for k, v in props.items()]],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def relay(self, command: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        assert self.proc.stdout is not None
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        # The process's own calls are bounded by the client's timeouts (delivery 120 s).
        reply = self.proc.stdout.readline().rstrip("\n")
        if not reply:
            raise PeerCallError("process_ended", None,
                                f"the C writer {self.w} ended (exit {self.proc.poll()})")
        raise_peer_reply(reply)

    def call_append(self, log: Any, rows: list[dict[str, int]]) -> None:
        self.relay("append " + ",".join(str(r["seq"]) for r in rows))

    def call_upsert(self, pk: Any, keys: list[int], value: Optional[int]) -> None:
        self.relay(f"upsert {value} " + ",".join(map(str, keys)))

    def call_delete(self, pk: Any, keys: list[int]) -> None:
        self.relay("delete " + ",".join(map(str, keys)))

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def build_c_writer(workdir: str) -> Path:
    """Compiles peer/riverlet_c_writer.c against the C API's header and the cdylib of the cargo
    build (target/debug/libriverlet.so: `cargo build -p riverlet-c`, which make test's c-api
    suite runs)."""
    lib = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"
    if not (lib / "libriverlet.so").exists():
        raise HarnessError(f"--client c needs {lib}/libriverlet.so (cargo build -p riverlet-c)")
    out = Path(workdir) / "riverlet_c_writer"
    r = subprocess.run(
        [os.environ.get("CC", "gcc"), "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
         f"-I{ROOT / 'c-api/include'}", f"-I{ROOT / 'c-api/examples'}",
         str(HERE / "peer" / "riverlet_c_writer.c"), "-o", str(out), f"-L{lib}", "-lriverlet",
         f"-Wl,-rpath,{lib}", "-ldl", "-lpthread", "-lm"],
        capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise HarnessError(f"compiling riverlet_c_writer.c failed:\n{r.stderr[-3000:]}")
    return out


class Reader(Pausable):
    """Looks up 1-8 random keys of the writers' at a time; a value that was never written for
    its key is a finding, and so is a retriable error (recorded in `errors`)."""

    def __init__(self, bootstrap: str, writers: list[Writer], seed: int) -> None:
        super().__init__("reader")
        self.bootstrap, self.writers, self.rnd = bootstrap, writers, random.Random(seed)
        self.lookups = 0
        self.errors: list[tuple[float, str, BaseException]] = []
        self.findings: list[str] = []
        self.owner = {k: w for w in writers for k in w.keys()}

    def setup(self) -> None:
        self.conn = riverlet.connect(self.bootstrap, request_timeout=REQUEST_TIMEOUT_S)
        self.table = self.conn.table(PK)

    def step(self) -> None:
        keys = self.rnd.sample(sorted(self.owner), self.rnd.randint(1, 8))
        try:
            found = self.table.lookup_many(keys)
        except riverlet.RiverletError as e:
            self.errors.append((time.monotonic(), "lookup", e))
            time.sleep(0.2)
            return
        self.lookups += 1
        for k, s in zip(found.column("k").to_pylist(), found.column("seq").to_pylist()):
            w = self.owner.get(k)
            if w is None or s not in w.pk_attempted.get(k, ()):
                self.findings.append(f"lookup: key {k} = {s}, a value never written for it")
        time.sleep(0.05)


def attribute(before: dict[int, int], after: dict[int, int],
              batches: list[tuple[int, int]], budget: int = 200_000) -> Optional[list[int]]:
    """The bucket of each polled batch (first offset, rows): an assignment under which each
    bucket's batches continue its position exactly from `before` to `after`, or None when there
    is none (rows skipped, repeated, or a position moved without rows)."""
    cur = dict(before)
    for b in after:
        cur.setdefault(b, after[b])
    assign: list[int] = []
    stack: list[tuple[int, list[int], int]] = []  # (batch, candidate buckets, chosen index)

    def candidates(i: int) -> list[int]:
        first, n = batches[i]
        return [b for b in sorted(cur) if cur[b] == first and first + n <= after.get(b, -1)]

    i = 0
    while budget > 0:
        budget -= 1
        if i == len(batches):
            if all(cur[b] == after.get(b, cur[b]) for b in cur):
                return list(assign)
            ok = False
        else:
            c = candidates(i)
            ok = bool(c)
            if ok:
                stack.append((i, c, 0))
                cur[c[0]] += batches[i][1]
                assign.append(c[0])
                i += 1
                continue
        # backtrack to the last batch with another candidate
        while stack:
            j, c, k = stack.pop()
            cur[c[k]] -= batches[j][1]
            assign.pop()
            if k + 1 < len(c):
                stack.append((j, c, k + 1))
                cur[c[k + 1]] += batches[j][1]
                assign.append(c[k + 1])
                i = j + 1
                break
        else:
            return None
    return None


class Subscriber(threading.Thread):
    """Subscribes to the log table from the earliest offset and records every row it gets."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True, name="subscriber")
        self.bootstrap = bootstrap
        self.lock = threading.Lock()
        self.delivered: dict[tuple[int, int], list[tuple[Optional[int], int]]] = {}
        self.bucket_offsets: dict[int, list[int]] = {}
        self.bucket_rows: dict[int, list[tuple[int, int]]] = {}
        self.rows = 0
        self.polls = 0
        self.errors: list[tuple[float, str, BaseException]] = []
        self.findings: list[str] = []
        self.stopped = threading.Event()
        self.error: Optional[str] = None
        self.poll_started: Optional[float] = None  # set while a poll is in progress
        self.poll_times: list[tuple[float, float]] = []  # (end, seconds) of polls over 1 s

    def hung_for(self) -> float:
        """How long the poll in progress has been running (0 when none is)."""
        started = self.poll_started
        return 0.0 if started is None else time.monotonic() - started

    def run(self) -> None:
        try:
            conn = riverlet.connect(self.bootstrap, request_timeout=REQUEST_TIMEOUT_S)
            sub = conn.table(LOG).subscribe("earliest")
            pos = self.position(sub)
        except riverlet.RiverletError as e:
            self.error = f"the subscription could not start: {describe(e)}"
            return
        while not self.stopped.is_set():
            err: Optional[BaseException] = None
            self.poll_started = started = time.monotonic()
            try:
                batches = sub.poll(POLL_TIMEOUT_S)
            except riverlet.RiverletError as e:
                batches, err = [], e
                self.errors.append((time.monotonic(), "poll", e))
            self.poll_started = None
            took = time.monotonic() - started
            if took > 1.0:
                self.poll_times.append((time.monotonic(), took))
            self.polls += 1
            after = self.position(sub)
            self.absorb(pos, after, batches, err)
            pos = after
            if err is not None:
                time.sleep(0.2)
        sub.close()
        conn.close()

    @staticmethod
    def position(sub: Any) -> dict[int, int]:
        # An offset below 0 before the first fetch stands for "earliest": offset 0 here (the
        # log is never cleaned during the test).
        return {p["bucket"]: max(0, p["offset"]) for p in sub.position()}

    def absorb(self, before: dict[int, int], after: dict[int, int], batches: list[Any],
               err: Optional[BaseException]) -> None:
        shapes = []
        cols = []
        for b in batches:
            offs = b.column("_log_offset").to_pylist()
            ws, ss = b.column("w").to_pylist(), b.column("seq").to_pylist()
            if offs and offs != list(range(offs[0], offs[0] + len(offs))):
                self.findings.append(f"subscription: a batch's offsets are not consecutive: "
                                     f"{offs[:5]}...")
            shapes.append((offs[0] if offs else 0, len(offs)))
            cols.append((offs, list(zip(ws, ss))))
        assign = attribute(before, after, shapes) if (batches or before != after) else []
        if assign is None:
            moved = {b: (before.get(b), after[b]) for b in after if before.get(b) != after[b]}
            if err is not None:
                what = f"raised {describe(err)} and"
            else:
                what = f"returned {len(batches)} batches (first offset, rows) {shapes[:6]} but"
            self.findings.append(f"subscription: a poll {what} moved the positions {moved}: "
                                 f"rows skipped or repeated")
        with self.lock:
            for i, (offs, pairs) in enumerate(cols):
                bucket = assign[i] if assign else None
                for o, p in zip(offs, pairs):
                    self.delivered.setdefault(p, []).append((bucket, o))
                if bucket is not None:
                    self.bucket_offsets.setdefault(bucket, []).extend(offs)
                    self.bucket_rows.setdefault(bucket, []).extend(pairs)
                self.rows += len(offs)

    def has_all(self, pairs: set[tuple[int, int]]) -> bool:
        with self.lock:
            return pairs.issubset(self.delivered.keys())


class Monitor(threading.Thread):
    """Asks bucket_leaders() of both tables every second: (time, {table: [leader id or None]})."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True, name="monitor")
        self.bootstrap = bootstrap
        self.timeline: list[tuple[float, dict[str, list[Optional[int]]]]] = []
        self.errors: list[tuple[float, str, BaseException]] = []
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            conn = riverlet.connect(self.bootstrap, request_timeout=REQUEST_TIMEOUT_S)
            tables = {n: conn.table(n) for n in (LOG, PK)}
        except riverlet.RiverletError as e:
            self.errors.append((time.monotonic(), "bucket_leaders", e))
            return
        while not self.stopped.wait(1.0):
            try:
                view = {n: [d["leader_id"] for d in t.bucket_leaders()] for n, t in tables.items()}
            except riverlet.RiverletError as e:
                self.errors.append((time.monotonic(), "bucket_leaders", e))
                continue
            with self.lock:
                self.timeline.append((time.monotonic(), view))
        conn.close()

    def moved_at(self, server: int, since: float) -> Optional[float]:
        """The first time after `since` at which every bucket had a leader other than `server`."""
        with self.lock:
            for t, view in self.timeline:
                if t > since and all(l is not None and l != server
                                     for ls in view.values() for l in ls):
                    return t
        return None


def bounded(fn: Callable[[], Any], limit: float, what: str) -> Any:
    """fn() in a thread; HarnessError-free TimeoutError when it takes longer than `limit`."""
    out: dict[str, Any] = {}

    def body() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            out["error"] = e

    t = threading.Thread(target=body, daemon=True, name=what)
    t.start()
    t.join(limit)
    if t.is_alive():
        raise TimeoutError(f"{what} did not finish within {limit:.0f} s")
    if "error" in out:
        raise out["error"]
    return out.get("value")


def create_tables(bootstrap: str) -> None:
    """Both tables, each only once every bucket has a leader: Apache Fluss 0.9.1's coordinator
    sometimes never assigns a new table's buckets (tests/README.md), so after 30 s without
    leaders the table is dropped and created again, up to three attempts."""
    with riverlet.connect(bootstrap, request_timeout=REQUEST_TIMEOUT_S) as conn:
        conn.create_database(DB, if_not_exists=True)
        for name, schema, pk in ((LOG, LOG_SCHEMA, None), (PK, PK_SCHEMA, ["k"])):
            for attempt in range(1, 4):
                conn.create_table(name, schema, primary_key=pk, buckets=BUCKETS)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        if all(d["leader_id"] is not None
                               for d in conn.table(name).bucket_leaders()):
                            break
                    except riverlet.RiverletError:
                        pass
                    time.sleep(0.3)
                else:
                    if attempt == 3:
                        raise HarnessError(f"{name} got no leaders for its buckets")
                    print(f"failover: {name} got no leaders within 30 s (Fluss's create-table "
                          f"race): re-creating it", flush=True)
                    conn.drop_table(name)
                    continue
                break


def read_buckets(bootstrap: str, expected: int) -> dict[int, list[tuple[int, int, int]]]:
    """Every row of the log table as (offset, w, seq) per bucket, read afresh by one
    subscription per bucket (buckets=[b]) from the earliest offset, until all `expected` rows
    (the full read's count) are in: the full read does not say which bucket a row is in."""
    out: dict[int, list[tuple[int, int, int]]] = {b: [] for b in range(BUCKETS)}
    deadline = time.monotonic() + SUB_CATCHUP_S
    with riverlet.connect(bootstrap, request_timeout=REQUEST_TIMEOUT_S) as conn:
        table = conn.table(LOG)
        subs = {b: table.subscribe("earliest", buckets=[b]) for b in range(BUCKETS)}
        while sum(len(v) for v in out.values()) < expected and time.monotonic() < deadline:
            for b, sub in subs.items():
                for batch in sub.poll(0.2):
                    out[b] += zip(batch.column("_log_offset").to_pylist(),
                                  batch.column("w").to_pylist(), batch.column("seq").to_pylist())
        for sub in subs.values():
            sub.close()
    if sum(len(v) for v in out.values()) != expected:
        raise RuntimeError(f"reading the log table bucket by bucket gave "
                           f"{sum(len(v) for v in out.values())} rows within "
                           f"{SUB_CATCHUP_S:.0f} s, the full read {expected}")
    return out


def order_findings(where: str, rows: list[tuple[int, int]]) -> list[str]:
    """Each writer's rows of one bucket, in offset order, must be in its write (seq) order."""
    last: dict[int, int] = {}
    out = []
    for w, sq in rows:
        if sq < last.get(w, -1):
            out.append(f"{where}: writer {w} seq {sq} after seq {last[w]}")
        last[w] = max(sq, last.get(w, -1))
    return out[:3]


def seed_keys(bootstrap: str, writers: list[Writer]) -> None:
    """Upserts every writer's keys once (value seq -1) before the run; the writers' record
    starts from it. Without it, the first write of a primary-key bucket can be a delete of keys
    that do not exist, which Fluss stores as an empty changelog batch, and a tablet server
    whose log segment holds only that batch cannot restart after kill -9: recovery fails with
    NoSuchElementException in LogSegment.readNextOffset (apache/fluss#3997; Fluss 0.9.1 has the
    bug). Deletes of absent keys still happen later, behind non-empty batches."""
    with riverlet.connect(bootstrap, request_timeout=REQUEST_TIMEOUT_S) as conn:
        conn.table(PK).upsert([{"k": k, "w": w.w, "seq": -1} for w in writers for k in w.keys()])
    for w in writers:
        for k in w.keys():
            w.pk_acked[k] = -1
            w.pk_attempted.setdefault(k, set()).add(-1)


def error_findings(source: str, errors: list[tuple[float, str, BaseException]],
                   since: float) -> tuple[list[str], list[str]]:
    """(findings, other lines) for the errors recorded after `since`: one line per distinct
    (call, error text) with its count; retriable ones are findings."""
    counts: Counter = Counter()
    retriable: dict[tuple[str, str], bool] = {}
    for t, op, e in errors:
        if t >= since:
            key = (op, describe(e))
            counts[key] += 1
            retriable[key] = is_retriable(e)
    findings: list[str] = []
    others: list[str] = []
    for (op, text), n in counts.items():
        line = f"{source} {op} raised{'' if n == 1 else f' {n} times'}: {text}"
        (findings if retriable[(op, text)] else others).append(line)
    return findings, others


def fmt_s(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.1f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--faults", default=",".join(FAULTS),
                    help=f"the faults the cycles rotate through, comma-separated, of {FAULTS}")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--client", default="python",
                    help="the bindings the writers call, comma-separated, of python, java and c; "
                         "writer w calls the (w mod n)-th (the reader and subscription are "
                         "Python)")
    ap.add_argument("--keep", action="store_true", help="keep the cluster's WORKDIR (logs, data)")
    ap.add_argument("--max-recovery", type=float, default=20.0,
                    help="a recovery slower than this many seconds (after the thaw, for a "
                         "freeze) is a finding (0: never)")
    a = ap.parse_args()
    clients = [c for c in a.client.split(",") if c]
    if not clients or set(clients) - {"python", "java", "c"}:
        ap.error(f"--client takes some of python, java, c, comma-separated; got {a.client!r}")
    faults = [f for f in a.faults.split(",") if f]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or not faults:
        ap.error(f"--faults takes some of {FAULTS}, comma-separated; got {a.faults!r}")
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)
    t_start = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="riverlet-failover-")
    cluster = Cluster(workdir)
    print(f"failover: {a.cycles} cycles, {a.writers} writers, seed {seed}, workdir {workdir}",
          flush=True)
    totals: dict[str, Any] = {"rows": 0, "findings": 0, "recoveries": []}
    lost_ever: set[tuple[int, int]] = set()
    dup_ever: set[tuple[int, int]] = set()
    sub_missed: set[tuple[int, int]] = set()
    sub_repeated: set[tuple[int, int]] = set()
    status = 0
    cycles_run = 0
    writers: list[Writer] = []
    threads: list[Any] = []
    java: Optional[JavaWriters] = None
    try:
        up = cluster.start()
        print(f"failover: Fluss {cluster.env.get('FLUSS_VERSION')} with {TABLETS} tablet "
              f"servers up in {up:.0f} s: {cluster.bootstrap}, tablets {cluster.tablets}",
              flush=True)
        create_tables(cluster.bootstrap)
        # Round-robin appends: every writer writes to every bucket, so each fault hits some
        # of its calls (sticky assignment would keep a writer of small appends on one bucket).
        props = {"client.writer.bucket.no-key-assigner": "round_robin"}
        # Writer w calls the binding clients[w % len(clients)]: `--client python,java,c` runs
        # every binding family against the same faults in one run.
        program = build_c_writer(workdir) if "c" in clients else None
        if "java" in clients:
            java = JavaWriters(cluster.bootstrap, props)
        for w in range(a.writers):
            family = clients[w % len(clients)]
            args = (w, cluster.bootstrap, rnd.randrange(1 << 30))
            kwargs: dict[str, Any] = dict(request_timeout=REQUEST_TIMEOUT_S, log_name=LOG,
                                          pk_name=PK, properties=props)
            if family == "java":
                assert java is not None
                writers.append(JavaWriter(java, *args, **kwargs))
            elif family == "c":
                assert program is not None
                writers.append(CWriter(program, *args, **kwargs))
            else:
                writers.append(Writer(*args, **kwargs))
        print(f"failover: writers' bindings: "
              f"{', '.join(f'{w.w}={clients[w.w % len(clients)]}' for w in writers)}", flush=True)
        seed_keys(cluster.bootstrap, writers)
        reader = Reader(cluster.bootstrap, writers, rnd.randrange(1 << 30))
        sub = Subscriber(cluster.bootstrap)
        monitor = Monitor(cluster.bootstrap)
        workers: list[Any] = [*writers, reader]  # paused for each check
        threads = [*workers, sub, monitor]
        for t in threads:
            t.start()
        ctl_conn = riverlet.connect(cluster.bootstrap, request_timeout=REQUEST_TIMEOUT_S)
        ctl_tables = {n: ctl_conn.table(n) for n in (LOG, PK)}
        history: dict = {}
        known: set[str] = set()  # a finding that stays true is counted once
        for cycle in range(1, a.cycles + 1):
            if java is not None and java.proc.poll() is not None:
                raise HarnessError(f"the Java writers' JVM ended (exit {java.proc.poll()})")
            fault = faults[(cycle - 1) % len(faults)]
            cycles_run = cycle
            t0 = time.monotonic()
            acked0 = sum(len(w.acked) for w in writers)
            ops0 = {k: sum(w.ops[k] for w in writers) for k in writers[0].ops}
            sub_rows0, lookups0 = sub.rows, reader.lookups
            for t in workers:
                t.resume()
            time.sleep(rnd.uniform(2.0, 4.0))

            # --- the fault
            try:
                leaders = {n: t.bucket_leaders() for n, t in ctl_tables.items()}
            except riverlet.RiverletError as e:
                print(f"cycle {cycle}/{a.cycles}: finding: bucket_leaders() before the fault "
                      f"raised {describe(e)}", flush=True)
                totals["findings"] += 1
                status = 1
                break
            per_server = Counter(d["leader_id"] for ls in leaders.values() for d in ls
                                 if d["leader_id"] is not None)
            if not per_server:
                raise HarnessError(f"no bucket has a leader before cycle {cycle}: {leaders}")
            target = max(sorted(per_server), key=lambda i: per_server[i])
            faulted = {d["bucket"] for d in leaders[LOG] if d["leader_id"] == target}
            role = f"tablet-{target}"
            t_fault = time.monotonic()
            if fault == "kill":
                cluster.ctl("kill", role)
                down = rnd.uniform(10.0, 20.0)
                time.sleep(down)
                try:
                    back = cluster.ctl("start", role)
                except HarnessError as e:
                    raise HarnessError(f"cycle {cycle}: restarting {role} after kill -9 "
                                       f"(it led {sorted(faulted)} of {LOG}): {e}") from e
                what = (f"kill -9 {role} (led {per_server[target]}/{2 * BUCKETS} buckets), "
                        f"restarted after {down:.0f} s, ready in {back:.0f} s")
            elif fault == "freeze":
                cluster.ctl("freeze", role)
                time.sleep(FREEZE_S)
                cluster.ctl("thaw", role)
                what = (f"freeze {role} (led {per_server[target]}/{2 * BUCKETS} buckets) "
                        f"{FREEZE_S:.0f} s")
            else:
                took = cluster.ctl("restart", "coordinator")
                what = f"restart coordinator ({took:.0f} s)"
            time.sleep(rnd.uniform(3.0, 5.0))  # writes after the fault

            # --- pause and check
            t_pause = time.monotonic()
            stuck = [t.name for t in workers if not t.pause()]
            findings: list[str] = [f"{s} still busy {PAUSE_LIMIT_S:.0f} s after the pause"
                                   for s in stuck]
            findings += [t.error for t in workers if t.error]
            if sub.error:
                findings.append(sub.error)
            try:
                rows, found, read = bounded(
                    lambda: check(cluster.bootstrap, writers, history, log_name=LOG,
                                  pk_name=PK, request_timeout=REQUEST_TIMEOUT_S,
                                  multi_bucket=True),
                    CHECK_TIMEOUT_S, "the check")
            except (riverlet.RiverletError, TimeoutError) as e:
                findings.append(f"the check failed: {describe(e)}")
                print(f"cycle {cycle}/{a.cycles}: {what}; findings: " + "; ".join(findings),
                      flush=True)
                totals["findings"] += len(findings)
                status = 1
                break
            findings += found
            log = read["log"]
            stored = list(zip(log.column("w").to_pylist(), log.column("seq").to_pylist()))
            offset_of = dict(zip(stored, log.column("_log_offset").to_pylist()))
            counts = Counter(stored)
            acked = set().union(*(w.acked for w in writers))
            lost_ever |= acked - counts.keys()
            dup_ever |= {p for p, n in counts.items() if n > 1}

            # --- each row's bucket, read bucket by bucket: offsets contiguous from 0
            bucket_of: dict[tuple[int, int], int] = {}
            try:
                per_bucket = bounded(lambda: read_buckets(cluster.bootstrap, len(stored)),
                                     SUB_CATCHUP_S + 60, "the per-bucket read")
            except (riverlet.RiverletError, TimeoutError, RuntimeError) as e:
                findings.append(f"the per-bucket read of {LOG} failed: {describe(e)}")
                per_bucket = {}
            for b, brows in per_bucket.items():
                if [o for o, _, _ in brows] != list(range(len(brows))):
                    findings.append(f"{LOG} bucket {b}: offsets not contiguous from 0")
                bucket_of.update(((w, sq), b) for _, w, sq in brows)
                findings += order_findings(f"{LOG} bucket {b}", [(w, sq) for _, w, sq in brows])

            # --- the subscription: caught up, each row once at its offset, contiguous buckets
            want = set(stored)
            deadline = time.monotonic() + SUB_CATCHUP_S
            while not sub.has_all(want) and time.monotonic() < deadline and sub.is_alive():
                if sub.hung_for() > SUB_CATCHUP_S:
                    break  # a poll stuck since before the wait: waiting more is no use
                time.sleep(0.5)
            hung = sub.hung_for()
            if hung > POLL_LIMIT_S:
                findings.append(f"subscription: poll({POLL_TIMEOUT_S}) has not returned for "
                                f"{hung:.0f} s")
            slow = [d for t, d in sub.poll_times if t >= t0 and d > POLL_LIMIT_S]
            if slow:
                findings.append(f"subscription: {len(slow)} polls ({POLL_TIMEOUT_S} s timeout) "
                                f"blocked over {POLL_LIMIT_S:.0f} s, the longest {max(slow):.1f} s")
            longest_poll = max([d for t, d in sub.poll_times if t >= t0] + [hung, 0.0])
            with sub.lock:
                delivered = {p: list(v) for p, v in sub.delivered.items()}
                bucket_offsets = {b: list(v) for b, v in sub.bucket_offsets.items()}
                bucket_rows = {b: list(v) for b, v in sub.bucket_rows.items()}
            missed = want - delivered.keys()
            if missed:
                sub_missed |= missed
                findings.append(f"subscription: {len(missed)} rows of the table not delivered "
                                f"within {SUB_CATCHUP_S:.0f} s after the pause, e.g. "
                                f"{sorted(missed)[:3]}")
            repeated = {p for p, v in delivered.items() if len(v) > 1}
            if repeated:
                sub_repeated |= repeated
                findings.append(f"subscription: {len(repeated)} rows delivered more than once, "
                                f"e.g. {[(p, delivered[p]) for p in sorted(repeated)[:2]]}")
            strangers = delivered.keys() - want
            if strangers:
                findings.append(f"subscription: {len(strangers)} delivered rows the table does "
                                f"not hold, e.g. {sorted(strangers)[:3]}")
            moved = [(p, v[0], (bucket_of.get(p), offset_of[p])) for p, v in delivered.items()
                     if p in offset_of and (v[0][1] != offset_of[p] or (
                         v[0][0] is not None and p in bucket_of and v[0][0] != bucket_of[p]))]
            if moved:
                findings.append(f"subscription: {len(moved)} rows delivered at another "
                                f"(bucket, offset) than the table holds them at, e.g. {moved[:3]}")
            for b, offs in sorted(bucket_offsets.items()):
                if offs != list(range(len(offs))):
                    at = next(i for i, o in enumerate(offs) if o != i) if offs else 0
                    findings.append(f"subscription: bucket {b} offsets not contiguous from 0: "
                                    f"offset {offs[at] if at < len(offs) else None} at position "
                                    f"{at}")
                findings += order_findings(f"subscription: bucket {b}", bucket_rows.get(b, []))
            findings += sub.findings
            findings += reader.findings

            # --- errors raised to callers during this cycle
            errors_other: list[str] = []
            for source, errs in (("writer", [e for w in writers for e in w.errors]),
                                 ("subscription", sub.errors), ("reader", reader.errors),
                                 ("monitor", monitor.errors)):
                found_errors, other_errors = error_findings(source, errs, t0)
                findings += found_errors
                errors_other += other_errors

            # --- recovery: the first acknowledged write after the fault to a bucket it hit
            acks = sorted((t, op, pairs) for w in writers for t, op, pairs in w.acks
                          if t > t_fault)
            recovery: Optional[float] = None
            for t, op, pairs in acks:
                # (a server leading none of the log table's buckets: any write counts)
                if fault == "coordinator" or not faulted or any(
                        bucket_of.get(p) in faulted for p in pairs):
                    recovery = t - t_fault
                    break
            times = [t_fault] + [t for t, _, _ in acks if t <= t_pause] + [t_pause]
            gap = max((b - a_ for a_, b in zip(times, times[1:])), default=None)
            moved_at = monitor.moved_at(target, t_fault) if fault != "coordinator" else None
            if recovery is not None:
                totals["recoveries"].append(recovery)
            # While a leader is frozen the servers hold every write (acks=all) until they apply
            # the new ISRs, which Fluss 0.9.1 does only around the thaw; Fluss's own Java client
            # waits as long (freeze_peer.py, RELIABILITY.md). So a freeze's bound is the thaw
            # plus --max-recovery: the client must be back soon after the servers are.
            limit = a.max_recovery + (FREEZE_S if fault == "freeze" else 0.0)
            if a.max_recovery > 0:
                if recovery is None:
                    findings.append("no write acknowledged to a faulted bucket after the fault")
                elif recovery > limit:
                    findings.append(f"recovery took {recovery:.1f} s (over {limit:.0f} s"
                                    f"; leaders moved after "
                                    f"{fmt_s(None if moved_at is None else moved_at - t_fault)})")

            totals["rows"] += rows + len(bucket_of) + sum(len(v) for v in delivered.values())
            new = [f for f in findings if f not in known]
            known.update(findings)
            totals["findings"] += len(new)
            if new:
                status = 1
            ops = {k: sum(w.ops[k] for w in writers) - ops0[k] for k in ops0}
            print(f"cycle {cycle}/{a.cycles}: {what}; leaders moved "
                  f"{fmt_s(None if moved_at is None else moved_at - t_fault)}, "
                  f"recovery {fmt_s(recovery)}, longest ack gap {fmt_s(gap)}; acked rows "
                  f"{sum(len(w.acked) for w in writers) - acked0}, upserts {ops['upsert']}, "
                  f"deletes {ops['delete']}, failed calls {ops['failed']}; subscription rows "
                  f"{sub.rows - sub_rows0} (longest poll {longest_poll:.1f} s); lookups "
                  f"{reader.lookups - lookups0}; log rows per bucket "
                  f"{'/'.join(str(len(per_bucket.get(b, []))) for b in range(BUCKETS))}; "
                  f"rows checked {rows}; new findings {len(new)} "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
            for line in new:
                print(f"    finding: {line}", flush=True)
            for o in errors_other:
                print(f"    error (not retriable, not counted): {o}", flush=True)
            if stuck or any(t.error for t in workers) or not sub.is_alive():
                break
        ctl_conn.close()
    except HarnessError as e:
        print(f"failover: harness failure: {e}", flush=True)
        status = 2
    finally:
        for t in threads:
            if isinstance(t, Pausable):
                t.finish()
            elif isinstance(t, (Subscriber, Monitor)):
                t.stopped.set()
        if java is not None:
            java.close()
        for w in writers:
            if isinstance(w, CWriter):
                w.close()
        cluster.stop(clean=not a.keep)
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"failover: kept {workdir}", flush=True)
    rec = sorted(totals["recoveries"])
    rec_text = (f"{rec[0]:.1f}/{statistics.median(rec):.1f}/{rec[-1]:.1f} s" if rec else "-")
    print(f"failover: {cycles_run} of {a.cycles} cycles, rows checked {totals['rows']}, "
          f"acknowledged rows {sum(len(w.acked) for w in writers)}, lost {len(lost_ever)}, "
          f"duplicated {len(dup_ever)}, subscription missed {len(sub_missed)} repeated "
          f"{len(sub_repeated)}, recovery min/median/max {rec_text}, findings "
          f"{totals['findings']}, {time.monotonic() - t_start:.0f} s", flush=True)
    return status if status else (1 if totals["findings"] else 0)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # Threads may still sit in a call to a server that is gone: do not wait for them at exit.
    os._exit(code)
