"""DELETE and UPDATE by condition (``Table.delete_where`` / ``Table.update_where``) on the
embedded server, with the tables and statements of Fluss's Flink guide."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([
    pa.field("shop_id", pa.int64(), nullable=False),
    pa.field("user_id", pa.int64(), nullable=False),
    ("num_orders", pa.int32()),
    ("total_amount", pa.int32()),
])
ROWS = [
    (10000, 123456, 3, 150),
    (10000, 2, 0, 0),
    (20000, 3, 5, 100),
    (20000, 4, 1, 101),
    (30000, 5, 0, 250),
]


def rows(t: riverlet.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in t.read().to_pylist())


def make(conn: riverlet.Connection, db: str, name: str = "pk_table",
         properties: dict | None = None) -> riverlet.Table:
    t = conn.create_table(f"{db}.{name}", SCHEMA, primary_key=["shop_id", "user_id"],
                          buckets=3, properties=properties)
    t.upsert([dict(zip(SCHEMA.names, r)) for r in ROWS])
    return t


def test_delete_by_key_and_by_condition(conn: riverlet.Connection, db: str) -> None:
    t = make(conn, db)
    assert t.delete_where("shop_id = 10000 AND user_id = 123456") == 1
    assert t.delete_where([("shop_id", "=", 10000), ("user_id", "=", 123456)]) == 0
    assert t.delete_where([("total_amount", ">", 100)]) == 2
    assert rows(t) == [(10000, 2, 0, 0), (20000, 3, 5, 100)]
    assert t.delete_where([]) == 2
    assert rows(t) == []


def test_update_by_key_and_by_condition(conn: riverlet.Connection, db: str) -> None:
    t = make(conn, db)
    assert t.update_where("shop_id = 10000 AND user_id = 123456", {"total_amount": 2}) == 1
    assert t.update_where("num_orders = 0", "total_amount = 0") == 2
    assert t.update_where("total_amount BETWEEN 100 AND 101",
                          {"num_orders": None, "total_amount": -1}) == 2
    assert rows(t) == [
        (10000, 2, 0, 0),
        (10000, 123456, 3, 2),
        (20000, 3, None, -1),
        (20000, 4, None, -1),
        (30000, 5, 0, 0),
    ]


def test_values_are_typed_as_their_column(conn: riverlet.Connection, db: str) -> None:
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("day", pa.date32()),
                        ("price", pa.decimal128(10, 2)), ("at", pa.timestamp("ms")),
                        ("ok", pa.bool_()), ("note", pa.string())])
    t = conn.create_table(f"{db}.typed", schema, primary_key="id")
    t.upsert([{"id": 1}, {"id": 2}])
    assert t.update_where([("id", "=", 1)], {
        "day": dt.date(2024, 1, 2), "price": Decimal("9.50"), "at": dt.datetime(2024, 1, 2, 3, 4, 5),
        "ok": True, "note": "x"}) == 1
    # Strings are read for temporal columns, integers fit decimals exactly.
    assert t.update_where("id = 2", "day = '2024-03-04', price = 7, at = '2024-03-04 05:06:07'") == 1
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "day": dt.date(2024, 1, 2), "price": Decimal("9.50"),
         "at": dt.datetime(2024, 1, 2, 3, 4, 5), "ok": True, "note": "x"},
        {"id": 2, "day": dt.date(2024, 3, 4), "price": Decimal("7.00"),
         "at": dt.datetime(2024, 3, 4, 5, 6, 7), "ok": None, "note": None},
    ]
    with pytest.raises(riverlet.InvalidArgumentError, match="price"):
        t.update_where("id = 1", {"price": Decimal("1.255")})
    with pytest.raises(riverlet.InvalidArgumentError, match="day"):
        t.update_where("id = 1", {"day": "not a date"})


def test_rules_of_fluss(conn: riverlet.Connection, db: str) -> None:
    t = make(conn, db)
    with pytest.raises(riverlet.UnsupportedError, match="column 'user_id'"):
        t.update_where("num_orders = 0", {"user_id": 1})
    with pytest.raises(riverlet.InvalidArgumentError, match="unknown column 'nope'"):
        t.update_where("num_orders = 0", {"nope": 1})
    with pytest.raises(riverlet.InvalidArgumentError, match="nope"):
        t.delete_where("nope = 1")
    with pytest.raises(riverlet.InvalidArgumentError, match="filter"):
        t.delete_where(None)  # type: ignore[arg-type]
    assert rows(t) == sorted(ROWS)

    disabled = make(conn, db, "disabled", {"table.delete.behavior": "disable"})
    with pytest.raises(riverlet.UnsupportedError, match="delete behavior set to 'disable'"):
        disabled.delete_where("total_amount > 0")
    ignored = make(conn, db, "ignored", {"table.delete.behavior": "ignore"})
    assert ignored.delete_where("total_amount > 0") == 0
    assert rows(ignored) == sorted(ROWS)

    first_row = make(conn, db, "first_row", {"table.merge-engine": "first_row"})
    with pytest.raises(riverlet.UnsupportedError, match="'FIRST_ROW' merge engine"):
        first_row.update_where("num_orders = 0", {"total_amount": 1})

    log = conn.create_table(f"{db}.log", SCHEMA)
    with pytest.raises(riverlet.UnsupportedError, match="Log Table"):
        log.delete_where("shop_id = 1")
