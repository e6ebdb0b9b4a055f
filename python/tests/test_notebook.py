"""The quickstart notebook (python/examples/notebook/quickstart.ipynb) runs headless with
nbclient on an ipykernel of this interpreter, against the embedded server it starts itself.

Fails on any cell error; checks what its outputs say: the rows printed equal the rows written
(and the windows' rows what the write loop put in them), the plot cell made a PNG, and the
progress bars of the long write and read end at their total rather than counting without one.
nbclient, nbformat, ipykernel and ipywidgets are pinned in tests/requirements-python.txt; a
missing one fails the test (it is not skipped).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "notebook" / "quickstart.ipynb"

# What the notebook writes (its own constants, checked below so the two cannot drift apart).
BATCHES, PER_BATCH, EVENTS = 20, 500, 300_000


def _stream_text(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream"
                   and o.name == "stdout")


def _printed(cells: list[Any], label: str) -> int:
    """The number a cell printed as ``label: N`` (exactly one cell prints it)."""
    found = []
    for cell in cells:
        for m in re.finditer(rf"^{re.escape(label)}: (\d+)$", _stream_text(cell), re.M):
            found.append(int(m.group(1)))
    assert len(found) == 1, f"'{label}: N' printed {len(found)} times"
    return found[0]


def test_notebook_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:80]
    assert "widgets" not in nb.metadata


@pytest.fixture()
def kernel_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A ``python3`` kernelspec running this interpreter (where riverlet is installed), found
    before any other on the machine."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (riverlet tests)",
        "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    return str(tmp_path)


def test_quickstart_notebook_runs(kernel_dir: str) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert f"BATCHES, PER_BATCH = {BATCHES}, {PER_BATCH}" in source
    assert f"N = {EVENTS:_}" in source

    started = time.monotonic()
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": kernel_dir}},
                            store_widget_state=True)
    client.execute()  # raises CellExecutionError on any cell error
    took = time.monotonic() - started
    print(f"notebook ran in {took:.1f} s")

    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, errors

    rows = BATCHES * PER_BATCH
    assert _printed(code, "rows written") == rows
    assert _printed(code, "rows read") == rows
    assert _printed(code, "pandas rows") == rows
    assert _printed(code, "polars rows") == rows
    # reading = 20 + (seq % 97) / 10 + batch, as the write loop makes it
    warm = sum(1 for b in range(BATCHES) for i in range(b * PER_BATCH, (b + 1) * PER_BATCH)
               if 20.0 + (i % 97) / 10 + b >= 35.0)
    assert _printed(code, "rows with reading >= 35") == warm
    assert _printed(code, "rows since batch 10") == (BATCHES - 10) * PER_BATCH
    assert _printed(code, "rows of batches 0 and 1") == 2 * PER_BATCH
    assert _printed(code, "rows in the changelog window") == rows
    assert _printed(code, "events read") == EVENTS

    plots = [c for c in code if any(o.output_type == "display_data" and "image/png" in o.data
                                    for o in c.outputs)]
    assert len(plots) == 1 and "changelog" in plots[0].source

    # The long write's and read's bars: tqdm.notebook widgets. A bar with a total has
    # max == total; one without has max 1 (tqdm's "unknown total" bar).
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    bars = [m["state"] for m in state.values() if m["model_name"] == "FloatProgressModel"]
    assert len(bars) == 2, bars
    for bar in bars:
        assert (bar["max"], bar["value"]) == (EVENTS, EVENTS), bar
    labels = [m["state"]["value"] for m in state.values() if m["model_name"] == "HTMLModel"]
    assert sum("100%" in text for text in labels) == 2, labels
    assert sum("300k/300k" in text for text in labels) == 2, labels
