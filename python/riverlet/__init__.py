"""Riverlet: a fast, Arrow-native client for Apache Fluss, with an embedded server.

::

    import riverlet
    with riverlet.LocalServer() as server:
        conn = riverlet.connect(server.bootstrap_servers)
        conn.create_database("shop", if_not_exists=True)
        t = conn.create_table("shop.orders", pa.schema([("id", pa.int64()), ("amount", pa.int32())]))
        t.append([{"id": 1, "amount": 10}])
        print(t.read(filter=[("amount", ">", 5)]))

Errors are :class:`RiverletError` subclasses (see :mod:`riverlet.errors`). For asyncio,
:mod:`riverlet.aio` has the same classes with awaitable calls (``async with``, ``await
table.append(...)``, ``async for batch in table.scan()``) over the same native calls.
"""

from . import aio, errors
from ._riverlet import __version__
from ._flight import FlightServer, flight_server
from ._api import (
    Connection,
    LocalServer,
    Subscription,
    Table,
    configure_runtime,
    connect,
    metrics,
    metrics_text,
)
from .errors import (
    AlreadyExistsError,
    AuthenticationError,
    AuthorizationError,
    ClosedError,
    CorruptDataError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    ForkedProcessError,
    InternalError,
    InvalidArgumentError,
    NetworkError,
    NotFoundError,
    PartitionAlreadyExistsError,
    PartitionNotFoundError,
    RequestTimeoutError,
    RiverletError,
    RiverletWarning,
    ServerError,
    StorageIOError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedError,
)

__all__ = [
    "__version__",
    "aio",
    "Connection",
    "FlightServer",
    "LocalServer",
    "Subscription",
    "Table",
    "configure_runtime",
    "connect",
    "flight_server",
    "metrics",
    "metrics_text",
    "AlreadyExistsError",
    "AuthenticationError",
    "AuthorizationError",
    "ClosedError",
    "CorruptDataError",
    "DatabaseAlreadyExistsError",
    "DatabaseNotFoundError",
    "ForkedProcessError",
    "InternalError",
    "InvalidArgumentError",
    "NetworkError",
    "NotFoundError",
    "PartitionAlreadyExistsError",
    "PartitionNotFoundError",
    "RequestTimeoutError",
    "RiverletError",
    "RiverletWarning",
    "ServerError",
    "StorageIOError",
    "TableAlreadyExistsError",
    "TableNotFoundError",
    "UnsupportedError",
]
