"""Producer offsets (Fluss's Register/Get/DeleteProducerOffsets) through the Python admin API
against the embedded server: registered offsets read back, a second registration keeps the
first, delete, expiry by the request's TTL and by the server's
``coordinator.producer-offsets.ttl``, and bad input as typed errors naming the value."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

import riverlet


def _table_id(conn: riverlet.Connection, db: str, name: str) -> int:
    conn.create_table(f"{db}.{name}", pa.schema([("id", pa.int32())]), buckets=2)
    return conn.table(f"{db}.{name}").table_id


def test_register_get_delete(conn: riverlet.Connection, db: str) -> None:
    t = _table_id(conn, db, "t")
    pid = f"job-{db}"
    assert conn.get_producer_offsets(pid) is None
    before = int(time.time() * 1000)
    assert conn.register_producer_offsets(pid, {(t, None, 0): 5, (t, None, 1): 7}) is True
    got = conn.get_producer_offsets(pid)
    assert got is not None
    assert got["producer_id"] == pid
    assert got["offsets"] == {(t, None, 0): 5, (t, None, 1): 7}
    # The server's default TTL is Fluss's 24 h.
    assert before + 24 * 3600 * 1000 <= got["expiration_time_ms"]
    assert got["expiration_time_ms"] <= int(time.time() * 1000) + 24 * 3600 * 1000
    # A live registration is kept: False, and the first offsets stay.
    assert conn.register_producer_offsets(pid, {(t, None, 0): 99}) is False
    assert conn.get_producer_offsets(pid)["offsets"] == {(t, None, 0): 5, (t, None, 1): 7}
    conn.delete_producer_offsets(pid)
    assert conn.get_producer_offsets(pid) is None
    conn.delete_producer_offsets(pid)  # nothing left to delete: not an error


def test_a_zero_ttl_expires_at_once(conn: riverlet.Connection, db: str) -> None:
    t = _table_id(conn, db, "t")
    pid = f"job0-{db}"
    assert conn.register_producer_offsets(pid, {(t, None, 0): 1}, ttl_ms=0) is True
    assert conn.get_producer_offsets(pid) is None
    assert conn.register_producer_offsets(pid, {(t, None, 0): 2}) is True
    assert conn.get_producer_offsets(pid)["offsets"] == {(t, None, 0): 2}
    conn.delete_producer_offsets(pid)


def test_the_server_ttl_option(tmp_path) -> None:
    with riverlet.LocalServer(
        data_dir=str(tmp_path), options={"coordinator.producer-offsets.ttl": "1 s"}
    ) as server, server.connect() as conn:
        conn.create_database("d")
        t = _table_id(conn, "d", "t")
        assert conn.register_producer_offsets("job", {(t, None, 0): 1}) is True
        got = conn.get_producer_offsets("job")
        assert got is not None
        while int(time.time() * 1000) <= got["expiration_time_ms"]:
            time.sleep(0.1)
        assert conn.get_producer_offsets("job") is None


def test_bad_input_is_a_typed_error_naming_it(conn: riverlet.Connection, db: str) -> None:
    t = _table_id(conn, db, "t")
    for bad in ["", "job/1", "x" * 201]:
        for call in (
            lambda: conn.register_producer_offsets(bad, {(t, None, 0): 1}),
            lambda: conn.get_producer_offsets(bad),
            lambda: conn.delete_producer_offsets(bad),
        ):
            with pytest.raises(riverlet.RiverletError) as e:
                call()
            assert e.value.code_name == "INVALID_PRODUCER_ID_EXCEPTION", e.value
            assert f"Invalid producer ID '{bad}'" in str(e.value), str(e.value)
    with pytest.raises(riverlet.InvalidArgumentError) as e:
        conn.register_producer_offsets(f"neg-{db}", {(t, None, 0): 1}, ttl_ms=-5)
    assert "-5" in str(e.value)
    assert conn.get_producer_offsets(f"neg-{db}") is None
