"""Table.bucket_leaders(): which tablet server leads each bucket (the embedded server leads all)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
KEYS = {"partition_id", "partition_name", "bucket", "leader_id", "leader_address"}


def test_every_bucket_has_its_leader(server: riverlet.LocalServer, conn: riverlet.Connection,
                                     db: str) -> None:
    t = conn.create_table(f"{db}.lead", SCHEMA, buckets=3)
    leaders = t.bucket_leaders()
    assert [d["bucket"] for d in leaders] == [0, 1, 2]
    for d in leaders:
        assert set(d) == KEYS
        assert d["partition_id"] is None and d["partition_name"] is None
        assert d["leader_id"] == 0
        assert d["leader_address"] == server.bootstrap_servers
    # writes route as before after the refresh, and the answer is stable
    t.append([{"id": 1, "dt": "a"}])
    assert t.bucket_leaders() == leaders


def test_partitioned_table_by_partition_name_then_bucket(conn: riverlet.Connection,
                                                         db: str) -> None:
    name = f"{db}.lead_parts"
    t = conn.create_table(name, SCHEMA, primary_key=["id", "dt"], partition_by="dt", buckets=2)
    assert t.bucket_leaders() == []
    for day in ("2026-01-02", "2026-01-01"):
        conn.create_partition(name, {"dt": day})
    ids = {p["name"]: p["id"] for p in conn.list_partitions(name)}
    got = [(d["partition_id"], d["partition_name"], d["bucket"]) for d in t.bucket_leaders()]
    assert got == [
        (ids["2026-01-01"], "2026-01-01", 0),
        (ids["2026-01-01"], "2026-01-01", 1),
        (ids["2026-01-02"], "2026-01-02", 0),
        (ids["2026-01-02"], "2026-01-02", 1),
    ]
    assert all(d["leader_id"] == 0 for d in t.bucket_leaders())


def test_closed_connection(server: riverlet.LocalServer, db: str) -> None:
    c = riverlet.connect(server.bootstrap_servers)
    t = c.create_table(f"{db}.lead_closed", SCHEMA, buckets=1)
    c.close()
    with pytest.raises(riverlet.ClosedError):
        t.bucket_leaders()
