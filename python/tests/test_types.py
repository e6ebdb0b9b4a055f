"""Every Fluss data type round-trips through append/upsert and read."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

import riverlet

FIELDS = [
    ("c_bool", pa.bool_(), [True, False, None]),
    ("c_tinyint", pa.int8(), [-128, 127, None]),
    ("c_smallint", pa.int16(), [-32768, 32767, None]),
    ("c_int", pa.int32(), [-2**31, 2**31 - 1, None]),
    ("c_bigint", pa.int64(), [-2**63, 2**63 - 1, None]),
    ("c_float", pa.float32(), [1.5, -0.25, None]),
    ("c_double", pa.float64(), [3.141592653589793, -1e300, None]),
    ("c_decimal", pa.decimal128(10, 2), [decimal.Decimal("12345678.90"), decimal.Decimal("-0.01"), None]),
    ("c_decimal38", pa.decimal128(38, 10), [decimal.Decimal("1234567890123456789012345678.0123456789"), decimal.Decimal("0"), None]),
    ("c_string", pa.string(), ["héllo", "", None]),
    ("c_bytes", pa.binary(), [b"\x00\x01", b"", None]),
    ("c_binary4", pa.binary(4), [b"abcd", b"\x00\x00\x00\x00", None]),
    ("c_date", pa.date32(), [dt.date(2026, 1, 1), dt.date(1970, 1, 1), None]),
    ("c_time_ms", pa.time32("ms"), [dt.time(23, 59, 59, 999000), dt.time(0, 0), None]),
    ("c_time_us", pa.time64("us"), [dt.time(12, 0, 0, 123456), dt.time(0, 0), None]),
    ("c_ts_ms", pa.timestamp("ms"), [dt.datetime(2026, 1, 2, 3, 4, 5, 678000), dt.datetime(1969, 12, 31, 23, 59, 59), None]),
    ("c_ts_us", pa.timestamp("us"), [dt.datetime(2026, 1, 2, 3, 4, 5, 678901), dt.datetime(2000, 1, 1), None]),
    ("c_ts_ns", pa.timestamp("ns"), [dt.datetime(2026, 1, 2, 3, 4, 5, 678901), dt.datetime(2000, 1, 1), None]),
    ("c_array", pa.list_(pa.int32()), [[1, 2, None], [], None]),
    ("c_map", pa.map_(pa.string(), pa.int64()), [[("a", 1), ("b", None)], [], None]),
    ("c_row", pa.struct([("x", pa.int32()), ("y", pa.string())]), [{"x": 1, "y": "a"}, {"x": None, "y": None}, None]),
]


def _data() -> pa.Table:
    cols = {"id": pa.array([1, 2, 3], pa.int32())}
    for name, typ, vals in FIELDS:
        cols[name] = pa.array(vals, typ)
    return pa.table(cols)


@pytest.mark.parametrize("pk", [False, True])
def test_all_types_round_trip(conn: riverlet.Connection, db: str, pk: bool) -> None:
    data = _data()
    schema = data.schema
    if pk:
        schema = schema.set(0, schema.field(0).with_nullable(False))
    t = conn.create_table(f"{db}.types", schema, primary_key=["id"] if pk else None)
    if pk:
        t.upsert(data)
    else:
        t.append(data)
    got = t.read().sort_by("id")
    assert got.schema.names == data.schema.names
    for name, typ, vals in FIELDS:
        assert got.schema.field(name).type == typ, name
        want = data.column(name).to_pylist()
        if pk and name == "c_time_us":
            # Fluss rows (the KV format) keep TIME as milliseconds of the day.
            want = [v.replace(microsecond=v.microsecond // 1000 * 1000) if v else v for v in want]
        assert got.column(name).to_pylist() == want, name


def test_timestamp_ltz(conn: riverlet.Connection, db: str) -> None:
    # TIMESTAMP_LTZ comes from a zoned Arrow timestamp; Fluss reads it back without a zone
    # (UTC instants), exactly as the Java client does.
    schema = pa.schema([("ts", pa.timestamp("us", tz="UTC"))])
    t = conn.create_table(f"{db}.ltz", schema)
    instant = dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc)
    t.append(pa.table({"ts": pa.array([instant], schema.field(0).type)}))
    got = t.read()
    assert got.column("ts").to_pylist() == [instant.replace(tzinfo=None)]
    assert t.read(filter=[("ts", "=", instant)]).num_rows == 1
    assert t.read(filter=[("ts", ">", instant)]).num_rows == 0


def test_filters_on_typed_columns(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.types", _data().schema)
    t.append(_data())
    ids = lambda f: sorted(t.read(columns=["id"], filter=f).column("id").to_pylist())  # noqa: E731
    assert ids([("c_bool", "=", True)]) == [1]
    assert ids([("c_decimal", "<", decimal.Decimal("0"))]) == [2]
    assert ids([("c_date", ">=", dt.date(2000, 1, 1))]) == [1]
    assert ids([("c_date", "=", "2026-01-01")]) == [1]
    assert ids([("c_ts_ms", "<", dt.datetime(1970, 1, 1))]) == [2]
    assert ids([("c_time_ms", ">", dt.time(12, 0))]) == [1]
    assert ids([("c_bytes", "=", b"\x00\x01")]) == [1]
    assert ids([("c_double", "<", 0.0)]) == [2]
    assert ids([("c_string", "is null")]) == [3]
