"""Time-range reads through Python: every accepted timestamp form, windows, PK folding, errors."""

from __future__ import annotations

import datetime as dt
import time

import pandas as pd
import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def commit_window(write) -> tuple[int, int]:  # noqa: ANN001
    """Runs ``write`` and returns a [start, end) window of commit time that covers it only."""
    time.sleep(0.02)
    start = now_ms()
    time.sleep(0.02)
    write()
    time.sleep(0.02)
    end = now_ms()
    time.sleep(0.02)
    return start, end


@pytest.fixture()
def log3(conn: riverlet.Connection, db: str):  # noqa: ANN201
    t = conn.create_table(f"{db}.tr", SCHEMA, buckets=2)
    windows = [commit_window(lambda i=i: t.append([{"id": i * 10 + j, "v": f"w{i}"} for j in range(3)]))
               for i in range(3)]
    return t, windows


def ids(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


def test_log_windows_partition_history(log3) -> None:  # noqa: ANN001
    t, w = log3
    assert ids(t.read_between(w[0][0], w[0][1])) == [0, 1, 2]
    assert ids(t.read_between(w[1][0], w[1][1])) == [10, 11, 12]
    assert ids(t.read_between(w[1][0])) == [10, 11, 12, 20, 21, 22]
    # consecutive windows: no row twice, none lost
    cut = w[1][1]
    a, b = ids(t.read_between(w[0][0], cut)), ids(t.read_between(cut, now_ms()))
    assert sorted(a + b) == ids(t.read()) and not set(a) & set(b)
    # with projection and filter on top
    got = t.read_between(w[0][0], w[1][1], columns=["id"], filter=[("id", ">", 1)])
    assert got.schema.names == ["id"] and ids(got) == [2, 10, 11, 12]
    assert sum(b.num_rows for b in t.scan_between(w[2][0])) == 3


def test_timestamp_forms(log3) -> None:  # noqa: ANN001
    t, w = log3
    start_ms, end_ms = w[1]
    utc = dt.timezone.utc
    start_utc = dt.datetime.fromtimestamp(start_ms / 1000, tz=utc)
    end_utc = dt.datetime.fromtimestamp(end_ms / 1000, tz=utc)
    # ms precision: round the start down and the end up so the window still covers the write
    fmt = "%Y-%m-%d %H:%M:%S.%f"
    forms = [
        (start_ms, end_ms, None),
        (str(start_ms), str(end_ms), None),
        (start_utc, end_utc, None),
        (start_utc.astimezone(dt.timezone(dt.timedelta(hours=8))), end_utc, "Asia/Tokyo"),
        (start_utc.replace(tzinfo=None), end_utc.replace(tzinfo=None), "UTC"),
        (pd.Timestamp(start_ms, unit="ms", tz="UTC"), pd.Timestamp(end_ms, unit="ms", tz="UTC"), None),
        (start_utc.strftime(fmt)[:-3], end_utc.strftime(fmt)[:-3], "UTC"),
        ((start_utc + dt.timedelta(hours=8)).strftime(fmt)[:-3],
         (end_utc + dt.timedelta(hours=8)).strftime(fmt)[:-3], "+08:00"),
    ]
    for s, e, tz in forms:
        assert ids(t.read_between(s, e, tz=tz)) == [10, 11, 12], (s, e, tz)


def test_seconds_text_and_dates(log3) -> None:  # noqa: ANN001
    t, w = log3
    today = dt.datetime.now(dt.timezone.utc).date()
    # a date is midnight of that day in tz: everything written today (UTC)
    assert len(ids(t.read_between(today, tz="UTC"))) == 9
    text = dt.datetime.fromtimestamp(w[0][0] / 1000 - 1, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    assert len(ids(t.read_between(text, tz="UTC"))) == 9
    # local zone default: a naive datetime is a local wall clock
    local_start = dt.datetime.fromtimestamp(w[2][0] / 1000)
    assert ids(t.read_between(local_start)) == [20, 21, 22]


def test_invalid_windows(log3) -> None:  # noqa: ANN001
    t, w = log3
    with pytest.raises(riverlet.InvalidArgumentError, match=r"\[start, end\)"):
        t.read_between(w[1][1], w[1][0])
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read_between(w[1][0], w[1][0])
    with pytest.raises(riverlet.InvalidArgumentError, match="yyyy-MM-dd HH:mm:ss"):
        t.read_between("yesterday-ish")
    with pytest.raises(riverlet.InvalidArgumentError, match="blank"):
        t.read_between("  ")
    with pytest.raises(riverlet.InvalidArgumentError, match="future"):
        t.read_between(now_ms() + 3_600_000)
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read_between(None, w[1][1])  # type: ignore[arg-type]
    with pytest.raises(riverlet.InvalidArgumentError):
        t.changelog(end=w[1][1])  # an end without a start
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read_between(1.5)
    with pytest.raises(riverlet.InvalidArgumentError):
        t.read_between(w[0][0], tz="Mars/Olympus")


def test_pk_window_folds_per_key(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.trpk", SCHEMA, primary_key=["id"], buckets=1)
    t.upsert([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}])
    time.sleep(0.02)
    start = now_ms()
    time.sleep(0.02)
    t.upsert([{"id": 1, "v": "a2"}])
    t.upsert([{"id": 1, "v": "a3"}])
    t.delete(2)
    t.upsert([{"id": 4, "v": "d"}])
    t.delete(4)
    t.delete(3)
    t.upsert([{"id": 3, "v": "c2"}])
    time.sleep(0.02)
    end = now_ms()
    got = sorted(t.read_between(start, end).to_pylist(), key=lambda r: r["id"])
    # 1: last value in the window; 2: deleted -> out; 4: inserted and deleted -> out;
    # 3: deleted then re-inserted -> new value
    assert got == [{"id": 1, "v": "a3"}, {"id": 3, "v": "c2"}]
    with pytest.raises(riverlet.InvalidArgumentError):
        t._native.scan(None, None, None, None, start, end, None, True, False)
    cl = t.changelog(start, end)
    assert cl.num_rows >= 7


def test_window_before_retention_is_not_an_error(log3) -> None:  # noqa: ANN001
    t, _ = log3
    assert len(ids(t.read_between(0))) == 9
