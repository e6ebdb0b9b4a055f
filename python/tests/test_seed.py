"""Runs the shared seed scenarios (tests/scenarios/seed.json) through the Python API."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import riverlet

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SEED = json.loads((REPO / "tests" / "scenarios" / "seed.json").read_text())
TYPES = {"BIGINT": pa.int64(), "INT": pa.int32(), "STRING": pa.string()}


@pytest.fixture(scope="module")
def seeded(server: riverlet.LocalServer):  # noqa: ANN201
    with riverlet.connect(server.bootstrap_servers) as conn:
        db = SEED["database"] + "_py"
        conn.create_database(db, if_not_exists=True)
        tables = {}
        for name, spec in SEED["tables"].items():
            schema = pa.schema([(c, TYPES[t]) for c, t in spec["columns"]])
            t = conn.create_table(f"{db}.{name}", schema, primary_key=spec.get("primary_key"),
                                  partition_by=spec.get("partition_by"),
                                  buckets=spec.get("buckets", 1), if_not_exists=True)
            for p in spec.get("partition_by") or []:
                idx = [c for c, _ in spec["columns"]].index(p)
                for v in sorted({r[idx] for r in spec["rows"]}):
                    conn.create_partition(t.name, {p: v}, if_not_exists=True)
            rows = [tuple(r) for r in spec["rows"]]
            (t.upsert if t.has_primary_key else t.append)(rows)
            tables[name] = (t, spec)
        yield tables


@pytest.mark.parametrize("read", SEED["reads"], ids=[r["name"] for r in SEED["reads"]])
def test_seed_read(seeded, read) -> None:  # noqa: ANN001
    t, spec = seeded[read["table"]]
    if spec.get("upsert") and not read.get("before_upsert"):
        t.upsert([tuple(r) for r in spec["upsert"]])
    elif spec.get("upsert") and read.get("before_upsert"):
        pass
    cols = read.get("columns") or [c for c, _ in spec["columns"]]
    got = t.read(columns=read.get("columns"), filter=read.get("filter"))
    rows = sorted(got.to_pylist(), key=lambda r: r[read["order_by"]])
    assert [[r[c] for c in cols] for r in rows] == read["expect"]
