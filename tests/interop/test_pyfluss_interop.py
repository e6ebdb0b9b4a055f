"""Interop suite: the official Apache Fluss Python client (pyfluss) against a server.

Run against Riverlet's embedded server (started by the session, see conftest.py) or any
Fluss-compatible server given by RIVERLET_BOOTSTRAP. Every check compares exact rows.
Tables use bucket_count=1 unless a test says otherwise, so log order equals write order.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import time
from decimal import Decimal

import pyarrow as pa
import pytest

import fluss
from conftest import aw, create_table, poll_batches, poll_records, unique, wait_ready

pytestmark = pytest.mark.asyncio(loop_scope="session")

C = fluss.ChangeType


def rows_of(records):
    return [r.row for r in records]


def changes_of(records):
    return [(r.change_type, r.row) for r in records]


def by_id(rows, key="id"):
    return sorted(rows, key=lambda r: r[key])


# ------------------------------------------------------------------------------------------
# connection and admin
# ------------------------------------------------------------------------------------------


async def test_server_nodes(admin):
    nodes = await aw(admin.get_server_nodes())
    types = sorted(n.server_type for n in nodes)
    assert "CoordinatorServer" in types
    assert "TabletServer" in types
    for n in nodes:
        assert n.host
        assert 0 < n.port < 65536


async def test_database_lifecycle(admin):
    name = unique("db")
    desc = fluss.DatabaseDescriptor(comment="interop db", custom_properties={"owner": "riverlet"})
    assert not await aw(admin.database_exists(name))
    await aw(admin.create_database(name, desc, ignore_if_exists=False))
    assert await aw(admin.database_exists(name))
    assert name in await aw(admin.list_databases())
    info = await aw(admin.get_database_info(name))
    assert info.database_name == name
    assert info.get_database_descriptor().comment == "interop db"
    assert info.get_database_descriptor().get_custom_properties() == {"owner": "riverlet"}
    await aw(admin.create_database(name, ignore_if_exists=True))
    with pytest.raises(fluss.FlussError) as ei:
        await aw(admin.create_database(name, ignore_if_exists=False))
    assert ei.value.error_code == fluss.ErrorCode.DATABASE_ALREADY_EXIST
    assert await aw(admin.list_tables(name)) == []
    await aw(admin.drop_database(name, ignore_if_not_exists=False, cascade=True))
    assert not await aw(admin.database_exists(name))
    with pytest.raises(fluss.FlussError) as ei:
        await aw(admin.drop_database(name, ignore_if_not_exists=False))
    assert ei.value.error_code == fluss.ErrorCode.DATABASE_NOT_EXIST


async def test_create_tables_and_table_info(admin, database):
    log_path = fluss.TablePath(database, unique("log"))
    pk_path = fluss.TablePath(database, unique("pk"))
    part_path = fluss.TablePath(database, unique("part"))
    log_schema = pa.schema([("id", pa.int32()), ("name", pa.string())])
    await create_table(
        admin,
        log_path,
        fluss.TableDescriptor(fluss.Schema(log_schema), bucket_count=3, comment="a log table"),
    )
    await create_table(
        admin,
        pk_path,
        fluss.TableDescriptor(
            fluss.Schema(
                pa.schema([("id", pa.int64()), ("v", pa.string())]), primary_keys=["id"]
            ),
            bucket_count=2,
        ),
    )
    await aw(
        admin.create_table(
            part_path,
            fluss.TableDescriptor(
                fluss.Schema(pa.schema([("id", pa.int32()), ("region", pa.string())])),
                partition_keys=["region"],
                bucket_count=1,
            ),
        )
    )

    assert await aw(admin.table_exists(log_path))
    assert not await aw(admin.table_exists(fluss.TablePath(database, "no_such_table")))
    assert {log_path.table_name, pk_path.table_name, part_path.table_name} <= set(
        await aw(admin.list_tables(database))
    )

    info = await aw(admin.get_table_info(log_path))
    assert info.table_path == log_path
    assert info.num_buckets == 3
    assert info.comment == "a log table"
    assert not info.has_primary_key()
    assert not info.is_partitioned()
    assert info.get_column_names() == ["id", "name"]
    assert info.get_schema().get_column_types() == ["int", "string"]

    pk_info = await aw(admin.get_table_info(pk_path))
    assert pk_info.has_primary_key()
    assert pk_info.get_primary_keys() == ["id"]
    assert pk_info.get_bucket_keys() == ["id"]
    assert pk_info.num_buckets == 2
    assert pk_info.table_id != info.table_id

    part_info = await aw(admin.get_table_info(part_path))
    assert part_info.is_partitioned()
    assert part_info.get_partition_keys() == ["region"]

    with pytest.raises(fluss.FlussError) as ei:
        await aw(admin.create_table(log_path, fluss.TableDescriptor(fluss.Schema(log_schema))))
    assert ei.value.error_code == fluss.ErrorCode.TABLE_ALREADY_EXIST
    await aw(admin.create_table(log_path, fluss.TableDescriptor(fluss.Schema(log_schema)), True))

    await aw(admin.drop_table(pk_path, ignore_if_not_exists=False))
    assert not await aw(admin.table_exists(pk_path))
    with pytest.raises(fluss.FlussError) as ei:
        await aw(admin.drop_table(pk_path, ignore_if_not_exists=False))
    assert ei.value.error_code == fluss.ErrorCode.TABLE_NOT_EXIST
    await aw(admin.drop_table(pk_path, ignore_if_not_exists=True))


async def test_missing_objects_raise(connection, admin, database):
    with pytest.raises(fluss.FlussError) as ei:
        await aw(connection.get_table(fluss.TablePath(database, "never_created")))
    # Fluss 0.9.1 answers the metadata request with UNKNOWN_SERVER_ERROR (-1) wrapping a
    # TableNotExistException; a dedicated TABLE_NOT_EXIST (7) is accepted too.
    assert ei.value.error_code in (
        fluss.ErrorCode.TABLE_NOT_EXIST,
        fluss.ErrorCode.UNKNOWN_SERVER_ERROR,
    )
    assert f"{database}.never_created" in str(ei.value)
    assert "does not exist" in str(ei.value)
    with pytest.raises(fluss.FlussError) as ei:
        await aw(
            admin.create_table(
                fluss.TablePath(unique("nodb"), "t"),
                fluss.TableDescriptor(fluss.Schema(pa.schema([("a", pa.int32())]))),
            )
        )
    assert ei.value.error_code == fluss.ErrorCode.DATABASE_NOT_EXIST


# ------------------------------------------------------------------------------------------
# log tables
# ------------------------------------------------------------------------------------------

LOG_SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())])


async def new_log_table(admin, database, schema=LOG_SCHEMA, **kw):
    path = fluss.TablePath(database, unique("log"))
    kw.setdefault("bucket_count", 1)
    await create_table(admin, path, fluss.TableDescriptor(fluss.Schema(schema), **kw))
    return path


async def test_log_append_and_record_scan(connection, admin, database):
    path = await new_log_table(admin, database)
    table = await aw(connection.get_table(path))
    assert table.arrow_schema == LOG_SCHEMA
    writer = table.new_append().create_writer()
    writer.write_arrow(
        pa.table(
            {"id": [1, 2], "name": ["alice", "bob"], "score": [1.5, None]}, schema=LOG_SCHEMA
        )
    )
    writer.write_arrow_batch(
        pa.RecordBatch.from_pydict({"id": [3], "name": [None], "score": [3.25]}, schema=LOG_SCHEMA)
    )
    await aw(writer.append({"id": 4, "name": "dora", "score": -0.5}).wait())
    await aw(writer.append([5, "eve", 0.0]).wait())
    await aw(writer.flush())

    scanner = await aw(table.new_scan().create_log_scanner())
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    records = await poll_records(scanner, 5)
    assert rows_of(records) == [
        {"id": 1, "name": "alice", "score": 1.5},
        {"id": 2, "name": "bob", "score": None},
        {"id": 3, "name": None, "score": 3.25},
        {"id": 4, "name": "dora", "score": -0.5},
        {"id": 5, "name": "eve", "score": 0.0},
    ]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4]
    assert all(r.change_type == C.AppendOnly for r in records)
    assert all(r.timestamp > 0 for r in records)

    # subscribing from a middle offset skips the earlier rows
    scanner2 = await aw(table.new_scan().project_by_name(["name"]).create_log_scanner())
    scanner2.subscribe(0, 3)
    tail = await poll_records(scanner2, 2)
    assert [(r.offset, r.row) for r in tail] == [(3, {"name": "dora"}), (4, {"name": "eve"})]


async def test_log_record_batch_scan(connection, admin, database):
    path = await new_log_table(admin, database)
    table = await aw(connection.get_table(path))
    writer = table.new_append().create_writer()
    first = pa.RecordBatch.from_pydict(
        {"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [0.5, 1.5, 2.5]}, schema=LOG_SCHEMA
    )
    second = pa.RecordBatch.from_pydict(
        {"id": [4, 5], "name": ["d", None], "score": [None, 4.5]}, schema=LOG_SCHEMA
    )
    await aw(writer.write_arrow_batch(first).wait())
    await aw(writer.write_arrow_batch(second).wait())
    await aw(writer.flush())

    scanner = await aw(table.new_scan().create_record_batch_log_scanner())
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    batches = await poll_batches(scanner, 5)
    got = pa.Table.from_batches([b.batch for b in batches]).combine_chunks()
    expected = pa.Table.from_batches([first, second]).combine_chunks()
    assert got.to_pylist() == expected.to_pylist()
    assert got.schema == LOG_SCHEMA
    assert batches[0].base_offset == 0
    assert batches[-1].last_offset == 4
    assert all(b.bucket.bucket_id == 0 for b in batches)

    # to_arrow reads up to the latest offset, with projection
    proj = await aw(table.new_scan().project([2, 0]).create_record_batch_log_scanner())
    proj.subscribe(0, fluss.EARLIEST_OFFSET)
    arrow = await aw(proj.to_arrow())
    assert arrow.column_names == ["score", "id"]
    assert arrow.to_pylist() == [
        {"score": 0.5, "id": 1},
        {"score": 1.5, "id": 2},
        {"score": 2.5, "id": 3},
        {"score": None, "id": 4},
        {"score": 4.5, "id": 5},
    ]


async def test_log_all_scalar_types(connection, admin, database):
    schema = pa.schema(
        [
            ("b", pa.bool_()),
            ("i8", pa.int8()),
            ("i16", pa.int16()),
            ("i32", pa.int32()),
            ("i64", pa.int64()),
            ("f32", pa.float32()),
            ("f64", pa.float64()),
            ("s", pa.string()),
            ("bin", pa.binary()),
            ("fbin", pa.binary(3)),
            ("dec", pa.decimal128(10, 2)),
            ("big_dec", pa.decimal128(38, 10)),
            ("d", pa.date32()),
            ("t", pa.time32("ms")),
            ("ts", pa.timestamp("us")),
            ("ts_ltz", pa.timestamp("ms", tz="UTC")),
        ]
    )
    rows = {
        "b": [True, False, None],
        "i8": [-128, 127, None],
        "i16": [-32768, 32767, None],
        "i32": [-(2**31), 2**31 - 1, None],
        "i64": [-(2**63), 2**63 - 1, None],
        "f32": [1.5, -2.25, None],
        "f64": [3.141592653589793, -1e300, None],
        "s": ["héllo ✓", "", None],
        "bin": [b"\x00\xff\x10", b"", None],
        "fbin": [b"abc", b"\x00\x01\x02", None],
        "dec": [Decimal("12345678.90"), Decimal("-0.01"), None],
        "big_dec": [Decimal("1234567890123456789012345678.0123456789"), Decimal("0E-10"), None],
        "d": [dt.date(1970, 1, 1), dt.date(2026, 12, 31), None],
        "t": [dt.time(0, 0, 0), dt.time(23, 59, 59, 999000), None],
        "ts": [dt.datetime(2026, 1, 2, 3, 4, 5, 123456), dt.datetime(1969, 12, 31, 23, 59, 59), None],
        "ts_ltz": [
            dt.datetime(2026, 1, 2, 3, 4, 5, 123000, tzinfo=dt.timezone.utc),
            dt.datetime(2000, 2, 29, tzinfo=dt.timezone.utc),
            None,
        ],
    }
    path = await new_log_table(admin, database, schema=schema)
    table = await aw(connection.get_table(path))
    assert table.arrow_schema == schema
    writer = table.new_append().create_writer()
    batch = pa.RecordBatch.from_pydict(rows, schema=schema)
    await aw(writer.write_arrow_batch(batch).wait())
    await aw(writer.flush())
    scanner = await aw(table.new_scan().create_record_batch_log_scanner())
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    got = await aw(scanner.to_arrow())
    assert got.schema == schema
    assert got.to_pylist() == pa.Table.from_batches([batch]).to_pylist()


async def test_list_offsets(connection, admin, database):
    path = await new_log_table(admin, database)
    earliest = fluss.OffsetSpec.earliest()
    latest = fluss.OffsetSpec.latest()
    assert await aw(admin.list_offsets(path, [0], earliest)) == {0: 0}
    assert await aw(admin.list_offsets(path, [0], latest)) == {0: 0}

    table = await aw(connection.get_table(path))
    writer = table.new_append().create_writer()
    before_ms = int(time.time() * 1000)
    await asyncio.sleep(0.05)
    await aw(
        writer.write_arrow_batch(
            pa.RecordBatch.from_pydict(
                {"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]},
                schema=LOG_SCHEMA,
            )
        ).wait()
    )
    await asyncio.sleep(0.2)
    mid_ms = int(time.time() * 1000)
    await asyncio.sleep(0.2)
    await aw(
        writer.write_arrow_batch(
            pa.RecordBatch.from_pydict(
                {"id": [4, 5], "name": ["d", "e"], "score": [4.0, 5.0]}, schema=LOG_SCHEMA
            )
        ).wait()
    )
    await aw(writer.flush())
    await asyncio.sleep(0.2)
    after_ms = int(time.time() * 1000)
    await asyncio.sleep(0.2)

    assert await aw(admin.list_offsets(path, [0], earliest)) == {0: 0}
    assert await aw(admin.list_offsets(path, [0], latest)) == {0: 5}
    assert await aw(admin.list_offsets(path, [0], fluss.OffsetSpec.timestamp(before_ms))) == {0: 0}
    assert await aw(admin.list_offsets(path, [0], fluss.OffsetSpec.timestamp(mid_ms))) == {0: 3}
    assert await aw(admin.list_offsets(path, [0], fluss.OffsetSpec.timestamp(after_ms))) == {0: 5}

    # the record timestamps agree with the split
    scanner = await aw(table.new_scan().create_log_scanner())
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    records = await poll_records(scanner, 5)
    assert [r.row["id"] for r in records] == [1, 2, 3, 4, 5]
    assert all(before_ms <= r.timestamp < mid_ms for r in records[:3])
    assert all(mid_ms <= r.timestamp < after_ms for r in records[3:])


async def test_log_limit_scan(connection, admin, database):
    path = await new_log_table(admin, database)
    table = await aw(connection.get_table(path))
    writer = table.new_append().create_writer()
    await aw(
        writer.write_arrow_batch(
            pa.RecordBatch.from_pydict(
                {"id": [1, 2, 3, 4], "name": ["a", "b", "c", "d"], "score": [1.0, 2.0, 3.0, 4.0]},
                schema=LOG_SCHEMA,
            )
        ).wait()
    )
    await aw(writer.flush())
    info = table.get_table_info()
    scanner = table.new_scan().limit(2).create_bucket_batch_scanner(
        fluss.TableBucket(info.table_id, 0)
    )
    got = await aw(scanner.to_arrow())
    # a log limit scan returns the last `limit` rows of the bucket
    assert got.to_pylist() == [
        {"id": 3, "name": "c", "score": 3.0},
        {"id": 4, "name": "d", "score": 4.0},
    ]


async def test_multi_bucket_log_table(connection, admin, database):
    path = await new_log_table(admin, database, bucket_count=3, bucket_keys=["id"])
    await wait_ready(admin, path, buckets=(0, 1, 2))
    table = await aw(connection.get_table(path))
    writer = table.new_append().create_writer()
    ids = list(range(1, 31))
    await aw(
        writer.write_arrow_batch(
            pa.RecordBatch.from_pydict(
                {"id": ids, "name": [f"n{i}" for i in ids], "score": [i / 2 for i in ids]},
                schema=LOG_SCHEMA,
            )
        ).wait()
    )
    await aw(writer.flush())
    latest = await aw(admin.list_offsets(path, [0, 1, 2], fluss.OffsetSpec.latest()))
    assert sum(latest.values()) == 30
    assert len([v for v in latest.values() if v > 0]) >= 2  # murmur bucketing spreads 30 ids
    scanner = await aw(table.new_scan().create_log_scanner())
    scanner.subscribe_buckets({0: fluss.EARLIEST_OFFSET, 1: fluss.EARLIEST_OFFSET, 2: 0})
    per_bucket: dict[int, list] = {}
    deadline = time.monotonic() + 20
    while sum(len(v) for v in per_bucket.values()) < 30 and time.monotonic() < deadline:
        polled = await aw(scanner.poll(500))
        for bucket, recs in polled.items():
            per_bucket.setdefault(bucket.bucket_id, []).extend(recs)
    all_rows = [r.row for recs in per_bucket.values() for r in recs]
    assert by_id(all_rows) == [{"id": i, "name": f"n{i}", "score": i / 2} for i in ids]
    assert {b: len(v) for b, v in per_bucket.items()} == {b: n for b, n in latest.items() if n > 0}
    for recs in per_bucket.values():
        assert [r.offset for r in recs] == list(range(len(recs)))


# ------------------------------------------------------------------------------------------
# primary-key tables
# ------------------------------------------------------------------------------------------

PK_SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string()), ("qty", pa.int64())])


async def new_pk_table(admin, database, schema=PK_SCHEMA, primary_keys=("id",), **kw):
    path = fluss.TablePath(database, unique("pk"))
    kw.setdefault("bucket_count", 1)
    await create_table(
        admin,
        path,
        fluss.TableDescriptor(fluss.Schema(schema, primary_keys=list(primary_keys)), **kw),
    )
    return path


async def test_pk_upsert_lookup_delete(connection, admin, database):
    path = await new_pk_table(admin, database)
    table = await aw(connection.get_table(path))
    assert table.has_primary_key()
    up = table.new_upsert().create_writer()
    up.upsert({"id": 1, "name": "apple", "qty": 10})
    up.upsert([2, "banana", 20])
    up.upsert((3, None, None))
    await aw(up.flush())

    lk = table.new_lookup().create_lookuper()
    assert await aw(lk.lookup({"id": 1})) == {"id": 1, "name": "apple", "qty": 10}
    assert await aw(lk.lookup([2])) == {"id": 2, "name": "banana", "qty": 20}
    assert await aw(lk.lookup((3,))) == {"id": 3, "name": None, "qty": None}
    assert await aw(lk.lookup({"id": 99})) is None

    await aw(up.upsert({"id": 1, "name": "apricot", "qty": 11}).wait())
    await aw(up.delete({"id": 2}).wait())
    await aw(up.flush())
    assert await aw(lk.lookup({"id": 1})) == {"id": 1, "name": "apricot", "qty": 11}
    assert await aw(lk.lookup({"id": 2})) is None
    # deleting a missing key is accepted and changes nothing
    await aw(up.delete({"id": 42}).wait())
    assert await aw(lk.lookup({"id": 3})) == {"id": 3, "name": None, "qty": None}


async def test_pk_partial_update(connection, admin, database):
    path = await new_pk_table(admin, database)
    table = await aw(connection.get_table(path))
    up = table.new_upsert().create_writer()
    await aw(up.upsert({"id": 1, "name": "pear", "qty": 5}).wait())
    await aw(up.flush())
    by_name = table.new_upsert().partial_update_by_name(["id", "qty"]).create_writer()
    await aw(by_name.upsert({"id": 1, "qty": 6}).wait())
    await aw(by_name.flush())
    lk = table.new_lookup().create_lookuper()
    assert await aw(lk.lookup({"id": 1})) == {"id": 1, "name": "pear", "qty": 6}
    by_index = table.new_upsert().partial_update_by_index([0, 1]).create_writer()
    await aw(by_index.upsert({"id": 1, "name": "plum"}).wait())
    # a partial update of a missing key inserts it with the other columns null
    await aw(by_index.upsert({"id": 2, "name": "fig"}).wait())
    await aw(by_index.flush())
    assert await aw(lk.lookup({"id": 1})) == {"id": 1, "name": "plum", "qty": 6}
    assert await aw(lk.lookup({"id": 2})) == {"id": 2, "name": "fig", "qty": None}


async def test_pk_changelog_scan(connection, admin, database):
    path = await new_pk_table(admin, database)
    table = await aw(connection.get_table(path))
    up = table.new_upsert().create_writer()
    await aw(up.upsert({"id": 1, "name": "a", "qty": 1}).wait())
    await aw(up.upsert({"id": 2, "name": "b", "qty": 2}).wait())
    await aw(up.upsert({"id": 1, "name": "a2", "qty": 10}).wait())
    await aw(up.delete({"id": 2}).wait())
    await aw(up.flush())

    scanner = await aw(table.new_scan().create_log_scanner())
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    records = await poll_records(scanner, 5)
    assert changes_of(records) == [
        (C.Insert, {"id": 1, "name": "a", "qty": 1}),
        (C.Insert, {"id": 2, "name": "b", "qty": 2}),
        (C.UpdateBefore, {"id": 1, "name": "a", "qty": 1}),
        (C.UpdateAfter, {"id": 1, "name": "a2", "qty": 10}),
        (C.Delete, {"id": 2, "name": "b", "qty": 2}),
    ]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4]
    assert [r.change_type.short_string() for r in records] == ["+I", "+I", "-U", "+U", "-D"]
    assert await aw(admin.list_offsets(path, [0], fluss.OffsetSpec.latest())) == {0: 5}

    # the batch scanner refuses PK tables (no change types on the Arrow path)
    with pytest.raises(Exception):
        await aw(table.new_scan().create_record_batch_log_scanner())


async def test_prefix_lookup(connection, admin, database):
    schema = pa.schema([("region", pa.string()), ("id", pa.int32()), ("v", pa.string())])
    path = await new_pk_table(
        admin, database, schema=schema, primary_keys=("region", "id"), bucket_keys=["region"],
        bucket_count=2,
    )
    await wait_ready(admin, path, buckets=(0, 1))
    table = await aw(connection.get_table(path))
    up = table.new_upsert().create_writer()
    rows = [
        {"region": "eu", "id": 1, "v": "a"},
        {"region": "eu", "id": 2, "v": "b"},
        {"region": "us", "id": 1, "v": "c"},
        {"region": "eu", "id": 3, "v": "d"},
    ]
    for r in rows:
        up.upsert(r)
    await aw(up.flush())
    pl = table.new_lookup().lookup_by(["region"]).create_lookuper()
    assert by_id(await aw(pl.lookup({"region": "eu"}))) == [rows[0], rows[1], rows[3]]
    assert await aw(pl.lookup(["us"])) == [rows[2]]
    assert await aw(pl.lookup({"region": "asia"})) == []
    lk = table.new_lookup().create_lookuper()
    assert await aw(lk.lookup({"region": "us", "id": 1})) == rows[2]


async def test_pk_limit_scan(connection, admin, database):
    path = await new_pk_table(admin, database)
    table = await aw(connection.get_table(path))
    up = table.new_upsert().create_writer()
    for i in range(1, 6):
        up.upsert({"id": i, "name": f"n{i}", "qty": i * 100})
    await aw(up.flush())
    info = table.get_table_info()
    got = await aw(
        table.new_scan().limit(10).create_bucket_batch_scanner(
            fluss.TableBucket(info.table_id, 0)
        ).to_arrow()
    )
    assert by_id(got.to_pylist()) == [
        {"id": i, "name": f"n{i}", "qty": i * 100} for i in range(1, 6)
    ]
    got2 = await aw(
        table.new_scan().limit(2).create_bucket_batch_scanner(
            fluss.TableBucket(info.table_id, 0)
        ).to_arrow()
    )
    assert got2.num_rows == 2
    assert all(r in got.to_pylist() for r in got2.to_pylist())


# ------------------------------------------------------------------------------------------
# partitioned tables
# ------------------------------------------------------------------------------------------


async def test_partitioned_log_table(connection, admin, database):
    schema = pa.schema([("id", pa.int32()), ("region", pa.string()), ("v", pa.string())])
    path = fluss.TablePath(database, unique("plog"))
    await create_table(
        admin,
        path,
        fluss.TableDescriptor(fluss.Schema(schema), partition_keys=["region"], bucket_count=1),
        partitions=({"region": "EU"}, {"region": "US"}),
    )
    parts = await aw(admin.list_partition_infos(path))
    assert sorted(p.partition_name for p in parts) == ["EU", "US"]
    only_us = await aw(admin.list_partition_infos(path, {"region": "US"}))
    assert [p.partition_name for p in only_us] == ["US"]
    pid = {p.partition_name: p.partition_id for p in parts}

    table = await aw(connection.get_table(path))
    writer = table.new_append().create_writer()
    eu = pa.RecordBatch.from_pydict(
        {"id": [1, 2], "region": ["EU", "EU"], "v": ["a", "b"]}, schema=schema
    )
    us = pa.RecordBatch.from_pydict({"id": [3], "region": ["US"], "v": ["c"]}, schema=schema)
    await aw(writer.write_arrow_batch(eu).wait())
    await aw(writer.write_arrow_batch(us).wait())
    await aw(writer.append({"id": 4, "region": "US", "v": "d"}).wait())
    await aw(writer.flush())

    latest = fluss.OffsetSpec.latest()
    assert await aw(admin.list_partition_offsets(path, "EU", [0], latest)) == {0: 2}
    assert await aw(admin.list_partition_offsets(path, "US", [0], latest)) == {0: 2}

    scanner = await aw(table.new_scan().create_log_scanner())
    scanner.subscribe_partition(pid["US"], 0, fluss.EARLIEST_OFFSET)
    records = await poll_records(scanner, 2)
    assert rows_of(records) == [
        {"id": 3, "region": "US", "v": "c"},
        {"id": 4, "region": "US", "v": "d"},
    ]
    both = await aw(table.new_scan().create_record_batch_log_scanner())
    both.subscribe_partition_buckets(
        {(pid["EU"], 0): fluss.EARLIEST_OFFSET, (pid["US"], 0): fluss.EARLIEST_OFFSET}
    )
    arrow = await aw(both.to_arrow())
    assert by_id(arrow.to_pylist()) == [
        {"id": 1, "region": "EU", "v": "a"},
        {"id": 2, "region": "EU", "v": "b"},
        {"id": 3, "region": "US", "v": "c"},
        {"id": 4, "region": "US", "v": "d"},
    ]

    await aw(admin.drop_partition(path, {"region": "EU"}))
    assert [p.partition_name for p in await aw(admin.list_partition_infos(path))] == ["US"]


async def test_partitioned_pk_table(connection, admin, database):
    schema = pa.schema([("region", pa.string()), ("id", pa.int32()), ("v", pa.int64())])
    path = fluss.TablePath(database, unique("ppk"))
    await create_table(
        admin,
        path,
        fluss.TableDescriptor(
            fluss.Schema(schema, primary_keys=["region", "id"]),
            partition_keys=["region"],
            bucket_count=1,
        ),
        partitions=({"region": "EU"}, {"region": "US"}),
    )
    info = await aw(admin.get_table_info(path))
    assert info.get_bucket_keys() == ["id"]  # default bucket key = PK minus partition keys
    table = await aw(connection.get_table(path))
    up = table.new_upsert().create_writer()
    up.upsert({"region": "EU", "id": 1, "v": 10})
    up.upsert({"region": "US", "id": 1, "v": 20})
    await aw(up.flush())
    await aw(up.upsert({"region": "EU", "id": 1, "v": 11}).wait())
    await aw(up.delete({"region": "US", "id": 1}).wait())
    await aw(up.flush())
    lk = table.new_lookup().create_lookuper()
    assert await aw(lk.lookup({"region": "EU", "id": 1})) == {"region": "EU", "id": 1, "v": 11}
    assert await aw(lk.lookup({"region": "US", "id": 1})) is None

    pid = {p.partition_name: p.partition_id for p in await aw(admin.list_partition_infos(path))}
    scanner = await aw(table.new_scan().create_log_scanner())
    scanner.subscribe_partition(pid["US"], 0, fluss.EARLIEST_OFFSET)
    assert changes_of(await poll_records(scanner, 2)) == [
        (C.Insert, {"region": "US", "id": 1, "v": 20}),
        (C.Delete, {"region": "US", "id": 1, "v": 20}),
    ]


async def test_filter_pushdown_on_batch_statistics(connection, admin, database):
    """pyfluss's filter() asks the server to prune batches by their statistics (issue 19 item 1).

    The table collects statistics of `id`; five batches hold ids 0-9, 10-19, ... 40-49. The
    server may return whole batches that hold non-matching rows, so the filter is re-applied
    here, as pyfluss's documentation asks. Batches Riverlet's server skips never come back.
    """
    try:
        path = await new_log_table(
            admin, database, properties={"table.statistics.columns": "id"}
        )
    except Exception as e:  # noqa: BLE001 - any rejection by an external server
        # Apache Fluss 0.9.x does not know the property (INVALID_CONFIG); only an external
        # server may say so, the embedded one must accept it.
        if os.environ.get("RIVERLET_BOOTSTRAP"):
            pytest.skip(f"NOT APPLICABLE: the server rejects 'table.statistics.columns': {e}")
        raise
    table = await aw(connection.get_table(path))
    writer = table.new_append().create_writer()
    for k in range(5):
        ids = list(range(10 * k, 10 * k + 10))
        batch = pa.RecordBatch.from_pydict(
            {"id": ids, "name": [f"n{i}" for i in ids], "score": [i / 2 for i in ids]},
            schema=LOG_SCHEMA,
        )
        await aw(writer.write_arrow_batch(batch).wait())
        await aw(writer.flush())

    scanner = await aw(
        table.new_scan().filter(fluss.col("id") >= 40).create_record_batch_log_scanner()
    )
    scanner.subscribe(0, fluss.EARLIEST_OFFSET)
    batches = await poll_batches(scanner, 10)
    # once more: nothing else may come
    batches.extend(await aw(scanner.poll_record_batch(300)))
    rows = [r for b in batches for r in b.batch.to_pylist()]
    assert sorted(r["id"] for r in rows if r["id"] >= 40) == list(range(40, 50))
    # the batches before the match were left out by the server
    assert sorted(r["id"] for r in rows) == list(range(40, 50))
