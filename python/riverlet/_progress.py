"""Optional progress of reads and writes (tqdm when installed; off unless asked).

A bar knows its total when the operation does: a write the rows of its input (unknown for a
streamed ``RecordBatchReader``), a read the rows the core's plan says it returns
(``BatchStream.expected_rows``: reads of log records without a filter, to the end offsets
fixed when the read starts, in a window ending after that; unknown for primary-key latest
views, folded windows and filtered reads, where the bar counts rows without a total).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Callable, Optional, Protocol, Union, runtime_checkable

import pyarrow as pa


@runtime_checkable
class ProgressSink(Protocol):
    """A progress object such as a ``tqdm`` bar: ``update(rows)`` after each batch; its
    ``total`` attribute, when it has one, is set to the operation's total before the first
    update when the total is known."""

    def update(self, n: int) -> Any: ...


ProgressArg = Union[bool, Callable[[int], Any], ProgressSink, None]


class _Bar:
    """A tqdm bar this module made (and closes)."""

    def __init__(self, bar: Any) -> None:
        self._bar = bar

    def set_total(self, total: Optional[int]) -> None:
        self._bar.total = total
        self._bar.refresh()

    def update(self, rows: int) -> None:
        self._bar.update(rows)

    def close(self) -> None:
        self._bar.close()


class _Callback:
    def __init__(self, fn: Callable[[int], Any]) -> None:
        self._fn = fn

    def set_total(self, total: Optional[int]) -> None:
        pass

    def update(self, rows: int) -> None:
        self._fn(rows)

    def close(self) -> None:
        pass


class _Sink:
    """The caller's progress object: given the total, updated, not closed (the caller owns it)."""

    def __init__(self, sink: ProgressSink, total: Optional[int]) -> None:
        self._sink = sink
        self.set_total(total)

    def set_total(self, total: Optional[int]) -> None:
        if total is not None and hasattr(self._sink, "total"):
            setattr(self._sink, "total", total)
            refresh = getattr(self._sink, "refresh", None)
            if callable(refresh):
                refresh()

    def update(self, rows: int) -> None:
        self._sink.update(rows)

    def close(self) -> None:
        refresh = getattr(self._sink, "refresh", None)
        if callable(refresh):
            refresh()


Progress = Union[_Bar, _Callback, _Sink]


def progress_bar(progress: ProgressArg, desc: str,
                 total: Optional[int] = None) -> Optional[Progress]:
    """The progress of one operation for ``progress``: ``True`` = a tqdm bar (a warning when
    tqdm is missing), an object with ``update`` (e.g. a ``tqdm`` bar the caller made) = its
    ``total`` set to ``total`` when known and ``update(rows)`` after each batch, a callable =
    called with each batch's row count, ``False``/``None`` = nothing. ``total``: the rows of
    the whole operation, None when unknown (a bar then counts without a percentage)."""
    if isinstance(progress, ProgressSink):  # first: a tqdm bar without a total has no truth value
        return _Sink(progress, total)
    if not progress:
        return None
    if callable(progress):
        return _Callback(progress)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        warnings.warn("progress=True needs tqdm (pip install tqdm); no progress bar shown",
                      stacklevel=3)
        return None
    return _Bar(tqdm(desc=desc, total=total, unit=" rows", unit_scale=True))


def input_rows(data: Any) -> Optional[int]:
    """The rows of a write's input when known without consuming it (the forms
    ``to_batches`` takes): None for a streamed reader or an Arrow C stream."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data.num_rows
    if isinstance(data, (list, tuple)):
        return len(data)
    if isinstance(data, Mapping):
        for column in data.values():
            try:
                return len(column)
            except TypeError:
                return None
        return 0
    shape = getattr(data, "shape", None)  # pandas and polars DataFrames
    if isinstance(shape, tuple) and shape and isinstance(shape[0], int):
        return shape[0]
    return None


class Relay:
    """A progress object that forwards to another operation's progress: ``check()`` runs
    before each update (it may raise to stop the operation), and the total it is given goes to
    ``target``'s bar (``riverlet.aio`` runs sync reads with one)."""

    def __init__(self, target: Optional[Progress], check: Callable[[], None]) -> None:
        self._target = target
        self._check = check
        self._total: Optional[int] = None

    @property
    def total(self) -> Optional[int]:
        return self._total

    @total.setter
    def total(self, total: Optional[int]) -> None:
        self._total = total
        if self._target is not None:
            self._target.set_total(total)

    def update(self, rows: int) -> None:
        self._check()
        if self._target is not None:
            self._target.update(rows)
