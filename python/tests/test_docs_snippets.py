"""The Python code blocks of the documentation site's pages (docs/**/*.md) run as tests.

Each page's ```python blocks run in order, as one program, in a fresh interpreter (a page may
build on its earlier blocks), with Riverlet's warnings turned into errors, and type-check
against the package's stubs (mypy, as the examples do); a block right after a line
`<!-- not run: reason -->` is left out. The seed-scenario pages must also cover every read of
tests/scenarios/seed.json, by its name.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
NOT_RUN = re.compile(r"<!--\s*not run:[^>]*-->\s*$")
PRELUDE = "import warnings, riverlet\nwarnings.simplefilter('error', riverlet.RiverletWarning)\n"


def blocks(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return [m.group(1) for m in BLOCK.finditer(text) if not NOT_RUN.search(text[: m.start()].rstrip() + "\n")]


PAGES = [p for p in sorted(DOCS.rglob("*.md")) if blocks(p)]


def test_pages_with_python_found() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"scenarios/log-table.md", "scenarios/pk-table.md", "scenarios/time-window.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_page_runs(page: Path, tmp_path: Path) -> None:
    code = PRELUDE + "\n".join(blocks(page))
    script = tmp_path / (page.stem + ".py")
    script.write_text(code, encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, f"docs/{page.relative_to(DOCS)}:\n{r.stdout}{r.stderr}"


def test_pages_type_check(tmp_path: Path) -> None:
    for page in PAGES:
        name = page.relative_to(DOCS).with_suffix("").as_posix().replace("/", "_").replace("-", "_")
        (tmp_path / f"{name}.py").write_text(PRELUDE + "\n".join(blocks(page)), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                        str(tmp_path)], capture_output=True, text=True, cwd=REPO / "python",
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_scenario_pages_cover_every_seed_read() -> None:
    seed = json.loads((REPO / "tests" / "scenarios" / "seed.json").read_text(encoding="utf-8"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "scenarios").glob("*.md"))
    missing = [r["name"] for r in seed["reads"] if f"**{r['name']}**" not in text]
    assert not missing, f"seed reads with no page in docs/scenarios: {missing}"
