"""``riverlet.flight_server``: starts the Arrow Flight SQL gateway (the ``riverlet-flight``
program of the riverlet-sql crate) as a child process, so any Flight SQL client (ADBC,
``pyarrow.flight``, the JDBC driver) can query Fluss tables. The gateway is a separate program,
not part of this extension: it is built on DataFusion, which the wheel does not carry."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from types import TracebackType
from typing import TYPE_CHECKING, Optional, Union

import pyarrow as pa

from .errors import InvalidArgumentError, StorageIOError, UnsupportedError

if TYPE_CHECKING:
    from ._api import LocalServer

PROGRAM = "riverlet-flight"


def _program(program: Optional[str]) -> str:
    """The gateway program: ``program``, else ``$RIVERLET_FLIGHT_BIN``, else on PATH."""
    chosen = program or os.environ.get("RIVERLET_FLIGHT_BIN")
    if chosen:
        if not (os.path.isfile(chosen) and os.access(chosen, os.X_OK)):
            raise InvalidArgumentError(
                f"the Flight SQL gateway program {chosen!r} is not an executable file",
                kind="invalid_argument",
            )
        return chosen
    found = shutil.which(PROGRAM)
    if found is None:
        raise UnsupportedError(
            f"flight_server needs the program {PROGRAM!r} (cargo build -p riverlet-sql, or "
            "cargo install --path sql): put it on PATH, set RIVERLET_FLIGHT_BIN or pass "
            "program=",
            kind="unsupported",
        )
    return found


class FlightServer:
    """A running Flight SQL gateway over a Fluss cluster; see :func:`flight_server`."""

    def __init__(self, proc: "subprocess.Popen[str]", uri: str) -> None:
        self._proc = proc
        self._uri = uri

    @property
    def uri(self) -> str:
        """``grpc://HOST:PORT``, the location to give a Flight SQL client."""
        return self._uri

    @property
    def port(self) -> int:
        """The TCP port the gateway listens on."""
        return int(self._uri.rsplit(":", 1)[1])

    @property
    def running(self) -> bool:
        """Whether the gateway process is still running."""
        return self._proc.poll() is None

    def query(
        self, sql: str, *, username: Optional[str] = None, password: Optional[str] = None
    ) -> pa.Table:
        """Runs ``sql`` through the gateway with the ADBC Flight SQL driver
        (``pip install adbc-driver-flightsql``) and returns the result; ``username`` /
        ``password`` are Flight basic auth, passed on to Fluss as SASL/PLAIN."""
        try:
            import adbc_driver_flightsql.dbapi as flight_sql
        except ImportError as e:
            raise UnsupportedError(
                "FlightServer.query needs the ADBC Flight SQL driver: "
                "pip install adbc-driver-flightsql",
                kind="unsupported",
            ) from e
        kwargs = {}
        if username is not None:
            kwargs["db_kwargs"] = {"username": username, "password": password or ""}
        with flight_sql.connect(self._uri, **kwargs) as conn, conn.cursor() as cur:
            cur.execute(sql)
            table: pa.Table = cur.fetch_arrow_table()
            return table

    def close(self) -> None:
        """Stops the gateway (it stops when its stdin closes) and waits for it."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> "FlightServer":
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FlightServer({self._uri!r}, running={self.running})"


def flight_server(
    bootstrap_servers: Union[str, "LocalServer"],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    database: str = "fluss",
    tz: Optional[str] = None,
    username: Optional[str] = None,
    password: Optional[str] = None,
    program: Optional[str] = None,
) -> FlightServer:
    """Starts an Arrow Flight SQL gateway over the Fluss cluster at ``bootstrap_servers`` (or a
    :class:`LocalServer`) and returns once it listens::

        with riverlet.LocalServer() as server, riverlet.flight_server(server) as gateway:
            window = gateway.query(
                "SELECT * FROM fluss_incremental_between_timestamp('orders', "
                "'2026-01-01 00:00:00', '2026-01-02 00:00:00')")

    ``port=0`` picks a free port (see :attr:`FlightServer.uri`). ``database`` is the schema of
    unqualified table names, ``tz`` the session time zone of datetime texts (default: local).
    ``username``/``password`` are the gateway's own SASL/PLAIN login, used for calls without
    Flight basic auth. The gateway is the ``riverlet-flight`` program (``program``, else
    ``$RIVERLET_FLIGHT_BIN``, else PATH); it stops with :meth:`FlightServer.close` or when this
    process exits.
    """
    bootstrap = (
        bootstrap_servers
        if isinstance(bootstrap_servers, str)
        else bootstrap_servers.bootstrap_servers
    )
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidArgumentError(
            f"port must be an integer in 0..65535, got {port!r}", kind="invalid_argument"
        )
    cmd = [
        _program(program),
        "--bootstrap", bootstrap,
        "--host", host,
        "--port", str(port),
        "--database", database,
        "--stop-on-stdin-eof",
    ]
    if tz is not None:
        cmd += ["--tz", tz]
    env = dict(os.environ)
    env.pop("RIVERLET_PASSWORD", None)
    if username is not None:
        cmd += ["--username", username]
        # Not on the command line, where other users could read it.
        env["RIVERLET_PASSWORD"] = password or ""
    # stderr to a file: a pipe nobody reads could fill and stall the gateway's logging.
    with tempfile.TemporaryFile(mode="w+") as err:
        try:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                text=True, env=env,
            )
        except OSError as e:
            raise StorageIOError(f"cannot run {cmd[0]}: {e}", kind="io") from e
        line = proc.stdout.readline() if proc.stdout is not None else ""
        if "listening on " not in line:
            proc.kill()
            proc.wait()
            err.seek(0)
            reason = err.read().strip() or line.strip() or f"exit status {proc.returncode}"
            raise InvalidArgumentError(
                f"the Flight SQL gateway did not start: {reason}", kind="invalid_argument"
            )
    uri = line.split("listening on ", 1)[1].split()[0]
    return FlightServer(proc, uri)
