"""The stubs match the module (mypy stubtest), and the examples type-check against them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / "python"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=PY, timeout=600)


def test_stubtest() -> None:
    r = _run("mypy.stubtest", "--mypy-config-file", str(ROOT / "pyproject.toml"), "riverlet")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("target", ["riverlet", "examples"])
def test_mypy(target: str) -> None:
    r = _run("mypy", "--config-file", str(ROOT / "pyproject.toml"), target)
    assert r.returncode == 0, r.stdout + r.stderr
