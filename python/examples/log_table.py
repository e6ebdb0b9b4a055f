"""Seed scenario: a log table — append, read all, projection, filters (pyarrow/pandas style)."""

import pyarrow as pa

import riverlet

SCHEMA = pa.schema([("order_id", pa.int64()), ("item_id", pa.int64()), ("amount", pa.int32()),
                    ("address", pa.string())])
ROWS = [(600, 21, 601, "addr1"), (700, 22, 602, "addr2"), (800, 23, 603, "addr3"),
        (900, 24, 604, "addr4"), (1000, 25, 605, "addr5")]


def main() -> None:
    with riverlet.LocalServer() as server, riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("seed", if_not_exists=True)
        t = conn.create_table("seed.log_table", SCHEMA)
        t.append(ROWS)  # a list of tuples in column order; DataFrames and Arrow work too

        all_rows = t.read().sort_by("order_id")
        assert [tuple(r.values()) for r in all_rows.to_pylist()] == ROWS
        print(all_rows.to_pandas())

        proj = t.read(columns=["address", "item_id"]).sort_by("item_id")
        assert proj.to_pylist()[0] == {"address": "addr1", "item_id": 21}

        even = t.read(filter=[("amount", "in", [602, 604])]).sort_by("order_id")
        assert even.column("order_id").to_pylist() == [700, 900]

        late = t.read(columns=["order_id", "item_id"], filter=[("order_id", ">=", 900)])
        assert sorted(late.column("order_id").to_pylist()) == [900, 1000]

        # The streaming form is a pyarrow.RecordBatchReader (DuckDB/Polars take it directly).
        print(sum(b.num_rows for b in t.scan()), "rows streamed")


if __name__ == "__main__":
    main()
