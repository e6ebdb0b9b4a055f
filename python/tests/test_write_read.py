from __future__ import annotations

import time

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("order_id", pa.int64()), ("item_id", pa.int64()), ("amount", pa.int32()),
                    ("address", pa.string())])
ROWS = [
    {"order_id": 600, "item_id": 21, "amount": 601, "address": "addr1"},
    {"order_id": 700, "item_id": 22, "amount": 602, "address": "addr2"},
    {"order_id": 800, "item_id": 23, "amount": 603, "address": None},
]


def sorted_rows(t: pa.Table, key: str = "order_id") -> list[dict]:
    return sorted(t.to_pylist(), key=lambda r: r[key])


@pytest.mark.parametrize("form", ["pylist", "tuples", "pydict", "table", "batch", "reader",
                                  "pandas", "polars", "capsule"])
def test_append_forms(conn: riverlet.Connection, db: str, form: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA)
    table = pa.Table.from_pylist(ROWS, schema=SCHEMA)
    data = {
        "pylist": ROWS,
        "tuples": [tuple(r.values()) for r in ROWS],
        "pydict": table.to_pydict(),
        "table": table,
        "batch": table.to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(SCHEMA, table.to_batches()),
        "pandas": pd.DataFrame(ROWS),
        "polars": pl.DataFrame(ROWS),
        "capsule": _Capsule(table),
    }[form]
    assert t.append(data) == 3
    assert sorted_rows(t.read()) == ROWS
    assert t.count() == 3


class _Capsule:
    def __init__(self, t: pa.Table) -> None:
        self.t = t

    def __arrow_c_stream__(self, requested_schema=None):  # noqa: ANN001
        return self.t.__arrow_c_stream__(requested_schema)


def test_append_empty_and_bad(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA)
    assert t.append([]) == 0
    with pytest.raises(riverlet.InvalidArgumentError):
        t.append(42)
    with pytest.raises(riverlet.InvalidArgumentError):
        t.append([(1, 2)])
    with pytest.raises(riverlet.InvalidArgumentError):
        t.append({"nope": [1]})
    with pytest.raises(riverlet.InvalidArgumentError):
        t.upsert(ROWS)
    with pytest.raises(riverlet.InvalidArgumentError):
        t.lookup(1)


def test_read_projection_filter_limit(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA)
    t.append(ROWS)
    got = t.read(columns=["address", "item_id"])
    assert got.schema.names == ["address", "item_id"]
    assert sorted(got.to_pylist(), key=lambda r: r["item_id"])[0] == {"address": "addr1", "item_id": 21}
    assert sorted_rows(t.read(filter=[("amount", "in", [602, 603])])) == ROWS[1:]
    assert sorted_rows(t.read(filter=("amount", ">=", 602))) == ROWS[1:]
    assert sorted_rows(t.read(filter="amount IN (602, 603)")) == ROWS[1:]
    assert t.read(limit=2).num_rows == 2
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read(columns=["nope"])
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read(filter=[("amount", "~", 1)])
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read(filter=[("nope", "=", 1)])


FILTER_CASES = [
    ([("amount", "=", 601)], [600]),
    ([("amount", "==", 601)], [600]),
    ([("amount", "!=", 601)], [700, 800]),
    ([("amount", "<", 602)], [600]),
    ([("amount", "<=", 602)], [600, 700]),
    ([("amount", ">", 602)], [800]),
    ([("amount", ">=", 602)], [700, 800]),
    ([("amount", "in", {601, 603})], [600, 800]),
    ([("amount", "not in", [601, 603])], [700]),
    ([("address", "is null")], [800]),
    ([("address", "is not null", None)], [600, 700]),
    ([("address", "like", "addr%")], [600, 700]),
    ([("address", "like", "%2")], [700]),
    ([("address", "not like", "%2")], [600]),
    ([("amount", ">", 600), ("amount", "<", 603)], [600, 700]),
    ([[("amount", "=", 601)], [("amount", "=", 603)]], [600, 800]),
    ([[("amount", "=", 601), ("item_id", "=", 21)], [("address", "is null")]], [600, 800]),
    ("address LIKE 'addr%' AND amount > 601", [700]),
    ([("amount", ">", 601.5)], [700, 800]),
    ([], [600, 700, 800]),
]


@pytest.mark.parametrize(("flt", "ids"), FILTER_CASES)
def test_filter_convention(conn: riverlet.Connection, db: str, flt, ids) -> None:  # noqa: ANN001
    t = conn.create_table(f"{db}.log", SCHEMA)
    t.append(ROWS)
    got = t.read(columns=["order_id"], filter=flt)
    assert sorted(got.column("order_id").to_pylist()) == ids


def test_partitioned_reads(conn: riverlet.Connection, db: str) -> None:
    schema = SCHEMA.append(pa.field("dt", pa.string()))
    t = conn.create_table(f"{db}.plog", schema, partition_by=["dt"])
    conn.create_partition(t.name, {"dt": "2026-01-01"})
    conn.create_partition(t.name, {"dt": "2026-01-02"})
    rows = [dict(r, dt="2026-01-01" if r["order_id"] < 800 else "2026-01-02") for r in ROWS]
    t.append(rows)
    assert sorted_rows(t.read()) == rows
    assert sorted_rows(t.read(filter=[("dt", "=", "2026-01-01")])) == rows[:2]
    assert sorted_rows(t.read(partitions=["2026-01-02"])) == rows[2:]
    assert sorted_rows(t.read(partitions=[{"dt": "2026-01-01"}])) == rows[:2]
    assert sorted_rows(t.read(filter=[("dt", "in", ["2026-01-01", "2026-01-02"])])) == rows


def test_to_pandas_polars(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA)
    t.append(ROWS)
    df = t.to_pandas(filter=[("amount", ">", 601)])
    assert sorted(df["order_id"].tolist()) == [700, 800]
    pdf = t.to_polars(columns=["order_id"])
    assert isinstance(pdf, pl.DataFrame) and sorted(pdf["order_id"].to_list()) == [600, 700, 800]


def test_progress_callback(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.log", SCHEMA)
    seen: list[int] = []
    t.append(ROWS, progress=seen.append)
    assert sum(seen) == 3
    seen.clear()
    t.read(progress=seen.append)
    assert sum(seen) == 3
    t.read(progress=True)  # tqdm bar


def test_read_into_a_table_matches_the_stream_and_outlives_its_connection(
        server: riverlet.LocalServer, db: str) -> None:
    # read() keeps every batch, so the core places them in shared blocks (a streaming scan()
    # recycles memory instead): both must return the same rows, and read()'s table must stay
    # intact once the read and its connection are gone.
    rows = [{"order_id": i, "item_id": i * 7 % 1000, "amount": i % 97,
             "address": None if i % 11 == 0 else f"addr{i * 31 % 500}"} for i in range(60_000)]
    since = int(time.time() * 1000) - 60_000
    with riverlet.connect(server.bootstrap_servers) as c:
        t = c.create_table(f"{db}.many", SCHEMA, buckets=2)
        for start in range(0, len(rows), 3000):
            t.append(rows[start:start + 3000])
        streamed = pa.Table.from_batches(list(t.scan()), schema=t.schema)
        kept = t.read()
        window = t.read_between(since)
    assert kept.num_rows == len(rows)
    assert len(kept.to_batches()) > 2
    assert sorted_rows(kept) == rows
    assert sorted_rows(streamed) == rows
    assert sorted_rows(window) == rows
