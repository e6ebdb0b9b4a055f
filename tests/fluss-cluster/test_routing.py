"""Routing against a 3-tablet-server Apache Fluss cluster, through Riverlet's Python package.

A 12-bucket log table and a 6-bucket primary-key table get appends, upserts, scans, lookups and
subscriptions from ONE connection; then the test asserts
  (a) through Table.bucket_leaders() that every tablet server leads at least one bucket of each
      table (Fluss assigns a new table's buckets round-robin over the servers),
  (b) that the client process holds exactly one TCP connection to each tablet server (read from
      /proc/self/net/tcp{,6} and this process's socket fds), i.e. the requests for each bucket
      went to its leader over the one connection the client keeps per server,
  (c) that every bucket received rows (a subscription's position past 0 in each) and that the
      rows read back (scan, subscription, lookups) are exactly the rows written, computed here
      from what the test wrote;
  (d) with FLUSS_METRICS (`start.sh --metrics`: each tablet server's Prometheus endpoint), the
      servers' own word: every tablet server counted produce requests of the log table, put-kv
      and lookup requests of the primary-key table and client fetches, and no failed request
      of either table (a request that reached a server that does not lead its bucket fails
      there with NOT_LEADER_OR_FOLLOWER and is counted as failed).

Run by tests/fluss-cluster/run-interop.sh (its Python step) with the cluster it starts
(`start.sh --sasl --tablets 3`). By hand:

    tests/fluss-cluster/start.sh --tablets 3 /tmp/fc3 && . /tmp/fc3/bootstrap.env
    export FLUSS_BOOTSTRAP FLUSS_TABLETS
    .venv/bin/python -m pytest -q tests/fluss-cluster/test_routing.py

Needs FLUSS_BOOTSTRAP (the coordinator) and FLUSS_TABLETS (`id=host:port,...`, what start.sh
writes to bootstrap.env); without them it fails, it never skips.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any, Iterator

import pyarrow as pa
import pytest

import riverlet

LOG_BUCKETS = 12
PK_BUCKETS = 6
LOG_ROWS = 1200
PK_ROWS = 600
LEADER_WAIT_S = 20.0  # per attempt; see create_table


def env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        pytest.fail(f"{name} is not set: start a cluster with tests/fluss-cluster/start.sh "
                    f"--tablets 3 WORKDIR and export the variables of WORKDIR/bootstrap.env")
    return value


def tablet_servers() -> dict[int, str]:
    """FLUSS_TABLETS `0=127.0.0.1:P0,1=127.0.0.1:P1,...` as {id: "host:port"}."""
    out: dict[int, str] = {}
    for item in env("FLUSS_TABLETS").split(","):
        sid, _, address = item.partition("=")
        out[int(sid)] = address
    return out


def own_tcp_connections() -> list[tuple[str, int]]:
    """(remote ip, remote port) of every ESTABLISHED TCP socket this process holds.

    /proc/self/net/tcp{,6} list the sockets of the whole network namespace; the ones whose
    inode is one of this process's fds are ours.
    """
    inodes: set[str] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile (the listdir fd itself)
        if link.startswith("socket:["):
            inodes.add(link[len("socket:["):-1])
    out: list[tuple[str, int]] = []
    for table, v6 in (("/proc/self/net/tcp", False), ("/proc/self/net/tcp6", True)):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            remote, state, inode = fields[2], fields[3], fields[9]
            if state != "01" or inode not in inodes:  # 01 = ESTABLISHED
                continue
            ip_hex, port_hex = remote.split(":")
            out.append((decode_ip(ip_hex, v6), int(port_hex, 16)))
    return out


def decode_ip(ip_hex: str, v6: bool) -> str:
    """The kernel's hex address (little-endian 32-bit words) as text."""
    raw = bytes.fromhex(ip_hex)
    words = [raw[i:i + 4][::-1] for i in range(0, len(raw), 4)]
    b = b"".join(words)
    if not v6:
        return ".".join(str(x) for x in b)
    if b[:12] == b"\0" * 10 + b"\xff\xff":  # v4-mapped
        return ".".join(str(x) for x in b[12:])
    return ":".join(b[i:i + 2].hex() for i in range(0, 16, 2))


def wait_for_leaders(table: riverlet.Table) -> list[dict[str, Any]]:
    """bucket_leaders() once every bucket has a leader, or None after LEADER_WAIT_S."""
    deadline = time.monotonic() + LEADER_WAIT_S
    while True:
        leaders = table.bucket_leaders()
        if leaders and all(d["leader_id"] is not None for d in leaders):
            return leaders
        if time.monotonic() > deadline:
            return []
        time.sleep(0.2)


def create_table(conn: riverlet.Connection, name: str, *args: Any,
                 **kwargs: Any) -> tuple[riverlet.Table, list[dict[str, Any]]]:
    """Creates the table and waits until each bucket has a leader. Apache Fluss 0.9.1's
    coordinator now and then never assigns a new table's buckets (the create-table race of
    tests/README.md): then the table is dropped and created again, up to three attempts."""
    for attempt in range(1, 4):
        table = conn.create_table(name, *args, **kwargs)
        leaders = wait_for_leaders(table)
        if leaders:
            return table, leaders
        print(f"table {name} got no leader within {LEADER_WAIT_S} s (attempt {attempt}): "
              f"dropping and creating it again")
        conn.drop_table(name)
    pytest.fail(f"table {name} got no leader in three attempts (see the coordinator log)")


def drain(sub: riverlet.Subscription, want: int, timeout: float = 60.0) -> pa.Table:
    """Polls until `want` changes arrived (or the timeout, for a failure message with what came)."""
    batches: list[pa.RecordBatch] = []
    deadline = time.monotonic() + timeout
    while sum(b.num_rows for b in batches) < want and time.monotonic() < deadline:
        batches.extend(sub.poll(0.5))
    return pa.Table.from_batches(batches) if batches else pa.table({})


def assert_every_server_leads(leaders: list[dict[str, Any]], servers: dict[int, str],
                              what: str) -> None:
    led: dict[int, list[int]] = {}
    for d in leaders:
        led.setdefault(d["leader_id"], []).append(d["bucket"])
        # the address the cluster gives for the leader is the one start.sh configured for it
        assert d["leader_address"] == servers[d["leader_id"]], d
    assert set(led) == set(servers), (
        f"{what}: buckets led per server {led}; every one of {sorted(servers)} should lead some")


@pytest.fixture(scope="module")
def servers() -> dict[int, str]:
    s = tablet_servers()
    assert len(s) == 3, f"FLUSS_TABLETS names {len(s)} tablet servers, the test wants 3: {s}"
    return s


def metrics_endpoints() -> dict[int, str]:
    """FLUSS_METRICS `0=127.0.0.1:P0,...` (start.sh --metrics) as {server id: "host:port"}."""
    out: dict[int, str] = {}
    for item in env("FLUSS_METRICS").split(","):
        sid, _, address = item.partition("=")
        out[int(sid)] = address
    return out


def server_rates(address: str, db: str) -> dict[tuple[str, str], float]:
    """The per-second request rates a tablet server reports (Fluss's Prometheus reporter):
    {(metric, table): rate} for the tables of `db`, and {(metric, request type): rate} for the
    server's requests by type."""
    import re
    import urllib.request

    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        text = r.read().decode()
    rates: dict[tuple[str, str], float] = {}
    for name, labels, value in re.findall(
            r"^fluss_tabletserver_(table_\w+PerSecond|request_requestsPerSecond)\{([^}]*)\} (\S+)$",
            text, re.M):
        label = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if name.startswith("table_") and label.get("database") != db:
            continue
        key = label.get("table") or label.get("request", "")
        rates[(name, key)] = rates.get((name, key), 0.0) + float(value)
    return rates


def check_server_metrics(db: str, log_table: str, pk_table: str) -> None:
    """Every tablet server counted this test's requests of both tables, none failed. Fluss's
    rates are over a minute and refreshed every few seconds: polled until they show, up to
    60 s (the calls above all happened within the last minute)."""
    wanted = [("table_totalProduceLogRequestsPerSecond", log_table),
              ("table_totalPutKvRequestsPerSecond", pk_table),
              ("table_totalLookupRequestsPerSecond", pk_table),
              ("request_requestsPerSecond", "fetchLogClient")]
    failed = [("table_failedProduceLogRequestsPerSecond", log_table),
              ("table_failedFetchLogRequestsPerSecond", log_table),
              ("table_failedPutKvRequestsPerSecond", pk_table),
              ("table_failedLookupRequestsPerSecond", pk_table)]
    endpoints = metrics_endpoints()
    deadline = time.monotonic() + 60
    while True:
        seen = {sid: server_rates(address, db) for sid, address in endpoints.items()}
        missing = {sid: [w for w in wanted if rates.get(w, 0.0) <= 0.0]
                   for sid, rates in seen.items()}
        if not any(missing.values()) or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert not any(missing.values()), (
        f"requests a tablet server never counted (server: [(metric, table or request)]): "
        f"{ {sid: m for sid, m in missing.items() if m} }")
    bad = {sid: {f: rates[f] for f in failed if rates.get(f, 0.0) > 0.0}
           for sid, rates in seen.items()}
    assert not any(bad.values()), f"failed requests counted by the tablet servers: {bad}"
    print("server metrics (requests/s over the last minute): "
          + "; ".join(f"server {sid}: " + ", ".join(
              f"{k[1] if k[0].startswith('request') else k[0][6:-9]} {seen[sid][k]:.2f}"
              for k in wanted) for sid in sorted(seen)))


@pytest.fixture(scope="module")
def conn() -> Iterator[riverlet.Connection]:
    c = riverlet.connect(env("FLUSS_BOOTSTRAP"))
    db = f"routing_{uuid.uuid4().hex[:10]}"
    c.create_database(db)
    c.db = db  # type: ignore[attr-defined]
    try:
        yield c
    finally:
        try:
            c.drop_database(db, if_exists=True, cascade=True)
        finally:
            c.close()


def test_requests_reach_every_bucket_leader_on_every_server(
        conn: riverlet.Connection, servers: dict[int, str]) -> None:
    db = conn.db  # type: ignore[attr-defined]

    # ---- a log table, rows spread over its 12 buckets by a bucket key
    log_schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("qty", pa.int32())])
    log, log_leaders = create_table(conn, f"{db}.events", log_schema, buckets=LOG_BUCKETS,
                                    bucket_keys=["id"])
    assert [d["bucket"] for d in log_leaders] == list(range(LOG_BUCKETS))
    assert_every_server_leads(log_leaders, servers, "log table")

    log_rows = [{"id": i, "name": f"n{i}", "qty": i % 97} for i in range(LOG_ROWS)]
    # in three writes, so batches go out more than once per bucket
    for part in (log_rows[:400], log_rows[400:800], log_rows[800:]):
        assert log.append(part) == len(part)

    got = log.read()
    assert got.num_rows == LOG_ROWS
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == log_rows
    assert log.count() == LOG_ROWS
    filtered = log.read(columns=["id"], filter=[("qty", "=", 5)])
    assert sorted(filtered.column("id").to_pylist()) == [i for i in range(LOG_ROWS)
                                                         if i % 97 == 5]

    with log.subscribe("earliest") as sub:
        changes = drain(sub, LOG_ROWS)
        assert changes.num_rows == LOG_ROWS
        assert set(changes.column("_change_type").to_pylist()) == {"insert"}
        assert sorted(changes.select(["id", "name", "qty"]).to_pylist(),
                      key=lambda r: r["id"]) == log_rows
        position = sub.position()
    # every bucket got rows: its next offset is past 0, and the offsets add up to the rows
    assert sorted(p["bucket"] for p in position) == list(range(LOG_BUCKETS))
    assert all(p["offset"] > 0 for p in position), position
    assert sum(p["offset"] for p in position) == LOG_ROWS

    # ---- a primary-key table: upserts, an update of some keys, deletes, lookups
    pk_schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])
    pk, pk_leaders = create_table(conn, f"{db}.accounts", pk_schema, primary_key=["id"],
                                  buckets=PK_BUCKETS)
    assert [d["bucket"] for d in pk_leaders] == list(range(PK_BUCKETS))
    assert_every_server_leads(pk_leaders, servers, "primary-key table")

    expected: dict[int, dict[str, Any]] = {i: {"id": i, "v": f"v{i}", "n": i}
                                          for i in range(PK_ROWS)}
    assert pk.upsert(list(expected.values())) == PK_ROWS
    updates: list[dict[str, Any]] = [{"id": i, "v": f"w{i}", "n": -i}
                                     for i in range(0, PK_ROWS, 3)]
    assert pk.upsert(updates) == len(updates)
    for r in updates:
        expected[r["id"]] = r
    deleted = list(range(1, PK_ROWS, 10))
    pk.delete([{"id": i} for i in deleted])
    for i in deleted:
        del expected[i]

    latest = pk.read()
    assert sorted(latest.to_pylist(), key=lambda r: r["id"]) == sorted(
        expected.values(), key=lambda r: r["id"])
    assert pk.count() == len(expected)
    for key in (0, 1, 2, 3, PK_ROWS - 1, PK_ROWS + 5):
        assert pk.lookup(key) == expected.get(key), key
    many = pk.lookup_many([{"id": i} for i in range(PK_ROWS)])
    assert sorted(many.to_pylist(), key=lambda r: r["id"]) == sorted(
        expected.values(), key=lambda r: r["id"])

    with pk.subscribe("full") as sub:
        snap = drain(sub, len(expected))
        got_full = {r["id"]: {k: r[k] for k in ("id", "v", "n")}
                    for r in snap.to_pylist()}
        assert got_full == expected
        assert sorted(p["bucket"] for p in sub.position()) == list(range(PK_BUCKETS))

    # ---- (b): one connection per tablet server, whatever the calls above needed
    mine = own_tcp_connections()
    per_server = {sid: sum(1 for ip, port in mine if f"{ip}:{port}" == address)
                  for sid, address in servers.items()}
    assert per_server == {sid: 1 for sid in servers}, (
        f"TCP connections of this process per tablet server {per_server} "
        f"(servers {servers}; all established connections {mine})")

    # ---- (d): what the servers counted (with start.sh --metrics)
    if os.environ.get("FLUSS_METRICS", "").strip():
        check_server_metrics(db, "events", "accounts")

    # the leaders did not move meanwhile, so the routing asserted above is the one used
    assert [d["leader_id"] for d in log.bucket_leaders()] == [d["leader_id"] for d in log_leaders]
    assert [d["leader_id"] for d in pk.bucket_leaders()] == [d["leader_id"] for d in pk_leaders]
    print(f"log table leaders {[d['leader_id'] for d in log_leaders]}, "
          f"primary-key table leaders {[d['leader_id'] for d in pk_leaders]}, "
          f"connections per server {per_server}")
