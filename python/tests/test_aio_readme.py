"""The README's Python quickstart blocks (the sync one and the asyncio one) run as written, in
their own interpreter, without a warning (warnings are errors here) or anything on stderr."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def quickstart_blocks() -> list[str]:
    text = README.read_text()
    start = text.index("## Python quickstart")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


BLOCKS = quickstart_blocks()


def test_the_quickstart_has_a_sync_and_an_async_block() -> None:
    assert any("riverlet.LocalServer()" in b for b in BLOCKS)
    assert any("riverlet.aio.LocalServer()" in b for b in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_quickstart_block_runs_without_a_warning(block: str, tmp_path: Path) -> None:
    script = tmp_path / "quickstart.py"
    script.write_text(block)
    r = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr == ""
    # Every row written is read back by the window that starts before the writes.
    assert "order_id" in r.stdout
