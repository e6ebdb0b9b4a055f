"""Lake reads against a LocalServer tiering to Iceberg and to Paimon: ``trades$lake`` (the lake
only), ``trades$lake$snapshots`` (one row per commit, the lake format's own snapshot columns)
and the union read of ``trades``, each checked against totals computed from the rows written
(the quickstart's lake queries); and over Paimon the union read of a primary-key table, where the
changes after the lake snapshot win by key; and a Paimon warehouse on moto's S3, read with the
warehouse's keys given as Fluss's catalog options (``paimon.s3.*``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from typing import Iterator
from collections import Counter
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import riverlet

SYMBOLS = ["AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA"]
SCHEMA = pa.schema([
    pa.field("trade_id", pa.int64(), nullable=False),
    ("account_id", pa.int32()),
    ("notional", pa.decimal128(18, 2)),
    ("side", pa.string()),
    ("symbol", pa.string()),
])


def trades(ids: range) -> list[dict]:
    return [{
        "trade_id": i,
        "account_id": i % 7,
        "notional": Decimal(i * 7919 % 1_000_000 + 100) / 100,
        "side": "SELL" if i % 3 == 0 else "BUY",
        "symbol": SYMBOLS[i % 6],
    } for i in ids]


def totals_of_rows(rows: list[dict], key: str) -> dict[str, tuple[int, Decimal]]:
    out: dict[str, tuple[int, Decimal]] = {}
    for r in rows:
        n, s = out.get(r[key], (0, Decimal(0)))
        out[r[key]] = (n + 1, s + r["notional"])
    return out


def totals(t: pa.Table, key: str) -> dict[str, tuple[int, Decimal]]:
    """``SELECT key, COUNT(*), SUM(notional) GROUP BY key`` with pyarrow."""
    g = t.group_by(key).aggregate([("notional", "count"), ("notional", "sum")])
    return {k: (n, s) for k, n, s in zip(g[key].to_pylist(), g["notional_count"].to_pylist(),
                                         g["notional_sum"].to_pylist())}


def multiset(t: pa.Table) -> Counter:
    return Counter(tuple(r[c] for c in SCHEMA.names) for r in t.select(SCHEMA.names).to_pylist())


def lake_options(fmt: str, tmp_path) -> dict[str, str]:
    return {"datalake.format": fmt, f"datalake.{fmt}.warehouse": str(tmp_path / "wh")}


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_lake_views_and_union_read(tmp_path, fmt: str) -> None:
    options = lake_options(fmt, tmp_path)
    with riverlet.LocalServer(str(tmp_path / "data"), options=options) as server, \
            riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("finance")
        t = conn.create_table("finance.trades", SCHEMA, buckets=3, properties={
            "table.datalake.enabled": "true", "table.datalake.freshness": "1h"})
        first, second, third = trades(range(0, 40)), trades(range(40, 65)), trades(range(65, 90))

        t.append(pa.Table.from_pylist(first, schema=SCHEMA))
        assert conn.table("finance.trades$lake").read().num_rows == 0
        assert conn.table("finance.trades$lake$snapshots").read().num_rows == 0
        assert conn.lake_snapshot("finance.trades") is None
        assert conn.lake_snapshot("finance.trades", readable=True) is None

        server.commit_lake()
        t.append(pa.Table.from_pylist(second, schema=SCHEMA))
        server.commit_lake()
        time.sleep(0.005)
        window_start = int(time.time() * 1000)
        time.sleep(0.005)
        t.append(pa.Table.from_pylist(third, schema=SCHEMA))
        in_lake, everything = first + second, first + second + third

        lake = conn.table("finance.trades$lake")
        assert lake.schema.names == SCHEMA.names + ["__bucket", "__offset", "__timestamp"]
        rows = lake.read()
        assert totals(rows, "side") == totals_of_rows(in_lake, "side")
        assert multiset(rows) == multiset(pa.Table.from_pylist(in_lake, schema=SCHEMA))
        sells = lake.read(columns=["side", "notional"], filter=[("side", "=", "SELL")])
        assert sells.column_names == ["side", "notional"]
        assert totals(sells, "side") == totals_of_rows(
            [r for r in in_lake if r["side"] == "SELL"], "side")

        snaps = conn.table("finance.trades$lake$snapshots").read()
        assert snaps.num_rows == 2
        if fmt == "iceberg":
            assert snaps["operation"].to_pylist() == ["append", "append"]
            ids = snaps["snapshot_id"].to_pylist()
            assert len(set(ids)) == 2 and snaps["parent_id"].to_pylist() == [None, ids[0]]
        else:  # Paimon's t$snapshots
            ids = snaps["snapshot_id"].to_pylist()
            assert ids == [1, 2]
            assert snaps["commit_kind"].to_pylist() == ["APPEND", "APPEND"]
            assert snaps["commit_user"].to_pylist() == ["__fluss_lake_tiering"] * 2
            assert snaps["total_record_count"].to_pylist() == [len(first), len(in_lake)]

        # How far the table is tiered: each bucket's log offset the lake holds records before
        # (one record per row here), the latest snapshot being the second commit's.
        latest = conn.lake_snapshot("finance.trades")
        assert latest is not None
        assert (latest["table_id"], latest["snapshot_id"]) == (t.table_id, ids[1])
        assert sorted(b["bucket"] for b in latest["buckets"]) == [0, 1, 2]
        assert all(b["partition_id"] is None for b in latest["buckets"])
        assert sum(b["log_offset"] or 0 for b in latest["buckets"]) == len(in_lake)
        assert conn.lake_snapshot("finance.trades", readable=True) == latest
        older = conn.lake_snapshot("finance.trades", ids[0])
        assert older is not None and older["snapshot_id"] == ids[0]
        assert sum(b["log_offset"] or 0 for b in older["buckets"]) == len(first)
        with pytest.raises(riverlet.InvalidArgumentError, match="not both"):
            conn.lake_snapshot("finance.trades", ids[0], readable=True)
        with pytest.raises(riverlet.NotFoundError, match="nope"):
            conn.lake_snapshot("finance.nope")

        union = t.read()
        assert multiset(union) == multiset(pa.Table.from_pylist(everything, schema=SCHEMA))
        assert totals(union, "symbol") == totals_of_rows(everything, "symbol")
        assert pc.sum(union["notional"]).as_py() == sum(r["notional"] for r in everything)

        # a time-range read is the log's only
        recent = t.read_between(window_start)
        assert multiset(recent) == multiset(pa.Table.from_pylist(third, schema=SCHEMA))

        with pytest.raises(riverlet.UnsupportedError):
            lake.append(pa.Table.from_pylist(third, schema=SCHEMA))
        conn.create_table("finance.plain", SCHEMA)
        with pytest.raises(riverlet.NotFoundError, match="not lake-enabled"):
            conn.table("finance.plain$lake").read()
        assert conn.lake_snapshot("finance.plain") is None


def test_paimon_primary_key_union_read(tmp_path) -> None:
    """A primary-key table over Paimon: ``t$lake`` is the lake's merged state at the commit;
    the plain read folds the changes after it over that state, the log winning by key."""
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])
    with riverlet.LocalServer(str(tmp_path / "data"), options=lake_options("paimon", tmp_path)) \
            as server, riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("d")
        t = conn.create_table("d.kv", schema, primary_key=["k"], buckets=2, properties={
            "table.datalake.enabled": "true", "table.datalake.freshness": "1h"})

        def state(table: pa.Table) -> dict:
            return dict(zip(table["k"].to_pylist(), table["v"].to_pylist()))

        t.upsert(pa.Table.from_pylist([{"k": k, "v": f"a{k}"} for k in range(1, 5)], schema))
        t.delete([3])
        server.commit_lake()
        assert state(conn.table("d.kv$lake").read()) == {1: "a1", 2: "a2", 4: "a4"}
        t.upsert(pa.Table.from_pylist([{"k": 1, "v": "b1"}, {"k": 3, "v": "b3"}], schema))
        t.delete([4])
        assert state(t.read()) == {1: "b1", 2: "a2", 3: "b3"}
        assert state(conn.table("d.kv$lake").read()) == {1: "a1", 2: "a2", 4: "a4"}


def test_paimon_add_column_union_reads(tmp_path) -> None:
    """``ALTER TABLE ... ADD COLUMN`` of lake-enabled Paimon tables between two commits: the
    Paimon table gets the column first, then the Fluss table; ``t$lake`` and the union reads
    (log table, primary-key table) give the rows tiered or written before NULL in it and the
    later rows their values."""
    visits = pa.schema([("id", pa.int32()), ("page", pa.string())])
    scores = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])
    lake = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h"}
    with riverlet.LocalServer(str(tmp_path / "data"), options=lake_options("paimon", tmp_path)) \
            as server, riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("d")
        log = conn.create_table("d.visits", visits, buckets=2, properties=lake)
        kv = conn.create_table("d.scores", scores, primary_key=["k"], buckets=2,
                               properties=lake)
        log.append([{"id": i, "page": f"/v{i}"} for i in range(4)])
        kv.upsert([{"k": 1, "v": "a1"}, {"k": 2, "v": "a2"}, {"k": 3, "v": "a3"}])
        server.commit_lake()
        log.append([{"id": 4, "page": "/v4"}])  # old schema, tiered after the ALTER
        kv.upsert([{"k": 2, "v": "b2"}])

        log = conn.add_columns("d.visits", {"referrer": pa.string()})
        kv = conn.add_columns("d.scores", {"level": pa.int64()})
        assert log.schema.names == ["id", "page", "referrer"]
        log.append([{"id": 5, "page": "/v5", "referrer": "/home"},
                    {"id": 6, "page": "/v6", "referrer": None}])
        kv.upsert([{"k": 1, "v": "c1", "level": 10}, {"k": 4, "v": "c4", "level": None}])
        kv.delete([3])
        server.commit_lake()
        log.append([{"id": 7, "page": "/v7", "referrer": "/mail"}])  # only in the log
        kv.upsert([{"k": 4, "v": "d4", "level": 44}])

        def visits_of(t: pa.Table) -> list[tuple]:
            return sorted((r["id"], r["page"], r["referrer"]) for r in t.to_pylist())

        tiered = [(i, f"/v{i}", None) for i in range(5)] + [(5, "/v5", "/home"),
                                                             (6, "/v6", None)]
        lake_rows = conn.table("d.visits$lake").read()
        assert lake_rows.schema.names[:4] == ["id", "page", "referrer", "__bucket"]
        assert visits_of(lake_rows) == tiered
        assert visits_of(log.read()) == tiered + [(7, "/v7", "/mail")]

        def state(t: pa.Table) -> dict:
            return {r["k"]: (r["v"], r["level"]) for r in t.to_pylist()}

        assert state(conn.table("d.scores$lake").read()) == {
            1: ("c1", 10), 2: ("b2", None), 4: ("c4", None)}
        assert state(kv.read()) == {1: ("c1", 10), 2: ("b2", None), 4: ("d4", 44)}


@pytest.fixture
def moto_s3() -> Iterator[str]:
    """moto's S3 server (``RIVERLET_MOTO_SERVER`` or ``moto_server`` on the PATH) on a free
    port: its endpoint. Skips the test when it is not installed."""
    binary = os.environ.get("RIVERLET_MOTO_SERVER") or shutil.which("moto_server")
    if not binary:
        pytest.skip("moto_server (pip install 'moto[server]') is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if proc.poll() is not None:
                pytest.skip(f"{binary} exited at once (no moto behind it)")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail(f"{binary} did not listen on port {port}")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def test_paimon_on_s3_read_with_catalog_options(tmp_path, moto_s3: str, monkeypatch) -> None:
    """The server tiers to a Paimon warehouse in a moto bucket; its table info carries no S3
    key (as Fluss's), and the client reads the lake views and the union with the keys passed
    as ``paimon.s3.access-key`` / ``paimon.s3.secret-key``. Without them (and no AWS
    credentials in the environment) the read is an AuthenticationError naming them."""
    secret = "py-paimon-s3cr3t"
    urllib.request.urlopen(urllib.request.Request(f"{moto_s3}/lake", method="PUT")).close()
    options = {
        "datalake.format": "paimon",
        "datalake.paimon.warehouse": "s3://lake/paimon",
        "datalake.paimon.s3.endpoint": moto_s3,
        "datalake.paimon.s3.region": "us-east-1",
        "datalake.paimon.s3.path-style-access": "true",
        "datalake.paimon.s3.access-key": "testing",
        "datalake.paimon.s3.secret-key": secret,
    }
    # only the options decide: no AWS credentials from this process's environment or files,
    # no instance metadata
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    keys = {"paimon.s3.access-key": "testing", "paimon.s3.secret-key": secret}
    with riverlet.LocalServer(str(tmp_path / "data"), options=options) as server, \
            riverlet.connect(server.bootstrap_servers, properties=keys) as conn:
        conn.create_database("finance")
        t = conn.create_table("finance.trades", SCHEMA, buckets=3, properties={
            "table.datalake.enabled": "true", "table.datalake.freshness": "1h"})
        props = t.properties
        assert props["table.datalake.paimon.warehouse"] == "s3://lake/paimon"
        assert not [k for k in props if "access-key" in k or "secret" in k], props
        first, second, third = trades(range(0, 30)), trades(range(30, 50)), trades(range(50, 60))
        t.append(pa.Table.from_pylist(first, schema=SCHEMA))
        server.commit_lake()
        t.append(pa.Table.from_pylist(second, schema=SCHEMA))
        server.commit_lake()
        t.append(pa.Table.from_pylist(third, schema=SCHEMA))
        in_lake, everything = first + second, first + second + third

        lake = conn.table("finance.trades$lake").read()
        assert multiset(lake) == multiset(pa.Table.from_pylist(in_lake, schema=SCHEMA))
        snaps = conn.table("finance.trades$lake$snapshots").read()
        assert snaps["snapshot_id"].to_pylist() == [1, 2]
        assert snaps["total_record_count"].to_pylist() == [len(first), len(in_lake)]
        union = t.read()
        assert multiset(union) == multiset(pa.Table.from_pylist(everything, schema=SCHEMA))

        with riverlet.connect(server.bootstrap_servers) as bare:
            with pytest.raises(riverlet.AuthenticationError, match="paimon.s3.access-key") as e:
                bare.table("finance.trades$lake").read()
            assert secret not in str(e.value) and "Backtrace" not in str(e.value)
