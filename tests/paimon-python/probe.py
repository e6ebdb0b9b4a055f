"""pypaimon (Apache Paimon's Python reader, PyPI) reading the Paimon tables the embedded server
tiered: the second independent reader of server/tests/lake_paimon.rs, which runs this script
with the interpreter in RIVERLET_PAIMON_PYTHON (tests/run-all.sh makes .venv-paimon from
tests/requirements-paimon.txt).

    python probe.py WAREHOUSE DB.TABLE...

Prints one JSON object per table, one per line, in the form of tests/paimon-java's
PaimonLakeProbe.java so the test checks both readers against the same expected rows: the
fields (name and Paimon type), their comments, the schema id, primary and partition keys,
options, the latest snapshot (id, commit user, commit identifier) and every row pypaimon's batch
read of that snapshot returns (merged by key for a primary-key table), each with the bucket of
its split, its partition and, for a fixed-bucket table, the bucket pypaimon's own bucket
function gives the row. Values are text as the Java probe writes them: dates and times in
java.time's ISO form, binary strings in lowercase hex, a local zoned timestamp as its epoch
milliseconds.
"""

import datetime
import decimal
import json
import sys

import numpy
import pyarrow
from pypaimon import CatalogFactory
from pypaimon.table.bucket_mode import BucketMode

_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def java_time(nano_of_day):
    """A time of day as java.time.LocalTime.toString() writes it: HH:mm, then :ss unless
    seconds and fraction are zero, then the fraction in the shortest of 3, 6 or 9 digits."""
    seconds, nanos = divmod(nano_of_day, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = "%02d:%02d" % (hours, minutes)
    if secs or nanos:
        out += ":%02d" % secs
        if nanos % 1_000_000 == 0 and nanos:
            out += ".%03d" % (nanos // 1_000_000)
        elif nanos % 1_000 == 0 and nanos:
            out += ".%06d" % (nanos // 1_000)
        elif nanos:
            out += ".%09d" % nanos
    return out


def java_float(shortest):
    """A float or double as Java's Float/Double.toString writes it, from Python's shortest
    round-trip text of it: plain with at least one fraction digit for magnitudes in
    [1e-3, 1e7), else d.dddE[-]n."""
    if shortest in ("nan", "inf", "-inf"):
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[shortest]
    d = decimal.Decimal(shortest)
    if d == 0:
        return "-0.0" if d.is_signed() else "0.0"
    if decimal.Decimal("1e-3") <= abs(d) < decimal.Decimal("1e7"):
        plain = format(d, "f")
        return plain if "." in plain else plain + ".0"
    sign, digits, exponent = d.normalize().as_tuple()
    lead = "".join(map(str, digits))
    power = exponent + len(lead) - 1
    return "%s%s.%sE%d" % ("-" if sign else "", lead[0], lead[1:] or "0", power)


def text(column, i):
    """Row i of an arrow column as the Java probe's text, None for null. Temporal values go
    through their integer encoding so no time zone or Python datetime rounding is involved."""
    if not column[i].is_valid:
        return None
    t = column.type
    if pyarrow.types.is_timestamp(t):
        raw = column.cast(pyarrow.int64())[i].as_py()
        if t.tz is not None:
            # a local zoned timestamp: its epoch milliseconds
            return str(raw * _NANOS[t.unit] // 1_000_000)
        nanos = raw * _NANOS[t.unit]
        days, nano_of_day = divmod(nanos, 86_400_000_000_000)
        day = datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
        return day.isoformat() + "T" + java_time(nano_of_day)
    if pyarrow.types.is_time(t):
        width = pyarrow.int32() if pyarrow.types.is_time32(t) else pyarrow.int64()
        return java_time(column.cast(width)[i].as_py() * _NANOS[t.unit])
    if pyarrow.types.is_date(t):
        return column[i].as_py().isoformat()
    value = column[i].as_py()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.hex()
    if pyarrow.types.is_float32(t):
        return java_float(str(numpy.float32(value)))
    if isinstance(value, float):
        return java_float(repr(value))
    return str(value)


def describe(catalog, name):
    table = catalog.get_table(name)
    schema = table.table_schema
    out = {
        "table": name,
        "fields": [[f.name, str(f.type)] for f in schema.fields],
        "comments": [f.description for f in schema.fields],
        "schema_id": schema.id,
        "primary_keys": list(schema.primary_keys),
        "partition_keys": list(schema.partition_keys),
        "options": dict(sorted(schema.options.items())),
    }
    latest = table.snapshot_manager().get_latest_snapshot()
    if latest is not None:
        out["snapshot"] = {
            "id": latest.id,
            "commit_user": latest.commit_user,
            "commit_identifier": latest.commit_identifier,
        }
    bucket_of = (
        table.create_row_key_extractor()
        if table.bucket_mode() == BucketMode.HASH_FIXED
        else None
    )
    rb = table.new_read_builder()
    rows = []
    for split in rb.new_scan().plan().splits():
        partition = "$".join(str(v) for v in split.partition.values)
        data = rb.new_read().to_arrow([split], parallelism=1)
        if data is None:
            continue
        for batch in data.to_batches():
            buckets = (
                bucket_of.extract_partition_bucket_batch(batch)[1]
                if bucket_of is not None
                else [None] * batch.num_rows
            )
            for i in range(batch.num_rows):
                cells = [split.bucket, partition, buckets[i]]
                cells.extend(text(batch.column(f.name), i) for f in schema.fields)
                rows.append(cells)
    out["rows"] = rows
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: probe.py WAREHOUSE DB.TABLE...")
    catalog = CatalogFactory.create({"warehouse": argv[0]})
    for name in argv[1:]:
        print(describe(catalog, name), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
