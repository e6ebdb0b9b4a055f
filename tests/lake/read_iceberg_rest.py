"""Reads an Iceberg table through a REST catalog with pyiceberg (an independent reader) and
prints it as JSON.

Usage: read_iceberg_rest.py CATALOG_URI DATABASE.TABLE [PROPERTY=VALUE ...]

The properties are the catalog's (s3.endpoint, s3.access-key-id, ...: pyiceberg's FileIO reads
S3 with pyarrow). Prints {"columns": [...], "rows": [[column values...], ...] sorted,
"current_snapshot_id": ...} for core/tests/lake_iceberg_s3.rs to compare with the rows it wrote.
"""

import json
import sys

from pyiceberg.catalog.rest import RestCatalog


def main() -> None:
    uri, ident = sys.argv[1:3]
    props = dict(a.split("=", 1) for a in sys.argv[3:])
    catalog = RestCatalog("rest", uri=uri, **props)
    table = catalog.load_table(ident)
    data = table.scan().to_arrow()
    columns = data.column_names
    rows = []
    for r in data.to_pylist():
        row = []
        for c in columns:
            v = r[c]
            # decimals as text and timestamps as epoch microseconds, for JSON
            if hasattr(v, "as_tuple"):
                v = str(v)
            elif hasattr(v, "timestamp"):
                v = int(round(v.timestamp() * 1_000_000))
            row.append(v)
        rows.append(row)
    rows.sort(key=lambda x: json.dumps(x))
    snap = table.current_snapshot()
    json.dump(
        {
            "columns": columns,
            "rows": rows,
            "current_snapshot_id": snap.snapshot_id if snap else None,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
