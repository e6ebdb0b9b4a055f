"""Optional progress bars (tqdm when installed; off unless asked)."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Union

ProgressArg = Union[bool, Callable[[int], Any], None]


class _Bar:
    def __init__(self, bar: Any) -> None:
        self._bar = bar

    def update(self, rows: int) -> None:
        self._bar.update(rows)

    def close(self) -> None:
        self._bar.close()


class _Callback:
    def __init__(self, fn: Callable[[int], Any]) -> None:
        self._fn = fn

    def update(self, rows: int) -> None:
        self._fn(rows)

    def close(self) -> None:
        pass


def progress_bar(progress: ProgressArg, desc: str) -> Optional[Union[_Bar, _Callback]]:
    """A row counter for ``progress``: ``True`` = a tqdm bar (a warning when tqdm is missing),
    a callable = called with each batch's row count, ``False``/``None`` = nothing."""
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
    return _Bar(tqdm(desc=desc, unit=" rows", unit_scale=True))
