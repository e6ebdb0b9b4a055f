"""mkdocs hooks: the site's pages take their text from the repository instead of copying it.

Directives (an HTML comment alone on a line of a page in docs/):

``<!-- include PATH -->``
    the whole Markdown file PATH (from the repository root) without its title line;
``<!-- include PATH "## Heading" -->``
    the section of PATH under that heading, up to the next heading of the same or a higher
    level (the heading itself is left out, sub-headings move up to this page's levels);
``<!-- include PATH "## Heading" intro -->``
    the same, but only up to the section's first sub-heading;
``<!-- server-options -->``
    a table of the embedded server's options, read from ``riverlet_server::SERVER_OPTIONS``
    (server/src/config.rs).

Relative links of included text are resolved from the included file: a link to a file that is
itself a page of the site (``SOURCES`` below) becomes a link to that page, a link to any other
file of the repository becomes its path in code font. An image of an included file (e.g. the
benchmark curves of benches/RESULTS.md) is copied into the site under ``IMAGE_DIR`` and shown.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Repository files shown whole as a page of the site: links to them go to that page.
SOURCES = {
    "python/README.md": "guides/python.md",
    "java/README.md": "guides/java.md",
    "java/riverlet-spark-common/README.md": "guides/spark.md",
    "java/riverlet-flink-common/README.md": "guides/flink.md",
    "c-api/README.md": "guides/c.md",
    "sql/README.md": "guides/sql.md",
    "core/RULES.md": "maintainers/rules.md",
    "tests/README.md": "maintainers/tests.md",
    "RELIABILITY.md": "maintainers/reliability.md",
    "benches/RESULTS.md": "maintainers/benchmarks.md",
    "README.md": "index.md",
}

DIRECTIVE = re.compile(r'^<!--\s*include\s+(\S+)(?:\s+"([^"]+)")?(\s+intro)?\s*-->[ \t]*$', re.M)
OPTIONS_DIRECTIVE = re.compile(r"^<!--\s*server-options\s*-->[ \t]*$", re.M)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s:#]+)\)")
# Where the site keeps the images of included files, under their repository paths.
IMAGE_DIR = "repo-images"
FENCE = re.compile(r"^\s*(```|~~~)")


class IncludeError(Exception):
    pass


def _headings(lines: list[str]) -> list[tuple[int, int]]:
    """(line index, level) of every Markdown heading outside fenced code."""
    out, fenced = [], False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            out.append((i, len(m.group(1))))
    return out


def _section(src: str, heading: str | None, intro: bool) -> str:
    lines = (ROOT / src).read_text(encoding="utf-8").splitlines()
    heads = _headings(lines)
    if heading is None:
        start, level = -1, 1
        if heads and heads[0][1] == 1:
            start = heads[0][0]
        end = len(lines)
    else:
        want = heading.strip()
        found = [(i, lv) for i, lv in heads if lines[i].strip() == want]
        if len(found) != 1:
            raise IncludeError(f"{src}: heading {want!r} found {len(found)} times (expected once)")
        start, level = found[0]
        end = next((i for i, lv in heads if i > start and (lv <= level or intro)), len(lines))
    body = lines[start + 1:end]
    shift = level - 1
    out, fenced = [], False
    for line in body:
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m and shift:
            line = "#" * max(2, len(m.group(1)) - shift) + " " + m.group(2)
        out.append(line)
    return "\n".join(out).strip("\n")


def _relink(text: str, src: str, page: str) -> str:
    """Rewrites the relative links of text taken from src for the page at docs/page."""
    page_dir = posixpath.dirname(page)

    def sub(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo_path = posixpath.normpath(posixpath.join(posixpath.dirname(src), path))
        if repo_path in SOURCES:
            rel = posixpath.relpath(SOURCES[repo_path], page_dir or ".")
            return f"[{label}]({rel}{'#' + anchor if anchor else ''})"
        if repo_path.startswith("docs/"):
            rel = posixpath.relpath(repo_path[len("docs/"):], page_dir or ".")
            return f"[{label}]({rel}{'#' + anchor if anchor else ''})"
        if not (ROOT / repo_path).exists():
            raise IncludeError(f"{src}: link to {target!r}: {repo_path} is not in the repository")
        shown = f"`{repo_path}`"
        return shown if label.strip("`") in (path, repo_path) else f"{label} ({shown} in the repository)"

    def image(m: re.Match[str]) -> str:
        repo_path = _image_path(src, m.group(2))
        rel = posixpath.relpath(f"{IMAGE_DIR}/{repo_path}", page_dir or ".")
        return f"![{m.group(1)}]({rel})"

    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        out.append(line if fenced else IMAGE.sub(image, LINK.sub(sub, line)))
    return "\n".join(out)


def _image_path(src: str, target: str) -> str:
    """The repository path of an image that src links to relatively (it must exist)."""
    repo_path = posixpath.normpath(posixpath.join(posixpath.dirname(src), target))
    if not (ROOT / repo_path).is_file():
        raise IncludeError(f"{src}: image {target!r}: {repo_path} is not in the repository")
    return repo_path


def server_options_table() -> str:
    """The rows of `SERVER_OPTIONS` in server/src/config.rs as a Markdown table."""
    text = (ROOT / "server/src/config.rs").read_text(encoding="utf-8")
    m = re.search(r"pub const SERVER_OPTIONS: &\[\(&str, &str\)\] = &\[(.*?)\n\];", text, re.S)
    if not m:
        raise IncludeError("server/src/config.rs: SERVER_OPTIONS not found")
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1), re.S)
    if not strings or len(strings) % 2:
        raise IncludeError("server/src/config.rs: SERVER_OPTIONS is not (name, text) pairs")
    rows = ["| option | what it does |", "| --- | --- |"]
    for name, what in zip(strings[::2], strings[1::2]):
        what = re.sub(r"\\\n\s*", "", what).replace("|", "\\|")
        rows.append(f"| `{name}` | {what} |")
    return "\n".join(rows)


def expand(markdown: str, page: str) -> str:
    """The page's Markdown with every directive replaced (page: its path under docs/)."""

    def include(m: re.Match[str]) -> str:
        src, heading, intro = m.group(1), m.group(2), bool(m.group(3))
        if not (ROOT / src).is_file():
            raise IncludeError(f"docs/{page}: include of {src}, which is not in the repository")
        return _relink(_section(src, heading, intro), src, page)

    markdown = DIRECTIVE.sub(include, markdown)
    return OPTIONS_DIRECTIVE.sub(lambda _m: server_options_table(), markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001
    return expand(markdown, page.file.src_uri)


def on_files(files, config):  # noqa: ANN001
    # The images the included files show, copied into the site where _relink points them.
    from mkdocs.structure.files import File

    for src in SOURCES:
        if not (ROOT / src).exists():
            continue
        for m in IMAGE.finditer((ROOT / src).read_text(encoding="utf-8")):
            repo_path = _image_path(src, m.group(2))
            uri = f"{IMAGE_DIR}/{repo_path}"
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=str(ROOT / repo_path)))
    return files


def on_config(config):  # noqa: ANN001
    # The repository's files are watched by `mkdocs serve` too, since pages include them.
    for p in [*SOURCES, "server/src/config.rs"]:
        if os.path.exists(ROOT / p):
            config["watch"].append(str(ROOT / p))
    return config
