"""The public classes of :mod:`riverlet` (implementation; see ``__init__.pyi`` for types)."""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Optional, TypeVar, Union

import pyarrow as pa

from . import _riverlet
from ._convert import is_tabular, key_rows, keys_batch, to_batches
from ._progress import ProgressArg, input_rows, progress_bar
from .errors import InvalidArgumentError

Filter = Union[str, tuple, Sequence[Any], None]
Timestamp = Any  # int epoch ms | str | datetime.datetime | datetime.date | pandas.Timestamp


def configure_runtime(threads: int) -> None:
    """Sets the number of network worker threads; call before the first connection."""
    _riverlet.configure_runtime(threads)


def metrics() -> list[dict[str, Any]]:
    """The client's metrics (and those of a :class:`LocalServer` in this process), each a dict
    ``{"name": ..., "labels": {...}, "value": ...}``: requests, errors by code, bytes, request
    latencies (histograms as ``_count`` and ``_sum``), writer buffered bytes and in-flight
    batches. Names start with ``riverlet_client_`` / ``riverlet_server_``.
    """
    return _riverlet.metrics()


def metrics_text() -> str:
    """:func:`metrics` in Prometheus's text exposition format (to serve or to log)."""
    return _riverlet.metrics_text()


_Self = TypeVar("_Self", bound="_ClosesNative")


class _ClosesNative:
    """A context manager over a native handle ``self._native`` that has ``close()``/``closed``."""

    _native: Any

    def close(self) -> None:
        self._native.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return bool(self._native.closed)

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


def _option_texts(options: Mapping[str, object]) -> dict[str, str]:
    """Server option values as the text Fluss's configuration takes (True -> "true")."""
    return {
        str(k): ("true" if v is True else "false" if v is False else str(v))
        for k, v in options.items()
    }


class LocalServer:
    """An embedded Fluss-compatible server running inside this Python process.

    It listens on real TCP, so any Fluss client can use it. With ``data_dir=None`` a temporary
    directory is used and deleted on shutdown. Use it as a context manager::

        with riverlet.LocalServer() as server:
            conn = riverlet.connect(server.bootstrap_servers)

    ``users`` (name -> password) turns on SASL/PLAIN authentication. ``options`` are server
    options by their Apache Fluss names, e.g. ``{"remote.data.dir": "/data/remote",
    "log.segment.file-size": "64mb"}``; an unknown name raises an error naming it.
    ``kv.snapshot.interval`` (off unless set: the package's server writes snapshots in
    Riverlet's own format) is how often primary-key buckets get the KV snapshot that
    ``read_optimized`` reads serve.
    """

    def __init__(
        self,
        data_dir: Optional[str] = None,
        port: int = 0,
        host: str = "127.0.0.1",
        users: Optional[Mapping[str, str]] = None,
        options: Optional[Mapping[str, object]] = None,
    ) -> None:
        self._temp: Optional[str] = None
        if data_dir is None:
            self._temp = tempfile.mkdtemp(prefix="riverlet-")
            data_dir = self._temp
        try:
            self._native = _riverlet.LocalServer(
                str(data_dir),
                host,
                port,
                dict(users) if users is not None else None,
                _option_texts(options) if options is not None else None,
            )
        except BaseException:
            self._cleanup()
            raise

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` to pass to :func:`connect`."""
        return self._native.bootstrap_servers

    @property
    def host(self) -> str:
        """The host the server listens on."""
        return self._native.host

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return self._native.port

    @property
    def data_dir(self) -> str:
        """The data directory."""
        return str(self._native.data_dir)

    @property
    def running(self) -> bool:
        """Whether the server is running."""
        return self._native.running

    def take_kv_snapshots(self) -> None:
        """Takes a KV snapshot of every primary-key bucket whose state changed since its latest
        one, now (as the ``kv.snapshot.interval`` task does); returns once they are written."""
        self._native.take_kv_snapshots()

    def commit_lake(self) -> None:
        """Commits the new rows of every lake-enabled table to the lake now (as the
        ``table.datalake.freshness`` rounds do); returns once committed. The server needs the
        ``datalake.format`` (``iceberg`` or ``paimon``) option and the format's warehouse
        (``datalake.iceberg.warehouse`` or ``datalake.paimon.warehouse``)."""
        self._native.commit_lake()

    def connect(self, **options: Any) -> "Connection":
        """:func:`connect` to this server (keyword options as for :func:`connect`)."""
        return connect(self.bootstrap_servers, **options)

    def shutdown(self) -> None:
        """Stops the server (flushing its data) and removes a temporary data directory."""
        try:
            self._native.shutdown()
        finally:
            self._cleanup()

    close = shutdown

    def _cleanup(self) -> None:
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"LocalServer({self.bootstrap_servers!r}, running={self.running})"


def _duration(seconds: Optional[float], name: str) -> Optional[str]:
    if seconds is None:
        return None
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise InvalidArgumentError(
            f"{name} must be a positive number of seconds, got {seconds!r}",
            kind="invalid_argument",
        )
    return f"{max(1, round(seconds * 1000))}ms"


def connect(
    bootstrap_servers: str,
    *,
    username: Optional[str] = None,
    password: Optional[str] = None,
    request_timeout: Optional[float] = None,
    connect_timeout: Optional[float] = None,
    properties: Optional[Mapping[str, str]] = None,
) -> "Connection":
    """Connects to a Fluss cluster or a :class:`LocalServer`.

    ``bootstrap_servers`` is ``"host:port[,host:port...]"``. ``username``/``password`` use
    SASL/PLAIN. Timeouts are in seconds. ``properties`` are further Fluss client options
    (``client.writer.batch-size``, ``client.writer.acks``, ...), and the lake catalog options
    lake reads add to a table's, by the names Fluss's Flink catalog takes: ``paimon.*`` and
    ``iceberg.*``. A cluster leaves the lake catalog's secrets out of table info, so reading
    ``t$lake`` or a union read of a Paimon warehouse on S3 needs its keys here, e.g.
    ``{"paimon.s3.access-key": ..., "paimon.s3.secret-key": ...}`` (or ``AWS_ACCESS_KEY_ID``
    and ``AWS_SECRET_ACCESS_KEY`` in the environment).
    """
    props: dict[str, str] = {"bootstrap.servers": bootstrap_servers}
    if username is not None or password is not None:
        props["client.security.protocol"] = "SASL"
        if username is not None:
            props["client.security.sasl.username"] = username
        if password is not None:
            props["client.security.sasl.password"] = password
    for key, value in (
        ("client.request-timeout", _duration(request_timeout, "request_timeout")),
        ("client.connect-timeout", _duration(connect_timeout, "connect_timeout")),
    ):
        if value is not None:
            props[key] = value
    for k, v in (properties or {}).items():
        props[str(k)] = str(v)
    return Connection(_riverlet.connect(props))


def _schema(schema: Any) -> pa.Schema:
    if isinstance(schema, pa.Schema):
        return schema
    if isinstance(schema, Mapping):
        return pa.schema(list(schema.items()))
    if isinstance(schema, (list, tuple)):
        return pa.schema(schema)
    raise InvalidArgumentError(
        f"schema must be a pyarrow.Schema, a dict or a list of (name, type), not {schema!r}",
        kind="invalid_argument",
    )


def _names(v: Union[str, Sequence[str], None]) -> Optional[list[str]]:
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v]


class Connection(_ClosesNative):
    """A connection to a Fluss cluster; create it with :func:`connect`.

    A context manager: leaving the ``with`` block closes it. Tables, streams and subscriptions
    opened from a closed connection raise :class:`ClosedError`.
    """

    def __init__(self, native: _riverlet.Connection) -> None:
        self._native = native

    def create_database(self, name: str, if_not_exists: bool = False) -> None:
        """Creates a database."""
        self._native.create_database(name, if_not_exists)

    def drop_database(self, name: str, if_exists: bool = False, cascade: bool = False) -> None:
        """Drops a database; ``cascade=True`` drops its tables too."""
        self._native.drop_database(name, if_exists, cascade)

    def list_databases(self) -> list[str]:
        """The names of all databases."""
        return self._native.list_databases()

    def database_exists(self, name: str) -> bool:
        """Whether a database exists."""
        return self._native.database_exists(name)

    def create_table(
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
        """Creates table ``name`` (``"db.table"``) and returns it.

        ``schema`` is a :class:`pyarrow.Schema` (or a dict / list of ``(name, type)``);
        non-nullable fields become ``NOT NULL`` columns. ``primary_key`` makes it a
        primary-key table (upserts, deletes, lookups); ``partition_by`` names the partition
        columns; ``buckets`` is the bucket count (``None``: the server's default);
        ``properties`` are Fluss table options such as ``{"table.log.ttl": "7d"}``; with
        ``{"table.merge-engine": "aggregation"}`` the columns' functions are given as Flink's
        options ``{"fields.<column>.agg": "sum"}`` (and ``"fields.<column>.listagg.delimiter"``).
        ``auto_increment`` names a column (INT or BIGINT, not in the primary key) whose values
        the server assigns to new keys; writes must then name their ``columns`` without it.
        """
        self._native.create_table(
            name,
            _schema(schema),
            _names(primary_key),
            _names(partition_by),
            buckets,
            _names(bucket_keys),
            {str(k): str(v) for k, v in properties.items()} if properties else None,
            {str(k): str(v) for k, v in custom_properties.items()} if custom_properties else None,
            comment,
            if_not_exists,
            auto_increment,
        )
        return self.table(name)

    def add_columns(self, name: str, columns: Any) -> "Table":
        """``ALTER TABLE name ADD COLUMN ...``: appends ``columns`` (a :class:`pyarrow.Schema`,
        or a dict / list of ``(name, type)``; each must be nullable and new) at the end and
        returns the table with its new schema. Rows written before read the new columns as
        null; tables opened earlier keep their old schema (open the table again)."""
        self._native.add_columns(name, _schema(columns))
        return self.table(name)

    def drop_table(self, name: str, if_exists: bool = False) -> None:
        """Drops a table."""
        self._native.drop_table(name, if_exists)

    def list_tables(self, database: str) -> list[str]:
        """The table names of a database."""
        return self._native.list_tables(database)

    def table_exists(self, name: str) -> bool:
        """Whether table ``"db.table"`` exists."""
        return self._native.table_exists(name)

    def create_acls(self, acls: Sequence[Mapping[str, str]]) -> None:
        """Adds ACLs (the server needs ``authorizer.enabled``). Each is a dict with
        ``resource`` (``"cluster"``, ``"cluster.db"`` or ``"cluster.db.table"``), ``principal``
        (``"User:alice"``), ``operation`` (``READ``, ``WRITE``, ``CREATE``, ``DROP``, ``ALTER``,
        ``DESCRIBE`` or ``ALL``) and optionally ``host`` (default: every host). Needs ALTER on
        each resource (a table's: its database); a refusal raises
        :class:`AuthorizationError`."""
        self._native.create_acls(
            [
                (a.get("resource", ""), a.get("principal", ""), a.get("operation", ""),
                 a.get("host"))
                for a in acls
            ]
        )

    def list_acls(
        self,
        resource: Optional[str] = None,
        principal: Optional[str] = None,
        operation: Optional[str] = None,
        host: Optional[str] = None,
        permission: Optional[str] = None,
    ) -> list[dict[str, str]]:
        """The ACLs matching the filter (``None`` or ``"ANY"`` matches everything), on the
        resources the caller may DESCRIBE: dicts with ``resource``, ``resource_type``,
        ``resource_name``, ``principal``, ``host``, ``operation`` and ``permission``."""
        return self._native.list_acls(resource, principal, operation, host, permission)

    def drop_acls(
        self,
        resource: Optional[str] = None,
        principal: Optional[str] = None,
        operation: Optional[str] = None,
        host: Optional[str] = None,
        permission: Optional[str] = None,
    ) -> list[dict[str, str]]:
        """Removes the ACLs matching the filter (as :meth:`list_acls`) and returns them."""
        return self._native.drop_acls(resource, principal, operation, host, permission)

    def describe_cluster_configs(self) -> list[dict[str, Optional[str]]]:
        """Every server option as a dict with ``key``, ``value`` and ``source``:
        ``INITIAL_SERVER_CONFIG`` (the server's start-up options) or ``DYNAMIC_SERVER_CONFIG``
        (set while it runs). Needs DESCRIBE on the cluster."""
        return self._native.describe_cluster_configs()

    def alter_cluster_configs(
        self,
        set: Optional[Mapping[str, str]] = None,
        delete: Sequence[str] = (),
    ) -> None:
        """Sets (``set``) and deletes (``delete``: back to the start-up value) dynamic server
        options, all or none. The server refuses an option it does not change at run time,
        naming it (:class:`RiverletError`). Needs ALTER on the cluster."""
        self._native.alter_cluster_configs(dict(set or {}), list(delete))

    def alter_database(
        self,
        name: str,
        set: Optional[Mapping[str, str]] = None,
        reset: Sequence[str] = (),
        comment: Optional[str] = None,
        if_exists: bool = False,
    ) -> None:
        """Sets (``set``) and removes (``reset``) custom properties of database ``name`` and
        changes its comment (``""`` removes it, ``None`` keeps it). A missing database raises,
        unless ``if_exists``. Needs ALTER on the database."""
        self._native.alter_database(name, dict(set or {}), list(reset), comment, if_exists)

    def database_info(self, name: str) -> dict[str, Any]:
        """Database ``name``'s ``comment``, ``custom_properties``, ``created_time`` and
        ``modified_time`` (epoch ms)."""
        return self._native.database_info(name)

    def register_producer_offsets(
        self,
        producer_id: str,
        offsets: Mapping[tuple[int, Optional[int], int], int],
        ttl_ms: Optional[int] = None,
    ) -> bool:
        """Registers a producer's offsets (Fluss's RegisterProducerOffsets, what Fluss's Flink
        sink records for the undo recovery of aggregation tables): ``offsets`` maps
        ``(table_id, partition_id, bucket)`` (``partition_id`` None for a table without
        partitions) to an offset. The registration expires after ``ttl_ms`` milliseconds (None:
        the server's ``coordinator.producer-offsets.ttl``, 24 h by default). Returns True when
        registered, False when a live registration of ``producer_id`` existed (it is kept). An
        invalid producer id raises an error naming it."""
        return self._native.register_producer_offsets(producer_id, dict(offsets), ttl_ms)

    def get_producer_offsets(self, producer_id: str) -> Optional[dict[str, Any]]:
        """A producer's live registration, or None: a dict with ``producer_id``,
        ``expiration_time_ms`` (milliseconds since the epoch) and ``offsets`` (keyed as
        :meth:`register_producer_offsets` takes them; tables the caller may not READ are left
        out)."""
        return self._native.get_producer_offsets(producer_id)

    def delete_producer_offsets(self, producer_id: str) -> None:
        """Deletes a producer's registration (deleting none is not an error)."""
        self._native.delete_producer_offsets(producer_id)

    def lake_snapshot(
        self, name: str, snapshot_id: Optional[int] = None, *, readable: bool = False
    ) -> Optional[dict[str, Any]]:
        """How far a lake-enabled table is tiered: its latest lake snapshot (Fluss's
        ``getLatestLakeSnapshot``), the one with ``snapshot_id``, or with ``readable=True`` the
        one union reads take (``getReadableLakeSnapshot``: for a Paimon deletion-vector table it
        can be older than the latest, or missing).

        Returns ``{"table_id", "snapshot_id", "buckets"}``, each bucket a dict with
        ``partition_id`` (None for a table without partitions), ``bucket`` and ``log_offset``
        (the lake holds the bucket's records before it; None: nothing tiered yet), or None when
        the table has no such snapshot. A missing table raises ``NotFoundError``; asking
        for both ``snapshot_id`` and ``readable`` raises ``InvalidArgumentError``.
        """
        return self._native.lake_snapshot(name, snapshot_id, readable)

    def list_partitions(self, name: str) -> list[dict[str, Any]]:
        """The partitions of a table: dicts with ``id``, ``name`` and ``spec``."""
        return self._native.list_partitions(name)

    def create_partition(
        self, name: str, spec: Mapping[str, Any], if_not_exists: bool = False
    ) -> None:
        """Creates a partition given as ``{partition_key: value}``."""
        self._native.create_partition(name, [(k, str(v)) for k, v in spec.items()], if_not_exists)

    def drop_partition(self, name: str, spec: Mapping[str, Any], if_exists: bool = False) -> None:
        """Drops a partition given as ``{partition_key: value}``."""
        self._native.drop_partition(name, [(k, str(v)) for k, v in spec.items()], if_exists)

    def table(self, name: str) -> "Table":
        """Opens table ``"db.table"`` (:class:`TableNotFoundError` when it does not exist).

        A lake-enabled table is also readable as ``"db.table$lake"`` (only the rows of its
        latest lake snapshot, with the ``__bucket``, ``__offset``, ``__timestamp`` columns) and
        ``"db.table$lake$snapshots"`` (``committed_at``, ``snapshot_id``, ``parent_id``,
        ``operation``: one row per lake commit); :meth:`Table.read` of ``"db.table"`` itself
        is then the union of the lake snapshot and the log after it. Time-range reads never
        read the lake.
        """
        return Table(self._native.table(name), self)

    def close(self) -> None:
        """Closes the connection. Idempotent."""
        self._native.close()

    def __repr__(self) -> str:
        return f"Connection(closed={self.closed})"


class Table:
    """A table of a Fluss cluster; open it with :meth:`Connection.table`.

    Writes take pyarrow Tables / RecordBatches / RecordBatchReaders, pandas or polars
    DataFrames, dicts of columns or lists of rows, and return when the server acknowledged
    them. Reads return pyarrow objects; streaming reads implement ``__arrow_c_stream__``.
    """

    def __init__(self, native: _riverlet.Table, connection: Connection) -> None:
        self._native = native
        self._connection = connection

    # ---- description ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """``db.table``."""
        return self._native.name

    @property
    def database(self) -> str:
        """The database name."""
        return self._native.database

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the table's rows (as reads return them)."""
        return self._native.schema

    @property
    def primary_key(self) -> Optional[list[str]]:
        """The primary-key columns, or ``None`` for a log table."""
        return self._native.primary_key

    @property
    def has_primary_key(self) -> bool:
        """Whether this is a primary-key table."""
        return self._native.primary_key is not None

    @property
    def partition_keys(self) -> list[str]:
        """The partition columns (empty when not partitioned)."""
        return self._native.partition_keys

    @property
    def is_partitioned(self) -> bool:
        """Whether the table is partitioned."""
        return bool(self._native.partition_keys)

    @property
    def bucket_keys(self) -> list[str]:
        """The bucket key columns."""
        return self._native.bucket_keys

    @property
    def buckets(self) -> int:
        """The number of buckets."""
        return self._native.buckets

    @property
    def properties(self) -> dict[str, str]:
        """The table's Fluss properties."""
        return self._native.properties

    @property
    def comment(self) -> Optional[str]:
        """The table comment."""
        return self._native.comment

    @property
    def table_id(self) -> int:
        """The server-assigned table id."""
        return self._native.table_id

    @property
    def connection(self) -> Connection:
        """The connection the table was opened on."""
        return self._connection

    # ---- writes -----------------------------------------------------------------------------

    def _write(self, op: str, batches: Iterator[pa.RecordBatch], progress: ProgressArg,
               columns: Optional[list[str]] = None, total: Optional[int] = None) -> int:
        bar = progress_bar(progress, f"{op} {self.name}", total)
        rows = 0
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if op == "append":
                    self._native.append(batch)
                elif op == "upsert":
                    self._native.upsert(batch, columns)
                else:
                    self._native.delete(batch)
                rows += batch.num_rows
                if bar is not None:
                    bar.update(batch.num_rows)
            self._native.flush()
        finally:
            if bar is not None:
                bar.close()
        return rows

    def append(self, data: Any, *, progress: ProgressArg = False) -> int:
        """Appends rows to a log table; returns how many, once the server acknowledged them.

        ``data``: pyarrow Table / RecordBatch / RecordBatchReader (streamed), pandas or polars
        DataFrame, dict of columns, or list of rows (dicts, or tuples in column order).
        ``progress=True`` shows a tqdm bar whose total is the input's rows (none for a streamed
        reader); a callable is called with each batch's rows; an object with ``update`` (a
        ``tqdm`` bar) gets ``total`` set and ``update(rows)`` per batch.
        """
        return self._write("append", to_batches(data, self.schema), progress,
                           total=input_rows(data))

    def upsert(
        self,
        data: Any,
        *,
        columns: Optional[Sequence[str]] = None,
        progress: ProgressArg = False,
    ) -> int:
        """Inserts or updates rows of a primary-key table by key; returns how many.

        With ``columns`` (which must include the primary key) only those columns are updated
        (a partial update); other columns keep their values.
        """
        cols = _names(columns)
        return self._write("upsert", to_batches(data, self.schema, cols), progress, cols,
                           total=input_rows(data))

    def delete(self, keys: Any, *, progress: ProgressArg = False) -> int:
        """Deletes rows of a primary-key table by key; returns how many keys were sent.

        ``keys``: tabular data holding the primary-key columns (as for :meth:`append`), or a
        list of keys (scalars for a one-column key, tuples in key order, or dicts).
        """
        pk = self._require_pk("delete")
        if is_tabular(keys) or isinstance(keys, Mapping) and all(
            isinstance(v, (list, tuple)) for v in keys.values()
        ):
            batches = to_batches(keys, self.schema, None if is_tabular(keys) else list(keys))
        else:
            if not isinstance(keys, (list, tuple)):
                keys = [keys]
            batches = iter([keys_batch(keys, self.schema, pk)])
        return self._write("delete", batches, progress, total=input_rows(keys))

    def delete_where(self, filter: Filter) -> int:
        """Deletes every row of a primary-key table that matches ``filter`` (``DELETE FROM t
        WHERE ...``); returns how many rows were deleted.

        ``filter`` takes any form :meth:`scan` takes (``[]`` matches every row). Equality on
        every primary-key column deletes by key; any other condition reads the table (pruned
        to the partitions the condition allows) and deletes the matching keys. Tables whose
        ``table.delete.behavior`` is ``disable`` raise :class:`UnsupportedError`; with
        ``ignore`` nothing is deleted and 0 is returned. Tables with a merge engine
        (``first_row``, ``versioned``, ``aggregation``) and log tables raise
        :class:`UnsupportedError`.

        Not atomic (as in Fluss): the table is read once and the matching rows are then
        written independently, so rows written after the read starts are not affected and a
        failure part-way leaves the rows already deleted deleted.
        """
        return self._native.delete_where(filter)

    def update_where(self, filter: Filter, set: Union[Mapping[str, Any], str]) -> int:
        """Sets columns of every row of a primary-key table that matches ``filter`` (``UPDATE
        t SET ... WHERE ...``); returns how many rows were updated.

        ``set``: ``{column: value}`` (values as in filters: int, float, str, bytes, bool,
        None, Decimal, date, time, datetime) or the text ``"col = 1, other = 'x'"``. Values
        are converted exactly to the column's type (a value the type cannot hold raises
        :class:`InvalidArgumentError` naming the column). Primary-key and partition columns
        cannot be set. ``filter`` as in :meth:`delete_where`; equality on every primary-key
        column updates by one lookup.

        Not atomic (as in Fluss): each matching row is read once and written back whole with
        the new values, so a concurrent write to a matching row may be overwritten.
        """
        return self._native.update_where(filter, set)

    def _require_pk(self, what: str) -> list[str]:
        pk = self.primary_key
        if pk is None:
            raise InvalidArgumentError(
                f"{what} needs a primary-key table; '{self.name}' has no primary key",
                kind="invalid_argument",
            )
        return pk

    # ---- reads ------------------------------------------------------------------------------

    def _stream(self, **kw: Any) -> _riverlet.BatchStream:
        return self._native.scan(
            _names(kw.get("columns")),
            kw.get("filter"),
            _partitions(kw.get("partitions")),
            kw.get("limit"),
            kw.get("start"),
            kw.get("end"),
            kw.get("tz"),
            kw.get("read_optimized", False),
            kw.get("changelog", False),
            kw.get("keep_batches", False),
        )

    def _collect(self, stream: _riverlet.BatchStream, progress: ProgressArg, what: str) -> pa.Table:
        bar = progress_bar(progress, f"{what} {self.name}", stream.expected_rows)
        try:
            return stream.read_all(bar.update if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()

    def scan(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        read_optimized: bool = False,
    ) -> pa.RecordBatchReader:
        """A streaming read of the table's current rows, as a :class:`pyarrow.RecordBatchReader`.

        Log tables: every record up to the end of the log when the read starts. Primary-key
        tables: the latest value of every key. ``columns`` projects; ``filter`` is a list of
        ``(column, op, value)`` tuples (AND), a list of such lists (OR of ANDs), or a string
        such as ``"amount > 10 AND dt IN ('2024-01-01')"``; ops are ``=``, ``==``, ``!=``,
        ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``, ``is null``, ``is not null``,
        ``like``. ``partitions`` selects partitions by name or ``{key: value}``.
        ``read_optimized=True`` (primary-key tables; Fluss's ``read.optimized``) returns each
        bucket's latest KV snapshot without the log changes after it: faster, but possibly
        stale, and a bucket without a snapshot yet returns no rows.
        The reader implements ``__arrow_c_stream__`` (DuckDB, Polars, pyarrow read it).
        """
        stream = self._stream(columns=columns, filter=filter, partitions=partitions,
                              limit=limit, read_optimized=read_optimized)
        return pa.RecordBatchReader.from_stream(stream)

    def read(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Filter = None,
        partitions: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
        limit: Optional[int] = None,
        *,
        read_optimized: bool = False,
        progress: ProgressArg = False,
    ) -> pa.Table:
        """:meth:`scan` collected into a :class:`pyarrow.Table` (Ctrl-C stops it).

        ``progress`` as in :meth:`append`. The bar's total is the rows the read returns when
        the core knows it before reading: log tables without a filter (the records up to the
        end offsets the read fixes when it starts, at most ``limit``). Primary-key tables
        (their latest view holds one row per key, not per record) and filtered reads count
        rows without a total.
        """
        stream = self._stream(columns=columns, filter=filter, partitions=partitions,
                              limit=limit, read_optimized=read_optimized, keep_batches=True)
        return self._collect(stream, progress, "read")

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
    ) -> pa.RecordBatchReader:
        """A streaming time-range read: the rows committed in ``[start, end)``.

        Log tables: every record appended in the window. Primary-key tables: each key changed in
        the window once, with its last value (keys whose last change is a delete are left out).
        ``end=None`` means "now" when the read starts. Bounds: ``int`` epoch milliseconds,
        ``"yyyy-MM-dd HH:mm:ss"`` strings and naive ``datetime``s in ``tz`` (default: the
        local zone; an IANA name, ``"UTC"`` or ``"+08:00"``), aware ``datetime`` / pandas
        ``Timestamp`` as given, ``date`` (midnight in ``tz``). Invalid windows raise
        :class:`InvalidArgumentError` before anything is read.
        """
        if start is None:
            raise InvalidArgumentError(
                "scan_between needs a start timestamp: an end alone cannot bound a read",
                kind="invalid_argument",
            )
        stream = self._stream(columns=columns, filter=filter, partitions=partitions,
                              limit=limit, start=start, end=end, tz=tz)
        return pa.RecordBatchReader.from_stream(stream)

    def read_between(
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
        """:meth:`scan_between` collected into a :class:`pyarrow.Table`.

        ``progress`` as in :meth:`append`; the bar's total is known for log tables without a
        filter whose window ends after the read starts (``end=None`` does): the records
        committed from ``start`` up to the end offsets fixed then. Primary-key tables (one row
        per changed key), filtered reads and windows ending in the past count rows without a
        total.
        """
        if start is None:
            raise InvalidArgumentError(
                "read_between needs a start timestamp: an end alone cannot bound a read",
                kind="invalid_argument",
            )
        stream = self._stream(columns=columns, filter=filter, partitions=partitions,
                              limit=limit, start=start, end=end, tz=tz, keep_batches=True)
        return self._collect(stream, progress, "read")

    def changelog(
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
        """Every change in the log (within ``[start, end)`` when given), not folded.

        Columns: ``_change_type`` (``insert``, ``update_before``, ``update_after``,
        ``delete``; log tables: ``insert``), ``_log_offset``, ``_commit_timestamp``, then the
        table's (projected) columns. ``progress`` as in :meth:`append`; the total is known
        without a filter (one row per record, primary-key tables too) for a window ending after
        the read starts (or none).
        """
        stream = self._stream(columns=columns, filter=filter, partitions=partitions,
                              limit=limit, start=start, end=end, tz=tz, changelog=True,
                              keep_batches=True)
        return self._collect(stream, progress, "changelog")

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
    ) -> pa.RecordBatchReader:
        """The streaming form of :meth:`changelog`."""
        stream = self._stream(columns=columns, filter=filter, partitions=partitions,
                              limit=limit, start=start, end=end, tz=tz, changelog=True)
        return pa.RecordBatchReader.from_stream(stream)

    def to_pandas(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`read` as a pandas DataFrame (same arguments)."""
        return self.read(*args, **kwargs).to_pandas()

    def to_polars(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`read` as a polars DataFrame (same arguments)."""
        import polars as pl

        return pl.from_arrow(self.read(*args, **kwargs))

    def count(self) -> int:
        """The number of rows: records retained (log tables) or keys (primary-key tables)."""
        return self._native.count()

    def bucket_leaders(self) -> list[dict[str, Any]]:
        """Which tablet server leads each bucket, as the cluster says now.

        One dict per bucket (per partition and bucket for a partitioned table, partitions by
        name): ``partition_id`` and ``partition_name`` (``None`` without partitions),
        ``bucket``, ``leader_id`` (the tablet server id) and ``leader_address``
        (``"host:port"``); both leader keys are ``None`` where the bucket has no live leader
        right now (one is being elected, or the leader just died). The table's cached leaders
        are asked from the cluster again first, so the connection's writes and reads route by
        this answer from then on.
        """
        return self._native.bucket_leaders()

    def lookup(self, key: Any, *, insert_if_not_exists: bool = False) -> Optional[dict[str, Any]]:
        """The row of one primary key, as a dict, or ``None`` when there is none.

        ``key``: a scalar for a one-column key, a tuple in key order, or a dict. With
        ``insert_if_not_exists=True`` a missing key is inserted by the server (other columns
        null, an auto-increment column assigned) and its new row returned: Fluss's
        dictionary-encoding pattern.
        """
        pk = self._require_pk("lookup")
        found = self._native.lookup(keys_batch([key], self.schema, pk), insert_if_not_exists)
        rows = found.to_pylist()
        return rows[0] if rows else None

    def lookup_many(self, keys: Any, *, insert_if_not_exists: bool = False) -> pa.Table:
        """The rows of many primary keys (those that exist), as a :class:`pyarrow.Table`.

        ``insert_if_not_exists`` as in :meth:`lookup`.
        """
        pk = self._require_pk("lookup")
        if is_tabular(keys):
            batches = list(to_batches(keys, self.schema))
            if not batches:
                return self.schema.empty_table()
            found = [self._native.lookup(b, insert_if_not_exists) for b in batches]
        else:
            found = [self._native.lookup(keys_batch(list(keys), self.schema, pk),
                                         insert_if_not_exists)]
        return pa.Table.from_batches(found, schema=self.schema)

    def prefix_lookup(self, prefix: Any) -> pa.Table:
        """Every row whose primary key starts with ``prefix``, as a :class:`pyarrow.Table`.

        The prefix gives the table's bucket key columns (plus the partition columns of a
        partitioned table): a scalar, a tuple in that order, or a dict.
        """
        self._require_pk("prefix_lookup")
        names = self._native.prefix_lookup_columns
        found = self._native.prefix_lookup(
            pa.RecordBatch.from_pylist(
                key_rows(prefix, names),
                schema=pa.schema([self.schema.field(n).with_nullable(True) for n in names]),
            )
        )
        return pa.Table.from_batches([found], schema=self.schema)

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
        """An unbounded subscription to the table's changes.

        ``start``: ``"earliest"`` (the oldest retained change), ``"latest"`` (changes after
        now), ``"full"`` (primary-key tables: a snapshot of the current rows, then the log), or
        a timestamp (any form :meth:`read_between` takes). ``buckets`` limits it to some
        buckets; ``start_offsets`` (the dicts :meth:`Subscription.position` returns) starts
        those buckets there, whatever ``start`` says, to resume from a checkpoint.
        """
        return Subscription(
            self._native.subscribe(
                start,
                _names(columns),
                _partitions(partitions),
                tz,
                list(buckets) if buckets is not None else None,
                [dict(o) for o in start_offsets] if start_offsets is not None else None,
            )
        )

    def __repr__(self) -> str:
        return f"Table({self.name!r})"


def _partitions(v: Any) -> Optional[list[Any]]:
    if v is None:
        return None
    if isinstance(v, (str, Mapping)):
        return [v]
    return list(v)


class Subscription(_ClosesNative):
    """Changes of a table as they arrive; iterate it, or :meth:`poll` it.

    Each batch has ``_change_type``, ``_log_offset`` and ``_commit_timestamp`` columns before
    the subscribed columns. A context manager; Ctrl-C interrupts a waiting poll.
    """

    def __init__(self, native: _riverlet.Subscription) -> None:
        self._native = native

    @property
    def schema(self) -> pa.Schema:
        """The subscribed columns' schema (without the change columns)."""
        return self._native.schema

    def poll(self, timeout: float = 1.0) -> list[pa.RecordBatch]:
        """Waits up to ``timeout`` seconds; returns the change batches that arrived.

        The buckets that delivered rows are already fetching their next rows when this
        returns (at most one answer per bucket waits for the next poll), so work done on these
        rows overlaps with the next fetch; :meth:`position` counts only the rows returned.
        """
        return self._native.poll(timeout)

    def poll_table(self, timeout: float = 1.0) -> Optional[pa.Table]:
        """:meth:`poll` as one :class:`pyarrow.Table`, or ``None`` when nothing arrived."""
        batches = self._native.poll(timeout)
        return pa.Table.from_batches(batches) if batches else None

    def position(self) -> list[dict[str, Any]]:
        """The next offset of every bucket read: dicts with ``partition_id``,
        ``partition_name`` (``None`` without partitions), ``bucket`` and ``offset``. Store them
        and pass them as ``start_offsets`` to :meth:`Table.subscribe` to resume after the rows
        polled so far."""
        return self._native.position()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while True:
            yield from self._native.poll(1.0)

    def close(self) -> None:
        """Stops the subscription. Idempotent."""
        self._native.close()
