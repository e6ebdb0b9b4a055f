"""A row larger than the server's request limit (``netty.server.max-request-size``): the write
fails fast with ``InvalidArgumentError`` (Fluss's RECORD_TOO_LARGE) naming the batch's size,
the limit and the option; rows written before and after it land once, in order."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import riverlet

LIMIT = 1024 * 1024


def _rows(ids: range, text_len: int) -> pa.Table:
    # Hex text from random bytes: compresses to about half, so a 4 MiB text stays over 1 MiB.
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int32()),
            "text": [os.urandom(text_len // 2).hex() for _ in ids],
        }
    )


def _bytes_after(message: str, marker: str) -> int:
    assert marker in message, message
    rest = message[message.index(marker) + len(marker) :]
    digits = rest[: len(rest) - len(rest.lstrip("0123456789"))]
    return int(digits)


@pytest.mark.parametrize("pk", [False, True])
def test_row_over_the_request_limit_names_the_option(pk: bool) -> None:
    options = {"netty.server.max-request-size": "1mb"}
    with riverlet.LocalServer(options=options) as server:
        conn = riverlet.connect(server.bootstrap_servers)
        conn.create_database("big", if_not_exists=True)
        schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("text", pa.string())])
        table = conn.create_table(
            "big.rows", schema, buckets=1, primary_key=["id"] if pk else None
        )
        write = table.upsert if pk else table.append
        before = _rows(range(0, 10), 100)
        write(before)
        with pytest.raises(riverlet.InvalidArgumentError) as e:
            write(_rows(range(10, 11), 4 * LIMIT))
        err = e.value
        assert isinstance(err, ValueError)
        assert err.code == 13 and err.code_name == "RECORD_TOO_LARGE_EXCEPTION", str(err)
        assert "netty.server.max-request-size" in str(err)
        assert _bytes_after(str(err), "request limit of ") == LIMIT
        assert _bytes_after(str(err), "a record batch of ") > LIMIT
        after = _rows(range(11, 20), 100)
        write(after)
        got = table.read().sort_by("id") if pk else table.read()
        want = pa.concat_tables([before, after])
        assert got.column("id").to_pylist() == want.column("id").to_pylist()
        assert got.column("text").to_pylist() == want.column("text").to_pylist()
        conn.close()
