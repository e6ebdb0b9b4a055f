from __future__ import annotations

import pyarrow as pa
import pytest

import riverlet
from riverlet import errors

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def test_databases(conn: riverlet.Connection) -> None:
    conn.create_database("admin_db1")
    assert conn.database_exists("admin_db1")
    assert "admin_db1" in conn.list_databases()
    conn.create_database("admin_db1", if_not_exists=True)
    with pytest.raises(riverlet.DatabaseAlreadyExistsError) as e:
        conn.create_database("admin_db1")
    assert e.value.code == 6 and e.value.code_name == "DATABASE_ALREADY_EXIST"
    assert isinstance(e.value, riverlet.AlreadyExistsError)
    conn.drop_database("admin_db1")
    assert not conn.database_exists("admin_db1")
    conn.drop_database("admin_db1", if_exists=True)
    with pytest.raises(riverlet.DatabaseNotFoundError):
        conn.drop_database("admin_db1")


def test_tables(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.t1", SCHEMA, buckets=2, properties={"table.log.ttl": "1d"},
                          comment="hello")
    assert t.name == f"{db}.t1" and t.database == db
    assert t.schema.names == ["id", "name"]
    assert t.primary_key is None and not t.has_primary_key
    assert t.buckets == 2
    assert t.properties.get("table.log.ttl") == "1d"
    assert t.comment == "hello"
    assert isinstance(t.table_id, int)
    assert conn.table_exists(f"{db}.t1")
    assert conn.list_tables(db) == ["t1"]
    conn.create_table(f"{db}.t1", SCHEMA, if_not_exists=True)
    with pytest.raises(riverlet.TableAlreadyExistsError):
        conn.create_table(f"{db}.t1", SCHEMA)
    conn.drop_table(f"{db}.t1")
    assert not conn.table_exists(f"{db}.t1")
    with pytest.raises(riverlet.TableNotFoundError) as e:
        conn.table(f"{db}.t1")
    assert isinstance(e.value, LookupError) and e.value.kind == "not_found"
    conn.drop_table(f"{db}.t1", if_exists=True)


def test_schema_forms_and_pk(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.pk", {"id": pa.int32(), "v": pa.string()}, primary_key="id")
    assert t.primary_key == ["id"] and t.has_primary_key
    assert t.schema.field("id").nullable is False
    t2 = conn.create_table(f"{db}.pk2", [("a", pa.string()), ("b", pa.int64()), ("dt", pa.string())],
                           primary_key=["a", "dt"], partition_by="dt")
    assert t2.partition_keys == ["dt"] and t2.is_partitioned
    assert t2.bucket_keys == ["a"]


def test_invalid_arguments(conn: riverlet.Connection, db: str) -> None:
    with pytest.raises(riverlet.InvalidArgumentError) as e:
        conn.create_table(f"{db}.bad", SCHEMA, primary_key=["nope"])
    assert isinstance(e.value, ValueError)
    with pytest.raises(riverlet.InvalidArgumentError):
        conn.create_table("no_dot_name", SCHEMA)
    with pytest.raises(riverlet.InvalidArgumentError):
        conn.create_table(f"{db}.bad2", SCHEMA, partition_by=["nope"])
    with pytest.raises(riverlet.InvalidArgumentError):
        conn.create_table(f"{db}.bad3", 42)


def test_partitions_admin(conn: riverlet.Connection, db: str) -> None:
    name = f"{db}.parts"
    conn.create_table(name, pa.schema([("v", pa.int64()), ("dt", pa.string())]), partition_by=["dt"])
    conn.create_partition(name, {"dt": "2026-01-01"})
    conn.create_partition(name, {"dt": "2026-01-01"}, if_not_exists=True)
    with pytest.raises(riverlet.PartitionAlreadyExistsError):
        conn.create_partition(name, {"dt": "2026-01-01"})
    parts = conn.list_partitions(name)
    assert [p["name"] for p in parts] == ["2026-01-01"]
    assert parts[0]["spec"] == {"dt": "2026-01-01"}
    conn.drop_partition(name, {"dt": "2026-01-01"})
    assert conn.list_partitions(name) == []
    with pytest.raises(riverlet.PartitionNotFoundError):
        conn.drop_partition(name, {"dt": "2026-01-01"})


def test_error_hierarchy() -> None:
    for name in errors.__all__:
        cls = getattr(riverlet, name)
        assert issubclass(cls, riverlet.RiverletError)
    assert issubclass(riverlet.RequestTimeoutError, TimeoutError)
    assert issubclass(riverlet.NetworkError, ConnectionError)
    assert issubclass(riverlet.InvalidArgumentError, ValueError)


def test_connect_errors(server: riverlet.LocalServer) -> None:
    with pytest.raises(riverlet.InvalidArgumentError):
        riverlet.connect("no-port-here")
    with pytest.raises(riverlet.InvalidArgumentError):
        riverlet.connect(server.bootstrap_servers, properties={"client.nonsense": "1"})
    with pytest.raises(riverlet.InvalidArgumentError):
        riverlet.connect(server.bootstrap_servers, request_timeout=-1)
    with pytest.raises(riverlet.NetworkError):
        riverlet.connect("127.0.0.1:1", connect_timeout=2,
                         properties={"client.retries": "0"})


def test_sasl() -> None:
    with riverlet.LocalServer(users={"alice": "secret"}) as s:
        with riverlet.connect(s.bootstrap_servers, username="alice", password="secret") as c:
            c.create_database("sasl_ok")
            assert c.database_exists("sasl_ok")
        with pytest.raises(riverlet.AuthenticationError):
            riverlet.connect(s.bootstrap_servers, username="alice", password="wrong",
                             properties={"client.retries": "0"})


def test_local_server_lifecycle(tmp_path) -> None:
    s = riverlet.LocalServer(data_dir=str(tmp_path / "data"))
    assert s.running and s.port > 0
    assert s.bootstrap_servers.endswith(f":{s.port}")
    with s.connect() as c:
        c.create_database("persist")
        c.create_table("persist.t", SCHEMA).append([{"id": 1, "name": "a"}])
    s.shutdown()
    assert not s.running
    s.shutdown()  # idempotent
    with riverlet.LocalServer(data_dir=str(tmp_path / "data")) as s2, s2.connect() as c:
        assert c.table("persist.t").read().to_pylist() == [{"id": 1, "name": "a"}]
