"""Reads an Iceberg table with pyiceberg (an independent reader) and prints it as JSON.

Usage: read_iceberg.py CATALOG_URI WAREHOUSE CATALOG_NAME DATABASE.TABLE

Prints {"rows": [[column values...], ...] sorted, "columns": [...], "snapshots": [{"snapshot_id",
"summary"}], "partition_fields": [...]} for server/tests/lake_tables.rs to compare with the
rows it wrote.
"""

import json
import sys

from pyiceberg.catalog.sql import SqlCatalog


def main() -> None:
    uri, warehouse, name, ident = sys.argv[1:5]
    catalog = SqlCatalog(name, uri=uri, warehouse=warehouse)
    table = catalog.load_table(ident)
    data = table.scan().to_arrow()
    columns = data.column_names
    rows = []
    for r in data.to_pylist():
        row = []
        for c in columns:
            v = r[c]
            # decimals and timestamps as text / epoch microseconds, for JSON
            if hasattr(v, "as_tuple"):
                v = str(v)
            elif hasattr(v, "timestamp"):
                v = int(round(v.timestamp() * 1_000_000))
            row.append(v)
        rows.append(row)
    rows.sort(key=lambda x: json.dumps(x))
    snapshots = [
        {
            "snapshot_id": s.snapshot_id,
            "operation": str(s.summary.operation.value) if s.summary else None,
            "summary": dict(s.summary.additional_properties) if s.summary else {},
        }
        for s in table.snapshots()
    ]
    spec = table.spec()
    fields = [
        {"name": f.name, "source": table.schema().find_field(f.source_id).name, "transform": str(f.transform)}
        for f in spec.fields
    ]
    json.dump(
        {
            "columns": columns,
            "rows": rows,
            "snapshots": snapshots,
            "current_snapshot_id": table.current_snapshot().snapshot_id,
            "partition_fields": fields,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
