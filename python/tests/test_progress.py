"""Progress totals: a write's bar has the input's rows as total, a bounded read's bar the rows
the core's plan says the read returns (BatchStream.expected_rows), and both end at 100%."""

from __future__ import annotations

import asyncio
import io
import time
from typing import Any, Optional

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from tqdm import tqdm

import riverlet
import riverlet.aio

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


class Recorder:
    """A progress object (``update`` + ``total``) remembering the total seen at the first
    update."""

    def __init__(self) -> None:
        self.total: Optional[int] = None
        self.n = 0
        self.updates = 0
        self.total_at_first_update: Optional[int] = None

    def update(self, n: int) -> None:
        if self.updates == 0:
            self.total_at_first_update = self.total
        self.updates += 1
        self.n += n


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})


def _append_in_batches(t: riverlet.Table, batches: int, per_batch: int) -> int:
    written = 0
    for b in range(batches):
        written += t.append(_rows(b * per_batch, per_batch))
    return written


def test_bounded_read_reports_its_total_and_ends_at_100_percent(
        conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA, buckets=3)
    written = _append_in_batches(t, 7, 130)
    assert written == 910

    rec = Recorder()
    table = t.read(progress=rec)
    assert table.num_rows == written
    assert rec.total_at_first_update == written and rec.total == written
    assert rec.n == written and rec.updates >= 1

    # A real tqdm bar the caller made: total set, ends at 100% with n/N.
    out = io.StringIO()
    bar = tqdm(file=out, ascii=True)
    t.read(progress=bar)
    bar.close()
    assert (bar.total, bar.n) == (written, written)
    final = out.getvalue().split("\r")[-1]
    assert "100%" in final and f"{written}/{written}" in final, final

    # A limit caps the total; a projection does not change it.
    rec = Recorder()
    assert t.read(limit=100, progress=rec).num_rows == 100
    assert (rec.total, rec.n) == (100, 100)
    rec = Recorder()
    t.read(columns=["name"], progress=rec)
    assert (rec.total, rec.n) == (written, written)


def test_progress_true_shows_the_total(conn: riverlet.Connection, db: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA, buckets=2)
    t.append(_rows(0, 600), progress=True)
    err = capsys.readouterr().err.split("\r")[-1]
    assert "100%" in err and "600/600" in err, err
    t.read(progress=True)
    err = capsys.readouterr().err.split("\r")[-1]
    assert "100%" in err and "600/600" in err, err


def test_time_range_read_total_is_the_window_rows(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA, buckets=2)
    t.append(_rows(0, 300))
    time.sleep(0.02)  # the next commits are in a later millisecond than `since`
    since = int(time.time() * 1000)
    time.sleep(0.02)
    later = _append_in_batches(t, 4, 55)

    rec = Recorder()
    got = t.read_between(since, progress=rec)
    assert got.num_rows == later == 220
    assert (rec.total_at_first_update, rec.n) == (later, later)

    # The changelog of the same window: one row per record, total known as well.
    rec = Recorder()
    assert t.changelog(since, progress=rec).num_rows == later
    assert (rec.total, rec.n) == (later, later)

    # A window that ended before the read: the end offsets hold records after it, so the
    # total is unknown (the bar counts without one).
    end = int(time.time() * 1000)
    time.sleep(0.02)
    t.append(_rows(1000, 10))
    rec = Recorder()
    assert t.read_between(since, end, progress=rec).num_rows == later
    assert rec.total is None and rec.n == later


def test_unknown_totals_count_without_one(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA, buckets=2)
    t.append(_rows(0, 50))
    rec = Recorder()
    assert t.read(filter=[("id", "<", 20)], progress=rec).num_rows == 20
    assert rec.total is None and rec.n == 20

    pk = conn.create_table(f"{db}.pk", SCHEMA, primary_key=["id"], buckets=2)
    pk.upsert(_rows(0, 30))
    pk.upsert(_rows(0, 10))  # updates: the latest view still has 30 keys
    rec = Recorder()
    assert pk.read(progress=rec).num_rows == 30
    assert rec.total is None and rec.n == 30

    # Its changelog has one row per record: 30 inserts, then update_before + update_after
    # for each of the 10 keys written again; that total is known.
    rec = Recorder()
    changes = pk.changelog(progress=rec)
    assert changes.num_rows == 50
    assert (rec.total, rec.n) == (50, 50)


def test_write_total_is_the_input_rows(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA, buckets=2)
    inputs: list[tuple[str, Any, int]] = [
        ("pyarrow table", _rows(0, 40), 40),
        ("record batch", _rows(0, 7).to_batches()[0], 7),
        ("pandas", pd.DataFrame({"id": range(12), "name": ["x"] * 12}), 12),
        ("polars", pl.DataFrame({"id": list(range(9)), "name": ["y"] * 9}), 9),
        ("dict of columns", {"id": [1, 2, 3], "name": ["a", "b", "c"]}, 3),
        ("list of rows", [{"id": i, "name": "z"} for i in range(5)], 5),
    ]
    for what, data, n in inputs:
        rec = Recorder()
        assert t.append(data, progress=rec) == n, what
        assert (rec.total_at_first_update, rec.n) == (n, n), what

    # A streamed reader's rows are not known before it is consumed.
    rec = Recorder()
    reader = pa.RecordBatchReader.from_batches(SCHEMA, _rows(0, 8).to_batches())
    assert t.append(reader, progress=rec) == 8
    assert rec.total is None and rec.n == 8

    pk = conn.create_table(f"{db}.pk", SCHEMA, primary_key=["id"])
    rec = Recorder()
    assert pk.upsert(_rows(0, 25), progress=rec) == 25
    assert (rec.total, rec.n) == (25, 25)
    rec = Recorder()
    assert pk.delete([1, 2, 3, 4], progress=rec) == 4
    assert (rec.total, rec.n) == (4, 4)


def test_aio_read_and_write_pass_the_total(server: riverlet.LocalServer, db: str) -> None:
    async def main() -> None:
        async with riverlet.aio.connect(server.bootstrap_servers) as conn:
            t = await conn.create_table(f"{db}.aio", SCHEMA, buckets=2)
            rec = Recorder()
            assert await t.append(_rows(0, 77), progress=rec) == 77
            assert (rec.total_at_first_update, rec.n) == (77, 77)
            rec = Recorder()
            assert (await t.read(progress=rec)).num_rows == 77
            assert (rec.total_at_first_update, rec.n) == (77, 77)

    asyncio.run(main())
