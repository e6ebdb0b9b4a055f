"""The aggregation merge engine (Flink-style ``fields.<col>.agg`` options) and auto-increment
columns (with lookup insert-if-not-exists) on the embedded server."""

from __future__ import annotations

import pyarrow as pa
import pytest

import riverlet


def test_aggregation_functions(conn: riverlet.Connection, db: str) -> None:
    schema = pa.schema([("product_id", pa.int64()), ("price", pa.float64()),
                        ("sales", pa.int64()), ("tags", pa.string()), ("note", pa.string())])
    t = conn.create_table(f"{db}.product_stats", schema, primary_key="product_id", properties={
        "table.merge-engine": "aggregation",
        "fields.price.agg": "max",
        "fields.sales.agg": "sum",
        "fields.tags.agg": "listagg",
        "fields.tags.listagg.delimiter": "|",
    })
    t.upsert([{"product_id": 1, "price": 23.0, "sales": 15, "tags": "a", "note": "x"}])
    t.upsert([{"product_id": 1, "price": 30.2, "sales": 20, "tags": None, "note": None}])
    t.upsert([{"product_id": 1, "price": 10.0, "sales": None, "tags": "b", "note": "y"}])
    # note has no function: last_value_ignore_nulls.
    assert t.lookup(1) == {"product_id": 1, "price": 30.2, "sales": 35, "tags": "a|b",
                           "note": "y"}
    with pytest.raises(riverlet.UnsupportedError, match="'AGGREGATION' merge engine"):
        t.delete_where("product_id = 1")


def test_aggregation_rejects_bad_functions(conn: riverlet.Connection, db: str) -> None:
    schema = pa.schema([("id", pa.int32()), ("name", pa.string())])
    with pytest.raises(riverlet.InvalidArgumentError, match="column 'name'"):
        conn.create_table(f"{db}.bad", schema, primary_key="id", properties={
            "table.merge-engine": "aggregation", "fields.name.agg": "sum"})
    with pytest.raises(riverlet.InvalidArgumentError, match="median"):
        conn.create_table(f"{db}.bad2", schema, primary_key="id", properties={
            "table.merge-engine": "aggregation", "fields.name.agg": "median"})


def test_auto_increment_dictionary(conn: riverlet.Connection, db: str) -> None:
    schema = pa.schema([("name", pa.string()), ("id", pa.int64()), ("note", pa.string())])
    t = conn.create_table(f"{db}.dict", schema, primary_key="name", auto_increment="id")
    with pytest.raises(riverlet.InvalidArgumentError, match="auto-increment column \\[id\\]"):
        t.upsert([{"name": "x", "note": "n"}])
    t.upsert([{"name": "a", "note": "first"}, {"name": "b"}], columns=["name", "note"])
    assert t.lookup("a") == {"name": "a", "id": 1, "note": "first"}
    assert t.lookup("c") is None
    assert t.lookup("c", insert_if_not_exists=True) == {"name": "c", "id": 3, "note": None}
    assert t.lookup("c", insert_if_not_exists=True) == {"name": "c", "id": 3, "note": None}
    got = t.lookup_many(["b", "d"], insert_if_not_exists=True).to_pylist()
    assert sorted((r["name"], r["id"]) for r in got) == [("b", 2), ("d", 4)]
    assert sorted((r["name"], r["id"]) for r in t.read().to_pylist()) == [
        ("a", 1), ("b", 2), ("c", 3), ("d", 4)]
