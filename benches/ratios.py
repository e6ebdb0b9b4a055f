#!/usr/bin/env python3
"""Prints every ratio in benches/RESULTS.md, section by section, each with the date it was measured.

`make bench` runs the benches one after the other, each writing its own section of RESULTS.md,
and this last, so that one run's ratios are read in one place. With `--since 'YYYY-MM-DD HH:MM'`
(the time `make bench` began) a section measured before then is marked as not from this run:
a bench that failed or was skipped leaves its older section in the file, and its figures must
not pass for this run's. Prints only; it changes nothing and asserts nothing.

    python3 benches/ratios.py
    python3 benches/ratios.py --since '2026-12-07 08:30' --results benches/RESULTS.md
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

DATE = re.compile(r"\bon (\d{4}-\d{2}-\d{2} \d{2}:\d{2})")
# Sections without figures of their own: the hand-written notes and run.py's summary of the
# ratios printed here already.
# benches/curves.py's section (`make bench-curves`) holds per-point figures, named by their shapes.
SKIPPED = ("Where the time goes", "All ratios", "Versions", "How cost grows")


def is_ratio_column(header: str) -> bool:
    """`Riverlet / Fluss speed`, `3x1 / 1x1`, `share of decode ceiling (keep)`, ..."""
    h = header.lower()
    return (" / " in h and ("speed" in h or re.search(r"\dx\d", h) is not None)) or h.startswith("share of")


def sections(text: str) -> list[tuple[str, list[str]]]:
    """The `## ` sections of the file, each with its lines."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            out.append((line[3:].strip(), []))
        elif out:
            out[-1][1].append(line)
    return out


def table_ratios(lines: list[str], start: int) -> tuple[list[str], int]:
    """The ratio columns (header `... / ...`) of the table at `start`: `row: header = value`."""
    header = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    cols = [i for i, h in enumerate(header) if i > 0 and is_ratio_column(h)]
    found, i = [], start + 2
    while i < len(lines) and lines[i].lstrip().startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if cells[0].startswith("ceiling"):  # the yardstick's own row (100%)
            i += 1
            continue
        for c in cols:
            if c < len(cells) and cells[c] not in ("", "-", "–"):
                found.append(f"{cells[0]}: {header[c]} = {cells[c]}")
        i += 1
    return found, i


def ratios_of(lines: list[str]) -> list[str]:
    found: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("**Ratio:**"):
            found.append(line[len("**Ratio:**"):].strip())
        elif line.startswith("**Ratios:**"):
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            while i < len(lines) and lines[i].strip().startswith("- "):
                found.append(lines[i].strip()[2:])
                i += 1
            continue
        elif line.startswith("Server: ") or line.startswith("### "):
            found.append(line.lstrip("# "))
        elif line.startswith("|") and i + 1 < len(lines) and lines[i + 1].strip().startswith("| ---"):
            rows, i = table_ratios(lines, i)
            found.extend(rows)
            continue
        i += 1
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "RESULTS.md"))
    ap.add_argument("--since", metavar="'YYYY-MM-DD HH:MM'",
                    help="mark sections measured before this time as not from this run")
    args = ap.parse_args()
    if args.since and not re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", args.since):
        ap.error(f"--since {args.since!r}: expected 'YYYY-MM-DD HH:MM'")
    text = Path(args.results).read_text()
    # Sections 1-6 are run.py's, dated once at the top of the file.
    top = DATE.search(text.split("\n## ", 1)[0])
    date = top.group(1) if top else None
    stale = 0
    print(f"Ratios in {args.results}" + (f" (this run began {args.since})" if args.since else ""))
    for title, lines in sections(text):
        own = next((m.group(1) for m in map(DATE.search, lines[:6]) if m), None)
        when = own or date
        if title.startswith(SKIPPED):
            continue
        found = ratios_of(lines)
        if not found:
            continue
        old = bool(args.since and (when is None or when < args.since))
        stale += old
        mark = f"  [NOT FROM THIS RUN: measured {when}]" if old else f"  [{when}]"
        print(f"\n## {title}{mark}")
        for f in found:
            print(f"  - {f}")
    if stale:
        print(f"\n{stale} section(s) above were not measured by this run.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
