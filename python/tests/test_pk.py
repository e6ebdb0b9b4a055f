from __future__ import annotations

import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("order_id", pa.int64()), ("item_id", pa.int64()), ("amount", pa.int32()),
                    ("address", pa.string())])
ROWS = [
    {"order_id": 600, "item_id": 21, "amount": 601, "address": "addr1"},
    {"order_id": 700, "item_id": 22, "amount": 602, "address": "addr2"},
    {"order_id": 800, "item_id": 23, "amount": 603, "address": "addr3"},
]


def by_id(t: pa.Table) -> list[dict]:
    return sorted(t.to_pylist(), key=lambda r: r["order_id"])


@pytest.fixture()
def pk(conn: riverlet.Connection, db: str) -> riverlet.Table:
    t = conn.create_table(f"{db}.pk", SCHEMA, primary_key=["order_id"], buckets=2)
    t.upsert(ROWS)
    return t


def test_upsert_then_read(pk: riverlet.Table) -> None:
    assert by_id(pk.read()) == ROWS
    pk.upsert([{"order_id": 700, "item_id": 220, "amount": 602, "address": "addr2"},
               {"order_id": 900, "item_id": 24, "amount": 604, "address": "addr4"}])
    got = by_id(pk.read())
    assert [r["order_id"] for r in got] == [600, 700, 800, 900]
    assert got[1]["item_id"] == 220
    assert pk.count() == 4
    assert by_id(pk.read(columns=["order_id", "item_id"], filter=[("amount", "<=", 602)])) == [
        {"order_id": 600, "item_id": 21}, {"order_id": 700, "item_id": 220}]


def test_partial_update(pk: riverlet.Table) -> None:
    pk.upsert([{"order_id": 600, "amount": 1000}], columns=["order_id", "amount"])
    assert pk.lookup(600) == {"order_id": 600, "item_id": 21, "amount": 1000, "address": "addr1"}
    with pytest.raises(riverlet.InvalidArgumentError):
        pk.upsert([{"amount": 1}], columns=["amount"])


def test_delete_forms(pk: riverlet.Table) -> None:
    assert pk.delete(600) == 1
    assert pk.lookup(600) is None
    pk.delete([(700,)])
    pk.delete(pa.table({"order_id": [800]}))
    assert pk.read().num_rows == 0
    pk.upsert(ROWS)
    pk.delete([{"order_id": 600}, {"order_id": 700}])
    assert [r["order_id"] for r in by_id(pk.read())] == [800]
    pk.delete({"order_id": [800]})
    assert pk.count() == 0


def test_lookup(pk: riverlet.Table) -> None:
    assert pk.lookup(700) == ROWS[1]
    assert pk.lookup((800,)) == ROWS[2]
    assert pk.lookup({"order_id": 600}) == ROWS[0]
    assert pk.lookup(12345) is None
    many = pk.lookup_many([600, 800, 999])
    assert by_id(many) == [ROWS[0], ROWS[2]]
    assert by_id(pk.lookup_many(pa.table({"order_id": [700]}))) == [ROWS[1]]
    with pytest.raises(riverlet.InvalidArgumentError):
        pk.lookup((1, 2))


def test_prefix_lookup(conn: riverlet.Connection, db: str) -> None:
    schema = pa.schema([("user", pa.string()), ("seq", pa.int32()), ("v", pa.string())])
    t = conn.create_table(f"{db}.pre", schema, primary_key=["user", "seq"], bucket_keys=["user"])
    t.upsert([("a", 1, "x"), ("a", 2, "y"), ("b", 1, "z")])
    got = t.prefix_lookup("a")
    assert sorted(got.column("seq").to_pylist()) == [1, 2]
    assert t.prefix_lookup({"user": "c"}).num_rows == 0
    assert t.lookup(("b", 1)) == {"user": "b", "seq": 1, "v": "z"}


def test_changelog_of_pk_table(pk: riverlet.Table) -> None:
    pk.upsert([{"order_id": 600, "item_id": 99, "amount": 601, "address": "addr1"}])
    pk.delete(700)
    cl = pk.changelog()
    assert cl.schema.names[:3] == ["_change_type", "_log_offset", "_commit_timestamp"]
    assert cl.schema.names[3:] == SCHEMA.names
    kinds = cl.column("_change_type").to_pylist()
    assert kinds.count("insert") == 3
    assert "update_before" in kinds and "update_after" in kinds and "delete" in kinds
    assert all(o >= 0 for o in cl.column("_log_offset").to_pylist())
    assert cl.column("_commit_timestamp").null_count == 0


def test_partitioned_pk(conn: riverlet.Connection, db: str) -> None:
    schema = SCHEMA.append(pa.field("dt", pa.string()))
    t = conn.create_table(f"{db}.ppk", schema, primary_key=["order_id", "dt"], partition_by=["dt"])
    conn.create_partition(t.name, {"dt": "2026-01-01"})
    conn.create_partition(t.name, {"dt": "2026-01-02"})
    rows = [dict(r, dt="2026-01-01" if r["order_id"] < 800 else "2026-01-02") for r in ROWS]
    t.upsert(rows)
    assert by_id(t.read(filter=[("dt", "=", "2026-01-01")])) == rows[:2]
    assert t.lookup({"order_id": 800, "dt": "2026-01-02"}) == rows[2]
    assert t.count() == 3


def test_read_optimized_reads_the_kv_snapshot_without_the_log_tail(
    server: riverlet.LocalServer, conn: riverlet.Connection, db: str
) -> None:
    t = conn.create_table(f"{db}.ro", SCHEMA, primary_key=["order_id"], buckets=2)
    t.upsert(ROWS)
    # No snapshot yet: no bucket contributes rows.
    assert t.read(read_optimized=True).num_rows == 0
    server.take_kv_snapshots()
    t.upsert([{"order_id": 700, "item_id": 220, "amount": 602, "address": "addr2"},
              {"order_id": 900, "item_id": 24, "amount": 604, "address": "addr4"}])
    t.delete([{"order_id": 600}])
    assert by_id(t.read(read_optimized=True)) == ROWS
    assert by_id(t.read(columns=["order_id", "item_id"], filter=[("amount", "<=", 602)],
                        read_optimized=True)) == [
        {"order_id": 600, "item_id": 21}, {"order_id": 700, "item_id": 22}]
    assert [r["order_id"] for r in by_id(t.read())] == [700, 800, 900]
    server.take_kv_snapshots()
    assert by_id(t.read(read_optimized=True)) == by_id(t.read())


def test_local_server_properties_are_checked(tmp_path) -> None:
    with pytest.raises(riverlet.InvalidArgumentError, match="kv.snapshot.interval"):
        riverlet.LocalServer(str(tmp_path), options={"kv.snapshot.interval": "soon"})


def test_add_columns_old_rows_read_null(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.evolve", SCHEMA, primary_key=["order_id"], buckets=2)
    t.upsert(ROWS[:2])
    t2 = conn.add_columns(f"{db}.evolve", pa.schema([("note", pa.string())]))
    assert t2.schema.names == ["order_id", "item_id", "amount", "address", "note"]
    t2.upsert([{"order_id": 800, "item_id": 23, "amount": 603, "address": "addr3",
                "note": "new"}])
    assert by_id(t2.read()) == [dict(r, note=None) for r in ROWS[:2]] + [
        dict(ROWS[2], note="new")]
    assert by_id(t2.read(columns=["order_id", "note"], filter=[("note", "is null", None)])) == [
        {"order_id": 600, "note": None}, {"order_id": 700, "note": None}]
    with pytest.raises(riverlet.InvalidArgumentError, match="nullable"):
        conn.add_columns(f"{db}.evolve", pa.schema([pa.field("n", pa.int64(), nullable=False)]))
    log = conn.create_table(f"{db}.evolve_log", SCHEMA)
    log.append(ROWS[:1])
    log2 = conn.add_columns(f"{db}.evolve_log", {"note": pa.string()})
    log2.append([dict(ROWS[1], note="n")])
    assert by_id(log2.read()) == [dict(ROWS[0], note=None), dict(ROWS[1], note="n")]
