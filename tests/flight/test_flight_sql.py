"""`riverlet flight` (Arrow Flight SQL over Fluss) with real clients from PyPI: pyarrow.flight
and the ADBC Flight SQL driver run queries, a time window, metadata calls and appends/upserts,
and log in with Flight basic auth passed to Fluss as SASL/PLAIN.

Binaries: RIVERLET_BIN (default target/debug/riverlet) and RIVERLET_FLIGHT_BIN (default
target/debug/riverlet-flight), both from `cargo build --workspace`.
"""

import decimal
import os
import pathlib
import re
import subprocess
import time

import adbc_driver_flightsql.dbapi as flight_sql
import adbc_driver_manager
import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.flight as flight
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
RIVERLET = os.environ.get("RIVERLET_BIN", str(ROOT / "target/debug/riverlet"))
FLIGHT = os.environ.get("RIVERLET_FLIGHT_BIN", str(ROOT / "target/debug/riverlet-flight"))


def start(cmd, prefix):
    """Starts a server process and returns it with the value after `prefix` on its stdout."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if prefix not in line:
        proc.kill()
        raise RuntimeError(f"{cmd[0]} printed {line!r}")
    return proc, line.split(prefix, 1)[1].split()[0]


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def riverlet(*args, bootstrap):
    subprocess.run([RIVERLET, *args, "--bootstrap", bootstrap], check=True,
                   stdout=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def fluss(tmp_path_factory):
    """A Fluss server (`riverlet serve`) with a log table and a primary-key table."""
    data = tmp_path_factory.mktemp("fluss")
    proc, bootstrap = start(
        [RIVERLET, "serve", "--data-dir", str(data), "--port", "0"], "bootstrap: ")
    try:
        riverlet("create-table", "fluss.orders", "--schema",
                 "order_id BIGINT, item STRING, amount INT", "--buckets", "3",
                 bootstrap=bootstrap)
        riverlet("create-table", "fluss.stock", "--schema", "sku STRING, qty INT",
                 "--primary-key", "sku", "--buckets", "2", bootstrap=bootstrap)
        riverlet("write", "fluss.orders",
                 '[[1, "apple", 10], [2, "pear", 20], [3, "plum", 30]]', bootstrap=bootstrap)
        yield bootstrap
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def service(fluss):
    proc, uri = start([FLIGHT, "--bootstrap", fluss, "--port", "0", "--tz", "UTC"],
                      "listening on ")
    try:
        yield uri
    finally:
        stop(proc)


def read_all(client, sql):
    info = client.get_flight_info(flight.FlightDescriptor.for_command(command(sql)))
    tables = [client.do_get(e.ticket).read_all() for e in info.endpoints]
    return info, pa.concat_tables(tables)


def command(sql):
    """A Flight SQL CommandStatementQuery in a protobuf Any (field 1: the query)."""
    query = sql.encode()
    inner = b"\x0a" + varint(len(query)) + query
    type_url = b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery"
    return (b"\x0a" + varint(len(type_url)) + type_url
            + b"\x12" + varint(len(inner)) + inner)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def test_pyarrow_flight_query_has_one_endpoint_per_bucket(service):
    client = flight.connect(service)
    info, table = read_all(client, "SELECT order_id, item FROM orders")
    # Three buckets, read apart: three endpoints, together every row once.
    assert len(info.endpoints) == 3
    assert sorted(table.column("order_id").to_pylist()) == [1, 2, 3]
    _, table = read_all(client, "SELECT item FROM orders WHERE amount >= 20 ORDER BY item")
    assert table.column("item").to_pylist() == ["pear", "plum"]


def test_plain_reads_stream_fluss_batches_as_written(service, fluss):
    """A read of one table with nothing for DataFusion to do above it is streamed as the
    core's Arrow IPC messages (Fluss's stored, ZSTD-compressed batches, forwarded undecoded):
    pyarrow.flight and ADBC read back exactly the rows appended, in several batches per
    bucket, with the whole table, a projection, and a commit-time window."""
    riverlet("create-table", "fluss.events", "--schema",
             "id BIGINT, name STRING, score DOUBLE, at TIMESTAMP(3)", "--buckets", "3",
             bootstrap=fluss)
    client = flight.connect(service)
    written = []
    marks = []
    for part in range(4):
        ids = list(range(part * 500, part * 500 + 500))
        batch = pa.record_batch({
            "id": pa.array(ids, pa.int64()),
            "name": [f"n{i}" if i % 7 else None for i in ids],
            "score": pa.array([i / 4 for i in ids], pa.float64()),
            "at": pa.array([1_700_000_000_000 + i for i in ids], pa.timestamp("ms")),
        })
        marks.append(int(time.time() * 1000))
        time.sleep(0.01)
        writer, reader = client.do_put(flight.FlightDescriptor.for_path("fluss", "events"),
                                       batch.schema)
        writer.write_batch(batch)
        writer.done_writing()
        reader.read()
        writer.close()
        written.extend(batch.to_pylist())
        time.sleep(0.01)
    marks.append(int(time.time() * 1000))
    key = lambda r: r["id"]

    info, table = read_all(client, "SELECT * FROM events")
    assert len(info.endpoints) == 3
    assert sorted(table.to_pylist(), key=key) == written
    _, table = read_all(client, "SELECT id, score FROM events")
    assert table.schema.names == ["id", "score"]
    assert sorted(table.to_pylist(), key=key) == [
        {"id": r["id"], "score": r["score"]} for r in written]
    _, table = read_all(client, "SELECT * FROM fluss_incremental_between_timestamp("
                                f"'events', '{marks[1]}', '{marks[3]}')")
    assert sorted(table.to_pylist(), key=key) == written[500:1500]
    with flight_sql.connect(service) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM events")
            assert sorted(cur.fetch_arrow_table().to_pylist(), key=key) == written
    # --ipc-bodies uncompressed: the ZSTD batches are decompressed by the gateway first.
    proc, uri = start([FLIGHT, "--bootstrap", fluss, "--port", "0", "--tz", "UTC",
                       "--ipc-bodies", "uncompressed"], "listening on ")
    try:
        _, table = read_all(flight.connect(uri), "SELECT * FROM events")
        assert sorted(table.to_pylist(), key=key) == written
        with flight_sql.connect(uri) as conn:
            with conn.cursor() as cur:
                cur.execute("SELECT id, name FROM events")
                assert sorted(cur.fetch_arrow_table().to_pylist(), key=key) == [
                    {"id": r["id"], "name": r["name"]} for r in written]
    finally:
        stop(proc)


def put(client, table, batch):
    """Appends `batch` to fluss.<table> with a plain Flight DoPut."""
    writer, reader = client.do_put(flight.FlightDescriptor.for_path("fluss", table), batch.schema)
    writer.write_batch(batch)
    writer.done_writing()
    reader.read()
    writer.close()


FORWARD_SCHEMA = ("id BIGINT, name STRING, score DOUBLE, price DECIMAL(12, 3), day DATE, "
                  "at TIMESTAMP(6), ok BOOLEAN, raw BYTES")


def forward_rows(lo, hi):
    ids = list(range(lo, hi))
    return pa.record_batch({
        "id": pa.array(ids, pa.int64()),
        "name": [f"n{i}" if i % 7 else None for i in ids],
        "score": pa.array([i / 8 if i % 5 else None for i in ids], pa.float64()),
        "price": pa.array([decimal.Decimal(i) / 1000 for i in ids], pa.decimal128(12, 3)),
        "day": pa.array([19_000 + i % 400 for i in ids], pa.date32()),
        "at": pa.array([1_700_000_000_000_000 + i for i in ids], pa.timestamp("us")),
        "ok": [i % 3 == 0 for i in ids],
        "raw": pa.array([bytes([i % 256]) * (i % 4) for i in ids], pa.binary()),
    })


def sent_counts(log, table):
    """(forwarded, encoded) summed over the plain reads of fluss.<table> the gateway logged."""
    found = re.findall(rf"plain read of fluss\.{table}(?: bucket \d+(?: piece \d+)?)? sent: "
                       r"forwarded=(\d+) encoded=(\d+)", log.read_text())
    return (sum(int(f) for f, _ in found), sum(int(e) for _, e in found)) if found else None


def test_forwarded_reads_equal_the_decode_path(fluss, tmp_path):
    """Plain reads forward Fluss's stored batches (ZSTD, LZ4_FRAME or uncompressed, as the
    table says) and reads with a filter go through the decode path (the core decodes, the
    gateway encodes): through pyarrow.flight and ADBC both give the schema of GetFlightInfo
    and the rows written, for log tables of 3 buckets, projections, an empty table, and reads
    that must be decoded (columns reordered, batches of an older schema, a primary-key
    table). The gateway's debug log says which batches it forwarded."""
    log = tmp_path / "flight.log"
    with open(log, "w") as err:
        # --split-records: the pieces below (the default is one endpoint per bucket).
        proc = subprocess.Popen([FLIGHT, "--bootstrap", fluss, "--port", "0", "--tz", "UTC",
                                 "--split-records", "131072"],
                                stdout=subprocess.PIPE, stderr=err, text=True,
                                env={**os.environ, "RIVERLET_LOG": "riverlet_sql=debug"})
    line = proc.stdout.readline()
    assert "listening on " in line, line
    uri = line.split("listening on ", 1)[1].split()[0]
    try:
        client = flight.connect(uri)

        def both(sql):
            """pyarrow.flight (every endpoint) and ADBC: the schema GetFlightInfo gave, and
            the rows of each, sorted by id."""
            info, table = read_all(client, sql)
            given = info.schema
            assert table.schema == given, sql
            with flight_sql.connect(uri) as conn, conn.cursor() as cur:
                cur.execute(sql)
                via_adbc = cur.fetch_arrow_table()
            assert via_adbc.schema == given, sql
            key = lambda r: r["id"]
            rows = sorted(table.to_pylist(), key=key)
            assert sorted(via_adbc.to_pylist(), key=key) == rows, sql
            return given, rows

        for compression in ("ZSTD", "LZ4_FRAME", "NONE"):
            name = f"fwd_{compression.lower()}"
            riverlet("create-table", f"fluss.{name}", "--schema", FORWARD_SCHEMA,
                     "--buckets", "3", "--property",
                     f"table.log.arrow.compression.type={compression}", bootstrap=fluss)
            # An empty table: the schema alone, as the decode path gives it.
            schema, rows = both(f"SELECT * FROM {name}")
            decoded_schema, decoded = both(f"SELECT * FROM {name} WHERE id >= 0")
            assert (rows, decoded, schema) == ([], [], decoded_schema), compression
            assert sent_counts(log, name) == (0, 0), compression

            written = []
            for lo in (0, 400, 800):
                batch = forward_rows(lo, lo + 400)
                put(client, name, batch)
                written.extend(batch.to_pylist())
            for columns in ("*", "id, name, at, raw"):
                schema, rows = both(f"SELECT {columns} FROM {name}")
                decoded_schema, decoded = both(f"SELECT {columns} FROM {name} WHERE id >= 0")
                assert schema == decoded_schema, (compression, columns)
                assert rows == decoded, (compression, columns)
                assert rows == [{k: r[k] for k in schema.names} for r in written]
            forwarded, encoded = sent_counts(log, name)
            # 3 appends of 3 buckets' rows, read whole and projected, twice (pyarrow, ADBC).
            assert forwarded >= 4 * 3 and encoded == 0, (compression, forwarded, encoded)

        # A bucket of 300k records is cut into 3 pieces (128k records at most each), one
        # endpoint each; every stored batch goes out whole in one of them.
        riverlet("create-table", "fluss.fwd_pieces", "--schema", "id BIGINT, name STRING",
                 "--buckets", "1", bootstrap=fluss)
        for lo in range(0, 300_000, 100_000):
            ids = pa.array(range(lo, lo + 100_000), pa.int64())
            put(client, "fwd_pieces", pa.record_batch(
                {"id": ids, "name": pa.compute.cast(ids, pa.string())}))
        info, table = read_all(client, "SELECT * FROM fwd_pieces")
        assert len(info.endpoints) == 3
        assert table.num_rows == 300_000
        assert sorted(table.column("id").to_pylist()) == list(range(300_000))
        assert table.column("name").to_pylist() == [str(i) for i in table.column("id").to_pylist()]
        with flight_sql.connect(uri) as conn, conn.cursor() as cur:
            cur.execute("SELECT id FROM fwd_pieces")
            assert sorted(cur.fetch_arrow_table().column("id").to_pylist()) == list(range(300_000))
        forwarded, encoded = sent_counts(log, "fwd_pieces")
        assert forwarded >= 2 and encoded == 0, (forwarded, encoded)

        # Columns in another order than the table's: DataFusion's plan rearranges them (the
        # core decodes), nothing is forwarded.
        before = sent_counts(log, "fwd_zstd")
        schema, rows = both("SELECT at, id FROM fwd_zstd")
        assert schema.names == ["at", "id"]
        assert rows == [{"at": r["at"], "id": r["id"]} for r in written]
        assert sent_counts(log, "fwd_zstd") == before

        # Batches written before ADD COLUMN are widened (decoded), newer ones forwarded. All
        # written before the gateway first opens the table: it keeps a table's schema from
        # then on (a later ALTER needs a new gateway connection).
        riverlet("create-table", "fluss.fwd_evolved", "--schema", "id BIGINT, name STRING",
                 "--buckets", "2", bootstrap=fluss)
        riverlet("write", "fluss.fwd_evolved", '[[1, "a"], [2, "b"], [3, "c"]]', bootstrap=fluss)
        riverlet("add-columns", "fluss.fwd_evolved", "--columns", "qty INT", bootstrap=fluss)
        riverlet("write", "fluss.fwd_evolved", '[[4, "d", 40], [5, null, 50]]', bootstrap=fluss)
        schema, rows = both("SELECT * FROM fwd_evolved")
        assert schema.names == ["id", "name", "qty"]
        assert rows == [{"id": 1, "name": "a", "qty": None}, {"id": 2, "name": "b", "qty": None},
                        {"id": 3, "name": "c", "qty": None}, {"id": 4, "name": "d", "qty": 40},
                        {"id": 5, "name": None, "qty": 50}]
        forwarded, encoded = sent_counts(log, "fwd_evolved")
        assert forwarded >= 1 and encoded >= 1, (forwarded, encoded)

        # A primary-key table's latest view is folded, never forwarded.
        riverlet("create-table", "fluss.fwd_pk", "--schema", "id BIGINT NOT NULL, v STRING",
                 "--primary-key", "id", "--buckets", "2", bootstrap=fluss)
        put(client, "fwd_pk", pa.record_batch({"id": pa.array([1, 2], pa.int64()),
                                               "v": ["a", "b"]}))
        put(client, "fwd_pk", pa.record_batch({"id": pa.array([2], pa.int64()), "v": ["B"]}))
        _, rows = both("SELECT * FROM fwd_pk")
        assert rows == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}]
        assert sent_counts(log, "fwd_pk")[0] == 0
    finally:
        stop(proc)


def test_pyarrow_flight_plain_put_appends(service, fluss):
    client = flight.connect(service)
    batch = pa.record_batch({"order_id": pa.array([100, 101], pa.int64()),
                             "item": ["fig", "kiwi"], "amount": pa.array([5, 6], pa.int32())})
    writer, reader = client.do_put(flight.FlightDescriptor.for_path("fluss", "orders"),
                                   batch.schema)
    writer.write_batch(batch)
    writer.done_writing()
    reply = reader.read()
    writer.close()
    assert b'"rows": 2' in reply.to_pybytes()
    _, table = read_all(client, "SELECT item FROM orders WHERE order_id >= 100 ORDER BY item")
    assert table.column("item").to_pylist() == ["fig", "kiwi"]


def test_adbc_query_time_window_metadata_and_ingest(service):
    with flight_sql.connect(service) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) AS n FROM orders WHERE order_id < 100")
            assert cur.fetch_arrow_table().column("n").to_pylist() == [3]

            # A commit-time window: rows written after `start` only.
            start = int(time.time() * 1000)
            time.sleep(0.01)
            new = pa.table({"order_id": pa.array([200, 201], pa.int64()),
                            "item": ["lime", "date"], "amount": pa.array([1, 2], pa.int32())})
            assert cur.adbc_ingest("orders", new, mode="append") == 2
            time.sleep(0.01)
            end = int(time.time() * 1000)
            cur.execute(
                "SELECT order_id FROM fluss_incremental_between_timestamp("
                f"'orders', '{start}', '{end}') ORDER BY order_id")
            assert cur.fetch_arrow_table().column("order_id").to_pylist() == [200, 201]
            # The same window as datetime texts in the service's zone (UTC).
            fmt = lambda ms: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms // 1000)) \
                + f".{ms % 1000:03d}"
            cur.execute(
                "SELECT order_id FROM fluss_incremental_between_timestamp("
                f"'fluss.orders', '{fmt(start)}', '{fmt(end)}') ORDER BY order_id")
            assert cur.fetch_arrow_table().column("order_id").to_pylist() == [200, 201]

            # Upserts into a primary-key table: the latest value per key.
            cur.adbc_ingest("stock", pa.table({"sku": ["a", "b"], "qty": pa.array([1, 2], pa.int32())}),
                            mode="append")
            cur.adbc_ingest("stock", pa.table({"sku": ["a"], "qty": pa.array([5], pa.int32())}),
                            mode="append")
            cur.execute("SELECT sku, qty FROM stock ORDER BY sku")
            assert cur.fetch_arrow_table().to_pylist() == [{"sku": "a", "qty": 5},
                                                           {"sku": "b", "qty": 2}]

            # An invalid window is the core's error, not a crash.
            with pytest.raises(adbc_driver_manager.Error, match="strictly before"):
                cur.execute("SELECT * FROM fluss_incremental_between_timestamp("
                            f"'orders', {end}, {start})")

        objects = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
        assert [c["catalog_name"] for c in objects] == ["fluss"]
        tables = {t["table_name"] for s in objects[0]["catalog_db_schemas"]
                  for t in s["db_schema_tables"]}
        assert {"orders", "stock"} <= tables
        schema = conn.adbc_get_table_schema("orders", db_schema_filter="fluss")
        assert schema.names == ["order_id", "item", "amount"]


def test_basic_auth_is_passed_to_fluss_as_sasl_plain(tmp_path):
    fluss, bootstrap = start([RIVERLET, "serve", "--data-dir", str(tmp_path), "--port", "0",
                              "--sasl-user", "alice:secret"], "bootstrap: ")
    try:
        subprocess.run([RIVERLET, "create-table", "fluss.t", "--schema", "id INT",
                        "--bootstrap", bootstrap, "--username", "alice", "--password", "secret"],
                       check=True, stdout=subprocess.DEVNULL)
        proc, uri = start([FLIGHT, "--bootstrap", bootstrap, "--port", "0"], "listening on ")
        try:
            client = flight.connect(uri)
            with pytest.raises(flight.FlightUnauthenticatedError):
                client.authenticate_basic_token("alice", "wrong")
            token = client.authenticate_basic_token("alice", "secret")
            options = flight.FlightCallOptions(headers=[token])
            info = client.get_flight_info(
                flight.FlightDescriptor.for_command(command("SELECT count(*) AS n FROM t")),
                options)
            n = client.do_get(info.endpoints[0].ticket, options).read_all()
            assert n.column("n").to_pylist() == [0]
            # Without credentials the service's own (anonymous) Fluss login is refused.
            with pytest.raises(flight.FlightError):
                read_all(flight.connect(uri), "SELECT * FROM t")
            # ADBC logs in the same way.
            with flight_sql.connect(uri, db_kwargs={"username": "alice",
                                                   "password": "secret"}) as conn:
                with conn.cursor() as cur:
                    cur.execute("SELECT count(*) AS n FROM t")
                    assert cur.fetch_arrow_table().column("n").to_pylist() == [0]
        finally:
            stop(proc)
    finally:
        stop(fluss)
