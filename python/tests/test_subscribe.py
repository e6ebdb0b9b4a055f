from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def drain(sub: riverlet.Subscription, want: int, timeout: float = 10.0) -> pa.Table:
    batches: list[pa.RecordBatch] = []
    deadline = time.monotonic() + timeout
    while sum(b.num_rows for b in batches) < want and time.monotonic() < deadline:
        batches.extend(sub.poll(0.2))
    return pa.Table.from_batches(batches) if batches else pa.table({})


def test_subscribe_earliest_and_latest(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.sub", SCHEMA, buckets=2)
    t.append([{"id": i, "v": "old"} for i in range(4)])
    with t.subscribe("earliest") as sub:
        got = drain(sub, 4)
        assert got.schema.names == ["_change_type", "_log_offset", "_commit_timestamp", "id", "v"]
        assert sorted(got.column("id").to_pylist()) == [0, 1, 2, 3]
        assert set(got.column("_change_type").to_pylist()) == {"insert"}
        assert sub.schema.names == ["id", "v"]
    assert sub.closed
    with t.subscribe("latest", columns=["id"]) as sub:
        assert sub.poll(0.2) == []
        t.append([{"id": 100, "v": "new"}])
        got = drain(sub, 1)
        assert got.column("id").to_pylist() == [100]
        assert got.schema.names[3:] == ["id"]


def test_subscribe_from_timestamp_and_full(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.subts", SCHEMA, primary_key=["id"], buckets=1)
    t.upsert([{"id": 1, "v": "a"}])
    time.sleep(0.05)
    cut = time.time_ns() // 1_000_000
    time.sleep(0.05)
    t.upsert([{"id": 2, "v": "b"}])
    with t.subscribe(cut) as sub:
        assert drain(sub, 1).column("id").to_pylist() == [2]
    with t.subscribe("full") as sub:
        got = drain(sub, 2)
        assert sorted(got.column("id").to_pylist()) == [1, 2]
    with pytest.raises(riverlet.InvalidArgumentError):
        t.subscribe("sometime")


def test_subscription_iterates(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.subit", SCHEMA)
    t.append([{"id": 1, "v": "a"}])
    sub = t.subscribe()
    for batch in sub:
        assert batch.num_rows == 1
        break
    sub.close()
    with pytest.raises(riverlet.ClosedError):
        sub.poll(0.1)


def test_poll_from_two_threads_is_refused(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.sub2", SCHEMA)
    sub = t.subscribe("latest")
    assert sub.poll(0.01) == []  # positions the subscription at the end
    got: list[pa.RecordBatch] = []
    th = threading.Thread(target=lambda: got.extend(sub.poll(3600.0)))
    th.start()
    # Until the thread's poll is under way a second poll may still succeed; once it is, the
    # second poll must be refused (no sleep standing in for "the thread is polling").
    while True:
        try:
            sub.poll(0.01)
        except riverlet.InvalidArgumentError:
            break
    t.append([{"id": 1, "v": "wake"}])  # ends the thread's poll
    th.join()
    assert sum(b.num_rows for b in got) == 1
    sub.close()


def test_poll_with_a_timeout_past_the_clock_returns_the_data(
    conn: riverlet.Connection, db: str
) -> None:
    # 1e19 seconds fits a Duration but not the monotonic clock: it must mean "wait for data",
    # not an overflow panic.
    t = conn.create_table(f"{db}.hugepoll", SCHEMA, buckets=1)
    t.append([{"id": 1, "v": "a"}])
    with t.subscribe("earliest") as sub:
        got = sub.poll(1e19)
        assert sum(b.num_rows for b in got) == 1
        assert got[0].column("id").to_pylist() == [1]
