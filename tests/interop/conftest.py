"""Fixtures for the pyfluss interop suite.

Server selection:
- RIVERLET_BOOTSTRAP=host:port  -> use an already running server (Riverlet, or a real Apache
  Fluss cluster, e.g. RIVERLET_BOOTSTRAP=$FLUSS_BOOTSTRAP from tests/fluss-cluster/start.sh).
- otherwise the session starts one with RIVERLET_SERVE_CMD (default
  `target/debug/riverlet serve --data-dir {data_dir} --port 0`, run from the repository root;
  `{data_dir}` is replaced by a fresh temporary directory), reads the bootstrap address the
  server prints on stdout (`bootstrap: 127.0.0.1:PORT` or `RIVERLET_BOOTSTRAP=127.0.0.1:PORT`)
  within RIVERLET_START_TIMEOUT seconds (default 60) and stops it at the end of the session.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections import deque
from pathlib import Path

import pytest
import pytest_asyncio

import fluss

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SERVE_CMD = "target/debug/riverlet serve --data-dir {data_dir} --port 0"
BOOTSTRAP_RE = re.compile(r"(?:^|\s)(?:bootstrap:\s*|RIVERLET_BOOTSTRAP=)(\S+:\d+)\s*$")

# Bounds for every wait in the suite (seconds).
RPC_TIMEOUT = float(os.environ.get("RIVERLET_IT_RPC_TIMEOUT", "30"))
READY_TIMEOUT = float(os.environ.get("RIVERLET_IT_READY_TIMEOUT", "30"))


async def aw(awaitable, timeout: float = RPC_TIMEOUT):
    """Await with a hard deadline (pyfluss can hang on a server that accepts but never answers)."""
    return await asyncio.wait_for(awaitable, timeout)


class ServerProcess:
    """A server started by the suite; its output is kept for failure messages."""

    def __init__(self, cmd: str, data_dir: str):
        self.cmd = cmd
        self.data_dir = data_dir
        self.lines: deque[str] = deque(maxlen=200)
        self.bootstrap: str | None = None
        self._found = threading.Event()
        argv = shlex.split(cmd.format(data_dir=data_dir))
        self.proc = subprocess.Popen(
            argv,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if self.bootstrap is None:
                m = BOOTSTRAP_RE.search(line)
                if m:
                    self.bootstrap = m.group(1)
                    self._found.set()
        self._found.set()  # EOF: wake the waiter

    def wait_bootstrap(self, timeout: float) -> str:
        self._found.wait(timeout)
        if self.bootstrap:
            return self.bootstrap
        self.stop()
        output = "\n".join(self.lines)
        raise RuntimeError(
            f"server command {self.cmd!r} printed no bootstrap line within {timeout}s "
            f"(exit code {self.proc.poll()}). Output:\n{output}"
        )

    def stop(self, timeout: float = 15):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


@pytest.fixture(scope="session")
def bootstrap():
    """host:port of the server under test."""
    env = os.environ.get("RIVERLET_BOOTSTRAP")
    if env:
        yield env
        return
    cmd = os.environ.get("RIVERLET_SERVE_CMD", DEFAULT_SERVE_CMD)
    exe = shlex.split(cmd)[0]
    if not (REPO_ROOT / exe).exists() and shutil.which(exe) is None:
        pytest.fail(
            f"no server to test: RIVERLET_BOOTSTRAP is unset and {exe!r} (from RIVERLET_SERVE_CMD "
            f"{cmd!r}) does not exist; build it with `cargo build -p riverlet-cli` or set "
            "RIVERLET_BOOTSTRAP",
            pytrace=False,
        )
    data_dir = tempfile.mkdtemp(prefix="riverlet-interop-")
    server = ServerProcess(cmd, data_dir)
    try:
        yield server.wait_bootstrap(float(os.environ.get("RIVERLET_START_TIMEOUT", "60")))
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def connection(bootstrap):
    """One pyfluss connection for the session, made once the server reports a tablet server."""
    config = fluss.Config({"bootstrap.servers": bootstrap, "writer.batch-timeout-ms": "20"})
    deadline = time.monotonic() + READY_TIMEOUT
    last_err: Exception | None = None
    conn = None
    while time.monotonic() < deadline:
        try:
            conn = await aw(fluss.FlussConnection.create(config), 20)
            nodes = await aw(conn.get_admin().get_server_nodes())
            if any(n.server_type == "TabletServer" for n in nodes):
                break
            last_err = RuntimeError(f"no TabletServer among {nodes}")
        except Exception as e:  # retried until the deadline
            last_err = e
        if conn is not None:
            await aw(conn.close(), 10)
            conn = None
        await asyncio.sleep(0.5)
    if conn is None:
        pytest.fail(f"could not connect to {bootstrap} within {READY_TIMEOUT}s: {last_err}")
    yield conn
    await aw(conn.close(), 15)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def admin(connection):
    return connection.get_admin()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def database(admin):
    """A database owned by this session, dropped (cascade) at the end."""
    name = f"it_{uuid.uuid4().hex[:10]}"
    await aw(admin.create_database(name, ignore_if_exists=False))
    yield name
    await aw(admin.drop_database(name, ignore_if_not_exists=True, cascade=True))


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


async def wait_ready(
    admin, table_path, partition_name: str | None = None, buckets=(0,), timeout=READY_TIMEOUT
):
    """Wait until the table's (or partition's) buckets have leaders (a real cluster needs a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if partition_name is None:
                await aw(admin.list_offsets(table_path, list(buckets), fluss.OffsetSpec.earliest()))
            else:
                await aw(
                    admin.list_partition_offsets(
                        table_path, partition_name, list(buckets), fluss.OffsetSpec.earliest()
                    )
                )
            return
        except fluss.FlussError as e:
            retriable = e.is_retriable or "leader" in str(e).lower()
            if not retriable or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


# How long a new table without partitions may stay without a leader before it is re-created.
LEADER_WAIT = 20.0


async def create_table(admin, table_path, descriptor, partitions=()):
    """Create a table (and partitions), then wait until it can be written.

    Apache Fluss 0.9.1's coordinator sometimes never assigns buckets to a new table (the
    create-table race of tests/README.md), so a table without partitions that has no leader
    after LEADER_WAIT seconds is dropped and created again (three attempts)."""
    await aw(admin.create_table(table_path, descriptor, ignore_if_exists=False))
    for spec in partitions:
        await aw(admin.create_partition(table_path, spec, ignore_if_exists=False))
    if partitions:
        for spec in partitions:
            await wait_ready(admin, table_path, partition_name="$".join(spec.values()))
        return
    for attempt in range(3):
        try:
            await wait_ready(admin, table_path, timeout=LEADER_WAIT)
            return
        except fluss.FlussError as e:
            if attempt == 2 or not (e.is_retriable or "leader" in str(e).lower()):
                raise
        print(f"table {table_path} got no leader within {LEADER_WAIT} s "
              "(Apache Fluss's create-table race, tests/README.md): re-creating it")
        await aw(admin.drop_table(table_path, ignore_if_not_exists=False))
        await aw(admin.create_table(table_path, descriptor, ignore_if_exists=False))


async def poll_records(scanner, expected: int, timeout: float = 20.0, settle_ms: int = 300):
    """Poll a record scanner until `expected` records arrived, then once more to catch extras."""
    records = []
    deadline = time.monotonic() + timeout
    while len(records) < expected and time.monotonic() < deadline:
        batch = await aw(scanner.poll(500))
        records.extend(list(batch))
    if len(records) >= expected:
        extra = await aw(scanner.poll(settle_ms))
        records.extend(list(extra))
    return records


async def poll_batches(scanner, expected_rows: int, timeout: float = 20.0):
    """Poll a record-batch scanner until `expected_rows` rows arrived."""
    batches = []
    deadline = time.monotonic() + timeout
    while sum(b.batch.num_rows for b in batches) < expected_rows and time.monotonic() < deadline:
        batches.extend(await aw(scanner.poll_record_batch(500)))
    return batches
