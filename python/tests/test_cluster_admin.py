"""Cluster administration through the Python API against a LocalServer: dynamic server options
(described with their source, changed at run time, persisted across a restart, others refused
by name) and a database's comment and custom properties (persisted across a restart)."""

from __future__ import annotations

import pytest

import riverlet


def _option(conn: riverlet.Connection, key: str) -> tuple[object, object] | None:
    for c in conn.describe_cluster_configs():
        if c["key"] == key:
            return (c["value"], c["source"])
    return None


def test_dynamic_options_persist_and_others_are_refused(tmp_path) -> None:
    options = {"log.segment.file-size": "1mb"}
    with riverlet.LocalServer(data_dir=str(tmp_path), options=options) as s:
        conn = s.connect()
        assert _option(conn, "log.segment.file-size") == ("1mb", "INITIAL_SERVER_CONFIG")
        assert _option(conn, "kv.snapshot.interval") is None
        conn.alter_cluster_configs(set={"kv.snapshot.interval": "10 min"})
        assert _option(conn, "kv.snapshot.interval") == ("10 min", "DYNAMIC_SERVER_CONFIG")
        with pytest.raises(riverlet.RiverletError) as e:
            conn.alter_cluster_configs(set={"log.segment.file-size": "2mb"})
        assert "log.segment.file-size" in str(e.value)
        assert "not allowed to be changed dynamically" in str(e.value)
        with pytest.raises(riverlet.RiverletError) as e:
            conn.alter_cluster_configs(set={"kv.snapshot.interval": "soon"})
        assert "soon" in str(e.value)
        conn.close()
    with riverlet.LocalServer(data_dir=str(tmp_path), options=options) as s:
        conn = s.connect()
        assert _option(conn, "kv.snapshot.interval") == ("10 min", "DYNAMIC_SERVER_CONFIG")
        conn.alter_cluster_configs(delete=["kv.snapshot.interval"])
        assert _option(conn, "kv.snapshot.interval") is None
        conn.close()


def test_alter_database_persists(tmp_path) -> None:
    with riverlet.LocalServer(data_dir=str(tmp_path)) as s:
        conn = s.connect()
        conn.create_database("shop")
        conn.alter_database("shop", set={"owner": "ops", "tier": "gold"}, comment="orders")
        conn.close()
    with riverlet.LocalServer(data_dir=str(tmp_path)) as s:
        conn = s.connect()
        info = conn.database_info("shop")
        assert info["comment"] == "orders"
        assert info["custom_properties"] == {"owner": "ops", "tier": "gold"}
        conn.alter_database("shop", reset=["tier"], comment="")
        info = conn.database_info("shop")
        assert info["comment"] is None
        assert info["custom_properties"] == {"owner": "ops"}
        with pytest.raises(riverlet.DatabaseNotFoundError) as e:
            conn.alter_database("nowhere", set={"a": "b"})
        assert "nowhere" in str(e.value)
        conn.alter_database("nowhere", set={"a": "b"}, if_exists=True)
        conn.close()
