"""What the core's one read request gives Python: the retention warning through ``warnings``,
Fluss's default of creating a partition on write, and the filter-tuple operator words (read by
the core, not by the binding)."""

from __future__ import annotations

import time
import warnings

import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_window_before_retention_warns(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.ttl", SCHEMA, properties={"table.log.ttl": "1h"})
    t.append([{"id": 1, "v": "a"}])
    two_hours_ago = now_ms() - 2 * 3600 * 1000

    with pytest.warns(riverlet.RiverletWarning, match="table.log.ttl") as caught:
        got = t.read_between(two_hours_ago)
    assert got.column("id").to_pylist() == [1]
    assert len(caught) == 1
    w = caught[0]
    assert w.message.kind == "before_retention"
    assert f"{db}.ttl" in str(w.message)
    # Attributed to the caller's line, not to riverlet's internals.
    assert w.filename == __file__

    # The streaming form and the changelog warn too.
    with pytest.warns(riverlet.RiverletWarning):
        t.scan_between(two_hours_ago).read_all()
    with pytest.warns(riverlet.RiverletWarning):
        t.changelog(two_hours_ago)

    # A window within retention, and a plain read, do not.
    with warnings.catch_warnings():
        warnings.simplefilter("error", riverlet.RiverletWarning)
        assert t.read_between(now_ms() - 60_000).num_rows == 1
        assert t.read().num_rows == 1
        # Escalated to an error, the warning stops the read.
        with pytest.raises(riverlet.RiverletWarning):
            t.read_between(two_hours_ago)


def test_retention_warning_is_exported() -> None:
    assert issubclass(riverlet.RiverletWarning, UserWarning)
    assert "RiverletWarning" in riverlet.__all__
    assert riverlet.errors.RiverletWarning is riverlet.RiverletWarning


def test_append_creates_a_missing_partition(conn: riverlet.Connection, db: str) -> None:
    """Fluss's default (client.writer.dynamic-create-partition.enabled = true): the
    partitioned-table example of the Fluss guides works without creating partitions first."""
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    t = conn.create_table(f"{db}.auto_parts", schema, partition_by=["dt"])
    t.append([{"id": 1, "dt": "2026-01-01"}, {"id": 2, "dt": "2026-01-02"}])
    names = sorted(p["name"] for p in conn.list_partitions(t.name))
    assert names == ["2026-01-01", "2026-01-02"]
    assert sorted(t.read().column("id").to_pylist()) == [1, 2]


def test_append_to_missing_partition_fails_when_disabled(server: riverlet.LocalServer) -> None:
    with riverlet.connect(
        server.bootstrap_servers,
        properties={"client.writer.dynamic-create-partition.enabled": "false"},
    ) as c:
        db = f"strict{int(time.time() * 1000) % 100000}"
        c.create_database(db, if_not_exists=True)
        schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
        t = c.create_table(f"{db}.parts", schema, partition_by=["dt"])
        with pytest.raises(riverlet.PartitionNotFoundError, match="2026-01-03"):
            t.append([{"id": 1, "dt": "2026-01-03"}])
        c.drop_database(db, cascade=True)


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (("id", "==", 2), [2]),
        (("id", "<>", 2), [1, 3]),
        (("id", "NOT  IN", [1, 2]), [3]),
        (("v", "Is Not Null"), [1, 2]),
        (("v", "not like", "a%"), [2]),
        (("id", ">=", 2), [2, 3]),
    ],
)
def test_filter_tuple_operators(conn: riverlet.Connection, db: str, term: tuple, expected: list) -> None:
    t = conn.create_table(f"{db}.ops", SCHEMA)
    t.append([{"id": 1, "v": "ab"}, {"id": 2, "v": "b"}, {"id": 3, "v": None}])
    assert sorted(t.read(filter=[term]).column("id").to_pylist()) == expected


def test_filter_tuple_errors_name_the_operator(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.ops_bad", SCHEMA)
    with pytest.raises(riverlet.InvalidArgumentError, match="~="):
        t.read(filter=[("id", "~=", 1)])
    with pytest.raises(riverlet.InvalidArgumentError, match="needs a value"):
        t.read(filter=[("id", "=")])
    with pytest.raises(riverlet.InvalidArgumentError, match="pattern"):
        t.read(filter=[("v", "like", 3)])


def drain(sub: riverlet.Subscription, n: int) -> list[int]:
    ids: list[int] = []
    for _ in range(100):
        for b in sub.poll(0.05):
            ids.extend(b.column("id").to_pylist())
        if len(ids) >= n:
            break
    return sorted(ids)


def test_subscription_resumes_from_its_position(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.resume", SCHEMA, buckets=2)
    for i in range(3):
        t.append([{"id": i * 2, "v": "a"}, {"id": i * 2 + 1, "v": "b"}])
    with t.subscribe("earliest") as sub:
        assert drain(sub, 6) == list(range(6))
        checkpoint = sub.position()
    assert sorted(p["bucket"] for p in checkpoint) == [0, 1]
    assert sum(p["offset"] for p in checkpoint) == 6
    assert all(p["partition_name"] is None for p in checkpoint)

    t.append([{"id": 100, "v": "new"}])
    with t.subscribe("earliest", start_offsets=checkpoint) as sub:
        assert drain(sub, 1) == [100]
    with t.subscribe("earliest", buckets=[1]) as sub:
        assert [p["bucket"] for p in sub.position()] == [1]
    with pytest.raises(riverlet.InvalidArgumentError, match="bucket 5"):
        t.subscribe("earliest", buckets=[5])
    with pytest.raises(riverlet.InvalidArgumentError, match="start offset"):
        t.subscribe("earliest", start_offsets=[{"offset": 1}])
