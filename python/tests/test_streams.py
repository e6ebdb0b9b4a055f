from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture()
def table(conn: riverlet.Connection, db: str) -> riverlet.Table:
    t = conn.create_table(f"{db}.s", SCHEMA, buckets=3)
    for i in range(5):
        t.append([{"id": i * 10 + j, "v": f"x{j}"} for j in range(10)])
    return t


def test_scan_is_a_record_batch_reader(table: riverlet.Table) -> None:
    r = table.scan(columns=["id"])
    assert isinstance(r, pa.RecordBatchReader)
    assert r.schema == pa.schema([("id", pa.int64())])
    n = sum(b.num_rows for b in r)
    assert n == 50


def test_duckdb_reads_scan(table: riverlet.Table) -> None:
    reader = table.scan(filter=[("id", "<", 20)])
    got = duckdb.sql("SELECT count(*) AS n, sum(id) AS s FROM reader").fetchall()
    assert got == [(20, sum(range(20)))]


def test_duckdb_reads_native_stream(table: riverlet.Table) -> None:
    native = table._native.scan(None, None, None, None, None, None, None, False, False)
    rel = duckdb.from_arrow(native)
    assert rel.aggregate("count(*)").fetchall() == [(50,)]


def test_polars_reads_scan(table: riverlet.Table) -> None:
    df = pl.from_arrow(table.scan())
    assert isinstance(df, pl.DataFrame) and df.height == 50
    native = table._native.scan(["v"], None, None, None, None, None, None, False, False)
    df2 = pl.DataFrame(native)
    assert df2.columns == ["v"] and df2.height == 50


def test_native_stream_protocol(table: riverlet.Table) -> None:
    s = table._native.scan(None, None, None, 7, None, None, None, False, False)
    assert s.schema == SCHEMA
    first = s.read_next_batch()
    assert isinstance(first, pa.RecordBatch)
    rest = sum(b.num_rows for b in s)
    assert first.num_rows + rest == 7
    assert s.read_next_batch() is None
    assert s.closed
    with pytest.raises(riverlet.ClosedError):
        s.__arrow_c_stream__()
    s2 = table._native.scan(None, None, None, None, None, None, None, False, False)
    pa.RecordBatchReader.from_stream(s2).read_all()
    with pytest.raises(riverlet.ClosedError):
        pa.RecordBatchReader.from_stream(s2)
    s3 = table._native.scan(None, None, None, None, None, None, None, False, False)
    s3.close()
    assert s3.read_next_batch() is None


def test_empty_table_scan(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.empty", SCHEMA)
    assert t.read().num_rows == 0
    assert t.read().schema == SCHEMA
    assert t.scan().read_all().num_rows == 0
