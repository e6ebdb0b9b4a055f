"""Seed scenario: partitioned log and primary-key tables, filters that prune partitions."""

import pyarrow as pa

import riverlet

SCHEMA = pa.schema([("order_id", pa.int64()), ("item_id", pa.int64()), ("amount", pa.int32()),
                    ("address", pa.string()), ("dt", pa.string())])
ROWS = [
    {"order_id": 600, "item_id": 21, "amount": 601, "address": "addr1", "dt": "2026-01-01"},
    {"order_id": 700, "item_id": 22, "amount": 602, "address": "addr2", "dt": "2026-01-01"},
    {"order_id": 800, "item_id": 23, "amount": 603, "address": "addr3", "dt": "2026-01-02"},
    {"order_id": 900, "item_id": 24, "amount": 604, "address": "addr4", "dt": "2026-01-02"},
    {"order_id": 1000, "item_id": 25, "amount": 605, "address": "addr5", "dt": "2026-01-03"},
]


def main() -> None:
    with riverlet.LocalServer() as server, riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("seed", if_not_exists=True)
        log = conn.create_table("seed.part_log_table", SCHEMA, partition_by=["dt"])
        pk = conn.create_table("seed.part_pk_table", SCHEMA, primary_key=["order_id", "dt"],
                               partition_by=["dt"])
        for t in (log, pk):
            for dt in sorted({str(r["dt"]) for r in ROWS}):
                conn.create_partition(t.name, {"dt": dt}, if_not_exists=True)
        log.append(ROWS)
        pk.upsert(ROWS)

        for t in (log, pk):
            day1 = t.read(filter=[("dt", "=", "2026-01-01")]).sort_by("order_id")
            assert day1.column("order_id").to_pylist() == [600, 700]
            two_days = t.read(columns=["order_id", "address", "dt"],
                              filter=[("dt", "in", ["2026-01-01", "2026-01-02"])])
            assert sorted(two_days.column("order_id").to_pylist()) == [600, 700, 800, 900]
            # OR of ANDs, as in pyarrow.parquet filters=
            either = t.read(filter=[[("dt", "=", "2026-01-03")],
                                    [("dt", "=", "2026-01-01"), ("amount", ">", 601)]])
            assert sorted(either.column("order_id").to_pylist()) == [700, 1000]
        print(conn.list_partitions("seed.part_log_table"))


if __name__ == "__main__":
    main()
