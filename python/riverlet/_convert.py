"""Python data to Arrow, the input side of writes and lookups (pure conversion)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Optional

import pyarrow as pa

from .errors import InvalidArgumentError


def _module_of(obj: object) -> str:
    return type(obj).__module__.split(".", 1)[0]


def is_pandas(obj: object) -> bool:
    """Whether ``obj`` is a pandas DataFrame (without importing pandas)."""
    return _module_of(obj) == "pandas" and hasattr(obj, "columns") and hasattr(obj, "iloc")


def is_polars(obj: object) -> bool:
    """Whether ``obj`` is a polars DataFrame or LazyFrame (without importing polars)."""
    return _module_of(obj) == "polars" and hasattr(obj, "columns")


def _fields(schema: pa.Schema, names: Optional[Sequence[str]]) -> pa.Schema:
    if names is None:
        return schema
    by_name = {f.name: f for f in schema}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise InvalidArgumentError(
            f"unknown column(s) {unknown}; the table's columns are {schema.names}",
            kind="invalid_argument",
        )
    return pa.schema([by_name[n] for n in names])


_CONVERSION_ERRORS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    OverflowError,
    TypeError,
    ValueError,
)


def column(values: Sequence[Any], field: pa.Field) -> pa.Array:
    """Python values of one column as an Arrow array of the column's type; a value the type
    cannot hold is an error naming the column. (Missing values are left to the core, which
    owns the NOT NULL and key rules.)"""
    try:
        return pa.array(values, type=field.type)
    except _CONVERSION_ERRORS as e:
        raise InvalidArgumentError(
            f"column '{field.name}' ({field.type}): {e}", kind="invalid_argument"
        ) from e


def _nullable(schema: pa.Schema) -> pa.Schema:
    # Python values may hold None anywhere; the batch must still be valid Arrow for the core to
    # see it and name the NOT NULL column.
    return pa.schema([f.with_nullable(True) for f in schema])


def _columns_table(cols: Mapping[str, Sequence[Any]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays(
        [column(cols[f.name], f) for f in schema], schema=_nullable(schema)
    )


def _rows_table(rows: Sequence[Any], schema: pa.Schema) -> pa.Table:
    first = rows[0]
    if isinstance(first, Mapping):
        if not all(isinstance(r, Mapping) for r in rows):
            raise InvalidArgumentError(
                "a list of rows must hold only dicts or only tuples", kind="invalid_argument"
            )
        unknown = sorted({str(k) for r in rows for k in r if k not in schema.names})
        if unknown:
            raise InvalidArgumentError(
                f"unknown column(s) {unknown}; the table's columns are {schema.names}",
                kind="invalid_argument",
            )
        return _columns_table({f.name: [r.get(f.name) for r in rows] for f in schema}, schema)
    if isinstance(first, (tuple, list)):
        width = len(schema)
        cols: list[list[Any]] = [[] for _ in range(width)]
        for i, r in enumerate(rows):
            if not isinstance(r, (tuple, list)) or len(r) != width:
                raise InvalidArgumentError(
                    f"row {i} must be a tuple of {width} values ({', '.join(schema.names)}), "
                    f"got {r!r}",
                    kind="invalid_argument",
                )
            for c, v in enumerate(r):
                cols[c].append(v)
        return pa.Table.from_arrays(
            [column(c, f) for c, f in zip(cols, schema)], schema=_nullable(schema)
        )
    raise InvalidArgumentError(
        f"rows must be dicts or tuples, got {type(first).__name__}", kind="invalid_argument"
    )


def _typed(table: pa.Table, target: pa.Schema) -> pa.Table:
    """Casts the columns of ``table`` that ``target`` names to its types (checked casts: a value
    that does not fit raises), for data whose types were inferred (polars)."""
    for i, name in enumerate(table.column_names):
        if name in target.names:
            want = target.field(name).type
            if table.schema.field(i).type != want:
                try:
                    col = table.column(i).cast(want, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise InvalidArgumentError(
                        f"column '{name}' cannot be converted to {want}: {e}",
                        kind="invalid_argument",
                    ) from e
                table = table.set_column(i, pa.field(name, want), col)
    return table


def to_batches(
    data: Any, schema: pa.Schema, columns: Optional[Sequence[str]] = None
) -> Iterator[pa.RecordBatch]:
    """Yields ``data`` as Arrow record batches.

    ``data`` may be a pyarrow Table / RecordBatch / RecordBatchReader, any object with
    ``__arrow_c_stream__`` or ``__arrow_c_array__``, a pandas or polars DataFrame, a dict of
    columns, or a list of rows (dicts, or tuples in the order of ``columns`` / the table's
    columns). Python values are typed with the table's ``schema`` (restricted to ``columns``
    when given); Arrow inputs are passed as they are (the core matches columns by name and casts
    compatible types).
    """
    target = _fields(schema, columns)
    if isinstance(data, pa.RecordBatch):
        yield data
    elif isinstance(data, pa.Table):
        yield from data.to_batches()
    elif isinstance(data, pa.RecordBatchReader):
        yield from data
    elif is_pandas(data):
        present = [f for f in target if f.name in set(map(str, data.columns))]
        table = pa.Table.from_pandas(data, schema=pa.schema(present), preserve_index=False)
        yield from table.to_batches()
    elif is_polars(data):
        if hasattr(data, "collect") and not hasattr(data, "to_arrow"):
            data = data.collect()
        yield from _typed(data.to_arrow(), target).to_batches()
    elif hasattr(data, "__arrow_c_stream__"):
        yield from pa.RecordBatchReader.from_stream(data)
    elif hasattr(data, "__arrow_c_array__"):
        yield pa.record_batch(data)
    elif isinstance(data, Mapping):
        present = pa.schema([f for f in target if f.name in data])
        missing = [k for k in data if k not in present.names]
        if missing:
            raise InvalidArgumentError(
                f"unknown column(s) {missing}; the table's columns are {schema.names}",
                kind="invalid_argument",
            )
        yield from _columns_table(data, present).to_batches()
    elif isinstance(data, (list, tuple)):
        if len(data) == 0:
            return
        yield from _rows_table(data, target).to_batches()
    else:
        raise InvalidArgumentError(
            "cannot write data of type "
            f"{type(data).__module__}.{type(data).__name__}; give a pyarrow Table, RecordBatch "
            "or RecordBatchReader, a pandas or polars DataFrame, a dict of columns or a list of "
            "rows",
            kind="invalid_argument",
        )


def _is_scalar(v: Any) -> bool:
    return not isinstance(v, (tuple, list, Mapping)) or isinstance(v, (str, bytes))


def key_rows(key: Any, names: Sequence[str]) -> list[dict[str, Any]]:
    """One key (a scalar for a one-column key, a tuple in key order, or a dict) as a row."""
    if isinstance(key, Mapping):
        missing = [n for n in names if n not in key]
        if missing:
            raise InvalidArgumentError(
                f"the key {key!r} has no value for {missing}; key columns are {list(names)}",
                kind="invalid_argument",
            )
        return [{n: key[n] for n in names}]
    if _is_scalar(key):
        if len(names) != 1:
            raise InvalidArgumentError(
                f"the key has {len(names)} columns {list(names)}: give a tuple or a dict, "
                f"not {key!r}",
                kind="invalid_argument",
            )
        return [{names[0]: key}]
    values = list(key)
    if len(values) != len(names):
        raise InvalidArgumentError(
            f"the key {key!r} has {len(values)} values but the key columns are {list(names)}",
            kind="invalid_argument",
        )
    return [dict(zip(names, values))]


def keys_batch(keys: Iterable[Any], schema: pa.Schema, names: Sequence[str]) -> pa.RecordBatch:
    """Many keys (each as :func:`key_rows` takes it) as one batch of the key columns."""
    rows: list[dict[str, Any]] = []
    for k in keys:
        rows.extend(key_rows(k, names))
    key_schema = pa.schema([schema.field(n).with_nullable(True) for n in names])
    return pa.RecordBatch.from_arrays(
        [column([r[n] for r in rows], f) for n, f in zip(names, key_schema)], schema=key_schema
    )


def is_tabular(data: Any) -> bool:
    """Whether ``data`` is a table-like object rather than a key or a list of keys."""
    return (
        isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader))
        or is_pandas(data)
        or is_polars(data)
        or hasattr(data, "__arrow_c_stream__")
        or hasattr(data, "__arrow_c_array__")
    )
