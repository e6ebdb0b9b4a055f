"""Seed scenario: a primary-key table — upsert, read the latest view, partial update, delete,
lookups."""

import pandas as pd
import pyarrow as pa

import riverlet

SCHEMA = pa.schema([("order_id", pa.int64()), ("item_id", pa.int64()), ("amount", pa.int32()),
                    ("address", pa.string())])


def main() -> None:
    with riverlet.LocalServer() as server, riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("seed", if_not_exists=True)
        t = conn.create_table("seed.pk_table", SCHEMA, primary_key=["order_id"], buckets=1)
        t.upsert(pd.DataFrame({
            "order_id": [600, 700, 800, 900, 1000], "item_id": [21, 22, 23, 24, 25],
            "amount": [601, 602, 603, 604, 605],
            "address": ["addr1", "addr2", "addr3", "addr4", "addr5"],
        }))
        assert t.count() == 5

        t.upsert([(700, 220, 602, "addr2"), (900, 240, 604, "addr4"), (1100, 260, 606, "addr6")])
        got = t.read(columns=["order_id", "item_id", "address"], filter=[("amount", "<=", 603)])
        assert sorted(got.to_pylist(), key=lambda r: r["order_id"]) == [
            {"order_id": 600, "item_id": 21, "address": "addr1"},
            {"order_id": 700, "item_id": 220, "address": "addr2"},
            {"order_id": 800, "item_id": 23, "address": "addr3"},
        ]

        t.upsert([{"order_id": 600, "amount": 0}], columns=["order_id", "amount"])  # partial
        assert t.lookup(600) == {"order_id": 600, "item_id": 21, "amount": 0, "address": "addr1"}
        t.delete([1100])
        assert t.lookup(1100) is None
        print(t.read().sort_by("order_id").to_pandas())
        print(t.changelog().to_pandas()[["_change_type", "_log_offset", "order_id"]])


if __name__ == "__main__":
    main()
