#!/usr/bin/env python3
"""Capture the raw request frames that the official Python client (pyfluss) sends.

A tiny fake Fluss server runs on 127.0.0.1 (random port). It answers just enough of the
protocol (ApiVersions, GetMetadata, CreateDatabase, CreateTable, InitWriter, ProduceLog,
PutKv, Lookup, PrefixLookup, ListOffsets, FetchLog, ...) for pyfluss to create tables,
write rows and read them back. Every request frame pyfluss sends is recorded byte for byte.
The client scenario runs in a child process (pyfluss has been seen to abort at interpreter
exit after connection trouble; a child keeps the capture itself safe), under a hard timeout.

Usage (from the repository root, with pyfluss installed, see tests/requirements-interop.txt):

    python tests/interop/capture_golden.py --out core/tests/golden [--raw-dir /tmp/frames]

Outputs, for each captured request kind, `pyfluss_<name>_request.bin` (the whole frame:
4-byte big-endian length, int16 api key, int16 api version, int32 request id, protobuf body)
and a `.md` note beside it with a hex dump and a decoded view. Loopback only; all waits bounded.

The fake server's responses are hand-encoded protobuf (proto2 wire format), written from the
message definitions in Fluss's FlussApi.proto; nothing here is taken from Fluss's code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import struct
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"

# --------------------------------------------------------------------------------------------
# Minimal protobuf wire encoding / decoding
# --------------------------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    if n < 0:
        n &= (1 << 64) - 1  # proto2 int32/int64 negatives are 10-byte varints
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_int(fn: int, v: int) -> bytes:
    return _varint(fn << 3) + _varint(int(v))


def pb_bool(fn: int, v: bool) -> bytes:
    return pb_int(fn, 1 if v else 0)


def pb_bytes(fn: int, b: bytes) -> bytes:
    return _varint((fn << 3) | 2) + _varint(len(b)) + b


def pb_str(fn: int, s: str) -> bytes:
    return pb_bytes(fn, s.encode())


def pb_packed(fn: int, values) -> bytes:
    return pb_bytes(fn, b"".join(_varint(v) for v in values))


def pb_float(fn: int, v: float) -> bytes:
    return _varint((fn << 3) | 5) + struct.pack("<f", v)


class PbError(ValueError):
    pass


def _read_varint(buf: bytes, pos: int):
    shift = 0
    result = 0
    for _ in range(10):
        if pos >= len(buf):
            raise PbError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise PbError("varint too long")


def pb_parse(buf: bytes):
    """Parse one message into a list of (field_number, wire_type, value)."""
    fields = []
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        fn, wt = key >> 3, key & 7
        if fn == 0:
            raise PbError("field number 0")
        if wt == 0:
            v, pos = _read_varint(buf, pos)
        elif wt == 1:
            if pos + 8 > len(buf):
                raise PbError("truncated fixed64")
            v = buf[pos : pos + 8]
            pos += 8
        elif wt == 2:
            n, pos = _read_varint(buf, pos)
            if pos + n > len(buf):
                raise PbError("truncated bytes")
            v = buf[pos : pos + n]
            pos += n
        elif wt == 5:
            if pos + 4 > len(buf):
                raise PbError("truncated fixed32")
            v = buf[pos : pos + 4]
            pos += 4
        else:
            raise PbError(f"unsupported wire type {wt}")
        fields.append((fn, wt, v))
    return fields


def _signed(v: int, bits: int = 64) -> int:
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    return v


def pb_get(fields, fn, default=None):
    for f, _, v in fields:
        if f == fn:
            return v
    return default


def pb_all(fields, fn):
    return [v for f, _, v in fields if f == fn]


def pb_packed_ints(fields, fn):
    out = []
    for f, wt, v in fields:
        if f != fn:
            continue
        if wt == 0:
            out.append(_signed(v))
        else:
            pos = 0
            while pos < len(v):
                x, pos = _read_varint(v, pos)
                out.append(_signed(x))
    return out


# --------------------------------------------------------------------------------------------
# Message schemas (only what the notes decode): name -> {field: (name, kind, submessage)}
# kind: int, bool, str, bytes, msg, packed, float
# --------------------------------------------------------------------------------------------

S = {
    "PbTablePath": {1: ("database_name", "str"), 2: ("table_name", "str")},
    "PbPhysicalTablePath": {
        1: ("database_name", "str"),
        2: ("table_name", "str"),
        3: ("partition_name", "str"),
    },
    "ApiVersionsRequest": {1: ("client_software_name", "str"), 2: ("client_software_version", "str")},
    "MetadataRequest": {
        1: ("table_path", "msg", "PbTablePath"),
        2: ("partitions_path", "msg", "PbPhysicalTablePath"),
        3: ("partitions_id", "packed"),
    },
    "CreateDatabaseRequest": {
        1: ("database_name", "str"),
        2: ("ignore_if_exists", "bool"),
        3: ("database_json", "json"),
    },
    "DatabaseExistsRequest": {1: ("database_name", "str")},
    "CreateTableRequest": {
        1: ("table_path", "msg", "PbTablePath"),
        2: ("table_json", "json"),
        3: ("ignore_if_exists", "bool"),
    },
    "GetTableInfoRequest": {1: ("table_path", "msg", "PbTablePath")},
    "TableExistsRequest": {1: ("table_path", "msg", "PbTablePath")},
    "InitWriterRequest": {1: ("table_path", "msg", "PbTablePath")},
    "ProduceLogRequest": {
        1: ("acks", "int"),
        2: ("table_id", "int"),
        3: ("timeout_ms", "int"),
        4: ("buckets_req", "msg", "PbProduceLogReqForBucket"),
    },
    "PbProduceLogReqForBucket": {
        1: ("partition_id", "int"),
        2: ("bucket_id", "int"),
        3: ("records", "logbatch"),
        4: ("original_partition_name", "str"),
        5: ("routing_bucket_count", "int"),
    },
    "PutKvRequest": {
        1: ("acks", "int"),
        2: ("table_id", "int"),
        3: ("timeout_ms", "int"),
        4: ("target_columns", "packed"),
        5: ("buckets_req", "msg", "PbPutKvReqForBucket"),
        6: ("agg_mode", "int"),
    },
    "PbPutKvReqForBucket": {
        1: ("partition_id", "int"),
        2: ("bucket_id", "int"),
        3: ("records", "kvbatch"),
        4: ("original_partition_name", "str"),
        5: ("routing_bucket_count", "int"),
    },
    "LookupRequest": {
        1: ("table_id", "int"),
        2: ("buckets_req", "msg", "PbLookupReqForBucket"),
        3: ("insert_if_not_exists", "bool"),
        4: ("acks", "int"),
        5: ("timeout_ms", "int"),
    },
    "PbLookupReqForBucket": {
        1: ("partition_id", "int"),
        2: ("bucket_id", "int"),
        3: ("keys", "bytes"),
        4: ("original_partition_name", "str"),
        5: ("routing_bucket_count", "int"),
    },
    "PrefixLookupRequest": {1: ("table_id", "int"), 2: ("buckets_req", "msg", "PbPrefixLookupReqForBucket")},
    "PbPrefixLookupReqForBucket": {
        1: ("partition_id", "int"),
        2: ("bucket_id", "int"),
        3: ("keys", "bytes"),
        4: ("routing_bucket_count", "int"),
    },
    "ListOffsetsRequest": {
        1: ("follower_server_id", "int"),
        2: ("offset_type", "int"),
        3: ("table_id", "int"),
        4: ("partition_id", "int"),
        5: ("bucket_id", "packed"),
        6: ("startTimestamp", "int"),
        7: ("routing_bucket_count", "int"),
    },
    "FetchLogRequest": {
        1: ("follower_server_id", "int"),
        2: ("max_bytes", "int"),
        3: ("tables_req", "msg", "PbFetchLogReqForTable"),
        4: ("max_wait_ms", "int"),
        5: ("min_bytes", "int"),
        6: ("read_preference", "int"),
    },
    "PbFetchLogReqForTable": {
        1: ("table_id", "int"),
        2: ("projection_pushdown_enabled", "bool"),
        3: ("projected_fields", "packed"),
        4: ("buckets_req", "msg", "PbFetchLogReqForBucket"),
        5: ("filter_predicate", "bytes"),
        6: ("filter_schema_id", "int"),
    },
    "PbFetchLogReqForBucket": {
        1: ("partition_id", "int"),
        2: ("bucket_id", "int"),
        3: ("fetch_offset", "int"),
        4: ("max_fetch_bytes", "int"),
        5: ("routing_bucket_count", "int"),
    },
    "LimitScanRequest": {
        2: ("table_id", "int"),
        3: ("partition_id", "int"),
        4: ("bucket_id", "int"),
        5: ("limit", "int"),
        6: ("routing_bucket_count", "int"),
    },
}

API_NAMES = {
    1000: "ApiVersions",
    1001: "CreateDatabase",
    1002: "DropDatabase",
    1003: "ListDatabases",
    1004: "DatabaseExists",
    1005: "CreateTable",
    1006: "DropTable",
    1007: "GetTableInfo",
    1008: "ListTables",
    1009: "ListPartitionInfos",
    1010: "TableExists",
    1011: "GetTableSchema",
    1012: "GetMetadata",
    1014: "ProduceLog",
    1015: "FetchLog",
    1016: "PutKv",
    1017: "Lookup",
    1021: "ListOffsets",
    1026: "InitWriter",
    1033: "LimitScan",
    1034: "PrefixLookup",
    1025: "GetFileSystemSecurityToken",
    1035: "GetDatabaseInfo",
    1036: "CreatePartition",
    1038: "Authenticate",
}

REQUEST_MESSAGE = {
    1000: "ApiVersionsRequest",
    1001: "CreateDatabaseRequest",
    1004: "DatabaseExistsRequest",
    1005: "CreateTableRequest",
    1007: "GetTableInfoRequest",
    1010: "TableExistsRequest",
    1012: "MetadataRequest",
    1014: "ProduceLogRequest",
    1015: "FetchLogRequest",
    1016: "PutKvRequest",
    1017: "LookupRequest",
    1021: "ListOffsetsRequest",
    1026: "InitWriterRequest",
    1033: "LimitScanRequest",
    1034: "PrefixLookupRequest",
}

# Public APIs and version ranges that an Apache Fluss 1.0-line server advertises
# (fluss-rpc ApiKeys at the mirrored HEAD). pyfluss uses min(its max, ours) per key.
SERVER_API_VERSIONS = [(k, 0, 0) for k in range(1000, 1065) if k not in (
    1013, 1018, 1019, 1020, 1022, 1027, 1028, 1029, 1030, 1031, 1042, 1043, 1052)]
SERVER_API_VERSIONS = [
    (k, lo, {1016: 2, 1017: 1, 1034: 1}.get(k, hi)) for k, lo, hi in SERVER_API_VERSIONS
]


def decode_message(buf: bytes, msg: str, indent: int = 0) -> list[str]:
    """Human-readable lines for one message body, using the schema table above."""
    schema = S.get(msg, {})
    lines = []
    pad = "  " * indent
    try:
        fields = pb_parse(buf)
    except PbError as e:
        return [f"{pad}<undecodable: {e}>"]
    if not fields:
        return [f"{pad}(empty message: no fields set)"]
    seen_packed = set()
    for fn, wt, v in fields:
        spec = schema.get(fn)
        name = spec[0] if spec else f"field_{fn}"
        kind = spec[1] if spec else ("int" if wt == 0 else "bytes")
        tag = f"{pad}{name} (#{fn})"
        if kind == "int":
            lines.append(f"{tag} = {_signed(v)}")
        elif kind == "bool":
            lines.append(f"{tag} = {bool(v)}")
        elif kind == "str":
            lines.append(f"{tag} = {v.decode(errors='replace')!r}")
        elif kind == "json":
            lines.append(f"{tag} = {len(v)} bytes JSON:")
            lines.append(f"{pad}    {v.decode(errors='replace')}")
        elif kind == "packed":
            if fn in seen_packed:
                continue
            seen_packed.add(fn)
            lines.append(f"{tag} = {pb_packed_ints(fields, fn)} (packed)")
        elif kind == "msg":
            lines.append(f"{tag} {{ {spec[2]}")
            lines.extend(decode_message(v, spec[2], indent + 1))
            lines.append(f"{pad}}}")
        elif kind == "logbatch":
            lines.append(f"{tag} = {len(v)} bytes (log record batch, see below)")
        elif kind == "kvbatch":
            lines.append(f"{tag} = {len(v)} bytes (KV record batch, see below)")
        else:
            lines.append(f"{tag} = {len(v)} bytes: {v.hex()}")
    return lines


def find_batches(buf: bytes, msg: str):
    """Yield (kind, bytes) for every records payload nested inside a request body."""
    schema = S.get(msg, {})
    try:
        fields = pb_parse(buf)
    except PbError:
        return
    for fn, _, v in fields:
        spec = schema.get(fn)
        if not spec:
            continue
        if spec[1] == "msg":
            yield from find_batches(v, spec[2])
        elif spec[1] in ("logbatch", "kvbatch"):
            yield spec[1], v


def describe_log_batch(b: bytes) -> list[str]:
    """Decode a Fluss log batch header (all little-endian), magic 0 layout."""
    if len(b) < 48:
        return [f"short log batch ({len(b)} bytes)"]
    base_offset, length, magic = struct.unpack_from("<qib", b, 0)
    out = [
        f"BaseOffset@0 = {base_offset}",
        f"Length@8 = {length} (batch size - 12 = {len(b) - 12})",
        f"Magic@12 = {magic}",
    ]
    if magic == 0:
        (commit_ts,) = struct.unpack_from("<q", b, 13)
        (crc,) = struct.unpack_from("<I", b, 21)
        schema_id, attrs = struct.unpack_from("<hB", b, 25)
        last_delta, writer_id, seq, count = struct.unpack_from("<iqii", b, 28)
        out += [
            f"CommitTimestamp@13 = {commit_ts}",
            f"CRC32C@21 = 0x{crc:08x} (over bytes [25, {len(b)}))",
            f"SchemaId@25 = {schema_id}",
            f"Attributes@27 = 0x{attrs:02x} (append-only={bool(attrs & 1)})",
            f"LastOffsetDelta@28 = {last_delta}",
            f"WriterId@32 = {writer_id}",
            f"BatchSequence@40 = {seq}",
            f"RecordCount@44 = {count}",
            f"records@48 = {len(b) - 48} bytes (Arrow IPC RecordBatch message"
            + ("" if attrs & 1 else ", preceded by one change-type byte per row")
            + ")",
        ]
        if len(b) >= 56:
            cont, mlen = struct.unpack_from("<Ii", b, 48)
            out.append(f"  arrow: continuation=0x{cont:08x} metadata_length={mlen}")
    return out


def describe_arrow_payload(payload: bytes) -> list[str]:
    """Decode the Arrow IPC message of golden_db.log_t with pyarrow (for the notes)."""
    try:
        import pyarrow as pa

        msg = pa.ipc.read_message(pa.py_buffer(payload))
        schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())])
        rb = pa.ipc.read_record_batch(msg, schema)
        body = msg.body.to_pybytes()
        zstd = b"\x28\xb5\x2f\xfd" in body
        raw_prefixes = [
            off for off in range(0, len(body) - 7, 8) if body[off : off + 8] == b"\xff" * 8
        ]
        return [
            f"  arrow message: type={msg.type!r}, metadata {msg.metadata.size} bytes, "
            f"body {msg.body.size} bytes",
            "  body compression framing: every buffer starts with an int64 LE uncompressed "
            "length; -1 = stored uncompressed (compression did not shrink it). "
            f"-1 prefixes at body offsets {raw_prefixes}; zstd frame magic present: {zstd}. "
            "Buffers are padded to 64-byte boundaries.",
            f"  pyarrow decodes (with the table's Arrow schema) to: {rb.to_pylist()}",
        ]
    except Exception as e:  # notes only
        return [f"  arrow payload not decoded: {e!r}"]


def _read_uvarint(b: bytes, pos: int):
    v, pos = _read_varint(b, pos)
    return v, pos


def describe_kv_batch(b: bytes) -> list[str]:
    """Decode a Fluss KV batch header (little-endian) and its records."""
    if len(b) < 28:
        return [f"short kv batch ({len(b)} bytes)"]
    length, magic, crc, schema_id, attrs, writer_id, seq, count = struct.unpack_from("<ibIhBqii", b, 0)
    out = [
        f"Length@0 = {length} (batch size - 4 = {len(b) - 4})",
        f"Magic@4 = {magic}",
        f"CRC32C@5 = 0x{crc:08x} (over bytes [9, {len(b)}))",
        f"SchemaId@9 = {schema_id}",
        f"Attributes@11 = 0x{attrs:02x}",
        f"WriterId@12 = {writer_id}",
        f"BatchSequence@20 = {seq}",
        f"RecordCount@24 = {count}",
    ]
    pos = 28
    for i in range(min(count, 64)):
        if pos + 4 > len(b):
            out.append("  <truncated record>")
            break
        (rlen,) = struct.unpack_from("<i", b, pos)
        rec = b[pos + 4 : pos + 4 + rlen]
        try:
            klen, kpos = _read_uvarint(rec, 0)
        except PbError:
            out.append(f"  record {i}: <bad key length>")
            break
        key = rec[kpos : kpos + klen]
        row = rec[kpos + klen :]
        out.append(
            f"  record {i} @{pos}: length={rlen} key({klen})={key.hex()} "
            + (f"row({len(row)})={row.hex()}" if row else "row=<absent> (DELETE)")
        )
        pos += 4 + rlen
    return out


def hexdump(b: bytes) -> str:
    lines = []
    for off in range(0, len(b), 16):
        chunk = b[off : off + 16]
        hx = " ".join(f"{c:02x}" for c in chunk)
        asc = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append(f"{off:08x}  {hx:<47}  |{asc}|")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The fake server
# --------------------------------------------------------------------------------------------


@dataclass
class Frame:
    seq: int
    conn: int
    api_key: int
    api_version: int
    request_id: int
    raw: bytes  # the whole frame including the 4-byte length prefix

    @property
    def body(self) -> bytes:
        return self.raw[12:]


@dataclass
class Table:
    table_id: int
    path: tuple
    table_json: bytes
    bucket_count: int
    partitioned: bool
    log_batches: dict = field(default_factory=dict)  # bucket -> list[(base_offset, bytes)]
    next_offset: dict = field(default_factory=dict)  # bucket -> int


class FakeFluss:
    def __init__(self, max_frames: int = 500):
        self.frames: list[Frame] = []
        self.max_frames = max_frames
        self.port = 0
        self.databases: set[str] = set()
        self.tables: dict[tuple, Table] = {}
        self.next_table_id = 100
        self.conn_count = 0
        self.created = int(time.time() * 1000)

    # ---- helpers
    def node(self, node_id: int) -> bytes:
        return pb_int(1, node_id) + pb_str(2, HOST) + pb_int(3, self.port)

    def table_metadata(self, t: Table) -> bytes:
        body = pb_bytes(1, pb_str(1, t.path[0]) + pb_str(2, t.path[1]))
        body += pb_int(2, t.table_id) + pb_int(3, 1) + pb_bytes(4, t.table_json)
        if not t.partitioned:
            for b in range(t.bucket_count):
                body += pb_bytes(5, pb_int(1, b) + pb_int(2, 1) + pb_packed(3, [1]) + pb_int(4, 0))
        body += pb_int(6, self.created) + pb_int(7, self.created)
        return body

    def table_by_id(self, table_id: int):
        for t in self.tables.values():
            if t.table_id == table_id:
                return t
        return None

    @staticmethod
    def path_of(buf: bytes) -> tuple:
        f = pb_parse(buf)
        return (pb_get(f, 1, b"").decode(), pb_get(f, 2, b"").decode())

    # ---- dispatch: returns (ok, body) or (False, (code, message))
    def handle(self, fr: Frame):
        k, body = fr.api_key, fr.body
        f = pb_parse(body)
        if k == 1000:  # ApiVersions; no server_type: one port plays coordinator and tablet
            return True, b"".join(
                pb_bytes(1, pb_int(1, key) + pb_int(2, lo) + pb_int(3, hi))
                for key, lo, hi in SERVER_API_VERSIONS
            )
        if k == 1012:  # GetMetadata
            out = pb_bytes(1, self.node(0)) + pb_bytes(2, self.node(1))
            for tp in pb_all(f, 1):
                t = self.tables.get(self.path_of(tp))
                if t is None:
                    return False, (7, f"Table '{self.path_of(tp)}' does not exist.")
                out += pb_bytes(3, self.table_metadata(t))
            return True, out
        if k == 1001:  # CreateDatabase
            self.databases.add(pb_get(f, 1, b"").decode())
            return True, b""
        if k == 1004:  # DatabaseExists
            return True, pb_bool(1, pb_get(f, 1, b"").decode() in self.databases)
        if k == 1003:  # ListDatabases
            return True, b"".join(pb_str(1, d) for d in sorted(self.databases))
        if k == 1005:  # CreateTable
            path = self.path_of(pb_get(f, 1, b""))
            tj = pb_get(f, 2, b"{}")
            if path in self.tables:
                if pb_get(f, 3, 0):
                    return True, b""
                return False, (8, f"Table {path} already exists.")
            desc = json.loads(tj)
            self.tables[path] = Table(
                table_id=self.next_table_id,
                path=path,
                table_json=tj,
                bucket_count=int(desc.get("bucket_count") or 1),
                partitioned=bool(desc.get("partition_key")),
            )
            self.next_table_id += 1
            return True, b""
        if k == 1010:  # TableExists
            return True, pb_bool(1, self.path_of(pb_get(f, 1, b"")) in self.tables)
        if k == 1007:  # GetTableInfo
            t = self.tables.get(self.path_of(pb_get(f, 1, b"")))
            if t is None:
                return False, (7, "Table does not exist.")
            return True, (
                pb_int(1, t.table_id)
                + pb_int(2, 1)
                + pb_bytes(3, t.table_json)
                + pb_int(4, self.created)
                + pb_int(5, self.created)
            )
        if k == 1026:  # InitWriter
            return True, pb_int(1, 7)
        if k == 1014:  # ProduceLog: store batch, assign offsets (base offset LE @0)
            t = self.table_by_id(_signed(pb_get(f, 2, 0)))
            resp = b""
            for b in pb_all(f, 4):
                bf = pb_parse(b)
                bucket = _signed(pb_get(bf, 2, 0))
                rec = bytearray(pb_get(bf, 3, b""))
                base = t.next_offset.get(bucket, 0) if t else 0
                count = struct.unpack_from("<i", rec, 44)[0] if len(rec) >= 48 else 0
                if t is not None and len(rec) >= 48:
                    struct.pack_into("<q", rec, 0, base)
                    t.log_batches.setdefault(bucket, []).append((base, bytes(rec)))
                    t.next_offset[bucket] = base + count
                resp += pb_bytes(1, pb_int(2, bucket) + pb_int(5, base))
            return True, resp
        if k == 1016:  # PutKv: acknowledge each bucket
            resp = b""
            for b in pb_all(f, 5):
                bucket = _signed(pb_get(pb_parse(b), 2, 0))
                resp += pb_bytes(1, pb_int(2, bucket) + pb_int(5, 0))
            return True, resp
        if k == 1017:  # Lookup: every key "not found" (empty PbValue)
            resp = b""
            for b in pb_all(f, 2):
                bf = pb_parse(b)
                vals = b"".join(pb_bytes(5, b"") for _ in pb_all(bf, 3))
                resp += pb_bytes(1, pb_int(2, _signed(pb_get(bf, 2, 0))) + vals)
            return True, resp
        if k == 1034:  # PrefixLookup: empty value list per key
            resp = b""
            for b in pb_all(f, 2):
                bf = pb_parse(b)
                vals = b"".join(pb_bytes(5, b"") for _ in pb_all(bf, 3))
                resp += pb_bytes(1, pb_int(2, _signed(pb_get(bf, 2, 0))) + vals)
            return True, resp
        if k == 1021:  # ListOffsets
            t = self.table_by_id(_signed(pb_get(f, 3, 0)))
            typ = _signed(pb_get(f, 2, 0))
            resp = b""
            for bucket in pb_packed_ints(f, 5):
                off = 0 if typ == 0 or t is None else t.next_offset.get(bucket, 0)
                resp += pb_bytes(1, pb_int(1, bucket) + pb_int(4, off))
            return True, resp
        if k == 1015:  # FetchLog: replay the stored batches of log tables
            resp = b""
            for tr in pb_all(f, 3):
                tf = pb_parse(tr)
                tid = _signed(pb_get(tf, 1, 0))
                t = self.table_by_id(tid)
                buckets = b""
                for br in pb_all(tf, 4):
                    bf = pb_parse(br)
                    bucket = _signed(pb_get(bf, 2, 0))
                    off = _signed(pb_get(bf, 3, 0))
                    hw = t.next_offset.get(bucket, 0) if t else 0
                    recs = b""
                    if t is not None:
                        for base, rec in t.log_batches.get(bucket, []):
                            last = base + struct.unpack_from("<i", rec, 28)[0]
                            if last >= off:
                                recs += rec
                    bb = pb_int(2, bucket) + pb_int(5, hw) + pb_int(6, 0)
                    if recs:
                        bb += pb_bytes(8, recs)
                    buckets += pb_bytes(2, bb)
                resp += pb_bytes(1, pb_int(1, tid) + buckets)
            return True, resp
        if k == 1033:  # LimitScan: nothing
            return True, pb_bool(3, True)
        return False, (-1, f"api {k} is not served by the capture server")

    async def serve_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.conn_count += 1
        conn_id = self.conn_count
        try:
            while len(self.frames) < self.max_frames:
                hdr = await asyncio.wait_for(reader.readexactly(4), timeout=60)
                (n,) = struct.unpack(">i", hdr)
                if n < 8 or n > 64 * 1024 * 1024:
                    break
                rest = await asyncio.wait_for(reader.readexactly(n), timeout=10)
                api_key, api_version, request_id = struct.unpack_from(">hhi", rest, 0)
                fr = Frame(len(self.frames), conn_id, api_key, api_version, request_id, hdr + rest)
                self.frames.append(fr)
                try:
                    ok, payload = self.handle(fr)
                except Exception as e:  # keep serving; report as server error
                    ok, payload = False, (-1, f"capture server failed: {e!r}")
                if ok:
                    out = struct.pack(">bi", 0, request_id) + payload
                else:
                    code, msg = payload
                    out = struct.pack(">bi", 1, request_id) + pb_int(1, code) + pb_str(2, msg)
                writer.write(struct.pack(">i", len(out)) + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()


# --------------------------------------------------------------------------------------------
# The client scenario (runs in a child process)
# --------------------------------------------------------------------------------------------

LOG_TABLE = ("golden_db", "log_t")
PK_TABLE = ("golden_db", "pk_t")
PREFIX_TABLE = ("golden_db", "pk_prefix_t")


async def client_scenario(bootstrap: str) -> int:
    import pyarrow as pa

    import fluss

    failures = 0

    async def step(name, coro, timeout=20):
        nonlocal failures
        print(f"step: {name}", flush=True)
        try:
            return await asyncio.wait_for(coro, timeout)
        except Exception as e:  # report and carry on: later steps may still capture
            failures += 1
            print(f"  step {name} failed: {type(e).__name__}: {e}", flush=True)
            return None

    cfg = fluss.Config({"bootstrap.servers": bootstrap, "writer.batch-timeout-ms": "10"})
    conn = await step("connect", fluss.FlussConnection.create(cfg))
    if conn is None:
        return 1
    admin = conn.get_admin()
    await step("create_database", admin.create_database("golden_db", ignore_if_exists=True))

    log_schema = pa.schema(
        [("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())]
    )
    log_path = fluss.TablePath(*LOG_TABLE)
    await step(
        "create_log_table",
        admin.create_table(
            log_path, fluss.TableDescriptor(fluss.Schema(log_schema), bucket_count=1)
        ),
    )
    pk_schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("qty", pa.int64())])
    pk_path = fluss.TablePath(*PK_TABLE)
    await step(
        "create_pk_table",
        admin.create_table(
            pk_path,
            fluss.TableDescriptor(fluss.Schema(pk_schema, primary_keys=["id"]), bucket_count=1),
        ),
    )
    prefix_schema = pa.schema([("region", pa.string()), ("id", pa.int32()), ("v", pa.string())])
    prefix_path = fluss.TablePath(*PREFIX_TABLE)
    await step(
        "create_prefix_table",
        admin.create_table(
            prefix_path,
            fluss.TableDescriptor(
                fluss.Schema(prefix_schema, primary_keys=["region", "id"]),
                bucket_count=1,
                bucket_keys=["region"],
            ),
        ),
    )

    # --- log table: one Arrow batch of 3 rows, then read it back
    log_table = await step("get_log_table", conn.get_table(log_path))
    if log_table is not None:
        w = log_table.new_append().create_writer()
        batch = pa.RecordBatch.from_pydict(
            {"id": [1, 2, 3], "name": ["a", "b", None], "score": [1.5, 2.5, None]},
            schema=log_schema,
        )
        w.write_arrow_batch(batch)
        await step("flush_append", w.flush())
        await step(
            "list_offsets_latest", admin.list_offsets(log_path, [0], fluss.OffsetSpec.latest())
        )
        scanner = await step(
            "create_record_batch_log_scanner",
            log_table.new_scan().create_record_batch_log_scanner(),
        )
        if scanner is not None:
            scanner.subscribe(0, 0)
            got = await step("poll_arrow", scanner.poll_arrow(3000))
            if got is not None:
                print(f"  read back: {got.to_pylist()}", flush=True)

    # --- PK table: upsert 2 rows, partial update, delete, lookup
    pk_table = await step("get_pk_table", conn.get_table(pk_path))
    if pk_table is not None:
        up = pk_table.new_upsert().create_writer()
        up.upsert({"id": 1, "name": "x", "qty": 10})
        up.upsert({"id": 2, "name": "y", "qty": 20})
        await step("flush_upsert", up.flush())
        pu = pk_table.new_upsert().partial_update_by_name(["id", "qty"]).create_writer()
        pu.upsert({"id": 1, "qty": 11})
        await step("flush_partial_update", pu.flush())
        up.delete({"id": 2})
        await step("flush_delete", up.flush())
        lk = pk_table.new_lookup().create_lookuper()
        await step("lookup", lk.lookup({"id": 1}))

    prefix_table = await step("get_prefix_table", conn.get_table(prefix_path))
    if prefix_table is not None:
        up = prefix_table.new_upsert().create_writer()
        up.upsert({"region": "eu", "id": 1, "v": "p"})
        await step("flush_prefix_upsert", up.flush())
        pl = prefix_table.new_lookup().lookup_by(["region"]).create_lookuper()
        await step("prefix_lookup", pl.lookup({"region": "eu"}))

    await step("close", conn.close())
    print(f"client done, {failures} failed steps", flush=True)
    return 0


# --------------------------------------------------------------------------------------------
# Selection of golden frames and notes
# --------------------------------------------------------------------------------------------


def select_golden(frames: list[Frame], server: FakeFluss) -> dict[str, tuple[Frame, str]]:
    """Pick named frames: name -> (frame, what it is)."""
    ids = {path: t.table_id for path, t in server.tables.items()}
    picked: dict[str, tuple[Frame, str]] = {}

    def first(name, pred, what):
        for fr in frames:
            if pred(fr):
                picked[name] = (fr, what)
                return

    def tid_of(fr, fn):
        try:
            return _signed(pb_get(pb_parse(fr.body), fn, -1))
        except PbError:
            return None

    first("api_versions", lambda fr: fr.api_key == 1000, "first frame on the first connection")
    first("get_metadata_bootstrap", lambda fr: fr.api_key == 1012, "bootstrap metadata request")
    first("create_database", lambda fr: fr.api_key == 1001, "create_database('golden_db')")
    for path, name in ((LOG_TABLE, "log"), (PK_TABLE, "pk"), (PREFIX_TABLE, "pk_prefix")):

        def is_create(fr, path=path):
            if fr.api_key != 1005:
                return False
            return FakeFluss.path_of(pb_get(pb_parse(fr.body), 1, b"")) == path

        first(f"create_table_{name}", is_create, f"create_table({path[0]}.{path[1]})")
    first(
        "get_metadata_table",
        lambda fr: fr.api_key == 1012 and len(fr.body) > 0,
        "metadata request naming a table (get_table)",
    )
    first("init_writer", lambda fr: fr.api_key == 1026, "idempotent writer id request")
    first(
        "produce_log",
        lambda fr: fr.api_key == 1014 and tid_of(fr, 2) == ids.get(LOG_TABLE),
        "append of 3 rows to golden_db.log_t",
    )
    puts = [fr for fr in frames if fr.api_key == 1016 and tid_of(fr, 2) == ids.get(PK_TABLE)]
    for name, what, i in (
        ("put_kv_upsert", "upsert of 2 rows into golden_db.pk_t", 0),
        ("put_kv_partial_update", "partial update (id, qty) of id=1 in golden_db.pk_t", 1),
        ("put_kv_delete", "delete of id=2 from golden_db.pk_t", 2),
    ):
        if i < len(puts):
            picked[name] = (puts[i], what)
    first(
        "put_kv_prefix_table",
        lambda fr: fr.api_key == 1016 and tid_of(fr, 2) == ids.get(PREFIX_TABLE),
        "upsert of 1 row into golden_db.pk_prefix_t (bucket key region != PK)",
    )
    first("list_offsets", lambda fr: fr.api_key == 1021, "list offsets of golden_db.log_t bucket 0")
    first("fetch_log", lambda fr: fr.api_key == 1015, "first fetch of golden_db.log_t")
    first("lookup", lambda fr: fr.api_key == 1017, "lookup of id=1 in golden_db.pk_t")
    first("prefix_lookup", lambda fr: fr.api_key == 1034, "prefix lookup region='eu'")
    return picked


SCHEMA_NOTES = {
    "log": "golden_db.log_t: id INT, name STRING, score DOUBLE (all nullable), no primary key, "
    "bucket_count=1; rows (1,'a',1.5), (2,'b',2.5), (3,NULL,NULL) written as one pyarrow RecordBatch.",
    "pk": "golden_db.pk_t: id INT NOT NULL (PK), name STRING, qty BIGINT, bucket_count=1; "
    "upsert (1,'x',10),(2,'y',20); then partial update by name [id, qty] of (1, qty=11); "
    "then delete id=2.",
    "pk_prefix": "golden_db.pk_prefix_t: region STRING, id INT, v STRING, PK (region, id), "
    "bucket key [region], bucket_count=1; upsert ('eu',1,'p'); prefix lookup region='eu'.",
}


def write_note(out: Path, name: str, fr: Frame, what: str, version: str, extra: str) -> None:
    n, = struct.unpack_from(">i", fr.raw, 0)
    api = API_NAMES.get(fr.api_key, str(fr.api_key))
    msg = REQUEST_MESSAGE.get(fr.api_key)
    lines = [
        f"# pyfluss {api} request — {what}",
        "",
        f"- Client: pyfluss {version} (official Apache Fluss Python client, PyPI), CPython "
        f"{sys.version.split()[0]}.",
        "- Captured by `tests/interop/capture_golden.py`: a fake Fluss server on 127.0.0.1 that "
        "records every request frame byte for byte and answers with hand-encoded responses. "
        "The `.bin` file is the whole frame as sent on the socket.",
        f"- Frame #{fr.seq} overall, connection #{fr.conn}.",
    ]
    if extra:
        lines.append(f"- Table/rows: {extra}")
    lines += [
        "",
        "## Header (big-endian)",
        "",
        f"- length (int32, excludes itself) = {n} (frame is {len(fr.raw)} bytes)",
        f"- api key (int16) = {fr.api_key} ({api})",
        f"- api version (int16) = {fr.api_version}",
        f"- request id (int32) = {fr.request_id}",
        f"- body = {len(fr.body)} bytes of protobuf {msg or '(unknown message)'}",
        "",
        "## Body (decoded)",
        "",
        "```",
    ]
    lines += decode_message(fr.body, msg) if msg else [fr.body.hex()]
    lines.append("```")
    for kind, b in find_batches(fr.body, msg or ""):
        lines += ["", "## " + ("Log record batch" if kind == "logbatch" else "KV record batch")
                  + " (little-endian)", "", "```"]
        lines += describe_log_batch(b) if kind == "logbatch" else describe_kv_batch(b)
        if kind == "logbatch" and name == "produce_log":
            lines += describe_arrow_payload(b[48:])
        lines += ["```"]
    lines += ["", "## Hex dump", "", "```", hexdump(fr.raw), "```", ""]
    (out / f"pyfluss_{name}_request.md").write_text("\n".join(lines))
    (out / f"pyfluss_{name}_request.bin").write_bytes(fr.raw)


async def run_capture(args) -> int:
    server = FakeFluss()
    srv = await asyncio.start_server(server.serve_conn, HOST, 0)
    server.port = srv.sockets[0].getsockname()[1]
    print(f"capture server on {HOST}:{server.port}", flush=True)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "--client", f"{HOST}:{server.port}",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=args.timeout)
        print(textwrap.indent(out.decode(errors="replace"), "  client| "), flush=True)
        print(f"client exit code {proc.returncode}", flush=True)
    except asyncio.TimeoutError:
        print(f"client timed out after {args.timeout}s; killing it (pid {proc.pid})", flush=True)
        proc.kill()
        await proc.wait()
    srv.close()

    frames = server.frames
    print(f"captured {len(frames)} frames:", flush=True)
    for fr in frames:
        print(f"  #{fr.seq} conn{fr.conn} {API_NAMES.get(fr.api_key, fr.api_key)} "
              f"v{fr.api_version} id={fr.request_id} {len(fr.raw)} bytes", flush=True)
    if args.raw_dir:
        rd = Path(args.raw_dir)
        rd.mkdir(parents=True, exist_ok=True)
        for fr in frames:
            (rd / f"{fr.seq:03d}_{API_NAMES.get(fr.api_key, fr.api_key)}.bin").write_bytes(fr.raw)
    if not frames:
        return 1
    import fluss

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    picked = select_golden(frames, server)
    for name, (fr, what) in picked.items():
        extra = ""
        for key in ("pk_prefix", "log", "pk"):
            if key in name or (key == "pk" and name in ("lookup", "put_kv_upsert")):
                extra = SCHEMA_NOTES[key]
                break
        if name in ("list_offsets", "fetch_log"):
            extra = SCHEMA_NOTES["log"]
        write_note(out_dir, name, fr, what, fluss.__version__, extra)
        print(f"wrote pyfluss_{name}_request.bin ({len(fr.raw)} bytes)", flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="core/tests/golden")
    ap.add_argument("--raw-dir", default=None, help="also dump every frame here")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--client", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        rc = asyncio.run(client_scenario(args.client))
        sys.stdout.flush()
        os._exit(rc)  # skip interpreter teardown (pyfluss runtime may abort there)
    return asyncio.run(run_capture(args))


if __name__ == "__main__":
    sys.exit(main())
