"""Shared fixtures: one in-process LocalServer (real TCP) per test session."""

from __future__ import annotations

import faulthandler
import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import riverlet

REPO = Path(__file__).resolve().parents[2]
_ids = itertools.count()


# A hung test fails the run (with every thread's traceback) instead of stalling CI.
_TEST_TIMEOUT_S = float(os.environ.get("RIVERLET_TEST_TIMEOUT", "300"))


@pytest.fixture(autouse=True)
def _per_test_timeout() -> Iterator[None]:
    faulthandler.dump_traceback_later(_TEST_TIMEOUT_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="session")
def server() -> Iterator[riverlet.LocalServer]:
    with riverlet.LocalServer() as s:
        yield s


@pytest.fixture()
def conn(server: riverlet.LocalServer) -> Iterator[riverlet.Connection]:
    with riverlet.connect(server.bootstrap_servers) as c:
        yield c


@pytest.fixture()
def db(conn: riverlet.Connection) -> str:
    """A fresh database name for one test."""
    name = f"t{os.getpid()}_{next(_ids)}"
    conn.create_database(name)
    return name
