"""Riverlet's exception classes.

Every error raised by Riverlet is a :class:`RiverletError`. The native module maps the core's
error kinds to these classes in exactly one place (``python/src/errors.rs``); this module only
declares them. Each instance carries:

- ``kind``: the core's error kind as text (``"not_found"``, ``"invalid_argument"``, ...);
- ``code``: the Fluss error code when the server sent one, else ``None``;
- ``code_name``: Fluss's name of that code (``"TABLE_NOT_EXIST"``), else ``None``.

Classes also derive from the closest built-in exception (``ValueError``, ``LookupError``,
``ConnectionError``, ``TimeoutError``, ...) so generic handlers keep working.
"""

from __future__ import annotations

import builtins
from typing import Optional

__all__ = [
    "RiverletError",
    "NotFoundError",
    "DatabaseNotFoundError",
    "TableNotFoundError",
    "PartitionNotFoundError",
    "AlreadyExistsError",
    "DatabaseAlreadyExistsError",
    "TableAlreadyExistsError",
    "PartitionAlreadyExistsError",
    "InvalidArgumentError",
    "UnsupportedError",
    "AuthenticationError",
    "AuthorizationError",
    "NetworkError",
    "RequestTimeoutError",
    "ServerError",
    "CorruptDataError",
    "ClosedError",
    "ForkedProcessError",
    "StorageIOError",
    "InternalError",
]


class RiverletError(Exception):
    """Base class of every Riverlet error."""

    kind: str
    code: Optional[int]
    code_name: Optional[str]

    def __init__(
        self,
        message: str,
        *,
        kind: str = "internal",
        code: Optional[int] = None,
        code_name: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.code = code
        self.code_name = code_name

    def __str__(self) -> str:
        return self.message


class NotFoundError(RiverletError, LookupError):
    """A database, table, partition, bucket or key that was named does not exist."""


class DatabaseNotFoundError(NotFoundError):
    """The database does not exist (Fluss DATABASE_NOT_EXIST)."""


class TableNotFoundError(NotFoundError):
    """The table does not exist (Fluss TABLE_NOT_EXIST)."""


class PartitionNotFoundError(NotFoundError):
    """The partition does not exist (Fluss PARTITION_NOT_EXISTS)."""


class AlreadyExistsError(RiverletError):
    """The thing being created exists already."""


class DatabaseAlreadyExistsError(AlreadyExistsError):
    """The database exists already (Fluss DATABASE_ALREADY_EXIST)."""


class TableAlreadyExistsError(AlreadyExistsError):
    """The table exists already (Fluss TABLE_ALREADY_EXIST)."""


class PartitionAlreadyExistsError(AlreadyExistsError):
    """The partition exists already (Fluss PARTITION_ALREADY_EXISTS)."""


class InvalidArgumentError(RiverletError, ValueError):
    """A value that cannot be used: bad schema, filter, timestamp, time range, data..."""


class UnsupportedError(RiverletError, NotImplementedError):
    """Valid, but not supported here (by this server version, this table kind...)."""


class AuthenticationError(RiverletError, PermissionError):
    """Authentication failed or is required."""


class AuthorizationError(AuthenticationError):
    """The server's authorizer refused the request (Fluss's AUTHORIZATION_EXCEPTION); the
    message names the principal, the operation and the resource."""


class NetworkError(RiverletError, ConnectionError):
    """A network problem (connection refused or reset...); retrying may help."""


class RequestTimeoutError(RiverletError, builtins.TimeoutError):
    """A deadline passed before the server answered."""


class ServerError(RiverletError):
    """The server answered with a Fluss error code that has no better class; see ``code``."""


class CorruptDataError(RiverletError):
    """Bytes that do not decode: a torn frame, a bad CRC, a truncated record."""


class ClosedError(RiverletError):
    """An object was used after ``close()``."""


class ForkedProcessError(RiverletError):
    """Riverlet was used in a child process forked after Riverlet started its threads."""


class StorageIOError(RiverletError, OSError):
    """A local I/O failure (the embedded server's data directory, files)."""


class InternalError(RiverletError):
    """A bug in Riverlet: an invariant that should hold did not."""


# Not an exception of Riverlet's error hierarchy (so not in __all__ above): a warning category,
# exported as ``riverlet.RiverletWarning``.
class RiverletWarning(UserWarning):
    """A warning about a request that still succeeded, shown through :mod:`warnings`.

    ``kind`` names what it is about: ``"before_retention"`` when a time-range window starts
    before ``now - table.log.ttl`` (rows older than the TTL may already be deleted, so the read
    can return fewer rows than were written in the window). Filter or escalate them with the
    usual tools, e.g. ``warnings.simplefilter("error", riverlet.RiverletWarning)``.
    """

    kind: str

    def __init__(self, message: str, *, kind: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
