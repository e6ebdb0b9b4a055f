"""Close semantics, the GIL, Ctrl-C, fork."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading

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
    # The writer thread needs the GIL to append; the poll (up to 60 s in Rust) can only return
    # the row if it released the GIL while waiting. No timing claim: the poll's bound is generous.
    t = conn.create_table(f"{db}.gil", SCHEMA)
    sub = t.subscribe("latest")
    assert sub.poll(0.01) == []  # positions the subscription at the (empty) end
    polling = threading.Event()

    def write() -> None:
        polling.wait()
        t.append([{"id": 42}])

    th = threading.Thread(target=write)
    th.start()
    polling.set()
    got = sub.poll(60.0)
    th.join()
    assert [r for b in got for r in b.column("id").to_pylist()] == [42]
    sub.close()


def test_ctrl_c_interrupts_a_wait(conn: riverlet.Connection, db: str) -> None:
    t = conn.create_table(f"{db}.intr", SCHEMA)
    sub = t.subscribe("latest")
    # A process started in the background by a non-interactive shell inherits SIGINT as
    # ignored, and Python then installs no handler: make Ctrl-C raise KeyboardInterrupt here.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        # An uninterruptible wait would block for an hour; the per-test timeout turns that into
        # a failure, so no elapsed-time claim is needed.
        with pytest.raises(KeyboardInterrupt):
            sub.poll(3600.0)
    finally:
        signal.signal(signal.SIGINT, previous)
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
