"""Close semantics, the GIL, Ctrl-C, fork."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pyarrow as pa
import pytest

import riverlet

SCHEMA = pa.schema([("id", pa.int64())])


def test_use_after_close(server: riverlet.LocalServer) -> None:
    conn = riverlet.connect(server.bootstrap_servers)
    conn.create_database("closing", if_not_exists=True)
    t = conn.create_table("closing.t", SCHEMA, if_not_exists=True)
    t.append([{"id": 1}])
    stream = t._native.scan(None, None, None, None, None, None, None, False, False)
    sub = t.subscribe()
    conn.close()
    assert conn.closed
    conn.close()  # idempotent
    for call in (
        lambda: conn.list_databases(),
        lambda: conn.table("closing.t"),
        lambda: t.append([{"id": 2}]),
        lambda: t.read(),
        lambda: t.count(),
        lambda: stream.read_next_batch(),
        lambda: sub.poll(0.1),
    ):
        with pytest.raises(riverlet.ClosedError):
            call()
    assert t.schema == SCHEMA  # descriptions stay readable


def test_gil_is_released_while_waiting(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.gil", SCHEMA)
    sub = t.subscribe("latest")
    ticks = 0
    stop = False

    def spin() -> None:
        nonlocal ticks
        while not stop:
            ticks += 1
            time.sleep(0.001)

    th = threading.Thread(target=spin)
    th.start()
    sub.poll(0.5)  # blocks 0.5 s in Rust
    stop = True
    th.join()
    assert ticks > 50
    sub.close()


def test_ctrl_c_interrupts_a_wait(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.intr", SCHEMA)
    sub = t.subscribe("latest")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sub.poll(30.0)
    assert time.monotonic() - started < 5
    sub.close()


def _child(bootstrap: str, q) -> None:  # noqa: ANN001
    try:
        riverlet.connect(bootstrap).list_databases()
        q.put("no error")
    except riverlet.ForkedProcessError as e:
        q.put(f"ForkedProcessError: {e}")
    except BaseException as e:  # noqa: BLE001
        q.put(f"other: {e!r}")


def test_forked_child_gets_a_clear_error(server: riverlet.LocalServer,
                                         conn: riverlet.Connection) -> None:
    conn.list_databases()  # the runtime runs in this process
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(server.bootstrap_servers, q))
    p.start()
    msg = q.get(timeout=20)
    p.join(20)
    assert msg.startswith("ForkedProcessError"), msg
    assert "forked child" in msg


def test_spawned_child_works(server: riverlet.LocalServer) -> None:
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(server.bootstrap_servers, q))
    p.start()
    assert q.get(timeout=60) == "no error"
    p.join(20)


def test_configure_runtime_after_start_is_refused(conn: riverlet.Connection) -> None:
    with pytest.raises(riverlet.InvalidArgumentError):
        riverlet.configure_runtime(4)
