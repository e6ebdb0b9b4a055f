"""riverlet.aio against the embedded server: the async API gives what the sync one gives, the
event loop keeps running during long reads, writes and polls, and cancels leave nothing
half-done (whole batches written, streams closed, no change lost)."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pyarrow as pa
import pytest

import riverlet
import riverlet.aio as aio

# No warning either (the retention hint of a window that starts too early, ...).
pytestmark = pytest.mark.filterwarnings("error")

_ids = itertools.count()
_T = TypeVar("_T")

# A bound on waits for the other side (never asserted on as a duration).
_BOUND_S = 60.0

SCHEMA = pa.schema([("id", pa.int64()), ("n", pa.int32())])


def run(main: Callable[[], Awaitable[_T]]) -> _T:
    return asyncio.run(main())  # type: ignore[arg-type]


def fresh_db() -> str:
    return f"aio{os.getpid()}_{next(_ids)}"


def rows(start: int, count: int) -> pa.RecordBatch:
    ids = list(range(start, start + count))
    return pa.record_batch([pa.array(ids, pa.int64()), pa.array([i % 7 for i in ids], pa.int32())],
                           schema=SCHEMA)


class Ticker:
    """A task that counts its turns on the event loop; ``wait_for_tick`` (from a worker thread)
    returns once the loop ran it again, and raises when it did not within the bound."""

    def __init__(self) -> None:
        self.ticks = 0
        self._cond = threading.Condition()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(0.002)
            with self._cond:
                self.ticks += 1
                self._cond.notify_all()

    def __enter__(self) -> "Ticker":
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._task is not None
        self._task.cancel()

    def wait_for_tick(self) -> None:
        with self._cond:
            seen = self.ticks
            if not self._cond.wait_for(lambda: self.ticks > seen, timeout=_BOUND_S):
                raise AssertionError("the event loop did not run while the call was in flight")


def test_connect_admin_write_read_match_the_sync_api(server: riverlet.LocalServer) -> None:
    db = fresh_db()

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            created = int(time.time() * 1000)
            assert db in await conn.list_databases()
            assert await conn.database_exists(db)
            t = await conn.create_table(f"{db}.log", SCHEMA, buckets=2)
            assert (t.name, t.database, t.buckets, t.has_primary_key) == (f"{db}.log", db, 2, False)
            assert await conn.list_tables(db) == ["log"]
            assert await conn.table_exists(f"{db}.log")
            assert await t.append(rows(0, 100)) == 100
            assert await t.append([{"id": 100, "n": 1}]) == 1
            assert await t.count() == 101

            got = await t.read(filter=[("n", ">", 3)])
            streamed = [b async for b in t.scan(filter=[("n", ">", 3)])]
            with riverlet.connect(server.bootstrap_servers) as sync_conn:
                want = sync_conn.table(f"{db}.log").read(filter=[("n", ">", 3)])
            assert sorted(got.column("id").to_pylist()) == sorted(want.column("id").to_pylist())
            assert sorted(pa.Table.from_batches(streamed, SCHEMA).column("id").to_pylist()) == \
                sorted(want.column("id").to_pylist())
            assert len(want) == sum(1 for i in range(101) if (i % 7 if i < 100 else 1) > 3)

            between = await t.read_between(created, columns=["id"])
            assert sorted(between.column("id").to_pylist()) == list(range(101))
            changes = await t.changelog(columns=["id"])
            assert set(changes.column("_change_type").to_pylist()) == {"insert"}

            # The same typed errors as the sync API.
            with pytest.raises(riverlet.TableNotFoundError):
                await conn.table(f"{db}.missing")
            with pytest.raises(riverlet.InvalidArgumentError):
                await t.lookup(1)  # a log table has no primary key
            await conn.drop_database(db, cascade=True)
            assert not await conn.database_exists(db)
        assert conn.closed

    run(main)


def test_primary_key_table_upsert_lookup_delete(server: riverlet.LocalServer) -> None:
    db = fresh_db()

    async def main() -> None:
        conn = await aio.connect(server.bootstrap_servers)
        try:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.pk", SCHEMA, primary_key="id")
            assert await t.upsert(rows(0, 10)) == 10
            assert await t.lookup(3) == {"id": 3, "n": 3}
            assert await t.lookup(42) is None
            many = await t.lookup_many([1, 2, 99])
            assert sorted(many.column("id").to_pylist()) == [1, 2]
            assert await t.upsert([{"id": 3, "n": 6}], columns=["id", "n"]) == 1
            assert await t.delete([4, 5]) == 2
            assert await t.update_where([("id", "=", 1)], {"n": 5}) == 1
            assert await t.delete_where([("id", "=", 2)]) == 1
            table = await t.read()
            assert dict(zip(table.column("id").to_pylist(), table.column("n").to_pylist())) == {
                0: 0, 1: 5, 3: 6, 6: 6, 7: 0, 8: 1, 9: 2}
        finally:
            await conn.close()
        assert conn.closed
        with pytest.raises(riverlet.ClosedError):
            await conn.list_databases()

    run(main)


def test_local_server_async_with_starts_and_stops() -> None:
    async def main() -> None:
        server = aio.LocalServer()
        assert not server.running
        with pytest.raises(riverlet.ClosedError):
            server.bootstrap_servers
        async with server:
            assert server.running
            async with server.connect() as conn:
                await conn.create_database("d")
                assert "d" in await conn.list_databases()
        assert not server.running

    run(main)


def test_event_loop_runs_during_a_long_write_and_a_long_read(server: riverlet.LocalServer) -> None:
    """A ticking task keeps running while a write and a read are in flight: the write's source
    and the read's progress callback (both on the worker) wait for the ticker's next turn, so
    neither can finish unless the loop keeps running."""
    db = fresh_db()
    batches, per_batch = 20, 500

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.log", SCHEMA)
            with Ticker() as ticker:

                def source() -> Iterator[pa.RecordBatch]:
                    for i in range(batches):
                        ticker.wait_for_tick()
                        yield rows(i * per_batch, per_batch)

                reader = pa.RecordBatchReader.from_batches(SCHEMA, source())
                before = ticker.ticks
                assert await t.append(reader) == batches * per_batch
                assert ticker.ticks - before >= batches

                seen: list[int] = []

                def progress(n: int) -> None:
                    ticker.wait_for_tick()
                    seen.append(n)

                before = ticker.ticks
                table = await t.read(progress=progress)
                assert len(table) == batches * per_batch
                assert sum(seen) == len(table)
                assert ticker.ticks - before >= len(seen) >= 1

    run(main)


def test_event_loop_runs_during_a_waiting_poll(server: riverlet.LocalServer) -> None:
    """A poll waiting for changes does not hold the loop: the change it returns is written by
    a task on the same loop while it waits (a blocked loop would leave the poll empty)."""
    db = fresh_db()

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.log", SCHEMA)
            async with t.subscribe("latest") as sub:
                poll = asyncio.get_running_loop().create_task(sub.poll(timeout=_BOUND_S))
                await asyncio.sleep(0)
                assert await t.append([{"id": 7, "n": 1}]) == 1
                got = pa.Table.from_batches(await poll)
            assert got.column("id").to_pylist() == [7]
            assert got.column("_change_type").to_pylist() == ["insert"]
            assert sub.closed

    run(main)


def test_cancelled_append_writes_whole_batches_and_leaves_the_writer_usable(
    server: riverlet.LocalServer,
) -> None:
    db = fresh_db()
    total, per_batch, cancel_after = 400, 100, 5

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.log", SCHEMA)
            loop = asyncio.get_running_loop()
            gate = threading.Event()
            task: asyncio.Task[int] | None = None

            def source() -> Iterator[pa.RecordBatch]:
                for i in range(total):
                    if i == cancel_after:
                        assert task is not None
                        loop.call_soon_threadsafe(task.cancel)
                    if i >= cancel_after:
                        # Later batches come slowly; a cancel that works takes none of them.
                        gate.wait(0.2)
                    yield rows(i * per_batch, per_batch)

            task = loop.create_task(t.append(pa.RecordBatchReader.from_batches(SCHEMA, source())))
            with pytest.raises(asyncio.CancelledError):
                await task
            gate.set()

            # The writer is idle and usable; nothing of the cancelled write arrives later.
            assert await t.append(rows(10**6, 3)) == 3
            ids = sorted((await t.read(columns=["id"])).column("id").to_pylist())
            assert ids[-3:] == [10**6, 10**6 + 1, 10**6 + 2]
            written = ids[:-3]
            # Whole batches, from the first: a prefix of the input cut at a batch boundary.
            assert written == list(range(len(written)))
            assert len(written) % per_batch == 0
            assert cancel_after * per_batch <= len(written) < total * per_batch

    run(main)


def test_cancelled_scan_closes_its_stream(server: riverlet.LocalServer) -> None:
    db = fresh_db()

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.log", SCHEMA)
            for i in range(3):
                await t.append(rows(i * 10, 10))
            loop = asyncio.get_running_loop()

            # Cancelled while it waits for a batch.
            stream = t.scan()
            first = await stream.next_batch()
            assert first is not None and stream.schema == SCHEMA
            task = loop.create_task(stream.next_batch())
            await asyncio.sleep(0)  # the task is now awaiting the batch
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert stream.closed and stream._native is not None and stream._native.closed
            with pytest.raises(riverlet.ClosedError):
                await stream.next_batch()

            # Cancelled while the read is planned: what was opened is closed, not leaked.
            stream = t.scan()
            task = loop.create_task(stream.next_batch())
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert stream.closed
            with pytest.raises(riverlet.ClosedError):
                await stream.next_batch()

            # An `async for` cancelled from outside (a timeout) closes the stream too.
            stream = t.scan()

            async def consume() -> None:
                async for _ in stream:
                    await asyncio.sleep(_BOUND_S)

            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(consume(), timeout=0.5)
            await stream.close()
            assert stream.closed

            # `async with` closes it; read_all reads the rest.
            async with t.scan(columns=["id"]) as s:
                assert sorted((await s.read_all()).column("id").to_pylist()) == list(range(30))
            assert s.closed

    run(main)


def test_cancelled_polls_lose_no_change(server: riverlet.LocalServer) -> None:
    db = fresh_db()

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.log", SCHEMA)
            for i in range(5):
                await t.append(rows(i * 10, 10))
            loop = asyncio.get_running_loop()
            got: list[int] = []
            async with t.subscribe("earliest", columns=["id"]) as sub:
                # Polls cancelled at once, again and again: whatever their slice received is
                # handed out later, once (by the next poll, which then returns at once).
                cancelled = 0
                for _ in range(6):
                    task = loop.create_task(sub.poll(timeout=_BOUND_S))
                    await asyncio.sleep(0)
                    task.cancel()
                    try:
                        for batch in await task:
                            got.extend(batch.column("id").to_pylist())
                    except asyncio.CancelledError:
                        cancelled += 1
                assert cancelled >= 3
                while len(got) < 50:
                    # Bounded: a lost change would otherwise leave this waiting for ever.
                    batch = await asyncio.wait_for(anext(sub), timeout=_BOUND_S / 2)
                    got.extend(batch.column("id").to_pylist())
                assert sorted(got) == list(range(50))
                assert await sub.poll(timeout=0.2) == []
                position = await sub.position()
                assert [p["offset"] for p in position] == [50]
            assert sub.closed
            with pytest.raises(riverlet.ClosedError):
                await sub.poll()

    run(main)


def test_bad_input_raises_typed_errors_at_the_first_await(server: riverlet.LocalServer) -> None:
    db = fresh_db()

    async def main() -> None:
        async with aio.connect(server.bootstrap_servers) as conn:
            await conn.create_database(db)
            t = await conn.create_table(f"{db}.log", SCHEMA)
            stream = t.scan(columns=["nope"])
            with pytest.raises(riverlet.InvalidArgumentError, match="nope"):
                await stream.next_batch()
            assert stream.closed
            sub = t.subscribe("earliest", columns=["nope"])
            with pytest.raises(riverlet.InvalidArgumentError, match="nope"):
                await sub.poll()
            with pytest.raises(riverlet.InvalidArgumentError, match="-1"):
                await t.subscribe().poll(-1)
            with pytest.raises(riverlet.InvalidArgumentError):
                t.scan_between(None)

    run(main)
