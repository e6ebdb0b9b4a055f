"""ACLs through the Python API against a LocalServer with ``authorizer.enabled``: refusals are
:class:`riverlet.AuthorizationError` naming principal, operation and resource; grants, lists and
drops go through the core's ACL API."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

import riverlet

USERS = {"admin": "admin-pw", "alice": "alice-pw"}
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


@pytest.fixture()
def acl_server(tmp_path) -> Iterator[riverlet.LocalServer]:
    with riverlet.LocalServer(
        data_dir=str(tmp_path),
        users=USERS,
        options={"authorizer.enabled": "true", "super.users": "User:admin"},
    ) as s:
        yield s


def _login(server: riverlet.LocalServer, user: str) -> riverlet.Connection:
    return server.connect(username=user, password=USERS[user])


def _assert_denied(e: pytest.ExceptionInfo, user: str, op: str, resource: str) -> None:
    assert isinstance(e.value, riverlet.AuthenticationError)
    assert e.value.code_name == "AUTHORIZATION_EXCEPTION"
    msg = str(e.value)
    assert f"name='{user}'" in msg and f" {op} " in msg and resource in msg, msg


def test_refusals_grants_and_lists(acl_server: riverlet.LocalServer) -> None:
    admin = _login(acl_server, "admin")
    alice = _login(acl_server, "alice")
    admin.create_database("shop")
    admin.create_table("shop.orders", SCHEMA)
    admin.table("shop.orders").append(pa.table({"id": [1, 2], "name": ["a", "b"]}))

    with pytest.raises(riverlet.AuthorizationError) as e:
        alice.create_database("mine")
    _assert_denied(e, "alice", "CREATE", "Resource{type=CLUSTER, name='fluss-cluster'}")
    assert alice.list_tables("shop") == []
    with pytest.raises(riverlet.AuthorizationError) as e:
        alice.table("shop.orders")
    _assert_denied(e, "alice", "DESCRIBE", "Resource{type=TABLE, name='shop.orders'}")

    admin.create_acls([{"resource": "cluster.shop.orders", "principal": "User:alice",
                        "operation": "READ"}])
    assert alice.list_tables("shop") == ["orders"]
    assert alice.table("shop.orders").read().num_rows == 2
    with pytest.raises(riverlet.AuthorizationError) as e:
        alice.table("shop.orders").append(pa.table({"id": [3], "name": ["c"]}))
    _assert_denied(e, "alice", "WRITE", "Resource{type=TABLE, name='shop.orders'}")

    # a database grant reaches its tables
    admin.create_acls([{"resource": "cluster.shop", "principal": "User:alice",
                        "operation": "WRITE"}])
    alice.table("shop.orders").append(pa.table({"id": [3], "name": ["c"]}))
    assert admin.table("shop.orders").read().num_rows == 3

    listed = admin.list_acls(principal="User:alice")
    assert sorted((a["resource"], a["operation"]) for a in listed) == [
        ("cluster.shop", "WRITE"), ("cluster.shop.orders", "READ")]
    assert all(a["host"] == "*" and a["permission"] == "ALLOW" for a in listed)
    # managing ACLs needs ALTER
    with pytest.raises(riverlet.AuthorizationError) as e:
        alice.drop_acls(resource="cluster.shop")
    _assert_denied(e, "alice", "ALTER", "Resource{type=DATABASE, name='shop'}")
    gone = admin.drop_acls(resource="cluster.shop", operation="WRITE")
    assert [(a["resource"], a["operation"]) for a in gone] == [("cluster.shop", "WRITE")]
    assert [a["resource"] for a in admin.list_acls()] == ["cluster.shop.orders"]
    with pytest.raises(riverlet.AuthorizationError):
        alice.table("shop.orders").append(pa.table({"id": [4], "name": ["d"]}))


def test_bad_acl_input_names_the_value(acl_server: riverlet.LocalServer) -> None:
    admin = _login(acl_server, "admin")
    with pytest.raises(riverlet.InvalidArgumentError, match="'db.t'"):
        admin.create_acls([{"resource": "db.t", "principal": "User:a", "operation": "READ"}])
    with pytest.raises(riverlet.InvalidArgumentError, match="'alice'"):
        admin.list_acls(principal="alice")
    with pytest.raises(riverlet.InvalidArgumentError, match="'DELETE'"):
        admin.create_acls([{"resource": "cluster", "principal": "User:a", "operation": "DELETE"}])


def test_acls_need_the_authorizer(conn: riverlet.Connection) -> None:
    with pytest.raises(riverlet.AuthenticationError) as e:
        conn.list_acls()
    assert e.value.code_name == "SECURITY_DISABLED_EXCEPTION"
