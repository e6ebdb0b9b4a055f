"""The ways to start the Flight SQL gateway besides `riverlet flight`: `riverlet serve
--flight-port` (the embedded server with the gateway next to it) and the Python package's
`riverlet.flight_server` (the gateway as a child process of Python), queried with ADBC.

Binaries as in test_flight_sql.py (RIVERLET_BIN, RIVERLET_FLIGHT_BIN); the riverlet package
from the virtualenv the Python suite installs it into.
"""

import os
import time
import shutil
import socket
import subprocess

import adbc_driver_flightsql.dbapi as flight_sql
import pyarrow as pa
import pytest

import riverlet
from test_flight_sql import FLIGHT, RIVERLET, riverlet as riverlet_cli


def query(uri, sql, **kwargs):
    with flight_sql.connect(uri, **kwargs) as conn, conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetch_arrow_table()


def port_open(uri):
    host, port = uri.removeprefix("grpc://").rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex((host, int(port))) == 0


def test_serve_flight_port_serves_the_embedded_server(tmp_path):
    proc = subprocess.Popen([RIVERLET, "serve", "--data-dir", str(tmp_path), "--port", "0",
                             "--flight-port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        first, second = proc.stdout.readline(), proc.stdout.readline()
        assert first.startswith("bootstrap: "), first
        assert second.startswith("flight: grpc://"), second
        bootstrap, uri = first.split()[1], second.split()[1]
        riverlet_cli("create-table", "fluss.events", "--schema", "id BIGINT, kind STRING",
                     bootstrap=bootstrap)
        riverlet_cli("write", "fluss.events", '[[1, "a"], [2, "b"], [3, "a"]]',
                     bootstrap=bootstrap)
        got = query(uri, "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind")
        assert got.to_pylist() == [{"kind": "a", "n": 2}, {"kind": "b", "n": 1}]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # The gateway stopped with the server.
    assert proc.returncode == 0
    assert not port_open(uri)


def test_serve_flight_port_in_use_fails_naming_it(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([RIVERLET, "serve", "--data-dir", str(tmp_path), "--port", "0",
                            "--flight-port", str(port)], capture_output=True, text=True,
                           timeout=60)
    assert r.returncode == 1
    assert f"127.0.0.1:{port}" in r.stderr
    assert "did not start the Flight SQL service" in r.stderr


def test_serve_flight_port_without_the_gateway_program_says_how_to_build_it(tmp_path):
    # A copy of riverlet alone in a directory, with a PATH that has no riverlet-flight.
    lone = tmp_path / "bin"
    lone.mkdir()
    shutil.copy(RIVERLET, lone / "riverlet")
    r = subprocess.run([str(lone / "riverlet"), "serve", "--data-dir", str(tmp_path / "d"),
                        "--port", "0", "--flight-port", "0"], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "PATH": str(lone)})
    assert r.returncode == 1
    assert "riverlet-flight" in r.stderr and "cargo build -p riverlet-sql" in r.stderr


def test_python_flight_server_over_a_local_server():
    with riverlet.LocalServer() as server:
        conn = server.connect()
        t = conn.create_table("fluss.orders", pa.schema([("id", pa.int64()),
                                                         ("item", pa.string())]), buckets=2)
        t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "item": ["x", "y", "z"]}))
        with riverlet.flight_server(server, program=FLIGHT, tz="UTC") as gateway:
            assert gateway.running and gateway.uri == f"grpc://127.0.0.1:{gateway.port}"
            got = gateway.query("SELECT id, item FROM orders WHERE id >= 2 ORDER BY id")
            assert got.to_pylist() == [{"id": 2, "item": "y"}, {"id": 3, "item": "z"}]
            # Any other Flight SQL client reaches it at the same address.
            assert query(gateway.uri, "SELECT count(*) AS n FROM orders").column(
                "n").to_pylist() == [3]
        assert not gateway.running
        assert not port_open(gateway.uri)
        conn.close()


def test_python_flight_server_errors_name_the_problem(tmp_path):
    with pytest.raises(riverlet.InvalidArgumentError, match="not an executable file"):
        riverlet.flight_server("127.0.0.1:9123", program=str(tmp_path / "nope"))
    with pytest.raises(riverlet.InvalidArgumentError, match="port must be"):
        riverlet.flight_server("127.0.0.1:9123", program=FLIGHT, port=70000)
    with pytest.raises(riverlet.InvalidArgumentError, match="--tz|time zone|Mars"):
        riverlet.flight_server("127.0.0.1:9123", program=FLIGHT, tz="Mars/Base")
    env_path = os.environ.get("PATH", "")
    os.environ["PATH"] = str(tmp_path)
    saved = os.environ.pop("RIVERLET_FLIGHT_BIN", None)
    try:
        with pytest.raises(riverlet.UnsupportedError, match="cargo build -p riverlet-sql"):
            riverlet.flight_server("127.0.0.1:9123")
    finally:
        os.environ["PATH"] = env_path
        if saved is not None:
            os.environ["RIVERLET_FLIGHT_BIN"] = saved


def test_readme_duckdb_reads_a_time_window_fetched_through_adbc():
    import duckdb

    with riverlet.LocalServer() as server:
        conn = server.connect()
        conn.create_database("shop")
        t = conn.create_table("shop.orders", pa.schema([("item", pa.string()),
                                                        ("amount", pa.int32())]))
        t.append(pa.table({"item": ["old"], "amount": pa.array([1], pa.int32())}))
        # The old row's commit timestamp may fall in the same millisecond as the ack: step past
        # it before taking the window's start.
        time.sleep(0.01)
        start = int(time.time() * 1000)
        time.sleep(0.01)
        t.append(pa.table({"item": ["a", "b", "a"], "amount": pa.array([1, 2, 3], pa.int32())}))
        with riverlet.flight_server(server, program=FLIGHT, tz="UTC") as gateway:
            window = f"SELECT * FROM fluss_incremental_between_timestamp('shop.orders', {start})"
            with flight_sql.connect(gateway.uri) as c, c.cursor() as cur:
                cur.execute(window)
                orders_window = cur.fetch_arrow_table()
            got = duckdb.sql("SELECT item, sum(amount) AS s FROM orders_window "
                             "GROUP BY item ORDER BY item").fetchall()
            assert got == [("a", 4), ("b", 2)]
            assert gateway.query(window).num_rows == 3
        conn.close()
