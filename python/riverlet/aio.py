"""Riverlet for asyncio: the same client and embedded server as :mod:`riverlet`, awaitable.

::

    import asyncio
    import riverlet.aio

    async def main() -> None:
        async with riverlet.aio.LocalServer() as server:
            async with server.connect() as conn:
                await conn.create_database("shop", if_not_exists=True)
                t = await conn.create_table("shop.orders", {"id": pa.int64(), "n": pa.int32()})
                await t.append([{"id": 1, "n": 10}])
                async for batch in t.scan(filter=[("n", ">", 5)]):
                    print(batch)
                async with t.subscribe("earliest") as sub:
                    async for change in sub:
                        print(change)
                        break

    asyncio.run(main())

**One core path.** Every class here wraps its twin of :mod:`riverlet` (``.sync`` gives it back)
and runs that twin's method, unchanged, in the event loop's default executor
(:meth:`asyncio.loop.run_in_executor`). The native calls under them release the GIL while they
wait on the network, so the event loop keeps running while a read, a write, a lookup or an
admin call is in flight. Arguments, results, errors and the rules the core applies are exactly
those of the sync API: see its docstrings. (Futures bridged from Rust would need an async
runtime bridge such as pyo3-async-runtimes, which Riverlet does not depend on; and the sync
calls already do all the work with the GIL released, so a thread per in-flight call is the
whole cost.) Set the loop's executor (``loop.set_default_executor``) to bound or widen the
number of calls in flight at once.

**Cancellation** (``task.cancel()``, ``asyncio.timeout``, ``wait_for``) never leaves a call
half-done behind the caller's back: the ``CancelledError`` is raised once the native call
under it has returned, so nothing of it runs on after the cancel. Calls that can stop early
do so at the next safe point:

- writes (:meth:`Table.append`, :meth:`Table.upsert`) send no batch
  after the cancel, and wait for the acknowledgement of those already sent: the rows of whole
  batches up to the cancel are written, none of a later batch, and the table's writer is idle
  and usable at once;
- reads (:meth:`Table.read`, ...) stop after the batch being fetched; an ``async for`` over a
  :class:`BatchStream` cancelled while it waits for a batch closes the stream;
- :meth:`Subscription.poll` waits in short slices, so a cancel returns within one slice, and
  changes that arrived during a cancelled poll are returned by the next one (none are lost).

Other calls (lookups, admin calls, ``delete_where``, ``update_where``) are single requests or
server-side operations: a cancel waits for their answer.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import threading
from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Callable, Optional, TypeVar, Union

import pyarrow as pa

from . import _api, _riverlet
from ._api import Filter, Timestamp
from ._convert import to_batches
from ._progress import ProgressArg, Relay, input_rows, progress_bar
from .errors import ClosedError, InvalidArgumentError

__all__ = [
    "BatchStream",
    "Connection",
    "LocalServer",
    "Subscription",
    "Table",
    "connect",
]

_T = TypeVar("_T")

#: How long one executor call of :meth:`Subscription.poll` waits at most (seconds): the
#: longest a cancelled poll takes to return.
POLL_SLICE = 0.2


async def _wait_done(fut: "asyncio.Future[_T]") -> None:
    """Waits until ``fut`` (an executor call) finished, whatever cancels arrive meanwhile."""
    while not fut.done():
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            continue
        except BaseException:
            break
    if not fut.cancelled():
        fut.exception()  # retrieved: no "exception never retrieved" log


async def _run(
    fn: Callable[[], _T],
    *,
    on_cancel: Optional[Callable[[], None]] = None,
    after_cancel: Optional[Callable[["asyncio.Future[_T]"], None]] = None,
) -> _T:
    """Runs the blocking ``fn`` in the loop's default executor and returns its result.

    On cancel: calls ``on_cancel`` (a request to stop early), waits until ``fn`` returned,
    hands its finished future to ``after_cancel`` (to keep or release what it produced), then
    raises the ``CancelledError``.
    """
    loop = asyncio.get_running_loop()
    fut = loop.run_in_executor(None, fn)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        if on_cancel is not None:
            on_cancel()
        await _wait_done(fut)
        if after_cancel is not None:
            after_cancel(fut)
        raise


async def _call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``fn(*args, **kwargs)`` through :func:`_run` (a cancel waits for it to return)."""
    return await _run(functools.partial(fn, *args, **kwargs))


class _Stopped(Exception):
    """Raised inside a worker to end a read whose await was cancelled."""


def _until(stop: threading.Event, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``batches`` until ``stop`` is set (checked before each is taken from the source)."""
    while not stop.is_set():
        try:
            batch = next(batches)
        except StopIteration:
            return
        yield batch


_C = TypeVar("_C", bound="_AsyncCloses")


class _AsyncCloses:
    """``async with`` closing ``self.sync`` (a :mod:`riverlet` object with ``close()``)."""

    sync: Any

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return bool(self.sync.closed)

    async def close(self) -> None:
        """Closes it (in the executor: closing may wait for writes in flight). Idempotent."""
        await _call(self.sync.close)

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()


# ---- server and connections ------------------------------------------------------------------


class LocalServer:
    """The embedded server (:class:`riverlet.LocalServer`), started and stopped off the loop.

    ``async with LocalServer(...) as server`` starts it (arguments as for
    :class:`riverlet.LocalServer`) and shuts it down on exit; or ``await server.start()`` and
    ``await server.shutdown()``.
    """

    def __init__(
        self,
        data_dir: Optional[str] = None,
        port: int = 0,
        host: str = "127.0.0.1",
        users: Optional[Mapping[str, str]] = None,
        options: Optional[Mapping[str, object]] = None,
    ) -> None:
        self._args = (data_dir, port, host, users, options)
        self._sync: Optional[_api.LocalServer] = None

    @property
    def sync(self) -> _api.LocalServer:
        """The running :class:`riverlet.LocalServer` (:class:`ClosedError` before start)."""
        if self._sync is None:
            raise ClosedError("the server is not started: await start() or use async with",
                              kind="closed")
        return self._sync

    async def start(self) -> "LocalServer":
        """Starts the server; returns it. Starting twice raises :class:`InvalidArgumentError`."""
        if self._sync is not None:
            raise InvalidArgumentError("the server was already started", kind="invalid_argument")
        self._sync = await _run(functools.partial(_api.LocalServer, *self._args),
                                after_cancel=_close_result)
        return self

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` to pass to :func:`connect`."""
        return self.sync.bootstrap_servers

    @property
    def host(self) -> str:
        """The host the server listens on."""
        return self.sync.host

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return self.sync.port

    @property
    def data_dir(self) -> str:
        """The data directory."""
        return self.sync.data_dir

    @property
    def running(self) -> bool:
        """Whether the server is running."""
        return self._sync is not None and self._sync.running

    async def take_kv_snapshots(self) -> None:
        """:meth:`riverlet.LocalServer.take_kv_snapshots`."""
        await _call(self.sync.take_kv_snapshots)

    async def commit_lake(self) -> None:
        """:meth:`riverlet.LocalServer.commit_lake`."""
        await _call(self.sync.commit_lake)

    def connect(self, **options: Any) -> "_Connecting":
        """:func:`connect` to this server (keyword options as for :func:`connect`)."""
        return connect(self.bootstrap_servers, **options)

    async def shutdown(self) -> None:
        """Stops the server (flushing its data). Idempotent."""
        if self._sync is not None:
            await _call(self._sync.shutdown)

    close = shutdown

    async def __aenter__(self) -> "LocalServer":
        if self._sync is None:
            await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.shutdown()

    def __repr__(self) -> str:
        if self._sync is None:
            return "aio.LocalServer(not started)"
        return f"aio.LocalServer({self.bootstrap_servers!r}, running={self.running})"


class _Connecting:
    """What :func:`connect` returns: ``await`` it for a :class:`Connection`, or use it in
    ``async with`` (which closes the connection on exit)."""

    def __init__(self, connecting: Callable[[], _api.Connection]) -> None:
        self._connecting = connecting
        self._conn: Optional[Connection] = None

    async def _open(self) -> "Connection":
        return Connection(await _run(self._connecting, after_cancel=_close_result))

    def __await__(self) -> Generator[Any, None, "Connection"]:
        return self._open().__await__()

    async def __aenter__(self) -> "Connection":
        self._conn = await self._open()
        return self._conn

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if self._conn is not None:
            await self._conn.close()


def _close_result(fut: "asyncio.Future[Any]") -> None:
    """After a cancel: closes what the cancelled call opened (it will never be handed out)."""
    if not fut.cancelled() and fut.exception() is None:
        fut.result().close()


def connect(
    bootstrap_servers: str,
    *,
    username: Optional[str] = None,
    password: Optional[str] = None,
    request_timeout: Optional[float] = None,
    connect_timeout: Optional[float] = None,
    properties: Optional[Mapping[str, str]] = None,
) -> _Connecting:
    """Connects to a Fluss cluster or a :class:`LocalServer`: ``conn = await connect(...)`` or
    ``async with connect(...) as conn``. Arguments as for :func:`riverlet.connect`."""
    return _Connecting(
        functools.partial(
            _api.connect,
            bootstrap_servers,
            username=username,
            password=password,
            request_timeout=request_timeout,
            connect_timeout=connect_timeout,
            properties=properties,
        )
    )


class Connection(_AsyncCloses):
    """A connection (:class:`riverlet.Connection`) whose calls are awaitable; open it with
    :func:`connect`. ``async with`` closes it."""

    def __init__(self, sync: _api.Connection) -> None:
        self.sync = sync

    async def create_database(self, name: str, if_not_exists: bool = False) -> None:
        """Creates a database."""
        await _call(self.sync.create_database, name, if_not_exists)

    async def drop_database(self, name: str, if_exists: bool = False, cascade: bool = False) -> None:
        """Drops a database; ``cascade=True`` drops its tables too."""
        await _call(self.sync.drop_database, name, if_exists, cascade)

    async def list_databases(self) -> list[str]:
        """The names of all databases."""
        return await _call(self.sync.list_databases)

    async def database_exists(self, name: str) -> bool:
        """Whether a database exists."""
        return await _call(self.sync.database_exists, name)

    async def create_table(
        self,
        name: str,
        schema: Any,
        primary_key: Union[str, Sequence[str], None] = None,
        partition_by: Union[str, Sequence[str], None] = None,
        buckets: Optional[int] = 1,
        properties: Optional[Mapping[str, str]] = None,
        *,
        bucket_keys: Union[str, Sequence[str], None] = None,
        comment: Optional[str] = None,
        custom_properties: Optional[Mapping[str, str]] = None,
        if_not_exists: bool = False,
        auto_increment: Optional[str] = None,
    ) -> "Table":
        """Creates table ``name`` and returns it (see :meth:`riverlet.Connection.create_table`)."""
        t = await _call(
            self.sync.create_table, name, schema, primary_key, partition_by, buckets, properties,
            bucket_keys=bucket_keys, comment=comment, custom_properties=custom_properties,
            if_not_exists=if_not_exists, auto_increment=auto_increment,
        )
        return Table(t, self)

    async def add_columns(self, name: str, columns: Any) -> "Table":
        """:meth:`riverlet.Connection.add_columns`; returns the table with its new schema."""
        return Table(await _call(self.sync.add_columns, name, columns), self)

    async def drop_table(self, name: str, if_exists: bool = False) -> None:
        """Drops a table."""
        await _call(self.sync.drop_table, name, if_exists)

    async def list_tables(self, database: str) -> list[str]:
        """The table names of a database."""
        return await _call(self.sync.list_tables, database)

    async def table_exists(self, name: str) -> bool:
        """Whether table ``"db.table"`` exists."""
        return await _call(self.sync.table_exists, name)

    async def lake_snapshot(
        self, name: str, snapshot_id: Optional[int] = None, *, readable: bool = False
    ) -> Optional[dict[str, Any]]:
        """See :meth:`riverlet.Connection.lake_snapshot`."""
        return await _call(self.sync.lake_snapshot, name, snapshot_id, readable=readable)

    async def list_partitions(self, name: str) -> list[dict[str, Any]]:
        """The partitions of a table: dicts with ``id``, ``name`` and ``spec``."""
        return await _call(self.sync.list_partitions, name)

    async def create_partition(
        self, name: str, spec: Mapping[str, Any], if_not_exists: bool = False
    ) -> None:
        """Creates a partition given as ``{partition_key: value}``."""
        await _call(self.sync.create_partition, name, spec, if_not_exists)

    async def drop_partition(
        self, name: str, spec: Mapping[str, Any], if_exists: bool = False
    ) -> None:
        """Drops a partition given as ``{partition_key: value}``."""
        await _call(self.sync.drop_partition, name, spec, if_exists)

    async def table(self, name: str) -> "Table":
        """Opens table ``"db.table"`` (see :meth:`riverlet.Connection.table`)."""
        return Table(await _call(self.sync.table, name), self)

    def __repr__(self) -> str:
        return f"aio.Connection(closed={self.closed})"


# ---- tables ----------------------------------------------------------------------------------


class Table:
    """A table (:class:`riverlet.Table`) whose reads, writes and lookups are awaitable; open it
    with :meth:`Connection.table`. Arguments and results are those of the sync methods."""

    def __init__(self, sync: _api.Table, connection: Connection) -> None:
        self.sync = sync
        self._connection = connection

    @property
    def connection(self) -> Connection:
        """The connection the table was opened from."""
        return self._connection

    @property
    def name(self) -> str:
        """``"db.table"``."""
        return self.sync.name

    @property
    def schema(self) -> pa.Schema:
        """The table's Arrow schema."""
        return self.sync.schema

    @property
    def primary_key(self) -> Optional[list[str]]:
        """The primary-key columns, or ``None`` for a log table."""
        return self.sync.primary_key

    @property
    def partition_keys(self) -> list[str]:
        """The partition columns."""
        return self.sync.partition_keys

    @property
    def buckets(self) -> int:
        """The number of buckets."""
        return self.sync.buckets

    @property
    def database(self) -> str:
        """The database name."""
        return self.sync.database

    @property
    def has_primary_key(self) -> bool:
        """Whether it is a primary-key table."""
        return self.sync.has_primary_key

    @property
    def is_partitioned(self) -> bool:
        """Whether it is partitioned."""
        return self.sync.is_partitioned

    @property
    def bucket_keys(self) -> list[str]:
        """The bucket key columns."""
        return self.sync.bucket_keys

    @property
    def properties(self) -> dict[str, str]:
        """The table options."""
        return self.sync.properties

    @property
    def comment(self) -> Optional[str]:
        """The table comment."""
        return self.sync.comment

    @property
    def table_id(self) -> int:
        """The table id."""
        return self.sync.table_id

    # ---- writes ------------------------------------------------------------------------------

    async def _write(self, op: str, batches: Callable[[], Iterator[pa.RecordBatch]],
                     progress: ProgressArg, columns: Optional[list[str]] = None,
                     total: Optional[int] = None) -> int:
        stop = threading.Event()
        sync = self.sync

        def write() -> int:
            # The sync table's own write loop (queue each batch, then flush), fed until a cancel.
            return sync._write(op, _until(stop, batches()), progress, columns, total)

        return await _run(write, on_cancel=stop.set)

    async def append(self, data: Any, *, progress: ProgressArg = False) -> int:
        """Appends rows to a log table; returns how many, once acknowledged
        (:meth:`riverlet.Table.append`). A cancel sends no further batch (see the module)."""
        schema = self.sync.schema
        return await self._write("append", lambda: to_batches(data, schema), progress,
                                 total=input_rows(data))

    async def upsert(
        self,
        data: Any,
        *,
        columns: Optional[Sequence[str]] = None,
        progress: ProgressArg = False,
    ) -> int:
        """Inserts or updates rows of a primary-key table by key (:meth:`riverlet.Table.upsert`)."""
        cols = list(columns) if columns is not None else None
        schema = self.sync.schema
        return await self._write("upsert", lambda: to_batches(data, schema, cols), progress, cols,
                                 total=input_rows(data))

    async def delete(self, keys: Any, *, progress: ProgressArg = False) -> int:
        """Deletes rows of a primary-key table by key (:meth:`riverlet.Table.delete`); a cancel
        waits for the keys already given to be deleted."""
        return await _call(self.sync.delete, keys, progress=progress)

    async def delete_where(self, filter: Filter) -> int:
        """:meth:`riverlet.Table.delete_where` (a cancel waits for it to finish)."""
        return await _call(self.sync.delete_where, filter)

    async def update_where(self, filter: Filter, set: Union[Mapping[str, Any], str]) -> int:
        """:meth:`riverlet.Table.update_where` (a cancel waits for it to finish)."""
        return await _call(self.sync.update_where, filter, set)

    # ---- reads -------------------------------------------------------------------------------

    def scan(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        read_optimized: bool = False,
    ) -> "BatchStream":
        """A streaming read (:meth:`riverlet.Table.scan`): ``async for batch in t.scan(...)``.
        The read is planned at the first ``await`` on the stream (errors show there)."""
        return BatchStream(functools.partial(
            self.sync._stream, columns=columns, filter=filter, partitions=partitions,
            limit=limit, read_optimized=read_optimized))

    def scan_between(
        self,
        start: Timestamp,
        end: Optional[Timestamp] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        tz: Optional[str] = None,
    ) -> "BatchStream":
        """A streaming time-range read (:meth:`riverlet.Table.scan_between`)."""
        if start is None:
            raise InvalidArgumentError(
                "scan_between needs a start timestamp: an end alone cannot bound a read",
                kind="invalid_argument",
            )
        return BatchStream(functools.partial(
            self.sync._stream, columns=columns, filter=filter, partitions=partitions,
            limit=limit, start=start, end=end, tz=tz))

    def scan_changelog(
        self,
        start: Optional[Timestamp] = None,
        end: Optional[Timestamp] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        tz: Optional[str] = None,
    ) -> "BatchStream":
        """The streaming form of :meth:`changelog`."""
        return BatchStream(functools.partial(
            self.sync._stream, columns=columns, filter=filter, partitions=partitions,
            limit=limit, start=start, end=end, tz=tz, changelog=True))

    async def _read(self, method: Callable[..., pa.Table], args: tuple, kwargs: dict[str, Any],
                    progress: ProgressArg, what: str) -> pa.Table:
        stop = threading.Event()
        bar = progress_bar(progress, f"{what} {self.name}")

        def check() -> None:
            # Called by the native read between batches: the place a cancelled read stops.
            if stop.is_set():
                raise _Stopped()

        # Takes the read's total from the sync read and updates the bar after each batch.
        on_batch = Relay(bar, check)

        def read() -> pa.Table:
            try:
                return method(*args, progress=on_batch, **kwargs)
            finally:
                if bar is not None:
                    bar.close()

        return await _run(read, on_cancel=stop.set)

    async def read(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        read_optimized: bool = False,
        progress: ProgressArg = False,
    ) -> pa.Table:
        """:meth:`riverlet.Table.read`; a cancel stops it after the batch being fetched."""
        return await self._read(self.sync.read, (columns, filter, partitions, limit),
                                {"read_optimized": read_optimized}, progress, "read")

    async def read_between(
        self,
        start: Timestamp,
        end: Optional[Timestamp] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        tz: Optional[str] = None,
        progress: ProgressArg = False,
    ) -> pa.Table:
        """:meth:`riverlet.Table.read_between`."""
        return await self._read(self.sync.read_between,
                                (start, end, columns, filter, partitions, limit),
                                {"tz": tz}, progress, "read")

    async def changelog(
        self,
        start: Optional[Timestamp] = None,
        end: Optional[Timestamp] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        tz: Optional[str] = None,
        progress: ProgressArg = False,
    ) -> pa.Table:
        """:meth:`riverlet.Table.changelog`."""
        return await self._read(self.sync.changelog,
                                (start, end, columns, filter, partitions, limit),
                                {"tz": tz}, progress, "changelog")

    async def to_pandas(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`read` as a pandas DataFrame (same arguments)."""
        return (await self.read(*args, **kwargs)).to_pandas()

    async def to_polars(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`read` as a polars DataFrame (same arguments)."""
        import polars as pl

        return pl.from_arrow(await self.read(*args, **kwargs))

    async def count(self) -> int:
        """:meth:`riverlet.Table.count`."""
        return await _call(self.sync.count)

    async def bucket_leaders(self) -> list[dict[str, Any]]:
        """:meth:`riverlet.Table.bucket_leaders`."""
        return await _call(self.sync.bucket_leaders)

    async def lookup(self, key: Any, *, insert_if_not_exists: bool = False) -> Optional[dict[str, Any]]:
        """The row of one primary key, or ``None`` (:meth:`riverlet.Table.lookup`)."""
        return await _call(self.sync.lookup, key, insert_if_not_exists=insert_if_not_exists)

    async def lookup_many(self, keys: Any, *, insert_if_not_exists: bool = False) -> pa.Table:
        """:meth:`riverlet.Table.lookup_many`."""
        return await _call(self.sync.lookup_many, keys, insert_if_not_exists=insert_if_not_exists)

    async def prefix_lookup(self, prefix: Any) -> pa.Table:
        """:meth:`riverlet.Table.prefix_lookup`."""
        return await _call(self.sync.prefix_lookup, prefix)

    def subscribe(
        self,
        start: Timestamp = "earliest",
        *,
        columns: Optional[Sequence[str]] = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        tz: Optional[str] = None,
        buckets: Optional[Sequence[int]] = None,
        start_offsets: Optional[Sequence[Mapping[str, Any]]] = None,
    ) -> "Subscription":
        """An unbounded subscription (:meth:`riverlet.Table.subscribe`) as an async iterator of
        change batches: ``async with t.subscribe("latest") as sub: async for batch in sub``.
        It starts at the first ``await`` on it (errors show there)."""
        return Subscription(functools.partial(
            self.sync.subscribe, start, columns=columns, partitions=partitions, tz=tz,
            buckets=buckets, start_offsets=start_offsets))

    def __repr__(self) -> str:
        return f"aio.Table({self.name!r})"


# ---- streams ---------------------------------------------------------------------------------


class BatchStream:
    """A streaming read: ``async for batch in stream`` (each a :class:`pyarrow.RecordBatch`),
    or ``await stream.read_all()``. Single use; ``async with`` closes it, and so does a
    cancel of an ``await`` on it."""

    def __init__(self, start: Callable[[], _riverlet.BatchStream]) -> None:
        self._start: Optional[Callable[[], _riverlet.BatchStream]] = start
        self._native: Optional[_riverlet.BatchStream] = None
        self._closed = False

    async def _stream(self) -> _riverlet.BatchStream:
        if self._native is None:
            if self._closed or self._start is None:
                raise ClosedError("this stream is closed", kind="closed")
            start, self._start = self._start, None
            try:
                opened: _riverlet.BatchStream = await _run(start, after_cancel=_close_result)
            except BaseException:
                self._closed = True
                raise
            self._native = opened
            return opened
        return self._native

    def _close_now(self, _fut: "asyncio.Future[Any]") -> None:
        """After a cancel (no call in flight any more): closes the stream."""
        self._closed = True
        if self._native is not None:
            self._native.close()

    @property
    def schema(self) -> Optional[pa.Schema]:
        """The batches' schema once the read started (after the first ``await``), else None."""
        return self._native.schema if self._native is not None else None

    @property
    def closed(self) -> bool:
        """Whether the stream is exhausted or closed."""
        return self._closed or (self._native is not None and self._native.closed)

    async def next_batch(self) -> Optional[pa.RecordBatch]:
        """The next batch, or ``None`` at the end; :class:`ClosedError` once closed."""
        native = await self._stream()
        if self._closed:
            raise ClosedError("this stream is closed", kind="closed")
        return await _run(native.read_next_batch, after_cancel=self._close_now)

    def __aiter__(self) -> AsyncIterator[pa.RecordBatch]:
        return self

    async def __anext__(self) -> pa.RecordBatch:
        batch = await self.next_batch()
        if batch is None:
            raise StopAsyncIteration
        return batch

    async def read_all(self) -> pa.Table:
        """Every remaining batch as one :class:`pyarrow.Table`; a cancel stops it after the
        batch being fetched and closes the stream."""
        native = await self._stream()
        if self._closed:
            raise ClosedError("this stream is closed", kind="closed")
        stop = threading.Event()

        def on_batch(_rows: int) -> None:
            if stop.is_set():
                raise _Stopped()

        return await _run(functools.partial(native.read_all, on_batch), on_cancel=stop.set,
                          after_cancel=self._close_now)

    to_arrow = read_all

    async def close(self) -> None:
        """Stops the read and frees its resources. Idempotent."""
        self._closed = True
        self._start = None
        if self._native is not None:
            # No call of this stream is in flight unless another task awaits it; closing then
            # waits for that batch, so it runs off the loop too.
            await _call(self._native.close)

    aclose = close

    async def __aenter__(self) -> "BatchStream":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()


class Subscription:
    """Changes of a table as they arrive: ``async for batch in sub`` (each a
    :class:`pyarrow.RecordBatch` with ``_change_type``, ``_log_offset``, ``_commit_timestamp``
    first), or ``await sub.poll(timeout)``. ``async with`` closes it. No change is lost to a
    cancel: what a cancelled poll received comes out of the next one."""

    def __init__(self, start: Callable[[], _api.Subscription]) -> None:
        self._start: Optional[Callable[[], _api.Subscription]] = start
        self._sync: Optional[_api.Subscription] = None
        self._pending: collections.deque[pa.RecordBatch] = collections.deque()
        self._closed = False

    async def _sub(self) -> _api.Subscription:
        if self._sync is None:
            if self._closed or self._start is None:
                raise ClosedError("this subscription is closed", kind="closed")
            start, self._start = self._start, None
            try:
                opened: _api.Subscription = await _run(start, after_cancel=_close_result)
            except BaseException:
                self._closed = True
                raise
            self._sync = opened
            return opened
        return self._sync

    @property
    def sync(self) -> Optional[_api.Subscription]:
        """The :class:`riverlet.Subscription` once started (after the first ``await``)."""
        return self._sync

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def _keep(self, fut: "asyncio.Future[list[pa.RecordBatch]]") -> None:
        if not fut.cancelled() and fut.exception() is None:
            self._pending.extend(fut.result())

    async def poll(self, timeout: float = 1.0) -> list[pa.RecordBatch]:
        """Waits up to ``timeout`` seconds; returns the change batches that arrived."""
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise InvalidArgumentError(
                f"poll timeout must be a number of seconds >= 0, got {timeout!r}",
                kind="invalid_argument",
            )
        sub = await self._sub()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self._pending:
                out = list(self._pending)
                self._pending.clear()
                return out
            left = deadline - loop.time()
            batches = await _run(functools.partial(sub.poll, max(0.0, min(left, POLL_SLICE))),
                                 after_cancel=self._keep)
            if batches or loop.time() >= deadline:
                return batches

    async def poll_table(self, timeout: float = 1.0) -> Optional[pa.Table]:
        """:meth:`poll` as one :class:`pyarrow.Table`, or ``None`` when nothing arrived."""
        batches = await self.poll(timeout)
        return pa.Table.from_batches(batches) if batches else None

    async def position(self) -> list[dict[str, Any]]:
        """:meth:`riverlet.Subscription.position`: the next offset of every bucket after the
        changes received so far, including those ``async for`` (or a cancelled poll) holds
        for the next step: resume from it once they are handed out."""
        sub = await self._sub()
        return await _call(sub.position)

    def __aiter__(self) -> AsyncIterator[pa.RecordBatch]:
        return self

    async def __anext__(self) -> pa.RecordBatch:
        while not self._pending:
            self._pending.extend(await self.poll(1.0))
        return self._pending.popleft()

    async def close(self) -> None:
        """Stops the subscription. Idempotent."""
        self._closed = True
        self._start = None
        self._pending.clear()
        if self._sync is not None:
            await _call(self._sync.close)

    aclose = close

    async def __aenter__(self) -> "Subscription":
        await self._sub()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"aio.Subscription(closed={self.closed})"
